"""Issue 41 item 3, publish at a million prompts: the release is rendered from columns. No ``Prompt`` record per
row (the data shards are copied as Arrow columns, the digest counts a few columns), no ``Fact`` or ``Entity``
record per fact or entity (the card counts facts.parquet's columns, the manifest the distinct QIDs), and
the Arrow tables carry exactly the values the records would write, so the files keep their bytes."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from factatlas import benchmark as B
from factatlas import tables as T
from factatlas.prompt_tables import iter_prompt_tables
from factatlas.records import Entity, Fact
from tests import clirun
from tests.builder.builder_fixtures import build, write

GROUP_ROWS = 2


@pytest.fixture(scope="module")
def grouped(tmp_path_factory) -> Path:
    """A built benchmark whose prompts.parquet holds row groups of 2 rows (the writer's 2,048 hold it whole)."""
    run = tmp_path_factory.mktemp("publish-in-proportion") / "run"
    write(build(), run / "build")
    path = run / "build" / "prompts.parquet"
    pq.write_table(pq.read_table(path), path, row_group_size=GROUP_ROWS, compression="zstd", store_schema=True)
    assert pq.ParquetFile(path).num_row_groups >= 5
    return run


@pytest.fixture
def made(monkeypatch):
    """Rows decoded into ``Prompt`` records, rows turned into dicts, and ``Fact`` and ``Entity`` records made,
    while the fixture holds."""
    seen = {"decoded": 0, "rows": 0, "facts": 0, "entities": 0}
    decode, to_row = B.decode_prompts, T.prompt_to_row

    def counted_decode(table, interned):
        seen["decoded"] += table.num_rows
        return decode(table, interned)

    def counted_row(p):
        seen["rows"] += 1
        return to_row(p)

    for record, key in ((Fact, "facts"), (Entity, "entities")):
        init = record.__init__

        def counted(self, *args, _init=init, _key=key, **kwargs):
            seen[_key] += 1
            _init(self, *args, **kwargs)

        monkeypatch.setattr(record, "__init__", counted)
    monkeypatch.setattr(B, "decode_prompts", counted_decode)
    monkeypatch.setattr(T, "prompt_to_row", counted_row)
    return seen


def test_publish_makes_no_record_per_prompt_fact_or_entity(grouped, made, tmp_path):
    """Seen red with the record path restored (publish/render.py, publish/card.py and factatlas/release_input.py
    of 1becc2a): every row decoded three times (the digest, its language's config, ``all``), a dict per row
    and config, a Fact per fact and an Entity per entity."""
    rows = pq.ParquetFile(grouped / "build" / "prompts.parquet").metadata.num_rows
    res = clirun.factatlas("publish", grouped, "--repo", "org/bench", "--version", "1.0.0", "--target",
                           f"git:{tmp_path / 'release.git'}", "--dry-run")
    assert res.returncode == 0, res.stdout + res.stderr
    assert rows >= 10
    assert made["decoded"] <= 2  # the card's example row (the first English one) and the first row
    assert made == {**made, "rows": 0, "facts": 0, "entities": 0}


def _release_shards(src: Path, out: Path, parts: int) -> list[Path]:
    """The prompts of ``src`` dealt round-robin into ``parts`` files, each sorted by prompt_id (a release's
    shards: each sorted, their ids interleaved)."""
    table = pq.read_table(src)
    paths = []
    for k in range(parts):
        path = out / f"part-{k}.parquet"
        pq.write_table(table.take(list(range(k, table.num_rows, parts))), path, row_group_size=3,
                       store_schema=True)
        paths.append(path)
    return paths


def test_the_tables_hold_the_rows_and_values_the_records_write_and_merge_shards_by_id(grouped, tmp_path):
    """Several sorted files are merged by prompt_id as the records' reader merges them, a language filter keeps
    that language's rows, and null numbers and lists read as the records' defaults (``as_written``): the
    tables equal the records' rows written back, value for value."""
    src = grouped / "build" / "prompts.parquet"
    table = pq.read_table(src)
    n = table.num_rows
    # nulls where the records put their defaults: a popularity, a quantile, an article list, gold forms
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    for name in ("popularity", "popularity_quantile", "popularity_log10", "article_langs", "home_langs",
                 "gold_forms"):
        columns[name][1] = None
    holed = tmp_path / "holed.parquet"
    pq.write_table(pa.Table.from_pydict(columns, schema=T.PROMPTS_SCHEMA), holed, row_group_size=4,
                   store_schema=True)
    paths = _release_shards(holed, tmp_path, 3)

    def as_rows(records):
        return pa.Table.from_pylist([T.prompt_to_row(p) for p in records], schema=T.PROMPTS_SCHEMA)

    for lang in (None, "en"):
        keep = None if lang is None else (lambda _pid, row_lang, lang=lang: row_lang == lang)
        records = [p for batch in B.iter_prompt_batches(paths, keep) for p in batch]
        tables = list(iter_prompt_tables(paths, lang))
        got = pa.concat_tables(tables)
        assert len(tables) > 1 and got.num_rows == len(records) == (n if lang is None else
                                                                   columns["lang"].count(lang))
        assert got.equals(as_rows(records))
    got = pa.concat_tables(list(iter_prompt_tables([holed])))
    assert got.column("popularity")[1].as_py() == 0.0 and got.column("popularity_log10")[1].as_py() == -1
    assert got.column("article_langs")[1].as_py() == [] and got.column("gold_forms")[1].as_py() == []


def test_a_null_candidate_list_is_refused_by_the_tables_as_by_the_records(grouped, tmp_path):
    table = pq.read_table(grouped / "build" / "prompts.parquet")
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    columns["candidate_qids"][0] = None
    path = tmp_path / "prompts.parquet"
    pq.write_table(pa.Table.from_pydict(columns, schema=T.PROMPTS_SCHEMA), path, store_schema=True)
    for read in (lambda: list(B.iter_prompt_batches([path])), lambda: list(iter_prompt_tables([path]))):
        with pytest.raises(ValueError, match="a candidate list column holds nulls"):
            read()


def test_one_split_of_one_config_waits_for_its_row_group_at_a_time(grouped, monkeypatch, tmp_path):
    """Each walk of the prompts fills one split's shards: the rows waiting for a row group are one split's
    (seen red with every split of a config filled in one walk), and the files are those of the walk that
    fed every split at once (the bytes depend on the rows alone)."""
    import shutil

    import pyarrow.compute as pc

    from factatlas.publish import render as R
    from factatlas.release_input import read_release_input

    run = tmp_path / "run"
    shutil.copytree(grouped, run)
    path = run / "build" / "prompts.parquet"
    table = pq.read_table(path)
    facts = sorted(set(table.column("fact_id").to_pylist()))
    dev = pc.is_in(table.column("fact_id"), pa.array(facts[::2]))  # every other fact in dev, in every language
    table = table.set_column(table.schema.get_field_index("split"), "split",
                             pc.if_else(dev, "dev", table.column("split")))
    pq.write_table(table, path, row_group_size=GROUP_ROWS, compression="zstd", store_schema=True)

    monkeypatch.setattr(R, "ROW_GROUP_ROWS", 5)
    open_shards: list = []
    most = [0]
    add, init = R._Shards.add, R._Shards.__init__

    def made(self, *args, **kwargs):
        init(self, *args, **kwargs)
        open_shards.append(self)

    def watched(self, rows):
        add(self, rows)
        most[0] = max(most[0], sum(1 for s in open_shards if s.held))

    monkeypatch.setattr(R._Shards, "__init__", made)
    monkeypatch.setattr(R._Shards, "add", watched)
    src = read_release_input(run)
    files, configs = R.render_data(src, 12)
    assert most[0] == 1 and all(len(c.splits) >= 2 for c in configs)  # two splits, never both waiting

    def every_split_in_one_walk(src, max_shard_rows):  # the walk up to 70cd3f7
        import pyarrow.compute as pc

        out, entries = {}, []
        for name, (lang, counts) in R.plan_configs(src).items():
            order = sorted(counts, key=R._split_key)
            shards = {split: R._Shards(out, name, split, counts[split], max_shard_rows) for split in order}
            for table in src.prompts.tables(lang):
                if lang is not None:
                    table = table.filter(pc.equal(table.column("pair"), name[: -len(lang) - 1]))
                for split in pc.unique(table.column("split")).to_pylist():
                    shards[split].add(table.filter(pc.equal(table.column("split"), split)))
            for split in order:
                shards[split].flush()
            entries.append(R.ConfigEntry(name, lang, tuple((s, tuple(shards[s].paths), counts[s]) for s in order)))
        return out, tuple(entries)

    assert every_split_in_one_walk(src, 12) == (files, configs)
    assert most[0] == 2  # and the old walk held both splits' rows at once
