"""Endpoint presets (`--endpoint wdqs|qlever-wikidata|URL`) with their limits applied, and `--dry-run`."""

from __future__ import annotations

import json
import re
import socket
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.curate.endpoints import EmbeddedEndpoint, HttpSparqlEndpoint, load_store, make_endpoint
from factatlas.curate.engine import curate
from factatlas.curate.localserver import SparqlApp, serve
from factatlas.curate.presets import PRESETS
from factatlas.errors import ConfigError
from factatlas.http import HttpPolicy
from tests.curate.support import Recorder, output_bytes

AGENT = "factatlas-tests/1.0 (tests@example.org)"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_preset_that_says_it_requires_a_user_agent_is_refused_without_one(name):
    """The preset's own statement (what `--dry-run` prints) and the check a run applies agree."""
    from factatlas.curate.endpoints import check_user_agent

    preset = PRESETS[name]
    if preset.user_agent_required:
        with pytest.raises(ConfigError, match="without a User-Agent"):
            check_user_agent(preset.url, None)
    else:
        assert check_user_agent(preset.url, None).endswith("(local endpoint)")
    assert check_user_agent(preset.url, AGENT) == AGENT


def test_presets_resolve_to_their_urls_and_limits():
    wdqs = make_endpoint("wdqs", AGENT)
    assert isinstance(wdqs, HttpSparqlEndpoint) and wdqs.url == "https://query.wikidata.org/sparql"
    assert wdqs.preset is PRESETS["wdqs"] and wdqs.min_interval_s == 0 and wdqs.result_cap is None
    qlever = make_endpoint("qlever-wikidata", None, policy=HttpPolicy(timeout_s=605))
    assert qlever.url == "https://qlever.dev/api/wikidata" and qlever.min_interval_s == 1.0
    assert isinstance(make_endpoint("embedded"), EmbeddedEndpoint) and isinstance(make_endpoint(None), EmbeddedEndpoint)
    # the Wikidata Qleverfile lets the server work 600 s: a client that gives up first re-sends running queries
    with pytest.raises(ConfigError, match="exceed the qlever-wikidata preset's deadline of 600 s"):
        make_endpoint("qlever-wikidata", None, policy=HttpPolicy(timeout_s=35))
    with pytest.raises(ConfigError, match="without a User-Agent"):
        make_endpoint("wdqs", None)
    with pytest.raises(ConfigError, match="unknown endpoint preset 'wdqs2'. Did you mean 'wdqs'?"):
        make_endpoint("wdqs2", AGENT)


def test_the_preset_interval_paces_requests(fixture_store):
    waits = Recorder()
    with serve(SparqlApp(fixture_store)) as url:
        endpoint = HttpSparqlEndpoint(url + "/sparql", AGENT, preset=PRESETS["qlever-wikidata"], sleeper=waits,
                                      policy=HttpPolicy(timeout_s=605),
                                      clock=lambda: 100.0)  # no time passes between requests
        for _ in range(3):
            endpoint.select("SELECT * WHERE { ?s ?p ?o } LIMIT 1")
    assert waits.waits == [1.0, 1.0] and endpoint.stats.paced_s == 2.0


def test_an_answer_at_the_row_cap_is_halved_until_whole(fixture_store, config, tmp_path, reference_outputs):
    """A server that cuts answers at 40 rows with HTTP 200 (Virtuoso's ResultSetMaxRows): with the cap
    known, every capped answer is asked again in halves and the outputs equal the embedded run's."""
    app_ = SparqlApp(fixture_store, max_rows=40)
    with serve(app_) as url:
        endpoint = HttpSparqlEndpoint(url + "/sparql", AGENT, result_cap=40, sleeper=Recorder())
        result = curate(replace(config, endpoint=url + "/sparql"), tmp_path, endpoint=endpoint, sleeper=Recorder())
    assert output_bytes(tmp_path) == reference_outputs
    assert app_.cut > 0 and endpoint.stats.capped == app_.cut
    assert result.queries["splits"] > 0


