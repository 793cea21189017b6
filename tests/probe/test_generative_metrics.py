"""Open-answer rules (generative, generative-lenient, xfactr) count in metrics.json.

The answers go through the prober's own path (``answer_prompts``: alias index, judge, rankings rows), from
answerers that know every fact, none, or exactly the Arab half of every predicate.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from factatlas.benchmark import Benchmark
from factatlas.probe.evaluate import compute_metrics
from factatlas.probe.generative import alias_index, answer_prompts
from factatlas.tables import probe_result_to_row, prompt_from_row
from tests.probe.test_report_fixtures import entities, prompt_rows, write_benchmark_dir


class ScriptedAnswerer:
    """A TextGenerator that gives its answers in order, one per prompt it is asked (prompt texts cannot
    key them: a cloze whose slot comes first has the same empty prefix for every fact)."""

    def __init__(self, answers: Sequence[str], scoring: str):
        self.answers, self.scoring = list(answers), scoring

    def generate(self, prompts: Sequence[str]) -> list[str]:
        out, self.answers = self.answers[: len(prompts)], self.answers[len(prompts):]
        return out


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    rows = prompt_rows()
    return write_benchmark_dir(tmp_path_factory.mktemp("gen") / "build", rows, entities()), rows


def answers_for(rows, knows) -> list[str]:
    """Per prompt: the gold's label when ``knows(row)``, else the label of a wrong candidate."""
    out = []
    for r in rows:
        gold = r["gold_qids"][0]
        if knows(r):
            out.append(r["gold_forms"][0][0])
        else:
            out.append(next(f for q, f in zip(r["candidate_qids"], r["candidate_forms"], strict=True) if q != gold))
    return out


@pytest.mark.parametrize("scoring", ["generative", "generative-lenient", "xfactr"])
@pytest.mark.parametrize(("knows", "expected"), [
    (lambda r: True, 1.0),
    (lambda r: False, 0.0),
    (lambda r: r["culture"] == "arab", 0.5),  # 6 of 12 facts of every predicate
], ids=["oracle", "always-wrong", "half-right"])
def test_open_answers_count(bench, scoring, knows, expected):
    path, rows = bench
    prompts = [prompt_from_row(r) for r in rows]
    aliases = alias_index(prompts, Benchmark.open(path))
    results = answer_prompts(ScriptedAnswerer(answers_for(rows, knows), scoring), prompts, aliases, "m", scoring)
    assert any(len(r.ranked_qids) == 1 for r in results)  # matched candidates, not a full ranking
    m = compute_metrics([probe_result_to_row(r) for r in results], path)
    cov = m["coverage"]
    assert (cov["used"], cov["foreign_candidates"], cov["generative"]) == (len(rows), 0, len(rows))
    overall = m["summary"]["overall"]
    assert (overall["p@1"], overall["p@1_micro"]) == (expected, expected)
    assert m["summary"]["by_culture"]["arab"]["p@1"] == (1.0 if expected else 0.0)
    assert m["cross_lingual"]["languages"] == []  # no full rankings: RankC/COverlap do not apply
