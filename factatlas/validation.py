"""The invariant on disk: ``check_directory`` (what `validate-benchmark` runs), the validation record and
the gate ``require_valid`` that probe and report pass.

``check_directory`` streams: the prompt files are read a row group at a time (a release's shards merged by
prompt_id) and fed to ``factatlas.invariants.InvariantScan``; the side tables are held as Arrow columns with
compact indexes (``KeyIndex``: sorted 64-bit hashes pointing at rows, each match confirmed against the
row's own key), so its memory grows with neither the prompts nor, beyond a few bytes each, the facts.

**The record.** A benchmark directory can hold ``validated.json``: the sha256 and size of every file the
check reads and a hash of the checker's own source, written by the build (its in-memory check ran every
rule) and by a `validate-benchmark` that found nothing. The gate trusts it while every hash still matches:
a content hash already guarantees that the bytes are the ones checked, so re-running a check that needs
every row (the multi-parallel rules) would only repeat the answer. A shard or a language run then pays for
hashing the files (about 0.1 s per 30 MB), not for reading every row; without a matching record the gate
runs the whole streaming check. A record is evidence, not authority: a file changed by hand, a new checker
or a missing record all lead back to the full check, never to acceptance.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from factatlas.benchmark import (
    BENCHMARK_FILES,
    BenchmarkError,
    Location,
    iter_prompt_batches,
    locate,
    meta_type_errors,
)
from factatlas.invariants import FactRef, InvariantScan, Violation, format_violations
from factatlas.keyindex import KeyIndex

log = logging.getLogger(__name__)

RECORD_NAME = "validated.json"
RECORD_FORMAT = 1
CHECKED_FILES = tuple(n for n in BENCHMARK_FILES if n != "stats.json")  # what check_directory reads


# ---- compact side tables ------------------------------------------------------------------------

class DiskSide:
    """facts.parquet, entities.parquet and labels.parquet as the scan looks them up."""

    def __init__(self, folder: Path):
        import pyarrow.compute as pc

        from factatlas.memory import give_back
        from factatlas.tables import read_parquet

        facts = read_parquet(folder / "facts.parquet", ["fact_id", "predicate", "culture", "subject_qid",
                                                        "object_qids"])
        self.fact_ids, self.predicates, self.cultures, self.subjects, self.objects = (
            facts.column(n).combine_chunks() for n in facts.column_names)
        self.fact_index = KeyIndex(self.fact_ids)
        self.fact_count = facts.num_rows
        self.duplicate_fact = self.fact_index.has_duplicates()
        self.entities = KeyIndex(read_parquet(folder / "entities.parquet", ["qid"]).column("qid").combine_chunks())
        labels = read_parquet(folder / "labels.parquet", ["qid", "lang", "label"])
        self.label_index = KeyIndex(pc.binary_join_element_wise(labels.column("qid"), labels.column("lang"),
                                                                "\x1f").combine_chunks())
        self.labels = labels.column("label").combine_chunks()
        del facts, labels
        give_back()  # the decompression buffers of the tables just read, the keys' Python strings

    def fact_row(self, fact_id: str) -> int:
        return self.fact_index.find(fact_id)

    def fact_at(self, row: int) -> FactRef:
        return FactRef(self.predicates[row].as_py(), self.cultures[row].as_py(), self.subjects[row].as_py(),
                       frozenset(self.objects[row].as_py() or ()))

    def facts_in_order(self) -> Iterator[tuple[int, str]]:
        import pyarrow.compute as pc

        order = pc.sort_indices(self.fact_ids).to_pylist() if self.fact_count else []
        for start in range(0, len(order), 65536):
            rows = order[start:start + 65536]
            yield from zip(rows, self.fact_ids.take(rows).to_pylist(), strict=True)

    def has_entity(self, qid: str) -> bool:
        return self.entities.find(qid) >= 0

    def entity_label(self, qid: str, lang: str) -> str | None:
        if not self.has_entity(qid):
            return None
        row = self.label_index.find(f"{qid}\x1f{lang}")
        return (self.labels[row].as_py() or None) if row >= 0 else None


# ---- the check ------------------------------------------------------------------------------------

def check_directory(path: str | os.PathLike) -> list[Violation]:
    """Check a benchmark on disk (a run directory, a benchmark directory or a release folder, found as
    ``Benchmark.open`` finds it) and return all violations (schemas included), streaming the prompts."""
    from factatlas.tables import (
        CANDIDATES_SCHEMA,
        UnreadableTable,
        read_rows,
    )

    where = _where(path)
    problems = _files_and_schemas(where)
    if problems:
        return problems
    folder = where.benchmark
    try:
        meta = json.loads((folder / "benchmark.json").read_text("utf-8"))
    except ValueError as e:
        return [Violation("meta-json", str(folder / "benchmark.json"), f"not valid JSON: {e}")]
    if meta_type_errors(meta):  # the checks below read these keys
        return [Violation("meta-type", str(folder / "benchmark.json"), problem) for problem in meta_type_errors(meta)]
    try:
        scan = InvariantScan(meta, DiskSide(folder), read_rows(folder / "candidates.parquet", CANDIDATES_SCHEMA),
                             check_labels=True, recount=lambda ids: _count_ids(where.prompt_files, ids))
        for batch in iter_prompt_batches(where.prompt_files):
            scan.feed(batch)
        return scan.finish()
    except UnreadableTable as e:  # a damaged row group past a readable footer
        place, _, message = str(e).partition(": ")
        return [Violation("unreadable", place, message)]
    except BenchmarkError as e:
        return [Violation("unreadable", str(folder), str(e))]


def _where(path: str | os.PathLike) -> Location:
    try:  # where Benchmark.open finds it: a run's build/, a benchmark directory, a release's shards
        return locate(path)
    except BenchmarkError:  # not recognisable as a benchmark: list what is missing in the folder itself
        return Location(Path(path), (Path(path) / "prompts.parquet",), None)


def _files_and_schemas(where: Location) -> list[Violation]:
    from factatlas.tables import (
        CANDIDATES_SCHEMA,
        DROPS_SCHEMA,
        ENTITIES_SCHEMA,
        ENTITIES_SCHEMA_V1,
        FACTS_SCHEMA,
        LABELS_SCHEMA,
        PROMPTS_SCHEMA,
        UnreadableTable,
        read_parquet_schema,
    )

    path = where.benchmark
    side_names = [n for n in BENCHMARK_FILES if n != "prompts.parquet"]
    missing = [path / n for n in side_names if not (path / n).exists()]
    missing += [p for p in where.prompt_files if not p.exists()]
    if missing:
        return [Violation("file-missing", str(p), "required file is missing") for p in missing]
    schemas = {**{p: PROMPTS_SCHEMA for p in where.prompt_files}, path / "facts.parquet": FACTS_SCHEMA,
               path / "entities.parquet": ENTITIES_SCHEMA, path / "labels.parquet": LABELS_SCHEMA,
               path / "candidates.parquet": CANDIDATES_SCHEMA, path / "dropped.parquet": DROPS_SCHEMA}
    out = []
    for file, schema in schemas.items():
        try:
            found = read_parquet_schema(file)
        except UnreadableTable as e:
            out.append(Violation("unreadable", str(file), str(e).split(": ", 1)[1]))
            continue
        if not found.equals(schema, check_metadata=False) and not (  # entities without life status: v1
                schema is ENTITIES_SCHEMA and found.equals(ENTITIES_SCHEMA_V1, check_metadata=False)):
            out.append(Violation("schema", str(file), f"schema differs from the contract: {found}"))
    return out


def _count_ids(paths: Sequence[Path], ids: set[str]) -> dict[str, int]:
    """How often each of ``ids`` occurs in the prompt files (the id column only)."""
    import pyarrow.parquet as pq

    counts: dict[str, int] = defaultdict(int)
    for path in paths:
        pf = pq.ParquetFile(path)
        for g in range(pf.num_row_groups):
            for pid in pf.read_row_group(g, columns=["prompt_id"]).column("prompt_id").to_pylist():
                if pid in ids:
                    counts[pid] += 1
    return counts


# ---- the record and the gate -----------------------------------------------------------------------

def checker_hash() -> str:
    """sha256 of the checker's source: a record made by another checker is not trusted."""
    import factatlas.invariants as rules

    digest = hashlib.sha256()
    for module in (rules.__file__, __file__):
        digest.update(Path(module).read_bytes())
    return digest.hexdigest()


