"""Popularity by page views: the Wikimedia pageviews REST client against a local stand-in on 127.0.0.1,
the synthetic sample table, and curation ranked by views."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from factatlas.curate.engine import curate
from factatlas.curate.localserver import MediaWikiApp, serve
from factatlas.curate.pageviews import (
    MonthWindow,
    PageviewsClient,
    PageviewsError,
    PageViewTable,
    WikimediaPageviews,
    article_path,
)
from factatlas.errors import ConfigError
from factatlas.http import HttpPolicy
from tests.curate.support import Recorder

UA = "factatlas-tests/0.1 (https://example.org; tests@example.org)"
Q1 = MonthWindow.parse("2024-01:2024-03")


def client_for(url: str, sleeper=None) -> PageviewsClient:
    return PageviewsClient(UA, url=url + "/api/rest_v1/metrics/pageviews/per-article/{project}/all-access/user/"
                           "{article}/monthly/{start}/{end}", sleeper=sleeper or Recorder(),
                           policy=HttpPolicy(timeout_s=10.0))


def test_month_window():
    assert (Q1.start, Q1.end, Q1.months) == ("2024010100", "2024033100", 3)
    feb = MonthWindow.parse("2024-02")
    assert (feb.start, feb.end, feb.months) == ("2024020100", "2024022900", 1)  # a leap year
    assert MonthWindow.parse("2023-11:2024-02").months == 4
    for bad in ("2024-13:2024-14", "2024-1", "2024-03:2024-01", "a:b:c"):
        with pytest.raises(ConfigError, match="--pageviews-months"):
            MonthWindow.parse(bad)


def test_article_path_escapes_slashes_and_spaces():
    assert article_path("AC/DC") == "AC%2FDC"
    assert article_path("Tripoli, Libya") == "Tripoli%2C_Libya"
    assert article_path("أم كلثوم") == "%D8%A3%D9%85_%D9%83%D9%84%D8%AB%D9%88%D9%85"


def test_client_reads_monthly_views_in_the_window_and_404_as_no_data():
    app = MediaWikiApp({}, pageviews={
        ("ar", "أم كلثوم"): {"202312": 999, "202401": 30, "202403": 60},  # December is outside the window
        ("en", "AC/DC"): {"202401": 10, "202402": 20, "202403": 30},
    })
    with serve(app) as url:
        client = client_for(url)
        assert client.monthly_views("ar", "أم كلثوم", Q1) == {"2024010100": 30, "2024030100": 60}
        assert client.monthly_views("en", "AC/DC", Q1) == {"2024010100": 10, "2024020100": 20, "2024030100": 30}
        assert client.monthly_views("en", "Nowhere", Q1) is None
        source = WikimediaPageviews(client, Q1)
        scores = source.scores({"ar": ["أم كلثوم"], "en": ["AC/DC", "Nowhere"]})
    # mean monthly views over the 3 months: February (not listed) had none
    assert scores == {("ar", "أم كلثوم"): 30.0, ("en", "AC/DC"): 20.0}
    assert source.missing == 1
    assert set(app.user_agents) == {UA}
    assert app.calls[0] == {"site": "ar", "pageviews": "أم كلثوم", "start": "2024010100", "end": "2024033100"}


def test_429_waits_retry_after_then_stops_after_the_policy_limit():
    app = MediaWikiApp({}, pageviews={("en", "A"): {"202401": 3}}, throttle_first=2)
    sleeper = Recorder()
    with serve(app) as url:
        assert client_for(url, sleeper).monthly_views("en", "A", Q1) == {"2024010100": 3}
    assert sleeper.waits == [2.0, 2.0]
    stuck = MediaWikiApp({}, pageviews={("en", "A"): {"202401": 3}}, throttle_first=10)
    with serve(stuck) as url, pytest.raises(PageviewsError, match="times in a row"):
        client_for(url, Recorder()).monthly_views("en", "A", Q1)


def test_client_needs_a_user_agent_and_a_url_template():
    with pytest.raises(ConfigError, match="User-Agent"):
        PageviewsClient("")
    with pytest.raises(ConfigError, match="placeholders"):
        PageviewsClient(UA, url="http://127.0.0.1:1/pageviews")


def test_sample_table_is_marked_synthetic_and_follows_redirects():
    table = PageViewTable()
    assert table.synthetic and table.name == "pageviews:sample-synthetic"
    header = table.path.read_text("utf-8").splitlines()[0]
    assert header == "site\ttitle\tsynthetic_monthly_views"
    # "Oum Kalthoum" is a redirect to "Umm Kulthum" in the sample (redirects.tsv)
    scores = table.scores({"en": ["Oum Kalthoum", "Umm Kulthum", "No such page"]})
    assert scores[("en", "Oum Kalthoum")] == scores[("en", "Umm Kulthum")] > 0
    assert ("en", "No such page") not in scores


def test_a_real_table_needs_a_views_column(tmp_path):
    good = tmp_path / "views.tsv"
    good.write_text("site\ttitle\tmonthly_views\nen\tCairo\t1234\n", "utf-8")
    table = PageViewTable(good)
    assert (table.name, table.scores({"en": ["Cairo"]})) == ("pageviews:table", {("en", "Cairo"): 1234.0})
    bad = tmp_path / "bad.tsv"
    bad.write_text("site\ttitle\tviews\nen\tCairo\t1\n", "utf-8")
    with pytest.raises(ConfigError, match=r"bad.tsv:1: expected the header"):
        PageViewTable(bad)
    bad.write_text("site\ttitle\tmonthly_views\nen\tCairo\tmany\n", "utf-8")
    with pytest.raises(ConfigError, match=r"bad.tsv:2: monthly_views 'many' is not a number"):
        PageViewTable(bad)


def test_curation_ranks_by_page_views(config, tmp_path):
    """Lebanon's article is longer than Egypt's in the fixture; by page views Egypt is first."""
    app = MediaWikiApp({}, pageviews={("ar", "مصر"): {"202401": 900}, ("en", "Egypt"): {"202402": 300},
                                      ("ar", "لبنان"): {"202401": 90}, ("en", "Lebanon"): {"202401": 60}})
    pv = replace(config, popularity="pageviews", max_subjects=1, predicates=("P36",))
    by_length = curate(replace(pv, popularity="length"), tmp_path / "length")
    assert [f.subject for f in by_length.facts if f.culture == "arab"] == ["Q822"]
    with serve(app) as url:
        source = WikimediaPageviews(client_for(url), Q1)
        result = curate(pv, tmp_path / "views", popularity_source=source)
    arab = [f for f in result.facts if f.culture == "arab"]
    assert [(f.subject, f.popularity, f.rank) for f in arab] == [("Q79", 300.0, 1)]  # max(900/3, 300/3)
    manifest = json.loads((tmp_path / "views" / "manifest.json").read_text("utf-8"))
    assert "pageviews:wikimedia" in json.dumps(manifest["stages"]["curate"])


def test_embedded_sample_ranks_by_synthetic_views(tmp_path):
    from factatlas.curate.engine import CurationConfig

    result = curate(CurationConfig(pair="arab-west", langs=("en",), popularity="pageviews", predicates=("P36",),
                                   max_subjects=3), tmp_path / "run")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text("utf-8"))
    assert "pageviews:sample-synthetic" in json.dumps(manifest["stages"]["curate"])
    for culture in ("arab", "west"):
        pops = [f.popularity for f in sorted(result.facts, key=lambda f: f.rank) if f.culture == culture]
        assert len(pops) == 3 and pops == sorted(pops, reverse=True) and pops[-1] > 0


def test_cli_rank_by_pageviews_over_http_stand_ins(fixture_store, tmp_path):
    """`factatlas curate --rank-by pageviews` against a SPARQL stand-in and the pageviews stand-in."""
    from typer.testing import CliRunner

    from factatlas.app.cli import app
    from factatlas.curate.localserver import SparqlApp

    views = MediaWikiApp({}, pageviews={("ar", "مصر"): {"202406": 900}, ("ar", "لبنان"): {"202406": 90}})
    with serve(SparqlApp(fixture_store)) as sparql, serve(views) as wiki:
        res = CliRunner().invoke(app, [
            "curate", str(tmp_path / "run"), "--pair", "arab-west", "--langs", "ar,en", "--endpoint",
            sparql + "/sparql", "--user-agent", UA, "--rank-by", "pageviews", "--predicates", "P36",
            "--max-subjects", "1", "--pageviews-months", "2024-06",
            "--pageviews-url", wiki + "/metrics/pageviews/per-article/{project}/all-access/user/{article}/monthly/"
                                      "{start}/{end}"])
    assert res.exit_code == 0, res.output
    from factatlas.tables import read_facts

    arab = [f for f in read_facts(tmp_path / "run" / "curate" / "facts.parquet") if f.culture == "arab"]
    assert [(f.subject, f.popularity) for f in arab] == [("Q79", 900.0)]
    asked = {(c["site"], c["pageviews"]) for c in views.calls}
    assert ("ar", "مصر") in asked and all(c["start"] == "2024060100" and c["end"] == "2024063000"
                                          for c in views.calls)
