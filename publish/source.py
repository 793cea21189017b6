"""Reading what a release is rendered from: a benchmark directory and the run around it (I/O edge).

``factatlas publish RUN`` accepts a run directory (``runs/<name>`` holding ``build/``) or a benchmark
directory itself (``<run>/build`` or what ``factatlas import`` wrote). Everything rendering needs is
loaded here into one frozen ``BenchmarkSource``, so that rendering stays a pure function of it.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from factatlas.benchmark import Benchmark
from factatlas.benchmark import locate as core_locate
from factatlas.errors import ConfigError
from factatlas.http import redact
from factatlas.records import Entity, Fact, Prompt
from factatlas.tables import (
    FACTS_SCHEMA,
    LABELS_SCHEMA,
    fact_from_row,
)

log = logging.getLogger(__name__)

REQUIRED_FILES = ("benchmark.json", "prompts.parquet", "facts.parquet", "entities.parquet", "labels.parquet")
# Copied into the release verbatim (when present) so a release documents itself and can be diffed.
SIDE_FILES = ("benchmark.json", "facts.parquet", "entities.parquet", "labels.parquet", "candidates.parquet",
              "dropped.parquet", "stats.json")


@dataclass(frozen=True)
class Provenance:
    """How the facts were obtained, from the run manifest and the curation query log."""

    source_kind: str  # curated | dlama-v1 | bmlama | mlama | unknown
    endpoint: str  # SPARQL endpoint URL, "embedded sample", or "not recorded"
    retrieved: str  # ISO time of the Wikidata retrieval, or "not recorded"
    query_hashes: tuple[str, ...]  # sorted, unique
    toolkit_version: str
    source: Mapping[str, Any] = field(default_factory=dict)  # benchmark.json "source", verbatim
    popularity_source: str = "not recorded"  # what curation ranked subjects by (manifest: popularity_source)

    def as_dict(self) -> dict[str, Any]:
        return {"source_kind": self.source_kind, "endpoint": self.endpoint, "retrieved": self.retrieved,
                "query_hashes": list(self.query_hashes), "toolkit_version": self.toolkit_version,
                "source": dict(self.source)}


@dataclass(frozen=True)
class BenchmarkSource:
    meta: Mapping[str, Any]  # benchmark.json
    prompts: tuple[Prompt, ...]  # sorted by prompt_id
    facts: tuple[Fact, ...]
    entities: Mapping[str, Entity]
    side_files: Mapping[str, bytes]  # file name -> bytes, copied into the release under benchmark/
    templates: Mapping[str, bytes]  # file name -> bytes, copied into the release under templates/
    templates_origin: str  # "benchmark", "run", "library" or "none"
    provenance: Provenance
    country_labels: Mapping[str, str] = field(default_factory=dict)  # country qid -> label (benchmark.json)
    predicate_labels: Mapping[str, str] = field(default_factory=dict)  # pid -> label (benchmark.json)

    @property
    def languages(self) -> tuple[str, ...]:
        langs = self.meta.get("languages") or sorted({p.lang for p in self.prompts})
        return tuple(langs)


def locate(path: str | Path) -> tuple[Path, Path | None]:
    """(benchmark dir, run dir or None) for a run directory or a benchmark directory."""
    where = core_locate(path)
    return where.benchmark, where.run


def load_source(path: str | Path) -> BenchmarkSource:
    bench = Benchmark.open(path, require=REQUIRED_FILES)
    facts = tuple(bench.facts)
    side = {name: (bench.path / name).read_bytes() for name in SIDE_FILES if (bench.path / name).is_file()}
    manifest = _read_json(bench.run / "manifest.json") if bench.run else {}
    templates, origin = _find_templates(bench.path, bench.run, bench.meta)
    return BenchmarkSource(
        meta=bench.meta, prompts=tuple(bench.prompt_records), facts=facts, entities=bench.entities, side_files=side,
        templates=templates, templates_origin=origin,
        provenance=provenance_from(bench.meta, manifest, _query_hashes(bench.run)),
        country_labels=recorded_labels(bench.meta, "country_labels", bench.path),
        predicate_labels=recorded_labels(bench.meta, "predicate_labels", bench.path),
    )


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text("utf-8"))
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path}:{e.lineno}:{e.colno}: invalid JSON ({e.msg})") from e


def _query_hashes(run: Path | None) -> tuple[str, ...]:
    if run is None or not (run / "curate" / "queries.jsonl").is_file():
        return ()
    hashes = set()
    path = run / "curate" / "queries.jsonl"
    for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}:{n}:{e.colno}: invalid JSON line ({e.msg})") from e
        h = row.get("hash") or row.get("query_hash")
        if h:
            hashes.add(str(h))
    return tuple(sorted(hashes))


def provenance_from(meta: Mapping[str, Any], manifest: Mapping[str, Any],
                    query_hashes: tuple[str, ...]) -> Provenance:
    """Pure: pick the curation facts out of benchmark.json and the run manifest's curate stage."""
    source = dict(meta.get("source") or {})
    curate = (manifest.get("stages") or {}).get("curate") or {}
    config = curate.get("config") or {}
    endpoint: Any = "not recorded"
    for holder in (curate, config, source):
        if "endpoint" in holder:
            endpoint = holder["endpoint"] or "embedded Wikidata sample (bundled with factatlas)"
            break
    retrieved = curate.get("retrieved") or curate.get("retrieval_time") or source.get("retrieved")
    if not retrieved:
        retrieved = (f"{curate['finished']} (end of the curate stage; responses served from its query cache "
                     "may be older)") if curate.get("finished") else "not recorded"
    if not query_hashes:  # no queries.jsonl beside the manifest: the hashes the curate stage recorded
        recorded = curate.get("query_hashes") or (curate.get("queries") or {}).get("hashes") or ()
        query_hashes = tuple(sorted(set(recorded)))
    toolkit = (meta.get("toolkit_version") or ((curate.get("versions") or {}).get("factatlas"))
               or "not recorded")
    return Provenance(source_kind=str(source.get("kind", "unknown")), endpoint=redact(str(endpoint)),
                      retrieved=str(retrieved), query_hashes=query_hashes, toolkit_version=str(toolkit),
                      source=source, popularity_source=_popularity_source(curate, source))


