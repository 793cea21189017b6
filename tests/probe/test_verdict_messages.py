"""The verdict's sentences on hand-made metrics, exact: the template-only gap at its threshold, the average whose
interval is not above the majority baseline, predicates without a baseline, and the judge's agreement. These
are what a user reads to decide whether a dataset is fit for use."""

from __future__ import annotations

from factatlas.probe.verdict import (
    FAIL,
    INFO,
    MIN_TEMPLATE_ONLY_GAP,
    PASS,
    check_baselines_reported,
    check_judge,
    check_majority,
    check_template_only,
)


def scores(macro: float, micro: float, lo: float, hi: float, n: int = 40) -> dict:
    return {"macro": macro, "micro": micro, "ci": {"macro": (lo, hi), "micro": (lo, hi)}, "n_prompts": n,
            "n_facts": n // 2}


def metrics(model: dict, base: dict) -> dict:
    return {"scoring": "independent", "model": "m", "validation": {
        "splits": ["test"], "split_source": "no training recorded", "model": model, "majority": base,
        "template_only": {"n_pairs": 40, "model": model, "baseline": base,
                          "excluded": {"prompts": 0, "by_lang": {}, "reason": ""}}}}


def test_a_gap_of_exactly_the_threshold_passes_and_its_points_are_printed():
    model, base = scores(0.30 + MIN_TEMPLATE_ONLY_GAP, 0.35, 0.31, 0.40), scores(0.30, 0.30, 0.20, 0.30)
    check = check_template_only(metrics(model, base))
    assert (check.status, check.summary) == (PASS, (
        "macro P@1 model 35.0% [31.0%, 40.0%] vs template-only 30.0% [20.0%, 30.0%]; micro P@1 model 35.0% "
        "[31.0%, 40.0%] vs template-only 30.0% [20.0%, 30.0%] (macro gap +5.0 points, >= 5 required; intervals apart)"))
    lower = scores(0.30 + MIN_TEMPLATE_ONLY_GAP - 0.001, 0.35, 0.31, 0.40)
    failed = check_template_only(metrics(lower, base))
    assert failed.status == FAIL and "(macro gap +4.9 points; gap under 5): the model does not" in failed.summary
    wide = check_template_only(metrics(scores(0.6, 0.6, 0.5, 0.7), base))
    assert wide.status == PASS and "(macro gap +30.0 points, >= 5 required" in wide.summary


def test_the_majority_check_names_the_average_whose_interval_is_not_above():
    model = {**scores(0.5, 0.5, 0.4, 0.6), "ci": {"macro": (0.4, 0.6), "micro": (0.25, 0.6)}}
    check = check_majority(metrics(model, scores(0.3, 0.3, 0.2, 0.3)))
    assert check.status == FAIL and "the model's micro interval is not wholly above the baseline's" in check.summary
    assert check.details == ("held-out split test: no training recorded; 20 facts, 40 prompts",)


def test_predicates_without_a_baseline_are_named_and_none_at_all_says_so():
    entry = {"entropy": {"arab": 1.0}, "majority": {"p@1": 0.5}}
    ds = {"predicates": {"P36": entry, "P37": {**entry, "entropy": {}}}, "majority_macro": 0.5}
    assert check_baselines_reported(ds).summary == "missing for P37"
    assert check_baselines_reported({"predicates": {}, "majority_macro": None}).summary == "missing for every predicate"
    ok = check_baselines_reported({"predicates": {"P36": entry}, "majority_macro": 0.5})
    assert (ok.status, ok.summary) == (INFO, "reported for 1 predicates; majority-class P@1 macro 50.0%")


def test_the_judge_line_gives_kappa_or_says_it_is_not_available():
    summary = {"judge_model": "j", "by_split": {"test": {"n": 4, "judge": 0.5, "strict": 0.25, "lenient": 0.5}},
               "agreement": {"strict": {"kappa": 0.3333}}}
    line = check_judge(summary, ["test"]).summary
    assert line == ("on the held-out split (4 answers), judge j counts 50.0% right, strict matching 25.0%, lenient "
                    "50.0% (Cohen's kappa judge vs strict 0.33); the rules above use the matcher")
    summary["agreement"]["strict"]["kappa"] = None
    assert "(Cohen's kappa judge vs strict n/a)" in check_judge(summary, ["test"]).summary
