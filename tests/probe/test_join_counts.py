"""The metrics' join (``probe.aggregate.join``) over a forward-only prompt stream: what it counts for rows it
cannot use, exactly (a repeated row, a fact table beside it, a one-candidate prompt)."""

from __future__ import annotations

from factatlas.benchmark import Benchmark
from factatlas.probe.aggregate import PromptStream, join
from factatlas.records import ProbeResult
from tests.probe.test_metrics_evaluate import ranking
from tests.probe.test_report_fixtures import entities, prompt_rows, write_benchmark_dir


def result(row: dict, correct: bool = True) -> ProbeResult:
    r = ranking(row, correct)
    return ProbeResult(**{**r, "ranked_qids": tuple(r["ranked_qids"]), "scores": tuple(r["scores"])})


def test_a_repeated_row_is_counted_once_as_a_duplicate_through_the_stream(tmp_path):
    rows = sorted(prompt_rows(), key=lambda r: r["prompt_id"])
    bench = Benchmark.open(write_benchmark_dir(tmp_path / "build", rows, entities()))
    results = [result(r) for r in rows]
    joined = join([results[0], results[0], *results[1:]], PromptStream(bench, {"ar", "en"}),
                  kinds_in_benchmark=bench.kind_counts)
    assert (joined.counts["rows"], joined.counts["duplicate_prompt"], len(joined.scored)) == (
        len(rows) + 1, 1, len(rows))
    assert "gold_not_in_facts" not in joined.counts  # counted only when a fact table is given


def test_with_the_facts_the_golds_they_lack_are_counted_and_a_single_candidate_is_no_tie(tmp_path):
    from factatlas.probe.analysis.records import benchmark_facts

    rows = sorted(prompt_rows(), key=lambda r: r["prompt_id"])
    alone = dict(rows[0], candidate_qids=rows[0]["gold_qids"][:1], candidate_forms=[rows[0]["gold_forms"][0][0]])
    rows = [alone, *rows[1:]]
    bench = Benchmark.open(write_benchmark_dir(tmp_path / "build", rows, entities()))
    only = ProbeResult(**{**ranking(rows[1], True), "prompt_id": alone["prompt_id"], "fact_id": alone["fact_id"],
                          "ranked_qids": tuple(alone["gold_qids"][:1]), "scores": (-0.5,)})
    joined = join([only, *(result(r) for r in rows[1:])], PromptStream(bench, {"ar", "en"}),
                  facts=benchmark_facts(bench), kinds_in_benchmark=bench.kind_counts)
    assert joined.counts["gold_not_in_facts"] == 0 and joined.counts["top_ties"] == 0
    assert joined.counts["foreign_candidates"] == 0 and len(joined.scored) == len(rows)
