"""Ranks at their ties, counts at their minimums, k against k + 1, and the split and language filters, each on
inputs that sit on the edge (issue 43 item 3). The mutants these tests kill are listed in
scripts/mutation_sweep.py (``edge:``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from factatlas.probe import aggregate as A
from factatlas.probe import metrics as M
from factatlas.records import GoldObject, ScoredPrompt
from tests.probe.test_aggregate import prompt, ranking

# ---- ranks, ties and k -----------------------------------------------------------------------------------


def test_pessimistic_ties_put_the_gold_after_an_equal_score():
    assert M.gold_rank(["Qg", "Qx", "Qy"], {"Qg"}, scores=[1.0, 1.0, 0.5], ties="pessimistic") == 2
    assert M.gold_rank(["Qx", "Qg", "Qy"], {"Qg"}, scores=[1.0, 1.0, 1.0], ties="pessimistic") == 3
    assert M.gold_rank(["Qg", "Qx"], {"Qg"}, scores=[1.0, 0.5], ties="pessimistic") == 1
    assert M.gold_rank(["Qg", "Qx"], {"Qg"}, scores=[1.0, 1.0], ties="stable") == 1


def test_the_join_counts_top_ties_only_where_the_two_best_scores_are_equal():
    p = prompt("f1", "P1")
    untied = ranking(p, ("Qa", "Qb", "Qc"))  # scores 0, -1, -2
    tied = replace(untied, scores=(0.0, 0.0, -1.0))
    assert A.join([untied], {p.prompt_id: p}).counts.get("top_ties", 0) == 0
    assert A.join([tied], {p.prompt_id: p}).counts["top_ties"] == 1


def _at_rank(fact: str, predicate: str, rank: int | None) -> ScoredPrompt:
    ranked = ("Qa", "Qb", "Qc", "Qg")
    order = tuple(range(4))
    if rank is not None:
        ranked = (*ranked[: rank - 1], "Qg", *[q for q in ranked[rank - 1:] if q != "Qg"])
    return ScoredPrompt("m", f"{fact}|en|t", fact, "en", "t", "west", predicate, (GoldObject("Qg"),), ranked[:4],
                        rank, candidates=("Qa", "Qb", "Qc", "Qg"), order=order)


def test_p_at_k_counts_ranks_up_to_k_and_not_k_plus_one():
    scored = [_at_rank("f1", "P1", 1), _at_rank("f2", "P1", 2), _at_rank("f3", "P1", 3), _at_rank("f4", "P1", 4)]
    s = A.aggregate(scored, ks=(1, 2, 3))
    assert (s["p@1"], s["p@2"], s["p@3"]) == (pytest.approx(0.25), pytest.approx(0.5), pytest.approx(0.75))
    assert [M.precision_at_k(r, 2) for r in (1, 2, 3, None)] == [1.0, 1.0, 0.0, 0.0]


def test_the_bootstrap_interval_cuts_both_tails_equally():
    """One stratum [0, 1]: a resample's mean is 0, .5 or 1 with odds 1/4, 1/2, 1/4. At 40 % confidence the
    interval is the 30th and 70th percentiles, both .5; at 60 %, the 20th and 80th: 0 and 1."""
    assert M.stratified_bootstrap([[0.0, 1.0]], M.micro_statistic, n_boot=4000, confidence=0.4) == (0.5, 0.5)
    assert M.stratified_bootstrap([[0.0, 1.0]], M.micro_statistic, n_boot=4000, confidence=0.6) == (0.0, 1.0)


# ---- minimum counts ----------------------------------------------------------------------------------------


def _pararel_outcome(fact: str, predicate: str, template: str, top: str, lang: str = "en") -> ScoredPrompt:
    return ScoredPrompt("m", f"{fact}|{lang}|{template}", fact, lang, template, "west", predicate, (GoldObject("Qg"),),
                        (top, "Qx" if top == "Qg" else "Qg"), 1 if top == "Qg" else 2,
                        candidates=("Qg", "Qx"), order=(0, 1) if top == "Qg" else (1, 0))


def test_mparaprel_reads_predicates_and_facts_with_exactly_two_templates():
    from factatlas.probe.cross_lingual import pararel_section

    outcomes = [_pararel_outcome("f1", "P1", "t1", "Qg"), _pararel_outcome("f1", "P1", "t2", "Qg"),
                _pararel_outcome("f2", "P1", "t1", "Qg"), _pararel_outcome("f2", "P1", "t2", "Qx")]
    out = pararel_section(outcomes)
    assert out["skipped_single_template_predicates"] == [] and out["skipped_facts_single_template"] == 0
    p1 = out["by_lang"]["en"]["by_predicate"]["P1"]
    assert p1["n_facts"] == 2
    assert p1["consistency"] == pytest.approx(0.5)  # f1 agrees with itself, f2 does not


def test_welch_test_runs_with_two_errors_a_side():
    got = M.xfakt_ttest([0.0, 1.0], [1.0, 1.0])
    assert (got["n_assoc"], got["n_non"], got["reason"]) == (2, 2, "")
    assert got["t"] == pytest.approx(-1.0) and got["p"] is not None
    assert M.xfakt_ttest([0.0], [1.0, 1.0])["reason"] == "fewer than two queries in a group"


# ---- split filters ---------------------------------------------------------------------------------------


def test_held_out_splits_leave_out_exactly_the_trained_ones():
    from factatlas.probe.heldout import held_out_from

    assert held_out_from(["dev", "test", "train"], ["train"])[0] == ("dev", "test")
    assert held_out_from(["dev", "test", "train"], [])[0] == ("dev", "test", "train")
    assert held_out_from(["dev", "test", "train"], None)[0] == ("test",)
    assert held_out_from(["dev", "train"], None)[0] == ("dev", "train")


def test_the_tiny_model_never_learns_the_test_split():
    from factatlas.probe.backends import tiny_training_splits

    assert tiny_training_splits({"dev", "test", "train"}) == ["train"]
    assert tiny_training_splits({"dev", "test"}) == ["dev"]
    assert tiny_training_splits({"test"}) == []


def test_chat_shots_come_from_the_shot_split_only():
    from factatlas.probe.chat import ChatConfig, shot_pools

    def question(fact: str, split: str):
        return replace(prompt(fact, "P1", template="q1", split=split, kind="question"), gold_forms=(("Paris",),))

    prompts = [question("f1", "dev"), question("f2", "test"), question("f3", "train")]
    pools = shot_pools(prompts, ChatConfig(shots=2, shot_split="dev"))
    assert [s.fact_id for s in pools["en"]] == ["f1"]


# ---- language filters ------------------------------------------------------------------------------------


def test_langs_keep_only_their_languages():
    from factatlas.probe.selection import row_filter

    keep = row_filter(["en"], None)
    assert keep("f1|en|t", "en") and not keep("f1|ar|t", "ar")
    assert row_filter(None, None) is None


def test_x_fakt_context_asks_only_the_question_languages():
    from factatlas.probe.xfakt_context import build_variants

    prompts = [replace(prompt("f1", "P1", lang=lang), text="The capital is [Y].", answer_start=15,
                       candidate_forms=("Paris", "Rome", "Oslo"), gold_forms=(("Paris",),)) for lang in ("en", "ar")]
    variants, skipped = build_variants(prompts, "recall", question_langs=["en"])
    # the en question with the en and the ar context; the ar question is not asked
    assert [(v.prompt.lang, v.context_lang) for v in variants] == [("en", "ar"), ("en", "en")] and not skipped
    assert variants[0].prompt.text == "The capital is Paris. The capital is [Y]."
