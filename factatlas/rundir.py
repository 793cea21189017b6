"""The run directory: one folder per run, a manifest, stage sub-folders, atomic writes.

```
runs/<name>/
  manifest.json        resolved config, versions, endpoint, times, counts, hashes (per stage)
  curate/  build/  probe/<model>/  release/
```
Data files never hold timestamps; times live in the manifest only.

Safety rules every stage writer follows (see `RunDir.lock` and `RunDir.replace_stage`):
- one writer per run directory: an OS lock (``fcntl.flock``) on ``<run>/.factatlas.lock``; a second
  process is refused at once, naming the holder's pid;
- a stage folder is replaced whole: the new one is written into a sibling ``.factatlas-tmp-*`` folder and
  swapped in only once complete, so a failure or a kill leaves either the old folder or the new one;
- whatever a killed run left under a ``.factatlas-tmp-`` name is removed by the next writer.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import hashlib
import json
import logging
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from factatlas.atomic import CRASH_ENV, TMP_PREFIX, crash_point, discard, read_json, write_json  # noqa: F401
from factatlas.errors import FactatlasError, WriteFailed, writing

log = logging.getLogger(__name__)

LOCK_NAME = ".factatlas.lock"
PENDING_ENTRY = ".factatlas-manifest-entry.json"  # a staged folder's manifest entry, until manifest.json has it

TRACKED_DEPENDENCIES = (
    "pyoxigraph", "sparqlwrapper", "urllib3", "networkx", "pyarrow", "pymorphy3", "torch", "transformers",
    "tokenizers", "datasets", "huggingface-hub",
)


def installed_version(distribution: str) -> str:
    """The installed version of a distribution, or "absent"."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "absent"


def dependency_versions() -> dict[str, str]:
    return {"python": platform.python_version(),
            **{name: installed_version(name) for name in ("factatlas", *TRACKED_DEPENDENCIES)}}


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class LockHeld(FactatlasError):
    """Another factatlas process writes into the same run directory or publish target."""


_held_locks: dict[str, tuple[int, int]] = {}  # lock file -> (fd, depth): re-entrant within one process


