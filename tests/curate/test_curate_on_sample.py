"""The README's main curation on the bundled Wikidata sample: every predicate yields facts for both
cultures, pollution is filtered, the HTTP path equals the embedded one."""

from __future__ import annotations

from dataclasses import replace

import pytest

from factatlas.curate.endpoints import SAMPLE_PATH, HttpSparqlEndpoint, load_store
from factatlas.curate.engine import CurationConfig, curate
from factatlas.curate.popularity import SAMPLE_PAGE_LENGTHS
from tests.curate.support import Recorder, output_bytes

pytestmark = pytest.mark.skipif(not (SAMPLE_PATH.exists() and SAMPLE_PAGE_LENGTHS.exists()),
                                reason="the embedded Wikidata sample is not built yet")

POLLUTION = {"Q1656682", "Q13406463", "Q41710"}  # event, Wikimedia list article, ethnic group


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory):
    run = tmp_path_factory.mktemp("sample")
    return curate(CurationConfig(pair="arab-west", langs=("ar", "en")), run), run


def test_every_predicate_yields_facts_for_both_cultures(sample_run):
    res, _ = sample_run
    empty = sorted((c, p) for c, preds in res.counts.items() for p, n in preds.items() if n == 0)
    assert empty == [], f"predicates without facts: {empty}"


def test_no_polluted_subjects_or_objects(sample_run):
    res, _ = sample_run
    for f in res.facts:
        subject = res.entities[f.subject]
        assert not set(subject.classes) & POLLUTION, f.id
        if f.predicate == "P1303":
            assert "Q17172850" not in f.object_qids, f.id  # voice
        if f.predicate in ("P19", "P20"):
            # the stopping rule: no country among birth/death places
            countries = {q for c in res.cultures.values() for q in c.country_qids}
            assert not countries & set(f.object_qids), f.id
    assert any(d.reason == "subject-type" for d in res.drops)


def test_people_have_gender_and_every_entity_has_both_labels(sample_run):
    res, _ = sample_run
    people = [e for e in res.entities.values() if "Q5" in e.classes]
    assert people and all(e.gender_source == "P21" for e in people)
    assert all(set(e.labels) == {"ar", "en"} for e in res.entities.values())


@pytest.mark.slow
def test_http_path_equals_embedded_on_the_sample(sample_run, tmp_path):
    from factatlas.curate.localserver import SparqlApp, serve

    _, run = sample_run
    with serve(SparqlApp(load_store(SAMPLE_PATH))) as url:
        endpoint = HttpSparqlEndpoint(url + "/sparql", "factatlas-tests/1.0 (tests@example.org)", sleeper=Recorder())
        curate(replace(CurationConfig(pair="arab-west", langs=("ar", "en")), endpoint=url + "/sparql",
                       page_lengths=str(SAMPLE_PAGE_LENGTHS)), tmp_path / "http", endpoint=endpoint)
    assert output_bytes(tmp_path / "http") == output_bytes(run)


def test_popularity_follows_the_sample_redirects(sample_run):
    from factatlas.curate.popularity import PageLengthTable, read_redirects

    res, _ = sample_run
    redirects = read_redirects(SAMPLE_PAGE_LENGTHS.with_name("redirects.tsv"))
    assert redirects, "the sample ships redirects to exercise"
    table = PageLengthTable()
    for (site, source), target in redirects.items():
        assert table.scores({site: [source]}) == {(site, source): dict(table.rows())[(site, target)]}


@pytest.mark.slow
def test_live_style_lengths_through_the_mediawiki_stand_in_equal_the_table(sample_run, tmp_path):
    """The same sample curated with lengths from the MediaWiki-API stand-in (redirects resolved by the
    client) gives byte-identical files."""
    from factatlas.curate.localserver import MediaWikiApp, serve
    from factatlas.curate.mediawiki import MediaWikiClient
    from factatlas.curate.popularity import MediaWikiLengths, PageLengthTable

    _, run = sample_run
    table = PageLengthTable()
    app = MediaWikiApp({k: int(v) for k, v in table.rows()}, dict(table.redirects()))
    with serve(app) as url:
        client = MediaWikiClient("factatlas-tests/1.0 (tests@example.org)", api_url=url + "/{site}/w/api.php",
                                 rest_url=url + "/{site}/w/rest.php", sleeper=Recorder())
        curate(CurationConfig(pair="arab-west", langs=("ar", "en")), tmp_path / "mw",
               popularity_source=MediaWikiLengths(client))
    assert output_bytes(tmp_path / "mw") == output_bytes(run)
    assert any(c.get("redirects") == "1" for c in app.calls)


def test_statements_naming_the_kingdom_count_for_the_netherlands(sample_run):
    # Dutch people are citizens of the Kingdom Q29999; west.yaml lists Q55 with also_matches: [Q29999]
    res, _ = sample_run
    by_id = {f.id: f for f in res.facts}
    cruyff = by_id["west:P27:Q17163"]
    assert cruyff.countries == ("Q55",) and "Q29999" in cruyff.object_qids
    # ... but the Kingdom is not a second subject where the subject is the country itself
    assert not [f for f in res.facts if f.subject == "Q29999"]
