"""Golden test on real model output: BLOOM-3b's rankings on BMLAMA-17 (the RankC paper's own records).

Reads ../shared/reference/bmlama (skips cleanly when absent): the TSVs give each query's candidates
(the gold is the last candidate) and bloom-3b_rankings/ the model's candidate indices, best first.
The paper publishes its BLOOM-3b RankC matrix only as a heat-map image, so the reference here is the
definition itself: the O(N^2) computation of the released code (cumulative top-j sets, weights
order = N..1) must equal our O(N) RankC on every query, and the paper's qualitative findings hold.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
from pathlib import Path

import pytest

from factatlas.probe.metrics import (
    coverlap,
    gold_rank,
    precision_at_k,
    rankc,
    rankc_matrix,
    rankc_per_query,
    rankc_weights,
)

REPO = Path(__file__).resolve().parents[2]
BMLAMA = REPO.parent / "shared" / "reference" / "bmlama"
RANKINGS = BMLAMA / "bloom-3b_rankings" / "bloom-3b_BMLAMA17_rank_indices.json.gz"

pytestmark = pytest.mark.skipif(not RANKINGS.exists(), reason=f"reference data absent: {RANKINGS}")


@pytest.fixture(scope="module")
def rankings() -> dict[str, list[list[int]]]:
    with gzip.open(RANKINGS, "rt", encoding="utf-8") as f:
        return json.load(f)


def candidate_lists(lang: str) -> list[list[str]]:
    rows = []
    with open(BMLAMA / "BMLAMA17" / f"{lang}.tsv", encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "Prompt":  # header (the upstream loader skips it the same way)
                continue
            rows.append(fields[2].split(", "))
    return rows


def released_code_consist(r1: list[int], r2: list[int]) -> float:
    """The released code's loop, independently re-typed: softmax over order = [N, ..., 1]."""
    order = [len(r1) - i for i in range(len(r1))]
    z = sum(math.exp(o) for o in order)
    total = 0.0
    for j in range(len(r1)):
        s1, s2 = set(r1[: j + 1]), set(r2[: j + 1])
        total += math.exp(order[j]) / z * len(s1 & s2) / len(s1)
    return total


def test_bmlama17_shape(rankings):
    assert len(rankings) == 17
    assert {len(v) for v in rankings.values()} == {6792}
    en = candidate_lists("en")
    assert len(en) == 6792
    # every ranking is a permutation of its query's candidate list, in every language
    for lang, ranked in rankings.items():
        assert all(sorted(r) == list(range(len(c))) for r, c in zip(ranked, en, strict=True)), lang


def test_rankc_equals_the_released_definition_on_every_query(rankings):
    a, b = rankings["en"], rankings["es"]
    fast = rankc_per_query(a, b)
    naive = [released_code_consist(x, y) for x, y in zip(a, b, strict=True)]
    assert list(fast) == pytest.approx(naive, abs=1e-12)
    assert rankc(a, b) == pytest.approx(sum(naive) / len(naive), abs=1e-12)


def test_rankc_matrix_of_bloom_3b(rankings):
    langs = sorted(rankings)
    matrix = {(x, y): rankc(rankings[x], rankings[y]) for x, y in itertools.combinations(langs, 2)}
    assert all(0.0 <= v <= 1.0 for v in matrix.values())
    # spot-check two more pairs against the released definition
    for x, y in (("ar", "he"), ("ja", "zh")):
        naive = [released_code_consist(p, q) for p, q in zip(rankings[x], rankings[y], strict=True)]
        assert matrix[(x, y)] == pytest.approx(sum(naive) / len(naive), abs=1e-12)
    # Values recorded from the definition above (regression guard, 1e-9): en-es and ru-uk are the most
    # consistent pairs, as the paper reports for BLOOM-3b (closely related, shared-script languages).
    assert matrix[("en", "es")] == pytest.approx(0.5249843695, abs=1e-9)
    # all 136 pairs at once (each language converted once): the same numbers, bit for bit
    assert rankc_matrix({lang: rankings[lang] for lang in langs}) == matrix
    assert matrix[("ru", "uk")] == pytest.approx(0.5342232669, abs=1e-9)
    top5 = sorted(matrix, key=matrix.get, reverse=True)[:5]
    assert ("en", "es") in top5 and ("ru", "uk") in top5
    # independent random rankings: E|top_j ∩ top'_j| = j^2 / N, so E[consist] = sum_j w_j j / N
    # (0.158 for N = 10); the model's mean over the 136 pairs is clearly above that
    chance = float((rankc_weights(10) * range(1, 11)).sum() / 10)
    assert chance == pytest.approx(0.158, abs=1e-3)
    assert sum(matrix.values()) / len(matrix) > chance + 0.05


