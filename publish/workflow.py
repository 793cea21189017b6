"""`factatlas publish` and `factatlas diff` as functions: load, render, check versions, write, commit, tag."""

from __future__ import annotations

import difflib
import json
import shutil
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from factatlas.atomic import TMP_PREFIX
from factatlas.errors import ConfigError, writing
from factatlas.rundir import RunDir, replace_folder

from .diff import ReleaseDiff, diff_snapshots, snapshot_from_files
from .publishers import Publisher, PublishResult, open_target, read_ref
from .render import Release, ReleaseOptions, is_release_dir, read_release_dir, render_release, write_release
from .source import load_source, locate
from .versions import Version, check_bump, check_new_version, previous_version, versions_from_tags


@dataclass(frozen=True)
class PublishPlan:
    """Everything decided before anything is written."""

    release: Release
    version: Version
    previous: Version | None  # None when --previous named a ref explicitly or this is the first release
    previous_ref: str | None
    previous_card: str | None
    release_dir: Path
    location: str

    def file_listing(self) -> list[tuple[str, int]]:
        return [(p, len(d)) for p, d in self.release.files.items()]

    def card_diff(self) -> str:
        old = (self.previous_card or "").splitlines(keepends=True)
        new = self.release.card.splitlines(keepends=True)
        return "".join(difflib.unified_diff(old, new, fromfile=f"{self.previous_ref or '(none)'}/README.md",
                                            tofile=f"v{self.version}/README.md"))


def plan_publish(run: str | Path, publisher: Publisher, *, repo: str, version: str, previous_ref: str | None = None,
                 license: str | None = None, pretty_name: str | None = None, release_dir: str | Path | None = None,
                 ignore_bump: bool = False, max_shard_rows: int = 100_000) -> PublishPlan:
    """Render the release and check the version; reads the target, writes nothing."""
    new = Version.parse(version)
    existing = versions_from_tags(publisher.existing_tags())
    check_new_version(new, existing, publisher.location)
    src = load_source(run)
    prev_version = None
    previous: dict[str, bytes] | None = None
    if previous_ref:
        previous = read_ref(previous_ref)
    else:
        prev_version = previous_version(new, existing)
        if prev_version is not None:
            previous_ref = f"{publisher.location}@{prev_version.tag}"
            previous = publisher.read_tag(prev_version.tag)
    target = "hub" if publisher.location.startswith("hub:") else publisher.location
    release = render_release(src, ReleaseOptions(repo, new, license, pretty_name, max_shard_rows, target), previous)
    if release.diff is not None and not ignore_bump:
        old = prev_version or _version_in(previous)
        problem = check_bump(old, new, release.diff.suggested_bump)
        if problem:
            reasons = "; ".join(f"{level.value}: {', '.join(rs)}" for level, rs in release.diff.reasons().items() if rs)
            raise ConfigError(f"{publisher.location}: {problem} ({reasons}). Pass --ignore-bump to publish anyway.")
    bench, run_dir = locate(run)
    if release_dir:
        out = Path(release_dir)
    elif run_dir is not None:
        out = run_dir / "release"
    else:  # a bare benchmark directory: the release goes beside it
        out = bench.with_name(f"{bench.name}-release")
    if out.exists() and any(out.iterdir()) and not is_release_dir(out):
        raise ConfigError(f"{out}: exists and is not a release folder; refusing to replace it. Pick another "
                          "--out or remove it.")
    card = previous.get("README.md", b"").decode("utf-8") if previous else None
    return PublishPlan(release, new, prev_version, previous_ref, card, out, publisher.location)


def _version_in(files: Mapping[str, bytes] | None) -> Version | None:
    if not files or "manifest.json" not in files:
        return None
    v = json.loads(files["manifest.json"]).get("version")
    return Version.parse(v) if v else None


