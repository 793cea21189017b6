"""The one benchmark reader: ``Benchmark.open(path)`` for a run directory, a benchmark directory or a
release folder. The writer stays with the build stage (``factatlas.builder.benchmark``).

```
<run>/build/                   a run directory: the benchmark is its build/ folder
<dir>/benchmark.json           a benchmark directory (`factatlas build`, `factatlas import`)
<release>/benchmark/benchmark.json + data/all/*.parquet   a release folder (`factatlas publish --out`)
```

Files are read on first use, so a consumer that needs only the prompts never parses the entity tables;
a file that is missing then raises ``BenchmarkError`` naming it.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from factatlas.errors import ConfigError
from factatlas.prompt_tables import (  # noqa: F401  (the constants are the benchmark's too)
    ANSWER_LABEL_COLUMNS,
    DEFAULTS,
    SHARED_LIST_COLUMNS,
    TUPLE_COLUMNS,
    iter_prompt_tables,
    read_answer_labels,
)
from factatlas.records import Drop, Entity, Fact, Prompt

SCHEMA_VERSION = 1
BENCHMARK_FILES = ("prompts.parquet", "facts.parquet", "entities.parquet", "labels.parquet",
                   "candidates.parquet", "dropped.parquet", "stats.json", "benchmark.json")
# What every reader needs; the rest is checked when first read.
CORE_FILES = ("benchmark.json", "prompts.parquet")
RELEASE_PROMPTS = Path("data") / "all"



class BenchmarkError(ConfigError):
    """A benchmark directory is missing, unreadable or violates the multi-parallel invariant."""


# the JSON type of each benchmark.json key that readers use: a value of another type is refused on opening,
# instead of failing deep inside a reader (dict(...) of a string, .get on a list)
META_TYPES: dict[str, type | tuple[type, ...]] = {
    "schema_version": int, "name": str, "pair": str, "cultures": list, "languages": list, "templates": dict,
    "candidate_mode": str, "k": (int, type(None)), "seed": (int, type(None)), "splits": dict, "source": dict,
    "counts": dict, "predicate_labels": dict, "country_labels": dict, "toolkit_version": str,
}


def meta_type_errors(meta: Any) -> list[str]:
    """What is wrong with the shape of a benchmark.json document: not an object, or keys of another type."""
    if not isinstance(meta, dict):
        return [f"expected a JSON object, found {type(meta).__name__}"]
    return [f"'{key}' is {type(meta[key]).__name__}, expected "
            f"{' or '.join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))}"
            for key, kind in META_TYPES.items()
            if key in meta and (not isinstance(meta[key], kind) or isinstance(meta[key], bool) and kind is int)]


@dataclass(frozen=True)
class Location:
    """Where a benchmark's files are: ``benchmark`` holds benchmark.json and the side tables;
    ``prompt_files`` are the prompt tables (one in a benchmark directory, the shards in a release)."""

    benchmark: Path
    prompt_files: tuple[Path, ...]
    run: Path | None  # the run directory around it (holding manifest.json), if any
    release: Path | None = None


def locate(path: str | os.PathLike) -> Location:
    """Find the benchmark in a run directory, a benchmark directory or a release folder."""
    path = Path(path)
    if (path / "build" / "benchmark.json").is_file():
        return Location(path / "build", (path / "build" / "prompts.parquet",), path)
    if (path / "benchmark.json").is_file():
        run = path.parent if (path.parent / "manifest.json").is_file() else None
        return Location(path, (path / "prompts.parquet",), run)
    if (path / "benchmark" / "benchmark.json").is_file() and (path / RELEASE_PROMPTS).is_dir():
        shards = tuple(sorted((path / RELEASE_PROMPTS).glob("*.parquet")))
        if not shards:
            raise BenchmarkError(f"{path / RELEASE_PROMPTS}: a release folder without prompt files; "
                                 "render it again with `factatlas publish`.")
        return Location(path / "benchmark", shards, None, path)
    raise BenchmarkError(f"{path}: not a run directory (no build/benchmark.json), a benchmark directory (no "
                         "benchmark.json) nor a release folder (no benchmark/benchmark.json). Run "
                         "`factatlas build RUN` or `factatlas import ...` first, or point at <run>/build.")


RowFilter = Callable[[str, str], bool]  # (prompt_id, lang) -> keep the row


class FactKey(NamedTuple):
    """What every prompt of a fact repeats: its predicate, culture and gold QIDs (``Benchmark.fact_keys``)."""

    predicate: str
    culture: str
    gold_qids: tuple[str, ...]


@dataclass(frozen=True)
class Benchmark:
    """A benchmark on disk, as probe and publish consume it. Tables load lazily and are cached."""

    location: Location
    meta: dict[str, Any] = field(repr=False)

    @classmethod
    def open(cls, path: str | os.PathLike, require: Sequence[str] = CORE_FILES) -> Benchmark:
        """Locate and open a benchmark; every file of ``require`` must be there (named if not)."""
        loc = locate(path)
        wanted = [name for name in require if not (loc.release and name == "prompts.parquet")]
        missing = [name for name in wanted if not (loc.benchmark / name).is_file()]
        if missing or not all(p.is_file() for p in loc.prompt_files):
            missing += [p.name for p in loc.prompt_files if not p.is_file() and p.name not in missing]
            raise BenchmarkError(f"{loc.benchmark}: the benchmark directory lacks {', '.join(missing)}. "
                                 "Create it with `factatlas build RUN` or `factatlas import ...`.")
        meta_path = loc.benchmark / "benchmark.json"
        try:
            meta = json.loads(meta_path.read_text("utf-8"))
        except json.JSONDecodeError as e:
            raise BenchmarkError(f"{meta_path}:{e.lineno}:{e.colno}: invalid JSON ({e.msg})") from e
        problems = meta_type_errors(meta)
        if problems:
            raise BenchmarkError(f"{meta_path}: {'; '.join(problems)}; rebuild it with `factatlas build RUN` (or "
                                 "import it again)")
        if meta.get("schema_version") != SCHEMA_VERSION:
            raise BenchmarkError(f"{meta_path}: schema_version {meta.get('schema_version')!r} is not "
                                 f"{SCHEMA_VERSION}; rebuild it with this toolkit version.")
        return cls(loc, meta)

    @property
    def path(self) -> Path:
        """The folder holding benchmark.json."""
        return self.location.benchmark

    @property
    def run(self) -> Path | None:
        return self.location.run

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.meta.get("languages", ()))

    @property
    def cultures(self) -> tuple[str, ...]:
        return tuple(self.meta.get("cultures", ()))

    @cached_property
    def answer_labels(self) -> dict[tuple[str, str], str]:
        """(qid, lang) -> the label reports show, for the QIDs a prompt offers or expects (its candidates and
        golds: what a page, a majority baseline or a wrong answer names): labels.parquet where the benchmark
        has one (it is optional: labels only decorate), then what the prompts carry (subject label, slot
        fillers), the first row in prompt_id order. Read as columns a row group at a time, each distinct
        candidate list of a group once: the subjects' labels, which grow with the facts, are not kept."""
        stored = self._read(self._stored_labels, "labels.parquet") if (self.path / "labels.parquet").is_file() else None
        return self._read(lambda: read_answer_labels(self.prompt_tables(ANSWER_LABEL_COLUMNS), stored), "prompts")

    def _stored_labels(self) -> Any:
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        # ParquetFile, not read_table: the latter imports pyarrow.dataset (and pandas), a second of CPU
        table = pq.ParquetFile(self.file("labels.parquet")).read(columns=["qid", "lang", "label"], use_threads=False)
        return table.filter(pc.not_equal(pc.fill_null(table.column("label"), ""), ""))

    def label(self, qid: str, langs: Sequence[str] = ()) -> str:
        """A candidate's or gold's display label (``answer_labels``): the first language of ``langs`` (then
        English, then any) that has one; the QID itself when none has."""
        for lang in (*langs, "en", *self.languages):
            if (qid, lang) in self.answer_labels:
                return self.answer_labels[(qid, lang)]
        return qid

    def prompt_tables(self, columns: Sequence[str] | None = None, lang: str | None = None) -> Iterator[Any]:
        """The prompts as Arrow tables in prompt_id order, a row group at a time (``prompt_tables``: the values
        the records hold), only ``columns`` (and prompt_id) when given, only ``lang``'s rows when given: for a
        consumer that counts or copies columns and needs no record. A failure at any row group names the file."""
        yield from self._read_each(lambda: iter_prompt_tables(self.location.prompt_files, lang, columns), "prompts")

    def forget(self, *names: str) -> None:
        """Let go of these cached reads (``fact_keys``, ...): what one step needed of every fact or prompt is
        not held through the next steps; a later use reads it again."""
        for name in names:
            if not isinstance(type(self).__dict__.get(name), cached_property):
                raise AttributeError(f"Benchmark.{name} is not a cached read")
            self.__dict__.pop(name, None)

    def file(self, name: str) -> Path:
        """A side file of the benchmark; BenchmarkError naming it when it is absent."""
        p = self.path / name
        if not p.is_file():
            raise BenchmarkError(f"{p}: missing from the benchmark; rebuild it with `factatlas build RUN` "
                                 "or `factatlas import ...`.")
        return p

    @cached_property
    def prompts(self) -> list[Prompt]:
        """Every prompt as the contract's record (``records.Prompt``), sorted by prompt_id, decoded once and
        cached; candidate lists are tuples shared between rows. A consumer that needs only some rows uses
        ``prompts_where``/``prompts_for`` (filtered while reading) or ``iter_prompts`` (a row group at a time)."""
        rows = self._read(lambda: read_prompts(*self.location.prompt_files), "prompts")
        if len(self.location.prompt_files) > 1:
            rows.sort(key=lambda r: r.prompt_id)
        return rows

    @property
    def prompt_records(self) -> list[Prompt]:
        """Deprecated: ``prompts`` (records since issue 43)."""
        warnings.warn("Benchmark.prompt_records is deprecated: Benchmark.prompts holds the records now",
                      DeprecationWarning, stacklevel=2)
        return self.prompts

    @cached_property
    def prompts_by_id(self) -> dict[str, Prompt]:
        return {p.prompt_id: p for p in self.prompts}

    def prompts_with_ids(self, ids: Collection[str]) -> dict[str, Prompt]:
        """prompt_id -> record for the prompts whose id is in ``ids`` (a run's rankings), filtered while reading:
        joining one language's rankings decodes that language's rows, not the benchmark. Not cached."""
        if "prompts" in self.__dict__:
            by_id = self.prompts_by_id
            return {pid: by_id[pid] for pid in ids if pid in by_id}
        wanted = ids if isinstance(ids, (set, frozenset, dict)) else set(ids)
        return {p.prompt_id: p for p in self.prompts_where(lambda pid, _lang: pid in wanted)}

    @cached_property
    def fact_keys(self) -> dict[str, FactKey]:
        """fact_id -> (predicate, culture, gold QIDs) as its first prompt in prompt_id order carries them, in that
        order: what the dataset profile and the majority baseline need of every fact, read from four columns
        (no prompt is decoded, one row group at a time)."""
        if "prompts" in self.__dict__:
            out: dict[str, FactKey] = {}
            for p in self.prompts:
                if p.fact_id not in out:
                    out[p.fact_id] = FactKey(p.predicate, p.culture, tuple(p.gold_qids))
            return out
        return self._read(lambda: read_fact_keys(self.location.prompt_files), "prompts")

    @cached_property
    def facts(self) -> list[Fact]:
        from factatlas.tables import read_facts

        return self._read(lambda: read_facts(self.file("facts.parquet")), "facts.parquet")

    @cached_property
    def facts_by_id(self) -> dict[str, Fact]:
        return {f.id: f for f in self.facts}

    @cached_property
    def entities(self) -> dict[str, Entity]:
        from factatlas.tables import read_entities

        self.file("entities.parquet")
        self.file("labels.parquet")
        return self._read(lambda: read_entities(self.path), "entities.parquet/labels.parquet")

    @cached_property
    def labels(self) -> dict[tuple[str, str], str]:
        """(qid, lang) -> label from labels.parquet (empty labels left out)."""
        import pyarrow.parquet as pq

        table = self._read(lambda: pq.read_table(self.file("labels.parquet"), columns=["qid", "lang", "label"]),
                           "labels.parquet")
        return {(r["qid"], r["lang"]): r["label"] for r in table.to_pylist() if r["label"]}

    @cached_property
    def candidates(self) -> list[dict[str, Any]]:
        from factatlas.tables import CANDIDATES_SCHEMA, read_rows

        return self._read(lambda: read_rows(self.file("candidates.parquet"), CANDIDATES_SCHEMA),
                          "candidates.parquet")

    @cached_property
    def drops(self) -> list[Drop]:
        from factatlas.tables import read_drops

        return self._read(lambda: read_drops(self.file("dropped.parquet")), "dropped.parquet")

    @cached_property
    def stats(self) -> dict[str, Any]:
        return self._read(lambda: json.loads(self.file("stats.json").read_text("utf-8")), "stats.json")

    def prompts_for(self, lang: str) -> list[Prompt]:
        """The prompts of one language, in prompt_id order (filtered while reading when not read yet)."""
        return self.prompts_where(lambda _pid, row_lang: row_lang == lang)

    def prompts_where(self, keep: RowFilter) -> list[Prompt]:
        """The prompts that ``keep(prompt_id, lang)`` accepts, in prompt_id order, filtered while reading
        (not cached: a probe shard or a ``--langs`` run decodes only its own rows)."""
        if "prompts" in self.__dict__:  # already read whole: filter in memory
            return [p for p in self.prompts if keep(p.prompt_id, p.lang)]
        return [p for batch in self.iter_prompts(keep) for p in batch]

    def prompt_records_where(self, keep: RowFilter) -> list[Prompt]:
        """Deprecated: ``prompts_where`` (records since issue 43)."""
        warnings.warn("Benchmark.prompt_records_where is deprecated: use Benchmark.prompts_where",
                      DeprecationWarning, stacklevel=2)
        return self.prompts_where(keep)

    def iter_prompts(self, keep: RowFilter | None = None) -> Iterator[list[Prompt]]:
        """The prompts (those ``keep`` accepts) in prompt_id order, a row group at a time: memory holds one
        batch, whatever the size of the benchmark (a release's shards are merged by prompt_id as they are
        read). Candidate tuples are shared within a batch."""
        if "prompts" in self.__dict__:
            for start in range(0, len(self.prompts), BATCH_ROWS):
                batch = self.prompts[start:start + BATCH_ROWS]
                yield batch if keep is None else [p for p in batch if keep(p.prompt_id, p.lang)]
            return
        yield from self._read_each(lambda: iter_prompt_batches(self.location.prompt_files, keep), "prompts")

    @cached_property
    def splits(self) -> tuple[str, ...]:
        """The split names the prompts use, sorted, from the split column alone (no prompt is decoded)."""
        if "prompts" in self.__dict__:
            return tuple(sorted({p.split for p in self.prompts}))

        def read() -> set[str]:
            import pyarrow.compute as pc

            names: set[str] = set()
            for path in self.location.prompt_files:
                for column in column_groups(path, "split"):
                    names.update(pc.unique(column).to_pylist())
            return names

        return tuple(sorted(self._read(read, "prompts")))

    @cached_property
    def kind_counts(self) -> dict[str, int]:
        """Prompt kind (cloze, question) -> rows, from the kind column alone (no prompt is decoded)."""
        from collections import Counter

        if "prompts" in self.__dict__:
            return dict(Counter(p.kind for p in self.prompts))

        def read() -> dict[str, int]:
            counts: Counter = Counter()
            for path in self.location.prompt_files:
                for column in column_groups(path, "kind"):
                    counts.update(column.to_pylist())
            return dict(counts)

        return self._read(read, "prompts")

    @cached_property
    def prompt_count(self) -> int:
        """Rows of the prompt files, from their parquet footers (no row is read)."""
        import pyarrow.parquet as pq

        return self._read(lambda: sum(pq.ParquetFile(p).metadata.num_rows for p in self.location.prompt_files),
                          "prompts")

    def _read_each(self, start: Callable[[], Iterator], what: str) -> Iterator:
        """The items of the iterator ``start()`` makes, a failure at any step (opening, or reading one more
        row group) named as ``_read`` names it."""
        items = self._read(start, what)
        while (item := self._read(lambda: next(items, None), what)) is not None:
            yield item

    def _read(self, read, what: str):
        import pyarrow as pa

        from factatlas.tables import UnreadableTable

        try:
            return read()
        except (BenchmarkError, UnreadableTable):  # already name the file and the fix
            raise
        except (ValueError, OSError, KeyError, pa.ArrowException) as e:
            if what == "prompts":  # name the file itself: a release's shards, or the one prompts.parquet
                names = [f.relative_to(self.path).as_posix() if f.is_relative_to(self.path) else str(f)
                         for f in self.location.prompt_files]
                what = names[0] if len(names) == 1 else f"its prompt shards ({', '.join(names)})"
            raise BenchmarkError(f"{self.path}: cannot read {what}: {e}; rebuild it with this version.") from e


