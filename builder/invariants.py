"""The build's side of the multi-parallel invariant: the writer checks its content in memory before any
file is written. The rules themselves are the contract's (``factatlas.invariants``); the check of a
directory on disk and the gate probe and report pass are ``factatlas.validation``'s."""

from __future__ import annotations

from factatlas.builder.benchmark import BenchmarkContent, check_rows
from factatlas.invariants import (  # noqa: F401  (the build's and its tests' names for the contract's rules)
    CANDIDATE_MODES,
    PARALLEL_COLUMNS,
    Violation,
    check_benchmark_rows,
    format_violations,
)
from factatlas.validation import check_directory  # noqa: F401

__all__ = ["CANDIDATE_MODES", "PARALLEL_COLUMNS", "Violation", "check_benchmark_rows", "check_content",
           "check_directory", "check_rows", "format_violations"]


def check_content(content: BenchmarkContent) -> list[Violation]:
    return check_rows(content, content.prompts)
