"""Every table, record and rule that names an average carries that average (issue 43 item 3).

Each test reads a hand-worked set with two predicates of different sizes, so micro (mean over facts) and
macro (mean over predicates of the mean over their facts) differ and a swap of the two shows. MODEL_A
(tests/probe/analysis_fixture.py): fact values (mean over en, ar) f1 1, f2 .5, f3 0, f4 .5, f5 0, f6 1, f7 1;
P1 = f1 f2 f4 f7, P2 = f3 f5 f6; micro 4/7, macro (3/4 + 1/3) / 2 = 13/24. The mutants these tests kill are
listed in scripts/mutation_sweep.py (``choice:``)."""

from __future__ import annotations

import csv
import json
from dataclasses import replace

import pytest

from factatlas.probe.analysis.records import ModelResults
from factatlas.records import Fact, ObjectRef
from tests.probe.analysis_fixture import MODEL_A, model_results

MICRO, MACRO = 4 / 7, 13 / 24


def _a():
    return model_results("A", MODEL_A)


def _row(table, **where):
    """The one row of ``table`` whose named columns hold the given values."""
    index = {h: i for i, h in enumerate(table.head)}
    rows = [r for r in table.rows if all(r[index[h]] == v for h, v in where.items())]
    assert len(rows) == 1, f"{table.name if hasattr(table, 'name') else table.head}: {len(rows)} rows match {where}"
    return dict(zip(table.head, rows[0], strict=True))


def _table(sections, name):
    return next(t for s in sections for t in s.tables if t.name == name)


# ---- the one aggregation's records -------------------------------------------------------------------

def test_macro_mean_and_micro_mean_differ_on_groups_of_different_sizes():
    from factatlas.probe.metrics import macro_mean, micro_mean

    groups = {"P1": [1.0, 1.0, 1.0], "P2": [0.0]}
    assert macro_mean(groups) == pytest.approx(0.5)
    assert micro_mean(groups) == pytest.approx(0.75)


def test_p_at_1_with_ci_names_each_interval_by_its_average():
    """Facts of a predicate all right or all wrong: every resample (facts drawn within predicates) gives the
    same two averages, so each interval collapses onto its own point."""
    from factatlas.probe.aggregate import p_at_1_with_ci

    table = {("a", "west", "P1"): (True, True), ("b", "west", "P1"): (True, True),
             ("c", "west", "P2"): (False, False), ("d", "west", "P2"): (False, False),
             ("e", "west", "P2"): (False, False), ("f", "west", "P2"): (False, False)}
    got = p_at_1_with_ci(model_results("A", table), n_boot=50, confidence=0.95, seed=0)
    assert (got["macro"], got["micro"]) == (pytest.approx(0.5), pytest.approx(1 / 3))
    assert got["ci"]["macro"] == pytest.approx((0.5, 0.5))
    assert got["ci"]["micro"] == pytest.approx((1 / 3, 1 / 3))


# ---- the analyses' tables --------------------------------------------------------------------------------

def test_dlama_all_rows_are_macro_over_predicates():
    from factatlas.probe.analysis import dlama as D

    *per_predicate, overall = D.augmentation_effect(_a())
    assert [e.predicate for e in per_predicate] == ["P1", "P2"]
    assert (overall.predicate, overall.direct_only, overall.all_valid) == ("all", pytest.approx(MACRO),
                                                                           pytest.approx(MACRO))
    *_, strict = D.equivalence_effect(_a(), D.Equivalences(()))
    assert (strict.predicate, strict.strict, strict.with_equivalences) == ("all", pytest.approx(MACRO),
                                                                           pytest.approx(MACRO))


@pytest.mark.slow  # the section's plots (matplotlib): seconds
def test_compare_p_at_1_table_columns(tmp_path):
    from factatlas.probe.analysis.sections import CompareOptions, compare_sections

    sections = compare_sections({"A": _a()}, CompareOptions(n_boot=10))
    row = _row(_table(sections, "p_at_1"), model="A", culture="all", language="all")
    assert (row["facts"], row["prompts"]) == (7, 14)
    assert (row["P@1 micro"], row["P@1 macro"]) == (pytest.approx(MICRO), pytest.approx(MACRO))


@pytest.mark.slow  # the section's plots (matplotlib): seconds
def test_per_country_table_columns(tmp_path):
    from factatlas.probe.analysis.sections import dlama_sections

    results = [replace(r, countries=("Q30",)) for r in _a()]
    sections = dlama_sections({"A": results}, owners={})
    table = next(t for s in sections for t in s.tables if "P@1 micro" in t.head and "country" in t.head)
    row = _row(table, model="A", culture="west", language="all")
    # west: f1 1, f2 .5, f7 1 (P1), f3 0 (P2): micro 2.5/4; macro (5/6 + 0) / 2
    assert (row["P@1 micro"], row["P@1 macro"]) == (pytest.approx(2.5 / 4), pytest.approx(5 / 12))


@pytest.mark.slow  # the section's plots (matplotlib): seconds
def test_gold_length_table_columns(tmp_path):
    from factatlas.probe.analysis.sections import xfactr_sections

    results = tuple(replace(r, gold_subwords=1) for r in _a())
    sections = xfactr_sections([ModelResults("A", results)])
    row = _row(_table(sections, "gold_length"), model="A", language="all")
    assert (row["facts"], row["P@1 micro"], row["P@1 macro"]) == (7, pytest.approx(MICRO), pytest.approx(MACRO))


