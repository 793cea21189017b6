"""Rankings + benchmark -> the metrics dict the prober writes as ``metrics.json``.

``compute_metrics(rankings_rows, benchmark_dir)`` groups RANKINGS_SCHEMA rows by the benchmark's facts,
languages, cultures and predicates and applies the pure functions of ``factatlas.probe.metrics``.
Definitions and aggregation rules: docs/metrics.md.

Aggregation. A prompt's value is its P@k / reciprocal rank. A fact's value within a selection (one
language, one culture, ...) is the mean over its prompts there (templates, then languages, weigh alike
because the benchmark is multi-parallel). A predicate's value is the mean over its facts; **macro** is
the mean over predicates, **micro** the mean over all facts.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from factatlas.benchmark import Benchmark, BenchmarkError
from factatlas.errors import FactatlasError
from factatlas.probe import metrics as M
from factatlas.probe.protocol import SCORING_RULES

SCHEMA_VERSION = 1

TIE_POLICY = ("stable: candidates sorted by score, descending; equal scores keep their order in "
              "candidate_qids. A prompt is correct at k when any valid object is among the first k.")

# Which culture a language is associated with, for X-FaKT's associative / non-associative split.
# Override per run (`factatlas report --associate ar=arab`) or with MetricsConfig.association.
DEFAULT_LANGUAGE_CULTURES: Mapping[str, tuple[str, ...]] = {
    "ar": ("arab",),
    "en": ("west",), "de": ("west",), "fr": ("west",), "it": ("west",), "nl": ("west",),
    "es": ("south-america",), "pt": ("south-america",),
    "zh": ("asia",), "ja": ("asia",), "ko": ("asia",),
}


class MetricsError(FactatlasError):
    """Rankings or a benchmark cannot be evaluated (unreadable, or they do not belong together)."""


@dataclass(frozen=True)
class MetricsConfig:
    ks: tuple[int, ...] = (1, 5, 10)
    rankc_weighting: str = "softmax"
    bootstrap: int = 0  # resamples for confidence intervals; 0 = none
    confidence: float = 0.95
    seed: int = 0
    association: Mapping[str, tuple[str, ...]] | None = None  # lang -> cultures; merged over the default
    top_predictions: int = 5

    def __post_init__(self) -> None:
        if 1 not in self.ks or any(k < 1 for k in self.ks):
            raise MetricsError(f"ks must hold 1 and only positive values, got {self.ks}")
        if self.rankc_weighting not in M.RANKC_WEIGHTINGS:
            from factatlas.errors import unknown

            raise MetricsError(unknown("RankC weighting", self.rankc_weighting, M.RANKC_WEIGHTINGS))

    def language_cultures(self) -> dict[str, tuple[str, ...]]:
        merged = dict(DEFAULT_LANGUAGE_CULTURES)
        merged.update({k: tuple(v) for k, v in (self.association or {}).items()})
        return merged

    def to_json(self) -> dict[str, Any]:
        return {"ks": list(self.ks), "rankc_weighting": self.rankc_weighting, "bootstrap": self.bootstrap,
                "confidence": self.confidence, "seed": self.seed, "top_predictions": self.top_predictions,
                "association": {k: list(v) for k, v in sorted(self.language_cultures().items())}}


# ---- the benchmark, as the metrics need it ------------------------------------------------------

@dataclass(frozen=True)
class BenchmarkView:
    meta: Mapping[str, Any]
    prompts: Mapping[str, Mapping[str, Any]]  # prompt_id -> PROMPTS_SCHEMA row
    labels: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (qid, lang) -> label

    @cached_property
    def languages(self) -> tuple[str, ...]:
        langs = tuple(self.meta.get("languages") or ())
        seen = sorted({p["lang"] for p in self.prompts.values()} - set(langs))
        return langs + tuple(seen)

    @cached_property
    def cultures(self) -> tuple[str, ...]:
        cultures = tuple(self.meta.get("cultures") or ())
        seen = sorted({p["culture"] for p in self.prompts.values()} - set(cultures))
        return cultures + tuple(seen)

    def label(self, qid: str, langs: Sequence[str] = ()) -> str:
        """A display label: the first language of ``langs`` (then English, then any) that has one."""
        for lang in (*langs, "en", *self.languages):
            if (qid, lang) in self.labels:
                return self.labels[(qid, lang)]
        return qid


def load_benchmark_view(benchmark: BenchmarkView | Benchmark | str | os.PathLike) -> BenchmarkView:
    """A benchmark (see ``factatlas.benchmark.Benchmark.open`` for the paths it accepts) as the metrics
    see it: prompts by id and a display label per (qid, language)."""
    if isinstance(benchmark, BenchmarkView):
        return benchmark
    try:
        bench = benchmark if isinstance(benchmark, Benchmark) else Benchmark.open(benchmark)
        # labels.parquet is optional here: labels only decorate the report, the prompts carry the rest
        labels = dict(bench.labels) if (bench.path / "labels.parquet").is_file() else {}
        prompts = bench.prompts
    except BenchmarkError as e:
        raise MetricsError(str(e)) from e
    _add_form_labels(labels, prompts)
    return BenchmarkView(dict(bench.meta), {p["prompt_id"]: p for p in prompts}, labels)


def _add_form_labels(labels: dict[tuple[str, str], str], prompts: Iterable[Mapping[str, Any]]) -> None:
    """Fill labels missing from labels.parquet with what the prompts carry (subject label, filler forms)."""
    for p in prompts:
        labels.setdefault((p["subject_qid"], p["lang"]), p["subject_label"])
        for qid, form in zip(p["candidate_qids"], p["candidate_forms"] or [], strict=False):
            labels.setdefault((qid, p["lang"]), form)


# ---- per prompt ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Outcome:
    """One ranked prompt, joined with its benchmark row."""

    prompt_id: str
    fact_id: str
    lang: str
    template_id: str
    culture: str
    predicate: str
    ranked: tuple[str, ...]
    golds: frozenset[str]
    rank: int | None
    chance: float  # expected P@1 of a uniformly random ranking of this prompt's candidates
    candidates: tuple[str, ...] = ()  # the prompt's candidate_qids, in benchmark order
    order: tuple[int, ...] = ()  # the ranking as positions in ``candidates``, best first

    @property
    def top(self) -> str | None:
        return self.ranked[0] if self.ranked else None

    @property
    def correct(self) -> bool:
        return self.rank == 1


def outcomes_from_rows(rows: Iterable[Mapping[str, Any]], bench: BenchmarkView) -> tuple[list[Outcome], dict]:
    """Join rankings rows with the benchmark; every row not used is counted with its reason."""
    counts = {"rows": 0, "unknown_prompt": 0, "duplicate_prompt": 0, "foreign_candidates": 0,
              "generative": 0, "correct_at_1_mismatch": 0, "top_ties": 0}
    seen: set[str] = set()
    out: list[Outcome] = []
    interned: dict[tuple[str, ...], tuple[str, ...]] = {}  # one tuple per candidate list: less memory
    places: dict[tuple[str, ...], dict[str, int]] = {}  # candidate -> index, once per candidate list
    kinds: set[str] = set()  # prompt kinds the scoring rule used (cloze rules skip question prompts)
    for row in rows:
        counts["rows"] += 1
        pid = row["prompt_id"]
        prompt = bench.prompts.get(pid)
        if prompt is None:
            counts["unknown_prompt"] += 1
            continue
        if pid in seen:
            counts["duplicate_prompt"] += 1
            continue
        seen.add(pid)
        kinds.add(prompt.get("kind", "cloze"))
        golds = frozenset(prompt["gold_qids"])
        key = tuple(prompt["candidate_qids"])
        candidates = interned.setdefault(key, key)
        ranked = tuple(row["ranked_qids"] or ())
        order: tuple[int, ...] = ()
        if _judged_by_prober(row):
            # generative QA and X-FACTR: ranked_qids are the candidates the decoded answer matched (often
            # none or one), not a ranking of all candidates; the prober judged the answer against every
            # alias of the valid objects, so correct_at_1 is the outcome and P@k>1 equals P@1.
            counts["generative"] += 1
            if ranked and not set(ranked) <= set(candidates):
                counts["foreign_candidates"] += 1
                continue
            rank = 1 if row.get("correct_at_1") else None
        elif ranked:
            place = places.get(candidates)
            if place is None:
                place = places[candidates] = {q: i for i, q in enumerate(candidates)}
            order = tuple(map(place.get, ranked, repeat(-1)))
            if len(ranked) != len(candidates) or len(set(order)) != len(order) or -1 in order:
                counts["foreign_candidates"] += 1
                continue
            rank = M.gold_rank(ranked, golds)
            scores = row.get("scores") or ()
            if len(scores) > 1 and scores[0] == scores[1]:
                counts["top_ties"] += 1
        else:  # no ranking at all: only the prober's judgement is there
            counts["generative"] += 1
            rank = 1 if row.get("correct_at_1") else None
        if row.get("correct_at_1") is not None and bool(row["correct_at_1"]) != (rank == 1):
            counts["correct_at_1_mismatch"] += 1
        n_gold = sum(map(golds.__contains__, candidates))
        out.append(Outcome(pid, prompt["fact_id"], prompt["lang"], prompt["template_id"], prompt["culture"],
                           prompt["predicate"], ranked, golds, rank,
                           n_gold / len(candidates) if candidates else 0.0, candidates, order))
    counts["used"] = len(out)
    counts["benchmark_prompts"] = len(bench.prompts)
    counts["eligible_prompts"] = sum(1 for p in bench.prompts.values() if p.get("kind", "cloze") in kinds)
    counts["other_kind_prompts"] = counts["benchmark_prompts"] - counts["eligible_prompts"]
    counts["coverage"] = len(out) / counts["eligible_prompts"] if counts["eligible_prompts"] else 0.0
    return out, counts


def _judged_by_prober(row: Mapping[str, Any]) -> bool:
    """Rows of an open-answer rule (generative, generative-lenient, xfactr): judged, not ranked."""

    rule = SCORING_RULES.get(row.get("scoring") or "")
    return rule is not None and rule.kind == "generate"


def prompt_values(o: Outcome, ks: Sequence[int]) -> dict[str, float]:
    values = {f"p@{k}": M.precision_at_k(o.rank, k) for k in ks}
    values["mrr"] = M.reciprocal_rank(o.rank)
    values["chance@1"] = o.chance
    return values


# ---- aggregation --------------------------------------------------------------------------------

def _nan_to_none(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


@dataclass(frozen=True)
class _Columns:
    """The outcomes as arrays: one row per prompt, one column per metric; facts and predicates coded."""

    names: tuple[str, ...]
    values: np.ndarray  # (prompts, metrics)
    fact: np.ndarray  # fact code per prompt
    fact_predicate: np.ndarray  # predicate code per fact code
    predicates: tuple[str, ...]

    @classmethod
    def build(cls, outcomes: Sequence[Outcome], ks: Sequence[int]) -> _Columns:
        names = (*(f"p@{k}" for k in ks), "mrr", "chance@1")
        ranks = np.array([0 if o.rank is None else o.rank for o in outcomes], dtype=np.int64)
        ranked = ranks > 0
        cols = [(ranked & (ranks <= k)).astype(np.float64) for k in ks]
        cols.append(np.where(ranked, 1.0 / np.maximum(ranks, 1), 0.0))
        cols.append(np.array([o.chance for o in outcomes], dtype=np.float64))
        fact_codes: dict[str, int] = {}
        pred_codes: dict[str, int] = {}
        fact = np.array([fact_codes.setdefault(o.fact_id, len(fact_codes)) for o in outcomes], dtype=np.int64)
        fact_predicate = np.zeros(len(fact_codes), dtype=np.int64)
        for o, f in zip(outcomes, fact, strict=True):
            fact_predicate[f] = pred_codes.setdefault(o.predicate, len(pred_codes))
        values = np.stack(cols, axis=1) if outcomes else np.zeros((0, len(names)))
        return cls(names, values, fact, fact_predicate, tuple(pred_codes))

    def summarize(self, idx: np.ndarray, config: MetricsConfig) -> dict[str, Any]:
        """Macro (over predicates) and micro means of every metric over the prompts ``idx``."""
        if len(idx) == 0:
            return {"n_prompts": 0, "n_facts": 0, "n_predicates": 0}
        facts, inv = np.unique(self.fact[idx], return_inverse=True)
        per_fact_n = np.bincount(inv)
        preds, pinv = np.unique(self.fact_predicate[facts], return_inverse=True)
        per_pred_n = np.bincount(pinv)
        out: dict[str, Any] = {"n_prompts": int(len(idx)), "n_facts": int(len(facts)), "n_predicates": int(len(preds))}
        ci: dict[str, list[float]] = {}
        for m, name in enumerate(self.names):
            fact_values = np.bincount(inv, weights=self.values[idx, m]) / per_fact_n
            pred_means = np.bincount(pinv, weights=fact_values) / per_pred_n
            out[name] = float(pred_means.mean())
            out[f"{name}_micro"] = float(fact_values.mean())
            if config.bootstrap and name != "chance@1":
                by_pred = {self.predicates[p]: fact_values[pinv == i] for i, p in enumerate(preds)}
                ci[name] = list(M.bootstrap_ci(by_pred, config.bootstrap, config.confidence, config.seed))
        if ci:
            out["ci"] = ci
        return out


def summarize(outcomes: Sequence[Outcome], config: MetricsConfig) -> dict[str, Any]:
    """Macro (over predicates) and micro means of every prompt metric, with optional bootstrap CIs."""
    return _Columns.build(outcomes, config.ks).summarize(np.arange(len(outcomes)), config)


def _group(outcomes: Iterable[Outcome], *keys: str) -> dict[tuple, list[Outcome]]:
    groups: dict[tuple, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[tuple(getattr(o, k) for k in keys)].append(o)
    return groups


def _group_index(outcomes: Sequence[Outcome], *keys: str) -> dict[tuple, np.ndarray]:
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, o in enumerate(outcomes):
        groups[tuple(getattr(o, k) for k in keys)].append(i)
    return {k: np.asarray(v, dtype=np.int64) for k, v in sorted(groups.items())}


def summaries(outcomes: Sequence[Outcome], config: MetricsConfig) -> dict[str, Any]:
    cols = _Columns.build(outcomes, config.ks)
    by_lang_culture: dict[str, dict[str, Any]] = defaultdict(dict)
    for (lang, culture), idx in _group_index(outcomes, "lang", "culture").items():
        by_lang_culture[lang][culture] = cols.summarize(idx, config)
    return {
        "overall": cols.summarize(np.arange(len(outcomes)), config),
        "by_lang": {k[0]: cols.summarize(idx, config) for k, idx in _group_index(outcomes, "lang").items()},
        "by_culture": {k[0]: cols.summarize(idx, config) for k, idx in _group_index(outcomes, "culture").items()},
        "by_lang_culture": dict(by_lang_culture),
    }


def by_predicate(outcomes: Sequence[Outcome], config: MetricsConfig) -> dict[str, Any]:
    """The P@1 table: per predicate, overall, per language, culture, language x culture (no bootstrap)."""
    plain = MetricsConfig(ks=config.ks, rankc_weighting=config.rankc_weighting)
    cols = _Columns.build(outcomes, config.ks)
    out: dict[str, Any] = {}
    for (pred,), idx in _group_index(outcomes, "predicate").items():
        sub = [outcomes[i] for i in idx]
        lang_culture: dict[str, dict[str, Any]] = defaultdict(dict)
        for (lang, culture), j in _group_index(sub, "lang", "culture").items():
            lang_culture[lang][culture] = cols.summarize(idx[j], plain)
        out[pred] = {
            "all": cols.summarize(idx, plain),
            "by_lang": {k[0]: cols.summarize(idx[j], plain) for k, j in _group_index(sub, "lang").items()},
            "by_culture": {k[0]: cols.summarize(idx[j], plain) for k, j in _group_index(sub, "culture").items()},
            "by_lang_culture": dict(lang_culture),
        }
    return out


# ---- across languages: RankC and COverlap -------------------------------------------------------

def cross_lingual(outcomes: Sequence[Outcome], langs: Sequence[str], weighting: str) -> dict[str, Any]:
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


# ---- paraphrases (mParaRel), X-FaKT, predictions ------------------------------------------------

def pararel_section(outcomes: Sequence[Outcome]) -> dict[str, Any]:
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
    for (lang,), group in sorted(_group(outcomes, "lang").items()):
        per_pred: dict[str, Any] = {}
        for (pred,), g in sorted(_group(group, "predicate").items()):
            if pred in single:
                continue
            predictions, golds = [], []
            for (_fid,), fact_prompts in sorted(_group((o for o in g if o.ranked), "fact_id").items()):
                if len(fact_prompts) < 2:
                    out["skipped_facts_single_template"] += 1
                    continue
                fact_prompts.sort(key=lambda o: o.template_id)
                predictions.append([o.top for o in fact_prompts])
                golds.append(fact_prompts[0].golds)
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


def _fact_lang_errors(outcomes: Sequence[Outcome]) -> dict[tuple[str, str], tuple[str, float]]:
    """(fact, lang) -> (culture, error rate over its templates)."""
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    culture: dict[tuple[str, str], str] = {}
    for o in outcomes:
        acc[(o.fact_id, o.lang)].append(0.0 if o.correct else 1.0)
        culture[(o.fact_id, o.lang)] = o.culture
    return {k: (culture[k], sum(v) / len(v)) for k, v in acc.items()}


def xfakt_section(outcomes: Sequence[Outcome], cultures: Sequence[str],
                  association: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    """Associative (the fact's culture is the language's) vs non-associative error rates, per (fact, lang)."""
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
    out["available"] = out["overall"] is not None
    if not out["available"]:
        out["reason"] = ("no language is associated with a culture of this benchmark" if not assoc else
                         "the associated languages have no associative or no non-associative facts")
    return out


def predictions_section(outcomes: Sequence[Outcome], top: int) -> dict[str, Any]:
    """Most common top-1 predictions (correct / wrong) per predicate, culture and language, and the
    distribution of predictions per language and predicate (language bias)."""
    ranked = [o for o in outcomes if o.ranked]
    most_common: dict[str, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    for (pred, culture, lang), g in sorted(_group(ranked, "predicate", "culture", "lang").items()):
        most_common[pred][culture][lang] = M.most_common_predictions(((o.top, o.correct) for o in g), top)
    bias: dict[str, Any] = {}
    for (lang,), g in sorted(_group(ranked, "lang").items()):
        per_pred = {pred: M.prediction_distribution(o.top for o in pg)
                    for (pred,), pg in sorted(_group(g, "predicate").items())}
        shares = [d["top_share"] for d in per_pred.values() if d["top_share"] is not None]
        bias[lang] = {"by_predicate": per_pred, "mean_top_share": sum(shares) / len(shares) if shares else None}
    return {"most_common": {p: dict(c) for p, c in most_common.items()}, "language_bias": bias}


# ---- the dataset itself (no model needed) -------------------------------------------------------

def _gold_label(bench: BenchmarkView, prompt: Mapping[str, Any], i: int, qid: str) -> str:
    """The object's label in the prompt's language; the slot filler when labels.parquet lacks it."""
    label = bench.labels.get((qid, prompt["lang"]))
    if label:
        return label
    forms = prompt.get("gold_forms") or []
    return forms[i][0] if i < len(forms) and forms[i] else ""


def leaks(bench: BenchmarkView, prompt: Mapping[str, Any]) -> bool:
    """An object label inside the subject label (NFKC + casefold): the prompt gives the answer away.
    Same rule as the build's stats.json leakage rate (factatlas.forms.leaks)."""
    from factatlas.forms import leaks as label_leaks

    labels = [_gold_label(bench, prompt, i, q) for i, q in enumerate(prompt["gold_qids"])]
    return bool(prompt["subject_label"]) and label_leaks(prompt["subject_label"], labels)


