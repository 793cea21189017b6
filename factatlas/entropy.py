"""Entropy, defined once for the whole toolkit (stats.json, metrics.json and the dataset card).

``entropy_bits`` is Shannon entropy of a distribution given by non-negative weights; the stages differ
only in what they weigh: DLAMA's ``predicate_entropy`` counts each fact once at its most frequent valid
object, the card spreads each fact evenly over its gold objects, the metrics count predictions.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence


def entropy_bits(weights: Iterable[float]) -> float:
    """-sum p log2 p in bits, p = weight / total; zero weights are left out, no weight gives 0."""
    weights = [w for w in weights if w > 0]
    total = sum(weights)
    if not weights:
        return 0.0
    return -sum((w / total) * math.log2(w / total) for w in weights) + 0.0  # -0.0 -> 0.0


def natural_key(qid: str) -> tuple[str | int, ...]:
    """Sort key comparing the digit runs of an id as numbers: Q29 < Q142 < Q1000 (natsort's order, which
    DLAMA's published entropy uses to break ties; a plain string sort puts Q142 before Q29)."""
    return tuple(int(part) if i % 2 else part for i, part in enumerate(re.split(r"(\d+)", qid)))


def predicate_entropy(valid_objects_per_fact: Sequence[Sequence[str]]) -> float:
    """DLAMA entropy (bits) of one predicate within one culture.

    Each fact (given as its valid objects) is mapped to the object that is most frequent among all the
    facts; ties go to the first object in natural id order (``natural_key``), as in DLAMA's code, so
    the published values reproduce. Facts without objects are ignored; an empty input has entropy 0.
    """
    facts = [tuple(dict.fromkeys(objs)) for objs in valid_objects_per_fact if objs]
    if not facts:
        return 0.0
    freq = Counter(o for objs in facts for o in objs)
    chosen = Counter(min(objs, key=lambda o: (-freq[o], natural_key(o))) for objs in facts)
    return entropy_bits(chosen.values())
