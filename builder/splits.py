"""Splits that never move: a fact's split is a function of its own id and a salt, nothing else.

``sha256(salt \\x1f fact_id)`` is read as a number u in [0, 1) (its first 64 bits) and the fact goes to the
first split whose cumulative fraction exceeds u. Adding, removing or relabelling other facts, adding a
language or a template never moves a fact; only a different salt (recorded in benchmark.json) does. The
price is that fractions are met in expectation, not exactly per cell: a cell of 10 facts with ``dev:0.1``
may hold 0, 1 or 3 dev facts. The realised fractions per culture x predicate are therefore reported
(``stats.json: split_fractions`` and the table printed by ``build``) instead of being forced.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence

from factatlas.errors import ConfigError

DEFAULT_FRACTIONS: Mapping[str, float] = {"dev": 0.1, "test": 0.9}
# Changing the default would move facts between splits in every rebuilt benchmark; never do it silently.
DEFAULT_SALT = "factatlas-splits-v1"
METHOD = "sha256(salt \\x1f fact_id) as u in [0, 1); first split whose cumulative fraction exceeds u"
_SCALE = 1 << 64


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


def validate_salt(salt: str) -> str:
    if not isinstance(salt, str) or not salt.strip():
        raise ConfigError(f"splits: the salt must be a non-empty string, got {salt!r}; the default is "
                          f"'{DEFAULT_SALT}'")
    return salt


def split_point(fact_id: str, salt: str) -> int:
    """The fact's position in [0, 2**64): the first 64 bits of sha256(salt, fact id)."""
    digest = hashlib.sha256(f"{salt}\x1f{fact_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def thresholds(fractions: Mapping[str, float]) -> tuple[tuple[str, int], ...]:
    """(split, exclusive upper bound in [0, 2**64]) in the order given; the last split with a positive
    fraction ends at 2**64, so rounding never leaves a point without a split."""
    fractions = validate_fractions(fractions)
    out: list[tuple[str, int]] = []
    cumulative = 0.0
    for name, fraction in fractions.items():
        cumulative += fraction
        out.append((name, min(_SCALE, math.floor(cumulative * _SCALE))))
    last_positive = max(i for i, (name, _) in enumerate(out) if fractions[name] > 0)
    out[last_positive] = (out[last_positive][0], _SCALE)
    return tuple(out)


def split_of(fact_id: str, salt: str, bounds: Sequence[tuple[str, int]]) -> str:
    point = split_point(fact_id, salt)
    for name, upper in bounds:
        if point < upper:
            return name
    raise AssertionError(f"{fact_id}: point {point} beyond the last bound {bounds[-1]}")  # thresholds() prevents it


def assign_splits(fact_ids: Iterable[str], fractions: Mapping[str, float] = DEFAULT_FRACTIONS,
                  salt: str = DEFAULT_SALT) -> dict[str, str]:
    """fact_id -> split name; each fact's split depends on its own id and ``salt`` only."""
    bounds = thresholds(fractions)
    salt = validate_salt(salt)
    return {fid: split_of(fid, salt, bounds) for fid in sorted(set(fact_ids))}


def split_counts(assignment: Mapping[str, str], groups: Mapping[str, tuple[str, str]],
                 names: Sequence[str]) -> dict[str, dict[str, dict[str, int]]]:
    """culture -> predicate -> split -> number of facts (``groups``: fact_id -> (culture, predicate))."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for fid, split in sorted(assignment.items()):
        culture, predicate = groups[fid]
        cell = out.setdefault(culture, {}).setdefault(predicate, {n: 0 for n in names})
        cell[split] += 1
    return out


def _shares(counts: Mapping[str, int]) -> dict[str, float]:
    total = sum(counts.values())
    return {name: round(n / total, 6) if total else 0.0 for name, n in counts.items()}


def realised_fractions(counts: Mapping[str, Mapping[str, Mapping[str, int]]], fractions: Mapping[str, float]
                       ) -> dict[str, object]:
    """What the hash split gave, next to what was asked: overall and per culture x predicate cell.

    ``counts`` is ``split_counts``' output. ``max_deviation`` is the largest |realised - target| over cells
    and splits, so a reader sees at once how far small cells stray from the target."""
    names = list(fractions)
    overall = {name: sum(cell[name] for preds in counts.values() for cell in preds.values()) for name in names}
    cells = {culture: {pred: _shares(cell) for pred, cell in sorted(preds.items())}
             for culture, preds in sorted(counts.items())}
    deviation = max((abs(share - fractions[name]) for preds in cells.values() for cell in preds.values()
                     for name, share in cell.items()), default=0.0)
    return {"target": dict(fractions), "overall": _shares(overall), "cells": cells,
            "max_deviation": round(deviation, 6)}


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
