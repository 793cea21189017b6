"""The real HTTP path (factatlas.http) against a local SPARQL-protocol server over pyoxigraph, with and without
faults (429 with/without Retry-After, 500, HTTP 200 with truncated JSON, slower than the client timeout).
"""

from __future__ import annotations

import json
import random
import re
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from urllib.parse import quote

import pytest

from factatlas.curate.endpoints import EndpointError, HttpSparqlEndpoint, QueryTimeout, load_store
from factatlas.curate.engine import CurationConfig, curate
from factatlas.curate.localserver import FaultInjector, FaultProxy, SparqlApp, serve, serve_proxy
from factatlas.errors import ConfigError, FactatlasError
from factatlas.http import HttpPolicy, RateLimited, RetryTooLate, parse_retry_after
from tests.clirun import factatlas
from tests.curate.support import EXACT, Recorder, output_bytes


def http_endpoint(url: str, sleeper=None, timeout_s: float = 65.0, post_threshold: int = 2000) -> HttpSparqlEndpoint:
    return HttpSparqlEndpoint(url + "/sparql", "factatlas-tests/1.0 (https://example.org; tests@example.org)",
                              policy=HttpPolicy(timeout_s=timeout_s, jitter=0.0), sleeper=sleeper or Recorder(),
                              post_threshold=post_threshold)


def test_http_path_equals_embedded_path(fixture_store, config, tmp_path, reference_outputs):
    app = SparqlApp(fixture_store)
    with serve(app) as url:
        endpoint = http_endpoint(url, post_threshold=1200)  # the fixture's longest queries are ~2 kB
        res = curate(replace(config, endpoint=url + "/sparql"), tmp_path / "http", endpoint=endpoint)
    assert output_bytes(tmp_path / "http") == reference_outputs
    assert len(app.requests) == endpoint.stats.requests == res.queries["sent"]
    assert set(app.user_agents) == {"factatlas-tests/1.0 (https://example.org; tests@example.org)"}
    # long VALUES lists go by POST, short queries by GET
    assert {"GET", "POST"} <= set(app.methods)
    assert all((m == "POST") == (len(quote(q)) > 1200) for m, q in zip(app.methods, app.requests, strict=True))
    manifest = json.loads((tmp_path / "http" / "manifest.json").read_text())
    assert manifest["stages"]["curate"]["endpoint"] == url + "/sparql"
    assert "user_agent" not in manifest["stages"]["curate"]["config"]


def describe_queries(q: str) -> bool:
    return "SELECT DISTINCT ?x ?p ?v" in q  # the describe query (sparql.describe_query)


@pytest.mark.parametrize("fault", ["500", "truncated", "slow:6"])
def test_server_faults_back_off_halve_and_give_identical_output(fault, fixture_store, config, tmp_path,
                                                                reference_outputs):
    injector = FaultInjector(SparqlApp(fixture_store), [fault], match=describe_queries)
    sleeper = Recorder()
    with serve(injector) as url:
        # 2 s: every other query must answer within the client's deadline on a loaded box (0.6 s did not at a
        # load of 17); the slow fault sleeps three times that
        endpoint = http_endpoint(url, sleeper, timeout_s=2.0 if fault.startswith("slow") else 65.0)
        res = curate(replace(config, endpoint=url + "/sparql"), tmp_path / "f", endpoint=endpoint,
                     sleeper=sleeper, policy=EXACT)
    assert injector.injected == [fault]
    assert output_bytes(tmp_path / "f") == reference_outputs
    assert res.queries["timeouts"] == 1 and res.queries["splits"] == 1
    assert sleeper.waits == [5.0]  # one back-off before the halves
    log = [json.loads(x) for x in (tmp_path / "f" / "curate" / "queries.jsonl").read_text().splitlines()]
    assert [x["status"].split(":")[0] for x in log if x["status"] != "ok"] == ["timeout"]
    # the split batch left a marker, so a resumed run goes straight to the halves
    assert len(list((tmp_path / "f" / "curate" / "cache").glob("*.split"))) == 1


