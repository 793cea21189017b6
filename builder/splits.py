"""Deterministic splits by hashing fact ids, stratified per (culture, predicate).

A fact's split depends only on its id, the ids of the other facts of its (culture, predicate) group and
the fractions — never on languages or templates, so adding a language keeps every split. Within a
group, facts are ordered by sha256(id) and cut by exact quotas (largest remainder), so a 10% dev split
holds 10% of every culture x predicate cell, not 10% on average.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from factatlas.errors import ConfigError

DEFAULT_FRACTIONS: Mapping[str, float] = {"dev": 0.1, "test": 0.9}


def validate_fractions(fractions: Mapping[str, float]) -> dict[str, float]:
    if not fractions:
        raise ConfigError("splits: give at least one split, e.g. {'test': 1.0}")
    bad = {k: v for k, v in fractions.items() if not (0 <= v <= 1)}
    if bad:
        raise ConfigError(f"splits: fractions must lie in [0, 1], got {bad}")
    total = sum(fractions.values())
    if not math.isclose(total, 1.0, abs_tol=1e-9):
        raise ConfigError(f"splits: fractions must sum to 1, got {total} for {dict(fractions)}")
    return dict(fractions)


def id_hash(item_id: str) -> str:
    return hashlib.sha256(item_id.encode("utf-8")).hexdigest()


def quotas(n: int, fractions: Mapping[str, float]) -> dict[str, int]:
    """Largest-remainder apportionment of n items; ties go to the split listed first."""
    names = list(fractions)
    exact = {k: n * fractions[k] for k in names}
    base = {k: math.floor(exact[k]) for k in names}
    left = n - sum(base.values())
    order = sorted(names, key=lambda k: (-(exact[k] - base[k]), names.index(k)))
    for k in order[:left]:
        base[k] += 1
    return base


def assign_splits(items: Iterable[tuple[str, str, str]], fractions: Mapping[str, float] = DEFAULT_FRACTIONS
                  ) -> dict[str, str]:
    """``(fact_id, culture, predicate)`` triples -> fact_id -> split name."""
    fractions = validate_fractions(fractions)
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for fid, culture, predicate in items:
        groups[(culture, predicate)].append(fid)
    out: dict[str, str] = {}
    for _, ids in sorted(groups.items()):
        ordered = sorted(set(ids), key=lambda i: (id_hash(i), i))
        q = quotas(len(ordered), fractions)
        pos = 0
        for name in fractions:
            for fid in ordered[pos:pos + q[name]]:
                out[fid] = name
            pos += q[name]
    return out


def split_counts(assignment: Mapping[str, str], groups: Mapping[str, tuple[str, str]],
                 names: Sequence[str]) -> dict[str, dict[str, dict[str, int]]]:
    """culture -> predicate -> split -> number of facts (``groups``: fact_id -> (culture, predicate))."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for fid, split in sorted(assignment.items()):
        culture, predicate = groups[fid]
        cell = out.setdefault(culture, {}).setdefault(predicate, {n: 0 for n in names})
        cell[split] += 1
    return out


def parse_fractions(text: str) -> dict[str, float]:
    """``"dev:0.1,test:0.9"`` -> {"dev": 0.1, "test": 0.9} (CLI helper)."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition(":")
        if not sep:
            raise ConfigError(f"--splits: '{part}' should read NAME:FRACTION, e.g. dev:0.1,test:0.9")
        try:
            out[name.strip()] = float(value)
        except ValueError as e:
            raise ConfigError(f"--splits: '{value}' is not a number in '{part}'") from e
    return validate_fractions(out)
