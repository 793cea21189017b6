"""Session fixtures that several xdist workers would each build: built once per test session, the others
wait for it and read the same folder.

Only for outputs that are the same whoever builds them (the tiny models are byte-identical across processes:
tests/probe/test_tiny_determinism.py) and that no test writes into. Without xdist, or with one worker, the
folder is simply built once in the session's temporary directory."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

DONE = ".built"  # holds the path of the result, relative to the folder


def shared_build(tmp_path_factory, name: str, build: Callable[[Path], Path]) -> Path:
    """``build(folder)`` once per test session for all workers; returns what it returned (a path inside
    ``folder``). A worker that died half way leaves no DONE mark: the next one clears the folder and builds
    again."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's folder, above every worker's own (pytest-N/popen-gwK)
    folder, done = root / f"shared-{name}", root / f"shared-{name}" / DONE
    with (root / f"shared-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this worker dies
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            made = Path(build(folder)).resolve()
            done.write_text(str(made.relative_to(folder.resolve())), "utf-8")
    return folder / done.read_text("utf-8")
