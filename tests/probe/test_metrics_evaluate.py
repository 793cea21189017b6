"""compute_metrics on a real benchmark directory and rankings rows with hand-checkable outcomes."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from factatlas.benchmark import Benchmark
from factatlas.probe.evaluate import (
    DEFAULT_LANGUAGE_CULTURES,
    MetricsConfig,
    MetricsError,
    compute_metrics,
    load_benchmark,
)
from factatlas.probe.metrics import coverlap, rankc, xfakt_scores
from factatlas.tables import RANKINGS_SCHEMA, write_table
from tests.probe.test_report_fixtures import (
    COUNTRIES,
    LEAKY,
    entities,
    model_rankings,
    prompt_rows,
    write_benchmark_dir,
)


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    rows = prompt_rows()
    return write_benchmark_dir(tmp_path_factory.mktemp("bench") / "build", rows, entities()), rows


def ranking(prompt: dict, correct: bool, model: str = "m") -> dict:
    gold = prompt["gold_qids"][0]
    others = [q for q in prompt["candidate_qids"] if q != gold]
    ranked = [gold, *others] if correct else [others[0], gold, *others[1:]]
    return {"model": model, "scoring": "causal-sum", "prompt_id": prompt["prompt_id"], "fact_id": prompt["fact_id"],
            "lang": prompt["lang"], "template_id": prompt["template_id"], "culture": prompt["culture"],
            "predicate": prompt["predicate"], "ranked_qids": ranked,
            "scores": [-float(i) for i in range(len(ranked))], "correct_at_1": correct, "prediction": ""}


def controlled_rankings(rows):
    """en: P36/1 right, P36/2 wrong, P37 right only for Arab facts.  ar: everything right."""
    out = []
    for p in rows:
        if p["lang"] == "ar":
            ok = True
        elif p["predicate"] == "P36":
            ok = p["template_id"] == "P36/1"
        else:
            ok = p["culture"] == "arab"
        out.append(ranking(p, ok))
    return out


def test_macro_micro_per_language_culture_and_predicate(bench):
    path, rows = bench
    # round trip through parquet, exactly as the prober writes rankings
    write_table(path.parent / "rankings.parquet", controlled_rankings(rows), RANKINGS_SCHEMA, sort_by=("prompt_id",))
    m = compute_metrics(pq.read_table(path.parent / "rankings.parquet").to_pylist(), path)
    s = m["summary"]
    # en, P36: every fact right in P36/1 and wrong in P36/2 -> each fact 1/2 -> predicate 0.5
    # en, P37: 6 of 12 facts right -> 0.5.  macro = (0.5 + 0.5) / 2 = 0.5
    assert s["by_lang"]["en"]["p@1"] == pytest.approx(0.5)
    assert s["by_lang"]["ar"]["p@1"] == 1.0
    # en x west: P36 0.5, P37 0.0 -> 0.25; en x arab: P36 0.5, P37 1.0 -> 0.75
    assert s["by_lang_culture"]["en"]["west"]["p@1"] == pytest.approx(0.25)
    assert s["by_lang_culture"]["en"]["arab"]["p@1"] == pytest.approx(0.75)
    # overall: a fact's value is the mean over its prompts in both languages.
    # P36, every fact: ar 2 of 2 prompts right, en 1 of 2 -> 3/4
    # P37: arab facts 2/2 (ar, en), west facts 1/2 -> mean 3/4.  macro = micro = 0.75
    assert s["overall"]["p@1"] == pytest.approx(0.75)
    assert s["overall"]["p@1_micro"] == pytest.approx(0.75)
    # a wrong prompt has the gold second: MRR en P37 west = 1/2 -> en west MRR = (0.75 + 0.5) / 2
    assert s["by_lang_culture"]["en"]["west"]["mrr"] == pytest.approx(0.625)
    assert s["by_lang"]["en"]["p@5"] == 1.0
    # chance: P36 has 12 candidates, P37 7 -> (1/12 + 1/7) / 2
    assert s["overall"]["chance@1"] == pytest.approx((1 / 12 + 1 / 7) / 2)
    assert m["by_predicate"]["P37"]["by_lang_culture"]["en"]["west"]["p@1"] == 0.0
    assert m["by_predicate"]["P36"]["by_lang"]["en"]["p@1"] == pytest.approx(0.5)
    assert (s["overall"]["n_facts"], s["overall"]["n_predicates"], s["overall"]["n_prompts"]) == (24, 2, 72)
    assert m["coverage"]["coverage"] == 1.0 and m["coverage"]["correct_at_1_mismatch"] == 0
    assert (m["model"], m["scoring"]) == ("m", "causal-sum")
    json.dumps(m, allow_nan=False)  # strict JSON


def test_cross_lingual_matrices_equal_direct_calls(bench):
    path, rows = bench
    ranked = model_rankings(rows)
    m = compute_metrics(ranked, path, MetricsConfig(rankc_weighting="norm2"))
    by_key = {(r["lang"], r["fact_id"], r["template_id"]): r for r in ranked}
    keys = sorted({(r["fact_id"], r["template_id"]) for r in ranked})
    ar = [by_key[("ar", *k)] for k in keys]
    en = [by_key[("en", *k)] for k in keys]
    cl = m["cross_lingual"]
    assert cl["rankc"]["matrix"]["ar"]["en"] == pytest.approx(
        rankc([r["ranked_qids"] for r in ar], [r["ranked_qids"] for r in en], "norm2"))
    assert cl["rankc"]["matrix"]["en"]["en"] == 1.0
    assert cl["coverlap"]["matrix"]["en"]["ar"] == pytest.approx(
        coverlap([r["correct_at_1"] for r in en], [r["correct_at_1"] for r in ar]))
    assert cl["queries"]["ar"]["en"] == 36
    # the means are over language pairs: the diagonal (a language with itself, always 1) is not one
    assert cl["rankc"]["matrix"]["ar"]["en"] < 1.0
    assert cl["rankc"]["mean"] == pytest.approx(cl["rankc"]["matrix"]["ar"]["en"])
    assert cl["coverlap"]["mean"] == pytest.approx(cl["coverlap"]["matrix"]["ar"]["en"])
    arab = [i for i, k in enumerate(keys) if k[0].startswith("arab:")]
    assert cl["rankc"]["by_culture"]["arab"]["matrix"]["ar"]["en"] == pytest.approx(
        rankc([ar[i]["ranked_qids"] for i in arab], [en[i]["ranked_qids"] for i in arab], "norm2"))


def test_pararel_xfakt_and_predictions(bench):
    path, rows = bench
    m = compute_metrics(controlled_rankings(rows), path)
    pr = m["pararel"]
    # P37 has one template: skipped. en P36: predictions differ between the two templates for every fact
    # (gold vs first other) -> consistency 0, accuracy 1/2; ar: both right -> 1, 1, 1
    assert pr["skipped_single_template_predicates"] == ["P37"]
    assert pr["by_lang"]["en"]["by_predicate"]["P36"] == pytest.approx(
        {"accuracy": 0.5, "consistency": 0.0, "consistency_accuracy": 0.0, "n_facts": 12})
    assert pr["by_lang"]["ar"]["macro"] == pytest.approx({"accuracy": 1, "consistency": 1, "consistency_accuracy": 1})
    xf = m["xfakt"]
    assert xf["association"] == {"ar": ["arab"], "en": ["west"]}
    # errors per (fact, lang): ar all 0. en: P36 facts 1/2 each; P37 arab 0, west 1.
    # associative = ar-arab (12 x 0) + en-west (6 x 0.5 + 6 x 1) -> mu = 9 / 24 = 0.375
    # non-associative = ar-west (12 x 0) + en-arab (6 x 0.5 + 6 x 0) -> mu = 3 / 24 = 0.125
    assert xf["overall"]["mu_assoc"] == pytest.approx(0.375)
    assert xf["overall"]["mu_non"] == pytest.approx(0.125)
    assert xf["overall"]["xfakt"] == pytest.approx(xfakt_scores(0.375, 0.125)["xfakt"])
    assert xf["overall"]["ttest"]["n_assoc"] == 24 and xf["overall"]["ttest"]["t"] > 0
    assert xf["by_lang"]["en"]["mu_assoc"] == pytest.approx(0.75)
    # en P37 west facts are all wrong and always answer the first other candidate
    mc = m["predictions"]["most_common"]["P37"]["west"]["en"]
    assert mc["n"] == 6 and mc["correct"] == []
    assert sum(k for _, k in mc["wrong"]) == 6
    bias = m["predictions"]["language_bias"]["ar"]["by_predicate"]["P37"]
    assert bias["top"] == "Q13955" and bias["top_share"] == pytest.approx(6 / 12)  # Arabic for the 6 Arab facts


def test_xfakt_by_resource_group(bench):
    """X-FaKT Table 3: the associative and non-associative errors of each resource group's languages
    (X-FaKT §3: en high, ar medium). Errors per (fact, lang) as above: en-west 6 x 0.5 + 6 x 1 -> 0.75,
    en-arab 6 x 0.5 + 6 x 0 -> 0.25; ar all 0."""
    path, rows = bench
    xf = compute_metrics(controlled_rankings(rows), path)["xfakt"]
    high, medium, low = (xf["by_resource"][level] for level in ("high", "medium", "low"))
    assert (high["langs"], medium["langs"], low) == (["en"], ["ar"], {"langs": [], "scores": None})
    assert (high["scores"]["mu_assoc"], high["scores"]["mu_non"]) == pytest.approx((0.75, 0.25))
    assert (medium["scores"]["mu_assoc"], medium["scores"]["mu_non"], medium["scores"]["xfakt"]) == (0.0, 0.0, 1.0)
    assert xf["resource_grouping"].startswith("X-FaKT") and xf["ungrouped_languages"] == []


def test_association_override_and_unassociated_languages(bench):
    path, rows = bench
    m = compute_metrics(controlled_rankings(rows), path, MetricsConfig(association={"en": ("arab",), "ar": ()}))
    assert m["xfakt"]["association"] == {"en": ["arab"]}
    assert m["xfakt"]["unassociated_languages"] == ["ar"]
    assert DEFAULT_LANGUAGE_CULTURES["ar"] == ("arab",)  # the default is untouched


def test_dataset_profile_entropy_majority_leakage(bench, tmp_path):
    path, rows = bench
    m = compute_metrics(controlled_rankings(rows), path)
    ds = m["dataset"]
    # P37 arab: all Arabic -> 0 bits; west: French, Portuguese, Italian, Spanish, English, German -> log2 6
    assert ds["predicates"]["P37"]["entropy"] == pytest.approx({"arab": 0.0, "west": 2.5849625})
    assert ds["predicates"]["P37"]["majority"] == {"qid": "Q13955", "label": "Arabic", "p@1": 0.5, "tied": 1,
                                                   "by_culture": {"arab": 1.0, "west": 0.0}}
    # every capital is valid for one fact: a 12-way tie, broken by the naturally smallest QID (Q84 London;
    # a text sort would pick Q1741 Vienna), the rule DLAMA's entropy uses too
    assert ds["predicates"]["P36"]["majority"]["tied"] == 12
    assert ds["predicates"]["P36"]["majority"]["qid"] == "Q84"
    # Tunisia / Tunis leaks in both languages: 1 of 24 (fact, language) units each
    assert ds["leakage"]["by_lang"]["en"] == {"n": 1, "units": 24, "share": pytest.approx(1 / 24)}
    assert ds["parallel"]["missing_language"] == 0 and ds["gold_in_candidates"]["gold_outside"] == 0
    # with the three capital-named-after-country facts: 4 of 30 leak per language
    leaky = prompt_rows(COUNTRIES + LEAKY)
    bdir = write_benchmark_dir(tmp_path / "leaky", leaky, entities(COUNTRIES + LEAKY))
    m2 = compute_metrics(controlled_rankings(leaky), bdir)
    assert m2["dataset"]["leakage"]["by_lang"]["ar"]["n"] == 4
    assert m2["dataset"]["leakage"]["share"] == pytest.approx(8 / 60)


def test_broken_inputs_are_counted_not_silently_used(bench):
    path, rows = bench
    ranked = controlled_rankings(rows)
    stray = dict(ranked[0], prompt_id="arab:P36:Q1|en|P36/1")
    foreign = dict(ranked[1], ranked_qids=["Q999", *ranked[1]["ranked_qids"][1:]])
    lying = dict(ranked[2], correct_at_1=not ranked[2]["correct_at_1"])
    m = compute_metrics([stray, foreign, lying, ranked[2], *ranked[3:]], path)
    cov = m["coverage"]
    assert (cov["unknown_prompt"], cov["foreign_candidates"], cov["duplicate_prompt"]) == (1, 1, 1)
    assert cov["correct_at_1_mismatch"] == 1
    assert cov["used"] == len(rows) - 2  # ranked[0] replaced by the stray row, ranked[1] by the foreign one
    with pytest.raises(MetricsError, match="none of the 1 rankings rows"):
        compute_metrics([stray], path)
    # the verdict reports the gap as a warning, each reason counted
    from factatlas.probe.report import WARN, check_coverage

    check = check_coverage(m)
    assert check.status == WARN and check.summary.startswith(f"{len(rows) - 2} of {len(rows)} prompts ranked")
    assert check.details == ("unknown_prompt: 1", "duplicate_prompt: 1", "foreign_candidates: 1",
                             "correct_at_1_mismatch: 1")


def test_bootstrap_intervals_and_template_only(bench):
    path, rows = bench
    ranked = controlled_rankings(rows)
    m = compute_metrics(ranked, path, MetricsConfig(bootstrap=200), template_only_rows=ranked[:10])
    lo, hi = m["summary"]["by_lang"]["en"]["ci"]["p@1"]
    assert lo <= m["summary"]["by_lang"]["en"]["p@1"] <= hi
    assert m["summary"]["by_lang"]["ar"]["ci"]["p@1"] == [1.0, 1.0]
    assert m["template_only"]["coverage"]["used"] == 10
    assert m["template_only"]["summary"]["overall"]["n_prompts"] == 10


def test_opened_benchmarks_and_paths_give_the_same_metrics(bench):
    path, rows = bench
    opened = Benchmark.open(path)
    view = load_benchmark(opened)
    assert view.languages == ("ar", "en") and view.label("Q90", ["ar"]) == "باريس"
    a = compute_metrics(controlled_rankings(rows), opened)
    b = compute_metrics(controlled_rankings(rows), path)
    assert a == b
    with pytest.raises(MetricsError, match="not a run directory"):
        compute_metrics(controlled_rankings(rows), path.parent / "nowhere")


def test_generative_rows_count_by_the_probers_judgement(bench):
    path, rows = bench
    # generative QA: no ranking, the prober matched the decoded text against the aliases
    gen = [dict(ranking(p, True), ranked_qids=[], scores=[], prediction="Cairo",
                correct_at_1=p["culture"] == "arab") for p in rows]
    m = compute_metrics(gen, path)
    assert m["coverage"]["generative"] == len(rows)
    assert m["summary"]["by_culture"]["arab"]["p@1"] == 1.0
    assert m["summary"]["by_culture"]["west"]["p@1"] == 0.0
    assert m["cross_lingual"]["languages"] == []  # RankC needs rankings
    assert m["pararel"]["available"] is False


def test_coverage_counts_only_the_prompt_kinds_the_rule_used(tmp_path):
    from factatlas.probe.report import INFO, check_coverage

    rows = prompt_rows()
    questions = [dict(p, kind="question", template_id=p["template_id"].split("/")[0] + "/q1",
                      prompt_id=p["prompt_id"].rsplit("|", 1)[0] + "|" + p["template_id"].split("/")[0] + "/q1",
                      text="Which?", answer_start=-1)
                 for p in rows if p["template_id"].endswith("/1")]
    questions = list({q["prompt_id"]: q for q in questions}.values())
    path = write_benchmark_dir(tmp_path / "build", rows + questions, entities())
    m = compute_metrics(controlled_rankings(rows), path)  # a cloze rule ranks cloze prompts only
    cov = m["coverage"]
    assert (cov["eligible_prompts"], cov["other_kind_prompts"]) == (len(rows), len(questions))
    assert cov["coverage"] == 1.0
    check = check_coverage(m)
    assert check.status == INFO
    assert check.summary == (f"all {len(rows)} prompts ranked ({len(questions)} prompts of another kind, "
                             "e.g. questions, are not used by this scoring rule)")


def test_paraphrase_consistency_compares_languages_on_the_templates_they_share():
    """en asks with three paraphrases, ar with two (a first-draft language): both are scored on the two
    they share, so the third cannot lower en's consistency alone."""
    from factatlas.probe.cross_lingual import pararel_section
    from factatlas.records import GoldObject, ScoredPrompt

    def scored(fact: str, lang: str, tid: str, top: str) -> ScoredPrompt:
        return ScoredPrompt("m", f"{fact}|{lang}|{tid}", fact, lang, tid, "arab", "P36", (GoldObject("Q1"),),
                            (top, "Qx"), 1 if top == "Q1" else None, chance=0.5)

    rows = [scored(f, lang, t, "Q1") for f in ("f1", "f2") for lang in ("en", "ar") for t in ("P36/1", "P36/2")]
    rows += [scored(f, "en", "P36/3", "Q9") for f in ("f1", "f2")]  # en's third paraphrase disagrees
    section = pararel_section(rows)
    assert section["templates_not_in_every_language"] == ["P36/3"]
    for lang in ("en", "ar"):
        assert section["by_lang"][lang]["macro"]["consistency"] == 1.0


def test_paraphrase_consistency_is_a_macro_mean_over_predicates():
    """One language, two predicates with two templates each: P36 always consistent, P37 never -> the
    language's macro consistency is their mean (0.5), not either one."""
    from factatlas.probe.cross_lingual import pararel_section
    from factatlas.records import GoldObject, ScoredPrompt

    def scored(fact: str, pred: str, tid: str, top: str) -> ScoredPrompt:
        return ScoredPrompt("m", f"{fact}|en|{tid}", fact, "en", tid, "west", pred, (GoldObject("Q1"),),
                            (top, "Qx"), 1 if top == "Q1" else None, chance=0.5)

    rows = [scored(f, "P36", t, "Q1") for f in ("f1", "f2") for t in ("P36/1", "P36/2")]
    rows += [scored(f, "P37", t, top) for f in ("g1", "g2") for t, top in (("P37/1", "Q1"), ("P37/2", "Q2"))]
    macro = pararel_section(rows)["by_lang"]["en"]["macro"]
    assert macro == pytest.approx({"accuracy": (1.0 + 0.5) / 2, "consistency": (1.0 + 0.0) / 2,
                                   "consistency_accuracy": (1.0 + 0.0) / 2})
