"""The validation report: metrics -> a PASS/FAIL verdict with reasons -> report.html + PNG plots.

``factatlas report RUN`` writes ``<run>/probe/<model>/report.html`` (one self-contained file: the PNG
figures embedded as data: URIs, the CSS inlined; the PNGs are also written beside it) and ``verdict.json``.
The page is the jinja2 template ``report_page.html`` filled by ``page_context``.

The verdict follows PROBING.md "Validating a dataset": its rules and thresholds are in ``verdict.py``;
docs/metrics.md explains each rule.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib import resources
from pathlib import Path
from typing import Any

from factatlas.errors import FactatlasError
from factatlas.probe.figures import Figure, draw, figure
from factatlas.probe.verdict import (  # noqa: F401  (the verdict rules, re-exported for the page and callers)
    FAIL,
    INFO,
    MAX_CULTURE_IMBALANCE,
    MAX_LEAKAGE_SHARE,
    MIN_LANGUAGES_FOR_RANKC,
    MIN_TEMPLATE_ONLY_GAP,
    PASS,
    WARN,
    Check,
    Verdict,
    _baseline_name,
    _comparison,
    _held_out,
    _interval,
    _pct,
    beats,
    check_balance,
    check_baselines_reported,
    check_coverage,
    check_gold_in_candidates,
    check_judge,
    check_leakage,
    check_majority,
    check_model_tables,
    check_parallel,
    check_template_only,
    open_answers,
    verdict,
)
from factatlas.records import id_order
from factatlas.stopwatch import section


class ReportError(FactatlasError):
    """The report cannot be produced (no rankings, no benchmark)."""


def _by_id(mapping: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A predicate-keyed mapping's items in numeric PID order (P103, P106, P136, P1303)."""
    return sorted(mapping.items(), key=lambda kv: id_order(kv[0]))


# ---- HTML (pure) --------------------------------------------------------------------------------
# render_html = page_context (the numbers, shaped and formatted) + probe/report_page.html (the markup).

def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _ci(summary: Mapping[str, Any], key: str) -> str:
    ci = (summary.get("ci") or {}).get(key)
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "–"


def _ci_pair(ci: Sequence[float] | None) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "–"


def _majority_label(majority: Mapping[str, Any]) -> str:
    tied = majority.get("tied", 1)
    return majority["label"] if tied <= 1 else f"{majority['label']} (tied with {tied - 1})"


@dataclass(frozen=True)
class Table:
    head: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    cls: str = ""


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], cls: str = "") -> Table:
    return Table(tuple(head), tuple(tuple(r) for r in rows), cls)


@dataclass(frozen=True)
class ExtraSection:
    """A section added after the built-in ones (e.g. by the analyses): tables and figure keys."""

    title: str
    note: str = ""
    tables: tuple[Table, ...] = ()
    figures: tuple[tuple[str, str], ...] = ()  # (image key, alt text)


@dataclass(frozen=True)
class ReportInput:
    metrics: Mapping[str, Any]
    verdict: Verdict
    plots: Mapping[str, str]  # key -> image source: a data: URI (write_report embeds every PNG)
    label: Callable[[str], str] = lambda qid: qid  # QID -> display label
    predicate_label: Callable[[str], str] = lambda pid: pid
    run_name: str = ""
    extra_notes: tuple[str, ...] = field(default_factory=tuple)
    extra_sections: tuple[ExtraSection, ...] = ()


def headline_table(validation: Mapping[str, Any], baseline: str = "template-only") -> Table:
    """Model and baselines on the held-out split: macro (DLAMA) and micro (BMLAMA) P@1 with intervals."""
    rows = []

    def add(name: str, x: Mapping[str, Any] | None) -> None:
        if x and x["n_prompts"]:
            rows.append((name, _num(x["macro"]), _ci_pair(x["ci"]["macro"]), _num(x["micro"]),
                         _ci_pair(x["ci"]["micro"]), x["n_facts"], x["n_prompts"]))

    add("model", validation["model"])
    add("majority-class baseline", validation["majority"])
    t = validation.get("template_only")
    if t:
        add(f"model, on the {baseline} prompts", t["model"])
        add(f"{baseline} baseline (paired)", t["baseline"])
    return table(("", "macro P@1 (DLAMA)", "CI", "micro P@1 (BMLAMA)", "CI", "facts", "prompts"), rows, "num")