def dataset_profile(bench: BenchmarkView, max_examples: int = 5) -> dict[str, Any]:
    """The checks and statistics of PROBING.md "Validating a dataset" that need no model."""
    prompts = sorted(bench.prompts.values(), key=lambda p: p["prompt_id"])
    langs = bench.languages
    # facts: one culture, predicate and valid-object set each
    facts: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for p in prompts:
        facts.setdefault(p["fact_id"], (p["predicate"], p["culture"], tuple(p["gold_qids"])))
    per_predicate = _predicate_profile(bench, prompts, facts)
    cultures = bench.cultures
    facts_per_culture = {c: sum(1 for _, c_, _ in facts.values() if c_ == c) for c in cultures}
    majority_values = [e["majority"]["p@1"] for e in per_predicate.values()]
    return {
        "languages": list(langs), "cultures": list(cultures), "n_prompts": len(prompts), "n_facts": len(facts),
        "templates": {lang: sorted({p["template_id"] for p in prompts if p["lang"] == lang}) for lang in langs},
        "parallel": _parallel_profile(prompts, langs, max_examples),
        "gold_in_candidates": _gold_profile(prompts, max_examples),
        "leakage": _leakage_profile(bench, prompts, langs, max_examples),
        "balance": {"facts_per_culture": facts_per_culture,
                    "ratio": (max(facts_per_culture.values()) / min(facts_per_culture.values())
                              if facts_per_culture and min(facts_per_culture.values()) > 0 else None)},
        "majority_macro": sum(majority_values) / len(majority_values) if majority_values else None,
        "predicates": per_predicate,
    }


