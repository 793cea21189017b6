"""Knowledge locality and cross-lingual transfer (ECLeKTic, Goldman et al. 2025), over scored prompts.

A fact's locality is the set of Wikipedia editions with an article on its subject (``Fact.article_langs``)
and the culture's editions among them (``Fact.home_langs``), curated from sitelinks.

- the **local view**: prompts whose subject has an article in one of the culture's editions but none in
  the probe language's edition (knowledge the model can only have picked up elsewhere);
- the **transfer score** of a language pair (source, target), on the facts with an article in the source's
  edition and none in the target's: of the facts the model *knows* in the source (every prompt of the
  fact in the source language right), the share it gets right in the target (a fact's value there is
  the mean correctness of its prompts, as in every aggregate). ECLeKTic's transfer is this share with
  one prompt per fact and language. The value and its percentile bootstrap interval are the micro P@1
  of ``factatlas.probe.aggregate`` over those facts' target prompts (facts resampled within predicates).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from factatlas.probe.aggregate import Accuracy, ScoreTable, accuracy, group, group_index
from factatlas.probe.scored import ScoredColumns
from factatlas.records import Fact, ScoredPrompt, wikipedia_site


@dataclass(frozen=True, slots=True)
class Locality:
    article_sites: frozenset[str]  # editions with an article on the subject
    home_sites: frozenset[str]  # the culture's editions among them

    def has_article(self, lang: str) -> bool:
        return wikipedia_site(lang) in self.article_sites

    def local_to(self, lang: str) -> bool:
        """An article in the culture's edition(s), none in ``lang``'s: the fact is local knowledge there."""
        return bool(self.home_sites) and not self.has_article(lang)


def localities(facts: Iterable[Fact]) -> dict[str, Locality]:
    """fact_id -> Locality, for the facts whose locality was curated (others: absent)."""
    shared: dict[Locality, Locality] = {}  # one object per distinct locality: facts repeat a few
    return {f.id: shared.setdefault(loc, loc) for f in facts if f.article_langs
            for loc in (Locality(frozenset(f.article_langs), frozenset(f.home_langs)),)}


def local_view(scored: Sequence[ScoredPrompt], where: Mapping[str, Locality]) -> Sequence[ScoredPrompt]:
    """The prompts whose fact is local knowledge away from the prompt's language (``Locality.local_to``)."""
    cols = ScoredColumns.of(scored)
    return cols.where(cols.holds_each(("fact_id", "lang"), lambda fact, lang: (
        (loc := where.get(fact)) is not None and loc.local_to(lang))))


@dataclass(frozen=True, slots=True)
class LocalCell:
    model: str
    lang: str
    local: Accuracy | None  # P@1 on the local view in this language
    with_article: Accuracy | None  # P@1 on the prompts whose subject has an article in this language
    no_locality: int  # prompts whose fact has no curated locality (in neither row)


def local_table(by_model: Mapping[str, Sequence[ScoredPrompt]], where: Mapping[str, Locality]) -> list[LocalCell]:
    """Per model and language: P@1 of the local view beside P@1 where the language has the article."""
    out = []
    for model, scored in by_model.items():
        for (lang,), rows in sorted(group(scored, "lang").items()):
            known = rows.where(rows.holds("fact_id", where.__contains__))
            out.append(LocalCell(model, lang, accuracy(local_view(known, where)),
                                 accuracy(known.where(known.holds("fact_id", lambda f, lang=lang:
                                                                  where[f].has_article(lang)))),
                                 len(rows) - len(known)))
    return out


@dataclass(frozen=True, slots=True)
class Transfer:
    model: str
    source: str  # a language whose edition has the article
    target: str  # a language whose edition has none
    n_facts: int  # facts with the article in source's edition, none in target's, probed in both languages
    n_known: int  # of those, facts every source prompt of which is right
    transfer: float | None  # share of the known facts right in target (micro over facts); None: none known
    ci_low: float | None
    ci_high: float | None


def transfer_scores(model: str, scored: Sequence[ScoredPrompt], where: Mapping[str, Locality], *,
                    n_boot: int = 1000, confidence: float = 0.95, seed: int = 0) -> list[Transfer]:
    """The transfer score of every ordered pair of the model's languages (module docstring)."""
    scored = ScoredColumns.of(scored)
    scored = scored.where(scored.holds("fact_id", where.__contains__))
    correct = scored.correct()
    by_fact_lang = group_index(scored, "fact_id", "lang")  # positions, no record made
    langs = sorted({lang for _, lang in by_fact_lang})
    facts = sorted({f for f, _ in by_fact_lang})
    out = []
    for source in langs:
        for target in langs:
            if source == target:
                continue
            eligible = [f for f in facts if (f, source) in by_fact_lang and (f, target) in by_fact_lang
                        and where[f].has_article(source) and not where[f].has_article(target)]
            known = [f for f in eligible if correct[by_fact_lang[(f, source)]].all()]
            if not known:
                out.append(Transfer(model, source, target, len(eligible), 0, None, None, None))
                continue
            rows = scored.take(np.concatenate([by_fact_lang[(f, target)] for f in known]))
            summary = ScoreTable.of(rows, correct=rows.correct()).summarize(
                bootstrap=n_boot, confidence=confidence, seed=seed, averages=("micro",))
            lo, hi = summary.get("ci", {}).get("p@1_micro", (None, None))  # none with --bootstrap 0
            out.append(Transfer(model, source, target, len(eligible), len(known), summary["p@1_micro"], lo, hi))
    return out


def transfer_matrix(transfers: Sequence[Transfer]) -> tuple[list[str], list[list[float | None]]]:
    """Languages and the (source row, target column) matrix of transfer scores; None: no value."""
    langs = sorted({t.source for t in transfers} | {t.target for t in transfers})
    cell = {(t.source, t.target): t.transfer for t in transfers}
    return langs, [[cell.get((s, t)) for t in langs] for s in langs]