BATCH_ROWS = 2048  # records per batch of ``iter_prompts`` (the writer's row group)


def column_groups(path: str | os.PathLike, column: str) -> Iterator[Any]:
    """One column of a prompt file, a row group at a time. A file without the column is a ValueError that names
    it (pyarrow reads an unknown column name as no column at all, and indexing that failed as an IndexError)."""
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    if column not in pf.schema_arrow.names:
        raise ValueError(f"it has no '{column}' column")
    for group in range(pf.num_row_groups):
        yield pf.read_row_group(group, columns=[column]).column(0)


def read_prompts(*paths: str | os.PathLike, keep: RowFilter | None = None) -> list[Prompt]:
    """prompts.parquet files as ``Prompt`` records, file after file. ``candidate_qids`` and
    ``candidate_forms`` are tuples, one shared object per distinct list across all files: predicate-wide sets
    repeat the same thousands of QIDs on every row, so they are read dictionary-encoded and materialised once
    per distinct list (a whole DLAMA pair stays in a few hundred MB).

    ``keep(prompt_id, lang)`` filters while reading: each row group's two key columns are read first and
    only the kept rows of a group are decoded into Python objects (the expensive part); a group with no
    kept row is skipped whole. The records and their order are those of filtering the full read."""
    interned: dict[tuple[str, ...], tuple[str, ...]] = {}
    return [p for path in paths for batch in read_prompt_groups(path, keep, interned) for p in batch]


