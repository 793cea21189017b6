"""Whether a test changed the checkout, without listing the checkout twice per test.

`tests/conftest.py` fails a test after which a file of the checkout is new, removed or rewritten (bytecode,
git's and pytest's own folders aside). Listing the checkout (about 600 paths) before and after each test cost
3-5 ms twice, 16-26 CPU-s over the suite's 2,650 tests. `CheckoutWatch` lists it once and asks Linux's
inotify to note any change to a watched folder: a test after which no event is queued changed nothing, and
costs one non-blocking read; after an event the checkout is listed again and compared with the last listing,
so what is reported is the net change, exactly as before (a file written and removed within one test is no
change). Where inotify is missing (not Linux, no watches left), every check lists the checkout, as before.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
from collections.abc import Collection
from pathlib import Path

# inotify(7): what changes a listing (a name created, removed or moved; a file's data or times), and the
# folder itself going
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_WATCHED = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
            | _IN_DELETE_SELF | _IN_MOVE_SELF)
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name


def listing(root: Path, exempt: Collection[str]) -> dict[str, tuple[bool, int, int]]:
    """Every path below ``root`` (relative) -> (is a folder, mtime ns, size), names in ``exempt`` and what
    is below them aside."""
    state: dict[str, tuple[bool, int, int]] = {}
    prefix = len(str(root)) + 1
    stack = [str(root)]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.name in exempt:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    state[entry.path[prefix:]] = (True, 0, 0)  # a folder's own times move with its bytecode
                else:
                    st = entry.stat(follow_symlinks=False)
                    state[entry.path[prefix:]] = (False, st.st_mtime_ns, st.st_size)
    return state


def changes(before: dict, after: dict) -> list[str]:
    new = [f"new {p}" for p in sorted(after.keys() - before.keys())]
    gone = [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    rewritten = [f"rewritten {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return new + gone + rewritten


class _Inotify:
    """An inotify instance (non-blocking) watching folders; ``pending()``: whether any event was queued
    since the last call, the folders' own exempt children aside."""

    def __init__(self, exempt: Collection[str]):
        self._exempt = frozenset(name.encode() for name in exempt)
        self._libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self._watched: set[str] = set()

    def watch(self, folder: str) -> None:
        if folder in self._watched:
            return
        if self._libc.inotify_add_watch(self._fd, os.fsencode(folder), _WATCHED) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder}")
        self._watched.add(folder)

    def forget_all_but(self, folders: Collection[str]) -> None:
        self._watched &= set(folders)

    def pending(self) -> bool:
        seen = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return seen
            at = 0
            while at < len(data):
                _wd, _mask, _cookie, size = _EVENT.unpack_from(data, at)
                name = data[at + _EVENT.size:at + _EVENT.size + size].rstrip(b"\0")
                at += _EVENT.size + size
                if name not in self._exempt:  # also the queue's overflow (no name), which counts
                    seen = True

    def close(self) -> None:
        os.close(self._fd)


class CheckoutWatch:
    """``check()``: the changes to the checkout (``changes`` of two listings) since the previous call, or
    since the watch began."""

    def __init__(self, root: Path, exempt: Collection[str], use_inotify: bool = True):
        self.root, self.exempt = root, frozenset(exempt)
        self._inotify: _Inotify | None = None
        if use_inotify:
            try:
                self._inotify = _Inotify(self.exempt)
            except (OSError, AttributeError):  # not Linux, or no inotify instance left: list every time
                self._inotify = None
        self._state = self._list()

    @property
    def uses_inotify(self) -> bool:
        return self._inotify is not None

    def _list(self) -> dict[str, tuple[bool, int, int]]:
        state = listing(self.root, self.exempt)
        if self._inotify is not None:
            folders = {str(self.root), *(str(self.root / p) for p, (is_dir, _, _) in state.items() if is_dir)}
            self._inotify.forget_all_but(folders)  # a removed folder's watch went with it
            try:  # every folder, also one made since the last listing (its later files are then seen)
                for folder in sorted(folders):
                    self._inotify.watch(folder)
            except OSError:  # out of watches (fs.inotify.max_user_watches): list every time from now on
                self._inotify.close()
                self._inotify = None
        return state

    def check(self) -> list[str]:
        if self._inotify is not None and not self._inotify.pending():
            return []
        before, self._state = self._state, self._list()
        return changes(before, self._state)
