"""The build's side of the multi-parallel invariant: the writer checks its content in memory before any
file is written. The rules themselves are the contract's (``factatlas.invariants``); the gate probe and
report pass is ``factatlas.benchmark.require_valid``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

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
    from factatlas.tables import prompt_rows

    return check_rows(content, prompt_rows(content.prompts))


def check_rows(content: BenchmarkContent, prompt_rows: Sequence[Mapping[str, Any]]) -> list[Violation]:
    """The invariant on ``content`` with its prompts as the rows the writer writes (``tables.prompt_rows``)."""
    return check_benchmark_rows(content.meta, prompt_rows, content.facts,
                                {e.qid for e in content.entities}, content.candidates)