def _parallel_profile(prompts: Sequence[Mapping[str, Any]], langs: Sequence[str], max_examples: int
                      ) -> dict[str, Any]:
    """Multi-parallel: every fact in every language with the same candidates and golds (each language asks
    it with the templates it has)."""
    groups: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for p in prompts:
        groups[p["fact_id"]].append(p)
    missing_lang, cand_mismatch, gold_mismatch, examples = 0, 0, 0, []
    for key, ps in sorted(groups.items()):
        have = {p["lang"] for p in ps}
        problems = []
        if have != set(langs):
            missing_lang += 1
            problems.append(f"languages {sorted(have)} instead of {sorted(langs)}")
        if len({tuple(p["candidate_qids"]) for p in ps}) > 1:
            cand_mismatch += 1
            problems.append("candidate QIDs differ between languages")
        if len({tuple(sorted(p["gold_qids"])) for p in ps}) > 1:
            gold_mismatch += 1
            problems.append("gold QIDs differ between languages")
        if problems and len(examples) < max_examples:
            examples.append(f"{key}: {'; '.join(problems)}")
    return {"groups": len(groups), "missing_language": missing_lang, "candidate_mismatch": cand_mismatch,
            "gold_mismatch": gold_mismatch, "examples": examples}


def _gold_profile(prompts: Sequence[Mapping[str, Any]], max_examples: int) -> dict[str, Any]:
    """Golds outside their candidate list, and prompts whose candidates hold no gold."""
    gold_outside, prompts_without_gold, gold_examples = 0, 0, []
    for p in prompts:
        cands = set(p["candidate_qids"])
        outside = [q for q in p["gold_qids"] if q not in cands]
        gold_outside += len(outside)
        if outside and len(gold_examples) < max_examples:
            gold_examples.append(f"{p['prompt_id']}: {', '.join(outside)} not among the candidates")
        if not cands & set(p["gold_qids"]):
            prompts_without_gold += 1
    return {"gold_outside": gold_outside, "prompts_without_gold": prompts_without_gold, "examples": gold_examples}