def _num_or_na(x: float | None, ranked: bool) -> str:
    """A ranking metric: n/a when the rule ranks nothing (open answers), else the number."""
    return _num(x) if ranked else "n/a"


def _accuracy(m: Mapping[str, Any], langs: Sequence[str], cultures: Sequence[str]) -> Table:
    ks = m["config"]["ks"]
    s_all = m["summary"]
    ranked = not open_answers(m)
    rows = []

    def add(lang: str, culture: str, s: Mapping[str, Any] | None) -> None:
        if s and s.get("n_prompts"):
            rows.append((lang, culture, s["n_facts"],
                         *[_num(s[f"p@{k}"]) if k == 1 else _num_or_na(s[f"p@{k}"], ranked) for k in ks],
                         _ci(s, "p@1"), _num(s["p@1_micro"]), _num_or_na(s["mrr"], ranked), _num(s["chance@1"])))

    for lang in langs:
        for c in cultures:
            add(lang, c, s_all["by_lang_culture"].get(lang, {}).get(c))
        add(lang, "all", s_all["by_lang"].get(lang))
    add("all", "all", s_all["overall"])
    return table(("language", "culture", "facts", *[f"P@{k} macro" for k in ks], "P@1 macro 95% CI",
                  "P@1 micro", "MRR", "chance P@1"), rows, "num")


def _baselines(inp: ReportInput, cultures: Sequence[str]) -> Table:
    m, ds, plabel = inp.metrics, inp.metrics["dataset"], inp.predicate_label
    t = m.get("template_only")
    rows = []
    for pred, e in _by_id(ds["predicates"]):
        mp = m["by_predicate"].get(pred, {}).get("all", {})
        tp = (t or {}).get("by_predicate", {}).get(pred, {})
        rows.append((plabel(pred), _num(mp.get("p@1")), _num(tp.get("p@1")) if t else "not run",
                     _num(e["majority"]["p@1"]), _majority_label(e["majority"]), _num(mp.get("chance@1")),
                     *[_num(e["entropy"].get(c), 2) for c in cultures], f"{e['mean_candidates']:.1f}"))
    return table(("predicate", "model P@1", f"{_baseline_name(m)} P@1", "majority P@1", "majority object", "chance P@1",
                  *[f"entropy {c} (bits)" for c in cultures], "candidates"), rows, "num")


def _language_bias(inp: ReportInput, langs: Sequence[str]) -> Table:
    bias, preds = inp.metrics["predictions"]["language_bias"], sorted(inp.metrics["dataset"]["predicates"], key=id_order)
    rows = []
    for lang in langs:
        if lang in bias:
            b = bias[lang]
            cells = [f"{inp.label(d['top'])} ({_pct(d['top_share'])})" if (d := b["by_predicate"].get(p)) and d["top"]
                     else "–" for p in preds]
            rows.append((lang, _pct(b["mean_top_share"]), *cells))
    return table(("language", "mean top-prediction share", *[inp.predicate_label(p) for p in preds]), rows)


def _most_common(inp: ReportInput) -> list[dict[str, Any]]:
    def fmt(pairs: Sequence[Sequence[Any]]) -> str:
        return ", ".join(f"{inp.label(q)} ({k})" for q, k in pairs) or "–"

    blocks = []
    for pred, per_culture in _by_id(inp.metrics["predictions"]["most_common"]):
        rows = [(c, lang, d["n"], fmt(d["correct"]), fmt(d["wrong"]))
                for c, per_lang in per_culture.items() for lang, d in per_lang.items()]
        blocks.append({"predicate": inp.predicate_label(pred), "table": table(
            ("culture", "language", "prompts", "most common correct", "most common wrong"), rows)})
    return blocks


