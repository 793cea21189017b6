"""factatlas compare: P@1 micro/macro, the culture gap with its bootstrap CI, McNemar (hand-worked)."""

from __future__ import annotations

import pytest

from factatlas.probe.analysis import compare as C
from tests.probe.analysis_fixture import MODEL_A, model_results, result


def test_micro_and_macro_by_hand():
    acc = C.accuracy(model_results("A", MODEL_A))
    # fact values (mean over en, ar): f1 1, f2 .5, f3 0, f4 .5, f5 0, f6 1, f7 1
    # micro = 4/7; macro = mean(P1: (1+.5+.5+1)/4 = .75, P2: (0+0+1)/3) = 13/24
    assert (acc.n_facts, acc.n_prompts, acc.n_predicates) == (7, 14, 2)
    assert acc.micro == pytest.approx(4 / 7)
    assert acc.macro == pytest.approx(13 / 24)


def test_table_cells_by_culture_and_language():
    cells = {(c.culture, c.lang): c.acc for c in C.accuracy_table({"A": model_results("A", MODEL_A)})}
    # west, en: f1 1, f2 1, f3 0, f7 1 -> micro 3/4; macro P1 1, P2 0 -> 1/2
    assert cells[("west", "en")].micro == pytest.approx(0.75)
    assert cells[("west", "en")].macro == pytest.approx(0.5)
    # arab, all languages: f4 .5, f5 0, f6 1 -> micro .5; macro P1 .5, P2 .5 -> .5
    assert cells[("arab", "all")].micro == pytest.approx(0.5)
    assert set(cells) == {(c, lang) for c in ("arab", "west", "all") for lang in ("ar", "en", "all")}


def test_culture_gap_point_and_interval():
    g = C.culture_gap("A", model_results("A", MODEL_A), "west", n_boot=2000, seed=3)
    # west macro: P1 (1+.5+1)/3 = 5/6, P2 0 -> 5/12; non-west: P1 .5, P2 (0+1)/2 -> .5; gap -1/12
    assert g.western == pytest.approx(5 / 12)
    assert g.non_western == pytest.approx(0.5)
    assert g.gap == pytest.approx(-1 / 12)
    assert g.ci_low < g.gap < g.ci_high
    # resamples: west macro in [(.5 + 0)/2, (1 + 0)/2] (P2 is f3 alone), non-west in [(.5 + 0)/2, (.5 + 1)/2]
    # (P1 is f4 alone), so every resampled gap lies in [.25 - .75, .5 - .25]
    assert g.ci_low >= -0.5 and g.ci_high <= 0.25
    assert g == C.culture_gap("A", model_results("A", MODEL_A), "west", n_boot=2000, seed=3)  # seeded
    assert (g.n_western_facts, g.n_non_western_facts) == (4, 3)


def test_culture_gap_interval_collapses_without_variance():
    table = {("w1", "west", "P1"): (True, True), ("w2", "west", "P1"): (True, True),
             ("a1", "arab", "P1"): (False, False), ("a2", "arab", "P1"): (False, False)}
    g = C.culture_gap("A", model_results("A", table), "west", n_boot=50)
    assert (g.gap, g.ci_low, g.ci_high) == (1.0, 1.0, 1.0)
    assert C.culture_gap("A", model_results("A", {("w1", "west", "P1"): (True, True)}), "west") is None


def test_mcnemar_exact_and_corrected_by_hand():
    a = [True] * 3 + [True] * 1 + [False] * 5 + [False] * 2  # both 3, A only 1, B only 5, neither 2
    b = [True] * 3 + [False] * 1 + [True] * 5 + [False] * 2
    exact = C.mcnemar(a, b, "exact")
    assert (exact.both, exact.a_only, exact.b_only, exact.neither) == (3, 1, 5, 2)
    # two-sided binomial, n = 6: 2 * P(X <= 1) = 2 * (1 + 6) / 64
    assert exact.p == pytest.approx(14 / 64)
    corrected = C.mcnemar(a, b, "corrected")
    # (|1 - 5| - 1)^2 / 6 = 1.5; P(chi2_1 > 1.5) = 2 * (1 - Phi(sqrt(1.5))) = 0.220671
    assert corrected.statistic == pytest.approx(1.5)
    assert corrected.p == pytest.approx(0.220671, abs=1e-6)
    assert C.mcnemar([True, False], [True, False]).p == 1.0


def test_paired_tests_pair_by_prompt_and_count_the_rest():
    a = model_results("A", MODEL_A)
    b = [result("B", r.fact_id, r.lang, r.culture, r.predicate, not r.correct) for r in a if r.fact_id != "f7"]
    tests = {t.lang: t for t in C.paired_tests({"A": a, "B": b})}
    assert set(tests) == {"all", "ar", "en"}
    overall = tests["all"]
    # A is right on 6 of the 12 shared prompts (f7 left out), B on the other 6; they never agree
    assert (overall.test.n, overall.test.a_only, overall.test.b_only, overall.unpaired) == (12, 6, 6, 2)
    assert overall.test.p == pytest.approx(1.0)
