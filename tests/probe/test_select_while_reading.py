"""`--langs` / `--shard` filter while reading prompts.parquet: the same Prompt records, in the same order."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from factatlas.benchmark import Benchmark
from factatlas.errors import ConfigError
from factatlas.probe.runner import select_prompts, select_rows
from tests.probe.probe_capitals import write_benchmark


@pytest.fixture(scope="module")
def grouped_benchmark(tmp_path_factory, capitals_rows):
    """The capitals benchmark with prompts.parquet rewritten in row groups of 7 rows (several groups hold
    a single language, so whole groups are skipped)."""
    folder = write_benchmark(tmp_path_factory.mktemp("grouped") / "build", capitals_rows)
    path = folder / "prompts.parquet"
    table = pq.read_table(path)
    table = table.sort_by([("lang", "ascending"), ("prompt_id", "ascending")])
    pq.write_table(table, path, row_group_size=7)
    assert pq.ParquetFile(path).num_row_groups > 4
    return folder


@pytest.mark.parametrize(("langs", "shard"), [
    (None, None), (("en",), None), (("fr",), None), (("en", "fr"), None),
    (None, (0, 3)), (None, (2, 3)), (("fr",), (1, 2)), (("en",), (0, 50)),
])
def test_filtered_read_equals_filtering_the_full_read(grouped_benchmark, langs, shard):
    full = Benchmark.open(grouped_benchmark)
    expected = select_rows(full.prompts, langs, shard)
    filtered = Benchmark.open(grouped_benchmark)
    got = select_prompts(filtered, langs, shard)
    assert got == expected
    assert (langs is None and shard is None) or "prompts" not in filtered.__dict__  # the whole table was not read
    assert filtered.prompt_count == len(full.prompts)


def test_unknown_language_is_named(grouped_benchmark):
    with pytest.raises(ConfigError, match=r"--langs: de not in the benchmark; it has en, fr"):
        select_prompts(Benchmark.open(grouped_benchmark), ("de",), None)


def test_a_release_s_shards_are_selected_in_prompt_id_order(tmp_path):
    """A release's prompt files (one per split, each sorted) are merged by prompt_id into one selection: the
    records and the fields a ranking probe reads are those of the run's selection (``SelectedPrompts``)."""
    from factatlas.probe.probing import SCORED_FIELDS
    from factatlas.publish.render import ReleaseOptions, render_release, write_release
    from factatlas.publish.source import load_source
    from factatlas.publish.versions import Version
    from tests.publish.publish_fixtures import make_benchmark

    run = make_benchmark(tmp_path / "run", splits={"west:P19:Q2": "dev", "west:P36:Q183": "dev"})
    write_release(render_release(load_source(run), ReleaseOptions("org/atlas", Version(1, 0, 0))), tmp_path / "rel")
    release = Benchmark.open(tmp_path / "rel")
    assert len(release.location.prompt_files) == 2
    for langs, shard in ((None, None), (("en",), None), (None, (1, 2))):
        expected = select_rows(Benchmark.open(run).prompts, langs, shard)
        assert [p.prompt_id for p in expected] == sorted(p.prompt_id for p in expected) and expected
        assert select_prompts(release, langs, shard) == expected
        fields = select_prompts(release, langs, shard, SCORED_FIELDS).fields(*SCORED_FIELDS)
        assert list(fields) == [tuple(getattr(p, n) for n in SCORED_FIELDS) for p in expected]