def _cross(m: Mapping[str, Any]) -> dict[str, Any]:
    cl = m["cross_lingual"]
    if not cl["languages"]:
        return {"available": False, "reason": "no full rankings (open-answer rules rank no candidates)"}
    by_c = cl["rankc"]["by_culture"]
    return {"available": True, "weighting": cl["rankc"]["weighting"], "rankc": _num(cl["rankc"]["mean"]),
            "coverlap": _num(cl["coverlap"]["mean"]), "by_culture": " · ".join(f"{c}: {_num(by_c[c]['mean'])}"
                                                                                for c in by_c)}


def _pararel(m: Mapping[str, Any]) -> dict[str, Any]:
    pr = m["pararel"]
    if not pr["available"]:
        return {"table": None, "reason": pr.get("reason", "")}
    rows = [(lang, _num(d["macro"]["accuracy"]), _num(d["macro"]["consistency"]),
             _num(d["macro"]["consistency_accuracy"]), len(d["by_predicate"])) for lang, d in pr["by_lang"].items()]
    return {"table": table(("language", "accuracy", "consistency", "consistency-accuracy", "predicates"), rows, "num"),
            "skipped": pr["skipped_single_template_predicates"]}


def _xfakt(m: Mapping[str, Any]) -> dict[str, Any]:
    xf = m["xfakt"]
    if not xf["available"]:
        return {"table": None, "reason": xf.get("reason", "")}
    rows = []
    for name, s in [("all", xf["overall"]), *xf["by_lang"].items()]:
        tt = s["ttest"]
        rows.append((name, _num(s["mu_assoc"]), _num(s["mu_non"]), _num(s["frs"]), _num(s["kts"]), _num(s["xfakt"]),
                     _num(tt["t"]), _num(tt["p"], 4), f"{tt['n_assoc']} / {tt['n_non']}"))
    return {"table": table(("language", "μ assoc", "μ non-assoc", "FRS", "KTS", "X-FaKT", "t", "p", "n"), rows, "num"),
            "association": "; ".join(f"{lang} → {', '.join(cs)}" for lang, cs in xf["association"].items())}


def page_context(inp: ReportInput) -> dict[str, Any]:
    """Everything the page shows, as strings, numbers and Tables (no markup)."""
    m, v = inp.metrics, inp.verdict
    ds = m["dataset"]
    langs, cultures, plabel = ds["languages"], ds["cultures"], inp.predicate_label
    val = m["validation"]
    status = "PASS" if v.passed else "FAIL"
    bp = m["by_predicate"]
    lk = ds["leakage"]
    return {
        "title": f"factatlas validation report — {m.get('model') or 'model'}",
        "run_name": inp.run_name, "benchmark_name": m["benchmark"].get("name") or "?",
        "pair": m["benchmark"].get("pair") or "", "scoring": m.get("scoring") or "?",
        "languages": langs, "cultures": cultures, "n_facts": ds["n_facts"], "n_prompts": ds["n_prompts"],
        "verdict": {"status": status, "failing": [c.name for c in v.checks if c.status == FAIL],
                    "checks": [{"status": c.status, "name": c.name, "summary": c.summary, "details": c.details[:8]}
                               for c in v.checks]},
        "headline": {"splits": val["splits"], "source": val["split_source"], "bootstrap": val["bootstrap"],
                     "confidence": f"{100 * val['confidence']:g}", "table": headline_table(val, _baseline_name(m))},
        "ranked_splits": val.get("ranked_splits", []),
        "tie_policy": m["tie_policy"],
        "accuracy": _accuracy(m, langs, cultures),
        "by_predicate": table(("predicate", *[f"{lang} · {c}" for lang in langs for c in cultures], "all"),
                              [(plabel(p), *[_num(e["by_lang_culture"].get(lang, {}).get(c, {}).get("p@1"))
                                             for lang in langs for c in cultures], _num(e["all"]["p@1"]))
                               for p, e in _by_id(bp)], "num"),
        "cross": _cross(m),
        "baselines": _baselines(inp, cultures),
        "language_bias": _language_bias(inp, langs),
        "most_common": _most_common(inp),
        "pararel": _pararel(m),
        "xfakt": _xfakt(m),
        "leakage": table(("language", "leaking facts", "facts", "share"),
                         [(lang, x["n"], x["units"], _pct(x["share"])) for lang, x in lk["by_lang"].items()], "num"),
        "balance": table(("predicate", *cultures, "max/min"),
                         [(plabel(p), *[e["facts"].get(c, 0) for c in cultures],
                           "–" if e["imbalance"] is None else f"{e['imbalance']:.2f}")
                          for p, e in _by_id(ds["predicates"])], "num"),
        "extra_sections": inp.extra_sections,
        "notes": inp.extra_notes,
        "images": inp.plots,
    }


