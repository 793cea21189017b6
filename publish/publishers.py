"""Where releases go: a git repository (local or remote) or the Hugging Face Hub, behind one protocol.

Both targets keep the same rules: a release is ONE commit whose tree is exactly the rendered repository,
followed by a tag ``vX.Y.Z`` on that commit's sha; an existing tag is never moved or overwritten.
Secrets (the Hub token, credentials inside git URLs) never appear in messages: every error raised here
passes through ``redact``.
"""

from __future__ import annotations

import io
import logging
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from factatlas.atomic import TMP_PREFIX
from factatlas.errors import ConfigError, FactatlasError
from factatlas.http import redact  # the one redaction (re-exported: the publishers' callers use this name)
from factatlas.registry import Registry
from factatlas.rundir import crash_point, exclusive_lock

from .versions import Version, branch_release, check_new_version, moves_default_branch, versions_from_tags

log = logging.getLogger(__name__)

BRANCH = "main"
@dataclass(frozen=True)
class PublishResult:
    target: str  # where it went, credentials removed
    version: str
    tag: str
    commit: str  # sha of the release commit; the tag points at it
    url: str = ""
    removed: tuple[str, ...] = ()  # files of the previous head that the release no longer has
    branch_moved: bool = True  # False: a lower or pre-release version, tagged only
    note: str = ""  # why the default branch did not move


class Publisher(Protocol):
    """A place releases are committed and tagged in."""

    @property
    def location(self) -> str: ...

    def existing_tags(self) -> list[str]: ...

    def read_tag(self, tag: str) -> dict[str, bytes]: ...

    def publish(self, files: Mapping[str, bytes], version: Version, message: str) -> PublishResult: ...

    def lock(self) -> AbstractContextManager[None]: ...


def tag_only_note(version: Version, existing: Sequence[Version], branch: str) -> str:
    """Why ``version`` is tagged without moving the default branch (readers of ``branch`` keep the highest
    release)."""
    return f"{version.tag} is {_why_tag_only(version, existing)}: tagged only; branch '{branch}' still points " \
           f"at {branch_release(list(existing)).tag}"  # type: ignore[union-attr]


def _why_tag_only(version: Version, existing: Sequence[Version]) -> str:
    held = branch_release(list(existing))
    lower = held is not None and version < held
    if version.pre:
        return f"a pre-release below {held.tag}" if lower else "a pre-release"  # type: ignore[union-attr]
    return f"lower than {held.tag}"  # type: ignore[union-attr]


def refuse_existing(publisher: Publisher, version: Version) -> None:
    check_new_version(version, versions_from_tags(publisher.existing_tags()), publisher.location)


# ---- git -----------------------------------------------------------------------------------------

def _is_url(target: str) -> bool:
    return "://" in target or re.match(r"^[\w.-]+@[\w.-]+:", target) is not None


