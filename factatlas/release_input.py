"""What a release is rendered from, read one way: ``read_release_input(path)`` opens the benchmark with
``Benchmark.open`` (a run directory or a benchmark directory) and adds what the run around it records
(the curation provenance, the template files, the display labels) into one frozen ``ReleaseInput``.

publish renders releases from it; export and ``validate-benchmark`` read a benchmark or a release
folder with ``Benchmark.open`` itself, so every stage reads a benchmark through the one reader.
The template library is a room: when a curated benchmark holds no copy of its templates, the caller
passes ``library_templates`` (publish passes the installed library's files), the core never reaches it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from factatlas.atomic import read_json
from factatlas.benchmark import Benchmark
from factatlas.errors import ConfigError
from factatlas.http import redact
from factatlas.records import Prompt

# What rendering a release reads; the side tables are read whole, so they must be there.
REQUIRED_FILES = ("benchmark.json", "prompts.parquet", "facts.parquet", "entities.parquet", "labels.parquet")
# Copied into the release verbatim (when present) so a release documents itself and can be diffed.
SIDE_FILES = ("benchmark.json", "facts.parquet", "entities.parquet", "labels.parquet", "candidates.parquet",
              "dropped.parquet", "stats.json")
TEMPLATE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".md")
ALL_CONFIG = "all"  # the release config holding every language (publish.diff.ALL_CONFIG)

# languages -> (file name -> bytes): the template library's files, when the benchmark holds none
LibraryTemplates = Callable[[Sequence[str]], Mapping[str, bytes]]


@dataclass(frozen=True)
class SourceProvenance:
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


class PromptStream:
    """The prompts of a release input, walked a row group at a time each time they are iterated (never held
    whole): ``iter`` gives records in prompt_id order, ``batches(keep)`` one list per row group, ``len`` the
    rows from the files' footers. Built over an open ``Benchmark``, or over records already in memory."""

    def __init__(self, bench: Benchmark | None = None, records: Sequence[Prompt] = ()) -> None:
        self._bench = bench
        self._records = tuple(sorted(records, key=lambda r: r.prompt_id)) if bench is None else ()

    def batches(self, keep: Callable[[str, str], bool] | None = None) -> Iterator[list[Prompt]]:
        if self._bench is not None:
            yield from self._bench.iter_prompts(keep)
            return
        for start in range(0, len(self._records), STREAM_ROWS):
            batch = self._records[start:start + STREAM_ROWS]
            yield list(batch) if keep is None else [p for p in batch if keep(p.prompt_id, p.lang)]

    def __iter__(self) -> Iterator[Prompt]:
        for batch in self.batches():
            yield from batch

    def __len__(self) -> int:
        return self._bench.prompt_count if self._bench is not None else len(self._records)

    def __bool__(self) -> bool:
        return len(self) > 0


STREAM_ROWS = 2048  # records per batch of an in-memory PromptStream (the writer's row group)


@dataclass(frozen=True)
class PromptDigest:
    """What the card and the release's layout need of every prompt, gathered in one streaming pass
    (``digest_prompts``): counts and per-language, per-fact aggregates, never the prompts themselves."""

    n_prompts: int
    kinds: frozenset[str]
    configs: Mapping[str, tuple[str | None, Mapping[str, int]]]  # config -> (language or None, split -> rows)
    pairs: tuple[tuple[str, str], ...]  # (pair, language), sorted
    bad_split: tuple[str, str] | None  # (prompt_id, split) of the first row whose split is not a name
    lang_rows: Mapping[str, int]  # language -> prompts
    lang_facts: Mapping[str, int]  # language -> facts asked in it
    lang_templates: Mapping[str, Mapping[str, str]]  # language -> template_id -> status (the last row's)
    templates: Mapping[tuple[str, str], str]  # (language, template_id) -> status, in order of first use
    example: Prompt | None  # the first English prompt, else the first prompt
    locality: Mapping[str, Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]]  # lang -> fact -> (article, home)
    any_locality: bool
    popularity: Mapping[str, tuple[int, float]]  # fact -> (quantile, popularity) of its last row with a quantile