def _leakage_profile(bench: BenchmarkView, prompts: Sequence[Mapping[str, Any]], langs: Sequence[str],
                     max_examples: int) -> dict[str, Any]:
    """Subjects whose label contains the answer, per (fact, language)."""
    leak_units: dict[tuple[str, str], bool] = {}
    leak_examples = []
    for p in prompts:
        key = (p["fact_id"], p["lang"])
        if leak_units.get(key):
            continue
        leak = leaks(bench, p)
        leak_units[key] = leak
        if leak and len(leak_examples) < max_examples:
            leak_examples.append(f"{p['lang']}: subject '{p['subject_label']}' contains the answer "
                                 f"({', '.join(bench.label(q, [p['lang']]) for q in p['gold_qids'])})")
    leak_by_lang = {}
    for lang in langs:
        units = [v for (_, lang_), v in leak_units.items() if lang_ == lang]
        leak_by_lang[lang] = {"n": sum(units), "units": len(units), "share": sum(units) / len(units) if units else 0.0}
    n_leak = sum(leak_units.values())
    return {"n": n_leak, "units": len(leak_units), "share": n_leak / len(leak_units) if leak_units else 0.0,
            "by_lang": leak_by_lang, "examples": leak_examples}


def _predicate_profile(bench: BenchmarkView, prompts: Sequence[Mapping[str, Any]],
                       facts: Mapping[str, tuple[str, str, tuple[str, ...]]]) -> dict[str, Any]:
    """Per predicate and culture: facts, entropy, the majority class, candidates, imbalance."""
    by_pc: dict[tuple[str, str], list[tuple[str, ...]]] = defaultdict(list)
    for pred, culture, objs in facts.values():
        by_pc[(pred, culture)].append(objs)
    predicates = sorted({k[0] for k in by_pc})
    cultures = bench.cultures
    n_candidates: dict[str, list[int]] = defaultdict(list)
    for p in prompts:
        n_candidates[p["predicate"]].append(len(p["candidate_qids"]))
    per_predicate: dict[str, Any] = {}
    for pred in predicates:
        all_objs = [objs for (p_, _), lst in by_pc.items() if p_ == pred for objs in lst]
        qid, acc = M.majority_baseline(all_objs)
        entry: dict[str, Any] = {
            "facts": {c: len(by_pc.get((pred, c), [])) for c in cultures},
            "entropy": {c: M.predicate_entropy(by_pc[(pred, c)]) for c in cultures if by_pc.get((pred, c))},
            "majority": {"qid": qid, "label": bench.label(qid), "p@1": acc, "tied": M.majority_ties(all_objs),
                         "by_culture": {}},
            "mean_candidates": sum(n_candidates[pred]) / len(n_candidates[pred]),
        }
        for c in cultures:
            if by_pc.get((pred, c)):
                # the predicate-wide majority object, scored on this culture's facts
                hits = sum(1 for objs in by_pc[(pred, c)] if qid in objs)
                entry["majority"]["by_culture"][c] = hits / len(by_pc[(pred, c)])
        counts = [n for n in entry["facts"].values()]
        entry["imbalance"] = (max(counts) / min(counts)) if counts and min(counts) > 0 else None
        per_predicate[pred] = entry
    return per_predicate


