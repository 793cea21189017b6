"""The real SPARQLWrapper path against a local SPARQL-protocol server over pyoxigraph, with and without
faults (429 with/without Retry-After, 500, HTTP 200 with truncated JSON, slower than the client timeout).
"""

from __future__ import annotations

import json
from dataclasses import replace
from urllib.parse import quote

import pytest

from factatlas.curate.endpoints import (
    EndpointError,
    HttpSparqlEndpoint,
    QueryTimeout,
    RateLimited,
    retry_after_seconds,
)
from factatlas.curate.engine import curate
from factatlas.curate.localserver import FaultInjector, SparqlApp, serve
from factatlas.errors import ConfigError
from tests.curate.support import Recorder, output_bytes


def http_endpoint(url: str, sleeper=None, timeout_s: float = 65.0, post_threshold: int = 2000) -> HttpSparqlEndpoint:
    return HttpSparqlEndpoint(url + "/sparql", "factatlas-tests/1.0 (https://example.org; tests@example.org)",
                              timeout_s=timeout_s, sleeper=sleeper or Recorder(), post_threshold=post_threshold)


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


@pytest.mark.parametrize("fault", ["500", "truncated", "slow:1.2"])
def test_server_faults_back_off_halve_and_give_identical_output(fault, fixture_store, config, tmp_path,
                                                                reference_outputs):
    injector = FaultInjector(SparqlApp(fixture_store), [fault], match=describe_queries)
    sleeper = Recorder()
    with serve(injector) as url:
        endpoint = http_endpoint(url, sleeper, timeout_s=0.6 if fault.startswith("slow") else 65.0)
        res = curate(replace(config, endpoint=url + "/sparql"), tmp_path / "f", endpoint=endpoint,
                     sleeper=sleeper)
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
        curate(replace(config, endpoint=url + "/sparql"), tmp_path / "r", endpoint=endpoint, sleeper=sleeper)
    assert sleeper.waits == [7.0, 60.0]
    assert endpoint.stats.rate_limited == 2 and endpoint.stats.waited_s == 67.0
    assert output_bytes(tmp_path / "r") == reference_outputs


def test_repeated_429_aborts(fixture_store, config, tmp_path):
    injector = FaultInjector(SparqlApp(fixture_store), ["429"] * 5)
    sleeper = Recorder()
    with serve(injector) as url, pytest.raises(RateLimited, match="3 times in a row"):
        curate(replace(config, endpoint=url + "/sparql"), tmp_path / "a", endpoint=http_endpoint(url, sleeper),
               sleeper=sleeper)
    assert sleeper.waits == [7.0, 7.0]
    assert injector.requests == 3
    assert not (tmp_path / "a" / "curate" / "facts.parquet").exists()


def test_retry_after_parsing():
    assert retry_after_seconds(None) == 60.0
    assert retry_after_seconds("12") == 12.0
    assert retry_after_seconds("garbage") == 60.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past


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
               sleeper=sleeper)
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
