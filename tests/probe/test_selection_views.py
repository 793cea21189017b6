"""``SelectedPrompts`` as a sequence over several row groups: indexing from either end, slices and ``take`` give
the records the benchmark holds at those rows; ``take`` refuses positions that do not ascend; an out-name
passes through as given."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from factatlas.benchmark import Benchmark
from factatlas.probe.selection import parse_out_name, select_prompts
from tests.builder.builder_fixtures import build, write


@pytest.fixture(scope="module")
def grouped(tmp_path_factory):
    """A small build with its prompts in row groups of 3 rows."""
    folder = write(build(), tmp_path_factory.mktemp("views") / "build")
    path = folder / "prompts.parquet"
    pq.write_table(pq.read_table(path), path, row_group_size=3, compression="zstd", store_schema=True)
    assert pq.ParquetFile(path).num_row_groups >= 4
    return folder


def test_rows_of_later_row_groups_are_the_benchmarks_own(grouped):
    bench = Benchmark.open(grouped)
    every = [p for batch in bench.iter_prompts() for p in batch]
    selected = select_prompts(bench, None, None)
    assert len(selected) == len(every) >= 12
    assert selected[0] == every[0] and selected[-1] == every[-1] and selected[7] == every[7]
    assert selected[4:11] == every[4:11]
    picked = selected.take([1, 5, 9, len(every) - 1])
    assert list(picked) == [every[1], every[5], every[9], every[-1]]
    with pytest.raises(ValueError, match="positions must ascend"):
        selected.take([2, 2])
    with pytest.raises(IndexError):
        selected[len(every)]


def test_an_out_name_passes_through_and_none_is_none():
    assert parse_out_name("tiny-run") == "tiny-run" and parse_out_name(None) is None
    with pytest.raises(ValueError, match="expected one folder name under probe/"):
        parse_out_name("../x")