# ---- the entry point ----------------------------------------------------------------------------

def _single(rows: Sequence[Mapping[str, Any]], key: str) -> str | None:
    values = sorted({r.get(key) for r in rows if r.get(key)})
    return values[0] if len(values) == 1 else (", ".join(values) if values else None)


# ---- the held-out comparison the verdict reads -------------------------------------------------

# Resamples for the verdict's intervals when the caller asked for none (MetricsConfig.bootstrap == 0):
# the verdict compares intervals, so it always needs them.
VALIDATION_BOOTSTRAP = 1000


def held_out_splits(bench: BenchmarkView, trained_on: Sequence[str] | None) -> tuple[tuple[str, ...], str]:
    """The splits a verdict may use, and why: never a split the model was trained (or tuned) on."""
    return held_out_from(sorted({p["split"] for p in bench.prompts.values()}), trained_on)


def held_out_from(present: Sequence[str], trained_on: Sequence[str] | None) -> tuple[tuple[str, ...], str]:
    """``held_out_splits`` on the split names a benchmark has (``factatlas compare`` reads the same rule)."""
    if trained_on is not None:
        held = tuple(s for s in present if s not in set(trained_on))
        taught = ", ".join(trained_on) if trained_on else "none"
        return held, f"the splits the model was not trained on (trained on {taught})"
    if "test" in present:
        return ("test",), "the test split (the probe metadata records no training split)"
    return tuple(present), ("every split: the benchmark has no test split and the probe metadata records "
                            "no training split")