class GitPublisher:
    """Commit + annotated tag in a git repository given by a local path or a remote URL (git CLI)."""

    def __init__(self, target: str | Path, branch: str = BRANCH):
        # git runs in temporary work trees, so a relative local path must be made absolute first
        self.target = str(target) if _is_url(str(target)) else str(Path(target).resolve())
        self.branch = branch

    @property
    def location(self) -> str:
        return "git:" + redact(self.target)

    def _git(self, *args: str, cwd: str | Path | None = None, check: bool = True,
             input: bytes | None = None) -> subprocess.CompletedProcess:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        proc = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, input=input)
        if check and proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip() or proc.stdout.decode("utf-8", "replace")
            raise FactatlasError(redact(f"{self.location}: git {args[0]} failed: {msg}"))
        return proc

    def lock(self) -> AbstractContextManager[None]:
        """One publisher at a time for a local target: a lock file beside it (remote targets rely on git's
        own atomic push, which refuses a branch update that is not a fast-forward)."""
        if _is_url(self.target):
            return nullcontext()
        target = Path(self.target)
        return _locked_beside(target, f"publish target {target}")

    def _create_bare(self) -> None:
        """Make a new local target as a bare repository, atomically: ``git init`` runs in a temporary sibling
        that is renamed into place once complete, so a kill leaves no half-made target (only a
        ``.factatlas-tmp-`` folder that the next publish removes)."""
        target = Path(self.target)
        target.parent.mkdir(parents=True, exist_ok=True)
        for leftover in target.parent.glob(f"{TMP_PREFIX}{target.name}-*"):
            shutil.rmtree(leftover)
        staging = target.with_name(f"{TMP_PREFIX}{target.name}-{os.getpid()}")
        self._git("init", "-q", "--bare", f"--initial-branch={self.branch}", str(staging))
        crash_point("publish:target-initialised")
        os.rename(staging, target)

    def _local_state(self) -> str:
        """``absent``, ``repository`` or ``half-made`` (what an interrupted ``git init`` leaves: git's skeleton
        without HEAD, objects or refs); anything else at the path is refused with what to do."""
        target = Path(self.target)
        if not target.exists():
            return "absent"
        if target.is_dir() and self._git("rev-parse", "--git-dir", cwd=target, check=False).returncode == 0:
            return "repository"
        if target.is_dir() and _half_made_bare_repo(target):
            return "half-made"
        raise ConfigError(f"{self.location}: exists but is not a git repository; publish to a new path or a "
                          f"git repository, or remove {target} if it is a target you no longer need")

    def _check_local_target(self) -> None:
        """Create a new local target; repair a half-made one (it holds nothing)."""
        state = self._local_state()
        if state == "half-made":
            log.warning("%s: an interrupted git init left an empty, unusable repository; recreating it",
                        self.target)
            shutil.rmtree(self.target)
        if state != "repository":
            self._create_bare()

    def _readable(self) -> bool:
        return _is_url(self.target) or self._local_state() == "repository"

    def existing_tags(self) -> list[str]:
        if not self._readable():
            return []
        out = self._git("ls-remote", "--tags", self.target).stdout.decode()
        tags = set()
        for line in out.splitlines():
            ref = line.split("\t", 1)[1] if "\t" in line else ""
            if ref.startswith("refs/tags/"):
                tags.add(ref[len("refs/tags/"):].removesuffix("^{}"))
        return sorted(tags)

    def head(self) -> str | None:
        if not self._readable():
            return None
        out = self._git("ls-remote", "--heads", self.target, self.branch).stdout.decode().split()
        return out[0] if out else None

    def read_tag(self, tag: str) -> dict[str, bytes]:
        """Every file of the tree a tag points at (works for local paths and remote URLs)."""
        with tempfile.TemporaryDirectory(prefix="factatlas-git-") as tmp:
            self._git("init", "-q", tmp)
            proc = self._git("fetch", "-q", "--depth", "1", self.target, f"refs/tags/{tag}", cwd=tmp, check=False)
            if proc.returncode != 0:
                raise ConfigError(redact(f"{self.location}: no tag '{tag}' "
                                         f"(tags: {', '.join(self.existing_tags()) or 'none'})"))
            tar = self._git("archive", "--format=tar", "FETCH_HEAD", cwd=tmp).stdout
        files = {}
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            for member in tf.getmembers():
                if member.isfile():
                    files[member.name] = tf.extractfile(member).read()  # type: ignore[union-attr]
        return dict(sorted(files.items()))

    def publish(self, files: Mapping[str, bytes], version: Version, message: str) -> PublishResult:
        if not _is_url(self.target):
            # A new local target becomes a bare repository: it can receive pushes and be cloned or mirrored.
            self._check_local_target()
        existing = versions_from_tags(self.existing_tags())
        check_new_version(version, existing, self.location)
        move_branch = moves_default_branch(version, existing)
        # a tag-only release (a backport, a pre-release) continues the release it follows, not the branch head
        if move_branch:
            base_ref = f"refs/heads/{self.branch}" if self.head() else None
        else:
            base_ref = _previous_tag_ref(version, existing)
        parent: str | None = None
        with tempfile.TemporaryDirectory(prefix="factatlas-publish-") as tmp:
            work = Path(tmp)
            self._git("init", "-q", f"--initial-branch={self.branch}", str(work))
            if base_ref:
                self._git("fetch", "-q", "--depth", "1", self.target, base_ref, cwd=work)
                parent = self._git("rev-parse", "FETCH_HEAD^{commit}", cwd=work).stdout.decode().strip()
                self._git("update-ref", f"refs/heads/{self.branch}", parent, cwd=work)
            for path, data in files.items():
                dest = work / path
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)
            # The index starts empty, so the commit's tree is exactly the release (stale files vanish).
            self._git("add", "-A", "--", ".", cwd=work)
            identity = self._identity(work)
            self._git(*identity, "commit", "-q", "--allow-empty", "-m", message, cwd=work)
            sha = self._git("rev-parse", "HEAD", cwd=work).stdout.decode().strip()
            removed: tuple[str, ...] = ()
            if parent:
                names = self._git("diff", "--name-only", "--diff-filter=D", "-z", parent, sha, cwd=work).stdout
                removed = tuple(sorted(n for n in names.decode("utf-8").split("\0") if n))
            self._git(*identity, "tag", "-a", version.tag, "-m", message, sha, cwd=work)
            refspecs = [f"refs/tags/{version.tag}:refs/tags/{version.tag}"]
            if move_branch:
                refspecs.insert(0, f"HEAD:refs/heads/{self.branch}")
            push = self._git("push", "-q", "--atomic", self.target, *refspecs, cwd=work, check=False)
            if push.returncode != 0:
                lines = push.stderr.decode("utf-8", "replace").strip().splitlines()
                # the server's own explanation ("remote: ...") is long; git's summary lines say what failed
                msg = "; ".join(x.strip() for x in lines if not x.startswith("remote:")) or "; ".join(lines)
                hint = ""
                if "checked out" in msg:
                    hint = (" The target has the branch checked out: publish to a bare repository "
                            "(git init --bare) or a remote URL instead.")
                raise FactatlasError(redact(f"{self.location}: git push failed, nothing was published: "
                                            f"{msg}.{hint}"))
        note = "" if move_branch else tag_only_note(version, existing, self.branch)
        return PublishResult(self.location, str(version), version.tag, sha, removed=removed,
                             branch_moved=move_branch, note=note)

    def _identity(self, work: Path) -> list[str]:
        """``-c user.*`` only where git has no identity configured (CI machines, fresh containers)."""
        args = []
        for key, default in (("user.name", "factatlas"), ("user.email", "factatlas@localhost")):
            if self._git("config", "--get", key, cwd=work, check=False).returncode != 0:
                args += ["-c", f"{key}={default}"]
        return args