def file_digest(path: Path) -> dict[str, Any]:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return {"bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def make_record(folder: Path) -> dict[str, Any]:
    return {"format": RECORD_FORMAT, "checker": checker_hash(),
            "files": {name: file_digest(folder / name) for name in CHECKED_FILES}}


def write_record(folder: str | os.PathLike, checked: Mapping[str, Any] | None = None) -> Path:
    """Record that the benchmark in ``folder`` (a benchmark directory) passed every rule, as it is now.
    ``checked``: the record made before the check ran (``make_record``); it is written only while the files
    are still those, so a writer that replaced them during the check never gets its files recorded as
    checked (a FactatlasError says so)."""
    from factatlas.atomic import write_json
    from factatlas.errors import FactatlasError

    folder = Path(folder)
    record = make_record(folder)
    if checked is not None and record != checked:
        raise FactatlasError(f"{folder}: its files changed while they were checked (another process wrote the "
                             "benchmark); run `factatlas validate-benchmark` again once it has finished")
    write_json(folder / RECORD_NAME, record)
    return folder / RECORD_NAME


def record_holds(folder: Path) -> bool:
    """The folder's record names this checker and every checked file as it is now (sizes first, then hashes)."""
    try:
        record = json.loads((folder / RECORD_NAME).read_text("utf-8"))
        files: Mapping[str, Any] = record["files"]
        if record.get("format") != RECORD_FORMAT or record.get("checker") != checker_hash():
            return False
        if set(files) != set(CHECKED_FILES) or any((folder / n).stat().st_size != files[n]["bytes"] for n in files):
            return False
        return all(file_digest(folder / n)["sha256"] == files[n]["sha256"] for n in CHECKED_FILES)
    except (OSError, ValueError, KeyError, TypeError):
        return False


def require_valid(path: str | os.PathLike) -> Path:
    """The benchmark directory at ``path`` (itself, or ``<run>/build``) if the invariant holds: its record
    matches its files, or the whole streaming check finds nothing; else a BenchmarkError listing the
    violations. ``probe`` and ``report`` call it first, so that numbers are never computed on a benchmark
    that `validate-benchmark` rejects."""
    location = locate(path)
    if location.release is not None:
        return location.benchmark  # a release carries its data in shards; publish checked it when rendering
    folder = location.benchmark
    if record_holds(folder):
        return folder
    log.info("%s: no validation record matches its files; checking every row (`factatlas validate-benchmark "
             "%s` records one)", folder, folder)
    violations = check_directory(folder)
    if violations:
        raise BenchmarkError(f"{folder}: the benchmark violates the multi-parallel invariant ({len(violations)} "
                             f"violations); rebuild it, or run `factatlas validate-benchmark {folder}`:\n"
                             + format_violations(violations))
    return folder
