"""The build's side of the multi-parallel invariant: the writer checks its content in memory before any
file is written. The rules themselves are the contract's (``factatlas.invariants``); the check of a
directory on disk and the gate probe and report pass are ``factatlas.validation``'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from factatlas.invariants import (  # noqa: F401  (the build's and its tests' names for the contract's rules)
    CANDIDATE_MODES,
    PARALLEL_COLUMNS,
    Violation,
    check_benchmark_rows,
    format_violations,
)
from factatlas.records import Prompt
from factatlas.validation import check_directory  # noqa: F401

if TYPE_CHECKING:
    from factatlas.builder.benchmark import BenchmarkContent


def check_content(content: BenchmarkContent) -> list[Violation]:
    return check_rows(content, content.prompts)


def check_rows(content: BenchmarkContent, prompts: Sequence[Mapping[str, Any] | Prompt], *,
               labels: bool = False) -> list[Violation]:
    """The invariant on ``content`` with ``prompts`` (records, or the rows the writer writes); ``labels``:
    check every subject label against the entities' labels too, as ``check_directory`` does."""
    return check_benchmark_rows(content.meta, prompts, content.facts, {e.qid for e in content.entities},
                                content.candidates, entity_labels(content) if labels else None)


def entity_labels(content: BenchmarkContent) -> dict[tuple[str, str], str]:
    return {(e.qid, lang): label for e in content.entities for lang, label in e.labels.items() if label}