def _previous_tag_ref(version: Version, existing: Sequence[Version]) -> str | None:
    below = [v for v in existing if v < version]
    return f"refs/tags/{max(below).tag}" if below else None


_GIT_SKELETON = {"HEAD", "config", "description", "hooks", "info", "objects", "refs", "branches"}


def _half_made_bare_repo(folder: Path) -> bool:
    """True for what an interrupted ``git init --bare`` leaves: only git's skeleton, no object, no ref."""
    names = {p.name for p in folder.iterdir()}
    if not names or not names <= _GIT_SKELETON:
        return False
    has_objects = any(p.is_file() for p in (folder / "objects").rglob("*")) if (folder / "objects").is_dir() else False
    has_refs = any(p.is_file() for p in (folder / "refs").rglob("*")) if (folder / "refs").is_dir() else False
    return not has_objects and not has_refs


@contextmanager
def _locked_beside(target: Path, what: str) -> Iterator[None]:
    target.parent.mkdir(parents=True, exist_ok=True)
    with exclusive_lock(target.with_name(f".{target.name}.factatlas.lock"), what):
        yield


# ---- Hugging Face Hub ----------------------------------------------------------------------------

class HubPublisher:
    """Releases on the Hub through huggingface_hub.HfApi; the token never leaves the HTTP headers."""

    def __init__(self, repo_id: str, *, token: str | None = None, endpoint: str | None = None,
                 private: bool = False):
        from huggingface_hub import HfApi, get_token

        self.repo_id = repo_id
        self.private = private
        self._token = token or os.environ.get("HF_TOKEN") or get_token()
        self.api = HfApi(endpoint=endpoint, token=self._token or None)

    @property
    def location(self) -> str:
        return f"hub:{self.repo_id}"

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # every Hub error is re-raised with secrets removed, without its chain
            raise FactatlasError(redact(f"{self.location}: {what} failed: {type(e).__name__}: {e}",
                                        [self._token])) from None

    def _refs(self) -> Any | None:
        from huggingface_hub.errors import RepositoryNotFoundError

        try:
            return self.api.list_repo_refs(self.repo_id, repo_type="dataset")
        except RepositoryNotFoundError:
            return None
        except Exception as e:
            # every publish, a dry run too, reads the target's versions before anything else (the version must be
            # new, the previous one is diffed against), so an unreachable Hub stops it here: say so
            unreachable = isinstance(e, OSError) or "Connect" in type(e).__name__
            fix = ("; a publish, --dry-run too, first reads the versions at the target: check the network and "
                   "HF_ENDPOINT, or try the release on a git:PATH target") if unreachable else ""
            raise FactatlasError(redact(f"{self.location}: listing refs failed: {type(e).__name__}: {e}{fix}",
                                        [self._token])) from None

    def existing_tags(self) -> list[str]:
        refs = self._refs()
        return sorted(t.name for t in refs.tags) if refs else []

    def lock(self) -> AbstractContextManager[None]:
        return nullcontext()  # the Hub checks parent_commit, so a concurrent commit fails instead of interleaving

    def read_tag(self, tag: str) -> dict[str, bytes]:
        from huggingface_hub import snapshot_download

        with tempfile.TemporaryDirectory(prefix="factatlas-hub-") as tmp:
            self._call(f"downloading {tag}", snapshot_download, self.repo_id, repo_type="dataset", revision=tag,
                       local_dir=tmp, token=self._token or None, endpoint=self.api.endpoint)
            root = Path(tmp)
            return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
                    if p.is_file() and ".cache" not in p.relative_to(root).parts}

    def publish(self, files: Mapping[str, bytes], version: Version, message: str) -> PublishResult:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        if not self._token:
            raise ConfigError(f"{self.location}: no Hub token; set HF_TOKEN or run `hf auth login` (a token "
                              "with write access to the namespace)")
        refuse_existing(self, version)  # before anything is created: a refused release changes nothing
        self._call("create_repo", self.api.create_repo, self.repo_id, repo_type="dataset", private=self.private,
                   exist_ok=True)
        refs = self._refs()
        tags = sorted(t.name for t in refs.tags) if refs else []
        existing = versions_from_tags(tags)
        check_new_version(version, existing, self.location)  # a tag that appeared meanwhile
        if not moves_default_branch(version, existing):
            raise ConfigError(f"{self.location}: {version.tag} is {_why_tag_only(version, existing)}; on the Hub every commit lands on a "
                              f"branch and this publisher commits to "
                              f"'{BRANCH}', which would then serve an older release. Publish it to a git target "
                              f"(--target git:PATH), which tags it without moving '{BRANCH}'.")
        head = next((b.target_commit for b in (refs.branches if refs else []) if b.name == BRANCH), None)
        stale: list[str] = []
        if head:
            current = self._call("list_repo_files", self.api.list_repo_files, self.repo_id, repo_type="dataset",
                                 revision=head)
            # .gitattributes is the Hub's own LFS configuration, not part of the release
            stale = sorted(p for p in current if p not in files and p != ".gitattributes")
        operations = [CommitOperationAdd(path_in_repo=p, path_or_fileobj=io.BytesIO(d)) for p, d in files.items()]
        operations += [CommitOperationDelete(path_in_repo=p) for p in stale]
        info = self._call("create_commit", self.api.create_commit, self.repo_id, operations=operations,
                          commit_message=message, repo_type="dataset", revision=BRANCH, parent_commit=head)
        self._call("create_tag", self.api.create_tag, self.repo_id, tag=version.tag, revision=info.oid,
                   tag_message=message, repo_type="dataset")
        return PublishResult(self.location, str(version), version.tag, info.oid, info.commit_url,
                             removed=tuple(stale))


