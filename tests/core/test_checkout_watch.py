"""The suite's guard against tests writing into the checkout (tests/checkout_watch.py): with inotify and
without it, the same net changes, on a folder made here."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.checkout_watch import CheckoutWatch

EXEMPT = (".git", "__pycache__")


def tree(root):
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    (root / "pkg" / "sub" / "data.txt").write_text("data\n")
    (root / ".git").mkdir()
    return root


@pytest.mark.parametrize("use_inotify", [True, False])
def test_the_watch_reports_the_net_changes_since_its_last_check(tmp_path, use_inotify):
    root = tree(tmp_path / "checkout")
    watch = CheckoutWatch(root, EXEMPT, use_inotify=use_inotify)
    if use_inotify and not watch.uses_inotify:
        pytest.skip("no inotify here: the listing is what runs (the other case)")
    assert watch.check() == []
    (root / "pkg" / "mod.py").read_text()  # reading changes nothing
    assert watch.check() == []
    (root / "pkg" / "sub" / "new.txt").write_text("new\n")
    assert watch.check() == ["new pkg/sub/new.txt"]
    with (root / "pkg" / "sub" / "data.txt").open("a") as f:
        f.write("more\n")
    os.remove(root / "pkg" / "mod.py")
    assert watch.check() == ["removed pkg/mod.py", "rewritten pkg/sub/data.txt"]
    # a folder made since the last check is watched from then on
    (root / "made").mkdir()
    assert watch.check() == ["new made"]
    (root / "made" / "late.txt").write_text("late\n")
    assert watch.check() == ["new made/late.txt"]
    # a file written and removed between two checks is no change; bytecode and git's folder are not looked at
    (root / "pkg" / "tmp.txt").write_text("tmp\n")
    (root / "pkg" / "tmp.txt").unlink()
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0")
    (root / ".git" / "index").write_bytes(b"\0")
    assert watch.check() == []
    # a removed folder made again is watched again
    shutil.rmtree(root / "made")
    assert watch.check() == ["removed made", "removed made/late.txt"]
    (root / "made").mkdir()
    assert watch.check() == ["new made"]
    (root / "made" / "again.txt").write_text("again\n")
    assert watch.check() == ["new made/again.txt"]
