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
from factatlas.prompt_tables import column_codes
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
    """The prompts of a release input, read a row group at a time each time they are walked (never held
    whole, never as records): ``tables(lang)`` gives Arrow tables in prompt_id order with the values the
    records would write (``factatlas.prompt_tables``), ``len`` the rows from the files' footers."""

    def __init__(self, bench: Benchmark) -> None:
        self._bench = bench

    def tables(self, lang: str | None = None, columns: Sequence[str] | None = None) -> Iterator[Any]:
        """Arrow tables (``factatlas.prompt_tables``) of the rows of ``lang`` (all when None), only ``columns``
        (and prompt_id) when given; a failure names the file, as the benchmark's own readers do."""
        yield from self._bench.prompt_tables(columns=columns, lang=lang)

    def rows(self, keep: Callable[[Any], Any]) -> Iterator[Any]:
        """The rows ``keep`` selects (a boolean mask of a table of ``prompt_tables.FILTER_COLUMNS``), in prompt_id
        order, as pieces whose values are read a column at a time when asked (``prompt_tables.RowsOf``); a failure
        at any row group names the file, as the benchmark's own readers do."""
        from factatlas.prompt_tables import iter_prompt_rows

        bench = self._bench
        yield from bench._read_each(lambda: iter_prompt_rows(bench.location.prompt_files, keep), "prompts")

    def first(self, lang: str | None = None) -> Prompt | None:
        """The first prompt (of ``lang`` when given) in prompt_id order as a record, or None: one row group read."""
        from factatlas.benchmark import decode_prompts

        table = next(iter(self.tables(lang)), None)
        return decode_prompts(table.slice(0, 1), {})[0] if table is not None else None

    def __len__(self) -> int:
        return self._bench.prompt_count

    def __bool__(self) -> bool:
        return len(self) > 0


@dataclass(frozen=True)
class PromptDigest:
    """What the card and the release's layout need of every prompt, gathered in one streaming pass
    (``digest_prompts``): counts and per-language aggregates, never the prompts themselves."""

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
    # language -> (facts, facts with an article in its Wikipedia edition, facts local to the culture's editions:
    # no article here, one there, facts without a record), each fact counted by its last row in that language
    locality: Mapping[str, tuple[int, int, int, int]]
    any_locality: bool
    # popularity quantile -> (facts, least, most popularity), each fact by its last row with a quantile
    popularity: Mapping[int, tuple[int, float, float]]


# a fact's knowledge locality in one language, by its last row there (``PromptDigest.locality``)
UNRECORDED, IN_EDITION, LOCAL, ELSEWHERE = 1, 2, 3, 4
DIGEST_COLUMNS = ("prompt_id", "fact_id", "lang", "template_id", "kind", "pair", "split", "template_status",
                  "article_langs", "home_langs", "popularity", "popularity_quantile")


class _LastRows:
    """Per fact, what the digest keeps of its last rows, as Arrow columns (no Python object per fact): each row
    group's run ends (fact, language, locality code) and rated run ends (fact, quantile, popularity), reduced at
    the end to each fact's last row per language and last rated row."""

    def __init__(self) -> None:
        self.placed: list[Any] = []
        self.rated: list[Any] = []

    def place(self, facts: Any, langs: Any, codes: Sequence[int]) -> None:
        import pyarrow as pa

        self.placed.append(pa.table({"fact": facts, "lang": langs, "code": pa.array(codes, pa.int8())}))

    def rate(self, facts: Any, quantiles: Any, popularity: Any) -> None:
        import pyarrow as pa

        self.rated.append(pa.table({"fact": facts, "quantile": quantiles, "popularity": popularity}))

    def tallies(self) -> tuple[dict[str, tuple[int, int, int, int]], dict[int, tuple[int, float, float]]]:
        """``PromptDigest.locality`` (language -> facts with a row there and, by their last row there, facts in
        its edition, local, without a record) and ``PromptDigest.popularity`` (quantile -> facts whose last rated
        row has it, least and most popularity)."""
        import pyarrow as pa

        locality: dict[str, tuple[int, int, int, int]] = {}
        if self.placed:
            placed, self.placed = pa.concat_tables(self.placed), []
            langs = column_codes(placed.column("lang"))[0]
            last = _last_of(column_codes(placed.column("fact"))[0] * (int(langs.max()) + 1) + langs)
            names = placed.column("lang").take(pa.array(last)).to_pylist()
            for lang, code in zip(names, placed.column("code").to_numpy()[last].tolist(), strict=True):
                facts, in_edition, local, unrecorded = locality.get(lang, (0, 0, 0, 0))
                locality[lang] = (facts + 1, in_edition + (code == IN_EDITION), local + (code == LOCAL),
                                  unrecorded + (code == UNRECORDED))
        popularity: dict[int, tuple[int, float, float]] = {}
        if self.rated:
            rated, self.rated = pa.concat_tables(self.rated), []
            last = _last_of(column_codes(rated.column("fact"))[0])
            for quantile, value in zip(rated.column("quantile").to_numpy()[last].tolist(),
                                       rated.column("popularity").to_numpy()[last].tolist(), strict=True):
                facts, least, most = popularity.get(quantile, (0, value, value))
                popularity[quantile] = (facts + 1, min(least, value), max(most, value))
        return locality, popularity


