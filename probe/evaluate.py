"""Rankings + benchmark -> the metrics dict the prober writes as ``metrics.json``.

``compute_metrics(rankings, benchmark_dir)`` joins the rankings (``ProbeResult``) with the benchmark's
prompts and aggregates them with ``factatlas.probe.aggregate`` (the one join and the one definition of
micro and macro), then applies the pure functions of ``factatlas.probe.metrics`` for the cross-lingual,
paraphrase and X-FaKT sections. Definitions and aggregation rules: docs/metrics.md.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factatlas.benchmark import Benchmark, BenchmarkError
from factatlas.memory import give_back
from factatlas.probe import metrics as M
from factatlas.probe.aggregate import ScoreTable, group, group_index, join, join_prompts, ranked_prompts

# The sections by job: cross-lingual consistency, paraphrases, X-FaKT and predictions; the dataset profile;
# the held-out comparison the verdict reads (re-exported: callers import them from here).
from factatlas.probe.cross_lingual import cross_lingual, pararel_section, predictions_section, xfakt_section
from factatlas.probe.heldout import VALIDATION_BOOTSTRAP, held_out_splits, validation_section  # noqa: F401

# the configuration of the metrics and its errors (re-exported: callers import them from here)
from factatlas.probe.metrics_config import DEFAULT_LANGUAGE_CULTURES, MetricsConfig, MetricsError  # noqa: F401
from factatlas.probe.profile import dataset_profile, leaks  # noqa: F401
from factatlas.probe.scored import ScoredColumns
from factatlas.records import ProbeResult, ScoredPrompt
from factatlas.tables import ProbeResultsFile, probe_result_from_row

SCHEMA_VERSION = 1

TIE_POLICY = ("stable: candidates sorted by score, descending; equal scores keep their order in "
              "candidate_qids. A prompt is correct at k when any valid object is among the first k.")


# ---- the benchmark, as the metrics need it ------------------------------------------------------

def load_benchmark(benchmark: Benchmark | str | os.PathLike) -> Benchmark:
    """A benchmark (see ``factatlas.benchmark.Benchmark.open`` for the paths it accepts) with its answers'
    display labels read, its errors as MetricsError."""
    try:
        bench = benchmark if isinstance(benchmark, Benchmark) else Benchmark.open(benchmark)
        bench.answer_labels  # noqa: B018  (read here, so a damaged file fails as a metrics error)
    except BenchmarkError as e:
        raise MetricsError(str(e)) from e
    return bench


# ---- per prompt ---------------------------------------------------------------------------------

def prompt_values(o: ScoredPrompt, ks: Sequence[int]) -> dict[str, float]:
    values = {f"p@{k}": M.precision_at_k(o.rank, k) for k in ks}
    values["mrr"] = M.reciprocal_rank(o.rank)
    values["chance@1"] = o.chance
    return values


# ---- aggregation --------------------------------------------------------------------------------

def _nan_to_none(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


def _summarize(table: ScoreTable, idx: np.ndarray, config: MetricsConfig) -> dict[str, Any]:
    return table.summarize(idx, bootstrap=config.bootstrap, confidence=config.confidence, seed=config.seed)


def summarize(outcomes: Sequence[ScoredPrompt], config: MetricsConfig) -> dict[str, Any]:
    """Macro (over predicates) and micro means of every prompt metric, with optional bootstrap CIs."""
    return _summarize(ScoreTable.of(outcomes, config.ks), np.arange(len(outcomes)), config)


def summaries(outcomes: Sequence[ScoredPrompt], config: MetricsConfig) -> dict[str, Any]:
    outcomes = ScoredColumns.of(outcomes)
    cols = ScoreTable.of(outcomes, config.ks)
    by_lang_culture: dict[str, dict[str, Any]] = defaultdict(dict)
    for (lang, culture), idx in group_index(outcomes, "lang", "culture").items():
        by_lang_culture[lang][culture] = _summarize(cols, idx, config)
    return {
        "overall": _summarize(cols, np.arange(len(outcomes)), config),
        "by_lang": {k[0]: _summarize(cols, idx, config) for k, idx in group_index(outcomes, "lang").items()},
        "by_culture": {k[0]: _summarize(cols, idx, config) for k, idx in group_index(outcomes, "culture").items()},
        "by_lang_culture": dict(by_lang_culture),
    }


def by_predicate(outcomes: Sequence[ScoredPrompt], config: MetricsConfig) -> dict[str, Any]:
    """The P@1 table: per predicate, overall, per language, culture, language x culture (no bootstrap)."""
    plain = MetricsConfig(ks=config.ks, rankc_weighting=config.rankc_weighting)
    outcomes = ScoredColumns.of(outcomes)
    cols = ScoreTable.of(outcomes, config.ks)
    out: dict[str, Any] = {}
    for (pred,), idx in group_index(outcomes, "predicate").items():
        sub = outcomes.take(idx)
        lang_culture: dict[str, dict[str, Any]] = defaultdict(dict)
        for (lang, culture), j in group_index(sub, "lang", "culture").items():
            lang_culture[lang][culture] = _summarize(cols, idx[j], plain)
        out[pred] = {
            "all": _summarize(cols, idx, plain),
            "by_lang": {k[0]: _summarize(cols, idx[j], plain) for k, j in group_index(sub, "lang").items()},
            "by_culture": {k[0]: _summarize(cols, idx[j], plain) for k, j in group_index(sub, "culture").items()},
            "by_lang_culture": dict(lang_culture),
        }
    return out


# ---- the entry point ----------------------------------------------------------------------------

def as_probe_result(row: ProbeResult | Mapping[str, Any]) -> ProbeResult:
    """A rankings row as the typed record (``factatlas.tables.probe_result_from_row`` for RANKINGS_SCHEMA rows)."""
    return row if isinstance(row, ProbeResult) else probe_result_from_row(row)


def _single(values: set[str]) -> str | None:
    ordered = sorted(v for v in values if v)
    return ordered[0] if len(ordered) == 1 else (", ".join(ordered) if ordered else None)


Rows = Iterable[ProbeResult | Mapping[str, Any]]


def _joined(rankings_rows: Rows, bench: Benchmark, seen: Mapping[str, set[str]] | None = None):
    """The rankings joined with the prompts they rank. A ``ProbeResultsFile`` streams its records a batch at a
    time into the join against the prompts a row group at a time (``aggregate.ranked_prompts``), so neither is
    held whole; the join keeps columns (``ScoredColumns``). ``seen`` collects each row's model and scoring."""
    if isinstance(rankings_rows, ProbeResultsFile):
        rows, prompts = rankings_rows, ranked_prompts(bench, rankings_rows)
    else:
        rows = [as_probe_result(r) for r in rankings_rows]
        prompts = join_prompts(bench, {r.prompt_id for r in rows})

    def noted(rows: Iterable[ProbeResult | Mapping[str, Any]]):
        for r in map(as_probe_result, rows):
            if seen is not None:
                seen["model"].add(r.model)
                seen["scoring"].add(r.scoring)
            yield r

    # only the ranked prompts are decoded (one language's run reads that language's rows)
    return join(noted(rows), prompts, kinds_in_benchmark=bench.kind_counts)


