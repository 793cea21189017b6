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

import ctypes
import errno
import fcntl
import hashlib
import json
import os
import platform
import shutil
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from factatlas.atomic import TMP_PREFIX, write_json
from factatlas.errors import FactatlasError

LOCK_NAME = ".factatlas.lock"
CRASH_ENV = "FACTATLAS_CRASH_AT"  # test hook: SIGKILL this process at the named point (see crash_point)

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


def crash_point(name: str) -> None:
    """Die by SIGKILL here when ``FACTATLAS_CRASH_AT`` names this point: the crash tests kill real
    processes at the moments that matter (between two files, between two renames) instead of guessing
    them with timers. A no-op otherwise."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


class LockHeld(FactatlasError):
    """Another factatlas process writes into the same run directory or publish target."""


_held_locks: dict[str, tuple[int, int]] = {}  # lock file -> (fd, depth): re-entrant within one process


@contextmanager
def exclusive_lock(lock_file: Path, what: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_file`` (created if needed) or fail at once with the holder's pid.

    The lock dies with its process, so a killed run never leaves a stale lock behind. Re-entrant within one
    process (the quickstart runs several stages into one run directory)."""
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
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        if e.errno not in (errno.EWOULDBLOCK, errno.EACCES):
            raise
        raise LockHeld(f"another factatlas process (pid {holder}) holds {what} (lock {lock_file}); wait "
                       "for it to finish, or stop it, then run this command again") from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        _held_locks[key] = (fd, 1)
        yield
    finally:
        _held_locks.pop(key, None)
        os.close(fd)  # closing the last descriptor releases the flock


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
    the outputs. Renames survive a killed process, not a power cut (nothing is fsynced)."""
    if not target.exists():
        os.rename(new, target)
        return
    if _exchange(new, target):
        old = new
    else:  # two renames: a kill between them leaves no target, only the two .factatlas-tmp- folders
        old = new.with_name(f"{TMP_PREFIX}old-{target.name}-{os.getpid()}")
        os.rename(target, old)
        os.rename(new, target)
    crash_point("swap:exchanged")
    for name in keep:
        if (old / name).exists() and not (target / name).exists():
            os.rename(old / name, target / name)
    shutil.rmtree(old)


@dataclass(frozen=True)
class RunDir:
    root: Path

    @classmethod
    def open(cls, root: str | Path) -> RunDir:
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        return cls(root)

    @contextmanager
    def lock(self) -> Iterator[RunDir]:
        """Exclusive writer of this run directory; also clears what killed runs left behind."""
        created = not self.root.exists()
        self.root.mkdir(parents=True, exist_ok=True)
        lock_file = self.root / LOCK_NAME
        outermost = str(lock_file.resolve()) not in _held_locks
        try:
            with exclusive_lock(lock_file, f"run directory {self.root}"):
                if outermost:  # nested holders (the quickstart's stages) may have staging folders in use
                    restore_interrupted_swaps(self.root)
                    remove_leftovers(self.root)
                yield self
        except BaseException:
            if created and outermost and {p.name for p in self.root.iterdir()} <= {LOCK_NAME}:
                # a stage that failed before writing anything leaves no empty run directory behind
                lock_file.unlink(missing_ok=True)
                self.root.rmdir()
            raise

    @contextmanager
    def replace_stage(self, name: str, *, keep: Sequence[str] = ()) -> Iterator[Path]:
        """Yield an empty staging folder for stage ``name``; on success it replaces ``<run>/<name>`` whole.

        On an exception the staging folder is deleted and the previous stage folder is left untouched.
        ``keep``: entries of the old folder carried into the new one (e.g. a query cache)."""
        target = self.root / name
        with self.lock():
            target.parent.mkdir(parents=True, exist_ok=True)
            staging = target.with_name(f"{TMP_PREFIX}{target.name}-{os.getpid()}")
            if staging.exists():  # a dead process with our pid left it (nested holders skip the cleanup)
                shutil.rmtree(staging)
            staging.mkdir()
            try:
                yield staging
                crash_point("stage:complete")
                swap_in(staging, target, keep)
            finally:
                if staging.exists():
                    shutil.rmtree(staging)

    def stage(self, name: str) -> Path:
        p = self.root / name
        p.mkdir(parents=True, exist_ok=True)
        return p

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.json"

    def read_manifest(self) -> dict[str, Any]:
        if not self.manifest_path.exists():
            return {}
        return json.loads(self.manifest_path.read_text("utf-8"))

    def record_stage(self, stage: str, *, config: dict[str, Any], counts: dict[str, Any] | None = None,
                     outputs: list[str | Path] | None = None, extra: dict[str, Any] | None = None,
                     started: datetime | None = None) -> dict[str, Any]:
        """Merge one stage's entry into manifest.json (resolved config, versions, times, output hashes)."""
        from factatlas.http import redact  # a command line may carry --endpoint http://user:password@...

        manifest = self.read_manifest()
        entry: dict[str, Any] = {
            "config": config,
            "versions": dependency_versions(),
            "command": redact(" ".join(sys.argv)),
            "started": (started or datetime.now(UTC)).isoformat(timespec="seconds"),
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "counts": counts or {},
            "outputs": {
                str(Path(p).relative_to(self.root)): sha256_file(p)
                for p in sorted(Path(p) for p in (outputs or []))
                if Path(p).is_file()
            },
        }
        if extra:
            entry.update(extra)
        manifest.setdefault("stages", {})[stage] = entry
        manifest["run"] = self.root.name
        write_json(self.manifest_path, manifest)
        return entry