def test_429_waits_retry_after_then_60s_then_succeeds(fixture_store, config, tmp_path, reference_outputs):
    injector = FaultInjector(SparqlApp(fixture_store), ["429", "429-no-retry-after"])
    sleeper = Recorder()
    with serve(injector) as url:
        endpoint = http_endpoint(url, sleeper)
        curate(replace(config, endpoint=url + "/sparql"), tmp_path / "r", endpoint=endpoint, sleeper=sleeper, policy=EXACT)
    assert sleeper.waits == [7.0, 60.0]
    assert endpoint.stats.rate_limited == 2 and endpoint.stats.waited_s == 67.0
    assert output_bytes(tmp_path / "r") == reference_outputs


def test_repeated_429_aborts(fixture_store, config, tmp_path):
    injector = FaultInjector(SparqlApp(fixture_store), ["429"] * 5)
    sleeper = Recorder()
    with serve(injector) as url, pytest.raises(RateLimited, match="3 times in a row"):
        curate(replace(config, endpoint=url + "/sparql"), tmp_path / "a", endpoint=http_endpoint(url, sleeper),
               sleeper=sleeper, policy=EXACT)
    assert sleeper.waits == [7.0, 7.0]
    assert injector.requests == 3
    assert not (tmp_path / "a" / "curate" / "facts.parquet").exists()


def test_public_wdqs_requires_a_descriptive_user_agent():
    with pytest.raises(ConfigError, match="without a User-Agent"):
        HttpSparqlEndpoint("https://query.wikidata.org/sparql", None)
    with pytest.raises(ConfigError, match="contact information"):
        HttpSparqlEndpoint("https://query.wikidata.org/sparql", "python-requests/2.31")
    with pytest.raises(ConfigError, match="exceed the WDQS deadline"):
        HttpSparqlEndpoint("https://query.wikidata.org/sparql", "x/1 (me@example.org)", timeout_s=30)
    ok = HttpSparqlEndpoint("https://query.wikidata.org/sparql", "x/1 (me@example.org)")
    assert ok.timeout_s > 60
    with pytest.raises(ConfigError, match="expected an http"):
        HttpSparqlEndpoint("ftp://example.org/sparql", "x")


def test_persistent_server_errors_stop_the_run_after_backoff(fixture_store, config, tmp_path):
    membership = lambda q: "wdt:P463" in q  # noqa: E731 - a single, unbatchable query
    injector = FaultInjector(SparqlApp(fixture_store), ["500"] * 4, match=membership)
    sleeper = Recorder()
    with serve(injector) as url, pytest.raises(QueryTimeout, match="HTTP 500"):
        curate(replace(config, endpoint=url + "/sparql"), tmp_path / "p", endpoint=http_endpoint(url, sleeper),
               sleeper=sleeper, policy=EXACT)
    assert sleeper.waits == [5.0, 15.0, 45.0]
    assert injector.injected == ["500"] * 4