@contextmanager
def exclusive_lock(lock_file: Path, what: str, wait_s: float = 0.0) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_file`` (created if needed) or fail, after ``wait_s`` seconds (at
    once by default), naming the holder: its pid and command line (the lock file holds both).

    The holder deletes the lock file when it lets go (still holding the lock, so no other process can be
    between taking it and our delete; a process that opened the old file before the delete sees, once it
    holds the lock, that the path no longer names its file, and opens it again). So a finished, failed or
    refused command leaves no lock file; a killed one leaves a stale file without a lock, which the next
    process takes at once. Re-entrant within one process (the quickstart runs several stages into one run
    directory). A file system that refuses the lock file (read-only, full, not permitted) is a
    ``WriteFailed`` naming the folder and the fix, and leaves no lock file."""
    key = str(lock_file.resolve())
    if key in _held_locks:
        fd, depth = _held_locks[key]
        _held_locks[key] = (fd, depth + 1)
        try:
            yield
        finally:
            fd, depth = _held_locks[key]
            _held_locks[key] = (fd, depth - 1)
        return
    fd = _take_lock(lock_file, what, wait_s)
    try:
        from factatlas.http import redact  # a command line may carry --endpoint http://user:password@...

        program = "factatlas" if Path(sys.argv[0]).name in ("__main__.py", "factatlas") else sys.argv[0]
        with writing(lock_file.parent, f"write the lock file {lock_file.name} into it"):
            os.ftruncate(fd, 0)
            holder = f"{os.getpid()}\n{redact(' '.join([program, *sys.argv[1:]]))}\n".encode()
            if os.pwrite(fd, holder, 0) != len(holder):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(lock_file))
        _held_locks[key] = (fd, 1)
        yield
    finally:
        _held_locks.pop(key, None)
        # still held: nobody else can hold it now (see the docstring); a folder that refuses the delete keeps
        # a stale file without a lock, which is harmless
        with contextlib.suppress(OSError):
            os.unlink(lock_file)
        os.close(fd)  # closing the last descriptor releases the flock


def _take_lock(lock_file: Path, what: str, wait_s: float) -> int:
    """An open descriptor of ``lock_file`` holding its flock, the file still at that path."""
    deadline = time.monotonic() + wait_s
    while True:
        with writing(lock_file.parent, f"create the lock file {lock_file.name} in it"):
            fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno not in (errno.EWOULDBLOCK, errno.EACCES):
                os.close(fd)
                raise
            if time.monotonic() < deadline:
                os.close(fd)
                time.sleep(0.1)
                continue
            pid, _, command = os.pread(fd, 4096, 0).decode("utf-8", "replace").partition("\n")
            os.close(fd)
            started = f", started by `{command.strip()}`" if command.strip() else ""
            raise LockHeld(f"another factatlas process (pid {pid.strip() or 'unknown'}) holds {what} (lock "
                           f"{lock_file}{started}); wait for it to finish, or stop it, then run this command "
                           "again") from None
        if _same_file(fd, lock_file):
            return fd
        os.close(fd)  # the holder deleted it while we waited: the lock now lives in a new file


def _same_file(fd: int, path: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def restore_interrupted_swaps(folder: Path) -> list[Path]:
    """Where a swap by two renames was killed between them (``swap_in`` without ``renameat2``), the old
    folder sits under ``.factatlas-tmp-old-<name>-<pid>`` and ``<name>`` is missing: put it back."""
    restored = []
    for old in sorted(folder.rglob(f"{TMP_PREFIX}old-*")):
        name = old.name[len(f"{TMP_PREFIX}old-"):].rsplit("-", 1)[0]
        target = old.with_name(name)
        if old.is_dir() and not target.exists():
            os.rename(old, target)
            restored.append(target)
    return restored


def remove_leftovers(folder: Path) -> list[Path]:
    """Delete what killed runs left under ``folder``: every entry whose name starts with ``.factatlas-tmp-``
    (staging folders, half-written files). Call it only while holding the folder's lock: then no live
    process owns any of them. Returns what was removed."""
    removed = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*filenames, *dirnames]:
            if name.startswith(TMP_PREFIX):
                path = Path(dirpath) / name
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
                removed.append(path)
        dirnames[:] = [d for d in dirnames if not d.startswith(TMP_PREFIX)]
    return sorted(removed)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def swap_in(new: Path, target: Path, keep: Sequence[str] = ()) -> None:
    """Put the complete folder ``new`` at ``target``. With an old ``target``, both are exchanged in one
    atomic step (so readers see the old folder or the new one, never a mix), the ``keep`` entries (caches
    that outlive a run) move from the old folder into the new one, and the old folder is deleted. A kill
    between the exchange and that move costs the cache (the next writer removes the old folder), never
    the outputs. Renames survive a killed process, not a power cut (nothing is fsynced).

    A refused rename leaves ``target`` as it was and raises ``WriteFailed``; once the new folder is in place,
    an old folder that cannot be deleted is left (under its ``.factatlas-tmp-`` name) for the next writer,
    with a warning: the outputs are whole either way."""
    with writing(target, "put the new folder in place"):
        if not target.exists():
            os.rename(new, target)
            return
        if _exchange(new, target):
            old = new
        else:  # two renames: a kill between them leaves no target, only the two .factatlas-tmp- folders
            old = new.with_name(f"{TMP_PREFIX}old-{target.name}-{os.getpid()}")
            os.rename(target, old)
            try:
                os.rename(new, target)
            except OSError:
                os.rename(old, target)
                raise
    crash_point("swap:exchanged")
    try:
        for name in keep:
            if (old / name).exists() and not (target / name).exists():
                os.rename(old / name, target / name)
        shutil.rmtree(old)
    except OSError as e:
        log.warning("%s: the new folder is in place, but the old one (%s) could not be removed (%s); the next "
                    "factatlas command that writes into the run removes it", target, old, e.strerror or e)


def check_replaceable(target: Path, action: str = "") -> None:
    """Refuse, before anything is staged, to replace a folder this process could not delete afterwards: one
    of its folders is read-only (or on a read-only file system). Tried for real (a file made and removed in
    each folder), so whatever decides it (modes, ACLs, mounts, capabilities) is what is asked. ``action``: what
    the error says could not be done (a writer into the folder's tree, e.g. the report, says its own)."""
    if not target.is_dir():
        return
    for folder, dirnames, _ in os.walk(target):
        dirnames[:] = [d for d in dirnames if not d.startswith(TMP_PREFIX)]
        with writing(folder, action or f"replace {target.name}/, which needs to delete what {folder} holds"):
            fd, probe = tempfile.mkstemp(prefix=f"{TMP_PREFIX}probe-", dir=folder)
            os.close(fd)
            os.unlink(probe)


def check_own_output(folder: Path, marker: str, option: str) -> None:
    """Refuse, before any work, to replace a folder this command did not write: one that holds files but not
    ``marker`` (the file the command always writes there). A command that writes its outputs as one folder
    (``replace_folder``) would otherwise delete whatever a user kept in the folder given with ``option``."""
    if folder.is_dir() and any(folder.iterdir()) and not (folder / marker).is_file():
        raise FactatlasError(f"{folder}: holds files this command did not write (it has no {marker}), and the "
                             f"command replaces its output folder whole; give {option} a new or empty folder")


@contextmanager
def replace_folder(target: Path, keep: Sequence[str] = ()) -> Iterator[Path]:
    """Yield an empty staging folder beside ``target``; when the block ends without an error it replaces
    ``target`` whole (``swap_in``, carrying ``keep`` over). A folder that could not be deleted afterwards is
    refused first (``check_replaceable``); a refused write inside is a ``WriteFailed`` naming where the file
    was going and saying ``target`` is unchanged; the staging folder never outlives the block."""
    check_replaceable(target)
    staging = target.with_name(f"{TMP_PREFIX}{target.name}-{os.getpid()}")
    with writing(staging.parent, f"make the staging folder {staging.name} in it"):
        target.parent.mkdir(parents=True, exist_ok=True)
        if staging.exists():  # a dead process with our pid left it
            shutil.rmtree(staging)
        staging.mkdir()
    try:
        try:
            with writing(target, f"write the new {target.name}/"):
                yield staging
        except WriteFailed as e:
            raise e.staged(staging, target) from e.error
        swap_in(staging, target, keep)
    finally:
        discard(staging)


def carry_over(source: Path, staging: Path, leave: Collection[str] = ()) -> None:
    """Fill the staging folder of ``replace_folder(source)`` with what ``source`` holds, but for the top-level
    entries named in ``leave`` (what the writer makes anew): files as hard links (no copy of the data, the
    bytes stay the same), copied where the file system refuses a link. A writer that replaces some files of a
    folder (the report beside a probe's rankings) so swaps the whole folder in one step."""
    for entry in sorted(source.iterdir()):
        if entry.name in leave or entry.name.startswith(TMP_PREFIX):
            continue
        dest = staging / entry.name
        with writing(dest, f"carry {entry.name} over into the new {source.name}/"):
            if entry.is_dir() and not entry.is_symlink():
                shutil.copytree(entry, dest, symlinks=True, copy_function=_link_or_copy)
            else:
                _link_or_copy(entry, dest)


def _link_or_copy(src: str | Path, dest: str | Path) -> None:
    if Path(src).is_symlink():
        os.symlink(os.readlink(src), dest)
        return
    try:
        os.link(src, dest)
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK, errno.EACCES):
            raise
        shutil.copy2(src, dest)


