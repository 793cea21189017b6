"""Which prompts a probe scores: the benchmark opened once, ``--langs`` and ``--shard i/n`` (a stable hash of
the prompt id, the same on every machine), filtered while reading, and held as columns (``SelectedPrompts``)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, overload

from factatlas.benchmark import Benchmark
from factatlas.errors import ConfigError
from factatlas.records import Prompt


def parse_shard(text: Any) -> tuple[int, int] | None:
    """``"1/4"`` -> (1, 4): shard index 1 of 4, counted from 0 (a pair passes through, checked)."""
    if not text:
        return None
    if isinstance(text, list | tuple) and len(text) == 2:
        text = f"{text[0]}/{text[1]}"
    i, sep, n = str(text).partition("/")
    try:
        index, count = int(i), int(n)
    except ValueError:
        index, count = -1, 0
    if not sep or count < 1 or not 0 <= index < count:
        raise ConfigError(f"--shard {text!r}: expected i/n with 0 <= i < n, e.g. 0/4 ... 3/4")
    return index, count


def parse_out_name(value: Any) -> str | None:
    """A model folder's name under probe/: one plain name. A path would write outside probe/ (``../x``), and
    names starting with '_' or '.' are probe/'s own folders (``_models``, ``_answers``) or hidden ones."""
    if value is None:
        return None
    name = str(value)
    if not name or "/" in name or "\\" in name or name in (".", "..") or name[0] in "_.":
        raise ValueError("expected one folder name under probe/ (no '/', not starting with '_' or '.', which "
                         "name probe/'s own folders such as _models), e.g. --out-name bert-mlm-pll")
    return name


def parse_langs(value: Any) -> tuple[str, ...] | None:
    """``"fr, en"`` -> ("fr", "en"); a sequence of codes passes through; nothing given -> None (all)."""
    items = value.split(",") if isinstance(value, str) else list(value or ())
    langs = tuple(x.strip() for x in items if x and x.strip())
    return langs or None


def shard_of(prompt_id: str, count: int) -> int:
    """Stable shard of a prompt: the same on every machine and Python version."""
    return int.from_bytes(hashlib.sha256(prompt_id.encode("utf-8")).digest()[:8], "big") % count


def open_benchmark(path: str | Path, bench: Benchmark | None = None) -> tuple[Benchmark, Path]:
    """The benchmark and the run directory that receives ``probe/``: the run around the benchmark, else
    the folder holding it (``<x>/build`` files under ``<x>``). ``bench``: ``path``'s benchmark, already open."""
    bench = Benchmark.open(path) if bench is None else bench
    if bench.run is not None:
        return bench, bench.run
    return bench, bench.path.parent if bench.path.name == "build" else bench.path


def select_rows(prompts: Sequence[Prompt], langs: Sequence[str] | None,
                shard: tuple[int, int] | None) -> list[Prompt]:
    """The benchmark's prompts this process scores (``--langs``, ``--shard``), in their order."""
    if langs:
        check_langs(langs, sorted({p.lang for p in prompts}))
    keep = row_filter(langs, shard)
    return [p for p in prompts if keep is None or keep(p.prompt_id, p.lang)]


def select_prompts(benchmark: Benchmark, langs: Sequence[str] | None, shard: tuple[int, int] | None,
                   fields: Sequence[str] | None = None) -> SelectedPrompts:
    """``select_rows`` on the benchmark's files, filtering while reading: a shard or a ``--langs`` run
    reads only its own rows, kept as columns (``SelectedPrompts``). Same rows, same order. ``fields``: the
    only fields read and held (``SelectedPrompts.fields`` reads them; no record can be made); None: all."""
    if langs:
        check_langs(langs, benchmark.languages or sorted({p.lang for p in benchmark.prompts}))
    return SelectedPrompts.read(benchmark, row_filter(langs, shard), fields)


def check_langs(langs: Sequence[str], present: Sequence[str]) -> None:
    missing = [lang for lang in langs if lang not in present]
    if missing:
        raise ConfigError(f"--langs: {', '.join(missing)} not in the benchmark; it has {', '.join(sorted(present))}")