def render_html(inp: ReportInput) -> str:
    """The report page: probe/report_page.html filled with ``page_context`` (autoescaped), CSS inlined."""
    import jinja2

    files = resources.files("factatlas.probe")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                             trim_blocks=False, lstrip_blocks=False)
    template = env.from_string(files.joinpath("report_page.html").read_text("utf-8"))
    return template.render(css=files.joinpath("report.css").read_text("utf-8"), **page_context(inp))


def embed_png(path: Path) -> str:
    """A PNG file as a data: URI, so the page needs no file beside it."""
    import base64

    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


# ---- plots --------------------------------------------------------------------------------------

# every file and folder the report makes in a model folder: a new report replaces all of them at once (one
# that the new report does not make, e.g. xfakt.png without --associate, goes with the old report)
PLOT_FILES = ("p_at_1.png", "rankc.png", "coverlap.png", "baselines.png", "entropy.png", "balance.png",
              "language_bias.png", "xfakt.png")
REPORT_OUTPUTS = frozenset({*PLOT_FILES, "report.html", "verdict.json", "analyses"})


def report_figures(metrics: Mapping[str, Any], predicate_label: Callable[[str], str] = lambda p: p
                   ) -> dict[str, Figure]:
    """Every figure of the report, key -> the figure (``probe.figures.draw`` makes the PNG files)."""
    ds = metrics["dataset"]
    langs, cultures = ds["languages"], ds["cultures"]
    preds = sorted(ds["predicates"], key=id_order)  # P103 before P1303, as people count
    pred_labels = [predicate_label(p) for p in preds]
    out: dict[str, Figure] = {}

    def put(key: str, plot: str, name: str, *args: Any, **options: Any) -> None:
        if name not in PLOT_FILES:  # the swap of the report's files leaves the old ones beside it
            raise ValueError(f"{name}: a plot the report makes must be listed in PLOT_FILES")
        out[key] = figure(plot, name, *args, **options)

    bp = metrics["by_predicate"]
    cols = [f"{lang}·{c}" for lang in langs for c in cultures]
    values = [[bp.get(p, {}).get("by_lang_culture", {}).get(lang, {}).get(c, {}).get("p@1")
               for lang in langs for c in cultures] for p in preds]
    put("p_at_1", "heatmap", "p_at_1.png", values, pred_labels, cols, "P@1 by predicate, language · culture",
        colorbar_label="P@1")
    cl = metrics["cross_lingual"]
    if len(cl["languages"]) >= 2:
        ls = cl["languages"]
        put("rankc", "heatmap", "rankc.png", [[cl["rankc"]["matrix"][a][b] for b in ls] for a in ls], ls, ls,
            f"RankC between languages ({cl['rankc']['weighting']})", cmap="magma", colorbar_label="RankC")
        put("coverlap", "heatmap", "coverlap.png", [[cl["coverlap"]["matrix"][a][b] for b in ls] for a in ls], ls,
            ls, "COverlap between languages", cmap="magma", colorbar_label="COverlap")
    series: dict[str, list[float | None]] = {
        "model": [bp.get(p, {}).get("all", {}).get("p@1") for p in preds]}
    if metrics.get("template_only"):
        series[_baseline_name(metrics)] = [metrics["template_only"]["by_predicate"].get(p, {}).get("p@1") for p in preds]
    series["majority class"] = [ds["predicates"][p]["majority"]["p@1"] for p in preds]
    series["chance"] = [bp.get(p, {}).get("all", {}).get("chance@1") for p in preds]
    put("baselines", "grouped_bars", "baselines.png", pred_labels, series, "P@1: model vs baselines", ylabel="P@1")
    put("entropy", "grouped_bars", "entropy.png", pred_labels,
        {c: [ds["predicates"][p]["entropy"].get(c) for p in preds] for c in cultures},
        "DLAMA entropy per predicate and culture", ylabel="bits", ylim=None)
    put("balance", "grouped_bars", "balance.png", pred_labels,
        {c: [ds["predicates"][p]["facts"].get(c, 0) for p in preds] for c in cultures},
        "Facts per culture", ylabel="facts", ylim=None, value_fmt="{:.0f}")
    bias = metrics["predictions"]["language_bias"]
    bl = [lang for lang in langs if lang in bias]
    if bl:
        put("language_bias", "heatmap", "language_bias.png",
            [[(bias[lang]["by_predicate"].get(p) or {}).get("top_share") for p in preds] for lang in bl],
            bl, pred_labels, "Share of the most frequent prediction (language bias)", cmap="cividis",
            colorbar_label="top-1 share")
    xf = metrics["xfakt"]
    if xf["available"]:
        groups = ["all", *xf["by_lang"]]
        stats = [xf["overall"], *xf["by_lang"].values()]
        put("xfakt", "grouped_bars", "xfakt.png", groups, {"associative error": [s["mu_assoc"] for s in stats],
                                                          "non-associative error": [s["mu_non"] for s in stats]},
            "Error rate: associative vs non-associative", ylabel="error rate")
    return out


