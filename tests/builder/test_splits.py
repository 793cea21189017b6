"""Splits never move between versions: a fact's split is a function of its id and the recorded salt."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factatlas.builder.splits import (
    DEFAULT_SALT,
    assign_splits,
    parse_fractions,
    realised_fractions,
    split_counts,
    split_point,
    thresholds,
)
from factatlas.errors import ConfigError
from tests.builder.builder_fixtures import BASE_FACTS, build, synthetic_rows

BASE_IDS = ["arab:P36:Q79", "arab:P36:Q810", "west:P36:Q142", "west:P36:Q183", "arab:P19:Q1", "west:P19:Q2"]


def test_split_points_are_the_published_hash():
    # first 64 bits of sha256("factatlas-splits-v1\x1f" + id), big-endian: changing the rule moves facts
    assert split_point("west:P19:Q2", DEFAULT_SALT) == 7138024367642536445  # u = 0.3870
    assert split_point("arab:P36:Q79", DEFAULT_SALT) == 16599479232397647704  # u = 0.8999
    assert split_point("arab:P36:Q79", "other") != split_point("arab:P36:Q79", DEFAULT_SALT)


def test_assignment_on_known_ids():
    # u: Q79 .900, Q810 .760, Q142 .720, Q183 .906, Q1 .935, Q2 .387 -> only Q2 lies below 0.5; Q142 and Q2
    # below 0.75 (Q810 at .760 just misses)
    half = assign_splits(BASE_IDS, {"dev": 0.5, "test": 0.5})
    assert half == {"arab:P19:Q1": "test", "arab:P36:Q79": "test", "arab:P36:Q810": "test",
                    "west:P19:Q2": "dev", "west:P36:Q142": "test", "west:P36:Q183": "test"}
    quarter = assign_splits(BASE_IDS, {"dev": 0.75, "test": 0.25})
    assert sorted(k for k, v in quarter.items() if v == "dev") == ["west:P19:Q2", "west:P36:Q142"]
    # with salt "other" the u of Q79 is 0.029 and of Q810 0.091: a salt change moves facts, visibly
    assert assign_splits(BASE_IDS, {"dev": 0.1, "test": 0.9}, salt="other")["arab:P36:Q79"] == "dev"


def test_thresholds_cover_the_whole_range_and_skip_empty_splits():
    assert thresholds({"train": 0.0, "dev": 0.25, "test": 0.75, "x": 0.0}) == (
        ("train", 0), ("dev", 1 << 62), ("test", 1 << 64), ("x", 1 << 64))
    assert set(assign_splits(BASE_IDS, {"train": 0.0, "test": 1.0}).values()) == {"test"}
    with pytest.raises(ConfigError, match="sum to 1"):
        thresholds({"dev": 0.2, "test": 0.7})
    with pytest.raises(ConfigError, match="salt must be a non-empty string"):
        assign_splits(BASE_IDS, salt=" ")
    assert parse_fractions("dev:0.25, test:0.75") == {"dev": 0.25, "test": 0.75}


def test_realised_fractions_are_reported_per_cell():
    counts = split_counts({"a:P1:Q1": "dev", "a:P1:Q2": "test", "a:P1:Q3": "test", "a:P1:Q4": "test",
                           "b:P1:Q5": "test"},
                          {"a:P1:Q1": ("a", "P1"), "a:P1:Q2": ("a", "P1"), "a:P1:Q3": ("a", "P1"),
                           "a:P1:Q4": ("a", "P1"), "b:P1:Q5": ("b", "P1")}, ["dev", "test"])
    assert counts == {"a": {"P1": {"dev": 1, "test": 3}}, "b": {"P1": {"dev": 0, "test": 1}}}
    # overall 1/5 dev; cell a 1/4; cell b 0/1 -> largest deviation |0.25 - 0.1| = 0.15
    assert realised_fractions(counts, {"dev": 0.1, "test": 0.9}) == {
        "target": {"dev": 0.1, "test": 0.9}, "overall": {"dev": 0.2, "test": 0.8},
        "cells": {"a": {"P1": {"dev": 0.25, "test": 0.75}}, "b": {"P1": {"dev": 0.0, "test": 1.0}}},
        "max_deviation": 0.15}


def test_build_records_salt_and_realised_fractions():
    result = build(BASE_FACTS, fractions={"dev": 0.5, "test": 0.5})
    meta, stats = result.content.meta, result.content.stats
    assert meta["splits"]["salt"] == DEFAULT_SALT
    assert meta["splits"]["counts"] == {"dev": 1, "test": 5}
    assert {r.fact_id for r in result.content.prompts if r.split == "dev"} == {"west:P19:Q2"}
    assert stats["splits"]["west"]["P19"] == {"dev": 1, "test": 0}
    assert stats["split_fractions"]["overall"] == {"dev": round(1 / 6, 6), "test": round(5 / 6, 6)}
    assert stats["split_fractions"]["max_deviation"] == 0.5
    salted = build(BASE_FACTS, fractions={"dev": 0.5, "test": 0.5}, split_salt="other")
    assert salted.content.meta["splits"]["salt"] == "other"
    # u under "other": Q79 .029, Q810 .091, Q142 .485 -> dev; Q183 .709, Q1 .868, Q2 .964 -> test
    assert salted.content.meta["splits"]["counts"] == {"dev": 3, "test": 3}


def _splits_of(rows) -> dict[str, str]:
    return {r.fact_id: r.split for r in build(rows, fractions={"dev": 0.3, "test": 0.7}).content.prompts}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.integers(1, 25), added=st.integers(0, 10), removed=st.sets(st.integers(0, 49), max_size=12))
def test_additions_and_removals_never_move_a_surviving_fact(base, added, removed):
    """Build v1 from n synthetic facts per culture, v2 from v1 minus some plus some new ones: every fact in
    both keeps its split (the old quota cut moved boundary facts in 141 of 550 single additions)."""
    v1_rows = synthetic_rows(base)
    v2_rows = [r for i, r in enumerate(v1_rows) if i not in removed] + synthetic_rows(added, start=base)
    v1, v2 = _splits_of(v1_rows), _splits_of(v2_rows)
    survivors = v1.keys() & v2.keys()
    assert {f: v1[f] for f in survivors} == {f: v2[f] for f in survivors}


@settings(max_examples=200, deadline=None)
@given(ids=st.sets(st.text(min_size=1, max_size=12), min_size=1, max_size=30),
       others=st.sets(st.text(min_size=1, max_size=12), max_size=30),
       dev=st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]))
def test_a_fact_split_ignores_every_other_fact(ids, others, dev):
    fractions = {"dev": dev, "test": 1.0 - dev}
    alone = assign_splits(ids, fractions)
    together = assign_splits(ids | others, fractions)
    assert {i: together[i] for i in ids} == alone
    assert all(assign_splits([i], fractions)[i] == alone[i] for i in ids)


def test_the_printed_table_shows_realised_split_shares():
    from rich.console import Console

    from factatlas.builder.stats import stats_table

    result = build(BASE_FACTS, fractions={"dev": 0.5, "test": 0.5})
    console = Console(width=220, record=True)
    console.print(stats_table(result.content.stats, ["ar", "en"]))
    text = console.export_text()
    assert "dev (share)" in text and "test (share)" in text
    west_p19 = next(line for line in text.splitlines() if "west" in line and "P19" in line)
    assert [cell.strip() for cell in west_p19.split("│")[-3:-1]] == ["1 (100.0%)", "0 (0.0%)"]
    caption = " ".join(text.split())  # the caption wraps
    assert "splits realised (target): dev 16.7% (50%), test 83.3% (50%), largest cell deviation 50.0%" in caption


def test_realised_shares_are_rounded_to_six_places_and_split_cells_show_their_share():
    from factatlas.builder.stats import split_cell

    counts = {"west": {"P19": {"dev": 1, "test": 2}}}
    realised = realised_fractions(counts, {"dev": 0.1, "test": 0.9})
    assert realised["overall"] == {"dev": 0.333333, "test": 0.666667}
    assert realised["max_deviation"] == 0.233333
    assert (split_cell({"dev": 3, "test": 7}, "dev"), split_cell({"dev": 0, "test": 0}, "dev")) == ("3 (30.0%)", "0")
    assert split_cell({"test": 4}, "dev") == "0 (0.0%)"


def test_the_stats_table_shows_a_language_without_facts_in_a_cell_as_zero():
    from rich.console import Console

    from factatlas.builder.stats import stats_table

    stats = {"facts": 1, "prompts": 2, "western_share": 1.0, "label_coverage_scope": "objects",
             "label_coverage": {"en": 1.0}, "leakage_rate": {"en": {"rate": 0.0}},
             "cells": {"west": {"P19": {"facts": {"en": 1}, "entropy_bits": 0.0, "valid_objects_per_fact": 1.0,
                                        "distinct_objects": 1}}}}
    console = Console(width=200, record=True, color_system=None)
    console.print(stats_table(stats, ["ar", "en"]))
    row = next(line for line in console.export_text().splitlines() if "P19" in line)
    assert [c.strip() for c in row.split("│")[1:-1]] == ["west", "P19", "0", "1", "0.00", "1.00", "1"]
