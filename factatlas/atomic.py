"""Atomic, deterministic file writes: write a temp file beside the target, then rename."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from factatlas.errors import writing

# Every temporary file or folder factatlas makes beside an output starts with this prefix, so the next
# writer of a run directory can remove what a killed run left (and nothing that is not ours).
TMP_PREFIX = ".factatlas-tmp-"


@contextmanager
def atomic_path(target: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path in the target's folder; on success it replaces ``target``.

    A write the file system refuses (full, over quota, read-only, not permitted), in making the temporary
    file, in the caller's writing into it or in the rename, raises ``WriteFailed`` naming ``target`` and the
    fix; the temporary file is removed and ``target`` keeps its old content (or stays absent)."""
    target = Path(target)
    tmp_path: Path | None = None
    try:
        with writing(target):
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{target.name}.", suffix=".tmp", dir=target.parent)
            os.close(fd)
            tmp_path = Path(tmp)
            yield tmp_path
            # mkstemp makes owner-only files; outputs are shared artifacts, so give them the usual mode
            os.chmod(tmp_path, 0o666 & ~_umask())
            _crash_point("atomic:before-replace")
            os.replace(tmp_path, target)
    finally:
        if tmp_path is not None:
            discard(tmp_path)


def write_together(files: Mapping[Path, bytes]) -> None:
    """Write several files as one output (an export's task files): each goes to a temporary name beside its
    target first, and only once all are written are they renamed into place. A write the file system
    refuses raises ``WriteFailed`` with every target as it was and no temporary file left."""
    temps: list[tuple[Path, Path]] = []
    try:
        for target, data in files.items():
            with writing(target):
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{target.name}.", suffix=".tmp", dir=target.parent)
                temps.append((Path(tmp), target))
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.chmod(tmp, 0o666 & ~_umask())
        for tmp, target in temps:
            with writing(target):
                os.replace(tmp, target)
    finally:
        for tmp, _ in temps:
            discard(tmp)  # those renamed into place are gone already


def append_line(path: str | os.PathLike, line: str) -> None:
    """Append one whole line to a log (``queries.jsonl``): all of it or, when the file system refuses part of
    it (full, over quota), none of it (the file is cut back to where it was), then ``WriteFailed``. A log that
    a reader parses line by line never ends in half a line."""
    path = Path(path)
    data = line.encode("utf-8")
    with writing(path, "append to it"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            size = os.fstat(fd).st_size
            try:
                written = os.write(fd, data)
                if written != len(data):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            except OSError:
                os.ftruncate(fd, size)
                raise
        finally:
            os.close(fd)


def discard(path: Path) -> None:
    """Remove a temporary file or folder of ours, quietly: it is a leftover at worst, which the next writer
    of the run removes (its name starts with ``TMP_PREFIX``); the error that got us here matters more."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


CRASH_ENV = "FACTATLAS_CRASH_AT"  # test hook: SIGKILL this process at the named point (see crash_point)
CRASH_SIGNAL_ENV = "FACTATLAS_CRASH_SIGNAL"  # test hook: another signal than SIGKILL there (TERM, INT)


def crash_point(name: str) -> None:
    """Die by SIGKILL here when ``FACTATLAS_CRASH_AT`` names this point: the crash tests kill real
    processes at the moments that matter (between two files, between two renames) instead of guessing
    them with timers. A no-op otherwise. (Here, below rundir, so that both can call it.)"""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), getattr(signal, f"SIG{os.environ.get(CRASH_SIGNAL_ENV, 'KILL')}"))


_crash_point = crash_point


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_bytes(target: str | os.PathLike, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def write_text(target: str | os.PathLike, text: str) -> None:
    write_bytes(target, text.encode("utf-8"))


def dumps_json(obj: Any) -> str:
    """Canonical JSON: sorted keys, UTF-8, 2-space indent, trailing newline (byte-stable)."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def write_json(target: str | os.PathLike, obj: Any) -> None:
    write_text(target, dumps_json(obj))


def read_json(path: str | os.PathLike, fix: str) -> Any:
    """A JSON file factatlas wrote, or an error naming it and saying ``fix`` (what to do) when it is cut
    short, empty or not JSON."""
    from factatlas.errors import FactatlasError

    try:
        return json.loads(Path(path).read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        where = f"line {e.lineno} column {e.colno}: " if isinstance(e, json.JSONDecodeError) else ""
        raise FactatlasError(f"{path}: not readable JSON ({where}{str(e).split(':')[0]}). It was probably cut "
                             f"short or edited; {fix}.") from None