def test_unreachable_endpoint_is_a_clear_error(config, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    url = f"http://127.0.0.1:{port}"
    with pytest.raises(EndpointError, match="cannot connect"):
        curate(replace(config, endpoint=url + "/sparql"), tmp_path / "u", endpoint=http_endpoint(url))


# ---- network faults a WSGI app cannot make (issue 11): through a raw TCP proxy ------------------


@pytest.mark.parametrize(("fault", "cause"), [
    ("short-body", "body cut short"),  # fewer bytes than Content-Length
    ("chunked-cut", "chunked body cut mid-stream"),  # chunked encoding, closed mid-stream
    ("bad-status", "garbage status line"),  # BadStatusLine
])
def test_broken_answers_are_retried_like_a_timeout(fault, cause, fixture_store, config, tmp_path, reference_outputs):
    with serve(SparqlApp(fixture_store)) as upstream:
        proxy = FaultProxy(upstream, [fault], match=describe_queries)
        sleeper = Recorder()
        with serve_proxy(proxy) as url:
            res = curate(replace(config, endpoint=url + "/sparql"), tmp_path / "b",
                         endpoint=http_endpoint(url, sleeper), sleeper=sleeper, policy=EXACT)
    assert proxy.injected == [fault]
    assert output_bytes(tmp_path / "b") == reference_outputs
    assert res.queries["timeouts"] == 1 and res.queries["splits"] == 1  # backed off, then halved
    assert sleeper.waits == [5.0]
    log = [json.loads(x) for x in (tmp_path / "b" / "curate" / "queries.jsonl").read_text().splitlines()]
    failed = [x["status"] for x in log if x["status"] != "ok"]
    assert len(failed) == 1 and failed[0].startswith("timeout: ") and cause in failed[0]


def test_a_connection_reset_names_the_reset_not_the_timeout(fixture_store):
    with serve(SparqlApp(fixture_store)) as upstream:
        proxy = FaultProxy(upstream, ["reset"])
        with serve_proxy(proxy) as url:
            endpoint = http_endpoint(url, timeout_s=65.0)
            with pytest.raises(QueryTimeout) as caught:
                endpoint.select("SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    message = str(caught.value)
    # the proxy resets after 0.2 s; a loaded box reads 0.3 s or so, far from the 65 s deadline either way
    assert re.search(r"connection reset by the server after 0\.[2-9] s", message), message
    assert "within 65" not in message


def test_a_dripping_body_is_stopped_by_the_total_deadline(fixture_store):
    # every piece arrives well within the per-read timeout; only a total deadline stops it
    with serve(SparqlApp(fixture_store)) as upstream:
        proxy = FaultProxy(upstream, ["drip:20:0.15"])
        with serve_proxy(proxy) as url:
            endpoint = http_endpoint(url, timeout_s=1.0)
            start = time.monotonic()
            with pytest.raises(QueryTimeout, match=r"did not complete within the 1 s deadline \(\d+ bytes"):
                endpoint.select("SELECT * WHERE { ?s ?p ?o } LIMIT 50")
            elapsed = time.monotonic() - start
    assert 0.95 < elapsed < 1.4  # not the 3 s the drip would take


@pytest.mark.parametrize("header", ["3600", "HTTP-DATE"])
def test_a_retry_after_past_the_cap_stops_with_the_time_to_retry(header, fixture_store):
    if header == "HTTP-DATE":
        header = format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    with serve(SparqlApp(fixture_store)) as upstream:
        proxy = FaultProxy(upstream, [f"retry-after:{header}"])
        sleeper = Recorder()
        with serve_proxy(proxy) as url:
            endpoint = HttpSparqlEndpoint(url + "/sparql", "t/1 (t@example.org)", sleeper=sleeper,
                                          policy=HttpPolicy(max_retry_after_s=120))
            with pytest.raises(RetryTooLate, match=r"asks to retry in 3[56]\d\d s \(at 20\d\d-.*--max-retry-after 120 s"):
                endpoint.select("SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    assert sleeper.waits == []  # nothing slept: the run stops at once


def test_a_retry_after_within_the_cap_is_waited_in_both_forms(fixture_store):
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    with serve(SparqlApp(fixture_store)) as upstream:
        proxy = FaultProxy(upstream, ["retry-after:42", f"retry-after:{soon}"])
        sleeper = Recorder()
        with serve_proxy(proxy) as url:
            endpoint = HttpSparqlEndpoint(url + "/sparql", "t/1 (t@example.org)", sleeper=sleeper,
                                          policy=HttpPolicy(max_retry_after_s=120))
            assert endpoint.select("SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    assert sleeper.waits[0] == 42.0 and 25 <= sleeper.waits[1] <= 30


def test_timeout_and_retry_cap_are_cli_values(fixture_files, tmp_path):
    graph, table = fixture_files
    with serve(SparqlApp(load_store(graph))) as upstream:
        proxy = FaultProxy(upstream, ["retry-after:3600"])
        with serve_proxy(proxy) as url:
            proc = factatlas("curate", "--pair", "arab-west", "--langs", "ar,en", "--run", tmp_path / "run",
                             "--endpoint", url + "/sparql", "--page-lengths", table, "--timeout", "5",
                             "--max-retry-after", "60")
    assert proc.returncode == 2, proc.stderr
    message = " ".join(proc.stderr.split())  # the console wraps long lines
    assert "asks to retry in 3600 s (at 20" in message and "longer than --max-retry-after 60 s" in message
    assert "Traceback" not in message
    assert proxy.requests == 1  # stopped at once, nothing waited
    policy = CurationConfig(pair="x", timeout_s=5, max_retry_after_s=60).http_policy()
    assert policy.timeout_s == 5 and policy.max_retry_after_s == 60


def test_retry_after_parsing():
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    assert parse_retry_after(None) is None
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after("garbage") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now) == 0.0  # a date in the past
    assert parse_retry_after("Thu, 01 Jan 2026 12:10:00 GMT", now) == 600.0
    policy = HttpPolicy(max_retry_after_s=300)
    assert policy.throttle_wait_s(None, "x") == 60.0  # absent: Wikimedia's 60 s
    assert policy.throttle_wait_s(300.0, "x") == 300.0
    with pytest.raises(RetryTooLate, match=r"in 301 s \(at 2026-01-01T12:05:01"):
        policy.throttle_wait_s(301.0, "x", now)


def test_backoff_is_exponential_with_seeded_jitter():
    policy = HttpPolicy()
    assert [HttpPolicy(jitter=0).backoff_s(i, random.Random(0)) for i in range(4)] == [5.0, 15.0, 45.0, 135.0]
    waits = [policy.backoff_s(i, random.Random(3)) for i in range(3)]
    assert waits == [policy.backoff_s(i, random.Random(3)) for i in range(3)]  # seeded: reproducible
    for wait, base in zip(waits, (5.0, 15.0, 45.0), strict=True):
        assert base * 0.9 <= wait <= base * 1.1 and wait != base
    assert HttpPolicy(jitter=0).backoff_s(10, random.Random(0)) == 300.0  # capped


def test_a_redirect_is_not_followed_and_names_the_target_without_its_token(fixture_store):
    injector = FaultInjector(SparqlApp(fixture_store), ["301"])
    with serve(injector) as url, pytest.raises(EndpointError) as caught:
        http_endpoint(url).select("SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    assert "HTTP 301 redirects to https://elsewhere.example/sparql?token=***; pass that URL" in str(caught.value)
    assert injector.requests == 1


def test_the_protocol_request_keeps_the_endpoints_own_parameters():
    from urllib.parse import parse_qs, urlsplit

    from factatlas.curate.endpoints import sparql_protocol_request

    query = "SELECT ?x WHERE { ?x ?p ?o } LIMIT 1"
    method, url, body, headers = sparql_protocol_request("http://h/sparql?key=abc", query, "ua", post=False)
    assert method == "GET" and body is None and urlsplit(url).path == "/sparql"
    params = parse_qs(urlsplit(url).query)
    assert params["key"] == ["abc"] and params["query"] == [query] and params["format"] == ["json"]
    assert headers["Accept"].startswith("application/sparql-results+json")
    method, url, body, headers = sparql_protocol_request("http://h/sparql", query, "ua", post=True)
    assert (method, url) == ("POST", "http://h/sparql")
    assert headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert parse_qs(body.decode("ascii"))["query"] == [query]


def test_the_protocol_request_refuses_updates_and_a_query_in_the_endpoint_url():
    from factatlas.curate.endpoints import sparql_protocol_request

    with pytest.raises(EndpointError, match="refusing to send a DROP request"):
        sparql_protocol_request("http://h/sparql", "PREFIX wd: <http://x/> DROP ALL", "ua", post=True)
    with pytest.raises(ConfigError, match="the URL's own parameter 'query' is the query itself"):
        HttpSparqlEndpoint("http://127.0.0.1:9/sparql?query=ASK{}", "ua")


@pytest.mark.parametrize("kw, message", [
    ({"max_retry_after_s": float("nan")}, "--max-retry-after nan: not a finite number"),
    ({"max_retry_after_s": float("inf")}, "--max-retry-after inf: not a finite number"),
    ({"timeout_s": float("nan")}, "--timeout nan: not a finite number"),
    ({"timeout_s": 0}, "--timeout 0: must be above 0"),
])
def test_the_one_http_policy_refuses_non_finite_or_out_of_range_seconds(kw, message):
    """Issue 42: NaN passed `max_retry_after_s < 0`, and every Retry-After then passed the cap."""
    with pytest.raises(FactatlasError) as info:
        HttpPolicy(**kw)
    assert str(info.value).startswith(message)
