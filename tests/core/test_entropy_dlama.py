"""DLAMA entropy against DLAMA-v1 itself (../shared/reference/dlama, see its SOURCE.md).

DLAMA's published code maps each triple to its most frequent object, ties broken by natural id order
(natsort), and rounds the entropy to 3 decimals for its tables. The rule is restated below from the paper
and independently of ``factatlas.entropy``; every (pair, culture, predicate) cell of DLAMA-v1 must agree at
that precision, and the cell a text sort gets wrong (West P47: 2.88) must come out as printed (2.7).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from factatlas.entropy import natural_key, predicate_entropy
from tests.builder.importers import reference

DLAMA = reference("dlama", "dlama-v1")  # found by walking up from the checkout


def published_rule(object_lists: list[list[str]]) -> float:
    """Most frequent object per fact, ties to the numerically smallest QID; -sum p log2 p."""
    counts = Counter(q for objs in object_lists for q in objs)

    def qid_number(q: str) -> int:
        return int(q[1:])

    chosen = Counter(sorted(objs, key=lambda q: (-counts[q], qid_number(q)))[0] for objs in object_lists)
    n = len(object_lists)
    return -sum(c / n * math.log2(c / n) for c in chosen.values())


def cells() -> list[tuple[str, str, Path]]:
    if not DLAMA.is_dir():
        return []
    out = []
    for pair in sorted(p for p in DLAMA.iterdir() if p.is_dir()):
        english = pair / "dlama" / "en"  # QIDs are the same in both languages of a pair
        out += [(pair.name, f.stem, f) for f in sorted(english.glob("P*.jsonl"))]
    return out


def read_objects(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line)["obj_uri"] for line in f if line.strip()]


def test_natural_key_orders_digit_runs_as_numbers():
    assert sorted(["Q142", "Q29", "Q1000", "Q3"], key=natural_key) == ["Q3", "Q29", "Q142", "Q1000"]
    assert sorted(["Q142", "Q29"]) == ["Q142", "Q29"]  # what a text sort does
    assert natural_key("P47") < natural_key("P530") and natural_key("A") < natural_key("B")


def test_tie_goes_to_the_naturally_smaller_qid():
    # Q29, Q142 and Q7 are each valid for 2 facts. Natural order: the shared facts go to Q29 and Q7
    # -> {Q29: 2, Q7: 2}, 1 bit. A text sort ("Q142" < "Q29" < "Q7") gives {Q29: 1, Q142: 2, Q7: 1}, 1.5.
    facts = [["Q29"], ["Q142", "Q29"], ["Q142", "Q7"], ["Q7"]]
    assert predicate_entropy(facts) == 1.0


@pytest.mark.skipif(not DLAMA.is_dir(), reason="DLAMA reference data (shared/reference/dlama) absent")
def test_every_dlama_v1_cell_at_the_published_precision():
    found = cells()
    assert len(found) == 3 * 20 * 2  # 3 pairs x 20 predicates x 2 cultures
    wrong = []
    for pair, name, path in found:
        objects = read_objects(path)
        ours, theirs = round(predicate_entropy(objects), 3), round(published_rule(objects), 3)
        if ours != theirs:
            wrong.append(f"{pair}/{name}: {ours} != {theirs}")
    assert not wrong, wrong


@pytest.mark.skipif(not DLAMA.is_dir(), reason="DLAMA reference data (shared/reference/dlama) absent")
def test_west_p47_as_printed():
    path = DLAMA / "arab-west" / "dlama" / "en" / "P47_general_WESTERN_COUNTRIES.jsonl"
    value = predicate_entropy(read_objects(path))
    assert f"{value:.1f}" == "2.7"  # a text sort of QIDs gives 2.88


def test_stats_card_and_metrics_give_one_entropy(tmp_path):
    """stats.json (build), the dataset card (publish) and metrics.json (probe) on one benchmark: a cell
    with multi-object facts and a Q29/Q142 tie, where the three former definitions disagreed."""
    from factatlas.benchmark import Benchmark
    from factatlas.builder.stats import compute_stats
    from factatlas.probe.evaluate import dataset_profile, load_benchmark
    from factatlas.publish.card import predicate_stats
    from factatlas.publish.source import load_source
    from tests.publish.publish_fixtures import LABELS, make_benchmark

    labels = {**LABELS, "Q29": {"en": "Spain", "ar": "إسبانيا"}, "Q142": LABELS["Q142"],
              "Q7": {"en": "Seven", "ar": "سبعة"}, "Q8": {"en": "Eight", "ar": "ثمانية"},
              "Q9": {"en": "Nine", "ar": "تسعة"}}
    facts = (("west", "P36", "Q1", ("Q29",), ("Q142",)), ("west", "P36", "Q2", ("Q142", "Q29"), ("Q142",)),
             ("west", "P36", "Q3", ("Q142", "Q7"), ("Q142",)), ("west", "P36", "Q79", ("Q7",), ("Q142",)),
             ("arab", "P36", "Q810", ("Q8", "Q9"), ("Q810",)), ("arab", "P36", "Q183", ("Q8",), ("Q810",)))
    run = make_benchmark(tmp_path / "run", facts=facts, labels=labels)
    bench = Benchmark.open(run)
    stats = compute_stats(bench.facts, bench.prompts, bench.entities, bench.languages)
    card = {(p.culture, p.predicate): p.entropy_bits for p in predicate_stats(load_source(run))}
    metrics = dataset_profile(load_benchmark(bench))["predicates"]["P36"]["entropy"]
    assert stats["cells"]["west"]["P36"]["entropy_bits"] == 1.0  # {Q29: 2, Q7: 2}
    assert stats["cells"]["arab"]["P36"]["entropy_bits"] == 0.0  # both facts at Q8
    for culture in ("west", "arab"):
        one = stats["cells"][culture]["P36"]["entropy_bits"]
        assert card[(culture, "P36")] == round(one, 3) and metrics[culture] == one
