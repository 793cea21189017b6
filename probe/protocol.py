"""The narrow scorer protocol, the scoring-rule registry and the tie policy.

A scorer turns cloze queries (text with the answer marker, candidate fillers) into one score per
candidate; a generator turns question prompts into text. Everything model-specific hides behind these
two methods, so the runner, the tests and the speed benchmark drive every family the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from factatlas.probe.rule import RULES, Rule, default_rules, rule_for_family, rule_named
from factatlas.records import ANSWER_MARKER


@dataclass(frozen=True, slots=True)
class ClozeQuery:
    """One prompt to score: ``text`` holds ANSWER_MARKER once; ``forms[i]`` fills it for candidate i."""

    text: str
    forms: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.text.count(ANSWER_MARKER) != 1:
            raise ValueError(f"cloze text must hold {ANSWER_MARKER} exactly once: {self.text!r}")

    @property
    def left(self) -> str:
        return self.text[: self.text.index(ANSWER_MARKER)]

    @property
    def right(self) -> str:
        return self.text[self.text.index(ANSWER_MARKER) + len(ANSWER_MARKER):]


class CandidateScorer(Protocol):
    """Scores closed candidate sets. Higher is better; one tuple of floats per query, parallel to forms."""

    scoring: str

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]: ...


class TextGenerator(Protocol):
    """Open-ended answers: one decoded string per prompt (greedy, deterministic)."""

    scoring: str

    def generate(self, prompts: Sequence[str]) -> list[str]: ...


# The scoring rules are registry entries (``factatlas.probe.rule``); these names stay for their readers.
ScoringRule = Rule
SCORING_RULES: Mapping[str, Rule] = RULES  # a live view: a rule registered later is in it


class _DefaultScoring(Mapping[str, str]):
    """family -> its default rule, read from the registry each time."""

    def __getitem__(self, family: str) -> str:
        return default_rules()[family]

    def __iter__(self):
        return iter(default_rules())

    def __len__(self) -> int:
        return len(default_rules())


DEFAULT_SCORING: Mapping[str, str] = _DefaultScoring()


def scoring_rule(name: str) -> Rule:
    return rule_named(name)


def check_scoring_for_family(name: str, family: str) -> Rule:
    return rule_for_family(name, family)


def rank_candidates(qids: Sequence[str], scores: Sequence[float]) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Tie policy: score descending; equal scores keep candidate order (stable sort by position)."""
    order = candidate_order(qids, scores)
    return tuple(qids[i] for i in order), tuple(float(scores[i]) for i in order)


def candidate_order(qids: Sequence[str], scores: Sequence[float]) -> list[int]:
    """The positions of ``rank_candidates``'s ranking: score descending, ties in candidate order."""
    if len(qids) != len(scores):
        raise ValueError(f"{len(qids)} candidates but {len(scores)} scores")
    return sorted(range(len(qids)), key=lambda i: -scores[i])  # sorted() is stable
