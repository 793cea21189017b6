"""The validation report: metrics -> a PASS/FAIL verdict with reasons -> report.html + PNG plots.

``factatlas report RUN`` writes ``<run>/probe/<model>/report.html`` (PNGs beside it, referenced by
relative paths, CSS inlined: the folder opens in any browser without the toolkit) and ``verdict.json``.

The verdict follows PROBING.md "Validating a dataset". Thresholds are the named constants below;
docs/metrics.md explains each rule.
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from factatlas.errors import FactatlasError

# A leaking prompt (object label inside the subject label) gives the answer away; up to this share of
# (fact, language) units per language is tolerated and reported, above it the dataset fails.
MAX_LEAKAGE_SHARE = 0.05
# The full prompt must beat the template-only baseline (subject replaced by a placeholder) by at least
# this much macro P@1 (absolute), otherwise the model answers from the template, not from the subject.
MIN_TEMPLATE_ONLY_GAP = 0.05
# Facts per culture within a predicate: a larger max/min ratio is flagged (warning, not a failure).
MAX_CULTURE_IMBALANCE = 3.0
# RankC needs two languages; the report must carry a RankC heat-map.
MIN_LANGUAGES_FOR_RANKC = 2

PASS, FAIL, WARN, INFO = "pass", "fail", "warn", "info"


class ReportError(FactatlasError):
    """The report cannot be produced (no rankings, no benchmark)."""


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # pass | fail | warn | info
    summary: str
    details: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return not any(c.status == FAIL for c in self.checks)

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(f"{c.name}: {c.summary}" for c in self.checks if c.status == FAIL)

    def to_json(self) -> dict[str, Any]:
        return {"verdict": "PASS" if self.passed else "FAIL", "reasons": list(self.reasons),
                "checks": [{"name": c.name, "status": c.status, "summary": c.summary, "details": list(c.details)}
                           for c in self.checks],
                "thresholds": {"max_leakage_share": MAX_LEAKAGE_SHARE, "min_template_only_gap": MIN_TEMPLATE_ONLY_GAP,
                               "max_culture_imbalance": MAX_CULTURE_IMBALANCE,
                               "min_languages_for_rankc": MIN_LANGUAGES_FOR_RANKC}}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


# ---- the verdict (pure) -------------------------------------------------------------------------

def check_parallel(ds: Mapping[str, Any]) -> Check:
    par = ds["parallel"]
    bad = par["missing_language"] + par["candidate_mismatch"] + par["gold_mismatch"]
    if bad:
        return Check("multi-parallel", FAIL,
                     f"{bad} of {par['groups']} (fact, template) groups differ between languages "
                     f"({par['missing_language']} miss a language, {par['candidate_mismatch']} have other "
                     f"candidate QIDs, {par['gold_mismatch']} other golds); rebuild with `factatlas build`",
                     tuple(par["examples"]))
    return Check("multi-parallel", PASS, f"all {par['groups']} (fact, template) groups have every language "
                 "with the same candidate and gold QIDs")


def check_gold_in_candidates(ds: Mapping[str, Any]) -> Check:
    g = ds["gold_in_candidates"]
    if g["gold_outside"]:
        return Check("gold among candidates", FAIL,
                     f"{g['gold_outside']} valid objects are missing from their prompt's candidates "
                     f"({g['prompts_without_gold']} prompts cannot be answered at all)", tuple(g["examples"]))
    return Check("gold among candidates", PASS, f"every valid object of all {ds['n_prompts']} prompts is a candidate")


def check_leakage(ds: Mapping[str, Any]) -> Check:
    lk = ds["leakage"]
    over = {lang: v for lang, v in lk["by_lang"].items() if v["share"] > MAX_LEAKAGE_SHARE}
    per_lang = ", ".join(f"{lang} {_pct(v['share'])}" for lang, v in lk["by_lang"].items())
    if over:
        return Check("leakage", FAIL, f"object label inside the subject label above {_pct(MAX_LEAKAGE_SHARE)} in "
                     f"{', '.join(sorted(over))} ({per_lang}); drop or rephrase those facts", tuple(lk["examples"]))
    return Check("leakage", PASS, f"leakage share {_pct(lk['share'])} overall ({per_lang}), "
                 f"at most {_pct(MAX_LEAKAGE_SHARE)} allowed per language", tuple(lk["examples"]))


def _interval(x: Mapping[str, Any], avg: str) -> str:
    ci = x["ci"][avg]
    return f"{_pct(x[avg])} [{_pct(ci[0])}, {_pct(ci[1])}]" if ci else _pct(x[avg])


def beats(model: Mapping[str, Any], baseline: Mapping[str, Any]) -> dict[str, bool]:
    """Per average (macro, micro): the model's interval lies wholly above the baseline's."""
    return {avg: bool(model["ci"][avg] and baseline["ci"][avg] and model["ci"][avg][0] > baseline["ci"][avg][1])
            for avg in ("macro", "micro")}


def _held_out(metrics: Mapping[str, Any]) -> str:
    v = metrics["validation"]
    return f"held-out split {', '.join(v['splits']) or 'none'} ({v['split_source']})"


def _comparison(model: Mapping[str, Any], base: Mapping[str, Any], name: str) -> str:
    return "; ".join(f"{avg} P@1 model {_interval(model, avg)} vs {name} {_interval(base, avg)}"
                     for avg in ("macro", "micro"))


def check_template_only(metrics: Mapping[str, Any]) -> Check:
    """Paired, on the held-out split: beyond both intervals (macro and micro) and by MIN_TEMPLATE_ONLY_GAP."""
    v = metrics["validation"]
    t = v["template_only"]
    if not t or not t["n_pairs"]:
        return Check("template-only baseline", FAIL,
                     "no template-only rankings on the held-out split (rankings_template_only.parquet); rerun "
                     "`factatlas probe` so the baseline with the subject replaced by a placeholder is scored")
    model, base = t["model"], t["baseline"]
    gap = model["macro"] - base["macro"]
    excluded = t["excluded"]
    details = [f"{_held_out(metrics)}; {t['n_pairs']} prompts scored both ways (paired)"]
    if excluded["prompts"]:
        per_lang = ", ".join(f"{lang} {n}" for lang, n in excluded["by_lang"].items())
        details.append(f"{excluded['prompts']} held-out prompts excluded from the comparison ({per_lang}): "
                       f"{excluded['reason']}")
    text = f"{_comparison(model, base, 'template-only')} (macro gap {100 * gap:+.1f} points"
    won = beats(model, base)
    if gap < MIN_TEMPLATE_ONLY_GAP or not all(won.values()):
        why = [f"gap under {100 * MIN_TEMPLATE_ONLY_GAP:.0f}"] if gap < MIN_TEMPLATE_ONLY_GAP else []
        why += [f"{avg} intervals overlap" for avg, ok in won.items() if not ok]
        return Check("template-only baseline", FAIL, f"{text}; {', '.join(why)}): the model does not answer "
                     "from the subject beyond chance variation (or the templates give the answer away)",
                     tuple(details))
    return Check("template-only baseline", PASS, f"{text}, >= {100 * MIN_TEMPLATE_ONLY_GAP:.0f} required; "
                 "intervals apart)", tuple(details))


def check_majority(metrics: Mapping[str, Any]) -> Check:
    """On the held-out split: the model's intervals above the majority-class baseline's (macro and micro)."""
    v = metrics["validation"]
    model, base = v["model"], v["majority"]
    if not model["n_prompts"]:
        return Check("majority-class baseline", FAIL, f"no ranked prompt on the {_held_out(metrics)}: nothing "
                     "the model was not trained on is left to validate with")
    text = _comparison(model, base, "majority class")
    won = beats(model, base)
    details = (f"{_held_out(metrics)}; {model['n_facts']} facts, {model['n_prompts']} prompts",)
    if not all(won.values()):
        return Check("majority-class baseline", FAIL, f"{text}: {', '.join(a for a, ok in won.items() if not ok)} "
                     "intervals overlap; always answering the most frequent object does as well", details)
    return Check("majority-class baseline", PASS, f"{text}: intervals apart", details)


def check_baselines_reported(ds: Mapping[str, Any]) -> Check:
    preds = ds["predicates"]
    missing = [p for p, e in preds.items() if not e["entropy"] or e["majority"]["p@1"] is None]
    if missing or not preds:
        return Check("majority baseline and entropy", FAIL,
                     f"missing for {', '.join(missing) or 'every predicate'}")
    return Check("majority baseline and entropy", INFO,
                 f"reported for {len(preds)} predicates; majority-class P@1 macro {_pct(ds['majority_macro'])}")


def check_balance(ds: Mapping[str, Any]) -> Check:
    counts = ds["balance"]["facts_per_culture"]
    text = ", ".join(f"{c}: {n}" for c, n in counts.items())
    skewed = [f"{p}: {e['facts']}" for p, e in ds["predicates"].items()
              if e["imbalance"] is None or e["imbalance"] > MAX_CULTURE_IMBALANCE]
    if skewed:
        return Check("balance between cultures", WARN, f"facts per culture {text}; {len(skewed)} predicates "
                     f"exceed a {MAX_CULTURE_IMBALANCE:g}x imbalance or lack a culture", tuple(skewed))
    return Check("balance between cultures", INFO, f"facts per culture {text}")


def check_model_tables(metrics: Mapping[str, Any]) -> Check:
    langs = metrics["cross_lingual"]["languages"]
    if len(langs) < MIN_LANGUAGES_FOR_RANKC:
        return Check("P@1 table and RankC heat-map", FAIL,
                     f"RankC needs >= {MIN_LANGUAGES_FOR_RANKC} probed languages, got {len(langs)}: "
                     "probe every language of the benchmark")
    return Check("P@1 table and RankC heat-map", PASS, f"P@1 for {len(metrics['by_predicate'])} predicates and "
                 f"RankC between {len(langs)} languages (mean {metrics['cross_lingual']['rankc']['mean']:.3f})")


def check_coverage(metrics: Mapping[str, Any]) -> Check:
    cov = metrics["coverage"]
    skipped = {k: cov[k] for k in ("unknown_prompt", "duplicate_prompt", "foreign_candidates",
                                    "correct_at_1_mismatch") if cov.get(k)}
    detail = tuple(f"{k}: {v}" for k, v in skipped.items())
    eligible = cov.get("eligible_prompts", cov["benchmark_prompts"])
    other = cov.get("other_kind_prompts", 0)
    unused = f" ({other} prompts of another kind, e.g. questions, are not used by this scoring rule)" if other else ""
    if cov["used"] < eligible or skipped:
        return Check("rankings coverage", WARN, f"{cov['used']} of {eligible} prompts ranked "
                     f"({_pct(cov['coverage'])}){unused}", detail)
    return Check("rankings coverage", INFO, f"all {eligible} prompts ranked{unused}")


def verdict(metrics: Mapping[str, Any]) -> Verdict:
    """Apply every rule of PROBING.md "Validating a dataset" to a compute_metrics() result."""
    ds = metrics["dataset"]
    return Verdict((
        check_parallel(ds), check_gold_in_candidates(ds), check_leakage(ds), check_template_only(metrics),
        check_majority(metrics), check_baselines_reported(ds), check_balance(ds), check_model_tables(metrics),
        check_coverage(metrics),
    ))


# ---- HTML (pure) --------------------------------------------------------------------------------

def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _num(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]], cls: str = "", raw: bool = False) -> str:
    """Cells are escaped unless ``raw`` (then the caller built safe HTML)."""
    cell = (lambda v: str(v)) if raw else _e
    out = [f'<div class=scroll><table class="{cls}"><thead><tr>' + "".join(f"<th>{_e(h)}</th>" for h in head)
           + "</tr></thead><tbody>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in r) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _img(plots: Mapping[str, str], key: str, alt: str) -> str:
    return f'<figure><img src="{_e(plots[key])}" alt="{_e(alt)}"></figure>' if key in plots else ""


def _ci(summary: Mapping[str, Any], key: str) -> str:
    ci = (summary.get("ci") or {}).get(key)
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "–"


def _majority_label(majority: Mapping[str, Any]) -> str:
    tied = majority.get("tied", 1)
    return majority["label"] if tied <= 1 else f"{majority['label']} (tied with {tied - 1})"


@dataclass(frozen=True)
class ReportInput:
    metrics: Mapping[str, Any]
    verdict: Verdict
    plots: Mapping[str, str]  # key -> relative PNG file name
    label: Callable[[str], str] = lambda qid: qid  # QID -> display label
    predicate_label: Callable[[str], str] = lambda pid: pid
    run_name: str = ""
    extra_notes: tuple[str, ...] = field(default_factory=tuple)


def render_html(inp: ReportInput) -> str:
    m, v = inp.metrics, inp.verdict
    ds = m["dataset"]
    langs = ds["languages"]
    cultures = ds["cultures"]
    plabel = inp.predicate_label
    parts: list[str] = []
    title = f"factatlas validation report — {m.get('model') or 'model'}"
    parts.append(f"<header><h1>{_e(title)}</h1><p class=sub>run <b>{_e(inp.run_name)}</b> · benchmark "
                 f"<b>{_e(m['benchmark'].get('name') or '?')}</b> ({_e(m['benchmark'].get('pair') or '')}) · "
                 f"scoring <b>{_e(m.get('scoring') or '?')}</b> · languages {_e(', '.join(langs))} · cultures "
                 f"{_e(', '.join(cultures))} · {ds['n_facts']} facts, {ds['n_prompts']} prompts</p></header>")
    # verdict
    status = "PASS" if v.passed else "FAIL"
    items = "".join(f'<li class="{c.status}"><span class=tag>{_e(c.status.upper())}</span> <b>{_e(c.name)}</b>: '
                    f"{_e(c.summary)}" + (f"<ul class=details>{''.join(f'<li>{_e(d)}</li>' for d in c.details[:8])}"
                                           "</ul>" if c.details else "") + "</li>" for c in v.checks)
    parts.append(f'<section class="verdict {status.lower()}"><h2>Verdict: {status}</h2>'
                 + (f"<p>Failing: {_e('; '.join(c.name for c in v.checks if c.status == FAIL))}</p>" if not v.passed else
                    "<p>Every rule of PROBING.md “Validating a dataset” holds.</p>")
                 + f"<ul class=checks>{items}</ul></section>")
    # summary per language and culture
    ks = m["config"]["ks"]
    head = ["language", "culture", "facts", *[f"P@{k}" for k in ks], "MRR", "P@1 95% CI", "chance P@1"]
    rows = []
    s_all = m["summary"]
    for lang in langs:
        for c in [*cultures, "all"]:
            s = s_all["by_lang"].get(lang) if c == "all" else s_all["by_lang_culture"].get(lang, {}).get(c)
            if not s or not s.get("n_prompts"):
                continue
            rows.append([lang, c, s["n_facts"], *[_num(s[f"p@{k}"]) for k in ks], _num(s["mrr"]),
                         _ci(s, "p@1"), _num(s["chance@1"])])
    o = s_all["overall"]
    rows.append(["all", "all", o["n_facts"], *[_num(o[f"p@{k}"]) for k in ks], _num(o["mrr"]), _ci(o, "p@1"),
                 _num(o["chance@1"])])
    parts.append("<section><h2>Accuracy by language and culture</h2><p class=note>Macro average over predicates "
                 "(each predicate: mean over its facts). Tie policy: " + _e(m["tie_policy"]) + "</p>"
                 + _table(head, rows, "num") + "</section>")
    # P@1 by culture x predicate
    head = ["predicate"] + [f"{lang} · {c}" for lang in langs for c in cultures] + ["all"]
    rows = []
    for pred, e in m["by_predicate"].items():
        cells = [_num(e["by_lang_culture"].get(lang, {}).get(c, {}).get("p@1")) for lang in langs for c in cultures]
        rows.append([plabel(pred), *cells, _num(e["all"]["p@1"])])
    parts.append("<section><h2>P@1 by predicate × culture</h2>" + _table(head, rows, "num")
                 + _img(inp.plots, "p_at_1", "P@1 heat-map by predicate and culture") + "</section>")
    # RankC / COverlap
    cl = m["cross_lingual"]
    by_c = cl["rankc"]["by_culture"]
    rankc_cult = " · ".join(f"{c}: {_num(by_c[c]['mean'])}" for c in by_c)
    parts.append("<section><h2>Cross-lingual consistency</h2><p>RankC (" + _e(cl["rankc"]["weighting"]) +
                 f" weights) mean over language pairs: <b>{_num(cl['rankc']['mean'])}</b> ({_e(rankc_cult)}); "
                 f"COverlap mean: <b>{_num(cl['coverlap']['mean'])}</b>.</p><div class=row>"
                 + _img(inp.plots, "rankc", "RankC heat-map") + _img(inp.plots, "coverlap", "COverlap heat-map")
                 + "</div></section>")
    # baselines
    t = m.get("template_only")
    head = ["predicate", "model P@1", "template-only P@1", "majority P@1", "majority object", "chance P@1",
            *[f"entropy {c} (bits)" for c in cultures], "candidates"]
    rows = []
    for pred, e in ds["predicates"].items():
        mp = m["by_predicate"].get(pred, {}).get("all", {})
        tp = (t or {}).get("by_predicate", {}).get(pred, {}) if t else {}
        rows.append([plabel(pred), _num(mp.get("p@1")), _num(tp.get("p@1")) if t else "not run",
                     _num(e["majority"]["p@1"]), _majority_label(e["majority"]), _num(mp.get("chance@1")),
                     *[_num(e["entropy"].get(c), 2) for c in cultures], f"{e['mean_candidates']:.1f}"])
    parts.append("<section><h2>Baselines and difficulty</h2><p class=note>Template-only: the subject replaced by "
                 "a neutral placeholder. Majority: always answer the object valid for most facts of the "
                 "predicate. Entropy: DLAMA's, per culture (higher = harder to guess).</p>"
                 + _table(head, rows, "num") + f"<div class={'row' if len(rows) <= 6 else 'stack'}>"
                 + _img(inp.plots, "baselines", "baselines per predicate")
                 + _img(inp.plots, "entropy", "entropy per predicate and culture") + "</div></section>")
    # language bias
    bias = m["predictions"]["language_bias"]
    head = ["language", "mean top-prediction share", *[plabel(p) for p in ds["predicates"]]]
    rows = []
    for lang in langs:
        if lang not in bias:
            continue
        b = bias[lang]
        cells = []
        for pred in ds["predicates"]:
            d = b["by_predicate"].get(pred)
            cells.append(f"{inp.label(d['top'])} ({_pct(d['top_share'])})" if d and d["top"] else "–")
        rows.append([lang, _pct(b["mean_top_share"]), *cells])
    parts.append("<section><h2>Prediction distributions per language (language bias)</h2><p class=note>The most "
                 "frequent top-1 prediction per predicate and its share of the language's prompts; a high share "
                 "means the model answers the same object whatever the subject.</p>" + _table(head, rows)
                 + _img(inp.plots, "language_bias", "top prediction share per language") + "</section>")
    # most common predictions
    mc = m["predictions"]["most_common"]
    blocks = []
    for pred, per_culture in mc.items():
        rows = []
        for c, per_lang in per_culture.items():
            for lang, d in per_lang.items():
                def fmt(pairs: Sequence[Sequence[Any]], n: int = d["n"]) -> str:
                    return ", ".join(f"{inp.label(q)} ({k})" for q, k in pairs) or "–"
                rows.append([c, lang, d["n"], fmt(d["correct"]), fmt(d["wrong"])])
        opened = " open" if len(mc) <= 4 else ""
        blocks.append(f"<details{opened}><summary>{_e(plabel(pred))}</summary>"
                      + _table(["culture", "language", "prompts", "most common correct", "most common wrong"], rows)
                      + "</details>")
    parts.append("<section><h2>Most common predictions</h2><p class=note>DLAMA's “educated guess” tables: "
                 "frequent wrong predictions reveal a default answer per culture.</p>" + "".join(blocks) + "</section>")
    # paraphrases
    pr = m["pararel"]
    if pr["available"]:
        rows = [[lang, _num(d["macro"]["accuracy"]), _num(d["macro"]["consistency"]),
                 _num(d["macro"]["consistency_accuracy"]), len(d["by_predicate"])] for lang, d in pr["by_lang"].items()]
        body = _table(["language", "accuracy", "consistency", "consistency-accuracy", "predicates"], rows, "num")
        if pr["skipped_single_template_predicates"]:
            body += f"<p class=note>Single-template predicates skipped: {_e(', '.join(pr['skipped_single_template_predicates']))}.</p>"
    else:
        body = f"<p class=note>Not available: {_e(pr.get('reason', ''))}.</p>"
    parts.append("<section><h2>Paraphrase consistency (mParaRel)</h2>" + body + "</section>")
    # X-FaKT
    xf = m["xfakt"]
    if xf["available"]:
        rows = []
        for name, s in [("all", xf["overall"]), *xf["by_lang"].items()]:
            tt = s["ttest"]
            rows.append([name, _num(s["mu_assoc"]), _num(s["mu_non"]), _num(s["frs"]), _num(s["kts"]),
                         _num(s["xfakt"]), _num(tt["t"]), _num(tt["p"], 4), f"{tt['n_assoc']} / {tt['n_non']}"])
        assoc = "; ".join(f"{lang} → {', '.join(cs)}" for lang, cs in xf["association"].items())
        body = (f"<p class=note>Association: {_e(assoc)}. Error rates per (fact, language); Welch's t-test "
                "between associative and non-associative errors.</p>"
                + _table(["language", "μ assoc", "μ non-assoc", "FRS", "KTS", "X-FaKT", "t", "p", "n"], rows, "num")
                + _img(inp.plots, "xfakt", "associative vs non-associative error rates"))
    else:
        body = f"<p class=note>Not available: {_e(xf.get('reason', ''))}.</p>"
    parts.append("<section><h2>X-FaKT (cross-lingual factual knowledge transferability)</h2>" + body + "</section>")
    # dataset checks
    lk = ds["leakage"]
    rows = [[lang, v["n"], v["units"], _pct(v["share"])] for lang, v in lk["by_lang"].items()]
    bal_rows = [[plabel(p), *[e["facts"].get(c, 0) for c in cultures],
                 "–" if e["imbalance"] is None else f"{e['imbalance']:.2f}"] for p, e in ds["predicates"].items()]
    parts.append("<section><h2>Dataset checks</h2><h3>Leakage (object label inside the subject label)</h3>"
                 + _table(["language", "leaking facts", "facts", "share"], rows, "num")
                 + "<h3>Balance between cultures</h3>"
                 + _table(["predicate", *cultures, "max/min"], bal_rows, "num")
                 + _img(inp.plots, "balance", "facts per culture and predicate") + "</section>")
    notes = "".join(f"<li>{_e(n)}</li>" for n in inp.extra_notes)
    parts.append("<footer><p>Definitions: P@k, MRR, RankC, COverlap, mParaRel, X-FaKT and DLAMA entropy exactly as "
                 "in the factatlas documentation (docs/metrics.md). Generated by factatlas; the PNG files beside "
                 f"this page are its figures.</p>{f'<ul>{notes}</ul>' if notes else ''}</footer>")
    css = resources.files("factatlas.probe").joinpath("report.css").read_text("utf-8")
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<meta name=viewport content='width=device-width, initial-scale=1'><title>{_e(title)}</title>"
            f"<style>\n{css}</style></head><body><main>\n" + "\n".join(parts) + "\n</main></body></html>\n")


# ---- plots --------------------------------------------------------------------------------------

def make_plots(metrics: Mapping[str, Any], out_dir: Path, predicate_label: Callable[[str], str] = lambda p: p
               ) -> dict[str, str]:
    """Every figure of the report, as PNG files in ``out_dir``; returns key -> file name."""
    from factatlas.probe import plots as P

    ds = metrics["dataset"]
    langs, cultures = ds["languages"], ds["cultures"]
    preds = list(ds["predicates"])
    out: dict[str, str] = {}

    def put(key: str, path: Path) -> None:
        out[key] = path.name

    bp = metrics["by_predicate"]
    cols = [f"{lang}·{c}" for lang in langs for c in cultures]
    values = [[bp.get(p, {}).get("by_lang_culture", {}).get(lang, {}).get(c, {}).get("p@1")
               for lang in langs for c in cultures] for p in preds]
    put("p_at_1", P.heatmap(values, [predicate_label(p) for p in preds], cols, "P@1 by predicate, language · culture",
                            out_dir / "p_at_1.png", colorbar_label="P@1"))
    cl = metrics["cross_lingual"]
    if len(cl["languages"]) >= 2:
        ls = cl["languages"]
        put("rankc", P.heatmap([[cl["rankc"]["matrix"][a][b] for b in ls] for a in ls], ls, ls,
                               f"RankC between languages ({cl['rankc']['weighting']})", out_dir / "rankc.png",
                               cmap="magma", colorbar_label="RankC"))
        put("coverlap", P.heatmap([[cl["coverlap"]["matrix"][a][b] for b in ls] for a in ls], ls, ls,
                                  "COverlap between languages", out_dir / "coverlap.png", cmap="magma",
                                  colorbar_label="COverlap"))
    series: dict[str, list[float | None]] = {
        "model": [bp.get(p, {}).get("all", {}).get("p@1") for p in preds]}
    if metrics.get("template_only"):
        series["template-only"] = [metrics["template_only"]["by_predicate"].get(p, {}).get("p@1") for p in preds]
    series["majority class"] = [ds["predicates"][p]["majority"]["p@1"] for p in preds]
    series["chance"] = [bp.get(p, {}).get("all", {}).get("chance@1") for p in preds]
    put("baselines", P.grouped_bars([predicate_label(p) for p in preds], series, "P@1: model vs baselines",
                                    out_dir / "baselines.png", ylabel="P@1"))
    put("entropy", P.grouped_bars([predicate_label(p) for p in preds],
                                  {c: [ds["predicates"][p]["entropy"].get(c) for p in preds] for c in cultures},
                                  "DLAMA entropy per predicate and culture", out_dir / "entropy.png",
                                  ylabel="bits", ylim=None))
    put("balance", P.grouped_bars([predicate_label(p) for p in preds],
                                  {c: [ds["predicates"][p]["facts"].get(c, 0) for p in preds] for c in cultures},
                                  "Facts per culture", out_dir / "balance.png", ylabel="facts", ylim=None,
                                  value_fmt="{:.0f}"))
    bias = metrics["predictions"]["language_bias"]
    bl = [lang for lang in langs if lang in bias]
    if bl:
        put("language_bias", P.heatmap(
            [[(bias[lang]["by_predicate"].get(p) or {}).get("top_share") for p in preds] for lang in bl],
            bl, [predicate_label(p) for p in preds], "Share of the most frequent prediction (language bias)",
            out_dir / "language_bias.png", cmap="cividis", colorbar_label="top-1 share"))
    xf = metrics["xfakt"]
    if xf["available"]:
        groups = ["all", *xf["by_lang"]]
        stats = [xf["overall"], *xf["by_lang"].values()]
        put("xfakt", P.grouped_bars(groups, {"associative error": [s["mu_assoc"] for s in stats],
                                             "non-associative error": [s["mu_non"] for s in stats]},
                                    "Error rate: associative vs non-associative", out_dir / "xfakt.png",
                                    ylabel="error rate"))
    return out


# ---- the command's work (I/O at the edge) -------------------------------------------------------

@dataclass(frozen=True)
class ReportResult:
    model: str
    html: Path
    verdict: Verdict
    plots: tuple[Path, ...]


def predicate_labeller(meta: Mapping[str, Any], where: Path) -> Callable[[str], str]:
    """"P19 place of birth" from the labels the build recorded in benchmark.json; a predicate the registry
    did not know (imported benchmarks) stays its bare PID."""
    labels = meta.get("predicate_labels")
    if not isinstance(labels, dict):
        raise ReportError(f"{where}: no 'predicate_labels'; the benchmark predates display labels in "
                          "benchmark.json, rebuild it with `factatlas build RUN` (or import it again).")
    return lambda pid: f"{pid} {labels[pid]}" if labels.get(pid) else pid


def model_dirs(run: Path, model: str | None = None) -> list[Path]:
    probe = run / "probe"
    found = sorted(p for p in probe.iterdir() if (p / "rankings.parquet").exists()) if probe.is_dir() else []
    if model is None:
        if not found:
            raise ReportError(f"{probe}: no model rankings; run `factatlas probe {run} --model PATH_OR_ID` first")
        return found
    chosen = probe / model
    if not (chosen / "rankings.parquet").exists():
        from factatlas.errors import unknown

        raise ReportError(f"{chosen}/rankings.parquet: missing; " + unknown("model", model, [p.name for p in found]))
    return [chosen]


def trained_splits(folder: Path) -> list[str] | None:
    """The splits the model of ``folder`` was trained on, as its probe.json records them (the tiny model's
    recipe, or ``trained_on_splits`` written for any model); None when nothing is recorded."""
    import json

    path = folder / "probe.json"
    if not path.is_file():
        return None
    info = json.loads(path.read_text("utf-8"))
    recorded = info.get("trained_on_splits", (info.get("tiny_model") or {}).get("trained_on_splits"))
    return None if recorded is None else list(recorded)


def write_report(run: str | os.PathLike, model: str | None = None, config: Any = None,
                 trained_on: Sequence[str] | None = None) -> list[ReportResult]:
    """Compute the metrics (with the template-only baseline when present), the verdict and the plots, and
    write ``report.html``, ``verdict.json`` and the PNGs into ``<run>/probe/<model>/``."""
    import pyarrow.parquet as pq

    from factatlas.atomic import write_json, write_text
    from factatlas.probe.evaluate import compute_metrics, load_benchmark_view

    run = Path(run)
    if not (run / "build" / "benchmark.json").exists():
        raise ReportError(f"{run}/build/benchmark.json: missing; build the benchmark with `factatlas build {run}` "
                          "(or import one) before reporting")
    bench = load_benchmark_view(run / "build")
    plabel = predicate_labeller(bench.meta, run / "build" / "benchmark.json")
    results = []
    for folder in model_dirs(run, model):
        rows = pq.read_table(folder / "rankings.parquet").to_pylist()
        t_path = folder / "rankings_template_only.parquet"
        t_rows = pq.read_table(t_path).to_pylist() if t_path.exists() else None
        metrics = compute_metrics(rows, bench, config, template_only_rows=t_rows,
                                  trained_on=trained_splits(folder) if trained_on is None else trained_on)
        v = verdict(metrics)
        plots = make_plots(metrics, folder, plabel)
        page = render_html(ReportInput(metrics, v, plots, lambda q: bench.label(q), plabel, run.name))
        write_text(folder / "report.html", page)
        write_json(folder / "verdict.json", v.to_json())
        results.append(ReportResult(folder.name, folder / "report.html", v, tuple(folder / p for p in plots.values())))
    return results
