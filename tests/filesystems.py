"""Real file systems and real file modes for the write-failure tests (issue 42), never mocks.

- ``small_filesystem(folder, free_kb)``: a tmpfs mounted at ``folder`` holding what is there already and
  ``free_kb`` KiB more (0: full), so writes fail with the kernel's own ENOSPC;
- ``over_quota(folder, seed, free_kb)``: a btrfs file system in a loop file, the run in a subvolume whose
  quota group allows ``free_kb`` KiB more (EDQUOT, for root too; kernels without disk quotas for ext4/xfs
  still have btrfs quota groups);
- ``read_only(folder)``: ``folder`` bind-mounted onto itself read-only (EROFS, for root too);
- ``modes_enforced()``: this thread without the capabilities that let root ignore file modes
  (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER), so ``chmod 555`` means what it says (EACCES); a
  user other than root needs nothing.

Each skips the test with the reason when the machine does not allow it (mounting needs root or
CAP_SYS_ADMIN; btrfs needs btrfs-progs and loop devices; dropping capabilities needs Linux's capset).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

_CAP_VERSION_3 = 0x20080522
DAC_CAPABILITIES = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER


def _mount(*args: str) -> str | None:
    """None when ``mount ARGS`` worked, else why not."""
    if shutil.which("mount") is None:
        return "no mount command"
    proc = subprocess.run(["mount", *args], capture_output=True, text=True)
    return None if proc.returncode == 0 else (proc.stderr.strip() or f"mount exited {proc.returncode}")


def _umount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def used_kib(folder: Path) -> int:
    st = os.statvfs(folder)
    return (st.f_blocks - st.f_bfree) * st.f_frsize // 1024


@contextlib.contextmanager
def small_filesystem(folder: Path, seed: Path | None = None, free_kb: int = 0) -> Iterator[Path]:
    """Mount a tmpfs at the new folder ``folder``, copy ``seed`` (a run) into it, and leave ``free_kb`` KiB
    free; yields the copy (or ``folder``). Unmounted, with what it held, at the end."""
    folder.mkdir(parents=True)
    why = _mount("-t", "tmpfs", "-o", "size=256m,mode=755", "tmpfs", str(folder))
    if why:
        pytest.skip(f"a small real file system needs a tmpfs mount (root or CAP_SYS_ADMIN): {why}")
    try:
        inside = folder
        if seed is not None:
            inside = folder / seed.name
            shutil.copytree(seed, inside, symlinks=True)
        grow(folder, free_kb)
        yield inside
    finally:
        _umount(folder)


def grow(folder: Path, free_kb: int) -> None:
    """Give the tmpfs at ``folder`` ``free_kb`` KiB more room (the user frees space)."""
    size = max(used_kib(folder) + free_kb, 4)  # size=0 would mean no limit at all
    why = _mount("-o", f"remount,size={size}k", str(folder))
    assert why is None, why


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True)


@contextlib.contextmanager
def over_quota(folder: Path, seed: Path, free_kb: int = 0) -> Iterator[Path]:
    """``seed`` copied into a btrfs subvolume at ``folder``/q whose quota group lets it grow by ``free_kb``
    KiB; yields the copy. The file system lives in a sparse loop file beside ``folder``."""
    missing = [tool for tool in ("mkfs.btrfs", "btrfs", "losetup") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"a disk quota (EDQUOT) needs btrfs quota groups: {', '.join(missing)} not installed "
                    "(apt-get install btrfs-progs)")
    image = folder.with_name(folder.name + ".img")
    with open(image, "wb") as f:
        f.truncate(128 << 20)
    made = _run("mkfs.btrfs", "-q", str(image))
    if made.returncode:
        pytest.skip(f"mkfs.btrfs failed: {made.stderr.strip()}")
    folder.mkdir(parents=True)
    why = _mount("-o", "loop", str(image), str(folder))
    if why:
        image.unlink()
        pytest.skip(f"mounting a btrfs loop file needs root and loop devices: {why}")
    try:
        for step in (("quota", "enable", str(folder)), ("subvolume", "create", str(folder / "q"))):
            res = _run("btrfs", *step)
            if res.returncode:
                pytest.skip(f"btrfs {' '.join(step[:2])} refused: {res.stderr.strip()}")
        inside = folder / "q" / seed.name
        shutil.copytree(seed, inside, symlinks=True)
        os.sync()
        _run("btrfs", "quota", "rescan", "-w", str(folder))
        shown = _run("btrfs", "qgroup", "show", "--raw", "-r", str(folder / "q")).stdout.splitlines()
        used = next(int(line.split()[1]) for line in shown if line.split()[-1:] == ["q"])
        res = _run("btrfs", "qgroup", "limit", str(used + free_kb * 1024), str(folder / "q"))
        assert res.returncode == 0, res.stderr
        yield inside
    finally:
        _umount(folder)
        image.unlink()


def mount_points() -> set[str]:
    """Every mount point of this process's view (``/proc/self/mountinfo``, field 5, octal escapes undone)."""
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        return {line.split()[4].encode().decode("unicode_escape") for line in f}


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """``folder`` as a read-only bind mount of itself: every write under it fails with EROFS. At the end
    every mount made since is undone, also one that a rename under test moved elsewhere."""
    before = mount_points()
    why = _mount("--bind", str(folder), str(folder))
    if why:
        pytest.skip(f"a read-only file system needs a bind mount (root or CAP_SYS_ADMIN): {why}")
    try:
        why = _mount("-o", "remount,bind,ro", str(folder))
        if why:
            pytest.skip(f"remounting a bind mount read-only was refused: {why}")
        yield folder
    finally:
        scope = str(folder.parent.parent)  # where a rename under test can move it; never another's mounts
        for point in sorted(mount_points() - before, key=len, reverse=True):
            if point.startswith(scope):
                _umount(Path(point))


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _capabilities() -> tuple[ctypes.CDLL, _Header, ctypes.Array]:
    libc = ctypes.CDLL(None, use_errno=True)
    header, data = _Header(_CAP_VERSION_3, 0), (_Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    return libc, header, data


@contextlib.contextmanager
def modes_enforced() -> Iterator[None]:
    """File modes bind this thread as they bind any user: root's overrides are off inside (effective set
    only, so they come back after)."""
    if os.geteuid() != 0:
        yield
        return
    try:
        libc, header, data = _capabilities()
        saved = data[0].effective
        for cap in DAC_CAPABILITIES:
            data[0].effective &= ~(1 << cap)
        if libc.capset(ctypes.byref(header), data) != 0:
            raise OSError(ctypes.get_errno(), "capset failed")
    except (OSError, AttributeError) as e:
        pytest.skip(f"root ignores file modes and its overrides could not be dropped here: {e}")
    try:
        yield
    finally:
        data[0].effective = saved
        libc.capset(ctypes.byref(header), data)


def tree(root: Path) -> dict[str, str]:
    """Every file below ``root`` (relative path) -> its sha256: a folder's bytes, to compare before and after."""
    import hashlib

    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def leftovers(root: Path) -> list[str]:
    """Temporary files or folders of ours, and the lock file: none may outlive a command."""
    from factatlas.rundir import LOCK_NAME, TMP_PREFIX

    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.name.startswith(TMP_PREFIX) or p.name == LOCK_NAME)
