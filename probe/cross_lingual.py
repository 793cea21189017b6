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
from factatlas.probe.scored import ScoredColumns, last_of, sort_ranks
from factatlas.records import ScoredPrompt


def cross_lingual(outcomes: Sequence[ScoredPrompt], langs: Sequence[str], weighting: str) -> dict[str, Any]:
    """RankC and COverlap for every language pair, over queries (fact, template) ranked in both with the
    same candidate list. Rankings are turned into position arrays once per language, so each pair costs
    a few array operations (53 languages: 1,378 pairs). Reads the columns (``ScoredColumns``)."""
    ranked = ScoredColumns.of(outcomes)
    ranked = ranked.where(ranked.has_order())  # full rankings only: open answers have no order
    lang_codes = ranked.codes("lang")
    lang_table = ranked.table("lang")
    langs = [lang for lang in langs if lang in {lang_table[c] for c in np.unique(lang_codes).tolist()}]
    # a query (fact, template) numbered in the order of (fact_id, template_id)
    fact_rank, template_rank = sort_ranks(ranked.table("fact_id")), sort_ranks(ranked.table("template_id"))
    query = fact_rank[ranked.codes("fact_id")] * len(template_rank) + template_rank[ranked.codes("template_id")]
    _, key_of = np.unique(query, return_inverse=True)
    key_of = key_of.reshape(-1)
    n_keys = int(key_of.max()) + 1 if len(key_of) else 0
    code_of = {lang: lang_table.index(lang) for lang in langs}
    in_langs = np.isin(lang_codes, list(code_of.values()))
    size = np.zeros(n_keys, dtype=np.int64)
    culture_code = np.full(n_keys, -1, dtype=np.int64)
    lengths = ranked.lengths()
    last = last_of(key_of, in_langs)  # the last prompt (in the given order) of each query: its size and culture
    size[key_of[last]], culture_code[key_of[last]] = lengths[last], ranked.codes("culture")[last]
    present, correct, cand, row_of = _by_language(ranked, code_of, key_of, n_keys)
    # candidates numbered by their position in candidate_qids: identical lists -> comparable positions
    groups = {n: np.flatnonzero(size == n) for n in sorted(set(size.tolist())) if n > 0}
    positions: dict[str, dict[int, np.ndarray]] = {}
    for lang in langs:
        positions[lang] = {}
        for n, ks in groups.items():
            order = np.tile(np.arange(n, dtype=np.int32), (len(ks), 1))  # absent or another list: masked below
            rows = row_of[lang][ks]
            fits = rows >= 0
            fits[fits] = lengths[rows[fits]] == n
            order[fits] = ranked.positions(rows[fits], n)
            positions[lang][n] = M.ranking_positions(order)
    culture_table = ranked.table("culture")
    culture_of = [culture_table[c] if c >= 0 else "" for c in culture_code.tolist()]
    cultures = sorted(set(culture_of) - {""})
    culture_arr = np.array(culture_of, dtype=object)
    del culture_of
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


def _by_language(ranked: ScoredColumns, code_of: Mapping[str, int], key_of: np.ndarray, n_keys: int
                 ) -> tuple[dict[str, np.ndarray], ...]:
    """Per language, per query: whether it is ranked there, right, its candidate list's code and its row (the
    last prompt of the query in that language, as a mapping keeps it)."""
    present, correct, cand, row_of = {}, {}, {}, {}
    for lang, code in code_of.items():
        rows = np.flatnonzero(ranked.codes("lang") == code)
        rows = rows[last_of(key_of[rows], np.ones(len(rows), dtype=bool))]  # one prompt per query and language
        present[lang] = np.zeros(n_keys, dtype=bool)
        present[lang][key_of[rows]] = True
        correct[lang] = np.zeros(n_keys, dtype=bool)
        correct[lang][key_of[rows]] = ranked.correct()[rows]
        cand[lang] = np.full(n_keys, -1, dtype=np.int64)
        cand[lang][key_of[rows]] = ranked.codes("candidates")[rows]  # equal lists, equal codes
        row_of[lang] = np.full(n_keys, -1, dtype=np.int64)
        row_of[lang][key_of[rows]] = rows
    return present, correct, cand, row_of


