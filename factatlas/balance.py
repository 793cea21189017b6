"""Balance between the cultures of a pair: facts per culture and per country, printed by curate and build.

A pair whose one side holds nearly every fact (7 against 763) makes every culture comparison of the
benchmark meaningless; that must be on screen when the data is made, not discovered in the report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # hints only: the command line imports this module for a default value
    from factatlas.records import Entity, Fact

DEFAULT_MAX_SHARE = 0.75


@dataclass(frozen=True, slots=True)
class Balance:
    facts: Mapping[str, int]  # culture -> facts
    countries: Mapping[str, Mapping[str, int]]  # culture -> country QID -> facts matched through it

    @property
    def total(self) -> int:
        return sum(self.facts.values())

    def share(self, culture: str) -> float:
        return self.facts.get(culture, 0) / self.total if self.total else 0.0

    def largest(self) -> tuple[str, float]:
        """The culture with the largest share of the facts (ties: the first by name) and that share."""
        if not self.facts:
            return "", 0.0
        culture = max(sorted(self.facts), key=lambda c: self.facts[c])
        return culture, self.share(culture)


def culture_balance(facts: Iterable[Fact], cultures: Iterable[str] = ()) -> Balance:
    """Facts per culture (every culture of ``cultures`` listed, even with none) and per country."""
    by_culture: Counter[str] = Counter({c: 0 for c in cultures})
    by_country: dict[str, Counter[str]] = {c: Counter() for c in by_culture}
    for fact in facts:
        by_culture[fact.culture] += 1
        by_country.setdefault(fact.culture, Counter()).update(fact.countries)
    return Balance(dict(by_culture), {c: dict(n) for c, n in by_country.items()})


def balance_lines(balance: Balance, entities: Mapping[str, Entity] | None = None, top: int = 8) -> list[str]:
    """``balance: arab 412 (45.2%) · west 500 (54.8%)`` and, per culture, its countries by facts."""
    if not balance.facts:
        return ["balance: no facts"]
    head = " · ".join(f"{c} {n:,} ({balance.share(c):.1%})" for c, n in sorted(balance.facts.items()))
    lines = [f"balance: {head}"]
    for culture in sorted(balance.countries):
        counts = sorted(balance.countries[culture].items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{_name(q, entities)} {n:,}" for q, n in counts[:top])
        more = f", ... {len(counts) - top} more" if len(counts) > top else ""
        lines.append(f"  {culture} by country: {shown or 'none'}{more}")
    return lines


def balance_warning(balance: Balance, max_share: float = DEFAULT_MAX_SHARE, option: str = "--max-culture-share"
                    ) -> str | None:
    """A warning when one culture holds more than ``max_share`` of the facts; None otherwise."""
    culture, share = balance.largest()
    if not culture or share <= max_share or len(balance.facts) < 2:
        return None
    others = ", ".join(f"{c} {balance.facts[c]:,}" for c in sorted(balance.facts) if c != culture)
    return (f"{culture} holds {share:.1%} of the facts ({balance.facts[culture]:,}; {others}), above {option} "
            f"{max_share:.0%}: comparisons between the cultures rest on few facts; add countries or subjects to "
            f"the smaller side, or raise {option} if this is intended")


def balance_report(facts: Iterable[Fact], cultures: Iterable[str], entities: Mapping[str, Entity] | None,
                   max_share: float = DEFAULT_MAX_SHARE) -> tuple[list[str], str | None]:
    """What curate and build print: the balance lines, and the warning above ``max_share`` (or None)."""
    balance = culture_balance(facts, cultures)
    return balance_lines(balance, entities), balance_warning(balance, max_share)


def _name(qid: str, entities: Mapping[str, Entity] | None) -> str:
    entity = entities.get(qid) if entities else None
    label = entity.labels.get("en") if entity is not None else None
    return f"{label} ({qid})" if label else qid
