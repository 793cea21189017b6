"""Where the time went: named sections of wall and process CPU time, for the quickstart's summary.

Stages mark their parts with ``section("probe/fine-tune")``; nothing is recorded unless a caller opened
a ``recording()``, so library calls pay one context-variable lookup. CPU time is the process's (every
thread), the number the quickstart's speed goal is stated in. A recording also counts the garbage
collector's runs and their CPU time (gc callbacks), which no section would show on its own.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Stopwatch:
    """Seconds per section name, in the order the sections were first entered: name -> [wall, cpu]."""

    sections: dict[str, list[float]] = field(default_factory=dict)
    collections: int = 0  # garbage collector runs while recording
    collector_cpu: float = 0.0  # and their process CPU seconds
    # CPU seconds of forked children that did a section's work (factatlas.forked): this process's clock does not
    # count them, so every section open while a child ran adds them, and the process total does
    child_cpu: float = 0.0

    def enter(self, name: str) -> None:
        """Give ``name`` its place in the order: a stage is entered before its parts finish."""
        self.sections.setdefault(name, [0.0, 0.0])

    def add(self, name: str, wall: float, cpu: float) -> None:
        total = self.sections.setdefault(name, [0.0, 0.0])
        total[0] += wall
        total[1] += cpu

    def cpu(self) -> float:
        """This process's CPU seconds and those of the children that worked for it."""
        return time.process_time() + self.child_cpu

    def add_child(self, cpu: float, sections: dict[str, list[float]] | None = None, collections: int = 0,
                  collector_cpu: float = 0.0) -> None:
        """A forked child's work: its CPU seconds, the sections it timed and its garbage collections."""
        self.child_cpu += cpu
        for name, (wall, section_cpu) in (sections or {}).items():
            self.add(name, wall, section_cpu)
        self.collections += collections
        self.collector_cpu += collector_cpu


_ACTIVE: ContextVar[Stopwatch | None] = ContextVar("factatlas_stopwatch", default=None)


def active() -> Stopwatch | None:
    """The stopwatch ``section`` records into now, if a caller opened a recording."""
    return _ACTIVE.get()


@contextmanager
def recording(watch: Stopwatch) -> Iterator[Stopwatch]:
    """Make ``watch`` the one that ``section`` records into, for the duration of the block."""
    started = [0.0]

    def collector(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.process_time()
        else:
            watch.collections += 1
            watch.collector_cpu += time.process_time() - started[0]

    token = _ACTIVE.set(watch)
    gc.callbacks.append(collector)
    try:
        yield watch
    finally:
        gc.callbacks.remove(collector)
        _ACTIVE.reset(token)


@contextmanager
def section(name: str) -> Iterator[None]:
    """Time the block into the recording stopwatch, if there is one (a section that raises still counts)."""
    watch = _ACTIVE.get()
    if watch is None:
        yield
        return
    watch.enter(name)
    wall, cpu = time.perf_counter(), watch.cpu()
    try:
        yield
    finally:
        watch.add(name, time.perf_counter() - wall, watch.cpu() - cpu)


def time_table(watch: Stopwatch, process_cpu: float | None = None) -> list[str]:
    """Lines for a terminal: each stage, its parts (sections named ``stage/part``) indented below it with
    what they leave of the stage, then the process's CPU time outside every stage (interpreter and CLI
    start-up), its total, and how much of the recorded time the garbage collector took."""
    cpu_now = watch.cpu() if process_cpu is None else process_cpu
    lines = [f"{'where the time went':<40}{'CPU s':>8}{'wall s':>9}"]

    def line(label: str, wall: float, cpu: float) -> None:
        lines.append(f"{label:<40}{cpu:>8.1f}{wall:>9.1f}")

    stages = [n for n in watch.sections if "/" not in n]
    for stage in stages:
        line(stage, *watch.sections[stage])
        parts = [(n, t) for n, t in watch.sections.items() if n.startswith(stage + "/")]
        for name, (wall, cpu) in parts:
            line("  " + name.split("/", 1)[1], wall, cpu)
        if parts:
            wall, cpu = watch.sections[stage]
            line("  the rest", wall - sum(t[0] for _, t in parts), cpu - sum(t[1] for _, t in parts))
    for name, (wall, cpu) in watch.sections.items():  # parts of a stage that was not timed as a whole
        if "/" in name and name.split("/", 1)[0] not in stages:
            line(name, wall, cpu)
    covered = sum(watch.sections[s][1] for s in stages)
    lines.append(f"{'outside the stages (start-up)':<40}{cpu_now - covered:>8.1f}")
    lines.append(f"{'process total':<40}{cpu_now:>8.1f}")
    lines.append(f"{'  of it: garbage collection':<40}{watch.collector_cpu:>8.1f}  ({watch.collections} runs)")
    return lines
