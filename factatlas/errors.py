"""Errors that name the artifact, the place and the fix."""

from __future__ import annotations

import difflib
import errno
import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path


class FactatlasError(Exception):
    """Base class: every message names what is wrong and how to fix it."""


class ConfigError(FactatlasError):
    """A configuration file or value is invalid. ``str(e)`` reads ``path:line:col: message``."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None, col: int | None = None):
        self.path, self.line, self.col, self.message = path, line, col, message
        where = ""
        if path:
            where = str(path)
            if line is not None:
                where += f":{line}"
                if col is not None:
                    where += f":{col}"
            where += ": "
        super().__init__(where + message)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" Did you mean 'x'?"`` when a close match exists, else ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def unknown(kind: str, word: str, choices: Iterable[str]) -> str:
    """The registry error message: unknown X 'y'. Did you mean 'z'? Available: ..."""
    choices = sorted(choices)
    return f"unknown {kind} '{word}'.{did_you_mean(word, choices)} Available: {', '.join(choices)}"


# ---- write failures: one translation of the OS's answer into what failed and what to do ---------------

# The errors a write gets from the file system itself (full, over quota, read-only, not permitted), as
# opposed to a bug: each becomes one `error:` line naming the path and the fix, never a traceback.
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG})
# Libraries that write files without raising an OSError with its errno still name it in their message:
# pyarrow's OSError "... Detail: [errno 28] No space left on device", safetensors' SafetensorError "I/O error:
# No space left on device (os error 28)", the tokenizers' Exception "... (os error 30)".
_ERRNO_IN_TEXT = re.compile(r"\[errno (\d+)\]|\(os error (\d+)\)", re.IGNORECASE)


def os_errno(error: BaseException) -> int | None:
    """The errno of a failed OS call: an OSError's own, or the one a library wrote into its message."""
    if isinstance(error, OSError) and error.errno is not None:
        return error.errno
    found = _ERRNO_IN_TEXT.search(str(error))
    return int(found.group(1) or found.group(2)) if found else None


def is_write_failure(error: BaseException) -> bool:
    return os_errno(error) in WRITE_ERRNOS


class WriteFailed(FactatlasError):
    """The file system refused a write: full, over quota, read-only or not permitted. ``str(e)`` reads
    ``<path>: cannot <action> (<strerror>); <fix>``."""

    def __init__(self, path: str | os.PathLike, action: str, error: BaseException, note: str = ""):
        self.path, self.action, self.errno = Path(path), action, os_errno(error)
        reason = os.strerror(self.errno) if self.errno is not None else str(error)
        self.error, self.note = error, note
        super().__init__(f"{path}: cannot {action} ({reason}); {write_fix(self.errno, self.path)}"
                         + (f"; {note}" if note else ""))

    def staged(self, staging: Path, target: Path) -> WriteFailed:
        """The same failure named by where the file was going (``target/...``), not by the staging folder
        it was being written into, with ``target`` said to be unchanged."""
        try:
            path = target / self.path.relative_to(staging)
        except ValueError:
            path = self.path
        return WriteFailed(path, self.action, self.error, note=f"{target} is unchanged")


def _folder_of(path: Path) -> Path:
    """The nearest existing folder at or above ``path``: where space, permission or mount state is decided."""
    for candidate in (path, *path.parents):
        if candidate.is_dir():
            return candidate
    return Path(".")


def write_fix(code: int | None, path: Path) -> str:
    """What to do about a write the file system refused with ``code`` at ``path``."""
    folder = _folder_of(path if path.is_dir() else path.parent)
    if code == errno.ENOSPC:
        return (f"the file system of {folder} is full: free space there (`df -h {folder}`) or write to "
                "another folder, then run the command again")
    if code == errno.EDQUOT:
        return (f"your disk quota on the file system of {folder} is used up: free space under your quota "
                "(`quota -s`) or write to another folder, then run the command again")
    if code == errno.EROFS:
        return (f"{folder} is on a read-only file system: write to a folder on a writable one (or remount it "
                "read-write), then run the command again")
    if code == errno.EFBIG:
        return f"the file is larger than the file system of {folder} allows: write to another file system"
    return (f"you may not write in {folder}: make it writable (`chmod -R u+w {folder}`) or write to another "
            "folder, then run the command again")


def write_failure(path: str | os.PathLike, action: str, error: BaseException) -> BaseException:
    """``WriteFailed`` for a write the file system refused; any other error unchanged (a bug stays a bug)."""
    if isinstance(error, WriteFailed) or not is_write_failure(error):
        return error
    return WriteFailed(path, action, error)


@contextmanager
def writing(path: str | os.PathLike, action: str = "write it") -> Iterator[None]:
    """Inside: a write the file system refuses becomes ``WriteFailed(path, action)`` (also when a library
    reports it as its own exception, naming the errno); other errors pass unchanged."""
    try:
        yield
    except Exception as e:
        failure = write_failure(path, action, e)
        if failure is e:
            raise
        raise failure from e