def p_at_1_with_ci(outcomes: Sequence[Outcome], n_boot: int, confidence: float, seed: int) -> dict[str, Any]:
    """P@1 macro (over predicates; DLAMA) and micro (over facts; BMLAMA) with bootstrap intervals."""
    per_fact: dict[str, list[float]] = defaultdict(list)
    predicate_of: dict[str, str] = {}
    for o in outcomes:
        per_fact[o.fact_id].append(1.0 if o.correct else 0.0)
        predicate_of[o.fact_id] = o.predicate
    by_pred: dict[str, list[float]] = defaultdict(list)
    for fid, values in sorted(per_fact.items()):
        by_pred[predicate_of[fid]].append(sum(values) / len(values))
    if not by_pred:
        return {"n_prompts": 0, "n_facts": 0, "n_predicates": 0, "macro": None, "micro": None,
                "ci": {"macro": None, "micro": None}}
    facts = [v for vs in by_pred.values() for v in vs]
    return {"n_prompts": len(outcomes), "n_facts": len(facts), "n_predicates": len(by_pred),
            "macro": sum(sum(v) / len(v) for v in by_pred.values()) / len(by_pred),
            "micro": sum(facts) / len(facts),
            "ci": {avg: list(M.bootstrap_ci(by_pred, n_boot, confidence, seed, average=avg))
                   for avg in ("macro", "micro")}}


