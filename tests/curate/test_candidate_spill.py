"""Step 1's candidate rows live in a spill (curate/candidates.sqlite), not in the client's memory: the same
outputs whatever the popularity chunk, no per-candidate record in memory, the spill gone after the run and
rebuilt when a killed run left one, a full disk under it named like every other write."""

from __future__ import annotations

import itertools

import pytest

from factatlas.curate import candidates
from factatlas.curate.cache import QueryRunner
from factatlas.curate.candidates import SPILL_NAME, CandidateSpill, find_candidates
from factatlas.curate.config import load_culture_config, load_pair, load_predicates
from factatlas.curate.endpoints import EmbeddedEndpoint
from factatlas.curate.engine import curate
from factatlas.curate.steps import COUNTRY_CLASS, Knowledge, resolve_cultures
from factatlas.errors import WriteFailed
from tests.curate.support import output_bytes


def test_scoring_in_chunks_of_one_subject_gives_the_same_files(monkeypatch, fixture_files, fixture_store, config,
                                                              tmp_path, reference_outputs):
    """The popularity source is asked one subject at a time instead of once: nothing may change."""
    monkeypatch.setattr(candidates, "SCORE_CHUNK", 1)
    asked = []
    real = candidates._score_chunk
    monkeypatch.setattr(candidates, "_score_chunk", lambda *a: (asked.append(len(a[1])), real(*a)))
    curate(config, tmp_path / "run", endpoint=EmbeddedEndpoint(fixture_files[0], store=fixture_store))
    assert len(asked) > 10  # really chunked: one call per subject
    assert output_bytes(tmp_path / "run") == reference_outputs


def test_the_spill_is_removed_after_the_run_and_a_left_one_is_rebuilt(fixture_files, fixture_store, config,
                                                                     tmp_path, reference_outputs):
    run = tmp_path / "run"
    (run / "curate").mkdir(parents=True)
    (run / "curate" / SPILL_NAME).write_bytes(b"what a killed run left: not a database")
    curate(config, run, endpoint=EmbeddedEndpoint(fixture_files[0], store=fixture_store))
    assert output_bytes(run) == reference_outputs
    assert not (run / "curate" / SPILL_NAME).exists()


def test_candidates_leave_no_record_in_memory(fixture_files, fixture_store, config, tmp_path):
    """Before the spill every candidate got an ``EntityInfo`` in ``know.info``; now only what was described
    (the countries) is there, while the spill holds every candidate."""
    runner = QueryRunner(EmbeddedEndpoint(fixture_files[0], store=fixture_store), tmp_path / "cache",
                         tmp_path / "q.jsonl")
    specs = load_predicates()
    know = Knowledge(runner, config.langs, {COUNTRY_CLASS} | {r for s in specs.values() for t in
                                                              (s.subject_type, s.object_type) for r in t.roots}, 50)
    pair = load_pair("arab-west")
    cultures, _ = resolve_cultures(pair.name, [load_culture_config(c) for c in pair.cultures], runner, know)
    know.describe(c.qid for culture in cultures.values() for c in culture.countries)
    before = set(know.info)
    drops = []
    spill = find_candidates(cultures, specs, runner, know, 50, drops, tmp_path / SPILL_NAME)
    try:
        subjects = {s for (s,) in spill.db.execute("SELECT DISTINCT s FROM cand")}
        assert len(subjects) > 10
        assert not set(know.info) - before, "a candidate was given an in-memory record"
        assert any(d.reason == "subject-type" for d in drops)
    finally:
        spill.close()
    assert not (tmp_path / SPILL_NAME).exists()


def test_a_full_disk_under_the_spill_is_a_write_failure_naming_it(tmp_path):
    spill = CandidateSpill(tmp_path / SPILL_NAME)
    spill.db.execute("PRAGMA max_page_count = 3")  # what SQLite answers on a full disk: SQLITE_FULL
    k = spill.add_key(("arab", "P17"))
    rows = [(k, i, f"Q{i}", "Q796") for i in range(5000)]
    with pytest.raises(WriteFailed) as e:
        spill.add_rows(k, rows, [], [])
    assert str(e.value).startswith(f"{tmp_path / SPILL_NAME}: cannot spill the candidate rows (No space left")
    assert "is full" in str(e.value)
    spill.close()


def test_iter_batched_reads_its_items_lazily_and_answers_like_select_batched(fixture_files, fixture_store, tmp_path):
    runner = QueryRunner(EmbeddedEndpoint(fixture_files[0], store=fixture_store), tmp_path / "cache",
                         tmp_path / "q.jsonl")
    items = [f"Q{n}" for n in range(1, 40)]
    build = lambda b: candidates.sitelinks_query(b)  # noqa: E731
    read = []
    stream = runner.iter_batched("sitelinks", (read.append(q) or q for q in items), build, 10)
    first = list(next(stream))
    assert read == items[:10]  # one batch read, not the whole list
    rest = list(itertools.chain.from_iterable(stream))
    assert first + rest == runner.select_batched("sitelinks", items, build, 10)


def test_equal_popularity_keeps_the_lower_qid_in_numeric_order(tmp_path):
    """"Ties: lower QID" is numeric: Q9 before Q10, as everywhere else (a text order would keep Q10)."""
    spill = CandidateSpill(tmp_path / SPILL_NAME)
    k = spill.add_key(("west", "P36"))
    subjects = ("Q10", "Q9", "Q100")
    spill.add_rows(k, [(k, candidates._order(s), s, "Q142") for s in subjects], [], [])
    spill.set_scores([(k, s, 5.0) for s in subjects])
    assert [s for s, _, _ in spill.subjects(k)] == ["Q9", "Q10", "Q100"]
    drops = []
    kept = candidates._select(spill, k, 1, None, drops)
    assert [c.qid for c in kept] == ["Q9"]
    assert [(d.item, d.reason) for d in drops] == [("west:P36:Q10", "max-subjects"), ("west:P36:Q100", "max-subjects")]
    spill.close()


def test_page_view_popularity_reads_the_embedded_table_when_no_endpoint_is_given():
    from factatlas.curate.pageviews import PageViewTable
    from factatlas.curate.runtypes import CurationConfig

    assert isinstance(candidates.default_popularity_source(CurationConfig(pair="arab-west", popularity="pageviews")), PageViewTable)
