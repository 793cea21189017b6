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


def test_a_split_waits_as_row_numbers_and_its_values_are_read_when_its_row_group_is_written(grouped, monkeypatch):
    """One prompts file: the rows waiting for a data shard's row group are row numbers (``RowsOf``), no column
    value is read before the group is written, and writing it reads each column of each of its pieces once
    (seen red with the pieces read whole as they came, as up to b41c2e2). The files' bytes and layout:
    ``test_publish_holds_one_row_group_of_a_shard`` (tests/core/test_read_in_proportion.py)."""
    from factatlas.prompt_tables import RowsOf
    from factatlas.publish import render as R
    from factatlas.release_input import read_release_input

    monkeypatch.setattr(R, "ROW_GROUP_ROWS", 5)
    state = {"writing": False, "early": 0, "reads": 0, "expected": 0, "waiting": set()}
    column, write_group, contiguous, add = RowsOf.column, R._Shards._write_group, R._contiguous_group, R._Shards.add

    def read(self, name):
        state["reads"] += 1
        state["early"] += not state["writing"]
        return column(self, name)

    def writing(self, rows):
        state["writing"] = True
        try:
            write_group(self, rows)
        finally:
            state["writing"] = False

    def made(pieces):
        state["expected"] += len(pieces) * len(T.PROMPTS_SCHEMA)
        return contiguous(pieces)

    def waiting(self, rows):
        add(self, rows)
        state["waiting"].update(type(p).__name__ for p in self.pending)

    monkeypatch.setattr(RowsOf, "column", read)
    monkeypatch.setattr(R._Shards, "_write_group", writing)
    monkeypatch.setattr(R, "_contiguous_group", made)
    monkeypatch.setattr(R._Shards, "add", waiting)
    R.render_data(read_release_input(grouped), 12)
    assert state["waiting"] == {"RowsOf"}
    assert state["early"] == 0 and state["reads"] == state["expected"] > 0


def test_the_rows_of_one_file_and_of_several_merged_are_the_same_values(grouped, tmp_path):
    """``iter_prompt_rows``: the rows a mask keeps, read a column at a time from one file (``RowsOf``), equal
    those of the same prompts dealt into several sorted files and merged by prompt_id (tables), value for value."""
    import pyarrow.compute as pc

    from factatlas.prompt_tables import iter_prompt_rows

    src = grouped / "build" / "prompts.parquet"
    paths = _release_shards(src, tmp_path, 3)

    def whole(pieces):
        pieces = list(pieces)
        return pa.table({name: pa.chunked_array([c for p in pieces for c in p.column(name).chunks],
                                                T.PROMPTS_SCHEMA.field(name).type)
                         for name in T.PROMPTS_SCHEMA.names}), pieces

    for keep in (lambda t: pc.equal(t.column("lang"), "en"), lambda t: pc.equal(t.column("split"), "test")):
        one, pieces = whole(iter_prompt_rows([src], keep))
        merged, _ = whole(iter_prompt_rows(paths, keep))
        assert len(pieces) > 1 and one.num_rows == merged.num_rows > 0
        assert one.equals(merged)
        assert one.equals(pa.concat_tables(iter_prompt_tables([src])).filter(keep(pq.read_table(src))))


def test_the_digest_walks_a_few_columns_and_reads_the_example_apart(grouped, monkeypatch):
    """The release's digest walks the prompts' ``DIGEST_COLUMNS`` only (no candidate list decoded), and reads
    whole rows only for the card's example: one row group per look (seen red with the walk of every column,
    as up to b41c2e2)."""
    from factatlas import release_input as RI

    walks: list[tuple[tuple[str, ...] | None, int, set[str]]] = []
    tables = B.Benchmark.prompt_tables

    def watched(self, columns=None, lang=None):
        walk = [tuple(columns) if columns else None, 0, set()]
        walks.append(walk)
        for table in tables(self, columns=columns, lang=lang):
            walk[1] += 1
            walk[2].update(table.column_names)
            yield table

    monkeypatch.setattr(B.Benchmark, "prompt_tables", watched)
    digest = RI.read_release_input(grouped).digest
    groups = pq.ParquetFile(grouped / "build" / "prompts.parquet").num_row_groups
    full = [w for w in walks if w[0] is None]
    assert [w[2] for w in walks if w[0] is not None] == [{*RI.DIGEST_COLUMNS}]
    assert [w[1] for w in walks if w[0] is not None] == [groups]
    assert 1 <= len(full) <= 2 and all(w[1] == 1 for w in full)
    assert digest.example is not None and digest.example.lang == "en" and digest.n_prompts == rows_in(grouped)


