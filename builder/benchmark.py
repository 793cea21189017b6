"""The benchmark directory: one writer (used by `factatlas build` and every importer) and one loader.

```
<dir>/prompts.parquet     PROMPTS_SCHEMA, one row per (fact, lang, template), sorted by prompt_id
<dir>/facts.parquet       FACTS_SCHEMA, only the facts in the benchmark
<dir>/entities.parquet    ENTITIES_SCHEMA  } only entities the prompts reference
<dir>/labels.parquet      LABELS_SCHEMA    }
<dir>/candidates.parquet  CANDIDATES_SCHEMA: the candidate pool per (predicate, lang)
<dir>/dropped.parquet     DROPS_SCHEMA: every removal, with its reason
<dir>/stats.json          statistics (factatlas.builder.stats)
<dir>/benchmark.json      metadata (schema_version 1)
```
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from factatlas.atomic import write_json
from factatlas.errors import FactatlasError
from factatlas.records import ANSWER_MARKER, Drop, Entity, Fact
from factatlas.tables import (
    DROPS_SCHEMA,
    FACTS_SCHEMA,
    PROMPTS_SCHEMA,
    read_drops,
    read_entities,
    read_facts,
    read_rows,
    write_drops,
    write_entities,
    write_facts,
    write_table,
)

SCHEMA_VERSION = 1
BENCHMARK_FILES = ("prompts.parquet", "facts.parquet", "entities.parquet", "labels.parquet",
                   "candidates.parquet", "dropped.parquet", "stats.json", "benchmark.json")

# The candidate pool of each predicate in each language: the label every candidate QID has there.
CANDIDATES_SCHEMA = pa.schema([("predicate", pa.string()), ("lang", pa.string()), ("qid", pa.string()),
                               ("label", pa.string())])


class BenchmarkError(FactatlasError):
    """A benchmark directory is missing, unreadable or violates the multi-parallel invariant."""


def prompt_id(fact_id: str, lang: str, template_id: str) -> str:
    return f"{fact_id}|{lang}|{template_id}"


def answer_start(text: str, kind: str) -> int:
    return text.find(ANSWER_MARKER) if kind == "cloze" else -1


@dataclass(frozen=True)
class Benchmark:
    """A loaded benchmark directory (what probe and publish consume)."""

    path: Path
    meta: dict[str, Any]
    prompts: list[dict[str, Any]]
    facts: list[Fact]
    entities: dict[str, Entity]
    candidates: list[dict[str, Any]] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self.meta.get("languages", ()))

    def prompts_for(self, lang: str) -> list[dict[str, Any]]:
        return [p for p in self.prompts if p["lang"] == lang]


@dataclass(frozen=True)
class BenchmarkContent:
    """Everything a benchmark directory holds, in memory, before it is written."""

    meta: dict[str, Any]
    prompts: list[dict[str, Any]]
    facts: list[Fact]
    entities: list[Entity]
    candidates: list[dict[str, Any]]
    drops: list[Drop]
    stats: dict[str, Any]


def load_benchmark(path: str | os.PathLike) -> Benchmark:
    """Read a benchmark directory written by `factatlas build` or `factatlas import`.

    ``path`` is the benchmark directory itself or a run directory holding ``build/``.
    """
    import json

    path = Path(path)
    if not (path / "benchmark.json").exists() and (path / "build" / "benchmark.json").exists():
        path = path / "build"
    missing = [name for name in BENCHMARK_FILES if not (path / name).exists()]
    if missing:
        raise BenchmarkError(f"{path}: not a benchmark directory; missing {', '.join(missing)}. "
                             "Create one with `factatlas build RUN` or `factatlas import ...`.")
    try:
        meta = json.loads((path / "benchmark.json").read_text("utf-8"))
        stats = json.loads((path / "stats.json").read_text("utf-8"))
        prompts = read_prompts(path / "prompts.parquet")
        facts = read_facts(path / "facts.parquet")
        entities = read_entities(path)
        candidates = read_rows(path / "candidates.parquet", CANDIDATES_SCHEMA)
        drops = read_drops(path / "dropped.parquet")
    except (ValueError, OSError, KeyError) as e:
        raise BenchmarkError(f"{path}: cannot read the benchmark: {e}") from e
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise BenchmarkError(f"{path}/benchmark.json: schema_version {meta.get('schema_version')!r} is not "
                             f"{SCHEMA_VERSION}; rebuild it with this toolkit version.")
    return Benchmark(path, meta, prompts, facts, entities, candidates, drops, stats)


SHARED_LIST_COLUMNS = ("candidate_qids", "candidate_forms")


def read_prompts(path: str | os.PathLike) -> list[dict[str, Any]]:
    """prompts.parquet as row dicts. ``candidate_qids`` and ``candidate_forms`` come back as tuples, one
    shared object per distinct list: predicate-wide sets repeat the same thousands of QIDs on every row,
    so they are read dictionary-encoded and materialised once per distinct list (a whole DLAMA pair stays
    in a few hundred MB)."""
    import pyarrow.parquet as pq

    from factatlas.tables import read_parquet_schema, unreadable

    shared_paths = [f"{c}.list.element" for c in SHARED_LIST_COLUMNS]
    found = read_parquet_schema(path)
    if not found.equals(PROMPTS_SCHEMA, check_metadata=False):
        raise ValueError(f"{path}: schema differs from PROMPTS_SCHEMA; rebuild it with this version.\n"
                         f"found: {found}")
    names = PROMPTS_SCHEMA.names
    interned: dict[tuple[str, ...], tuple[str, ...]] = {}
    rows: list[dict[str, Any]] = []
    try:
        pf = pq.ParquetFile(path, read_dictionary=shared_paths)
        for g in range(pf.num_row_groups):
            table = pf.read_row_group(g)
            columns = [_shared_lists(table.column(n), interned) if n in SHARED_LIST_COLUMNS
                       else table.column(n).to_pylist() for n in names]
            rows += [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]
    except pa.ArrowException as e:
        raise unreadable(path, e) from None
    return rows


def _shared_lists(column: pa.ChunkedArray, interned: dict[tuple[str, ...], tuple[str, ...]]
                  ) -> list[tuple[str, ...]]:
    """A list<dictionary<string>> column as tuples; each distinct list is built (and hashed) once.

    Rows are keyed on the raw bytes of their dictionary codes, so a row whose list was seen before costs
    one bytes slice and one dict lookup, not thousands of string objects."""
    from array import array

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


def prompts_table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Rows -> PROMPTS_SCHEMA table, column by column; shared candidate lists are converted once."""
    arrays = []
    for f in PROMPTS_SCHEMA:
        if f.name in SHARED_LIST_COLUMNS:
            arrays.append(_list_column([r[f.name] for r in rows]))
        else:
            arrays.append(pa.array([r[f.name] for r in rows], type=f.type))
    return pa.Table.from_arrays(arrays, schema=PROMPTS_SCHEMA)


