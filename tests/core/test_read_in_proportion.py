"""Issue 41 item 3: no command holds every prompt of the benchmark as records (``Benchmark.prompts``, the
whole-table read); each reads the rows it needs, filtered or a row group at a time. Each test runs the
command in-process and counts what went through the reader: the whole-table read, and the rows each
``decode_prompts`` call turned into records."""

from __future__ import annotations

import gc
import json
import subprocess
from functools import cached_property
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from factatlas import benchmark as B
from factatlas.records import Prompt
from tests import clirun
from tests.builder.builder_fixtures import build, write

REPO = Path(__file__).resolve().parents[2]


def factatlas(*args: object) -> subprocess.CompletedProcess:
    return clirun.factatlas(*args, env={"COLUMNS": "200"}, cwd=REPO)


@pytest.fixture
def reads(monkeypatch):
    """What the reader was asked for: ``whole`` counts reads of every prompt as records, ``decoded`` the rows
    of each decoded batch (language of each row)."""
    seen = {"whole": 0, "decoded": []}
    whole = B.Benchmark.__dict__["prompts"].func

    def counted_whole(self):
        seen["whole"] += 1
        return whole(self)

    decode = B.decode_prompts

    def counted_decode(table, interned):
        seen["decoded"].append(table.column("lang").to_pylist())
        if "before" in seen:  # records alive as this batch is decoded, less those alive before the command
            seen["alive"] = max(seen.get("alive", 0), live_prompts() - seen["before"])
        return decode(table, interned)

    prompts = cached_property(counted_whole)
    prompts.__set_name__(B.Benchmark, "prompts")
    monkeypatch.setattr(B.Benchmark, "prompts", prompts)
    monkeypatch.setattr(B, "decode_prompts", counted_decode)
    return seen


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    run = tmp_path_factory.mktemp("read-in-proportion") / "run"
    write(build(), run / "build")
    return run


GROUP_ROWS = 2


def live_prompts() -> int:
    """Prompt records alive in this process (other tests' fixtures included: compare with a count before)."""
    return sum(type(o) is Prompt for o in gc.get_objects())


@pytest.fixture(scope="module")
def grouped(tmp_path_factory):
    """The built benchmark with prompts.parquet in row groups of 2 rows (the writer's 2048 hold it whole)."""
    run = tmp_path_factory.mktemp("grouped") / "run"
    write(build(), run / "build")
    path = run / "build" / "prompts.parquet"
    table = pq.read_table(path)
    pq.write_table(table, path, row_group_size=GROUP_ROWS, compression="zstd", store_schema=True)
    assert pq.ParquetFile(path).num_row_groups >= 5
    return run


def rows_of(run: Path, lang: str | None = None) -> int:
    table = pq.read_table(run / "build" / "prompts.parquet", columns=["lang"])
    return table.num_rows if lang is None else table.column("lang").to_pylist().count(lang)


def test_validate_benchmark_streams_the_prompts(grouped, reads):
    reads["before"] = live_prompts()
    res = factatlas("validate-benchmark", grouped / "build")
    assert res.returncode == 0, res.stdout + res.stderr
    assert reads["whole"] == 0
    assert len(reads["decoded"]) >= 5 and reads["alive"] <= 2 * GROUP_ROWS  # a row group or two, never all


def test_publish_dry_run_streams_the_prompts(grouped, reads, tmp_path):
    reads["before"] = live_prompts()
    res = factatlas("publish", grouped, "--repo", "org/bench", "--version", "1.0.0", "--target",
                    f"git:{tmp_path / 'release.git'}", "--dry-run")
    assert res.returncode == 0, res.stdout + res.stderr
    assert reads["whole"] == 0
    assert reads["alive"] <= 2 * GROUP_ROWS + 1  # a row group or two (and the card's example row)
    # one pass for the card's digest, then each config's own rows: every row twice (its language and all)
    decoded = [lang for batch in reads["decoded"] for lang in batch]
    assert len(decoded) == 3 * rows_of(grouped)


@pytest.fixture(scope="module")
def tiny_model(built, tmp_path_factory):
    """A tiny BERT trained once (training reads every prompt: its training set), then probed as a folder."""
    import shutil

    res = factatlas("probe", built, "--model", "tiny-bert", "--tiny-steps", "1", "--out-name", "train")
    assert res.returncode == 0, res.stdout + res.stderr
    model = tmp_path_factory.mktemp("model") / "tiny-bert"
    shutil.copytree(built / "probe" / "_models" / "tiny-bert", model)
    return model


@pytest.mark.slow
def test_probe_of_one_language_decodes_that_language_for_scoring_and_metrics(built, tiny_model, reads):
    res = factatlas("probe", built, "--model", tiny_model, "--langs", "en", "--out-name", "en",
                    "--no-template-only")
    assert res.returncode == 0, res.stdout + res.stderr
    assert reads["whole"] == 0
    # whole-table passes (the display labels, the dataset profile) stream one batch at a time; everything
    # else decodes English rows only
    full = [b for b in reads["decoded"] if set(b) != {"en"}]
    english = [b for b in reads["decoded"] if set(b) == {"en"}]
    assert sum(map(len, full)) <= 2 * rows_of(built)
    assert english and sum(map(len, english)) <= 4 * rows_of(built, "en")
    # the coverage still counts the whole benchmark (its kind column), not the prompts the join decoded
    coverage = json.loads((built / "probe" / "en" / "metrics.json").read_text("utf-8"))["coverage"]
    assert coverage["benchmark_prompts"] == rows_of(built)
    kinds = pq.read_table(built / "build" / "prompts.parquet", columns=["kind"]).column("kind").to_pylist()
    assert coverage["eligible_prompts"] == kinds.count("cloze") > coverage["used"]