def digest_prompts(batches: Iterable[Sequence[Prompt]], all_config: str) -> PromptDigest:
    """One pass over the prompts (in prompt_id order) -> the release's ``PromptDigest``."""
    import re

    split_ok = re.compile(r"^\w+$")
    n, kinds, bad_split, example, first = 0, set(), None, None, None
    configs: dict[str, tuple[str | None, dict[str, int]]] = {}
    everything: dict[str, int] = {}
    pairs: set[tuple[str, str]] = set()
    lang_rows: dict[str, int] = {}
    lang_facts: dict[str, set[str]] = {}
    lang_templates: dict[str, dict[str, str]] = {}
    templates: dict[tuple[str, str], str] = {}
    locality: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {}
    any_locality = False
    popularity: dict[str, tuple[int, float]] = {}
    for batch in batches:
        for p in batch:
            n += 1
            first = first or p
            if example is None and p.lang == "en":
                example = p
            kinds.add(p.kind)
            pairs.add((p.pair, p.lang))
            if bad_split is None and not split_ok.match(p.split):
                bad_split = (p.prompt_id, p.split)
            per_split = configs.setdefault(f"{p.pair}.{p.lang}", (p.lang, {}))[1]
            per_split[p.split] = per_split.get(p.split, 0) + 1
            everything[p.split] = everything.get(p.split, 0) + 1
            lang_rows[p.lang] = lang_rows.get(p.lang, 0) + 1
            lang_facts.setdefault(p.lang, set()).add(p.fact_id)
            lang_templates.setdefault(p.lang, {})[p.template_id] = p.template_status
            templates[(p.lang, p.template_id)] = p.template_status
            any_locality = any_locality or bool(p.article_langs)
            locality.setdefault(p.lang, {})[p.fact_id] = (p.article_langs, p.home_langs)
            if p.popularity_quantile:
                popularity[p.fact_id] = (p.popularity_quantile, p.popularity)
    if everything:
        configs = {name: configs[name] for name in sorted(configs)}
        configs[all_config] = (None, everything)
    return PromptDigest(n, frozenset(kinds), configs, tuple(sorted(pairs)), bad_split, lang_rows,
                        {lang: len(f) for lang, f in lang_facts.items()}, lang_templates, templates,
                        example or first, locality, any_locality, popularity)


@dataclass(frozen=True)
class FactDigest:
    """What the card needs of every fact, read from facts.parquet's columns (``read_fact_digest``), never a
    record per fact: the counts per culture and per country, each (culture, predicate)'s gold QIDs fact by
    fact in file order (one shared tuple per distinct gold list), its direct answers, the derived objects."""

    count: int
    per_culture: Mapping[str, int]  # culture -> facts, in order of first appearance
    countries: Mapping[str, Mapping[str, int]]  # culture -> country QID -> facts matched through it
    golds: Mapping[tuple[str, str], tuple[tuple[str, ...], ...]]  # (culture, predicate) -> each fact's objects
    direct: Mapping[tuple[str, str], frozenset[str]]  # (culture, predicate) -> objects stated directly
    derived_objects: int  # gold objects not stated directly (superclasses, containing areas)


FACT_DIGEST_COLUMNS = ("culture", "predicate", "countries", "object_qids", "object_provenance", "object_via")


def read_fact_digest(path: str | Path) -> FactDigest:
    """The ``FactDigest`` of a facts.parquet: its six columns read, then walked 8,192 rows at a time. A fact
    without direct objects counts all of its objects as direct answers (``predicate_stats`` always did)."""
    from collections import Counter

    from factatlas.records import Provenance
    from factatlas.tables import FACTS_SCHEMA, read_parquet, read_parquet_schema, schema_mismatch

    found = read_parquet_schema(path)
    if not found.equals(FACTS_SCHEMA, check_metadata=False):
        raise schema_mismatch(path, FACTS_SCHEMA, found)
    table = read_parquet(path, FACT_DIGEST_COLUMNS)
    per_culture: Counter[str] = Counter()
    countries: dict[str, Counter[str]] = {}
    golds: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    direct: dict[tuple[str, str], set[str]] = {}
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    known = {p.value for p in Provenance}
    derived = 0
    for batch in table.to_batches(max_chunksize=8192):
        for culture, predicate, where, qids, provenances, vias in zip(
                *(batch.column(c).to_pylist() for c in FACT_DIGEST_COLUMNS), strict=True):
            per_culture[culture] += 1
            countries.setdefault(culture, Counter()).update(where or ())
            objects = tuple(qids or ())
            key = (culture, predicate)
            golds.setdefault(key, []).append(shared.setdefault(objects, objects))
            stated = []
            for qid, provenance, _via in zip(objects, provenances or (), vias or (), strict=True):
                if provenance not in known:
                    Provenance(provenance)  # the reader's ValueError, named by Benchmark._read
                if provenance == Provenance.DIRECT:
                    stated.append(qid)
                else:
                    derived += 1
            direct.setdefault(key, set()).update(stated or objects)
    return FactDigest(table.num_rows, per_culture, countries, {k: tuple(v) for k, v in golds.items()},
                      {k: frozenset(v) for k, v in direct.items()}, derived)


def count_entities(bench: Benchmark) -> int:
    """Distinct QIDs of entities.parquet (what ``Benchmark.entities`` would hold), read from its qid column;
    labels.parquet is read as far as its qid column too, so a damaged one is named here as before."""
    import pyarrow.compute as pc

    from factatlas.tables import (
        ENTITIES_SCHEMA,
        ENTITIES_SCHEMA_V1,
        LABELS_SCHEMA,
        read_parquet,
        read_parquet_schema,
        schema_mismatch,
    )

    def read() -> int:
        for name, schemas in (("labels.parquet", (LABELS_SCHEMA,)),
                              ("entities.parquet", (ENTITIES_SCHEMA, ENTITIES_SCHEMA_V1))):
            path = bench.file(name)
            found = read_parquet_schema(path)
            if not any(found.equals(s, check_metadata=False) for s in schemas):
                raise schema_mismatch(path, schemas[0], found)
            qids = read_parquet(path, ["qid"]).column("qid")
        return pc.count_distinct(qids).as_py()

    return bench._read(read, "entities.parquet/labels.parquet")


