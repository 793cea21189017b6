"""The same curation on three real engines: the embedded pyoxigraph store, `oxigraph serve-read-only` and
Virtuoso 7, each holding the embedded Wikidata sample. Facts (with their objects' provenance), entities,
labels and drops must be equal byte for byte: the outputs are sorted and byte-stable, so equal content
is equal bytes; a difference is shown as the sorted rows only one side has."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from factatlas.curate.endpoints import SAMPLE_PATH, HttpSparqlEndpoint
from factatlas.curate.engine import CurationConfig, curate
from tests.curate.support import OUTPUT_FILES, Recorder, output_bytes

pytestmark = [pytest.mark.servers,
              pytest.mark.skipif(not SAMPLE_PATH.exists(), reason="the embedded Wikidata sample is not built yet")]

CONFIGS = {
    "default": CurationConfig(pair="arab-west", langs=("ar", "en")),
    # the other query paths: sitelinks popularity, quotas, a smaller batch (more VALUES lists, halving sizes)
    "sitelinks": CurationConfig(pair="asia-west", langs=("en",), popularity="sitelinks", country_quota=2,
                                max_subjects=5, batch_size=7),
}
AGENT = "factatlas-tests/1.0 (tests@example.org)"


@pytest.fixture(scope="module")
def embedded_runs(tmp_path_factory):
    runs = {}
    for name, config in CONFIGS.items():
        runs[name] = tmp_path_factory.mktemp(f"embedded-{name}")
        curate(config, runs[name])
    return runs


def sorted_rows(path) -> list[str]:
    table = pq.read_table(path)
    return sorted(json.dumps(row, sort_keys=True, ensure_ascii=False, default=str) for row in table.to_pylist())


def assert_same_outputs(run, reference) -> None:
    ours, theirs = output_bytes(run), output_bytes(reference)
    for name in OUTPUT_FILES:
        if ours[name] != theirs[name]:
            a, b = sorted_rows(run / "curate" / name), sorted_rows(reference / "curate" / name)
            only_here, only_there = sorted(set(a) - set(b)), sorted(set(b) - set(a))
            raise AssertionError(f"{name} differs: {len(a)} vs {len(b)} rows; only on this engine "
                                 f"{only_here[:3]}; only on the embedded store {only_there[:3]}")


def sample_triples() -> int:
    """The sample's statements, counted from its N-Triples file (one statement a line)."""
    import gzip

    with gzip.open(SAMPLE_PATH, "rt", encoding="utf-8") as f:
        return sum(1 for line in f if line.strip() and not line.startswith("#"))


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.parametrize("engine", ["oxigraph_sample", "virtuoso_sample"])
def test_curation_is_identical_on_every_engine(engine, config, request, embedded_runs, tmp_path):
    server = request.getfixturevalue(engine)
    embedded_run = embedded_runs[config]
    assert server.triples == sample_triples()  # the sample, and only the sample (no engine system graphs)
    endpoint = HttpSparqlEndpoint(server.url, AGENT, sleeper=Recorder())
    result = curate(CONFIGS[config], tmp_path, endpoint=endpoint, sleeper=Recorder())
    assert_same_outputs(tmp_path, embedded_run)
    assert result.facts and result.drops
    assert ("sitelinks" in result.queries["by_kind"]) == (config == "sitelinks")
    manifest = json.loads((tmp_path / "manifest.json").read_text())["stages"]["curate"]
    reference = json.loads((embedded_run / "manifest.json").read_text())["stages"]["curate"]
    assert manifest["counts"] == reference["counts"]
    assert endpoint.stats.requests == result.queries["sent"] and endpoint.stats.timeouts == 0


def test_the_oxigraph_binary_is_found_beside_the_running_python(tmp_path, monkeypatch):
    """`pip install oxigraph` in a virtual environment that is not activated puts the CLI in its bin/, beside
    the interpreter, not on PATH: the engine finds it there."""
    import stat
    import sys

    from factatlas.curate.localengines import oxigraph_binary

    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    cli = bin_dir / "oxigraph"
    cli.write_text("#!/bin/sh\nexit 0\n")
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python3"))
    assert oxigraph_binary() == str(cli)
    cli.unlink()
    assert oxigraph_binary() is None