def row_filter(langs: Sequence[str] | None, shard: tuple[int, int] | None):
    """(prompt_id, lang) -> keep, or None when every row is kept."""
    if not langs and not shard:
        return None
    wanted = frozenset(langs or ())

    def keep(prompt_id: str, lang: str) -> bool:
        return (not wanted or lang in wanted) and (not shard or shard_of(prompt_id, shard[1]) == shard[0])
    return keep


CANDIDATE_COLUMNS = ("candidate_qids", "candidate_forms")
# columns whose few values repeat from row to row: one string object per distinct value (``SelectedPrompts.fields``)
SHARED_FIELDS = frozenset({"fact_id", "lang", "template_id", "kind", "pair", "culture", "predicate", "split",
                           "subject_qid", "subject_label", "template_status"})
TUPLE_FIELDS = frozenset({"gold_qids", "article_langs", "home_langs"})


class SelectedPrompts(Sequence[Prompt]):
    """The prompts a probe scores, held as Arrow columns a row group at a time, never a ``Prompt`` per row.

    A record with its id, text, forms and tuples is about 0.8 KB in Python; a row here is its Arrow bytes
    without the candidate lists, which repeat (a predicate's list in every row of a language): each row
    points at one of the distinct (candidate QIDs, candidate forms) pairs, kept once. The scoring reads the
    columns it needs (``fields``: tuples of values, a row group at a time) and takes subsets as views
    (``take``: an index per row); a record is made only when read (``[i]``, a slice, iteration), a row
    group's records at a time, equal to those ``Benchmark.prompts_where`` makes."""

    def __init__(self, groups: list, pair_ids: list, pairs: list[tuple[tuple[str, ...], tuple[str, ...]]],
                 interned: dict, rows=None) -> None:
        import numpy as np
        import pyarrow as pa

        self._groups, self._pair_ids, self._pairs, self._interned = groups, pair_ids, pairs, interned
        # each distinct list once as Arrow, taken per row group when records are made
        self._pair_lists = [pa.array([list(pair[k]) for pair in pairs], pa.list_(pa.string()))
                            for k in range(len(CANDIDATE_COLUMNS))]
        sizes = [t.num_rows for t in groups]
        self._starts = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64))).astype(np.int64)
        self._rows = np.arange(self._starts[-1], dtype=np.int64) if rows is None else rows
        self._decoded: tuple[int, int, list[Prompt]] | None = None  # the view's rows [a, b) last made records

    @classmethod
    def read(cls, benchmark: Benchmark, keep, fields: Sequence[str] | None = None) -> SelectedPrompts:
        """The rows of ``benchmark`` that ``keep(prompt_id, lang)`` accepts (every row for None), in prompt_id
        order: each row group's two key columns are read first and only its kept rows are kept. ``fields``:
        only these columns are read and held (the candidate lists always; records then cannot be made)."""
        import pyarrow as pa

        from factatlas.tables import PROMPTS_SCHEMA

        columns = None if fields is None else [n for n in PROMPTS_SCHEMA.names
                                               if n in fields or n in CANDIDATE_COLUMNS or n == "prompt_id"]
        groups, pair_ids, pairs, interned = [], [], [], {}
        index: dict[tuple[int, int], int] = {}
        for path in benchmark.location.prompt_files:
            for table in _kept_groups(benchmark, path, keep, columns):
                ids = []
                for pair in zip(*(_shared_lists(table.column(c), interned) for c in CANDIDATE_COLUMNS), strict=True):
                    key = (id(pair[0]), id(pair[1]))  # interned: one tuple object per distinct list
                    j = index.get(key)
                    if j is None:
                        j = index[key] = len(pairs)
                        pairs.append(pair)
                    ids.append(j)
                groups.append(table.drop_columns(list(CANDIDATE_COLUMNS)))
                pair_ids.append(pa.array(ids, pa.int32()))
        if len(benchmark.location.prompt_files) > 1 and groups:  # a release's shards: merged by prompt_id
            groups, pair_ids = _merged(groups, pair_ids)
        return cls([_coded(t) for t in groups], pair_ids, pairs, interned)

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> Prompt: ...

    @overload
    def __getitem__(self, i: slice) -> list[Prompt]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                return [self[j] for j in range(start, stop, step)]
            return [p for _, part in self._parts(start, stop) for p in self._records(part)]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        cached = self._decoded
        if cached is None or not cached[0] <= i < cached[1]:
            g = int(self._group_of(i))
            a, b = self._span(g)
            self._decoded = cached = (a, b, self._records((g, a, b)))
        return cached[2][i - cached[0]]

    def __iter__(self) -> Iterator[Prompt]:
        for _, part in self._parts(0, len(self)):
            yield from self._records(part)

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same records in the same order (a list of ``Prompt``, another view)."""
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def take(self, positions: Iterable[int]) -> SelectedPrompts:
        """A view of the rows at ``positions`` of this one, in ascending order (an index per row, no copy)."""
        import numpy as np

        picked = np.fromiter(positions, dtype=np.int64)
        if len(picked) > 1 and not (np.diff(picked) > 0).all():
            raise ValueError("SelectedPrompts.take: positions must ascend")
        return SelectedPrompts.__new__(SelectedPrompts)._view(self, self._rows[picked])

    def fields(self, *names: str) -> Iterator[tuple]:
        """Each row's values of ``names`` (fields of ``Prompt``), as the record would hold them (tuples for
        lists, one string object per distinct value of a short column), a row group at a time."""
        shared: dict = {}
        wanted = [n for n in names if n not in CANDIDATE_COLUMNS]
        for (g, a, b) in (part for _, part in self._parts(0, len(self))):
            table = self._slice(g, a, b, wanted) if wanted else None
            columns = []
            for name in names:
                if name in CANDIDATE_COLUMNS:
                    k = CANDIDATE_COLUMNS.index(name)
                    columns.append([self._pairs[j][k] for j in self._ids(g, a, b).to_pylist()])
                    continue
                values = table.column(name).to_pylist()
                if name in TUPLE_FIELDS:
                    values = [shared.setdefault(t, t) for t in (tuple(v) if v else () for v in values)]
                elif name in SHARED_FIELDS:
                    values = [shared.setdefault(v, v) for v in values]
                columns.append(values)
            yield from zip(*columns, strict=True)

    # ---- internals ----------------------------------------------------------------------------------------

    def _view(self, base: SelectedPrompts, rows) -> SelectedPrompts:
        self._groups, self._pair_ids, self._pairs, self._interned = (base._groups, base._pair_ids, base._pairs,
                                                                     base._interned)
        self._pair_lists = base._pair_lists
        self._starts, self._rows, self._decoded = base._starts, rows, None
        return self

    def _group_of(self, i: int) -> int:
        import numpy as np

        return int(np.searchsorted(self._starts, self._rows[i], side="right")) - 1

    def _span(self, g: int) -> tuple[int, int]:
        """The view's positions [a, b) whose rows lie in group ``g``."""
        import numpy as np

        a, b = np.searchsorted(self._rows, self._starts[g:g + 2])
        return int(a), int(b)

    def _parts(self, start: int, stop: int) -> Iterator[tuple[int, tuple[int, int, int]]]:
        """(group, (group, a, b)) for the view's positions [start, stop), a group's run at a time."""
        i = start
        while i < stop:
            g = self._group_of(i)
            b = min(self._span(g)[1], stop)
            yield g, (g, i, b)
            i = b

    def _local(self, g: int, a: int, b: int):
        import pyarrow as pa

        return pa.array(self._rows[a:b] - self._starts[g])

    def _slice(self, g: int, a: int, b: int, names: Sequence[str]):
        table = self._groups[g].select(list(names))
        return table if b - a == table.num_rows else table.take(self._local(g, a, b))

    def _records(self, part: tuple[int, int, int]) -> list[Prompt]:
        """The records of the view's positions [a, b) in group g: its rows with their candidate lists, decoded
        as the benchmark decodes them (``decode_prompts``)."""

        from factatlas import benchmark as B
        from factatlas.tables import PROMPTS_SCHEMA

        g, a, b = part
        missing = [n for n in PROMPTS_SCHEMA.names if n not in CANDIDATE_COLUMNS and n not in self._groups[g].column_names]
        if missing:
            raise ValueError(f"SelectedPrompts: a record needs every field; this selection holds only some "
                             f"(select_prompts(fields=...)), not {', '.join(missing)}")
        table, ids = self._slice(g, a, b, self._groups[g].column_names), self._ids(g, a, b)
        for name, lists in zip(CANDIDATE_COLUMNS, self._pair_lists, strict=True):
            table = table.append_column(name, lists.take(ids))
        return B.decode_prompts(table, self._interned)

    def _ids(self, g: int, a: int, b: int):
        """The candidate pair of each of the view's positions [a, b) in group ``g``."""
        return self._pair_ids[g] if b - a == self._groups[g].num_rows else self._pair_ids[g].take(self._local(g, a, b))