@dataclass(frozen=True)
class RunDir:
    root: Path

    @classmethod
    def open(cls, root: str | Path) -> RunDir:
        root = Path(root)
        with writing(root, "create the run folder"):
            root.mkdir(parents=True, exist_ok=True)
        return cls(root)

    @contextmanager
    def lock(self, wait_s: float = 0.0) -> Iterator[RunDir]:
        """Exclusive writer of this run directory; also finishes what killed runs left half done (a swap
        between its two renames, a swapped-in folder whose manifest entry is still pending) and clears the
        rest. ``wait_s``: how long to wait for another holder (default: fail at once)."""
        created = not self.root.exists()
        with writing(self.root, "create the run folder"):
            self.root.mkdir(parents=True, exist_ok=True)
        lock_file = self.root / LOCK_NAME
        outermost = str(lock_file.resolve()) not in _held_locks
        try:
            with exclusive_lock(lock_file, f"run directory {self.root}", wait_s):
                if outermost:  # nested holders (the quickstart's stages) may have staging folders in use
                    restore_interrupted_swaps(self.root)
                    self.read_manifest()  # a damaged manifest stops the stage now, not after its work
                    self._settle_entries(self._pending_entries())
                    remove_leftovers(self.root)
                yield self
        except BaseException:
            if created and outermost and self.root.is_dir() and not any(self.root.iterdir()):
                # a stage that failed before writing anything leaves no empty run directory behind
                self.root.rmdir()
            raise

    @contextmanager
    def replace_stage(self, name: str, *, keep: Sequence[str] = ()) -> Iterator[Path]:
        """Yield an empty staging folder for stage ``name``; on success it replaces ``<run>/<name>`` whole.

        On an exception the staging folder is deleted and the previous stage folder is left untouched.
        ``keep``: entries of the old folder carried into the new one (e.g. a query cache). A manifest entry
        written into the staging folder by ``stage_entry`` moves into manifest.json right after the swap, so
        the folder and its entry change together (see ``stage_entry``)."""
        target = self.root / name
        with self.lock(), replace_folder(target, keep) as staging:
            yield staging
            crash_point("stage:complete")
        self._settle_entries([target / PENDING_ENTRY])

    def check_replaceable(self, name: str) -> None:
        """Refuse now, before a stage's work, what ``replace_stage(name)`` would refuse after it: a stage folder
        that cannot be deleted (read-only). Call it holding the lock."""
        check_replaceable(self.root / name)

    def stage(self, name: str) -> Path:
        p = self.root / name
        with writing(p, "create the folder"):
            p.mkdir(parents=True, exist_ok=True)
        return p

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def read_manifest(self) -> dict[str, Any]:
        """manifest.json, with the entries still pending in swapped-in stage folders (a writer killed between
        the swap and the manifest write) applied: what the folders hold is what the manifest says."""
        manifest: Any = {}
        if self.manifest_path.exists():
            manifest = read_json(self.manifest_path, "move it away and run the run's stages again (each "
                                 "writes its entry)")
            stages = manifest.get("stages", {}) if isinstance(manifest, dict) else None
            if not isinstance(stages, dict) or not all(isinstance(e, dict) for e in stages.values()):
                raise FactatlasError(f"{self.manifest_path}: not a factatlas run manifest (an object with a "
                                     "'stages' object of entries); move it away and run the run's stages again")
        for path in self._pending_entries():
            pending = json.loads(path.read_text("utf-8"))
            manifest.setdefault("stages", {})[pending["stage"]] = pending["entry"]
            manifest["run"] = self.root.name
        return manifest

    def changed_outputs(self, stage: str, names: Sequence[str]) -> list[str]:
        """Which of the files ``names`` (in ``<run>/<stage>/``) are not what the stage's manifest entry
        records: changed since (another sha256), gone, or there without being recorded. Empty when they
        agree, or when the manifest has no entry with outputs for the stage (made outside factatlas)."""
        entry = (self.read_manifest().get("stages") or {}).get(stage)
        outputs = entry.get("outputs") if isinstance(entry, dict) else None
        if not isinstance(outputs, dict) or not outputs:
            return []
        problems = []
        for name in names:
            key, path = f"{stage}/{name}", self.root / stage / name
            if key in outputs and not path.is_file():
                problems.append(f"{path}: recorded, but gone")
            elif key not in outputs and path.is_file():
                problems.append(f"{path}: there, but not recorded")
            elif key in outputs and sha256_file(path) != outputs[key]:
                problems.append(f"{path}: changed since it was recorded (another sha256)")
        return problems

    def _pending_entries(self) -> list[Path]:
        """Manifest entries waiting in stage folders (``<run>/<stage>/`` and ``<run>/probe/<model>/``)."""
        found = [*self.root.glob(f"*/{PENDING_ENTRY}"), *self.root.glob(f"*/*/{PENDING_ENTRY}")]
        return sorted(p for p in found if not any(part.startswith(TMP_PREFIX) for part in p.relative_to(self.root).parts))

    def _settle_entries(self, pending: Sequence[Path]) -> None:
        """Move pending entries into manifest.json (one write), then delete them: a kill between the two
        leaves them pending, and the next writer applies them again (the same entry: idempotent)."""
        pending = [p for p in pending if p.is_file()]
        if not pending:
            return
        write_json(self.manifest_path, self.read_manifest())
        crash_point("manifest:written")
        for path in pending:
            path.unlink()

    def stage_entry(self, staging: Path, stage: str, *, config: dict[str, Any], counts: dict[str, Any] | None = None,
                    outputs: list[str | Path] | None = None, extra: dict[str, Any] | None = None,
                    started: datetime | None = None, folder: str | None = None) -> dict[str, Any]:
        """``record_stage`` for a folder being staged by ``replace_stage(stage)``: the entry (``outputs`` are
        files in ``staging``, hashed there and named as they will be once swapped in) is written into the
        staging folder and moves into manifest.json with the swap; a kill in between leaves it pending in
        the new folder, where ``read_manifest`` and the next writer find it. Folder and entry never disagree.
        ``folder``: the staged folder's name when it is not the stage's (publish's entry describes release/)."""
        named = {(Path(folder or stage) / Path(p).relative_to(staging)).as_posix(): Path(p) for p in outputs or []}
        entry = self._entry(config=config, counts=counts, outputs=named, extra=extra, started=started)
        write_json(staging / PENDING_ENTRY, {"stage": stage, "entry": entry})
        return entry

    def record_stage(self, stage: str, *, config: dict[str, Any], counts: dict[str, Any] | None = None,
                     outputs: list[str | Path] | None = None, extra: dict[str, Any] | None = None,
                     started: datetime | None = None) -> dict[str, Any]:
        """Merge one stage's entry into manifest.json (resolved config, versions, times, output hashes)."""
        manifest = self.read_manifest()
        named = {self._output_name(Path(p)): Path(p) for p in outputs or []}
        entry = self._entry(config=config, counts=counts, outputs=named, extra=extra, started=started)
        manifest.setdefault("stages", {})[stage] = entry
        manifest["run"] = self.root.name
        write_json(self.manifest_path, manifest)
        return entry

    def _output_name(self, path: Path) -> str:
        """An output's name in the manifest: relative to the run, or absolute when it lives elsewhere (a
        release folder given with `publish --out`)."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(path.resolve())

    @staticmethod
    def _entry(*, config: dict[str, Any], counts: dict[str, Any] | None, outputs: dict[str, Path],
               extra: dict[str, Any] | None, started: datetime | None) -> dict[str, Any]:
        from factatlas.http import redact  # a command line may carry --endpoint http://user:password@...

        entry: dict[str, Any] = {
            "config": config,
            "versions": dependency_versions(),
            "command": redact(" ".join(sys.argv)),
            "started": (started or datetime.now(UTC)).isoformat(timespec="seconds"),
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "counts": counts or {},
            "outputs": {name: sha256_file(path) for name, path in sorted(outputs.items()) if path.is_file()},
        }
        if extra:
            entry.update(extra)
        return entry
