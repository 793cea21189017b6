"""Knowledge locality in curation: per fact, the Wikipedia editions with an article on its subject."""

from __future__ import annotations

import re

from factatlas.curate.engine import curate
from factatlas.curate.locality import articles_query, locality_sites
from factatlas.tables import read_facts


def test_article_langs_follow_the_sitelinks(config, tmp_path):
    result = curate(config, tmp_path / "run")
    by_id = {f.id: f for f in read_facts(tmp_path / "run" / "curate" / "facts.parquet")}
    assert by_id == {f.id: f for f in result.facts}  # the columns round-trip through facts.parquet
    # fixture_graph.ARTICLES: Egypt has ar, en, fr articles; Lebanon ar, en; the Eiffel Tower fr, en;
    # Amsterdam nl, en (the Arab League's editions are ar, en, fr; the West's include fr and nl)
    assert by_id["arab:P36:Q79"].article_langs == ("ar", "en", "fr")
    assert by_id["arab:P36:Q822"].article_langs == ("ar", "en")
    assert by_id["west:P17:Q100034"].article_langs == ("en", "fr")
    assert by_id["west:P17:Q100034"].home_langs == ("en", "fr")
    assert by_id["west:P17:Q727"].article_langs == ("en", "nl")
    # every curated subject has an article in one of its culture's editions (step 1 requires it)
    assert all(f.home_langs and set(f.home_langs) <= set(f.article_langs) for f in result.facts)


def test_locality_query_and_sites():
    q = articles_query(["Q79", "Q55"], ["ar", "en"])
    assert "VALUES ?s { wd:Q79 wd:Q55 }" in q and "<https://ar.wikipedia.org/>" in q
    from factatlas.records import CountryRef, Culture

    arab = Culture("arab", "Arab League", (CountryRef("Q79", "Egypt", ("ar", "en")), CountryRef("Q1028", "Morocco", ("fr",))))
    assert locality_sites(["zh-hans", "sw", "en"], {"arab": arab}) == ("ar", "en", "fr", "sw", "zh")


def test_article_sites_on_the_store_are_the_fixture_articles_in_the_editions_asked(fixture_files, fixture_store,
                                                                                    tmp_path):
    """The editions among those asked with an article on each subject, read from the embedded store in batches
    of any size (fixture_graph.ARTICLES); a subject without one is absent, and nothing asked gives nothing."""
    from factatlas.curate.cache import QueryRunner
    from factatlas.curate.endpoints import EmbeddedEndpoint
    from factatlas.curate.locality import article_sites

    runner = QueryRunner(EmbeddedEndpoint(fixture_files[0], store=fixture_store), tmp_path / "cache",
                         tmp_path / "q.jsonl")
    subjects = ["Q727", "Q79", "Q100005", "Q822", "Q79", "Q100034"]
    expected = {"Q79": ("ar", "fr"), "Q822": ("ar",), "Q727": ("nl",), "Q100034": ("fr",)}
    for batch_size in (1, 2, 100):
        assert article_sites(runner, subjects, ("ar", "fr", "nl"), batch_size) == expected
    assert article_sites(runner, subjects, ("en",), 100)["Q100005"] == ("en",)
    sent = runner.stats.sent
    # one request per batch (5 subjects: 5, 3 and 1 batches, and one for "en"), counted by kind; the
    # last batch of two, [Q100034], is the first size's last query: read from the cache
    assert sent == runner.stats.by_kind["articles"] == 5 + 2 + 1 + 1 and runner.stats.cached == 1
    assert article_sites(runner, [], ("ar",), 100) == {} and article_sites(runner, subjects, (), 100) == {}
    assert runner.stats.sent == sent  # nothing asked: no request (WDQS counts every one)


def test_a_row_without_an_item_or_a_wikipedia_edition_is_no_article():
    """What an engine answers beyond the query's FILTER (another wiki's page, a row without an item) adds no
    edition: only an item's Wikipedia editions count."""
    from factatlas.curate.locality import article_sites

    def uri(value: str) -> dict:
        return {"type": "uri", "value": value}

    class Answers:  # the runner's one method article_sites calls, answering with these rows
        def select_batched(self, name, subjects, query, batch_size):
            return [{"s": uri("http://www.wikidata.org/entity/Q79"), "site": uri("https://ar.wikipedia.org/")},
                    {"s": uri("http://www.wikidata.org/entity/Q79"), "site": uri("https://commons.wikimedia.org/")},
                    {"s": uri("http://example.org/not-an-item"), "site": uri("https://fr.wikipedia.org/")},
                    {"s": uri("http://www.wikidata.org/entity/Q822"), "site": uri("https://en.wikipedia.org/")}]

    assert article_sites(Answers(), ["Q79", "Q822"], ("ar", "en", "fr"), 10) == {"Q79": ("ar",), "Q822": ("en",)}


class _TimesOutOnPairs:
    """A SPARQL endpoint (the runner's protocol: ``id``, ``select``) that answers a batch of one subject and
    times out on a batch of two, taking 1.5 s of the runner's clock per request."""

    id = "pairs-time-out"

    def __init__(self, clock: list[float]):
        self.clock, self.asked = clock, []

    def select(self, query: str):
        from factatlas.http import Transient

        subjects = re.findall(r"wd:(Q\d+)", query.split("FILTER")[0])
        self.asked.append(tuple(subjects))
        self.clock[0] += 1.5
        if len(subjects) > 1:
            raise Transient("read timed out")
        return [{"s": {"type": "uri", "value": f"http://www.wikidata.org/entity/{subjects[0]}"},
                 "site": {"type": "uri", "value": "https://ar.wikipedia.org/"}}]


def test_a_batch_of_two_that_times_out_is_tried_once_then_halved_and_halved_again_when_resumed(tmp_path):
    """A batch that can still be split gets one try (its time logged), then its halves; a resumed run reads the
    split marker and goes straight to the halves, which are cached."""
    import json

    from factatlas.curate.cache import QueryRunner
    from factatlas.curate.locality import article_sites
    from factatlas.http import HttpPolicy

    clock = [100.0]  # a monotonic clock's reading: not 0
    endpoint = _TimesOutOnPairs(clock)
    runner = QueryRunner(endpoint, tmp_path / "cache", tmp_path / "q.jsonl", sleeper=lambda s: None,
                         policy=HttpPolicy(retries=3), clock=lambda: clock[0])
    assert article_sites(runner, ["Q79", "Q822"], ("ar",), 2) == {"Q79": ("ar",), "Q822": ("ar",)}
    assert endpoint.asked == [("Q79", "Q822"), ("Q79",), ("Q822",)]  # one try, no back-off schedule
    timeout = [json.loads(x) for x in (tmp_path / "q.jsonl").read_text().splitlines()][0]
    assert timeout["status"].startswith("timeout") and timeout["seconds"] == 1.5
    endpoint.asked.clear()
    resumed = QueryRunner(endpoint, tmp_path / "cache", tmp_path / "q2.jsonl", sleeper=lambda s: None,
                          policy=HttpPolicy(retries=3), clock=lambda: clock[0])
    assert article_sites(resumed, ["Q79", "Q822"], ("ar",), 2) == {"Q79": ("ar",), "Q822": ("ar",)}
    assert endpoint.asked == [] and resumed.stats.split == 1 and resumed.stats.cached == 2