def _popularity_source(curate: Mapping[str, Any], source: Mapping[str, Any]) -> str:
    if curate.get("popularity_source"):
        return str(curate["popularity_source"])
    if source.get("kind") == "dlama-v1":
        return "length:dlama-v1 (DLAMA's article size)"
    return "not recorded"


def _find_templates(bench: Path, run: Path | None, meta: Mapping[str, Any]) -> tuple[dict[str, bytes], str]:
    """The template files the benchmark was rendered with: the benchmark's or run's own copy first."""
    for origin, folder in (("benchmark", bench / "templates"), ("run", run / "templates" if run else None)):
        if folder is not None and folder.is_dir():
            files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())
                     if p.is_file() and p.suffix in (".yaml", ".yml", ".json", ".jsonl", ".md")}
            if files:
                return files, origin
    if (meta.get("source") or {}).get("kind", "curated") != "curated":
        return {}, "none"  # imported benchmarks were not rendered from our library
    files = {}
    lang_dir = resources.files("factatlas.templates") / "lang"
    for lang in meta.get("languages") or ():
        f = lang_dir / f"{lang}.yaml"
        if f.is_file():
            files[f"{lang}.yaml"] = f.read_bytes()
    if files:
        log.warning("templates: the benchmark holds no copy of its templates; releasing the library's "
                    "templates/lang/*.yaml as installed now")
        return files, "library"
    return {}, "none"


def recorded_labels(meta: Mapping[str, Any], key: str, where: Path) -> dict[str, str]:
    """A label table the build recorded in benchmark.json (``predicate_labels``, ``country_labels``)."""
    if not isinstance(meta.get(key), dict):
        raise ConfigError(f"{where / 'benchmark.json'}: no '{key}'; the benchmark predates display labels in "
                          "benchmark.json, rebuild it with `factatlas build RUN` (or import it again).")
    return dict(meta[key])


# ---- reading tables back from bytes (releases hold them as files in a repo) ----------------------

def table_from_bytes(data: bytes) -> pa.Table:
    return pq.read_table(io.BytesIO(data))


def facts_from_bytes(data: bytes) -> list[Fact]:
    t = table_from_bytes(data)
    if not t.schema.equals(FACTS_SCHEMA, check_metadata=False):
        raise ConfigError("facts.parquet: schema differs from factatlas.tables.FACTS_SCHEMA")
    return [fact_from_row(r) for r in t.to_pylist()]


def labels_from_bytes(data: bytes) -> dict[tuple[str, str], str]:
    t = table_from_bytes(data)
    if not t.schema.equals(LABELS_SCHEMA, check_metadata=False):
        raise ConfigError("labels.parquet: schema differs from factatlas.tables.LABELS_SCHEMA")
    qids, langs, labels = (t.column(c).to_pylist() for c in ("qid", "lang", "label"))
    return {(q, lg): lb for q, lg, lb in zip(qids, langs, labels, strict=True) if lb}


