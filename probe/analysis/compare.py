"""Across models: P@1 (micro and macro) per model x culture x language, the Western vs non-Western gap
with a bootstrap interval, and McNemar's test between models on the same prompts.

Aggregation is the one of ``factatlas.probe.evaluate``: a fact's value is the mean correctness over its
prompts in the selection (templates, languages); **micro** = mean over facts; **macro** = mean over
predicates of the mean over their facts (DLAMA reports macro, BMLAMA micro).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from factatlas.probe import metrics as M
from factatlas.probe.aggregate import Accuracy, ScoreTable, accuracy
from factatlas.probe.scored import ScoredColumns
from factatlas.records import ScoredPrompt

ALL = "all"
McNemarMethod = Literal["exact", "corrected"]
MCNEMAR_METHODS: tuple[str, ...] = ("exact", "corrected")


# ---- P@1 micro and macro ------------------------------------------------------------------------

# Accuracy and accuracy() are the aggregate module's: one definition of micro and macro P@1.


@dataclass(frozen=True, slots=True)
class AccuracyCell:
    model: str
    culture: str  # a culture or "all"
    lang: str  # a language or "all"
    acc: Accuracy


def accuracy_table(by_model: Mapping[str, Sequence[ScoredPrompt]]) -> list[AccuracyCell]:
    """P@1 per model x culture x language, with "all" rows for each margin; models in the given order."""
    out = []
    for model, results in by_model.items():
        results = ScoredColumns.of(results)
        cultures = sorted(c for (c,) in results.group_rows("culture"))
        langs = sorted(lang for (lang,) in results.group_rows("lang"))
        for culture in [*cultures, ALL]:
            for lang in [*langs, ALL]:
                sel = results.where(_is(results, "culture", culture) & _is(results, "lang", lang))
                acc = accuracy(sel)
                if acc is not None:
                    out.append(AccuracyCell(model, culture, lang, acc))
    return out


# ---- the Western vs non-Western gap -------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Gap:
    model: str
    western: float  # macro P@1 on the Western culture's facts
    non_western: float  # macro P@1 on every other culture's facts, pooled per predicate
    gap: float  # western - non_western
    ci_low: float | None  # None: no interval (--bootstrap 0)
    ci_high: float | None
    n_western_facts: int
    n_non_western_facts: int
    n_boot: int
    confidence: float


def culture_gap(model: str, results: Sequence[ScoredPrompt], western: str, *, n_boot: int = 1000,
                confidence: float = 0.95, seed: int = 0) -> Gap | None:
    """Macro P@1(Western) - macro P@1(non-Western), with a percentile bootstrap interval.

    Facts are resampled with replacement within each (side, predicate) stratum, so every predicate stays
    in every resample and the macro means stay defined; the seed makes the interval reproducible.
    None when one side has no facts. ``n_boot`` 0: no interval (``ci_low``/``ci_high`` None).
    """
    if n_boot < 0 or not 0 < confidence < 1:
        raise ValueError(f"need n_boot >= 0 and 0 < confidence < 1, got {n_boot}, {confidence}")
    strata: dict[tuple[bool, str], list[float]] = {}
    results = ScoredColumns.of(results)
    west = _is(results, "culture", western)
    sides = {True: results.where(west), False: results.where(~west)}
    for is_west, side in sides.items():
        for pred, values in ScoreTable.of(side.sorted_by("fact_id")).fact_values().items():
            strata[(is_west, pred)] = values
    keys = sorted(strata)
    west_keys = [k for k in keys if k[0]]
    non_keys = [k for k in keys if not k[0]]
    if not west_keys or not non_keys:
        return None

    west_rows = np.array([k[0] for k in keys])  # keys sorted, so the draws do not depend on dict order

    def gap(sums: np.ndarray, sizes: np.ndarray) -> np.ndarray:  # macro(Western) - macro(the others)
        return (M.macro_statistic(sums[west_rows], sizes[west_rows])
                - M.macro_statistic(sums[~west_rows], sizes[~west_rows]))

    lo, hi = M.stratified_bootstrap([strata[k] for k in keys], gap, n_boot, confidence, seed) if n_boot else (None, None)
    w, n = accuracy(sides[True]).macro, accuracy(sides[False]).macro
    return Gap(model, w, n, w - n, lo, hi, sum(len(strata[k]) for k in west_keys),
               sum(len(strata[k]) for k in non_keys), n_boot, confidence)


# ---- McNemar between two models on the same prompts ---------------------------------------------

@dataclass(frozen=True, slots=True)
class McNemar:
    n: int  # paired prompts
    both: int
    a_only: int  # A right, B wrong
    b_only: int
    neither: int
    statistic: float | None  # chi-square with continuity correction; None for the exact test
    p: float
    method: str


def mcnemar(correct_a: Sequence[bool], correct_b: Sequence[bool], method: McNemarMethod = "exact") -> McNemar:
    """McNemar's test on paired correctness.

    ``exact``: two-sided binomial test of a_only against Binomial(a_only + b_only, 1/2) (scipy.stats.binomtest).
    ``corrected``: chi2 = (|a_only - b_only| - 1)^2 / (a_only + b_only), 1 degree of freedom (Edwards'
    continuity correction). With no discordant pair p = 1.
    """
    from scipy import stats

    if len(correct_a) != len(correct_b):
        raise ValueError(f"McNemar needs paired outcomes: {len(correct_a)} vs {len(correct_b)}")
    if method not in MCNEMAR_METHODS:
        raise ValueError(f"unknown McNemar method {method!r}; expected one of {', '.join(MCNEMAR_METHODS)}")
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    both, a_only, b_only = int((a & b).sum()), int((a & ~b).sum()), int((~a & b).sum())
    neither = len(a) - both - a_only - b_only
    discordant = a_only + b_only
    if discordant == 0:
        return McNemar(len(a), both, a_only, b_only, neither, None if method == "exact" else 0.0, 1.0, method)
    if method == "exact":
        p = float(stats.binomtest(a_only, discordant, 0.5).pvalue)
        return McNemar(len(a), both, a_only, b_only, neither, None, min(p, 1.0), method)
    chi2 = (abs(a_only - b_only) - 1) ** 2 / discordant
    return McNemar(len(a), both, a_only, b_only, neither, float(chi2), float(stats.chi2.sf(chi2, 1)), method)


@dataclass(frozen=True, slots=True)
class PairedTest:
    model_a: str
    model_b: str
    lang: str  # a language or "all"
    test: McNemar
    unpaired: int  # prompts ranked by only one of the two models (left out)


def paired_tests(by_model: Mapping[str, Sequence[ScoredPrompt]], method: McNemarMethod = "exact") -> list[PairedTest]:
    """McNemar for every pair of models, over all paired prompts and per language."""
    models = list(by_model)
    out = []
    for i, ma in enumerate(models):
        for mb in models[i + 1:]:
            a, b = _by_prompt(by_model[ma]), _by_prompt(by_model[mb])
            shared = sorted(a.keys() & b.keys())
            unpaired = len(a.keys() ^ b.keys())
            langs = sorted({a[p][0] for p in shared})
            for lang in [ALL, *langs]:
                ids = [p for p in shared if lang in (ALL, a[p][0])]
                if ids:
                    out.append(PairedTest(ma, mb, lang, mcnemar([a[p][1] for p in ids],
                                                                [b[p][1] for p in ids], method), unpaired))
    return out


def _by_prompt(results: Sequence[ScoredPrompt]) -> dict[str, tuple[str, bool]]:
    """prompt_id -> (language, right at rank 1), read from the columns (the last of a repeated id)."""
    cols = ScoredColumns.of(results)
    return dict(zip(cols.prompt_ids(), zip(cols.values("lang"), cols.correct().tolist(), strict=True), strict=True))


def _is(results: ScoredColumns, name: str, value: str) -> np.ndarray:
    """Per prompt: whether field ``name`` is ``value`` (every prompt for the margin ``ALL``)."""
    if value == ALL:
        return np.ones(len(results), dtype=bool)
    table = results.table(name)
    return results.codes(name) == table.index(value) if value in table else np.zeros(len(results), dtype=bool)


def fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"
