"""Accuracy against popularity (PopQA, Mallen et al. 2023: accuracy collapses for the long tail).

Per model, culture and language (and "all" of each): P@1 per popularity bucket (``factatlas.popbuckets``:
quantile within the predicate, PopQA's log10 bins), and Spearman's rank correlation between a fact's
popularity and its P@1 there (the mean correctness of its prompts in the selection, as in every aggregate).
P@1 per bucket is ``factatlas.probe.aggregate.accuracy``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from factatlas.popbuckets import PopularityBucket, popularity_buckets
from factatlas.probe.aggregate import Accuracy, ScoreTable, accuracy
from factatlas.probe.scored import ScoredColumns
from factatlas.records import Fact, ScoredPrompt

ALL = "all"
KINDS = ("quantile", "log10")


@dataclass(frozen=True, slots=True)
class BucketCell:
    model: str
    culture: str  # a culture or "all"
    lang: str  # a language or "all"
    kind: str  # "quantile" | "log10"
    bucket: int
    acc: Accuracy


@dataclass(frozen=True, slots=True)
class Correlation:
    model: str
    culture: str
    lang: str
    n_facts: int
    rho: float | None  # Spearman's rank correlation of popularity and fact P@1; None: undefined (constant)
    p: float | None


def fact_values(scored: Sequence[ScoredPrompt]) -> dict[str, float]:
    """fact id -> the mean correctness of its prompts among ``scored`` (a fact's value in every aggregate)."""
    scored = ScoredColumns.of(scored)
    ids = list(dict.fromkeys(scored.values("fact_id")))  # ScoreTable codes facts in first-seen order
    facts, values = ScoreTable.of(scored, correct=scored.correct()).fact_means()
    return {ids[f]: float(v) for f, v in zip(facts.tolist(), values.tolist(), strict=True)}


def average_ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks from 1, ties sharing the mean of their ranks (``scipy.stats.rankdata``'s default)."""
    a = np.asarray(values, dtype=float)
    order = np.argsort(a, kind="mergesort")
    ordered = a[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # first position of each tie group
    ends = np.r_[starts[1:], len(a)]
    ranks = np.empty(len(a))
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def spearman(xs: Sequence[float], ys: Sequence[float]) -> tuple[float | None, float | None]:
    """Spearman's rho (ties: average ranks) and its two-sided p; (None, None) when either side is constant
    or there are fewer than 3 pairs. What ``scipy.stats.spearmanr`` computes (Pearson's r of the ranks, p
    from Student's t with n - 2 degrees of freedom; tested against it) with the t distribution from
    scipy.special: importing scipy.stats costs about a second of the quickstart's report."""
    from scipy.special import stdtr

    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None, None
    # the ranks as columns, as scipy lays them out: the same sums in the same order, so the same last digit
    rho = float(np.corrcoef(np.column_stack((average_ranks(xs), average_ranks(ys))), rowvar=False)[1, 0])
    if math.isnan(rho):
        return None, None
    dof = len(xs) - 2
    with np.errstate(divide="ignore"):  # rho = +-1: t is infinite and p is 0
        t = rho * np.sqrt(max(dof / ((rho + 1.0) * (1.0 - rho)), 0.0))
    return rho, float(2 * stdtr(dof, -abs(t)))


def _selections(scored: Sequence[ScoredPrompt]) -> Iterable[tuple[str, str, Sequence[ScoredPrompt]]]:
    scored = ScoredColumns.of(scored)
    cultures = sorted(c for (c,) in scored.group_rows("culture"))
    langs = sorted(lang for (lang,) in scored.group_rows("lang"))
    for culture in [*cultures, ALL]:
        for lang in [*langs, ALL]:
            sel = scored.where(scored.holds("culture", lambda c, culture=culture: culture in (ALL, c))
                               & scored.holds("lang", lambda x, lang=lang: lang in (ALL, x)))
            if sel:
                yield culture, lang, sel


def bucket_table(by_model: Mapping[str, Sequence[ScoredPrompt]], buckets: Mapping[str, PopularityBucket]
                 ) -> list[BucketCell]:
    """P@1 per model x culture x language x bucket (both kinds); facts without a bucket are left out."""
    out = []
    for model, scored in by_model.items():
        scored = ScoredColumns.of(scored)
        for culture, lang, sel in _selections(scored.where(scored.holds("fact_id", buckets.__contains__))):
            for kind in KINDS:
                groups = sel.split_by("fact_id", lambda f, kind=kind: getattr(buckets[f], kind) if f in buckets else None)
                for b in sorted(groups):
                    out.append(BucketCell(model, culture, lang, kind, b, accuracy(groups[b])))
    return out


def correlations(by_model: Mapping[str, Sequence[ScoredPrompt]], popularity: Mapping[str, float]
                 ) -> list[Correlation]:
    """Spearman's rho between popularity and fact P@1 per model x culture x language."""
    out = []
    for model, scored in by_model.items():
        scored = ScoredColumns.of(scored)
        for culture, lang, sel in _selections(scored.where(scored.holds("fact_id", popularity.__contains__))):
            values = fact_values(sel)
            ids = sorted(values)
            rho, p = spearman([popularity[f] for f in ids], [values[f] for f in ids])
            out.append(Correlation(model, culture, lang, len(ids), rho, p))
    return out


class _Popular(NamedTuple):
    """What the buckets read of a fact (``popularity_buckets``): its id, predicate and popularity."""

    id: str
    predicate: str
    popularity: float


def fact_buckets(facts: Iterable[Fact]) -> tuple[dict[str, PopularityBucket], dict[str, float]]:
    """The buckets of the benchmark's facts (as the build computed them) and their popularity. The facts are
    walked once and only the three fields the buckets read are kept: a ``FactTable`` makes its records a batch
    at a time, and every fact held as a record was the report's peak at a million prompts (+100 MB)."""
    facts = [_Popular(f.id, f.predicate, f.popularity) for f in facts]
    return popularity_buckets(facts), {f.id: f.popularity for f in facts}  # type: ignore[arg-type]
