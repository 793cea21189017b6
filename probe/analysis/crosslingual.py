"""BMLAMA's cross-lingual consistency (Qi, Fernández & Bisazza 2023): RankC for every language pair, and
RankC against language family, script and subword-vocabulary overlap (Pearson r and p), next to COverlap
(X-FACTR, Jiang et al. 2020).

A query is one (fact, template) ranked in both languages of a pair over the same candidate list (the
benchmark's candidate order is translation-aligned, so candidate j is the same QID in both).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from factatlas.probe import metrics as M
from factatlas.probe.scored import ScoredColumns, sort_ranks
from factatlas.records import ScoredPrompt


@dataclass(frozen=True, slots=True)
class LanguageTraits:
    code: str
    family: str
    genus: str  # the branch within the family (Romance, Slavic, ...)
    script: str  # ISO 15924


def language_traits(langs: Iterable[str]) -> tuple[dict[str, LanguageTraits], list[str]]:
    """Traits from templates/data/languages.yaml; languages without them are returned separately."""
    from factatlas.templates.morphology import language_registry

    registry = language_registry()
    out, missing = {}, []
    for code in langs:
        spec = registry.get(code)
        opts = spec.options if spec else {}
        if not all(opts.get(k) for k in ("family", "genus", "script")):
            missing.append(code)
            continue
        out[code] = LanguageTraits(code, str(opts["family"]), str(opts["genus"]), str(opts["script"]))
    return out, missing


@dataclass(frozen=True, slots=True)
class PairConsistency:
    lang_a: str
    lang_b: str
    n_queries: int
    rankc: float | None  # None: no query ranked in both
    coverlap: float | None  # None: no query correct in either
    foreign: int = 0  # queries left out: a ranking that is not a permutation of the benchmark's candidates


def pair_consistency(results: Sequence[ScoredPrompt], weighting: str = "softmax") -> list[PairConsistency]:
    """RankC and COverlap for every pair of languages (a < b), over the queries (fact, template) ranked in
    both, in (fact_id, template_id) order; a query whose two rankings are not permutations of the same
    candidate list is counted in ``foreign``. Reads the columns; a pair's rankings are made as it is scored."""
    cols = ScoredColumns.of(results)
    ranked = cols.where(cols.ranked_any())
    langs = sorted(lang for (lang,) in ranked.group_rows("lang"))
    if len(langs) < 2:
        return []
    fact_rank, template_rank = sort_ranks(ranked.table("fact_id")), sort_ranks(ranked.table("template_id"))
    _, query = np.unique(fact_rank[ranked.codes("fact_id")] * len(template_rank)
                         + template_rank[ranked.codes("template_id")], return_inverse=True)
    query = query.reshape(-1)
    # the prompt of each query in each language (the last, as a mapping keeps it) and whether its ranking is
    # a permutation of its candidates
    row_of = {}
    for (lang,), rows in ranked.group_rows("lang").items():
        row_of[lang] = np.full(int(query.max()) + 1, -1, dtype=np.int64)
        row_of[lang][query[rows]] = rows
    lists = ranked.codes("candidates")
    whole = np.fromiter((sorted(r.ranked) == sorted(set(r.candidates)) for r in ranked), dtype=bool, count=len(ranked))
    correct = ranked.correct()
    out = []
    for a, b in combinations(langs, 2):
        ra, rb = row_of[a], row_of[b]
        both = (ra >= 0) & (rb >= 0)
        ra, rb = ra[both], rb[both]
        ok = (lists[ra] == lists[rb]) & whole[ra] & whole[rb]
        foreign = int((~ok).sum())
        ra, rb = ra[ok], rb[ok]
        if not len(ra):
            out.append(PairConsistency(a, b, 0, None, None, foreign))
            continue
        orders_a, orders_b = ranked.ranked_positions(ra), ranked.ranked_positions(rb)
        cov = M.coverlap(correct[ra].tolist(), correct[rb].tolist())
        out.append(PairConsistency(a, b, len(orders_a), M.rankc(orders_a, orders_b, weighting),  # type: ignore[arg-type]
                                   None if math.isnan(cov) else cov, foreign))
    return out