def rows_in(run: Path) -> int:
    return pq.ParquetFile(run / "build" / "prompts.parquet").metadata.num_rows


def test_the_digest_keeps_each_facts_last_row_per_language_as_a_row_by_row_pass_would():
    """The per-fact tallies (``PromptDigest.locality`` and ``popularity``) are those of a row-by-row pass that
    overwrites a fact's entry with each later row, here with a fact that comes back in a later row group after
    other facts (seen red with each fact's first row kept instead of its last). The same test passes on the
    dict-per-fact pass up to b41c2e2."""
    from factatlas import release_input as RI

    rows = [  # (fact, lang, article_langs, home_langs, quantile, popularity)
        ("c:P1:Q1", "en", ["en"], [], 1, 5.0), ("c:P1:Q1", "ar", [], [], 0, 0.0),
        ("c:P1:Q2", "en", ["ar"], ["ar"], 2, 9.0), ("c:P1:Q3", "en", ["de"], [], 2, 7.0),
        ("c:P1:Q1", "en", ["ar"], ["ar"], 3, 11.0),  # Q1 again, later, in another group: it wins
        ("c:P1:Q2", "ar", ["ar"], [], 0, 0.0), ("c:P1:Q3", "en", [], [], 1, 2.0)]

    def table(part):
        cols = {"prompt_id": [f"{f}:{lang}:{i}" for i, (f, lang, *_rest) in enumerate(part)],
                "fact_id": [r[0] for r in part], "lang": [r[1] for r in part], "template_id": ["t"] * len(part),
                "kind": ["cloze"] * len(part), "pair": ["p"] * len(part), "split": ["test"] * len(part),
                "template_status": ["ok"] * len(part), "article_langs": [r[2] for r in part],
                "home_langs": [r[3] for r in part], "popularity": [r[5] for r in part],
                "popularity_quantile": [r[4] for r in part]}
        return pa.table(cols)

    digest = RI.digest_prompts([table(rows[:2]), table(rows[2:4]), table(rows[4:])], "all")
    last: dict[tuple[str, str], tuple] = {}
    rated: dict[str, tuple[int, float]] = {}
    for fact, lang, article, home, quantile, popularity in rows:  # the row-by-row pass
        site = lang  # records.wikipedia_site: the edition's language code
        last[(fact, lang)] = (RI.UNRECORDED if not article else RI.IN_EDITION if site in article
                              else RI.LOCAL if home else RI.ELSEWHERE)
        if quantile:
            rated[fact] = (quantile, popularity)
    for lang in ("en", "ar"):
        codes = [code for (_f, lg), code in last.items() if lg == lang]
        assert digest.locality[lang] == (len(codes), codes.count(RI.IN_EDITION), codes.count(RI.LOCAL),
                                         codes.count(RI.UNRECORDED))
    assert digest.locality["en"] == (3, 0, 2, 1)  # Q1 and Q2 local by their last en rows; Q3 without a record
    expected: dict[int, tuple[int, float, float]] = {}
    for quantile, value in rated.values():
        n, least, most = expected.get(quantile, (0, value, value))
        expected[quantile] = (n + 1, min(least, value), max(most, value))
    assert digest.popularity == expected == {3: (1, 11.0, 11.0), 2: (1, 9.0, 9.0), 1: (1, 2.0, 2.0)}
    assert digest.lang_facts == {"en": 3, "ar": 2}