@pytest.mark.slow  # the section's plots (matplotlib): seconds
def test_scale_table_columns(tmp_path):
    from factatlas.probe.analysis.sections import scale_sections
    from tests.probe.test_typology_scale import _safetensors

    folder, run = tmp_path / "model", tmp_path / "probe" / "A"
    folder.mkdir()
    _safetensors(folder / "model.safetensors", [(3, 4)])
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}), "utf-8")
    run.mkdir(parents=True)
    (run / "probe.json").write_text(json.dumps({"model": str(folder)}), "utf-8")
    sections = scale_sections([ModelResults("A", tuple(_a()))], [run])
    row = _row(_table(sections, "model_scale"), model="A")
    assert (row["parameters"], row["P@1 micro"], row["P@1 macro"]) == (12, pytest.approx(MICRO),
                                                                         pytest.approx(MACRO))


def _fact(fid: str, predicate: str, culture: str, popularity: float = 50.0, articles=(), home=()) -> Fact:
    return Fact(fid, predicate, f"Q{fid[1:]}", (ObjectRef("Qg"),), culture, (), popularity, 1, articles, home)


def test_local_view_table_columns(tmp_path):
    """Every fact has its article in ar only, the culture's edition: in en each is local knowledge."""
    from factatlas.probe.analysis.sections import locality_sections

    facts = [_fact(f, p, c, articles=("ar",), home=("ar",)) for (f, c, p) in MODEL_A]
    (section,) = locality_sections({"A": _a()}, facts, n_boot=10)
    row = _row(_table([section], "local_view"), model="A", language="en")
    # en: f1 1, f2 1, f4 0, f7 1 (P1), f3 0, f5 0, f6 1 (P2): micro 4/7, macro (3/4 + 1/3) / 2
    assert row["local facts"] == 7
    assert (row["P@1 local (micro)"], row["P@1 local (macro)"]) == (pytest.approx(4 / 7),
                                                                     pytest.approx((3 / 4 + 1 / 3) / 2))


def test_popularity_table_columns(tmp_path):
    """Every fact in one log10 bucket (50 views: 10^1-10^2), so that row holds the whole set."""
    from factatlas.probe.analysis.sections import popularity_sections

    facts = [_fact(f, p, c) for (f, c, p) in MODEL_A]
    (section,) = popularity_sections({"A": _a()}, facts)
    row = _row(_table([section], "popularity_buckets"), model="A", culture="all", language="all",
               **{"bucket kind": "log10"})
    assert (row["facts"], row["P@1 micro"], row["P@1 macro"]) == (7, pytest.approx(MICRO), pytest.approx(MACRO))


# ---- the report, the verdict and X-FaKT's context cells ---------------------------------------------------

def _summary(macro: float, micro: float, ci_macro, ci_micro) -> dict:
    return {"n_prompts": 10, "n_facts": 5, "n_predicates": 2, "macro": macro, "micro": micro,
            "ci": {"macro": ci_macro, "micro": ci_micro}}


def test_the_reports_held_out_table_columns():
    from factatlas.probe.report import headline_table

    t = headline_table({"model": _summary(0.5, 0.25, (0.4, 0.6), (0.1, 0.3)), "majority": None})
    assert t.head[:5] == ("", "macro P@1 (DLAMA)", "CI", "micro P@1 (BMLAMA)", "CI")
    assert t.rows[0] == ("model", "0.500", "[0.400, 0.600]", "0.250", "[0.100, 0.300]", 5, 10)


def test_the_reports_language_table_shows_micro_in_its_micro_column():
    from factatlas.probe.report import _accuracy

    s = {"n_prompts": 4, "n_facts": 2, "p@1": 0.5, "p@1_micro": 0.25, "mrr": 0.6, "chance@1": 0.1,
         "ci": {"p@1": (0.4, 0.6)}}
    metrics = {"config": {"ks": [1]}, "summary": {"overall": s, "by_lang": {}, "by_lang_culture": {}}}
    t = _accuracy(metrics, [], [])
    row = dict(zip(t.head, t.rows[0], strict=True))
    assert (row["P@1 macro"], row["P@1 micro"]) == ("0.500", "0.250")


def test_the_model_beats_a_baseline_on_each_average_separately():
    from factatlas.probe.verdict import beats

    model = _summary(0.6, 0.3, (0.55, 0.65), (0.2, 0.4))
    base = _summary(0.3, 0.3, (0.25, 0.35), (0.25, 0.35))
    assert beats(model, base) == {"macro": True, "micro": False}


def test_x_fakt_context_cells_csv_columns(tmp_path):
    from factatlas.probe.xfakt_cli import _write_outputs
    from factatlas.probe.xfakt_context import ContextCell

    cell = ContextCell("recall", "en", "all", 4, 2, 0.75, 0.5, None, None)
    _write_outputs(tmp_path, [cell], {"modes": {}}, {"en": "high"}, {"en": "ours"}, "levels")
    with (tmp_path / "cells.csv").open(encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    assert (row["right micro"], row["right macro"]) == ("0.75", "0.5")