def pararel_section(outcomes: Sequence[ScoredPrompt]) -> dict[str, Any]:
    """Per language and predicate, over facts asked with >= 2 templates; macro over predicates.

    Only the templates every language has are used (a language may carry fewer paraphrases): consistency
    falls with the number of paraphrases, so languages are compared on the same ones."""
    cols = ScoredColumns.of(outcomes)
    ranked = cols.where(cols.ranked_any())
    langs_of: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for pred, template, lang in ranked.group_rows("predicate", "template_id", "lang"):
        langs_of[pred][template].add(lang)
    every = {lang for (lang,) in ranked.group_rows("lang")}
    shared = {pred: {t for t, langs in ts.items() if langs == every} for pred, ts in langs_of.items()}
    not_shared = sorted({t for pred, ts in langs_of.items() for t in ts if t not in shared[pred]})
    keep = np.zeros(len(cols), dtype=bool)
    for (pred, template), rows in cols.group_rows("predicate", "template_id").items():
        keep[rows] = template in shared.get(pred, ())
    outcomes = cols.where(keep)
    templates_per_predicate = shared
    single = sorted(p for p, t in templates_per_predicate.items() if len(t) < 2)
    out: dict[str, Any] = {"skipped_single_template_predicates": single, "by_lang": {},
                           "skipped_facts_single_template": 0, "templates_not_in_every_language": not_shared}
    fact_rank, template_rank = sort_ranks(cols.table("fact_id")), sort_ranks(cols.table("template_id"))
    gold_table = cols.table("golds")
    for (lang,), in_lang in sorted(group(outcomes, "lang").items()):
        per_pred: dict[str, Any] = {}
        for (pred,), g in sorted(group(in_lang, "predicate").items()):
            if pred in single:
                continue
            g = g.where(g.ranked_any())
            # facts in fact_id order, a fact's prompts in template_id order (ties as they came)
            order = np.argsort(fact_rank[g.codes("fact_id")] * len(template_rank)
                               + template_rank[g.codes("template_id")], kind="stable")
            facts, tops, golds_of = g.codes("fact_id")[order], g.take(order).tops(), g.codes("golds")[order]
            starts = np.flatnonzero(np.r_[True, facts[1:] != facts[:-1]]) if len(facts) else facts
            predictions, golds = [], []
            for start, end in zip(starts.tolist(), [*starts[1:].tolist(), len(facts)], strict=True):
                if end - start < 2:
                    out["skipped_facts_single_template"] += 1
                    continue
                predictions.append(tops[start:end])
                golds.append(frozenset(o.qid for o in gold_table[golds_of[start]]))
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
    cols = ScoredColumns.of(outcomes)
    wrong, cultures, table = ~cols.correct(), cols.codes("culture"), cols.table("culture")
    return {key: (table[int(cultures[rows[-1]])], float(wrong[rows].sum()) / len(rows))
            for key, rows in cols.group_rows("fact_id", "lang").items()}


def xfakt_section(outcomes: Sequence[ScoredPrompt], cultures: Sequence[str],
                  association: Mapping[str, tuple[str, ...]],
                  resource: Mapping[str, str] = M.XFAKT_RESOURCE) -> dict[str, Any]:
    """Associative (the fact's culture is the language's) vs non-associative error rates, per (fact, lang);
    also per resource group of the associated languages (X-FaKT Table 3: ``resource`` = language -> level,
    X-FaKT's own groups by default; languages it does not group are listed, never guessed)."""
    langs = sorted(lang for (lang,) in ScoredColumns.of(outcomes).group_rows("lang"))
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
    cols = ScoredColumns.of(outcomes)
    ranked = cols.where(cols.ranked_any())
    most_common: dict[str, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    for (pred, culture, lang), g in sorted(group(ranked, "predicate", "culture", "lang").items()):
        most_common[pred][culture][lang] = M.most_common_predictions(zip(g.tops(), g.correct().tolist(),
                                                                         strict=True), top)
    bias: dict[str, Any] = {}
    for (lang,), g in sorted(group(ranked, "lang").items()):
        per_pred = {pred: M.prediction_distribution(pg.tops()) for (pred,), pg in sorted(group(g, "predicate").items())}
        shares = [d["top_share"] for d in per_pred.values() if d["top_share"] is not None]
        bias[lang] = {"by_predicate": per_pred, "mean_top_share": sum(shares) / len(shares) if shares else None}
    return {"most_common": {p: dict(c) for p, c in most_common.items()}, "language_bias": bias}