def vocabulary_overlap(texts: Mapping[str, Iterable[str]], tokenize: Callable[[str], Sequence[int]]
                       ) -> dict[tuple[str, str], float]:
    """Jaccard overlap |V_a ∩ V_b| / |V_a ∪ V_b| of the subword ids the model's tokenizer uses for each
    language's benchmark text (prompts and answer forms), for every pair a < b."""
    many = getattr(tokenize, "many", None)  # a CachedTokenizer tokenizes all texts in one batch
    return vocabulary_overlap_of({lang: {i for ids in (many(ts) if many else map(tokenize, ts)) for i in ids}
                                  for lang, ts in texts.items()})


def vocabulary_overlap_of(vocabularies: Mapping[str, Set[int]]) -> dict[tuple[str, str], float]:
    """``vocabulary_overlap`` from each language's subword ids (``records.SubwordView.vocabularies``)."""
    out = {}
    for a, b in combinations(sorted(vocabularies), 2):
        union = vocabularies[a] | vocabularies[b]
        out[(a, b)] = len(vocabularies[a] & vocabularies[b]) / len(union) if union else 0.0
    return out


@dataclass(frozen=True, slots=True)
class Correlation:
    feature: str
    n_pairs: int
    r: float | None
    p: float | None
    reason: str = ""  # why r is None


def pearson(feature: str, xs: Sequence[float], ys: Sequence[float]) -> Correlation:
    """Pearson r and its two-sided p (scipy.stats.pearsonr); None with a reason below 3 pairs or when
    either side is constant."""
    n = len(xs)
    if n != len(ys):
        raise ValueError(f"{feature}: {n} x values but {len(ys)} y values")
    if n < 3:
        return Correlation(feature, n, None, None, f"{n} language pairs; a correlation needs 3 or more")
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        return Correlation(feature, n, None, None, "constant over the language pairs")
    from scipy import stats  # here, not above: a 2-language run never needs its 2 s import

    res = stats.pearsonr(xs, ys)
    return Correlation(feature, n, float(res.statistic), float(res.pvalue))


def rankc_correlations(pairs: Sequence[PairConsistency], traits: Mapping[str, LanguageTraits],
                       overlap: Mapping[tuple[str, str], float] | None,
                       typology: Mapping[tuple[str, str], float] | None = None) -> list[Correlation]:
    """RankC against same family, same genus, same script (0/1), vocabulary overlap, typological
    similarity (URIEL, ``analysis.typology``) when given, and COverlap."""
    scored = [p for p in pairs if p.rankc is not None]
    out = []
    with_traits = [p for p in scored if p.lang_a in traits and p.lang_b in traits]
    for name, key in (("same family", "family"), ("same genus", "genus"), ("same script", "script")):
        xs = [float(getattr(traits[p.lang_a], key) == getattr(traits[p.lang_b], key)) for p in with_traits]
        out.append(pearson(name, xs, [p.rankc for p in with_traits]))  # type: ignore[misc]
    if overlap is not None:
        ok = [p for p in scored if (p.lang_a, p.lang_b) in overlap]
        out.append(pearson("subword vocabulary overlap", [overlap[(p.lang_a, p.lang_b)] for p in ok],
                           [p.rankc for p in ok]))  # type: ignore[misc]
    if typology is not None:
        ok = [p for p in scored if (p.lang_a, p.lang_b) in typology]
        out.append(pearson("typological similarity (URIEL syntax)", [typology[(p.lang_a, p.lang_b)] for p in ok],
                           [p.rankc for p in ok]))  # type: ignore[misc]
    ok = [p for p in scored if p.coverlap is not None]
    out.append(pearson("COverlap", [p.coverlap for p in ok], [p.rankc for p in ok]))  # type: ignore[misc]
    return out