def validation_section(outcomes: Sequence[Outcome], template_outcomes: Sequence[Outcome] | None,
                       bench: BenchmarkView, trained_on: Sequence[str] | None,
                       config: MetricsConfig) -> dict[str, Any]:
    """Model vs the majority-class and template-only baselines on the held-out split only, with intervals.

    The template-only comparison is paired: the model is scored on exactly the prompts the baseline
    ranked (the baseline skips prompts whose subject it cannot replace, e.g. inflected in the text), and
    the prompts left out are counted per language.
    """
    splits, source = held_out_splits(bench, trained_on)
    n_boot = config.bootstrap or VALIDATION_BOOTSTRAP
    ci = (n_boot, config.confidence, config.seed)
    held = [o for o in outcomes if bench.prompts[o.prompt_id]["split"] in splits]
    out: dict[str, Any] = {"splits": list(splits), "split_source": source, "bootstrap": n_boot,
                           "ranked_splits": sorted({bench.prompts[o.prompt_id]["split"] for o in outcomes}),
                           "confidence": config.confidence, "model": p_at_1_with_ci(held, *ci)}
    # majority class: the object valid for most facts of the predicate (whole benchmark), scored on the
    # held-out facts the model was scored on
    objects: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    seen: set[str] = set()
    for p in sorted(bench.prompts.values(), key=lambda p: p["prompt_id"]):
        if p["fact_id"] not in seen:
            seen.add(p["fact_id"])
            objects[p["predicate"]].append(tuple(p["gold_qids"]))
    majority = {pred: M.majority_baseline(objs)[0] for pred, objs in objects.items()}
    guesses = [dataclasses.replace(o, rank=1 if majority[o.predicate] in o.golds else None) for o in held]
    out["majority"] = p_at_1_with_ci(guesses, *ci)
    out["template_only"] = None
    if template_outcomes is not None:
        baseline = {o.prompt_id: o for o in template_outcomes}
        paired = [o for o in held if o.prompt_id in baseline]
        missing: dict[str, int] = defaultdict(int)
        for o in held:
            if o.prompt_id not in baseline:
                missing[o.lang] += 1
        out["template_only"] = {
            "n_pairs": len(paired),
            "excluded": {"prompts": sum(missing.values()), "by_lang": dict(sorted(missing.items())),
                         "reason": "the template-only baseline has no ranking for them (its subject could "
                                   "not be replaced by the placeholder; probe.json counts why)"},
            "model": p_at_1_with_ci(paired, *ci),
            "baseline": p_at_1_with_ci([baseline[o.prompt_id] for o in paired], *ci),
        }
    return out


