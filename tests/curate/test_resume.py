"""Kill a run after k queries, rerun: identical final files, no query asked twice for cached work."""

from __future__ import annotations

import pytest

from factatlas.curate.endpoints import EmbeddedEndpoint
from factatlas.curate.engine import curate
from factatlas.curate.sparql import query_hash
from tests.curate.support import output_bytes


class Killed(BaseException):
    """Stands in for SIGKILL/Ctrl-C: not an Exception, so nothing may swallow it."""


class CountingEndpoint:
    def __init__(self, inner: EmbeddedEndpoint, kill_after: int | None = None):
        self.inner, self.kill_after = inner, kill_after
        self.asked: list[str] = []

    @property
    def id(self) -> str:
        return self.inner.id

    def select(self, query: str):
        if self.kill_after is not None and len(self.asked) >= self.kill_after:
            raise Killed()
        self.asked.append(query_hash(self.id, query))
        return self.inner.select(query)


@pytest.mark.parametrize("k", [1, 9, 40])
def test_kill_after_k_queries_then_resume(k, fixture_files, fixture_store, config, tmp_path, reference_outputs):
    embedded = EmbeddedEndpoint(fixture_files[0], store=fixture_store)
    full = CountingEndpoint(embedded)
    curate(config, tmp_path / "full", endpoint=full)
    assert len(full.asked) > 40, "the fixture run must need more queries than the kill points"

    run = tmp_path / "killed"
    first = CountingEndpoint(embedded, kill_after=k)
    with pytest.raises(Killed):
        curate(config, run, endpoint=first)
    assert len(first.asked) == k
    assert not (run / "curate" / "facts.parquet").exists()  # nothing half-written to trust
    assert len(list((run / "curate" / "cache").glob("*.json"))) == k

    second = CountingEndpoint(embedded)
    res = curate(config, run, endpoint=second)
    assert not set(first.asked) & set(second.asked), "a cached query was asked again"
    assert sorted(first.asked + second.asked) == sorted(full.asked)
    assert output_bytes(run) == reference_outputs
    assert res.queries["cached"] == k

    third = CountingEndpoint(embedded)
    curate(config, run, endpoint=third)
    assert third.asked == []  # a finished run is answered entirely from the cache
    assert output_bytes(run) == reference_outputs


def test_manifest_records_when_the_endpoint_answered(fixture_files, fixture_store, config, tmp_path):
    import json
    import os

    embedded = EmbeddedEndpoint(fixture_files[0], store=fixture_store)
    run = tmp_path / "run"
    curate(config, run, endpoint=embedded)
    # pretend the cached answers were fetched on two known days; a rerun answers from the cache
    answers = sorted((run / "curate" / "cache").glob("*.json"))
    day1, day2 = 1_700_000_000, 1_700_086_400  # 2023-11-14T22:13:20Z, one day later
    for i, path in enumerate(answers):
        os.utime(path, (day1 if i else day2, day1 if i else day2))
    curate(config, run, endpoint=CountingEndpoint(embedded))
    stage = json.loads((run / "manifest.json").read_text())["stages"]["curate"]
    assert stage["retrieved_first"] == "2023-11-14T22:13:20+00:00"
    assert stage["retrieved"] == "2023-11-15T22:13:20+00:00"