def _list_column(values: Sequence[Sequence[str]]) -> pa.Array:
    """A list<string> column from per-row sequences; rows sharing one sequence object (predicate-wide
    candidates) are converted once and gathered by a C++ ``take``."""
    index: dict[int, int] = {}
    uniques: list[Sequence[str]] = []
    which: list[int] = []
    for v in values:
        j = index.get(id(v))
        if j is None:
            j = index[id(v)] = len(uniques)
            uniques.append(v)
        which.append(j)
    distinct = pa.array([list(u) for u in uniques], type=pa.list_(pa.string()))
    return distinct.take(pa.array(which, type=pa.int64()))


def sorted_prompts(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(rows, key=lambda r: r["prompt_id"])


def write_benchmark(out_dir: str | os.PathLike, content: BenchmarkContent, *, check: bool = True) -> list[Path]:
    """Check the multi-parallel invariant, then write every file of the benchmark directory atomically.

    Raises BenchmarkError listing every violation (nothing is written then). Identical content gives
    byte-identical files.
    """
    from dataclasses import replace

    from factatlas.builder.invariants import check_content, format_violations

    content = replace(content, prompts=sorted_prompts(content.prompts))
    if check:
        violations = check_content(content)
        if violations:
            raise BenchmarkError(f"{out_dir}: the benchmark violates the multi-parallel invariant "
                                 f"({len(violations)} violations); nothing written:\n"
                                 + format_violations(violations))
    from factatlas.rundir import crash_point

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _write_prompts(out / "prompts.parquet", content.prompts)
    crash_point("benchmark:prompts-written")
    write_facts(out / "facts.parquet", content.facts)
    write_entities(out, sorted(content.entities, key=lambda e: e.qid))
    write_table(out / "candidates.parquet", content.candidates, CANDIDATES_SCHEMA,
                sort_by=("predicate", "lang", "qid"))
    write_drops(out / "dropped.parquet", content.drops)
    write_json(out / "stats.json", content.stats)
    write_json(out / "benchmark.json", content.meta)
    return [out / name for name in BENCHMARK_FILES]


PROMPT_ROWS_PER_GROUP = 2048  # bounds memory: predicate-wide rows carry thousands of candidates each


def _write_prompts(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    import pyarrow.parquet as pq

    from factatlas.atomic import atomic_path

    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, PROMPTS_SCHEMA, compression="zstd",
                                                     write_statistics=False, store_schema=True) as writer:
        for start in range(0, max(len(rows), 1), PROMPT_ROWS_PER_GROUP):
            writer.write_table(prompts_table(rows[start:start + PROMPT_ROWS_PER_GROUP]))


def referenced_qids(prompts: Sequence[Mapping[str, Any]], facts: Sequence[Fact]) -> set[str]:
    """Subjects, golds, candidates and every valid object: the entities a benchmark must carry."""
    out: set[str] = set()
    for p in prompts:
        out.add(p["subject_qid"])
        out.update(p["gold_qids"])
        out.update(p["candidate_qids"])
    for f in facts:
        out.add(f.subject)
        out.update(f.object_qids)
    return out


__all__ = [
    "BENCHMARK_FILES", "CANDIDATES_SCHEMA", "DROPS_SCHEMA", "FACTS_SCHEMA", "PROMPTS_SCHEMA", "SCHEMA_VERSION",
    "Benchmark", "BenchmarkContent", "BenchmarkError", "answer_start", "load_benchmark", "prompt_id",
    "referenced_qids", "sorted_prompts", "write_benchmark",
]