def execute(plan: PublishPlan, publisher: Publisher, run: str | Path) -> PublishResult:
    """Write the release folder, commit and tag it at the target, then note it in the run manifest.

    A run's own release/ is staged with its manifest entry and swapped in once the target holds the release,
    so the folder, the entry and the target never disagree about what was published: a failure or a kill
    before the swap leaves the old folder and entry (and, before the push, the target as it was)."""
    started = datetime.now(UTC)
    _, run_dir = locate(run)
    if run_dir is not None and plan.release_dir.resolve() == (run_dir / "release").resolve():
        run_folder = RunDir(run_dir)
        with run_folder.replace_stage("release") as staging:
            result = _write_and_publish(plan, publisher, staging)
            run_folder.stage_entry(staging, "publish", folder="release", **_publish_entry(plan, result, staging, started))
        return result
    with writing(plan.release_dir, "write the release folder"):
        plan.release_dir.parent.mkdir(parents=True, exist_ok=True)
        for leftover in plan.release_dir.parent.glob(f"{TMP_PREFIX}{plan.release_dir.name}-*"):
            shutil.rmtree(leftover)  # what a killed publish left (outside a run: no lock-holder's cleanup)
    with replace_folder(plan.release_dir) as staging:
        result = _write_and_publish(plan, publisher, staging)
    if run_dir is not None:
        RunDir.open(run_dir).record_stage("publish", **_publish_entry(plan, result, plan.release_dir, started))
    return result


def _write_and_publish(plan: PublishPlan, publisher: Publisher, folder: Path) -> PublishResult:
    write_release(plan.release.files, folder)
    if read_release_dir(folder) != dict(plan.release.files):
        raise ConfigError(f"{folder}: written files differ from the rendered release; disk full?")
    message = f"Release v{plan.version}"
    if plan.release.diff is not None:
        message += f" ({plan.release.diff.suggested_bump.value} changes since {plan.previous_ref})"
    return publisher.publish(plan.release.files, plan.version, message)


def _publish_entry(plan: PublishPlan, result: PublishResult, folder: Path, started: datetime) -> dict:
    return {"config": {"target": result.target, "version": result.version}, "started": started,
            "counts": {"files": len(plan.release.files), "bytes": sum(map(len, plan.release.files.values()))},
            "outputs": [folder / "manifest.json"],
            "extra": {"tag": result.tag, "commit": result.commit, "url": result.url}}


def publish(run: str | Path, *, repo: str, version: str, target: str, dry_run: bool = False,
            private: bool = False, previous_ref: str | None = None, endpoint: str | None = None,
            **options) -> tuple[PublishPlan, PublishResult | None]:
    """Plan (render + version checks) and, unless ``dry_run``, execute a release. ``endpoint``: a Hub URL
    other than the default (HF_ENDPOINT works too); the token comes from HF_TOKEN or the user's login."""
    publisher = open_target(target, repo, private=private, endpoint=endpoint)
    with ExitStack() as held:
        if not dry_run:  # one publisher per target and per run: versions are checked and tags made in one go
            held.enter_context(publisher.lock())
            _, run_dir = locate(run)
            if run_dir is not None:
                held.enter_context(RunDir(run_dir).lock())
        plan = plan_publish(run, publisher, repo=repo, version=version, previous_ref=previous_ref, **options)
        if dry_run:
            return plan, None
        return plan, execute(plan, publisher, run)


def load_any(ref: str) -> dict[str, bytes]:
    """Release files from a git/Hub ref, a release folder, or (rendered in memory) a run/benchmark dir."""
    path = Path(ref)
    if not ref.startswith(("git:", "hub:")) and not is_release_dir(path) and (
            (path / "benchmark.json").is_file() or (path / "build" / "benchmark.json").is_file()):
        release = render_release(load_source(path), ReleaseOptions("local/preview", Version(0, 0, 0)))
        return dict(release.files)
    return read_ref(ref)


def diff_refs(old: str, new: str) -> ReleaseDiff:
    a, b = load_any(old), load_any(new)
    d = diff_snapshots(snapshot_from_files(a, old), snapshot_from_files(b, new))
    va, vb = _version_in(a), _version_in(b)
    preview = Version(0, 0, 0)  # what load_any stamps on a benchmark rendered for comparison
    return replace(d, old_version=str(va) if va and va != preview else old,
                   new_version=str(vb) if vb and vb != preview else new)