def test_dry_run_prints_what_a_run_sends_and_opens_no_socket(fixture_files, tmp_path, monkeypatch):
    graph, table = fixture_files
    real = tmp_path / "real"
    runner = CliRunner()
    # asia-west: two listed cultures, so the whole of step 1 is fixed by the configuration
    args = ["curate", "--pair", "asia-west", "--langs", "en", "--sample", str(graph), "--page-lengths", str(table)]
    done = runner.invoke(app, [*args, str(real)])
    assert done.exit_code == 0, done.output
    sent = [json.loads(line) for line in (real / "curate" / "queries.jsonl").read_text().splitlines()]

    def no_socket(*_args, **_kwargs):
        raise AssertionError("the dry run opened a socket")

    monkeypatch.setattr(socket.socket, "connect", no_socket)
    monkeypatch.setattr(socket.socket, "connect_ex", no_socket)
    monkeypatch.setattr(socket, "create_connection", no_socket)
    monkeypatch.chdir(tmp_path)
    dry = runner.invoke(app, [*args, "--endpoint", "wdqs", "--user-agent", AGENT, "--dry-run", str(tmp_path / "dry")])
    assert dry.exit_code == 0, dry.output
    assert not (tmp_path / "dry").exists()
    blocks = re.split(r"^# \[\d+/\d+\] (\S+)\n", dry.stdout, flags=re.M)
    planned = list(zip(blocks[1::2], [b.split("dry run: ")[0].rstrip("\n") for b in blocks[2::2]], strict=True))
    summary = re.search(r"dry run: (\d+) queries fixed by the configuration, none sent, to "
                        r"https://query.wikidata.org/sparql \(preset wdqs: server deadline 60 s, client 65 s", dry.stdout)
    assert summary and int(summary.group(1)) == len(planned)
    # every planned query is one the real run sent, under the same kind, and step 1 is planned whole
    assert set(planned) <= {(q["kind"], q["text"].rstrip("\n")) for q in sent}
    assert sorted(k for k, _ in planned if k.startswith("candidates:")) == \
        sorted(q["kind"] for q in sent if q["kind"].startswith("candidates:"))
    assert [k for k, _ in planned][:2] == ["label-languages", "describe"]
    assert "objects: at most 10 per predicate" in dry.stdout


def test_dry_run_counts_a_rule_cultures_queries_without_printing_them(tmp_path):
    out = CliRunner().invoke(app, ["curate", "--pair", "arab-west", "--dry-run", str(tmp_path / "r")])
    assert out.exit_code == 0, out.output
    assert "dry run: 22 queries fixed by the configuration, none sent, to the embedded Wikidata sample: " \
           "label-languages 1, membership 1, candidates 20" in out.stdout
    assert "candidates for arab: 20 with its checked list of 22 countries; the countries its rule resolves " \
           "to decide" in out.stdout
    assert "  popularity: MediaWiki API requests (50 titles each) unless --page-lengths or the embedded sample\n" \
           "  objects: at most 10 per predicate (20 predicates: at most 200), 1 per 200 kept subjects\n" in out.stdout
    # 2 cultures x 150 subjects in batches of 200: 2 object queries a predicate, 40 for the 20
    ranked = CliRunner().invoke(app, ["curate", "--pair", "arab-west", "--popularity", "sitelinks", "--max-subjects",
                                      "150", "--dry-run", str(tmp_path / "r")])
    assert ranked.exit_code == 0, ranked.output
    assert "  popularity: 1 sitelinks query per 200 candidates\n  objects: at most 2 per predicate (20 predicates: " \
           "at most 40), 1 per 200 kept subjects\n" in ranked.stdout


def test_the_default_client_timeout_follows_the_preset(fixture_files, tmp_path):
    graph, table = fixture_files
    with serve(SparqlApp(load_store(graph))):
        out = CliRunner().invoke(app, ["curate", "--pair", "arab-west", "--endpoint", "qlever-wikidata",
                                       "--user-agent", AGENT, "--dry-run", str(tmp_path / "r")])
    assert out.exit_code == 0, out.output
    assert "server deadline 600 s, client 605 s, at least 1 s between requests" in out.stdout


@pytest.mark.parametrize(("options", "message"), [
    (["--endpoint", "wdqs"], "refusing to query the public WDQS (https://query.wikidata.org/sparql) without a "
                             "User-Agent"),
    (["--endpoint", "wdqs", "--user-agent", "generic"], "--user-agent 'generic': Wikimedia requires contact "
                                                       "information in the agent"),
    (["--endpoint", "wdqs", "--user-agent", AGENT, "--timeout", "30"],
     "client timeout 30 s must exceed the wdqs preset's deadline of 60 s"),
    (["--endpoint", "qlever-wikidata", "--user-agent", AGENT, "--timeout", "20"],
     "client timeout 20 s must exceed the qlever-wikidata preset's deadline of 600 s"),
    (["--endpoint", "qlever-wikidata"], "the MediaWiki API needs a User-Agent with contact information"),
    (["--popularity", "edits"], "--popularity edits: the embedded sample ships article lengths only"),
])
def test_the_dry_run_refuses_what_a_run_refuses(options, message, tmp_path, monkeypatch):
    """`--dry-run` makes every check a run makes before its first query, and exits as the run would: the
    same one-line error, exit 2, nothing written."""
    from tests.clirun import factatlas

    monkeypatch.delenv("FACTATLAS_USER_AGENT", raising=False)
    args = ["curate", str(tmp_path / "r"), "--pair", "arab-west", "--langs", "ar,en", *options]
    real, dry = factatlas(*args), factatlas(*args, "--dry-run")
    assert (real.returncode, dry.returncode) == (2, 2), (real.stderr, dry.stderr)
    assert message in real.stderr and dry.stderr == real.stderr
    assert not (tmp_path / "r" / "curate").exists()
