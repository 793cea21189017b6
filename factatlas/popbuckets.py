"""Popularity buckets of facts: quantiles within a predicate, and PopQA's log bins (Mallen et al. 2023).

A fact's popularity is what curation ranked its subject by (article length, edits, sitelinks or monthly
page views; DLAMA-v1 imports: article length). Values differ in scale between signals and predicates, so
- ``quantile``: 1 (least popular) .. ``QUANTILES`` within the fact's predicate (all cultures together):
  1 + floor(QUANTILES x the share of the predicate's facts strictly less popular); ties share a bucket;
- ``log10``: floor(log10(popularity)) for popularity >= 1, -1 below (PopQA bins page views by powers of 10).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from factatlas.records import Fact

QUANTILES = 4


@dataclass(frozen=True, slots=True)
class PopularityBucket:
    quantile: int  # 1..QUANTILES within the predicate
    log10: int  # floor(log10(popularity)); -1 below 1


def log_bin(popularity: float) -> int:
    return math.floor(math.log10(popularity)) if popularity >= 1 else -1


def log_bin_label(b: int) -> str:
    return "<1" if b < 0 else f"10^{b}–10^{b + 1}"


def quantile_of(value: float, ordered: list[float], q: int = QUANTILES) -> int:
    """1 + floor(q x share of ``ordered`` (sorted) strictly below ``value``)."""
    return 1 + (q * bisect_left(ordered, value)) // len(ordered)


def popularity_buckets(facts: Iterable[Fact], q: int = QUANTILES) -> dict[str, PopularityBucket]:
    """fact id -> its buckets."""
    facts = list(facts)
    by_predicate: dict[str, list[float]] = defaultdict(list)
    for f in facts:
        by_predicate[f.predicate].append(f.popularity)
    ordered: Mapping[str, list[float]] = {p: sorted(v) for p, v in by_predicate.items()}
    return {f.id: PopularityBucket(quantile_of(f.popularity, ordered[f.predicate], q), log_bin(f.popularity))
            for f in facts}
