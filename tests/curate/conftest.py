"""Shared fixtures for the curate tests: the fixture graph on disk, a store, local servers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fixture_graph import write_fixture  # noqa: E402

OUTPUT_FILES = ("facts.parquet", "entities.parquet", "labels.parquet", "dropped.parquet")


class Recorder:
    """An injectable sleeper: records the waits instead of sleeping."""

    def __init__(self):
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


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


def output_bytes(run_dir: Path) -> dict[str, bytes]:
    return {name: (Path(run_dir) / "curate" / name).read_bytes() for name in OUTPUT_FILES}


@pytest.fixture(scope="session")
def reference_outputs(fixture_files, tmp_path_factory) -> dict[str, bytes]:
    """The fixture pair curated once on the embedded endpoint: what every other path must equal."""
    from factatlas.curate.engine import CurationConfig, curate

    graph, table = fixture_files
    run = tmp_path_factory.mktemp("reference")
    curate(CurationConfig(pair="arab-west", langs=("ar", "en"), sample=str(graph), page_lengths=str(table)), run)
    return output_bytes(run)