def compute_metrics(rankings_rows: Iterable[Mapping[str, Any]], benchmark_dir: str | os.PathLike | Any,
                    config: MetricsConfig | None = None,
                    template_only_rows: Iterable[Mapping[str, Any]] | None = None,
                    trained_on: Sequence[str] | None = None) -> dict[str, Any]:
    """Every metric of docs/metrics.md for one model's rankings on one benchmark (JSON-ready dict).

    ``benchmark_dir``: a benchmark directory, a run directory holding ``build/``, or a loaded Benchmark.
    ``template_only_rows``: rankings of the template-only baseline (subject replaced by a placeholder).
    ``trained_on``: the splits the model was trained or tuned on (probe metadata); ``validation`` then
    uses the other splits only. None: the test split (all splits when there is none).
    """
    config = config or MetricsConfig()
    bench = load_benchmark_view(benchmark_dir)
    rows = list(rankings_rows)
    outcomes, coverage = outcomes_from_rows(rows, bench)
    if not outcomes:
        raise MetricsError(f"none of the {len(rows)} rankings rows matches a prompt of the benchmark "
                           f"({coverage}); were they produced on this benchmark?")
    result: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "model": _single(rows, "model"),
        "scoring": _single(rows, "scoring"),
        "benchmark": {k: bench.meta.get(k) for k in ("name", "pair", "cultures", "languages", "candidate_mode", "k")},
        "tie_policy": TIE_POLICY,
        "config": config.to_json(),
        "coverage": coverage,
        "summary": summaries(outcomes, config),
        "by_predicate": by_predicate(outcomes, config),
        "cross_lingual": cross_lingual(outcomes, bench.languages, config.rankc_weighting),
        "pararel": pararel_section(outcomes),
        "xfakt": xfakt_section(outcomes, bench.cultures, config.language_cultures()),
        "predictions": predictions_section(outcomes, config.top_predictions),
        "dataset": dataset_profile(bench),
        "template_only": None,
    }
    t_outcomes = None
    if template_only_rows is not None:
        t_outcomes, t_coverage = outcomes_from_rows(template_only_rows, bench)
        plain = MetricsConfig(ks=config.ks, rankc_weighting=config.rankc_weighting)
        result["template_only"] = {
            "coverage": t_coverage,
            "summary": {"overall": summarize(t_outcomes, plain),
                        "by_lang": {k[0]: summarize(g, plain) for k, g in sorted(_group(t_outcomes, "lang").items())}},
            "by_predicate": {k[0]: summarize(g, plain) for k, g in sorted(_group(t_outcomes, "predicate").items())},
        }
    result["validation"] = validation_section(outcomes, t_outcomes, bench, trained_on, config)
    # open answers (generative, chat, xfactr) rank nothing: P@k>1 and MRR would only repeat P@1
    result["ranking"] = coverage["generative"] < coverage["used"]
    if not result["ranking"]:
        for key in ("summary", "by_predicate", "template_only"):
            result[key] = _without_ranking_metrics(result[key])
    return _json_ready(result)


def _ranking_only(name: str) -> bool:
    """Metrics that need a ranking of the candidates: P@k for k > 1 and MRR (micro twins included)."""
    base = name.removesuffix("_micro")
    return base == "mrr" or (base.startswith("p@") and base != "p@1")


def _without_ranking_metrics(obj: Any) -> Any:
    """``obj`` with every ranking-only metric set to None (n/a)."""
    if isinstance(obj, Mapping):
        return {k: None if _ranking_only(str(k)) else _without_ranking_metrics(v) for k, v in obj.items()}
    return obj


# The modules whose code decides a metrics.json: a change to any of them makes an older file stale.
METRICS_CODE = ("factatlas.probe.evaluate", "factatlas.probe.metrics", "factatlas.probe.protocol",
                "factatlas.benchmark", "factatlas.entropy", "factatlas.forms", "factatlas.tables")


def metrics_inputs(rankings: str | os.PathLike, template_only: str | os.PathLike | None,
                   benchmark_dir: str | os.PathLike, trained_on: Sequence[str] | None) -> dict[str, Any]:
    """What a metrics.json is computed from, as content hashes: the rankings, the template-only rankings,
    the files of the benchmark directory (the one holding benchmark.json), the code of ``METRICS_CODE``
    and the versions of the numerical libraries it calls (the bootstrap draws from NumPy's generator), and
    the training splits the verdict leaves out. ``factatlas report`` reuses the probe's metrics.json only when these and the configuration
    are unchanged, so a reused file is the one a fresh computation would write."""
    import hashlib
    import importlib

    from factatlas.rundir import installed_version, sha256_file

    files = hashlib.sha256()
    for path in sorted(p for p in Path(benchmark_dir).iterdir() if p.is_file()):
        files.update(f"{path.name}\0{sha256_file(path)}\n".encode())
    code = hashlib.sha256()
    for name in METRICS_CODE:
        code.update(Path(importlib.import_module(name).__file__).read_bytes())
    for library in ("numpy", "scipy"):
        code.update(f"{library} {installed_version(library)}\n".encode())
    return {"rankings": sha256_file(rankings),
            "template_only": sha256_file(template_only) if template_only is not None else None,
            "benchmark_files": files.hexdigest(), "code": code.hexdigest(), "schema_version": SCHEMA_VERSION,
            "trained_on": None if trained_on is None else list(trained_on)}  # in order: the verdict names them so


def _json_ready(obj: Any) -> Any:
    """NaN -> None (strict JSON), tuples -> lists, keys as strings."""
    if isinstance(obj, float):
        return None if math.isnan(obj) else obj
    if isinstance(obj, Mapping):
        return {str(k): _json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_ready(v) for v in obj]
    return obj
