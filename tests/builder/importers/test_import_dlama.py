"""DLAMA-v1 importer against the published data in ../shared/reference (skipped when absent)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.benchmark import BENCHMARK_FILES, Benchmark
from factatlas.builder.importers import dlama
from factatlas.builder.importers.common import paused_gc
from factatlas.builder.invariants import check_directory
from factatlas.errors import ConfigError
from tests.builder.importers import reference

REFERENCE = reference()
DLAMA = REFERENCE / "dlama" / "dlama-v1"
MLAMA_TEMPLATES = REFERENCE / "mlama" / "templates"

needs_dlama = pytest.mark.skipif(not DLAMA.is_dir(), reason=f"reference data absent: {DLAMA}")

# Published DLAMA-v1 sizes: 78,259 triples per language view = 24,535 + 27,067 + 26,657.
PUBLISHED = {
    "arab-west": {"arab": 10946, "west": 13589, "total": 24535},
    "asia-west": {"asia": 13479, "west": 13588, "total": 27067},
    "south-america-west": {"south-america": 13071, "west": 13586, "total": 26657},
}
LANGUAGES = {"arab-west": ("ar", "en"), "asia-west": ("en", "zh"), "south-america-west": ("en", "es")}
# Records whose objects share one surface form between distinct QIDs, per language view (sum: 2,483).
DUPLICATE_FORM_RECORDS = {("arab-west", "ar"): 375, ("arab-west", "en"): 100, ("asia-west", "en"): 247,
                          ("asia-west", "zh"): 753, ("south-america-west", "en"): 582,
                          ("south-america-west", "es"): 426}


@pytest.fixture(scope="module", autouse=True)
def _large_fixtures():
    """The cyclic garbage collector paused while this module's fixtures hold the three pairs' records and the
    import's prompts (acyclic: its full passes re-walk them, 4.8 of this module's 17 CPU seconds)."""
    with paused_gc():
        yield


@pytest.fixture(scope="module")
def pairs():
    return {name: dlama.read_pair(DLAMA, name) for name in PUBLISHED}


@pytest.fixture(scope="module")
def arab_west_facts(pairs):
    """``to_facts`` of arab-west, computed once for the tests that read it."""
    return dlama.to_facts(pairs["arab-west"])


@needs_dlama
def test_published_counts_per_pair_culture_and_language(pairs):
    total_per_view = 0
    for name, data in pairs.items():
        assert data.languages == LANGUAGES[name]
        assert data.cultures[1] == "west"
        for lang in data.languages:
            assert data.counts()[lang] == PUBLISHED[name]
        total_per_view += data.counts()[data.languages[0]]["total"]
    assert total_per_view == 78259


@needs_dlama
def test_duplicate_surface_forms_are_detected_per_language_view(pairs):
    found = {(name, lang): n for name, data in pairs.items() for lang, n in data.duplicate_form_records().items()}
    assert found == DUPLICATE_FORM_RECORDS
    assert sum(found.values()) == 2483


@needs_dlama
def test_facts_align_across_languages_and_label_conflicts_are_reported(arab_west_facts):
    facts, entities, drops = arab_west_facts
    assert len(facts) == 24535 and len({f.id for f in facts}) == 24535
    yemen = next(f for f in facts if f.id == "arab:P36:Q805")
    assert yemen.object_qids == ("Q131694", "Q2471") and yemen.rank == 1 and yemen.popularity == 509207.0
    assert entities["Q85"].labels == {"ar": "القاهرة", "en": "Cairo"}
    assert {(d.item, d.reason) for d in drops} == {("Q166714", "label-conflict:ar"), ("Q57360", "label-conflict:en")}


def test_unknown_pair_suggests_the_right_name(tmp_path):
    with pytest.raises(ConfigError, match="unknown DLAMA-v1 pair 'arab-wst'. Did you mean 'arab-west'"):
        dlama.read_pair(tmp_path, "arab-wst")
    with pytest.raises(ConfigError, match="no DLAMA-v1 files"):
        dlama.read_pair(tmp_path, "south_america-west")


@needs_dlama
@pytest.mark.slow
@pytest.mark.extended  # the whole pair written and checked (49k prompts); the reads are tested above
@pytest.mark.skipif(not MLAMA_TEMPLATES.is_dir(), reason="mLAMA templates absent")
def test_import_arab_west_with_mlama_templates_is_a_valid_benchmark(tmp_path):
    res = CliRunner().invoke(app, ["import", "dlama-v1", str(DLAMA), "--pair", "arab-west", "--out",
                                   str(tmp_path / "run"), "--mlama-templates", str(MLAMA_TEMPLATES)])
    assert res.exit_code == 0, res.output
    out = tmp_path / "run" / "build"
    assert check_directory(out) == []
    bench = Benchmark.open(out, require=BENCHMARK_FILES)
    assert bench.meta["source"]["kind"] == "dlama-v1" and bench.meta["candidate_mode"] == "predicate"
    assert bench.meta["source"]["record_counts"]["ar"] == PUBLISHED["arab-west"]
    assert len(bench.facts) == 24535 and len(bench.prompts) == 2 * 24535
    rows = {p.prompt_id: p for p in bench.prompts if p.fact_id == "arab:P36:Q79"}
    assert rows["arab:P36:Q79|en|P36/mlama"].text == "The capital of Egypt is [Y] ."
    assert rows["arab:P36:Q79|en|P36/mlama"].gold_qids == ("Q85",)
    # DLAMA's candidate set: every object of the predicate across both cultures, the same in both languages
    p36 = rows["arab:P36:Q79|ar|P36/mlama"].candidate_qids
    assert len(p36) == 43 and p36 == rows["arab:P36:Q79|en|P36/mlama"].candidate_qids
    stats = json.loads((out / "stats.json").read_text())
    assert stats["facts_per_culture"] == {"arab": 10946, "west": 13589}
    assert 0 < stats["cells"]["arab"]["P36"]["entropy_bits"] <= 6


@needs_dlama
def test_popularity_buckets_by_article_length(arab_west_facts):
    """DLAMA-v1's popularity is the article length (``size``); P36 has 41 facts over both cultures, so
    quantile = 1 + floor(4 x position / 41) in size order (hand-checked against the jsonl files)."""
    from factatlas.popbuckets import popularity_buckets

    facts, _, _ = arab_west_facts
    p36 = [f for f in facts if f.predicate == "P36"]
    assert len(p36) == 41
    b = popularity_buckets(facts)
    pops = {f.id: f.popularity for f in p36}
    assert pops["arab:P36:Q970"] == 91096.0 and pops["arab:P36:Q79"] == 407006.0
    # sizes in order: Q970 first (position 0), Q858 10th, Q398 11th, Q846 20th, Q842 21st, Q142 30th, Q810 31st
    assert [b[f"{c}:P36:{q}"].quantile for c, q in (("arab", "Q970"), ("arab", "Q858"), ("arab", "Q398"),
                                                    ("arab", "Q846"), ("arab", "Q842"), ("west", "Q142"),
                                                    ("arab", "Q810"), ("arab", "Q79"))] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert (b["arab:P36:Q970"].log10, b["arab:P36:Q79"].log10) == (4, 5)