@dataclass(frozen=True)
class ReleaseInput:
    """A benchmark as a release renders it: its records (from ``Benchmark.open``) and what its run records."""

    meta: Mapping[str, Any]  # benchmark.json
    prompts: PromptStream  # in prompt_id order, read a row group at a time when walked
    facts: FactDigest  # what the card counts of the facts (facts.parquet's columns, no record per fact)
    entity_count: int  # distinct QIDs of entities.parquet
    side_files: Mapping[str, bytes]  # file name -> bytes, copied into the release under benchmark/
    templates: Mapping[str, bytes]  # file name -> bytes, copied into the release under templates/
    templates_origin: str  # "benchmark", "run", "library" or "none"
    provenance: SourceProvenance
    country_labels: Mapping[str, str] = field(default_factory=dict)  # country qid -> label (benchmark.json)
    predicate_labels: Mapping[str, str] = field(default_factory=dict)  # pid -> label (benchmark.json)

    @property
    def languages(self) -> tuple[str, ...]:
        langs = self.meta.get("languages") or sorted(self.digest.lang_rows)
        return tuple(langs)

    @cached_property
    def digest(self) -> PromptDigest:
        """The prompts' counts and aggregates, from one streaming pass (made on first use, then kept)."""
        return digest_prompts(self.prompts.batches(), ALL_CONFIG)


def read_release_input(path: str | Path, library_templates: LibraryTemplates | None = None) -> ReleaseInput:
    """The release input of a run directory or a benchmark directory (``Benchmark.open`` finds it)."""
    bench = Benchmark.open(path, require=REQUIRED_FILES)
    side = {name: (bench.path / name).read_bytes() for name in SIDE_FILES if (bench.path / name).is_file()}
    manifest_path = bench.run / "manifest.json" if bench.run else None
    manifest = (read_json(manifest_path, "run the stage that wrote it again, or remove manifest.json")
                if manifest_path is not None and manifest_path.is_file() else {})
    templates, origin = find_templates(bench.path, bench.run, bench.meta, library_templates)
    return ReleaseInput(
        meta=bench.meta, prompts=PromptStream(bench),
        facts=bench._read(lambda: read_fact_digest(bench.file("facts.parquet")), "facts.parquet"),
        entity_count=count_entities(bench),
        side_files=side, templates=templates, templates_origin=origin,
        provenance=provenance_from(bench.meta, manifest, _query_hashes(bench.run)),
        country_labels=recorded_labels(bench.meta, "country_labels", bench.path),
        predicate_labels=recorded_labels(bench.meta, "predicate_labels", bench.path),
    )


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
                    query_hashes: tuple[str, ...]) -> SourceProvenance:
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
    return SourceProvenance(source_kind=str(source.get("kind", "unknown")), endpoint=redact(str(endpoint)),
                            retrieved=str(retrieved), query_hashes=query_hashes, toolkit_version=str(toolkit),
                            source=source, popularity_source=_popularity_source(curate, source))


def _popularity_source(curate: Mapping[str, Any], source: Mapping[str, Any]) -> str:
    if curate.get("popularity_source"):
        return str(curate["popularity_source"])
    if source.get("kind") == "dlama-v1":
        return "length:dlama-v1 (DLAMA's article size)"
    return "not recorded"


def find_templates(bench: Path, run: Path | None, meta: Mapping[str, Any],
                   library_templates: LibraryTemplates | None = None) -> tuple[dict[str, bytes], str]:
    """The template files the benchmark was rendered with: the benchmark's or run's own copy first; for a
    curated benchmark without one, ``library_templates(languages)`` (origin "library")."""
    for origin, folder in (("benchmark", bench / "templates"), ("run", run / "templates" if run else None)):
        if folder is not None and folder.is_dir():
            files = {p.name: p.read_bytes() for p in sorted(folder.iterdir())
                     if p.is_file() and p.suffix in TEMPLATE_SUFFIXES}
            if files:
                return files, origin
    if (meta.get("source") or {}).get("kind", "curated") != "curated":
        return {}, "none"  # imported benchmarks were not rendered from our library
    files = dict(library_templates(tuple(meta.get("languages") or ()))) if library_templates else {}
    return (files, "library") if files else ({}, "none")


def recorded_labels(meta: Mapping[str, Any], key: str, where: Path) -> dict[str, str]:
    """A label table the build recorded in benchmark.json (``predicate_labels``, ``country_labels``)."""
    if not isinstance(meta.get(key), dict):
        raise ConfigError(f"{where / 'benchmark.json'}: no '{key}'; the benchmark predates display labels in "
                          "benchmark.json, rebuild it with `factatlas build RUN` (or import it again).")
    return dict(meta[key])
