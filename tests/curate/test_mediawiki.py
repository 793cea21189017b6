"""The MediaWiki client against a local MediaWiki-API stand-in: batching, redirects, normalized titles,
maxlag with Retry-After, REST edit counts; and popularity from it driving a curation run."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from factatlas.curate.engine import curate
from factatlas.curate.localserver import FaultProxy, MediaWikiApp, serve, serve_proxy
from factatlas.curate.mediawiki import MediaWikiClient, MediaWikiError
from factatlas.curate.popularity import MediaWikiEdits, MediaWikiLengths
from factatlas.errors import ConfigError
from factatlas.http import RetryTooLate
from tests.curate.fixture_graph import ARTICLES, length_of
from tests.curate.support import EXACT, Recorder, output_bytes

UA = "factatlas-tests/1.0 (https://example.org; tests@example.org)"


def client_for(url: str, sleeper) -> MediaWikiClient:
    return MediaWikiClient(UA, api_url=url + "/{site}/w/api.php", rest_url=url + "/{site}/w/rest.php",
                           sleeper=sleeper)


def test_lengths_batching_redirects_normalization_and_maxlag():
    lengths = {("en", f"Page {i}"): 1000 + i for i in range(120)}
    lengths[("en", "Cairo")] = 99_000
    app = MediaWikiApp(lengths, redirects={("en", "Al-Qahira"): "Cairo"}, maxlag_first=1)
    sleeper = Recorder()
    with serve(app) as url:
        client = client_for(url, sleeper)
        titles = [f"Page {i}" for i in range(120)] + ["al-Qahira", "Missing page", "page_7"]
        got = client.page_lengths("en", titles)
    assert got["Page 0"] == 1000 and got["Page 119"] == 1119
    assert got["al-Qahira"] == 99_000  # normalized to Al-Qahira, then redirected to Cairo
    assert got["page_7"] == 1007  # normalized
    assert got["Missing page"] is None
    query_calls = [c for c in app.calls if c.get("action") == "query"]
    assert len(query_calls) == 4  # 123 titles -> 3 batches of <= 50, plus one maxlag retry
    assert all(len(c["titles"].split("|")) <= 50 for c in query_calls)
    assert all(c["maxlag"] == "5" and c["redirects"] == "1" and c["formatversion"] == "2" for c in query_calls)
    assert sleeper.waits == [3.0]  # the stand-in's Retry-After
    assert set(app.user_agents) == {UA}


def test_edit_counts_and_persistent_maxlag():
    app = MediaWikiApp({}, edits={("fr", "Édith Piaf"): 4321})
    with serve(app) as url:
        client = client_for(url, Recorder())
        assert client.edit_counts("fr", ["Édith Piaf", "Nope"]) == {"Édith Piaf": 4321, "Nope": None}
    lagging = MediaWikiApp({("en", "A"): 1}, maxlag_first=10)
    sleeper = Recorder()
    with serve(lagging) as url, pytest.raises(MediaWikiError, match="3 times in a row"):
        MediaWikiClient(UA, api_url=url + "/{site}/w/api.php", rest_url=url + "/{site}/w/rest.php",
                        sleeper=sleeper, max_retries=2).page_lengths("en", ["A"])
    assert sleeper.waits == [3.0, 3.0]  # max_retries=2: two waits, then the run stops


def test_client_needs_a_user_agent():
    with pytest.raises(ConfigError, match="User-Agent"):
        MediaWikiClient("")


def test_curation_with_live_style_lengths_equals_table(config, tmp_path, reference_outputs):
    lengths = {(site, title): length_of(q, site) for q, arts in ARTICLES.items() for site, title in arts.items()}
    app = MediaWikiApp(lengths)
    with serve(app) as url:
        source = MediaWikiLengths(client_for(url, Recorder()))
        curate(config, tmp_path / "mw", popularity_source=source)
    assert output_bytes(tmp_path / "mw") == reference_outputs
    calls = [c for c in app.calls if c.get("action") == "query"]
    # one request per edition, every title of the pair asked once (titles deduplicated across predicates)
    assert sorted(c["site"] for c in calls) == ["ar", "en", "fr", "nl"]


def test_curation_with_edit_counts(config, tmp_path):
    edits = {(site, title): 10_000 - int(q[1:]) % 1000 for q, arts in ARTICLES.items() for site, title in arts.items()}
    app = MediaWikiApp({}, edits=edits)
    with serve(app) as url:
        res = curate(replace(config, predicates=("P36",)), tmp_path / "e",
                     popularity_source=MediaWikiEdits(client_for(url, Recorder())))
    arab = {f.subject: f.popularity for f in res.facts if f.culture == "arab"}
    assert arab == {"Q79": 10_000 - 79, "Q822": 10_000 - 822}


def test_maxlag_and_429_honour_the_http_date_form_and_faults_back_off():
    # one HTTP policy for MediaWiki too: Retry-After as an HTTP date (was: ignored, 5 s), a reset retried
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=40), usegmt=True)
    app = MediaWikiApp({("en", "A"): 7})
    sleeper = Recorder()
    with serve(app) as upstream:
        proxy = FaultProxy(upstream, [f"retry-after:{soon}", "reset"])
        with serve_proxy(proxy) as url:
            client = MediaWikiClient(UA, api_url=url + "/{site}/w/api.php", rest_url=url + "/{site}/w/rest.php",
                                     sleeper=sleeper, policy=EXACT)
            assert client.page_lengths("en", ["A"]) == {"A": 7}
    assert proxy.injected == [f"retry-after:{soon}", "reset"]
    assert 35 <= sleeper.waits[0] <= 40 and sleeper.waits[1:] == [5.0]


def test_a_retry_after_past_the_cap_stops_the_mediawiki_client():
    app = MediaWikiApp({("en", "A"): 7})
    with serve(app) as upstream:
        proxy = FaultProxy(upstream, ["retry-after:3600"])
        with serve_proxy(proxy) as url:
            client = MediaWikiClient(UA, api_url=url + "/{site}/w/api.php", rest_url=url + "/{site}/w/rest.php",
                                     sleeper=Recorder(), policy=replace(EXACT, max_retry_after_s=60))
            with pytest.raises(RetryTooLate, match="asks to retry in 3600 s"):
                client.page_lengths("en", ["A"])