def prompt_fields(prompts: Sequence[Prompt], *names: str) -> Iterator[tuple]:
    """Each prompt's values of ``names``: read from the columns of a ``SelectedPrompts``, no record made."""
    if isinstance(prompts, SelectedPrompts):
        return prompts.fields(*names)
    return (tuple(getattr(p, n) for n in names) for p in prompts)


def take_prompts(prompts: Sequence[Prompt], positions: Sequence[int]) -> Sequence[Prompt]:
    """The prompts at ``positions`` (ascending): a view of a ``SelectedPrompts``, else a list."""
    if isinstance(prompts, SelectedPrompts):
        return prompts.take(positions)
    return [prompts[i] for i in positions]


def _coded(table):
    """A group's columns of few values (``SHARED_FIELDS``) dictionary-encoded: a code a row, each value once."""
    for name in SHARED_FIELDS.intersection(table.column_names):
        table = table.set_column(table.column_names.index(name), name, table.column(name).dictionary_encode())
    return table


def _kept_groups(benchmark: Benchmark, path: Path, keep, columns: list[str] | None = None) -> Iterator:
    """The row groups of one prompts file as Arrow tables (candidate lists dictionary-encoded), only ``keep``'s
    rows; a group with no kept row is skipped. A damaged or foreign file is named (``Benchmark._read``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from factatlas.benchmark import SHARED_LIST_COLUMNS
    from factatlas.tables import PROMPTS_SCHEMA, read_parquet_schema, schema_mismatch, unreadable

    found = benchmark._read(lambda: read_parquet_schema(path), "prompts")
    if not found.equals(PROMPTS_SCHEMA, check_metadata=False):
        raise schema_mismatch(path, PROMPTS_SCHEMA, found)
    try:
        pf = pq.ParquetFile(path, read_dictionary=[f"{c}.list.element" for c in SHARED_LIST_COLUMNS])
        for g in range(pf.num_row_groups):
            if keep is None:
                yield pf.read_row_group(g, columns=columns)
                continue
            keys = pf.read_row_group(g, columns=["prompt_id", "lang"])
            mask = [keep(pid, lang) for pid, lang in zip(keys.column("prompt_id").to_pylist(),
                                                         keys.column("lang").to_pylist(), strict=True)]
            if any(mask):
                yield pf.read_row_group(g, columns=columns).filter(pa.array(mask, pa.bool_()))
    except pa.ArrowException as e:
        raise unreadable(path, e) from None


def _shared_lists(column, interned: dict) -> list[tuple[str, ...]]:
    from factatlas.benchmark import _shared_lists as shared

    return shared(column, interned)


def _merged(groups: list, pair_ids: list, rows: int = 2048) -> tuple[list, list]:
    """Groups of several files (each sorted by prompt_id) as one prompt_id order, cut every ``rows`` rows."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.concat_tables(groups)
    ids = pa.chunked_array(pair_ids)
    order = pc.sort_indices(table.column("prompt_id"))  # stable, as the merge of the sorted files
    table, ids = table.take(order), ids.take(order).combine_chunks()
    return ([table.slice(s, rows) for s in range(0, table.num_rows, rows)],
            [ids.slice(s, rows) for s in range(0, table.num_rows, rows)])
