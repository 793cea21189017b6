"""The one join and the one aggregation (factatlas.probe.aggregate) on a hand-sized set where macro, micro
and the prompt mean all differ; every number is worked out by hand in the comments."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from factatlas.benchmark import SCHEMA_VERSION, Benchmark
from factatlas.probe import aggregate as A
from factatlas.probe.evaluate import compute_metrics
from factatlas.records import ProbeResult, Prompt
from factatlas.tables import PROMPTS_SCHEMA, prompt_rows, write_table


def prompts_benchmark(folder: Path, meta: Mapping[str, Any], prompts: Iterable[Prompt]) -> Benchmark:
    """The smallest benchmark the metrics read: benchmark.json and prompts.parquet (no labels)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_table(folder / "prompts.parquet", prompt_rows(prompts), PROMPTS_SCHEMA, sort_by=("prompt_id",))
    (folder / "benchmark.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION, **meta}), "utf-8")
    return Benchmark.open(folder)


def prompt(fact: str, predicate: str, lang: str = "en", template: str = "t", candidates=("Qa", "Qb", "Qc"),
           golds=("Qa",), culture: str = "west", split: str = "test", kind: str = "cloze") -> Prompt:
    return Prompt(f"{fact}|{lang}|{template}", fact, lang, template, kind, "x [Y]", 2, "p", culture, predicate,
                  split, "Q1", "", tuple(golds), tuple(("",) for _ in golds), tuple(candidates),
                  tuple("" for _ in candidates), "reviewed")


def ranking(p: Prompt, ranked, scoring: str = "mlm-independent", correct: bool | None = None) -> ProbeResult:
    ranked = tuple(ranked)
    return ProbeResult("m", scoring, p.prompt_id, p.fact_id, p.lang, p.template_id, p.culture, p.predicate, ranked,
                       tuple(-float(i) for i in range(len(ranked))),
                       bool(ranked and ranked[0] in p.gold_qids) if correct is None else correct)


RIGHT = ("Qa", "Qb", "Qc")  # gold first: P@1 1, reciprocal rank 1
WRONG = ("Qb", "Qa", "Qc")  # gold second: P@1 0, reciprocal rank 1/2

# P1 has three facts, P2 one; f1 is asked with two templates in two languages (4 prompts), the others
# in two languages (2 prompts each).
#   f1 (P1): 4/4 right -> 1.0      MRR (1+1+1+1)/4 = 1.0
#   f2 (P1): 1/2 right -> 0.5      MRR (1+1/2)/2  = 0.75
#   f3 (P1): 0/2 right -> 0.0      MRR (1/2+1/2)/2 = 0.5
#   f4 (P2): 2/2 right -> 1.0      MRR 1.0
# P@1: predicate means P1 = (1 + 0.5 + 0)/3 = 0.5, P2 = 1.0
#   macro = (0.5 + 1.0)/2 = 0.75; micro (mean over facts) = (1 + 0.5 + 0 + 1)/4 = 0.625;
#   prompt mean = (4 + 1 + 0 + 2)/10 = 0.7; mean over predicates of prompt means = (5/8 + 1)/2 = 0.8125
# MRR: P1 = (1 + 0.75 + 0.5)/3 = 0.75, P2 = 1 -> macro 0.875, micro (1 + 0.75 + 0.5 + 1)/4 = 0.8125
CASES = [("f1", "P1", "en", "t1", RIGHT), ("f1", "P1", "ar", "t1", RIGHT), ("f1", "P1", "en", "t2", RIGHT),
         ("f1", "P1", "ar", "t2", RIGHT), ("f2", "P1", "en", "t1", RIGHT), ("f2", "P1", "ar", "t1", WRONG),
         ("f3", "P1", "en", "t1", WRONG), ("f3", "P1", "ar", "t1", WRONG), ("f4", "P2", "en", "t1", RIGHT),
         ("f4", "P2", "ar", "t1", RIGHT)]


@pytest.fixture(scope="module")
def fixture():
    prompts = {p.prompt_id: p for p in (prompt(f, pred, lang, t) for f, pred, lang, t, _ in CASES)}
    rows = [ranking(prompts[f"{f}|{lang}|{t}"], order) for f, _, lang, t, order in CASES]
    return prompts, rows


def test_macro_micro_and_mrr_by_hand(fixture):
    prompts, rows = fixture
    joined = A.join(rows, prompts)
    assert joined.counts["used"] == 10 and joined.counts["foreign_candidates"] == 0
    s = A.aggregate(joined.scored, ks=(1, 2))
    assert (s["n_prompts"], s["n_facts"], s["n_predicates"]) == (10, 4, 2)
    assert s["p@1"] == pytest.approx(0.75)  # macro: not the fact mean 0.625, not the prompt mean 0.7
    assert s["p@1_micro"] == pytest.approx(0.625)  # micro: not the prompt mean 0.7
    assert s["p@2"] == s["p@2_micro"] == 1.0  # every gold is first or second
    assert s["mrr"] == pytest.approx(0.875) and s["mrr_micro"] == pytest.approx(0.8125)
    assert s["chance@1"] == pytest.approx(1 / 3)
    acc = A.accuracy(joined.scored)
    assert (acc.macro, acc.micro) == (pytest.approx(0.75), pytest.approx(0.625))


def test_every_caller_gets_the_same_macro_and_micro(fixture, tmp_path):
    """metrics.json's summary and the verdict's held-out P@1 come from the one aggregation."""
    prompts, rows = fixture
    bench = prompts_benchmark(tmp_path, {"languages": ["en", "ar"], "cultures": ["west"]}, prompts.values())
    m = compute_metrics(rows, bench)
    overall = m["summary"]["overall"]
    assert (overall["p@1"], overall["p@1_micro"]) == (pytest.approx(0.75), pytest.approx(0.625))
    model = m["validation"]["model"]
    assert (model["macro"], model["micro"]) == (pytest.approx(0.75), pytest.approx(0.625))
    # P1 alone: macro = micro = its fact mean 0.5; P2: 1.0
    assert m["by_predicate"]["P1"]["all"]["p@1"] == pytest.approx(0.5)
    assert m["by_predicate"]["P2"]["all"]["p@1_micro"] == 1.0
    # per language: en has f1 (2 prompts, 1.0), f2 1.0, f3 0.0, f4 1.0 -> P1 2/3, P2 1 -> macro 5/6, micro 3/4
    en = m["summary"]["by_lang"]["en"]
    assert (en["p@1"], en["p@1_micro"]) == (pytest.approx(5 / 6), pytest.approx(0.75))


def test_culture_gap_point_is_the_macro_difference(fixture):
    from factatlas.probe.analysis.compare import culture_gap

    prompts, rows = fixture
    scored = [s if s.fact_id != "f4" else _with_culture(s, "arab") for s in A.join(rows, prompts).scored]
    # west: f1, f2, f3 (P1 only) -> macro 0.5; arab: f4 (P2) -> 1.0
    gap = culture_gap("m", scored, "west", n_boot=50)
    assert (gap.western, gap.non_western, gap.gap) == (pytest.approx(0.5), 1.0, pytest.approx(-0.5))


def _with_culture(s, culture):
    import dataclasses

    return dataclasses.replace(s, culture=culture)


def test_join_counts_every_row_it_cannot_use():
    a = prompt("a", "P1", candidates=("Q1", "Q2", "Q3", "Q4"), golds=("Q2", "Q4", "Q9"))  # Q9: not a candidate
    b = prompt("b", "P1", candidates=("Q4", "Q3", "Q2", "Q1"), golds=("Q1",))  # same size, another order
    q = prompt("q", "P1", kind="question", template="q1")
    prompts = {p.prompt_id: p for p in (a, b, q)}
    rows = [ranking(a, ("Q4", "Q1", "Q2", "Q3")), ranking(b, ("Q4", "Q1", "Q2", "Q3")),
            ranking(b, ("Q4", "Q1", "Q2", "Q3")),  # twice
            ranking(a, ("Q4", "Q1")),  # a duplicate prompt is counted before its ranking is looked at
            ranking(prompt("zz", "P1"), RIGHT)]  # not in the benchmark
    joined = A.join(rows, prompts)
    sa, sb = joined.scored
    assert (sa.chance, sb.chance) == (2 / 4, 1 / 4)  # golds among the candidates / candidates
    assert (sa.order, sb.order) == ((3, 0, 1, 2), (0, 3, 2, 1))
    assert (sa.rank, sb.rank) == (1, 2)
    c = joined.counts
    assert (c["rows"], c["used"], c["duplicate_prompt"], c["unknown_prompt"]) == (5, 2, 2, 1)
    assert (c["eligible_prompts"], c["other_kind_prompts"]) == (2, 1)  # the question is another kind


def test_join_rejects_foreign_rankings_and_trusts_open_answer_judgements():
    p = prompt("a", "P1")
    prompts = {p.prompt_id: p}
    assert A.join([ranking(p, ("Qa", "Qb"))], prompts).counts["foreign_candidates"] == 1  # a candidate missing
    assert A.join([ranking(p, ("Qa", "Qa", "Qc"))], prompts).counts["foreign_candidates"] == 1  # one twice
    # an open answer matched a non-gold candidate, yet the prober judged it right (an alias): judged, not ranked
    (s,) = A.join([ranking(p, ("Qb",), scoring="generative", correct=True)], prompts).scored
    assert s.correct and s.order == ()
    (s,) = A.join([ranking(p, (), scoring="generative", correct=False)], prompts).scored
    assert s.rank is None


def test_bootstrap_ci_covers_macro_and_micro(fixture):
    prompts, rows = fixture
    scored = A.join(rows, prompts).scored
    r = A.p_at_1_with_ci(scored, 200, 0.95, 0)
    assert (r["macro"], r["micro"]) == (pytest.approx(0.75), pytest.approx(0.625))
    for avg in ("macro", "micro"):
        lo, hi = r["ci"][avg]
        assert 0.0 <= lo <= r[avg] <= hi <= 1.0
    # the intervals do not depend on the order of the rankings
    assert A.p_at_1_with_ci(scored[::-1], 200, 0.95, 0)["ci"] == r["ci"]


def _asked_three_times(rights: list[int], predicates: list[str]) -> list:
    """Fact f<i> of predicates[i] asked with three templates, ``rights[i]`` of them answered right."""
    prompts = {}
    rows = []
    for i, (right, pred) in enumerate(zip(rights, predicates, strict=True), start=1):
        for t in range(3):
            p = prompt(f"f{i}", pred, template=f"t{t}")
            prompts[p.prompt_id] = p
            rows.append(ranking(p, RIGHT if t < right else WRONG))
    return list(A.join(rows, prompts).scored)


@pytest.mark.parametrize(("rights", "predicates", "by_hand"), [
    ([0, 2, 0, 3, 3, 3, 3, 1], ["P1"] * 8, (15 / 24, 15 / 24)),  # one predicate: 15 of 24 prompts right
    # two predicates taking turns: P1 5/12, P2 4/12 -> macro 0.375; micro 9/24
    ([2, 2, 2, 1, 0, 0, 1, 1], ["P1", "P2"] * 4, (0.375, 0.375)),
])
def test_held_out_and_tables_add_up_alike(rights, predicates, by_hand):
    """Issue 43: one implementation of macro and micro P@1 (``metrics.macro_micro``). The verdict's held-out
    P@1 and the metric tables of the same prompts are the same numbers to the last digit (they once added
    up in two ways and differed there), whatever the order of the rankings."""
    scored = _asked_three_times(rights, predicates)
    r = A.p_at_1_with_ci(scored, 0, 0.95, 0)
    t = A.aggregate(scored)
    assert (r["macro"], r["micro"]) == (t["p@1"], t["p@1_micro"])  # exact: no approx, the last digit is the point
    assert (r["macro"], r["micro"]) == pytest.approx(by_hand)
    assert A.p_at_1_with_ci(scored[::-1], 0, 0.95, 0) == r  # order of rankings: no matter
    acc = A.accuracy(scored)
    assert (acc.macro, acc.micro) == (t["p@1"], t["p@1_micro"])


def test_paraphrase_consistency_is_macro_over_predicates():
    """mParaRel per language: per fact over its templates, mean over a predicate's facts, macro over predicates.
    P1's fact answers right with both templates (accuracy 1, consistency 1); P2's fact right with t1 only,
    and t2 names another object (accuracy 1/2, consistency 0). Macro: accuracy 0.75, consistency 0.5,
    consistency-accuracy (1 + 0)/2 = 0.5 (not the best predicate's 1.0)."""
    from factatlas.probe.cross_lingual import pararel_section

    ps = [prompt("g", "P1", template="t1"), prompt("g", "P1", template="t2"),
          prompt("h", "P2", template="t1"), prompt("h", "P2", template="t2")]
    rows = [ranking(ps[0], RIGHT), ranking(ps[1], RIGHT), ranking(ps[2], RIGHT), ranking(ps[3], WRONG)]
    section = pararel_section(A.join(rows, {p.prompt_id: p for p in ps}).scored)
    macro = section["by_lang"]["en"]["macro"]
    assert macro == {"accuracy": 0.75, "consistency": 0.5, "consistency_accuracy": 0.5}


def test_cross_lingual_means_leave_out_the_diagonal(fixture):
    """With two languages the mean RankC / COverlap is the one off-diagonal pair (a language agrees with
    itself: 1.0 on the diagonal). en and ar rank f2 differently, so the pair is below 1."""
    from factatlas.probe.cross_lingual import cross_lingual

    prompts, rows = fixture
    section = cross_lingual(A.join(rows, prompts).scored, ["en", "ar"], "softmax")
    rankc, cover = section["rankc"], section["coverlap"]
    assert rankc["matrix"]["en"]["en"] == 1.0 and rankc["matrix"]["en"]["ar"] < 1.0
    assert rankc["mean"] == rankc["matrix"]["en"]["ar"]
    # COverlap: right in both / right in either, over (fact, template): f1 t1, f1 t2, f4 both; f2 en only
    assert cover["mean"] == cover["matrix"]["ar"]["en"] == pytest.approx(3 / 4)
