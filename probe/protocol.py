"""The narrow scorer protocol, the scoring-rule registry and the tie policy.

A scorer turns cloze queries (text with the answer marker, candidate fillers) into one score per
candidate; a generator turns question prompts into text. Everything model-specific hides behind these
two methods, so the runner, the tests and the speed benchmark drive every family the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from factatlas.errors import ConfigError, unknown
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


@dataclass(frozen=True, slots=True)
class ScoringRule:
    name: str
    family: str  # "mlm" | "causal" | "seq2seq" | "any": the model family the rule needs
    kind: str  # "rank" (closed candidate set) | "generate" (open answers, matched afterwards)
    summary: str


SCORING_RULES: dict[str, ScoringRule] = {
    r.name: r
    for r in (
        ScoringRule("mlm-independent", "mlm", "rank",
                    "mLAMA: one pass per needed mask count; mean log p of each candidate token at its mask"),
        ScoringRule("mlm-pll", "mlm", "rank",
                    "BMLAMA: masks filled left to right with the candidate's own prefix; mean log p"),
        ScoringRule("mlm-independent-meanprob", "mlm", "rank",
                    "mParaRel's variant of mlm-independent: mean p (not log p) of the candidate's tokens"),
        ScoringRule("mlm-pll-meanprob", "mlm", "rank",
                    "mlm-pll with the mean p (not log p) of the candidate's tokens"),
        ScoringRule("causal-mean", "causal", "rank", "mean log p(candidate tokens | prompt prefix)"),
        ScoringRule("causal-sum", "causal", "rank", "sum of log p(candidate tokens | prompt prefix)"),
        ScoringRule("causal-sentence-legacy", "causal", "rank",
                    "BMLAMA legacy: minus the mean NLL of the whole filled sentence (tokenizer's own specials)"),
        ScoringRule("seq2seq", "seq2seq", "rank",
                    "mT5 sentinel: mean log p of '<extra_id_0> candidate <extra_id_1>' by teacher forcing"),
        ScoringRule("generative", "any", "generate",
                    "greedy answer; correct if it equals a normalised alias of a valid object"),
        ScoringRule("generative-lenient", "any", "generate",
                    "greedy answer; correct if a normalised alias occurs in it (substring)"),
        ScoringRule("chat", "any", "generate",
                    "instruction-tuned QA through the model's chat template (system prompt, k dev-split "
                    "examples); strict alias match as 'generative'"),
        ScoringRule("chat-lenient", "any", "generate",
                    "chat template QA; correct if a normalised alias occurs in the answer (substring)"),
        ScoringRule("xfactr", "mlm", "generate",
                    "X-FACTR multi-token decoding without candidates, matched against golds and aliases"),
    )
}

DEFAULT_SCORING = {"mlm": "mlm-independent", "causal": "causal-mean", "seq2seq": "seq2seq"}


def scoring_rule(name: str) -> ScoringRule:
    if name not in SCORING_RULES:
        raise ConfigError(unknown("scoring rule", name, SCORING_RULES))
    return SCORING_RULES[name]


def check_scoring_for_family(name: str, family: str) -> ScoringRule:
    rule = scoring_rule(name)
    if rule.family not in ("any", family):
        fits = sorted(r.name for r in SCORING_RULES.values() if r.family in ("any", family))
        raise ConfigError(f"scoring rule '{name}' needs a {rule.family} model, but the model is {family}; "
                          f"use one of: {', '.join(fits)}")
    return rule


def rank_candidates(qids: Sequence[str], scores: Sequence[float]) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """Tie policy: score descending; equal scores keep candidate order (stable sort by position)."""
    if len(qids) != len(scores):
        raise ValueError(f"{len(qids)} candidates but {len(scores)} scores")
    order = sorted(range(len(qids)), key=lambda i: -scores[i])  # sorted() is stable
    return tuple(qids[i] for i in order), tuple(float(scores[i]) for i in order)