# ---- the command's work (I/O at the edge) -------------------------------------------------------

@dataclass(frozen=True)
class ReportResult:
    model: str
    html: Path
    verdict: Verdict
    plots: tuple[Path, ...]
    metrics_source: str = ""  # the probe's metrics.json reused, or why the metrics were computed again


def predicate_labeller(meta: Mapping[str, Any], where: Path) -> Callable[[str], str]:
    """"P19 place of birth" from the labels the build recorded in benchmark.json; a predicate the registry
    did not know (imported benchmarks) stays its bare PID."""
    labels = meta.get("predicate_labels")
    if not isinstance(labels, dict):
        raise ReportError(f"{where}: no 'predicate_labels'; the benchmark predates display labels in "
                          "benchmark.json, rebuild it with `factatlas build RUN` (or import it again).")
    return lambda pid: f"{pid} {labels[pid]}" if labels.get(pid) else pid


def model_dirs(run: Path, model: str | None = None) -> list[Path]:
    """``model_folder.model_dirs``, its errors as ReportError."""
    from factatlas.probe.model_folder import ModelFolderError
    from factatlas.probe.model_folder import model_dirs as folders

    try:
        return folders(run, model)
    except ModelFolderError as e:
        raise ReportError(str(e)) from None


def probe_metrics(folder: Path, config: Any, inputs: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The probe's metrics.json when it was computed from exactly these inputs (``metrics_inputs``: the
    same rankings, benchmark files, code and training splits) with this configuration, else None; and a
    line saying which, or why not."""
    import json

    path = folder / "metrics.json"
    if not path.is_file():
        return None, "computed: no metrics.json"
    try:
        metrics = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as e:
        return None, f"computed: {path.name} unreadable ({e})"
    if not isinstance(metrics, dict) or "inputs" not in metrics:
        return None, f"computed: {path.name} records no inputs (written before factatlas recorded them)"
    if metrics["inputs"] != json.loads(json.dumps(inputs)):
        return None, f"computed: {path.name} was computed from other inputs (rankings, benchmark, code or training splits)"
    if metrics.get("config") != json.loads(json.dumps(config.to_json())):
        return None, f"computed: {path.name} has another configuration"
    metrics.pop("judge", None)  # factatlas judge adds it; the page reads judgements.parquet itself
    return metrics, f"reused {path.name}: same inputs and configuration"


def check_recorded(run: Any, folder: Path) -> None:
    """Refuse a model folder whose rankings are not the ones its probe recorded in manifest.json (issue 42):
    the metrics, probe.json and the manifest's configuration would describe other rankings than those the
    report reads. metrics.json itself is tied to the rankings by its recorded inputs (``probe_metrics``)."""
    stage = f"probe/{folder.name}"
    changed = run.changed_outputs(stage, ("rankings.parquet", "rankings_template_only.parquet"))
    if changed:
        raise ReportError(f"{'; '.join(changed)}: the folder is not what manifest.json records for {stage} "
                          "(rankings replaced by hand or by a writer that did not finish); probe the model again "
                          f"(`factatlas probe {run.root} --model ... --out-name {folder.name}`) to make them "
                          "agree, then report")


def judge_summary_of(folder: Path) -> Mapping[str, Any] | None:
    """judge_summary of ``folder/judgements.parquet`` when it is there and of the current rankings."""
    from factatlas.probe.judge import check_current, judge_summary, read_judgements
    from factatlas.tables import read_probe_results

    path = folder / "judgements.parquet"
    if not path.exists():
        return None
    judged = read_judgements(path)
    answers = {r.prompt_id: r.prediction for r in read_probe_results(folder / "rankings.parquet")}
    check_current(judged, answers, str(path))
    return judge_summary(judged)


def judge_sections(folder: Path) -> tuple[ExtraSection, ...]:
    """The LLM-as-judge section when ``factatlas judge`` left judgements.parquet beside the rankings."""
    from factatlas.probe.judge import check_current, judge_summary, read_judgements
    from factatlas.tables import read_probe_results

    path = folder / "judgements.parquet"
    if not path.exists():
        return ()
    judged = read_judgements(path)
    answers = {r.prompt_id: r.prediction for r in read_probe_results(folder / "rankings.parquet")}
    check_current(judged, answers, str(path))
    s = judge_summary(judged)
    acc, agree = s["accuracy"], s["agreement"]
    head = ("", "accuracy", "agreement with judge (raw)", "Cohen's kappa", "judge yes / matcher no",
            "judge no / matcher yes", "parsed verdicts")
    rows = [("judge", _num(acc["judge"]), "", "", "", "", "")]
    for m in ("strict", "lenient"):
        a = agree[m]
        rows.append((m, _num(acc[m]), _num(a["raw"]), _num(a["kappa"]), a["judge_only"], a["matcher_only"], a["n"]))
    by_lang = table(("language", "answers", "judge", "strict", "lenient"),
                    [(lang, x["n"], _num(x["judge"]), _num(x["strict"]), _num(x["lenient"]))
                     for lang, x in s["by_lang"].items()], "num")
    by_split = table(("split", "answers", "judge", "strict", "lenient"),
                     [(split, x["n"], _num(x["judge"]), _num(x["strict"]), _num(x["lenient"]))
                      for split, x in s["by_split"].items()], "num")
    note = (f"Judge {s['judge_model']} ({s['protocol']}) read {s['asked']} of {s['rows']} answers; "
            f"{s['unparsable']} replies did not parse as yes/no (counted not correct); {s['empty_answers']} "
            "empty answers were judged no without asking. Beside strict and lenient matching, not instead of "
            "them; kappa n/a means both raters gave one label to every answer.")
    return (ExtraSection("LLM-as-judge", note, (table(head, rows, "num"), by_lang, by_split)),)


def _metrics(folder: Path, template_only: Path | None, bench: Any, config: Any, splits: Sequence[str]
             ) -> dict[str, Any]:
    """The metrics of ``folder``'s rankings, streamed: the rankings' records are never all held, only the
    joined ones."""
    from factatlas.probe.evaluate import compute_metrics
    from factatlas.tables import ProbeResultsFile

    return compute_metrics(ProbeResultsFile(folder / "rankings.parquet"), bench, config,
                           template_only_rows=ProbeResultsFile(template_only) if template_only else None,
                           trained_on=splits)


def write_report(run: str | os.PathLike, model: str | None = None, config: Any = None,
                 trained_on: Sequence[str] | None = None, benchmark: Any = None, plots: bool = True
                 ) -> list[ReportResult]:
    """Compute the metrics (with the template-only baseline when present), the verdict and the figures, and
    write ``report.html``, ``verdict.json`` and the PNGs into ``<run>/probe/<model>/``. ``benchmark``: the
    run's benchmark (``factatlas.benchmark.Benchmark``), already open. ``plots=False`` (``--no-plots``): the
    same page, verdict and analyses without figures."""
    from factatlas.atomic import write_json, write_text
    from factatlas.forked import run_forked
    from factatlas.memory import give_back
    from factatlas.probe.analysis.hook import FOLDER as ANALYSES
    from factatlas.probe.analysis.hook import with_analyses
    from factatlas.probe.evaluate import (
        VALIDATION_BOOTSTRAP,
        MetricsConfig,
        load_benchmark,
        metrics_inputs,
    )
    from factatlas.probe.model_folder import trained_splits
    from factatlas.rundir import RunDir, carry_over, check_replaceable, crash_point, replace_folder

    # the page shows intervals in every table, as the verdict needs them
    config = config if config is not None else MetricsConfig(bootstrap=VALIDATION_BOOTSTRAP)
    run = Path(run)
    if not (run / "build" / "benchmark.json").exists():
        raise ReportError(f"{run}/build/benchmark.json: missing; build the benchmark with `factatlas build {run}` "
                          "(or import one) before reporting")
    bench = load_benchmark(run / "build" if benchmark is None else benchmark)
    plabel = predicate_labeller(bench.meta, run / "build" / "benchmark.json")
    # one writer of the model folders: probe and judge take the same lock (a probe swapping a folder in
    # while the report writes into it would lose the report)
    with RunDir(run).lock():
        results = []
        for folder in model_dirs(run, model):
            check_recorded(RunDir(run), folder)
            # every folder the report writes into, tried before the work: a read-only analyses/ refused after
            # the plots had replaced the old ones left a new xfakt.png under the old report.html
            check_replaceable(folder, "write the report's files into it")
            t_path = folder / "rankings_template_only.parquet"
            t_path = t_path if t_path.exists() else None
            splits = trained_splits(folder) if trained_on is None else list(trained_on)
            with section("report/metrics"):
                inputs = metrics_inputs(folder / "rankings.parquet", t_path, run / "build", splits)
                metrics, source = probe_metrics(folder, config, inputs)
                if metrics is None:
                    # in a child: the heap the metrics fragment (120 MB resident for 36 MB live at a million
                    # prompts) ends with it, and the analyses start from the memory the report had before
                    done = run_forked(partial(_metrics, folder, t_path, bench, config, splits),
                                      f"the metrics of probe/{folder.name}")
                    metrics, source = done.value, f"{source}; {done.where}"
                    metrics["inputs"] = inputs
            bench.forget("fact_keys")  # every fact's key (the profile's, the majority baseline's): not the analyses'
            give_back()  # in-process metrics free their joins' columns but keep the pages (210 MB at a million)
            v = verdict(metrics)
            judged = judge_summary_of(folder) if open_answers(metrics) else None
            if judged is not None:
                v = Verdict((*v.checks, check_judge(judged, metrics["validation"]["splits"])))
            extra = judge_sections(folder)
            # the report's files are one output: written into a copy of the folder (its other files as hard
            # links) that replaces it whole, so a full disk or a kill between two files leaves the old report
            with replace_folder(folder) as staging:
                carry_over(folder, staging, leave=REPORT_OUTPUTS)
                figures = report_figures(metrics, plabel) if plots else {}
                with section("report/plots"):
                    draw(figures.values(), staging)
                crash_point("report:plots-written")
                images = {key: embed_png(staging / f.name) for key, f in figures.items()}
                page = render_html(ReportInput(metrics, v, images, lambda q: bench.label(q), plabel, run.name,
                                               extra_sections=extra))
                with section("report/analyses"):
                    page = with_analyses(page, run, folder, metrics["config"]["rankc_weighting"], splits, bench,
                                         out_dir=staging / ANALYSES, plots=plots)
                write_text(staging / "report.html", page)
                crash_point("report:page-written")
                write_json(staging / "verdict.json", v.to_json())
            results.append(ReportResult(folder.name, folder / "report.html", v, tuple(folder / f.name for f in figures.values()),
                                        source))
    return results
