"""tests/file_order.txt, the order in which the workers take test files, names files that exist (a renamed
or removed file would silently fall back to the end of the run)."""

from __future__ import annotations

from tests.conftest import REPO, file_order


def test_every_file_in_the_order_exists_and_the_longest_come_first():
    order = file_order()
    assert len(order) > 50, "tests/file_order.txt lists too few files: write it again (benchmarks/suite_cpu.py)"
    assert [name for name in order if not (REPO / name).is_file()] == []
    # the runs that take longest on one worker are taken first, not last (xdist's own reorder put them last)
    for heavy in ("tests/core/test_probe_docs.py", "tests/probe/test_ray_engine.py", "tests/core/test_quickstart.py"):
        assert order[heavy] < 25, heavy