# ---- targets and references ----------------------------------------------------------------------
# Where a release goes is a registry entry, like the prober's scoring rules and backends: a name (the
# prefix of ``--target NAME:WHERE`` and of a ``NAME:WHERE@TAG`` reference) and the publisher it opens.
# Another package registers its own under the entry-point group ``factatlas.publish.targets``.


@dataclass(frozen=True)
class PublishTarget:
    name: str
    summary: str
    open: Callable[..., Publisher]  # (where, *, repo, private, token, endpoint) -> Publisher
    needs_where: bool = True  # ``NAME:WHERE`` (git: a path or URL); False: ``NAME`` alone names ``--repo`` (hub)


TARGETS: Registry[PublishTarget] = Registry("publish target", group="factatlas.publish.targets")


def register_target(target: PublishTarget) -> PublishTarget:
    return TARGETS.register(target.name, target)


register_target(PublishTarget("git", "a git repository: a local path (made on first use) or a remote URL",
                              lambda where, **_: GitPublisher(where)))
register_target(PublishTarget("hub", "a dataset repository on the Hugging Face Hub (--repo, HF_TOKEN)",
                              lambda where, *, repo, private=False, token=None, endpoint=None:
                              HubPublisher(where or repo, token=token, endpoint=endpoint, private=private),
                              needs_where=False))


