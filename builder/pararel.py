"""mParaRel's language inclusion rule (Fierro & Søgaard 2022, dataset construction): a language enters the dataset only when
its templates cover at least 60 % of the reference language's relations and at least 20 % of its
paraphrases (cloze templates). Shares are relative to the reference language (English in mParaRel):

- relation share = #relations with at least one cloze template in the language that the reference also has
  / #relations with a cloze template in the reference;
- paraphrase share = #cloze templates of the language (for those relations) / #cloze templates of the
  reference.

The reference language itself is always kept. ``factatlas build --min-relation-share 0.6
--min-paraphrase-share 0.2`` applies it to the template library before building.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from factatlas.errors import ConfigError

MPARAREL_MIN_RELATIONS = 0.6
MPARAREL_MIN_PARAPHRASES = 0.2


@dataclass(frozen=True, slots=True)
class LanguageCoverage:
    lang: str
    relations: int
    relation_share: float
    paraphrases: int
    paraphrase_share: float
    kept: bool
    reason: str  # "" when kept; else which threshold failed


def cloze_counts(templates: Iterable) -> dict[str, dict[str, int]]:
    """lang -> predicate -> number of cloze templates (``templates.library.Template`` records)."""
    out: dict[str, dict[str, int]] = {}
    for t in templates:
        if t.kind == "cloze":
            per = out.setdefault(t.lang, {})
            per[t.predicate] = per.get(t.predicate, 0) + 1
    return out


def language_coverage(counts: Mapping[str, Mapping[str, int]], langs: Sequence[str], reference: str,
                      min_relations: float = MPARAREL_MIN_RELATIONS,
                      min_paraphrases: float = MPARAREL_MIN_PARAPHRASES) -> list[LanguageCoverage]:
    """The rule applied to each of ``langs`` (module docstring)."""
    ref = {p: n for p, n in counts.get(reference, {}).items() if n > 0}
    if not ref:
        raise ConfigError(f"coverage reference language '{reference}' has no cloze template; "
                          "give --coverage-reference a language with templates")
    total = sum(ref.values())
    out = []
    for lang in langs:
        mine = {p: n for p, n in counts.get(lang, {}).items() if n > 0 and p in ref}
        rel_share, para_share = len(mine) / len(ref), sum(mine.values()) / total
        reasons = []
        if lang != reference:
            if rel_share < min_relations:
                reasons.append(f"relations {rel_share:.0%} < {min_relations:.0%}")
            if para_share < min_paraphrases:
                reasons.append(f"paraphrases {para_share:.0%} < {min_paraphrases:.0%}")
        out.append(LanguageCoverage(lang, len(mine), rel_share, sum(mine.values()), para_share, not reasons,
                                    "; ".join(reasons)))
    return out
