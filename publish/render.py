"""Benchmark -> release: the files of a dataset repository, rendered in memory, purely and deterministically.

```
README.md                                   card: YAML (configs, languages, licence, ...) + body
CITATION.bib                                how to cite this version (and the DLAMA method)
CHANGELOG.md                                diff to the previous version, newest first
manifest.json                               version, provenance, configs, sha256 + size of every file
data/<pair>.<lang>/<split>-0000k-of-0000n.parquet   one config per culture pair x language
data/all/<split>-0000k-of-0000n.parquet             every language
benchmark/  benchmark.json facts.parquet entities.parquet labels.parquet [candidates|dropped].parquet stats.json
templates/  the template files the prompts were rendered with
```
``render_release`` returns path -> bytes; the same source, options and previous release give the same
bytes (no clocks, sorted rows, fixed Arrow schema, canonical JSON).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from factatlas.atomic import dumps_json, write_bytes
from factatlas.errors import ConfigError
from factatlas.memory import give_back
from factatlas.records import PAIR_NAME_RE
from factatlas.release_input import ReleaseInput
from factatlas.rundir import PENDING_ENTRY
from factatlas.tables import PROMPTS_SCHEMA

from .card import (
    DLAMA_BIBTEX,
    ConfigEntry,
    card_body,
    card_yaml,
    citation,
    dataset_title,
    license_for,
    render_card,
)
from .diff import ReleaseDiff, changelog, changelog_section, diff_snapshots, snapshot_from_files
from .versions import Version

REPO_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")
SPLIT_RE = re.compile(r"^\w+$")
SPLIT_ORDER = ("train", "validation", "dev", "test")
RELEASE_FORMAT = 1


@dataclass(frozen=True)
class ReleaseOptions:
    repo: str  # "org/name"
    version: Version
    license: str | None = None  # default: cc0-1.0 for curated benchmarks, "other" for imported ones
    pretty_name: str | None = None
    max_shard_rows: int = 100_000
    target: str = "hub"  # "hub" or "git:PATH_OR_URL": where the card says the release lives


@dataclass(frozen=True)
class Release:
    files: Mapping[str, bytes]  # path in repo -> bytes, sorted by path
    configs: tuple[ConfigEntry, ...]
    default_config: str
    diff: ReleaseDiff | None  # against the previous release, None for a first release

    @property
    def card(self) -> str:
        return self.files["README.md"].decode("utf-8")


def check_repo_id(repo: str) -> str:
    if not REPO_ID_RE.match(repo) or ".." in repo or repo.endswith((".git", ".")):
        raise ConfigError(f"invalid repository id '{repo}': expected 'org/name' (letters, digits, '-', '_', '.')")
    return repo


def parquet_bytes(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> bytes:
    return parquet_table_bytes(pa.Table.from_pylist(list(rows), schema=schema) if rows else schema.empty_table())


def parquet_table_bytes(table: pa.Table) -> bytes:
    """One parquet file (one row group below 2^20 rows) of ``table``."""
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", store_schema=True)
    return sink.getvalue()


def _split_key(split: str) -> tuple[int, str]:
    return (SPLIT_ORDER.index(split) if split in SPLIT_ORDER else len(SPLIT_ORDER), split)


def config_name_problem(name: str) -> str | None:
    """Why ``datasets`` could not load a config of this name (or a folder data/<name>/ would hide it), or None.
    The rule is the pair names' (``factatlas.records.PAIR_NAME_RE``), stricter than datasets' own blacklist."""
    if PAIR_NAME_RE.fullmatch(name) and ".." not in name:
        return None
    return (f"the release config '{name}' cannot be loaded with `datasets.load_dataset` (a config name holds only "
            "letters, digits, '-', '_' and inner '.', at most 64 characters)")


def check_config_names(src: ReleaseInput) -> None:
    """Refuse, before anything is rendered or written, a benchmark whose configs ``load_dataset`` would refuse
    (a benchmark built from a run that recorded its pair as a file path: 'my/pair.yaml.en')."""
    for pair, lang in src.digest.pairs:
        problem = config_name_problem(f"{pair}.{lang}")
        if problem:
            raise ConfigError(f"{problem}: the benchmark's pair is '{pair}'. Rebuild it (`factatlas build RUN "
                              "--langs ...`; a pair given as a file is named by its `name:`) and publish again")


def plan_configs(src: ReleaseInput) -> dict[str, tuple[str | None, dict[str, int]]]:
    """config name -> (language or None for all, split -> rows), per-language configs sorted, then ``all``."""
    check_config_names(src)
    if src.digest.bad_split is not None:
        prompt_id, split = src.digest.bad_split
        raise ConfigError(f"prompt {prompt_id}: split '{split}' is not a valid split name "
                          "(letters, digits, '_'); fix the benchmark's splits and rebuild.")
    return {name: (lang, dict(splits)) for name, (lang, splits) in src.digest.configs.items()}


# Rows per parquet row group in a data shard: a shard (``max_shard_rows``) is written a row group at a time, so
# the renderer holds one row group as Arrow columns, not the shard (about 1.3 KB a row). Readers page by row
# group too (the Hub's dataset viewer, ``datasets`` streaming).
ROW_GROUP_ROWS = 10_000


class _Shards:
    """One split of one config, written shard by shard and each shard row group by row group: rows come in
    prompt_id order as pieces (``prompt_tables.RowsOf``, or Arrow tables where several prompt files are merged)
    and wait as such, a few bytes a row, until a row group's worth has come; then the group's values are read a
    column at a time, made contiguous and written into its shard's compressed bytes. Shards and row groups depend
    on the rows alone (every ``max_rows`` rows a shard, the last one takes the rest; every ``ROW_GROUP_ROWS`` of
    a shard a row group, its last shorter), never on how the benchmark's row groups batched them."""

    def __init__(self, files: dict[str, bytes], config: str, split: str, rows: int, max_rows: int) -> None:
        self.files, self.prefix, self.max_rows = files, f"data/{config}/{split}", max_rows
        self.total = max(1, -(-rows // max_rows))
        self.pending: list[Any] = []  # pieces with num_rows, slice and column (``RowsOf``, pa.Table)
        self.held = 0
        self.paths: list[str] = []
        self.sink: io.BytesIO | None = None
        self.writer: pq.ParquetWriter | None = None
        self.in_shard = 0  # rows written into the open shard

    def add(self, rows: Any) -> None:
        self.pending.append(rows)
        self.held += rows.num_rows
        del rows  # the caller's piece is in pending alone: a piece that is written is let go
        while self.held >= self._next_group():
            self._write_group(self._next_group())

    def _last_shard(self) -> bool:
        return len(self.paths) == self.total - 1

    def _next_group(self) -> int:
        """Rows of the next row group: ``ROW_GROUP_ROWS``, or what the shard has room for (the last has no bound)."""
        return ROW_GROUP_ROWS if self._last_shard() else min(ROW_GROUP_ROWS, self.max_rows - self.in_shard)

    def _write_group(self, rows: int) -> None:
        head, self.pending = _split_pieces(self.pending, rows)
        self.held -= rows
        if self.writer is None:
            self.sink = io.BytesIO()
            self.writer = pq.ParquetWriter(self.sink, PROMPTS_SCHEMA, compression="zstd", store_schema=True)
        self.writer.write_table(_contiguous_group(head), row_group_size=rows)
        del head
        give_back()  # the group's values and the writer's buffers, before the next group's rows are read
        self.in_shard += rows
        if not self._last_shard() and self.in_shard == self.max_rows:
            self._close_shard()

    def _close_shard(self) -> None:
        path = f"{self.prefix}-{len(self.paths):05d}-of-{self.total:05d}.parquet"
        if self.writer is None:  # a split without rows: an empty file of the schema
            self.files[path] = parquet_table_bytes(PROMPTS_SCHEMA.empty_table())
        else:
            self.writer.close()
            self.files[path] = self.sink.getvalue()
        self.paths.append(path)
        self.writer, self.sink, self.in_shard = None, None, 0

    def flush(self) -> None:
        """The rows left, in row groups, and the last shard closed."""
        while self.held:
            self._write_group(min(self.held, ROW_GROUP_ROWS))
        self._close_shard()


def _split_pieces(pieces: list[Any], rows: int) -> tuple[list[Any], list[Any]]:
    """(the first ``rows`` rows of ``pieces``, the rest), a piece cut in two where the boundary falls in it."""
    head, taken = [], 0
    for i, piece in enumerate(pieces):
        if taken + piece.num_rows > rows:
            cut = rows - taken
            return ([*head, piece.slice(0, cut)] if cut else head), [piece.slice(cut), *pieces[i + 1:]]
        head.append(piece)
        taken += piece.num_rows
    return head, []


# Columns made contiguous first: the candidate lists are most of a row group's bytes (a predicate's whole list
# on every row), so while each is made from its pieces little else is held yet.
FIRST_COLUMNS = ("candidate_forms", "candidate_qids")


def _contiguous_group(pieces: list[Any]) -> pa.Table:
    """One row group as a table of contiguous columns, a column at a time (each piece's values of it read,
    joined, the pieces' copies let go and given back before the next column), so the group is held once plus
    one column's pieces. Contiguous: a column whose dictionary overflows is paged by the chunks it is given, so
    the bytes depend on the rows alone, not on the pieces."""
    names = [*FIRST_COLUMNS, *(n for n in PROMPTS_SCHEMA.names if n not in FIRST_COLUMNS)]
    made = {}
    for name in names:
        chunks = [chunk for piece in pieces for chunk in piece.column(name).chunks]
        made[name] = pa.chunked_array(chunks, PROMPTS_SCHEMA.field(name).type).combine_chunks()
        del chunks
        if name in FIRST_COLUMNS:  # the other columns' pieces are a few MB: given back with the group
            give_back()
    return pa.Table.from_arrays([made[n] for n in PROMPTS_SCHEMA.names], schema=PROMPTS_SCHEMA)


def _selector(split: str, lang: str | None, pair: str | None):
    """``keep`` for ``PromptStream.rows``: the rows of this split (of this pair and language when given)."""
    import pyarrow.compute as pc

    def keep(table: pa.Table):
        mask = pc.equal(table.column("split"), split)
        if lang is not None:
            mask = pc.and_(mask, pc.and_(pc.equal(table.column("lang"), lang), pc.equal(table.column("pair"), pair)))
        return mask

    return keep


def render_data(src: ReleaseInput, max_shard_rows: int) -> tuple[dict[str, bytes], tuple[ConfigEntry, ...]]:
    """The data files, config by config and split by split: each walk reads the filter columns of the prompts a
    row group at a time and keeps the rows of one split of one config as row numbers (``PromptStream.rows``);
    a shard's row group is read, a column at a time, only once its rows have all come. So memory follows one
    row group of the release, not the benchmark, nor the rows waiting for it. The bytes are those of writing
    each shard's rows at once."""
    files: dict[str, bytes] = {}
    configs = []
    for name, (lang, counts) in plan_configs(src).items():
        order = sorted(counts, key=_split_key)
        pair = None if lang is None else name[: -len(lang) - 1]  # a config is a pair and a language
        shards = {split: _Shards(files, name, split, counts[split], max_shard_rows) for split in order}
        for split in order:
            for rows in src.prompts.rows(_selector(split, lang, pair)):
                shards[split].add(rows)
            shards[split].flush()
        configs.append(ConfigEntry(name, lang, tuple((split, tuple(shards[split].paths), counts[split])
                                                     for split in order)))
    return files, tuple(configs)


def default_config_of(configs: Sequence[ConfigEntry]) -> str:
    english = [c.name for c in configs if c.lang == "en"]
    per_lang = [c.name for c in configs if c.lang is not None]
    return (english or per_lang or [configs[0].name])[0]


def pretty_name_of(src: ReleaseInput, override: str | None) -> str:
    return override or dataset_title(src)


def render_release(src: ReleaseInput, opts: ReleaseOptions,
                   previous: Mapping[str, bytes] | None = None) -> Release:
    """Render every file of the release. ``previous``: the files of the version this one follows."""
    check_repo_id(opts.repo)
    if not src.digest.n_prompts:
        raise ConfigError("the benchmark has no prompts: nothing to release. Check `factatlas build` output.")
    files, configs = render_data(src, opts.max_shard_rows)
    files.update({f"benchmark/{name}": data for name, data in src.side_files.items()})
    files.update({f"templates/{name}": data for name, data in src.templates.items()})
    default = default_config_of(configs)
    license_id = license_for(src, opts.license)
    pretty = pretty_name_of(src, opts.pretty_name)
    version = str(opts.version)
    yaml_text = card_yaml(src, configs, license_id=license_id, pretty_name=pretty, default_config=default)
    body = card_body(src, configs, repo=opts.repo, version=version, license_id=license_id,
                     pretty_name=pretty, default_config=default, target=opts.target)
    files["README.md"] = render_card(yaml_text, body).encode("utf-8")
    files["CITATION.bib"] = (citation(opts.repo, version, pretty, src.provenance, opts.target) + "\n\n" + DLAMA_BIBTEX
                             + "\n").encode("utf-8")

    diff = None
    if previous is not None:
        diff = diff_snapshots(snapshot_from_files(previous, "the previous release"), snapshot_from_files(files))
        diff = _with_versions(diff, _version_of(previous), version)
    first = (f"{src.facts.count} facts, {src.digest.n_prompts} prompts in {len(src.languages)} language(s) "
             f"({', '.join(src.languages)}); configs: {', '.join(c.name for c in configs)}.")
    previous_log = previous.get("CHANGELOG.md", b"").decode("utf-8") if previous else None
    files["CHANGELOG.md"] = changelog(changelog_section(version, diff, first), previous_log).encode("utf-8")
    files["manifest.json"] = dumps_json(release_manifest(src, opts, configs, default, license_id, diff, files)
                                        ).encode("utf-8")
    return Release(dict(sorted(files.items())), configs, default, diff)


def _version_of(files: Mapping[str, bytes]) -> str | None:
    if "manifest.json" not in files:
        return None
    return json.loads(files["manifest.json"]).get("version")


def _with_versions(d: ReleaseDiff, old: str | None, new: str) -> ReleaseDiff:
    return replace(d, old_version=old, new_version=new)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def release_manifest(src: ReleaseInput, opts: ReleaseOptions, configs: Sequence[ConfigEntry], default: str,
                     license_id: str, diff: ReleaseDiff | None, files: Mapping[str, bytes]) -> dict[str, Any]:
    return {
        "format": RELEASE_FORMAT,
        "repo": opts.repo,
        "version": str(opts.version),
        "tag": opts.version.tag,
        "previous_version": diff.old_version if diff else None,
        "suggested_bump": diff.suggested_bump.value if diff else None,
        "license": license_id,
        "benchmark": {k: src.meta.get(k) for k in ("name", "pair", "cultures", "languages", "candidate_mode", "k",
                                                   "schema_version")},
        "counts": {"facts": src.facts.count, "prompts": src.digest.n_prompts, "entities": src.entity_count},
        "provenance": src.provenance.as_dict(),
        "templates_origin": src.templates_origin,
        "default_config": default,
        "configs": {c.name: {"language": c.lang,
                             "splits": {s: {"rows": n, "files": list(paths)} for s, paths, n in c.splits}}
                    for c in configs},
        "files": {path: {"sha256": sha256(data), "bytes": len(data)} for path, data in sorted(files.items())
                  if path != "manifest.json"},
    }


# ---- files on disk -------------------------------------------------------------------------------

def write_release(release: Release | Mapping[str, bytes], folder: str | Path) -> Path:
    """Write the release into ``folder`` (which must be empty or absent)."""
    files = release.files if isinstance(release, Release) else release
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise ConfigError(f"{folder}: release folder is not empty; remove it or pick another folder")
    for path, data in files.items():
        write_bytes(folder / path, data)
    return folder


def is_release_dir(folder: str | Path) -> bool:
    folder = Path(folder)
    return (folder / "README.md").is_file() and (folder / "data").is_dir() and (folder / "manifest.json").is_file()


def read_release_dir(folder: str | Path) -> dict[str, bytes]:
    """path in repo -> bytes for every file of a rendered release folder (git metadata ignored)."""
    folder = Path(folder)
    if not is_release_dir(folder):
        raise ConfigError(f"{folder}: not a release folder (expected README.md, manifest.json and data/); "
                          "give a release folder, git:PATH@vX.Y.Z, hub:org/name@vX.Y.Z or a run directory")
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(folder).parts
            and ".cache" not in p.relative_to(folder).parts and p.name != PENDING_ENTRY}


def verify_release(files: Mapping[str, bytes]) -> list[str]:
    """Problems found checking every file against manifest.json's hashes (empty = intact)."""
    manifest = json.loads(files["manifest.json"])
    listed = manifest.get("files", {})
    problems = [f"{p}: missing" for p in sorted(listed) if p not in files]
    problems += [f"{p}: not listed in manifest.json" for p in sorted(files) if p != "manifest.json"
                 and p not in listed]
    problems += [f"{p}: sha256 differs from manifest.json" for p in sorted(listed)
                 if p in files and sha256(files[p]) != listed[p]["sha256"]]
    return problems
