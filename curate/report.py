"""A curation run's result and its plain-text count tables (stdout-friendly, stable for tests and docs)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from factatlas.records import Culture, Drop, Entity, Fact


@dataclass(frozen=True)
class CountryCount:
    culture: str
    country: str
    label: str
    facts_by_predicate: Mapping[str, int]


@dataclass
class CurationResult:
    facts: list[Fact]
    entities: dict[str, Entity]
    drops: list[Drop]
    counts: dict[str, dict[str, int]]  # culture -> predicate -> facts
    country_counts: dict[str, dict[str, dict[str, int]]]  # culture -> country -> predicate -> facts
    cultures: dict[str, Culture]
    predicates: tuple[str, ...]
    membership: dict[str, Any] = field(default_factory=dict)
    queries: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # countries that are unknown or not countries

    def empty_countries(self) -> dict[str, list[str]]:
        return {c: [q for q, preds in self.country_counts[c].items() if not sum(preds.values())]
                for c in self.counts}

    def table(self) -> str:
        return format_counts(self)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                              for i, (c, w) in enumerate(zip(r, widths, strict=True)))
    return "\n".join([fmt(header), "  ".join("-" * w for w in widths), *(fmt(r) for r in rows)])


def format_counts(result: CurationResult) -> str:
    cultures = list(result.counts)
    rows = [[p, *(str(result.counts[c][p]) for c in cultures)] for p in result.predicates]
    rows.append(["total", *(str(sum(result.counts[c].values())) for c in cultures)])
    parts = ["facts per predicate x culture", _table(["predicate", *cultures], rows)]
    for c in cultures:
        culture = result.cultures[c]
        labels = {q.qid: q.label for q in culture.countries}
        crow = []
        for qid, preds in result.country_counts[c].items():
            crow.append([f"{labels.get(qid, qid)} ({qid})", str(sum(preds.values())),
                         str(sum(1 for v in preds.values() if v))])
        crow.sort(key=lambda r: (-int(r[1]), r[0]))
        parts += ["", f"{c}: facts per country (a fact counts for every country it matched)",
                  _table(["country", "facts", "predicates"], crow)]
        empty = result.empty_countries()[c]
        if empty:
            parts.append(f"{c}: countries that produced no fact: " +
                         ", ".join(f"{labels.get(q, q)} ({q})" for q in empty))
    m = result.membership
    for c, pinned in m.items():
        parts.append("")
        parts.append(f"{c}: membership rule {pinned['rule']} resolved to {len(pinned['resolved'])} countries"
                     f" (checked list: {len(pinned['checked_list'])})")
        if pinned["only_in_rule"]:
            parts.append(f"  only in the rule: {', '.join(pinned['only_in_rule'])}")
        if pinned["only_in_list"]:
            parts.append(f"  only in the checked list: {', '.join(pinned['only_in_list'])}")
        if "fallback" in pinned:
            parts.append(f"  {pinned['fallback']}")
    drops = Counter(f"{d.step}/{d.reason.split(':')[0]}" for d in result.drops)
    if drops:
        parts += ["", "drops by step/reason (details in dropped.parquet)",
                  _table(["step/reason", "count"], [[k, str(v)] for k, v in sorted(drops.items())])]
    return "\n".join(parts)