def test_p_at_1_and_coverlap_of_bloom_3b(rankings):
    # BMLAMA's gold is the last candidate of each query
    p1 = {}
    correct = {}
    for lang in ("en", "es", "ar"):
        cands = candidate_lists(lang)
        correct[lang] = [
            precision_at_k(gold_rank([c[i] for i in r], {c[-1]}), 1) == 1.0
            for r, c in zip(rankings[lang], cands, strict=True)
        ]
        p1[lang] = sum(correct[lang]) / len(correct[lang])
    # direct count: the top index is the last position
    assert p1["en"] == pytest.approx(sum(r[0] == len(r) - 1 for r in rankings["en"]) / 6792)
    assert p1["en"] == pytest.approx(3718 / 6792)  # 0.5474
    assert p1["en"] > p1["es"] > p1["ar"]  # English best, as for every model in the paper
    co = coverlap(correct["en"], correct["es"])
    both = sum(a and b for a, b in zip(correct["en"], correct["es"], strict=True))
    either = sum(a or b for a, b in zip(correct["en"], correct["es"], strict=True))
    assert co == pytest.approx(both / either)
    assert 0.0 < co < 1.0


def test_compute_metrics_reproduces_the_direct_numbers(rankings, tmp_path):
    """The full pipeline (rankings rows -> compute_metrics) on BLOOM-3b's en/es/ar records gives the same
    RankC and P@1 as the direct computation above."""
    from factatlas.probe.evaluate import compute_metrics
    from factatlas.records import ProbeResult
    from factatlas.tables import prompt_from_row
    from tests.probe.test_aggregate import prompts_benchmark

    langs = ("ar", "en", "es")
    n = len(rankings["en"])
    prompts, rows = [], []
    for lang in langs:
        for i, ranking in enumerate(rankings[lang]):
            cands = [f"Q{i + 1}{j:02d}" for j in range(len(ranking))]  # candidate j: the same QID in every language
            fid, pid = f"bmlama:P0:Q{i + 1}", f"bmlama:P0:Q{i + 1}|{lang}|t"
            prompts.append({"prompt_id": pid, "fact_id": fid, "lang": lang, "template_id": "t", "culture": "bmlama",
                            "split": "test",
                            "predicate": "P0", "subject_qid": f"Q{i + 1}", "subject_label": "", "gold_qids": [cands[-1]],
                            "gold_forms": [[""]], "candidate_qids": cands, "candidate_forms": [""] * len(cands),
                            "kind": "cloze", "text": "[Y]", "answer_start": 0, "pair": "bmlama",
                            "template_status": "reviewed"})
            ranked = [cands[j] for j in ranking]
            rows.append({"model": "bloom-3b", "scoring": "bmlama", "prompt_id": pid, "ranked_qids": ranked,
                         "scores": [], "correct_at_1": ranked[0] == cands[-1]})

    meta = {"name": "BMLAMA-17", "cultures": ["bmlama"], "languages": list(langs)}
    view = prompts_benchmark(tmp_path, meta, [prompt_from_row(p) for p in prompts])
    m = compute_metrics([ProbeResult(r["model"], r["scoring"], r["prompt_id"], view.prompts_by_id[r["prompt_id"]].fact_id,
                                     "", "", "", "", tuple(r["ranked_qids"]), (), r["correct_at_1"]) for r in rows], view)
    matrix = m["cross_lingual"]["rankc"]["matrix"]
    assert matrix["en"]["es"] == pytest.approx(rankc(rankings["en"], rankings["es"]), abs=1e-12)
    assert matrix["ar"]["es"] == pytest.approx(rankc(rankings["ar"], rankings["es"]), abs=1e-12)
    assert m["cross_lingual"]["queries"]["en"]["es"] == n
    assert m["summary"]["by_lang"]["en"]["p@1"] == pytest.approx(3718 / 6792)
    assert m["coverage"]["correct_at_1_mismatch"] == 0
