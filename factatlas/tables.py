"""Explicit Arrow schemas for every table that crosses a stage border, and byte-stable parquet I/O.

Strings are ``pa.string()`` (never ``large_string``), lists are lists of strings: the schema a release
publishes must not change because a dependency changed its defaults.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from factatlas.atomic import atomic_path
from factatlas.errors import FactatlasError
from factatlas.records import (
    CandidateSet,
    Drop,
    Entity,
    Fact,
    Gender,
    Life,
    ObjectRef,
    ProbeResult,
    Prompt,
    Provenance,
)

STR = pa.string()
STR_LIST = pa.list_(pa.string())

FACTS_SCHEMA = pa.schema(
    [
        ("fact_id", STR),
        ("culture", STR),
        ("predicate", STR),
        ("subject_qid", STR),
        ("countries", STR_LIST),
        ("popularity", pa.float64()),
        ("rank", pa.int32()),
        ("object_qids", STR_LIST),
        ("object_provenance", STR_LIST),  # parallel to object_qids: direct|superclass|admin_ancestor
        ("object_via", STR_LIST),  # parallel: the direct object an augmented one came from, "" if direct
        ("article_langs", STR_LIST),  # knowledge locality (records.Fact.article_langs)
        ("home_langs", STR_LIST),
    ]
)

# One row per (entity, language): long format keeps the schema fixed whatever the language list.
# female_label / male_label: Wikidata P2521 / P3321 (gendered forms of an occupation's label), "" if none.
LABELS_SCHEMA = pa.schema([("qid", STR), ("lang", STR), ("label", STR), ("aliases", STR_LIST),
                           ("female_label", STR), ("male_label", STR)])

# life / life_source: records.Life of a person (alive | dead | unknown) and where it came from (P570, P20,
# P569:born-within-<N>y, "" when unknown); templates agree with it. Tables written before these columns
# existed (ENTITIES_SCHEMA_V1) are read with every entity's life unknown.
ENTITIES_SCHEMA = pa.schema(
    [
        ("qid", STR),
        ("gender", STR),
        ("gender_source", STR),
        ("classes", STR_LIST),
        ("sitelinks", pa.int32()),
        ("life", STR),
        ("life_source", STR),
    ]
)
ENTITIES_SCHEMA_V1 = pa.schema([f for f in ENTITIES_SCHEMA if f.name not in ("life", "life_source")])

DROPS_SCHEMA = pa.schema(
    [
        ("item", STR),
        ("step", STR),
        ("reason", STR),
        ("detail", STR),
        ("culture", STR),
        ("predicate", STR),
        ("country", STR),
    ]
)

# Arrow types of record field annotations: a table whose rows are a record's fields derives its schema
# from the record (``schema_of``), so a field added to the record is a column without a second edit.
FIELD_TYPES: Mapping[str, pa.DataType] = {
    "str": STR, "str | None": STR, "int": pa.int32(), "float": pa.float64(), "bool": pa.bool_(),
    "tuple[str, ...]": STR_LIST, "tuple[float, ...]": pa.list_(pa.float64()),
    "tuple[tuple[str, ...], ...]": pa.list_(STR_LIST),
}


def schema_of(record: type) -> pa.Schema:
    """The Arrow schema of a frozen record: one column per field, in field order, typed by ``FIELD_TYPES``."""
    import dataclasses

    columns = []
    for f in dataclasses.fields(record):
        kind = FIELD_TYPES.get(f.type if isinstance(f.type, str) else getattr(f.type, "__name__", ""))
        if kind is None:
            raise TypeError(f"{record.__name__}.{f.name}: no Arrow type for annotation {f.type!r}; add it to "
                            "factatlas.tables.FIELD_TYPES")
        columns.append((f.name, kind))
    return pa.schema(columns)


# The benchmark: one row per (fact, language, template), the fields of ``records.Prompt`` (commented
# there). Written by `factatlas build`, read by probe and publish.
PROMPTS_SCHEMA = schema_of(Prompt)

# The candidate pool of each predicate in each language: the label every candidate QID has there.
CANDIDATES_SCHEMA = pa.schema([("predicate", STR), ("lang", STR), ("qid", STR), ("label", STR)])

# Probe output: one row per prompt and model, the fields of ``records.ProbeResult``.
RANKINGS_SCHEMA = schema_of(ProbeResult)

# LLM-as-judge output (factatlas.probe.judge): one row per answered prompt of an open-answer rule.
JUDGEMENTS_SCHEMA = pa.schema(
    [
        ("prompt_id", STR),
        ("lang", STR),
        ("split", STR),
        ("culture", STR),
        ("predicate", STR),
        ("answer", STR),  # the probed model's answer, first line
        ("judge_model", STR),
        ("protocol", STR),  # the fixed judge prompt's version, e.g. factatlas-judge-v1
        ("verdict", pa.bool_()),  # null: the judge's reply did not parse as yes/no
        ("reason", STR),  # "" | unparsable | empty-answer
        ("reply", STR),  # the judge's raw reply
        ("strict", pa.bool_()),
        ("lenient", pa.bool_()),
    ]
)


def write_table(path: str | os.PathLike, rows: Sequence[Mapping[str, Any]], schema: pa.Schema,
                sort_by: Sequence[str] | None = None) -> Path:
    """Write rows atomically as parquet with exactly ``schema``; byte-identical for identical rows."""
    rows = list(rows)
    if sort_by:
        rows.sort(key=lambda r: tuple(r[k] for k in sort_by))
    return write_arrow_table(path, pa.Table.from_pylist(rows, schema=schema) if rows else schema.empty_table())


def write_arrow_table(path: str | os.PathLike, table: pa.Table) -> Path:
    """``table`` written atomically as parquet (one row group below 2^20 rows)."""
    path = Path(path)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=False, store_schema=True)
    return path


class UnreadableTable(FactatlasError):
    """A parquet file exists but cannot be read (truncated, corrupted, not parquet)."""


def unreadable(path: str | os.PathLike, error: Exception) -> UnreadableTable:
    """The clean error for a parquet file Arrow cannot read: the file, the reason, the likely cause, the fix."""
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    return UnreadableTable(f"{path}: not a readable parquet file ({reason}). It was probably cut short (an "
                           "interrupted copy or download, a full disk) or is not parquet at all. Write it "
                           "again with the command that made it (curate, build, probe, import) or copy it "
                           "again from its source.")


def read_parquet(path: str | os.PathLike, columns: Sequence[str] | None = None) -> pa.Table:
    """``pq.read_table`` whose failures on a damaged file name the file and the fix (UnreadableTable)."""
    try:
        return pq.read_table(path, columns=list(columns) if columns is not None else None)
    except pa.ArrowException as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise unreadable(path, e) from None


def read_parquet_schema(path: str | os.PathLike) -> pa.Schema:
    try:
        return pq.read_schema(path)
    except pa.ArrowException as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise unreadable(path, e) from None


class SchemaMismatch(FactatlasError, ValueError):
    """A parquet file reads, but its columns are not the ones its reader expects (another tool's file, an
    older version's, or one edited by hand). A ValueError too, for callers that catch that."""


def schema_mismatch(path: str | os.PathLike, expected: pa.Schema, found: pa.Schema) -> SchemaMismatch:
    """The clean error for a parquet file of the wrong shape: which columns are missing, extra or retyped."""
    have = {f.name: f.type for f in found}
    want = {f.name: f.type for f in expected}
    parts = []
    missing = [n for n in want if n not in have]
    if missing:
        parts.append(f"missing column(s) {', '.join(missing)}")
    extra = [n for n in have if n not in want]
    if extra:
        parts.append(f"unexpected column(s) {', '.join(extra)}")
    retyped = [f"{n} is {have[n]}, expected {want[n]}" for n in want if n in have and have[n] != want[n]]
    parts.extend(retyped)
    if not parts:
        parts.append("columns in another order")
    return SchemaMismatch(f"{path}: not the table factatlas expects here ({'; '.join(parts)}). It was written by "
                          "another tool or version, or edited; write it again with the command that made it "
                          "(curate, build, probe, import) with this version of factatlas.")


def require_schema(path: str | os.PathLike, expected: pa.Schema) -> None:
    """Refuses a parquet file that is unreadable (``UnreadableTable``) or not of ``expected``'s shape
    (``SchemaMismatch``), from its footer alone: before any row is read."""
    found = read_parquet_schema(path)
    if not found.equals(expected, check_metadata=False):
        raise schema_mismatch(path, expected, found)


def read_rows(path: str | os.PathLike, schema: pa.Schema | None = None) -> list[dict[str, Any]]:
    table = read_parquet(path)
    if schema is not None and not table.schema.equals(schema, check_metadata=False):
        raise schema_mismatch(path, schema, table.schema)
    return table.to_pylist()


# ---- records <-> rows -------------------------------------------------------------------------

def fact_to_row(f: Fact) -> dict[str, Any]:
    return {
        "fact_id": f.id,
        "culture": f.culture,
        "predicate": f.predicate,
        "subject_qid": f.subject,
        "countries": list(f.countries),
        "popularity": float(f.popularity),
        "rank": int(f.rank),
        "object_qids": [o.qid for o in f.objects],
        "object_provenance": [str(o.provenance) for o in f.objects],
        "object_via": [o.via or "" for o in f.objects],
        "article_langs": list(f.article_langs),
        "home_langs": list(f.home_langs),
    }


def fact_from_row(r: Mapping[str, Any]) -> Fact:
    objects = tuple(
        ObjectRef(q, Provenance(p), v or None)
        for q, p, v in zip(r["object_qids"], r["object_provenance"], r["object_via"], strict=True)
    )
    return Fact(r["fact_id"], r["predicate"], r["subject_qid"], objects, r["culture"],
                tuple(r["countries"]), float(r["popularity"]), int(r["rank"]), tuple(r.get("article_langs") or ()),
                tuple(r.get("home_langs") or ()))


def write_facts(path: str | os.PathLike, facts: Iterable[Fact]) -> Path:
    return write_table(path, [fact_to_row(f) for f in facts], FACTS_SCHEMA, sort_by=("fact_id",))


def read_facts(path: str | os.PathLike) -> list[Fact]:
    return [fact_from_row(r) for r in read_rows(path, FACTS_SCHEMA)]


FACT_BATCH = 4096  # facts made records at a time by ``FactTable``


class FactTable(Mapping[str, Fact]):
    """facts.parquet as a ``Mapping`` fact_id -> ``Fact`` held as Arrow columns, each record made when read.

    A ``Fact`` with its object references and its tuples of language codes is about 1-2 KB in Python; a row
    here is its Arrow bytes, and reading every fact (``values()``) makes records ``FACT_BATCH`` at a time,
    their short strings shared (a language code is one object, not one per fact). ``[fact_id]`` makes the
    records of that fact's batch and keeps them until a fact of another batch is read: readers that go in
    fact_id order (the analyses' join) make each batch once. Records equal ``read_facts``'s."""

    def __init__(self, path: str | os.PathLike) -> None:
        table = read_parquet(path)
        if not table.schema.equals(FACTS_SCHEMA, check_metadata=False):
            raise schema_mismatch(path, FACTS_SCHEMA, table.schema)
        from factatlas.keyindex import KeyIndex

        self._table = table.combine_chunks()
        # fact id -> row as 16 bytes a fact (a dict of the ids held about 120: 15 MB at 126,336 facts); a file
        # that repeats an id (the invariant rejects it) keeps the dict's answers: the last row, each id once
        ids = self._table.column("fact_id")
        index = KeyIndex(ids)
        self._row: KeyIndex | dict[str, int] = index if not index.has_duplicates() else \
            {fact: i for i, fact in enumerate(ids.to_pylist())}
        self._batch: tuple[int, list[Fact]] = (-1, [])

    def __getitem__(self, fact: str) -> Fact:
        if isinstance(self._row, dict):
            i = self._row[fact]
        else:
            i = self._row.find(fact) if isinstance(fact, str) else -1
            if i < 0:
                raise KeyError(fact)
        start = i - i % FACT_BATCH
        if self._batch[0] != start:
            self._batch = (start, self._records(start, {}))
        return self._batch[1][i - start]

    def __iter__(self) -> Iterator[str]:
        if isinstance(self._row, dict):
            return iter(self._row)
        ids = self._table.column("fact_id")
        return (fact for start in range(0, len(ids), FACT_BATCH) for fact in ids.slice(start, FACT_BATCH).to_pylist())

    def __len__(self) -> int:
        return len(self._row)

    def values(self) -> _FactValues:  # type: ignore[override]
        return _FactValues(self)

    def _records(self, start: int, shared: dict[str, str]) -> list[Fact]:
        rows = self._table.slice(start, FACT_BATCH).to_pylist()
        for r in rows:
            for key in ("countries", "article_langs", "home_langs", "object_provenance"):
                r[key] = [shared.setdefault(v, v) for v in r[key] or ()]
            for key in ("culture", "predicate"):
                r[key] = shared.setdefault(r[key], r[key])
        return [fact_from_row(r) for r in rows]


class _FactValues:
    """Every fact of a ``FactTable`` in its order, made ``FACT_BATCH`` at a time on each iteration."""

    def __init__(self, table: FactTable) -> None:
        self._facts = table

    def __len__(self) -> int:
        return len(self._facts)

    def __iter__(self) -> Iterator[Fact]:
        shared: dict[str, str] = {}
        for start in range(0, len(self._facts), FACT_BATCH):
            yield from self._facts._records(start, shared)


def write_entities(folder: str | os.PathLike, entities: Iterable[Entity]) -> None:
    """Writes ``entities.parquet`` (metadata) and ``labels.parquet`` (labels and aliases, long format)."""
    folder = Path(folder)
    entities = list(entities)
    meta = [
        {"qid": e.qid, "gender": str(e.gender), "gender_source": e.gender_source,
         "classes": list(e.classes), "sitelinks": int(e.sitelinks), "life": str(e.life),
         "life_source": e.life_source}
        for e in entities
    ]
    labels = []
    for e in entities:
        for lang in sorted(set(e.labels) | set(e.aliases) | set(e.female_labels) | set(e.male_labels)):
            labels.append({"qid": e.qid, "lang": lang, "label": e.labels.get(lang, ""),
                           "aliases": list(e.aliases.get(lang, ())),
                           "female_label": e.female_labels.get(lang, ""), "male_label": e.male_labels.get(lang, "")})
    write_table(folder / "entities.parquet", meta, ENTITIES_SCHEMA, sort_by=("qid",))
    write_table(folder / "labels.parquet", labels, LABELS_SCHEMA, sort_by=("qid", "lang"))


def read_entities(folder: str | os.PathLike) -> dict[str, Entity]:
    from factatlas.records import frozen_mapping

    folder = Path(folder)
    labels: dict[str, dict[str, str]] = {}
    aliases: dict[str, dict[str, tuple[str, ...]]] = {}
    female: dict[str, dict[str, str]] = {}
    male: dict[str, dict[str, str]] = {}
    for r in read_rows(folder / "labels.parquet", LABELS_SCHEMA):
        if r["label"]:
            labels.setdefault(r["qid"], {})[r["lang"]] = r["label"]
        if r["aliases"]:
            aliases.setdefault(r["qid"], {})[r["lang"]] = tuple(r["aliases"])
        if r["female_label"]:
            female.setdefault(r["qid"], {})[r["lang"]] = r["female_label"]
        if r["male_label"]:
            male.setdefault(r["qid"], {})[r["lang"]] = r["male_label"]
    out = {}
    for r in read_entity_rows(folder / "entities.parquet"):
        q = r["qid"]
        out[q] = Entity(q, frozen_mapping(labels.get(q)), frozen_mapping(aliases.get(q)), Gender(r["gender"]),
                        r["gender_source"], tuple(r["classes"]), int(r["sitelinks"]),
                        frozen_mapping(female.get(q)), frozen_mapping(male.get(q)),
                        Life(r.get("life") or Life.UNKNOWN), r.get("life_source") or "")
    return out


def read_entity_rows(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The rows of an ``entities.parquet``, in the current schema or in the one before life status
    (``ENTITIES_SCHEMA_V1``: runs and releases written before it stay readable, every life unknown)."""
    table = read_parquet(path)
    if table.schema.equals(ENTITIES_SCHEMA_V1, check_metadata=False):
        return [{**r, "life": str(Life.UNKNOWN), "life_source": ""} for r in table.to_pylist()]
    if not table.schema.equals(ENTITIES_SCHEMA, check_metadata=False):
        raise schema_mismatch(path, ENTITIES_SCHEMA, table.schema)
    return table.to_pylist()


def drop_to_row(d: Drop) -> dict[str, Any]:
    return {"item": d.item, "step": d.step, "reason": d.reason, "detail": d.detail,
            "culture": d.culture, "predicate": d.predicate, "country": d.country}


def write_drops(path: str | os.PathLike, drops: Iterable[Drop]) -> Path:
    return write_table(path, [drop_to_row(d) for d in drops], DROPS_SCHEMA,
                       sort_by=("step", "culture", "predicate", "item", "reason", "detail"))


def read_drops(path: str | os.PathLike) -> list[Drop]:
    return [Drop(**r) for r in read_rows(path, DROPS_SCHEMA)]


def prompt_from_row(r: Mapping[str, Any]) -> Prompt:
    """A PROMPTS_SCHEMA row as a Prompt; tuples in the row (shared candidate lists) are kept, not copied."""
    return Prompt(r["prompt_id"], r["fact_id"], r["lang"], r["template_id"], r["kind"], r["text"],
                  int(r["answer_start"]), r["pair"], r["culture"], r["predicate"], r["split"], r["subject_qid"],
                  r["subject_label"], tuple(r["gold_qids"]), tuple(tuple(f) for f in r["gold_forms"]),
                  tuple(r["candidate_qids"]), tuple(r["candidate_forms"]), r["template_status"],
                  tuple(r.get("article_langs") or ()), tuple(r.get("home_langs") or ()),
                  float(r.get("popularity") or 0.0), int(r.get("popularity_quantile") or 0),
                  int(r["popularity_log10"]) if r.get("popularity_log10") is not None else -1)


def prompt_to_row(p: Prompt) -> dict[str, Any]:
    """A Prompt as a PROMPTS_SCHEMA row: the one place prompt records become rows. Tuples are kept, not
    copied (the writer converts each shared candidate tuple once)."""
    return {name: getattr(p, name) for name in PROMPTS_SCHEMA.names}


def prompt_rows(prompts: Iterable[Prompt]) -> list[dict[str, Any]]:
    return [prompt_to_row(p) for p in prompts]


# RANKINGS_SCHEMA column -> its value in a record: the one row form of a ranking (``probe_result_to_row``, and
# the writer, which makes Arrow arrays of it without a dict per row)
RESULT_VALUES = {"model": lambda r: r.model, "scoring": lambda r: r.scoring, "prompt_id": lambda r: r.prompt_id,
                 "fact_id": lambda r: r.fact_id, "lang": lambda r: r.lang, "template_id": lambda r: r.template_id,
                 "culture": lambda r: r.culture, "predicate": lambda r: r.predicate,
                 "ranked_qids": lambda r: list(r.ranked_qids), "scores": lambda r: [float(s) for s in r.scores],
                 "correct_at_1": lambda r: bool(r.correct_at_1), "prediction": lambda r: r.prediction,
                 "conversation": lambda r: r.conversation}


def probe_result_to_row(r: ProbeResult) -> dict[str, Any]:
    return {name: value(r) for name, value in RESULT_VALUES.items()}


def probe_result_from_row(r: Mapping[str, Any]) -> ProbeResult:
    return ProbeResult(r["model"], r["scoring"], r["prompt_id"], r["fact_id"], r["lang"], r["template_id"],
                       r["culture"], r["predicate"], tuple(r["ranked_qids"]), tuple(r["scores"]),
                       bool(r["correct_at_1"]), r["prediction"] or "", r.get("conversation"))


PROBE_WRITE_BATCH = 4096  # rankings rows made Arrow arrays at a time by ``write_probe_results``
# Rankings rows per parquet row group. A file of at most this many rows is one row group, byte for byte the
# file one ``pq.write_table`` of every row makes; a longer one is written a row group at a time, so the
# writer holds one group's Arrow arrays, not the whole table (a million rows were 700 MB of them).
PROBE_ROW_GROUP = 65536


def write_probe_results(path: str | os.PathLike, results: Iterable[ProbeResult]) -> Path:
    """Rankings sorted by prompt_id, written atomically in row groups of ``PROBE_ROW_GROUP`` rows. The rows
    are read by index (a sequence that makes its records when read, the probe's ``RankedRows``, never has
    them all), ``PROBE_WRITE_BATCH`` at a time, into Arrow arrays, never dicts (a dict row with its Python
    floats is several times the record's Arrow size); one row group's arrays are joined, written and let go
    before the next is made. The order is an int array of row indexes (stable: the records sorted by
    prompt_id)."""
    import numpy as np

    rows = results if isinstance(results, Sequence) else list(results)
    ids = rows.prompt_ids() if hasattr(rows, "prompt_ids") else [r.prompt_id for r in rows]
    order = np.fromiter(sorted(range(len(rows)), key=ids.__getitem__), dtype=np.int64, count=len(rows))
    del ids
    if not len(order):
        return write_arrow_table(path, RANKINGS_SCHEMA.empty_table())
    path = Path(path)
    with atomic_path(path) as tmp:
        # the options of ``write_arrow_table``: a file of one row group has its bytes
        writer = pq.ParquetWriter(tmp, RANKINGS_SCHEMA, compression="zstd", write_statistics=False, store_schema=True)
        try:
            for start in range(0, len(order), PROBE_ROW_GROUP):
                writer.write_table(_results_table(rows, order[start:start + PROBE_ROW_GROUP]))
        finally:
            writer.close()
    return path


def _results_table(rows: Sequence[ProbeResult], indexes: Sequence[int]) -> pa.Table:
    """The rows at ``indexes`` as one RANKINGS_SCHEMA table (one chunk per column): ``PROBE_WRITE_BATCH``
    records made at a time."""
    pieces: dict[str, list[pa.Array]] = {name: [] for name in RANKINGS_SCHEMA.names}
    for start in range(0, len(indexes), PROBE_WRITE_BATCH):
        batch = [rows[int(i)] for i in indexes[start:start + PROBE_WRITE_BATCH]]
        for f in RANKINGS_SCHEMA:
            pieces[f.name].append(pa.array([RESULT_VALUES[f.name](r) for r in batch], type=f.type))
    return pa.table([pa.concat_arrays(pieces.pop(name)) for name in RANKINGS_SCHEMA.names], schema=RANKINGS_SCHEMA)


PROBE_RESULT_BATCH = 4096  # rankings rows made dicts at a time by ``read_probe_results``
SHARED_RESULT_COLUMNS = ("model", "scoring", "lang", "template_id", "culture", "predicate")


def read_probe_results(path: str | os.PathLike) -> list[ProbeResult]:
    """A rankings file as records (``iter_probe_results``: the rows are never all dicts at once)."""
    return list(iter_probe_results(path))


def iter_probe_results(path: str | os.PathLike) -> Iterator[ProbeResult]:
    """A rankings file's records, made ``PROBE_RESULT_BATCH`` rows at a time. Candidate QIDs and the short
    columns share one string object per distinct value: a ranking repeats the prompt's candidates, so a
    million rows of 40 candidates hold each QID once, not 40 million times."""
    require_schema(path, RANKINGS_SCHEMA)
    shared: dict[str, str] = {}
    try:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=PROBE_RESULT_BATCH):
            made = []
            for r in batch.to_pylist():
                r["ranked_qids"] = [shared.setdefault(q, q) for q in r["ranked_qids"]]
                for key in SHARED_RESULT_COLUMNS:
                    r[key] = shared.setdefault(r[key], r[key])
                made.append(probe_result_from_row(r))
            yield from made
    except pa.ArrowException as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise unreadable(path, e) from None


class ProbeResultsFile:
    """A rankings file read as the metrics need it: its prompt ids (one column), then its records streamed a
    batch at a time each time it is iterated (``iter_probe_results``), so a reader need not hold them all."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        require_schema(self.path, RANKINGS_SCHEMA)  # a damaged or foreign file is refused here, before any work

    def __iter__(self) -> Iterator[ProbeResult]:
        return iter_probe_results(self.path)

    def prompt_ids(self) -> set[str]:
        return set(read_parquet(self.path, ["prompt_id"]).column("prompt_id").to_pylist())

    def in_prompt_order(self) -> bool:
        """Whether the prompt ids strictly ascend (as the probe writes them; no id twice), read as one column."""
        import pyarrow.compute as pc

        ids = read_parquet(self.path, ["prompt_id"]).column("prompt_id").combine_chunks()
        return len(ids) < 2 or pc.all(pc.less(ids.slice(0, len(ids) - 1), ids.slice(1))).as_py()

    def languages(self) -> set[str]:
        """The languages of the rows (one column)."""
        import pyarrow.compute as pc

        return set(pc.unique(read_parquet(self.path, ["lang"]).column("lang")).to_pylist())


def candidate_sets_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[CandidateSet]:
    """CANDIDATES_SCHEMA rows -> one CandidateSet per (predicate, lang), in row order."""
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for r in rows:
        grouped.setdefault((r["predicate"], r["lang"]), []).append((r["qid"], r["label"]))
    return [CandidateSet(pred, lang, tuple(q for q, _ in pairs), tuple(lb for _, lb in pairs))
            for (pred, lang), pairs in grouped.items()]


def candidate_set_rows(sets: Iterable[CandidateSet]) -> list[dict[str, Any]]:
    return [{"predicate": c.predicate, "lang": c.lang, "qid": q, "label": lb}
            for c in sets for q, lb in zip(c.qids, c.labels, strict=True)]
