"""The build's side of the multi-parallel invariant: the writer checks its content in memory before any
file is written. The rules themselves are the contract's (``factatlas.invariants``); the gate probe and
report pass is ``factatlas.benchmark.require_valid``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from factatlas.invariants import (  # noqa: F401  (the build's and its tests' names for the contract's rules)
    CANDIDATE_MODES,
    PARALLEL_COLUMNS,
    Violation,
    check_benchmark_rows,
    check_directory,
    format_violations,
)

if TYPE_CHECKING:
    from factatlas.builder.benchmark import BenchmarkContent


def check_content(content: BenchmarkContent) -> list[Violation]:
    return check_benchmark_rows(content.meta, content.prompts, content.facts,
                                {e.qid for e in content.entities}, content.candidates)
