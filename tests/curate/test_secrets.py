"""Secrets (issue 11): credentials in --endpoint and key parameters never reach messages, logs, the
manifest or queries.jsonl; `factatlas -v` masks them at the logging layer, even a server's echo of the
Authorization header."""

from __future__ import annotations

import base64
import logging
import socket
import subprocess
import sys

import pytest

from factatlas.curate.endpoints import EndpointError, HttpSparqlEndpoint, load_store
from factatlas.curate.localserver import FaultProxy, SparqlApp, serve, serve_proxy
from factatlas.http import RedactingFilter, redact

USER, PASSWORD, KEY = "alice", "s3cret-pw", "APIKEY0123456789"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


def test_redact_masks_userinfo_key_parameters_and_authorization_values():
    assert redact("http://alice:pw@host:8/sparql?key=abc&x=1") == "http://***@host:8/sparql?key=***&x=1"
    assert redact("https://h/x?api_key=abc;access_token=def") == "https://h/x?api_key=***;access_token=***"
    assert redact("Authorization: Bearer abc.def-ghi") == "Authorization: Bearer ***"
    assert redact("{'x-echo-authorization': 'Basic YWxpY2U6cHc='}") == "{'x-echo-authorization': 'Basic ***'}"
    assert redact('{"token": "hf_abcdefghijkl"}') == '{"token": "***"}'
    assert redact("monkey=1 turkey=2 https://h/sparql") == "monkey=1 turkey=2 https://h/sparql"  # not keys


def test_a_connection_error_names_the_endpoint_without_its_password():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint = HttpSparqlEndpoint(f"http://{USER}:{PASSWORD}@127.0.0.1:{port}/sparql?key={KEY}", "t/1 (t@x.org)")
    with pytest.raises(EndpointError, match="cannot connect") as caught:
        endpoint.select("SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    assert PASSWORD not in str(caught.value) and KEY not in str(caught.value)
    assert f"http://***@127.0.0.1:{port}/sparql" in str(caught.value)
    assert endpoint.id == f"http://***@127.0.0.1:{port}/sparql?key=***"


def test_the_filter_masks_records_whoever_logs_them(caplog):
    record = logging.LogRecord("urllib3.connectionpool", logging.DEBUG, __file__, 1,
                               '%s://%s:%s "%s %s %s" %s %s', ("http", "h", 80, "GET", f"/s?key={KEY}",
                                                                "HTTP/1.1", 200, None), None)
    assert RedactingFilter().filter(record)
    assert KEY not in record.getMessage() and "key=***" in record.getMessage()


def test_verbose_curation_with_credentials_leaks_nothing(fixture_files, tmp_path):
    graph, table = fixture_files
    with serve(SparqlApp(load_store(graph))) as upstream:
        proxy = FaultProxy(upstream, ["echo-auth"] * 500)  # every answer echoes the Authorization header
        with serve_proxy(proxy) as url:
            endpoint = url.replace("http://", f"http://{USER}:{PASSWORD}@") + f"/sparql?key={KEY}"
            proc = subprocess.run([sys.executable, "-m", "factatlas", "-v", "curate", "--pair", "arab-west",
                                   "--langs", "ar,en", "--run", str(tmp_path / "run"), "--endpoint", endpoint,
                                   "--page-lengths", str(table), "--predicates", "P36"],
                                  capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    assert set(proxy.authorizations) == {f"Basic {BASIC}"}  # the credentials were used...
    assert "x-echo-authorization" in proc.stderr and "Basic ***" in proc.stderr  # ...echoed, and logged
    assert "DEBUG urllib3" in proc.stderr  # urllib3's own request lines pass the same filter
    written = {p.name: p.read_text("utf-8") for p in (tmp_path / "run").rglob("*") if p.suffix in (".json", ".jsonl")
               and p.parent.name != "cache"}
    assert {"manifest.json", "queries.jsonl"} <= set(written)
    for where, text in {"stderr": proc.stderr, "stdout": proc.stdout, **written}.items():
        for secret in (PASSWORD, KEY, BASIC):
            assert secret not in text, f"{secret!r} leaked into {where}"
    assert "http://***@127.0.0.1:" in written["manifest.json"] and "key=***" in written["queries.jsonl"]
