"""The benchmark directory's one writer (used by `factatlas build` and every importer); the one reader
is ``factatlas.benchmark.Benchmark.open``.

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
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

import pyarrow as pa

from factatlas.atomic import write_json
from factatlas.benchmark import BENCHMARK_FILES, SCHEMA_VERSION, SHARED_LIST_COLUMNS, BenchmarkError
from factatlas.records import ANSWER_MARKER, Drop, Entity, Fact, Prompt
from factatlas.tables import (
    CANDIDATES_SCHEMA,
    DROPS_SCHEMA,
    FACTS_SCHEMA,
    PROMPTS_SCHEMA,
    write_drops,
    write_entities,
    write_facts,
    write_table,
)


def prompt_id(fact_id: str, lang: str, template_id: str) -> str:
    return f"{fact_id}|{lang}|{template_id}"


def answer_start(text: str, kind: str) -> int:
    return text.find(ANSWER_MARKER) if kind == "cloze" else -1


@dataclass(frozen=True)
class BenchmarkContent:
    """Everything a benchmark directory holds, in memory, before it is written."""

    meta: dict[str, Any]
    prompts: list[Prompt]  # written a column at a time from the records (``prompts_table``)
    facts: list[Fact]
    entities: list[Entity]
    candidates: list[dict[str, Any]]
    drops: list[Drop]
    stats: dict[str, Any]


def prompts_table(prompts: Sequence[Prompt]) -> pa.Table:
    """Prompt records -> PROMPTS_SCHEMA table (the schema is derived from ``records.Prompt``: each field under
    its name, as ``tables.prompt_to_row`` writes it), read a column at a time from the records without a row
    dict per prompt; shared candidate lists are converted once."""
    columns = {name: list(map(attrgetter(name), prompts)) for name in PROMPTS_SCHEMA.names}
    arrays = []
    for f in PROMPTS_SCHEMA:
        if f.name in SHARED_LIST_COLUMNS:
            arrays.append(_list_column(columns[f.name]))
        else:
            arrays.append(pa.array(columns[f.name], type=f.type))
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


def sorted_prompts(prompts: Iterable[Prompt]) -> list[Prompt]:
    return sorted(prompts, key=lambda p: p.prompt_id)


def check_rows(content: BenchmarkContent, prompts: Sequence[Mapping[str, Any] | Prompt], *,
               labels: bool = False) -> list:
    """The invariant (``factatlas.invariants``) on ``content`` with ``prompts`` (records, or the rows the
    writer writes); ``labels``: check every subject label against the entities' labels too, as
    ``validate-benchmark`` does."""
    from factatlas.invariants import check_benchmark_rows

    entity_labels = ({(e.qid, lang): label for e in content.entities for lang, label in e.labels.items() if label}
                     if labels else None)
    return check_benchmark_rows(content.meta, prompts, content.facts, {e.qid for e in content.entities},
                                content.candidates, entity_labels)


def write_benchmark(out_dir: str | os.PathLike, content: BenchmarkContent, *, check: bool = True) -> list[Path]:
    """Check the multi-parallel invariant, then write every file of the benchmark directory atomically.

    Raises BenchmarkError listing every violation (nothing is written then). Identical content gives
    byte-identical files.
    """
    from dataclasses import replace

    from factatlas.invariants import format_violations

    content = replace(content, prompts=sorted_prompts(content.prompts))
    violations: list = []
    if check:
        # subject labels are checked as validate-benchmark checks them; a differing one does not stop the
        # write (an import keeps its source's labels), it only keeps the record from being written
        violations = check_rows(content, content.prompts, labels=True)
        blocking = [v for v in violations if v.rule != "subject-label"]
        if blocking:
            raise BenchmarkError(f"{out_dir}: the benchmark violates the multi-parallel invariant "
                                 f"({len(blocking)} violations); nothing written:\n"
                                 + format_violations(blocking))
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
    if check and not violations:  # every rule ran on exactly this content: probe and report trust the hashes
        from factatlas.validation import write_record

        write_record(out)
    return [out / name for name in BENCHMARK_FILES]


PROMPT_ROWS_PER_GROUP = 2048  # bounds memory: predicate-wide rows carry thousands of candidates each


def _write_prompts(path: Path, prompts: Sequence[Prompt]) -> None:
    import pyarrow.parquet as pq

    from factatlas.atomic import atomic_path

    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, PROMPTS_SCHEMA, compression="zstd",
                                                     write_statistics=False, store_schema=True) as writer:
        for start in range(0, max(len(prompts), 1), PROMPT_ROWS_PER_GROUP):
            writer.write_table(prompts_table(prompts[start:start + PROMPT_ROWS_PER_GROUP]))


def referenced_qids(prompts: Sequence[Prompt], facts: Sequence[Fact]) -> set[str]:
    """Subjects, golds, candidates and every valid object: the entities a benchmark must carry."""
    out: set[str] = set()
    for p in prompts:
        out.add(p.subject_qid)
        out.update(p.gold_qids)
        out.update(p.candidate_qids)
    for f in facts:
        out.add(f.subject)
        out.update(f.object_qids)
    return out


__all__ = [
    "BENCHMARK_FILES", "CANDIDATES_SCHEMA", "DROPS_SCHEMA", "FACTS_SCHEMA", "PROMPTS_SCHEMA", "SCHEMA_VERSION",
    "BenchmarkContent", "BenchmarkError", "answer_start", "prompt_id",
    "referenced_qids", "sorted_prompts", "write_benchmark",
]
