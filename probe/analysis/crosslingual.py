"""BMLAMA's cross-lingual consistency (Qi, Fernández & Bisazza 2023): RankC for every language pair, and
RankC against language family, script and subword-vocabulary overlap (Pearson r and p), next to COverlap
(X-FACTR, Jiang et al. 2020).

A query is one (fact, template) ranked in both languages of a pair over the same candidate list (the
benchmark's candidate order is translation-aligned, so candidate j is the same QID in both).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from factatlas.probe import metrics as M
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


def _queries(results: Iterable[ScoredPrompt]) -> dict[tuple[str, str], dict[str, ScoredPrompt]]:
    out: dict[tuple[str, str], dict[str, ScoredPrompt]] = defaultdict(dict)
    for r in results:
        if r.ranked:
            out[(r.fact_id, r.template_id)][r.lang] = r
    return out


def pair_consistency(results: Sequence[ScoredPrompt], weighting: str = "softmax") -> list[PairConsistency]:
    """RankC and COverlap for every pair of languages (a < b), over the queries ranked in both."""
    queries = _queries(results)
    langs = sorted({r.lang for r in results if r.ranked})
    out = []
    for a, b in combinations(langs, 2):
        orders_a, orders_b, correct_a, correct_b = [], [], [], []
        foreign = 0
        for by_lang in (queries[k] for k in sorted(queries)):
            ra, rb = by_lang.get(a), by_lang.get(b)
            if ra is None or rb is None:
                continue
            place = {q: i for i, q in enumerate(ra.candidates)}
            if ra.candidates != rb.candidates or any(sorted(r.ranked) != sorted(place) for r in (ra, rb)):
                foreign += 1
                continue
            orders_a.append([place[q] for q in ra.ranked])
            orders_b.append([place[q] for q in rb.ranked])
            correct_a.append(ra.correct)
            correct_b.append(rb.correct)
        if not orders_a:
            out.append(PairConsistency(a, b, 0, None, None, foreign))
            continue
        cov = M.coverlap(correct_a, correct_b)
        out.append(PairConsistency(a, b, len(orders_a), M.rankc(orders_a, orders_b, weighting),  # type: ignore[arg-type]
                                   None if math.isnan(cov) else cov, foreign))
    return out


def vocabulary_overlap(texts: Mapping[str, Iterable[str]], tokenize: Callable[[str], Sequence[int]]
                       ) -> dict[tuple[str, str], float]:
    """Jaccard overlap |V_a ∩ V_b| / |V_a ∪ V_b| of the subword ids the model's tokenizer uses for each
    language's benchmark text (prompts and answer forms), for every pair a < b."""
    many = getattr(tokenize, "many", None)  # a CachedTokenizer tokenizes all texts in one batch
    vocab = {lang: {i for ids in (many(ts) if many else map(tokenize, ts)) for i in ids}
             for lang, ts in texts.items()}
    out = {}
    for a, b in combinations(sorted(vocab), 2):
        union = vocab[a] | vocab[b]
        out[(a, b)] = len(vocab[a] & vocab[b]) / len(union) if union else 0.0
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
