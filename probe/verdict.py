"""The verdict of PROBING.md "Validating a dataset": rules over a compute_metrics() result -> PASS/FAIL
checks with reasons. Moved out of ``report.py`` unchanged (the page that shows it stays there);
thresholds are the named constants below, docs/metrics.md explains each rule.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
                     f"{bad} of {par['groups']} facts differ between languages "
                     f"({par['missing_language']} miss a language, {par['candidate_mismatch']} have other "
                     f"candidate QIDs, {par['gold_mismatch']} other golds); rebuild with `factatlas build`",
                     tuple(par["examples"]))
    return Check("multi-parallel", PASS, f"all {par['groups']} facts have every language with the same "
                 "candidate and gold QIDs")


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
    return f"held-out split {', '.join(v['splits']) or 'none'}: {v['split_source']}"


def _comparison(model: Mapping[str, Any], base: Mapping[str, Any], name: str) -> str:
    return "; ".join(f"{avg} P@1 model {_interval(model, avg)} vs {name} {_interval(base, avg)}"
                     for avg in ("macro", "micro"))


def open_answers(metrics: Mapping[str, Any]) -> bool:
    """The rule gave open answers (generative, chat, xfactr), matched to aliases: no ranking of candidates."""
    return metrics.get("ranking") is False


def _baseline_name(metrics: Mapping[str, Any]) -> str:
    return "question-only" if open_answers(metrics) else "template-only"


def check_template_only(metrics: Mapping[str, Any]) -> Check:
    """Paired, on the held-out split: beyond both intervals (macro and micro) and by MIN_TEMPLATE_ONLY_GAP.
    For open-answer rules the baseline is the question-only one: the same question with the subject replaced,
    answered by the same model and matched the same way."""
    v = metrics["validation"]
    t = v["template_only"]
    name = f"{_baseline_name(metrics)} baseline"
    scoring, model_name = metrics.get("scoring") or "RULE", metrics.get("model") or "MODEL"
    if not t or not t["n_pairs"]:
        what = ("the answers to the questions with the subject replaced by a placeholder" if open_answers(metrics)
                else "the baseline with the subject replaced by a placeholder")
        return Check(name, FAIL,
                     f"no {name} answers on the held-out split (rankings_template_only.parquet); rerun "
                     f"`factatlas probe RUN --model {model_name} --scoring {scoring}` without --no-template-only, so "
                     f"{what} are scored")
    model, base = t["model"], t["baseline"]
    gap = model["macro"] - base["macro"]
    excluded = t["excluded"]
    details = [f"{_held_out(metrics)}; {t['n_pairs']} prompts scored both ways (paired)"]
    if excluded["prompts"]:
        per_lang = ", ".join(f"{lang} {n}" for lang, n in excluded["by_lang"].items())
        details.append(f"{excluded['prompts']} held-out prompts excluded from the comparison ({per_lang}): "
                       f"{excluded['reason']}")
    text = f"{_comparison(model, base, name.removesuffix(' baseline'))} (macro gap {100 * gap:+.1f} points"
    won = beats(model, base)
    # 0.35 - 0.30 is 0.0499999... in binary: a gap that prints as the threshold meets it
    short = gap < MIN_TEMPLATE_ONLY_GAP - 1e-9
    if short or not all(won.values()):
        why = [f"gap under {100 * MIN_TEMPLATE_ONLY_GAP:.0f}"] if short else []
        why += [f"{avg} interval not wholly above the baseline's" for avg, ok in won.items() if not ok]
        return Check(name, FAIL, f"{text}; {', '.join(why)}): the model does not answer "
                     "from the subject beyond chance variation (or the templates give the answer away)",
                     tuple(details))
    return Check(name, PASS, f"{text}, >= {100 * MIN_TEMPLATE_ONLY_GAP:.0f} required; "
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
        judge_hint = ""
        if open_answers(metrics):
            judge_hint = (f" (answers matched to aliases; `factatlas judge RUN --model {metrics.get('model') or 'MODEL'} "
                          "--judge JUDGE` shows what an LLM judge counts right beside it)")
        return Check("majority-class baseline", FAIL, f"{text}: the model's {' and '.join(a for a, ok in won.items() if not ok)} "
                     "interval is not wholly above the baseline's; always answering the most frequent object "
                     f"does as well{judge_hint}", details)
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
    skewed = [f"{p}: " + ", ".join(f"{c} {n}" for c, n in e["facts"].items()) for p, e in ds["predicates"].items()
              if e["imbalance"] is None or e["imbalance"] > MAX_CULTURE_IMBALANCE]
    if skewed:
        return Check("balance between cultures", WARN, f"facts per culture {text}; {len(skewed)} predicates "
                     f"exceed a {MAX_CULTURE_IMBALANCE:g}x imbalance or lack a culture", tuple(skewed))
    return Check("balance between cultures", INFO, f"facts per culture {text}")


def check_model_tables(metrics: Mapping[str, Any]) -> Check:
    if open_answers(metrics):
        probed = sorted(metrics["summary"]["by_lang"])
        return Check("P@1 table and RankC heat-map", PASS,
                     f"P@1 for {len(metrics['by_predicate'])} predicates in {len(probed)} languages "
                     f"({', '.join(probed)}); RankC n/a: open answers rank no candidates")
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


def check_judge(summary: Mapping[str, Any], splits: Sequence[str]) -> Check:
    """What the LLM judge says of the open answers on the held-out split, beside the matcher (information:
    the verdict's numbers stay the matcher's, which the judge may be checked against)."""
    held = [summary["by_split"][s] for s in splits if s in summary["by_split"]]
    n = sum(x["n"] for x in held)
    if not n:
        return Check("LLM-as-judge", INFO, f"no judged answer on the held-out split {', '.join(splits) or 'none'}")

    def mean(key: str) -> float:
        return sum(x[key] * x["n"] for x in held if x[key] is not None) / n

    kappa = summary["agreement"]["strict"].get("kappa")
    return Check("LLM-as-judge", INFO,
                 f"on the held-out split ({n} answers), judge {summary['judge_model']} counts {_pct(mean('judge'))} "
                 f"right, strict matching {_pct(mean('strict'))}, lenient {_pct(mean('lenient'))} (Cohen's kappa "
                 f"judge vs strict {'n/a' if kappa is None else f'{kappa:.2f}'}); the rules above use the matcher")
