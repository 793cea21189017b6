"""Across languages and templates, from scored prompts: RankC and COverlap per language pair (BMLAMA,
X-FACTR), mParaRel's paraphrase consistency, X-FaKT's associative vs non-associative error rates, and
the most common predictions (DLAMA). Moved out of ``evaluate.py`` unchanged; definitions in docs/metrics.md.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from factatlas.probe import metrics as M
from factatlas.probe.aggregate import group
from factatlas.records import ScoredPrompt


def cross_lingual(outcomes: Sequence[ScoredPrompt], langs: Sequence[str], weighting: str) -> dict[str, Any]:
    """RankC and COverlap for every language pair, over queries (fact, template) ranked in both with the
    same candidate list. Rankings are turned into position arrays once per language, so each pair costs
    a few array operations (53 languages: 1,378 pairs)."""
    ranked = [o for o in outcomes if o.order]  # full rankings only: open answers have no order
    langs = [lang for lang in langs if any(o.lang == lang for o in ranked)]
    keys = sorted({(o.fact_id, o.template_id) for o in ranked})
    key_index = {k: i for i, k in enumerate(keys)}
    n_keys = len(keys)
    size = np.zeros(n_keys, dtype=np.int64)
    culture_of = [""] * n_keys
    cand_ids: dict[tuple[str, ...], int] = {}
    present = {lang: np.zeros(n_keys, dtype=bool) for lang in langs}
    correct = {lang: np.zeros(n_keys, dtype=bool) for lang in langs}
    cand = {lang: np.full(n_keys, -1, dtype=np.int64) for lang in langs}
    orders: dict[str, dict[int, tuple[str, ...] | tuple[int, ...]]] = {lang: {} for lang in langs}
    for o in ranked:
        if o.lang not in present:
            continue
        k = key_index[(o.fact_id, o.template_id)]
        present[o.lang][k] = True
        correct[o.lang][k] = o.correct
        cand[o.lang][k] = cand_ids.setdefault(o.candidates, len(cand_ids))
        orders[o.lang][k] = o.order
        size[k] = len(o.order)
        culture_of[k] = o.culture
    # candidates numbered by their position in candidate_qids: identical lists -> comparable positions
    groups = {n: np.flatnonzero(size == n) for n in sorted(set(size.tolist())) if n > 0}
    def order_of(lang: str, k: int, n: int) -> Sequence[int]:
        o = orders[lang].get(k)
        return o if o is not None and len(o) == n else range(n)  # absent or another list: masked below

    positions: dict[str, dict[int, np.ndarray]] = {}
    for lang in langs:
        positions[lang] = {}
        for n, ks in groups.items():
            order = np.array([order_of(lang, k, n) for k in ks.tolist()], dtype=np.int64).reshape(len(ks), n)
            positions[lang][n] = M.ranking_positions(order)
    cultures = sorted(set(culture_of) - {""})
    culture_arr = np.array(culture_of, dtype=object)
    rankc: dict[str, dict[str, float | None]] = {a: {} for a in langs}
    by_culture: dict[str, dict[str, dict[str, float | None]]] = {c: {a: {} for a in langs} for c in cultures}
    cover: dict[str, dict[str, float | None]] = {a: {} for a in langs}
    n_queries: dict[str, dict[str, int]] = {a: {} for a in langs}
    mismatched = 0
    for i, a in enumerate(langs):
        for b in langs[i:]:
            both = present[a] & present[b]
            valid = both & (cand[a] == cand[b])
            mismatched += int((both & ~valid).sum()) if a != b else 0
            consist = np.full(n_keys, np.nan)
            for n, ks in groups.items():
                sel = valid[ks]
                if sel.any():
                    consist[ks[sel]] = M.rankc_from_positions(positions[a][n][sel], positions[b][n][sel], weighting)
            n_valid = int(valid.sum())
            n_queries[a][b] = n_queries[b][a] = n_valid
            rankc[a][b] = rankc[b][a] = float(consist[valid].mean()) if n_valid else None
            either = int(((correct[a] | correct[b]) & valid).sum())
            co = int((correct[a] & correct[b] & valid).sum()) / either if either else None
            cover[a][b] = cover[b][a] = co
            for c in cultures:
                in_c = valid & (culture_arr == c)
                v = float(consist[in_c].mean()) if in_c.any() else None
                by_culture[c][a][b] = by_culture[c][b][a] = v

    def off_diagonal_mean(matrix: Mapping[str, Mapping[str, float | None]]) -> float | None:
        values = [matrix[a][b] for i, a in enumerate(langs) for b in langs[i + 1:] if matrix[a][b] is not None]
        return sum(values) / len(values) if values else None

    return {
        "languages": langs,
        "queries": n_queries,
        "skipped_candidate_mismatch": mismatched,
        "rankc": {"weighting": weighting, "matrix": rankc, "mean": off_diagonal_mean(rankc),
                  "by_culture": {c: {"matrix": m, "mean": off_diagonal_mean(m)} for c, m in by_culture.items()}},
        "coverlap": {"matrix": cover, "mean": off_diagonal_mean(cover)},
    }


def pararel_section(outcomes: Sequence[ScoredPrompt]) -> dict[str, Any]:
    """Per language and predicate, over facts asked with >= 2 templates; macro over predicates.

    Only the templates every language has are used (a language may carry fewer paraphrases): consistency
    falls with the number of paraphrases, so languages are compared on the same ones."""
    langs_of: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for o in outcomes:
        if o.ranked:
            langs_of[o.predicate][o.template_id].add(o.lang)
    every = {o.lang for o in outcomes if o.ranked}
    shared = {pred: {t for t, langs in ts.items() if langs == every} for pred, ts in langs_of.items()}
    not_shared = sorted({t for pred, ts in langs_of.items() for t in ts if t not in shared[pred]})
    outcomes = [o for o in outcomes if o.template_id in shared.get(o.predicate, ())]
    templates_per_predicate = shared
    single = sorted(p for p, t in templates_per_predicate.items() if len(t) < 2)
    out: dict[str, Any] = {"skipped_single_template_predicates": single, "by_lang": {},
                           "skipped_facts_single_template": 0, "templates_not_in_every_language": not_shared}
    for (lang,), in_lang in sorted(group(outcomes, "lang").items()):
        per_pred: dict[str, Any] = {}
        for (pred,), g in sorted(group(in_lang, "predicate").items()):
            if pred in single:
                continue
            predictions, golds = [], []
            for (_fid,), fact_prompts in sorted(group((o for o in g if o.ranked), "fact_id").items()):
                if len(fact_prompts) < 2:
                    out["skipped_facts_single_template"] += 1
                    continue
                fact_prompts.sort(key=lambda o: o.template_id)
                predictions.append([o.top for o in fact_prompts])
                golds.append(fact_prompts[0].gold_qids)
            if predictions:
                per_pred[pred] = {**M.pararel_scores(predictions, golds), "n_facts": len(predictions)}
        if per_pred:
            macro = {k: sum(v[k] for v in per_pred.values()) / len(per_pred)
                     for k in ("accuracy", "consistency", "consistency_accuracy")}
            out["by_lang"][lang] = {"macro": macro, "by_predicate": per_pred}
    out["available"] = bool(out["by_lang"])
    if not out["available"]:
        out["reason"] = "no predicate has two or more templates in one language"
    return out


def _fact_lang_errors(outcomes: Sequence[ScoredPrompt]) -> dict[tuple[str, str], tuple[str, float]]:
    """(fact, lang) -> (culture, error rate over its templates)."""
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    culture: dict[tuple[str, str], str] = {}
    for o in outcomes:
        acc[(o.fact_id, o.lang)].append(0.0 if o.correct else 1.0)
        culture[(o.fact_id, o.lang)] = o.culture
    return {k: (culture[k], sum(v) / len(v)) for k, v in acc.items()}


def xfakt_section(outcomes: Sequence[ScoredPrompt], cultures: Sequence[str],
                  association: Mapping[str, tuple[str, ...]],
                  resource: Mapping[str, str] = M.XFAKT_RESOURCE) -> dict[str, Any]:
    """Associative (the fact's culture is the language's) vs non-associative error rates, per (fact, lang);
    also per resource group of the associated languages (X-FaKT Table 3: ``resource`` = language -> level,
    X-FaKT's own groups by default; languages it does not group are listed, never guessed)."""
    langs = sorted({o.lang for o in outcomes})
    assoc = {lang: tuple(c for c in association.get(lang, ()) if c in cultures) for lang in langs}
    assoc = {lang: cs for lang, cs in assoc.items() if cs}
    out: dict[str, Any] = {"association": {k: list(v) for k, v in sorted(assoc.items())},
                           "unassociated_languages": [lang for lang in langs if lang not in assoc]}
    errors = _fact_lang_errors(outcomes)

    def scores(keys: Iterable[tuple[str, str]]) -> dict[str, Any] | None:
        a_err, n_err = [], []
        for key in keys:
            culture, err = errors[key]
            (a_err if culture in assoc[key[1]] else n_err).append(err)
        if not a_err or not n_err:
            return None
        mu_a, mu_n = sum(a_err) / len(a_err), sum(n_err) / len(n_err)
        return {"mu_assoc": mu_a, "mu_non": mu_n, **M.xfakt_scores(mu_a, mu_n),
                "ttest": M.xfakt_ttest(a_err, n_err)}

    keys = sorted(k for k in errors if k[1] in assoc)
    out["overall"] = scores(keys)
    out["by_lang"] = {lang: s for lang in sorted(assoc) if (s := scores(k for k in keys if k[1] == lang))}
    grouped = {level: [lang for lang in sorted(assoc) if resource.get(lang) == level] for level in M.RESOURCE_LEVELS}
    out["by_resource"] = {level: {"langs": langs, "scores": scores(k for k in keys if k[1] in langs) if langs else None}
                          for level, langs in grouped.items()}
    out["resource_grouping"] = M.XFAKT_RESOURCE_SOURCE if resource is M.XFAKT_RESOURCE else "given"
    out["ungrouped_languages"] = [lang for lang in sorted(assoc) if resource.get(lang) not in M.RESOURCE_LEVELS]
    out["available"] = out["overall"] is not None
    if not out["available"]:
        out["reason"] = ("no language is associated with a culture of this benchmark" if not assoc else
                         "the associated languages have no associative or no non-associative facts")
    return out


def predictions_section(outcomes: Sequence[ScoredPrompt], top: int) -> dict[str, Any]:
    """Most common top-1 predictions (correct / wrong) per predicate, culture and language, and the
    distribution of predictions per language and predicate (language bias)."""
    ranked = [o for o in outcomes if o.ranked]
    most_common: dict[str, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    for (pred, culture, lang), g in sorted(group(ranked, "predicate", "culture", "lang").items()):
        most_common[pred][culture][lang] = M.most_common_predictions(((o.top, o.correct) for o in g), top)
    bias: dict[str, Any] = {}
    for (lang,), g in sorted(group(ranked, "lang").items()):
        per_pred = {pred: M.prediction_distribution(o.top for o in pg)
                    for (pred,), pg in sorted(group(g, "predicate").items())}
        shares = [d["top_share"] for d in per_pred.values() if d["top_share"] is not None]
        bias[lang] = {"by_predicate": per_pred, "mean_top_share": sum(shares) / len(shares) if shares else None}
    return {"most_common": {p: dict(c) for p, c in most_common.items()}, "language_bias": bias}