def _split_target(target: str) -> tuple[PublishTarget | None, str]:
    name, sep, where = target.partition(":")
    entry = TARGETS.get(name)
    if entry is None or (entry.needs_where and not where) or (sep and not where):
        return None, ""
    return entry, where


def open_target(target: str, repo: str, *, private: bool = False, token: str | None = None,
                endpoint: str | None = None) -> Publisher:
    """``hub`` -> HubPublisher(repo); ``git:PATH_OR_URL`` -> GitPublisher; another registered ``NAME:WHERE``."""
    entry, where = _split_target(target)
    if entry is None:
        shown = " or ".join(f"'{n}:PATH'" if TARGETS[n].needs_where else f"'{n}'" for n in sorted(TARGETS))
        raise ConfigError(f"unknown target '{redact(target)}': expected {shown} (git: a local path or a git URL), "
                          "e.g. --target git:releases/arab-west.git")
    return entry.open(where, repo=repo, private=private, token=token, endpoint=endpoint)


def read_ref(ref: str, *, token: str | None = None, endpoint: str | None = None) -> dict[str, bytes]:
    """The files of a release named by ``ref``:

    - ``git:PATH_OR_URL@v1.0.0`` (without ``@tag``: the highest version tag),
    - ``hub:org/name@v1.0.0`` (without ``@tag``: the highest version tag),
    - ``NAME:WHERE@tag`` of another registered target,
    - a rendered release folder (holds manifest.json).
    """
    for name, entry in TARGETS.items():
        prefix = f"{name}:"
        if ref.startswith(prefix):
            rest = ref[len(prefix):]
            where, _, tag = rest.rpartition("@") if "@" in rest.split("/")[-1] else (rest, "", "")
            publisher = entry.open(where, repo=where, token=token, endpoint=endpoint)
            if not tag:
                versions = versions_from_tags(publisher.existing_tags())
                if not versions:
                    raise ConfigError(f"{publisher.location}: no version tags to read")
                tag = versions[-1].tag
            return publisher.read_tag(tag)
    from .render import read_release_dir

    return read_release_dir(ref)
