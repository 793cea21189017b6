"""``factatlas.memory.give_back``: what the C heap freed below its top goes back to the system (glibc), the
Arrow pool's unused pages too; elsewhere the C side is left alone without an error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from factatlas import memory

REPO = Path(__file__).resolve().parents[2]

# a child process, so that what this test allocates and frees is not shared with the rest of the suite
FREED_BELOW_THE_TOP = """
import pyarrow
from factatlas.memory import give_back
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
blocks = [b"x" * 60_000 for _ in range(1500)]  # 90 MB on the C heap, each below glibc's mmap threshold
keep = b"y" * 60_000  # above them: the heap's top stays in use, so free() alone gives nothing back
held = rss()
del blocks
freed = rss()
give_back()
print(held, freed, rss())
"""


@pytest.mark.skipif(memory._malloc_trim() is None or not Path("/proc/self/status").is_file(),
                    reason="glibc's malloc_trim and /proc are Linux's")
def test_what_the_heap_freed_below_its_top_is_given_back():
    out = subprocess.run([sys.executable, "-c", FREED_BELOW_THE_TOP], capture_output=True, text=True, check=True,
                         cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    held, freed, given = map(int, out.stdout.split())
    assert freed > held - 20  # free() kept the pages (the heap's top is in use)
    assert given < freed - 60  # give_back returned them: 90 MB were freed


def test_without_malloc_trim_only_the_arrow_pool_is_asked(monkeypatch):
    import pyarrow as pa

    asked = []
    monkeypatch.setattr(memory, "_malloc_trim", lambda: None)
    pool = pa.default_memory_pool()
    monkeypatch.setattr(pa, "default_memory_pool", lambda: type("P", (), {"release_unused": lambda s: asked.append(1)})())
    memory.give_back()
    assert asked == [1]
    del pool