def _last_of(keys: Any) -> Any:
    """The row of each key's last occurrence (numpy int keys), in the order of those rows."""
    import numpy as np

    _, first_from_end = np.unique(keys[::-1], return_index=True)
    return np.sort(len(keys) - 1 - first_from_end)


def _run_ends(*columns: Any) -> Any:
    """Indexes of the last row of each run of equal keys (``columns``, Arrow arrays of one length, joined)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    key = columns[0] if len(columns) == 1 else pc.binary_join_element_wise(*columns, "\x1f")
    changes = pc.indices_nonzero(pc.not_equal(key.slice(0, len(key) - 1), key.slice(1)))
    return pa.concat_arrays([changes, pa.array([len(key) - 1], pa.uint64())])


def digest_prompts(tables: Iterable[Any], all_config: str, example: Prompt | None = None) -> PromptDigest:
    """One pass over the prompts (Arrow tables in prompt_id order, ``DIGEST_COLUMNS`` of them at least) -> the
    release's ``PromptDigest`` (``example``: the first English prompt, else the first; read apart, so the pass
    decodes a few columns, never the candidate lists): the counts from a few string columns, the per-fact
    aggregates from the last row of each run of a fact's rows (in prompt_id order a fact's rows are adjacent, so
    a run's last row is the one a row-by-row pass would keep; a fact that comes back later is overwritten, as a
    row-by-row pass would)."""
    import re
    from collections import Counter

    import pyarrow as pa
    import pyarrow.compute as pc

    from factatlas.records import wikipedia_site

    split_ok = re.compile(r"^\w+$")
    good_splits: dict[str, bool] = {}
    n, kinds, bad_split = 0, set(), None
    counts: Counter[tuple[str, str, str]] = Counter()  # (pair, lang, split) -> rows, in order of first use
    templates: dict[tuple[str, str], str] = {}
    facts = _LastRows()
    kept = pa.system_memory_pool()  # the run ends kept: outside the Arrow pool's pages of the groups read
    sites: dict[str, str] = {}
    any_locality = False
    for table in tables:
        rows = table.num_rows
        if not rows:
            continue
        n += rows
        cols = {c: table.column(c).combine_chunks() for c in DIGEST_COLUMNS}
        pairs, langs, splits = (cols[c].to_pylist() for c in ("pair", "lang", "split"))
        kinds.update(cols["kind"].unique().to_pylist())
        counts.update(zip(pairs, langs, splits, strict=True))
        templates.update(zip(zip(langs, cols["template_id"].to_pylist(), strict=True),
                             cols["template_status"].to_pylist(), strict=True))
        if bad_split is None:
            for split in dict.fromkeys(splits):
                if split not in good_splits:
                    good_splits[split] = bool(split_ok.match(split))
                if not good_splits[split]:
                    at = splits.index(split)
                    if bad_split is None or at < bad_split[0]:
                        bad_split = (at, split)
            if bad_split is not None:
                bad_split = (cols["prompt_id"][bad_split[0]].as_py(), bad_split[1])
        article_counts = pc.list_value_length(cols["article_langs"])
        any_locality = any_locality or pc.max(article_counts).as_py() > 0
        ends = _run_ends(cols["fact_id"], cols["lang"])
        codes = []
        for lang, article, home in zip(*(cols[c].take(ends).to_pylist() for c in ("lang", "article_langs",
                                                                                  "home_langs")), strict=True):
            site = sites.get(lang) or sites.setdefault(lang, wikipedia_site(lang))
            codes.append(UNRECORDED if not article else IN_EDITION if site in article else LOCAL if home
                         else ELSEWHERE)
        facts.place(pc.take(cols["fact_id"], ends, memory_pool=kept), pc.take(cols["lang"], ends, memory_pool=kept),
                    codes)
        rated = pc.not_equal(cols["popularity_quantile"], 0)
        if pc.any(rated).as_py():
            rated_facts = cols["fact_id"].filter(rated)
            ends = _run_ends(rated_facts)
            facts.rate(*(pc.take(c, ends, memory_pool=kept) for c in (
                rated_facts, cols["popularity_quantile"].filter(rated), cols["popularity"].filter(rated))))
    locality, popularity = facts.tallies()
    _give_back_arrow_memory()
    configs, lang_rows = _configs(counts, all_config)
    lang_templates: dict[str, dict[str, str]] = {}
    for (lang, template), status in templates.items():
        lang_templates.setdefault(lang, {})[template] = status
    return PromptDigest(n, frozenset(kinds), configs, tuple(sorted({(p, lg) for p, lg, _ in counts})), bad_split,
                        lang_rows, {lang: entry[0] for lang, entry in locality.items()}, lang_templates, templates,
                        example, locality, any_locality, popularity)


def _configs(counts: Mapping[tuple[str, str, str], int], all_config: str
             ) -> tuple[dict[str, tuple[str | None, dict[str, int]]], dict[str, int]]:
    """(config -> (language, split -> rows), language -> rows) from the rows per (pair, language, split)."""
    configs: dict[str, tuple[str | None, dict[str, int]]] = {}
    everything: dict[str, int] = {}
    lang_rows: dict[str, int] = {}
    for (pair, lang, split), rows in counts.items():
        per_split = configs.setdefault(f"{pair}.{lang}", (lang, {}))[1]
        per_split[split] = per_split.get(split, 0) + rows
        everything[split] = everything.get(split, 0) + rows
        lang_rows[lang] = lang_rows.get(lang, 0) + rows
    if everything:
        configs = {name: configs[name] for name in sorted(configs)}
        configs[all_config] = (None, everything)
    return configs, lang_rows


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
    """The ``FactDigest`` of a facts.parquet: its six columns decoded 8,192 rows at a time and walked. A fact
    without direct objects counts all of its objects as direct answers (``predicate_stats`` always did)."""
    from collections import Counter

    import pyarrow as pa
    import pyarrow.parquet as pq

    from factatlas.records import Provenance
    from factatlas.tables import FACTS_SCHEMA, require_schema, unreadable

    require_schema(path, FACTS_SCHEMA)
    per_culture: Counter[str] = Counter()
    countries: dict[str, Counter[str]] = {}
    golds: dict[tuple[str, str], list[tuple[str, ...]]] = {}
    direct: dict[tuple[str, str], set[str]] = {}
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    known = {p.value for p in Provenance}
    derived = 0
    def batches():  # 8,192 rows decoded at a time (the file is one row group): the columns are never held whole
        try:
            yield from pq.ParquetFile(path).iter_batches(8192, columns=list(FACT_DIGEST_COLUMNS), use_threads=False)
        except pa.ArrowException as e:
            raise unreadable(path, e) from None

    for batch in batches():
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
    return FactDigest(sum(per_culture.values()), per_culture, countries, {k: tuple(v) for k, v in golds.items()},
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
        """The prompts' counts and aggregates, from one streaming pass over ``DIGEST_COLUMNS`` (made on first use,
        then kept); the example row read apart (the first English prompt, else the first)."""
        example = self.prompts.first("en") or self.prompts.first()
        return digest_prompts(self.prompts.tables(columns=DIGEST_COLUMNS), ALL_CONFIG, example)


def read_release_input(path: str | Path, library_templates: LibraryTemplates | None = None) -> ReleaseInput:
    """The release input of a run directory or a benchmark directory (``Benchmark.open`` finds it)."""
    bench = Benchmark.open(path, require=REQUIRED_FILES)
    side = {name: (bench.path / name).read_bytes() for name in SIDE_FILES if (bench.path / name).is_file()}
    manifest_path = bench.run / "manifest.json" if bench.run else None
    manifest = (read_json(manifest_path, "run the stage that wrote it again, or remove manifest.json")
                if manifest_path is not None and manifest_path.is_file() else {})
    templates, origin = find_templates(bench.path, bench.run, bench.meta, library_templates)
    release_input = ReleaseInput(
        meta=bench.meta, prompts=PromptStream(bench),
        facts=bench._read(lambda: read_fact_digest(bench.file("facts.parquet")), "facts.parquet"),
        entity_count=count_entities(bench),
        side_files=side, templates=templates, templates_origin=origin,
        provenance=provenance_from(bench.meta, manifest, _query_hashes(bench.run)),
        country_labels=recorded_labels(bench.meta, "country_labels", bench.path),
        predicate_labels=recorded_labels(bench.meta, "predicate_labels", bench.path),
    )
    _give_back_arrow_memory()
    return release_input


def _give_back_arrow_memory() -> None:
    """Return what the Arrow pool holds unused to the system: its allocator keeps the pages of the columns
    just read (30 MB for the qid columns of 37,712 entities and 75,424 labels), which would otherwise add to
    every later peak."""
    from factatlas.memory import give_back

    give_back()


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
