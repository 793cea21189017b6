"""Shared fixtures for the curate tests: the fixture graph on disk, a store, local servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.curate.fixture_graph import write_fixture
from tests.curate.support import output_bytes


@pytest.fixture(scope="session")
def fixture_files(tmp_path_factory) -> tuple[Path, Path]:
    return write_fixture(tmp_path_factory.mktemp("fixture"))


@pytest.fixture(scope="session")
def fixture_store(fixture_files):
    from factatlas.curate.endpoints import load_store

    return load_store(fixture_files[0])


@pytest.fixture
def config(fixture_files):
    from factatlas.curate.engine import CurationConfig

    graph, table = fixture_files
    return CurationConfig(pair="arab-west", langs=("ar", "en"), sample=str(graph), page_lengths=str(table))


@pytest.fixture(scope="session")
def reference_outputs(fixture_files, tmp_path_factory) -> dict[str, bytes]:
    """The fixture pair curated once on the embedded endpoint: what every other path must equal."""
    from factatlas.curate.engine import CurationConfig, curate

    graph, table = fixture_files
    run = tmp_path_factory.mktemp("reference")
    curate(CurationConfig(pair="arab-west", langs=("ar", "en"), sample=str(graph), page_lengths=str(table)), run)
    return output_bytes(run)


def _engine(kind):
    """One real engine per session, loaded with the embedded sample; skipped, saying why, where its binary
    is missing (.ci/run installs both)."""
    from factatlas.curate.endpoints import SAMPLE_PATH
    from factatlas.curate.localengines import EngineUnavailable

    if not SAMPLE_PATH.exists():
        pytest.skip("the embedded Wikidata sample is not built yet")
    server = kind(SAMPLE_PATH)
    try:
        running = server.__enter__()
    except EngineUnavailable as e:
        pytest.skip(str(e))
    return server, running


@pytest.fixture(scope="session")
def virtuoso_sample():
    """Virtuoso 7 on 127.0.0.1 (free SQL and HTTP ports) holding the embedded sample."""
    from factatlas.curate.localengines import VirtuosoServer

    server, running = _engine(VirtuosoServer)
    yield running
    server.__exit__(None, None, None)


@pytest.fixture(scope="session")
def oxigraph_sample():
    """`oxigraph serve-read-only` on 127.0.0.1 holding the embedded sample."""
    from factatlas.curate.localengines import OxigraphServer

    server, running = _engine(OxigraphServer)
    yield running
    server.__exit__(None, None, None)