def compute_metrics(rankings_rows: Iterable[ProbeResult | Mapping[str, Any]], benchmark_dir: str | os.PathLike | Any,
                    config: MetricsConfig | None = None,
                    template_only_rows: Iterable[ProbeResult | Mapping[str, Any]] | None = None,
                    trained_on: Sequence[str] | None = None) -> dict[str, Any]:
    """Every metric of docs/metrics.md for one model's rankings (``ProbeResult``, or RANKINGS_SCHEMA rows) on one
    benchmark (JSON-ready dict).

    ``benchmark_dir``: a benchmark directory, a run directory holding ``build/``, or a loaded Benchmark.
    ``template_only_rows``: rankings of the template-only baseline (subject replaced by a placeholder).
    ``trained_on``: the splits the model was trained or tuned on (probe metadata); ``validation`` then
    uses the other splits only. None: the test split (all splits when there is none).
    """
    config = config or MetricsConfig()
    bench = load_benchmark(benchmark_dir)
    seen: dict[str, set[str]] = {"model": set(), "scoring": set()}
    joined = _joined(rankings_rows, bench, seen)
    outcomes, coverage = joined.scored, dict(joined.counts)
    del joined
    give_back()  # the pages of the rows the join read, which every later section's peak stacked on (-35 MB at 1M)
    if not outcomes:
        raise MetricsError(f"none of the {coverage['rows']} rankings rows matches a prompt of the benchmark "
                           f"({coverage}); were they produced on this benchmark?")
    result: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "model": _single(seen["model"]),
        "scoring": _single(seen["scoring"]),
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
        t_joined = _joined(template_only_rows, bench)
        t_outcomes, t_coverage = t_joined.scored, dict(t_joined.counts)
        del t_joined
        give_back()
        plain = MetricsConfig(ks=config.ks, rankc_weighting=config.rankc_weighting)
        result["template_only"] = {
            "coverage": t_coverage,
            "summary": {"overall": summarize(t_outcomes, plain),
                        "by_lang": {k[0]: summarize(g, plain) for k, g in sorted(group(t_outcomes, "lang").items())}},
            "by_predicate": {k[0]: summarize(g, plain) for k, g in sorted(group(t_outcomes, "predicate").items())},
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
METRICS_CODE = ("factatlas.probe.evaluate", "factatlas.probe.aggregate", "factatlas.probe.cross_lingual",
                "factatlas.probe.profile", "factatlas.probe.heldout", "factatlas.probe.metrics",
                "factatlas.probe.metrics_config", "factatlas.probe.protocol", "factatlas.probe.rule", "factatlas.records", "factatlas.benchmark", "factatlas.entropy",
                "factatlas.forms", "factatlas.tables")


def metrics_inputs(rankings: str | os.PathLike, template_only: str | os.PathLike | None,
                   benchmark_dir: str | os.PathLike, trained_on: Sequence[str] | None) -> dict[str, Any]:
    """What a metrics.json is computed from, as content hashes: the rankings, the template-only rankings,
    the files of the benchmark directory (the one holding benchmark.json; not validate-benchmark's record,
    validated.json), the code of ``METRICS_CODE``
    and the versions of the numerical libraries it calls (the bootstrap draws from NumPy's generator), and
    the training splits the verdict leaves out. ``factatlas report`` reuses the probe's metrics.json only when these and the configuration
    are unchanged, so a reused file is the one a fresh computation would write."""
    import hashlib
    import importlib

    from factatlas.rundir import installed_version, sha256_file
    from factatlas.validation import RECORD_NAME  # a validate run's record, not a table the metrics read

    files = hashlib.sha256()
    for path in sorted(p for p in Path(benchmark_dir).iterdir() if p.is_file() and p.name != RECORD_NAME):
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