def read_prompt_groups(path: str | os.PathLike, keep: RowFilter | None = None,
                       interned: dict[tuple[str, ...], tuple[str, ...]] | None = None) -> Iterator[list[Prompt]]:
    """One prompts.parquet file as records, one row group at a time (only ``keep``'s rows decoded). Candidate
    lists are shared through ``interned`` (across the whole read when given, else within each group)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from factatlas.tables import PROMPTS_SCHEMA, require_schema, unreadable

    require_schema(path, PROMPTS_SCHEMA)
    try:
        pf = pq.ParquetFile(path, read_dictionary=[f"{c}.list.element" for c in SHARED_LIST_COLUMNS])
        for g in range(pf.num_row_groups):
            if keep is not None:
                keys = pf.read_row_group(g, columns=["prompt_id", "lang"])
                mask = [keep(pid, lang) for pid, lang in zip(keys.column("prompt_id").to_pylist(),
                                                             keys.column("lang").to_pylist(), strict=True)]
                if not any(mask):
                    continue
                table = pf.read_row_group(g).filter(pa.array(mask, pa.bool_()))
            else:
                table = pf.read_row_group(g)
            yield decode_prompts(table, {} if interned is None else interned)
    except pa.ArrowException as e:
        raise unreadable(path, e) from None


def iter_prompt_batches(paths: Sequence[str | os.PathLike], keep: RowFilter | None = None) -> Iterator[list[Prompt]]:
    """Records of one or more prompt files in prompt_id order, a batch at a time: one file's row groups as
    they are; several files (a release's shards, each sorted) merged by prompt_id, ``BATCH_ROWS`` at a time."""
    if len(paths) == 1:
        yield from read_prompt_groups(paths[0], keep)
        return
    import heapq

    streams = [(p for batch in read_prompt_groups(path, keep) for p in batch) for path in paths]
    batch: list[Prompt] = []
    for p in heapq.merge(*streams, key=lambda r: r.prompt_id):
        batch.append(p)
        if len(batch) == BATCH_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch


FACT_KEY_COLUMNS = ("fact_id", "predicate", "culture", "gold_qids")


def read_fact_keys(paths: Sequence[str | os.PathLike]) -> dict[str, FactKey]:
    """fact_id -> FactKey from the prompt files, the first row of each fact in prompt_id order (files merged by
    prompt_id as ``iter_prompt_batches`` merges them); only the key columns are read, a row group at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from factatlas.tables import PROMPTS_SCHEMA, require_schema, unreadable

    def rows(path):
        require_schema(path, PROMPTS_SCHEMA)
        try:
            pf = pq.ParquetFile(path)
            for g in range(pf.num_row_groups):
                t = pf.read_row_group(g, columns=["prompt_id", *FACT_KEY_COLUMNS])
                yield from zip(*(t.column(c).to_pylist() for c in ("prompt_id", *FACT_KEY_COLUMNS)), strict=True)
        except pa.ArrowException as e:
            raise unreadable(path, e) from None

    if len(paths) == 1:
        stream = rows(paths[0])
    else:
        import heapq

        stream = heapq.merge(*(rows(p) for p in paths), key=lambda r: r[0])
    out: dict[str, FactKey] = {}
    golds: dict[tuple[str, ...], tuple[str, ...]] = {}
    for _pid, fact_id, predicate, culture, gold in stream:
        if fact_id not in out:
            g = tuple(gold) if gold else ()
            out[fact_id] = FactKey(predicate, culture, golds.setdefault(g, g))
    return out


# columns whose values repeat from row to row (a fact's prompts are adjacent in prompt_id order; the rest has a
# handful of values): one string object per distinct value of a batch, not one per row (at 107,520 prompts of
# one language, about 0.5 KB a record; the records are equal either way)
SHARED_STRING_COLUMNS = ("fact_id", "lang", "template_id", "kind", "pair", "culture", "predicate", "split",
                         "subject_qid", "subject_label", "template_status")


def decode_prompts(table, interned: dict[tuple[str, ...], tuple[str, ...]]) -> list[Prompt]:
    """A PROMPTS_SCHEMA table (candidate lists dictionary-encoded or not) as records, column by column."""
    from factatlas.tables import PROMPTS_SCHEMA

    columns = []
    strings: dict[str, str] = {}
    for name in PROMPTS_SCHEMA.names:
        column = table.column(name)
        if name in SHARED_LIST_COLUMNS:
            columns.append(_shared_lists(column, interned))
        elif name in TUPLE_COLUMNS:
            seen: dict[tuple[str, ...], tuple[str, ...]] = {}
            columns.append([seen.setdefault(t, t) for t in (tuple(v) if v else () for v in column.to_pylist())])
        elif name == "gold_forms":
            forms: dict[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]] = {}
            columns.append([forms.setdefault(t, t) for t in
                            (tuple(tuple(f) for f in v) if v else () for v in column.to_pylist())])
        elif name in SHARED_STRING_COLUMNS:
            columns.append([strings.setdefault(v, v) for v in column.to_pylist()])
        elif name in DEFAULTS:
            default = DEFAULTS[name]
            columns.append([default if v is None else v for v in column.to_pylist()])
        else:
            columns.append(column.to_pylist())
    return [Prompt(*values) for values in zip(*columns, strict=True)]


def _shared_lists(column, interned: dict[tuple[str, ...], tuple[str, ...]]) -> list[tuple[str, ...]]:
    """A list<dictionary<string>> column as tuples; each distinct list is built (and hashed) once.

    Rows are keyed on the raw bytes of their dictionary codes, so a row whose list was seen before costs
    one bytes slice and one dict lookup, not thousands of string objects."""
    from array import array

    import pyarrow as pa

    out: list[tuple[str, ...]] = []
    for arr in column.chunks:
        if arr.null_count:
            raise ValueError("a candidate list column holds nulls")
        offsets = arr.offsets.to_pylist()
        base = offsets[0]
        flat = arr.flatten()
        if not pa.types.is_dictionary(flat.type):
            flat = flat.dictionary_encode()
        codes = flat.indices.cast(pa.int32())
        width = 4
        raw = memoryview(codes.buffers()[1])[codes.offset * width:(codes.offset + len(codes)) * width]
        words = flat.dictionary.to_pylist()
        cache: dict[bytes, tuple[str, ...]] = {}
        for i in range(len(arr)):
            key = bytes(raw[(offsets[i] - base) * width:(offsets[i + 1] - base) * width])
            t = cache.get(key)
            if t is None:
                t = tuple(words[j] for j in array("i", key))
                t = cache[key] = interned.setdefault(t, t)
            out.append(t)
    return out
