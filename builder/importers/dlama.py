"""DLAMA-v1 (Keleg & Magdy, Findings of ACL 2023) -> factatlas benchmark.

Layout: ``<root>/<pair>/dlama/<lang>/P<id>_general_<REGION>.jsonl``, one record per subject:
``sub_uri, obj_uri[], sub_label, obj_label[], country[], size, uuid``; the ``uuid`` is shared by the two
language views of a pair, files are sorted by ``size`` (Wikipedia article bytes) descending.

The importer reads both language views, checks they align record by record (uuid, subject, objects),
turns each record into one Fact (all objects direct, popularity = size, rank = position in its file),
builds entities from the labels, and reports what the data itself gets wrong:
- records whose objects give one surface form to distinct QIDs (2,483 over the six language views);
- QIDs labelled differently in different records of one language (the most frequent label is kept).
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factatlas.builder.importers.common import gc_paused, jsonl_records
from factatlas.errors import ConfigError, unknown
from factatlas.records import Drop, Entity, Fact, ObjectRef, fact_id, frozen_mapping

STEP = "import"
# DLAMA region names (file suffixes) -> factatlas culture names (curate/cultures/*.yaml).
REGION_CULTURES = {"ARAB_REGION": "arab", "ASIA": "asia", "SOUTH_AMERICA": "south-america",
                   "WESTERN_COUNTRIES": "west"}
# factatlas pair name -> DLAMA folder name.
PAIRS = {"arab-west": "arab-west", "asia-west": "asia-west", "south-america-west": "south_america-west"}
FILE_RE = re.compile(r"^(P[1-9][0-9]*)_general_([A-Z_]+)\.jsonl$")


@dataclass(frozen=True, slots=True)
class DlamaRecord:
    predicate: str
    region: str
    culture: str
    lang: str
    subject: str
    objects: tuple[str, ...]
    subject_label: str
    object_labels: tuple[str, ...]
    countries: tuple[str, ...]
    size: int
    uuid: str
    line: int  # 1-based line in its file = rank within (culture, predicate)
    path: str

    @property
    def has_duplicate_forms(self) -> bool:
        """Distinct object QIDs share a surface form (label) in this language view."""
        return len(set(self.object_labels)) < len(set(self.objects))


@dataclass(frozen=True)
class DlamaPair:
    name: str  # factatlas pair name: "arab-west"
    folder: Path
    languages: tuple[str, ...]
    cultures: tuple[str, str]
    views: Mapping[str, tuple[DlamaRecord, ...]]  # lang -> records in file order

    def counts(self) -> dict[str, dict[str, int]]:
        """lang -> culture -> records ("triples" in the paper), plus "total"."""
        out = {}
        for lang, recs in self.views.items():
            c = Counter(r.culture for r in recs)
            out[lang] = {**{k: c[k] for k in self.cultures}, "total": len(recs)}
        return out

    def duplicate_form_records(self) -> dict[str, int]:
        return {lang: sum(r.has_duplicate_forms for r in recs) for lang, recs in self.views.items()}


def resolve_pair(pair: str) -> tuple[str, str]:
    """Accept 'arab-west', 'south-america-west' or the DLAMA spelling 'south_america-west'."""
    by_folder = {v: k for k, v in PAIRS.items()}
    if pair in PAIRS:
        return pair, PAIRS[pair]
    if pair in by_folder:
        return by_folder[pair], pair
    raise ConfigError(unknown("DLAMA-v1 pair", pair, PAIRS))


def find_pair_folder(root: str | os.PathLike, folder: str) -> Path:
    """``root`` may be the dlama-v1 folder, the pair folder or its ``dlama/`` sub-folder."""
    root = Path(root)
    for candidate in (root / folder / "dlama", root / "dlama-v1" / folder / "dlama", root / "dlama", root):
        if candidate.is_dir() and any(p.is_dir() for p in candidate.iterdir()) and \
                any(candidate.glob("*/P*_general_*.jsonl")):
            return candidate
    raise ConfigError(f"{root}: no DLAMA-v1 files for '{folder}' (expected {folder}/dlama/<lang>/P*_general_*.jsonl)."
                      " Pass the folder that holds the pair folders, e.g. reference/dlama/dlama-v1.")


def read_view(folder: Path, lang: str) -> tuple[DlamaRecord, ...]:
    records: list[DlamaRecord] = []
    files = sorted(p for p in (folder / lang).iterdir() if FILE_RE.match(p.name))
    for path in files:
        predicate, region = FILE_RE.match(path.name).groups()  # type: ignore[union-attr]
        if region not in REGION_CULTURES:
            raise ConfigError(f"{path}: unknown DLAMA region '{region}'; known: {', '.join(REGION_CULTURES)}")
        def record(r: dict[str, Any], n: int, predicate=predicate, region=region, path=path) -> DlamaRecord:
            return DlamaRecord(predicate, region, REGION_CULTURES[region], lang, r["sub_uri"], tuple(r["obj_uri"]),
                               r["sub_label"], tuple(r["obj_label"]), tuple(r.get("country") or ()),
                               int(r["size"]), r["uuid"], n, str(path))

        for rec in jsonl_records(path, "a DLAMA record", record):
            if len(rec.objects) != len(rec.object_labels):
                raise ConfigError(f"{len(rec.objects)} obj_uri but {len(rec.object_labels)} obj_label",
                                  str(path), rec.line)
            records.append(rec)
    return tuple(records)


def read_pair(root: str | os.PathLike, pair: str = "arab-west") -> DlamaPair:
    name, folder_name = resolve_pair(pair)
    folder = find_pair_folder(root, folder_name)
    langs = tuple(sorted(p.name for p in folder.iterdir() if p.is_dir()))
    views = {lang: read_view(folder, lang) for lang in langs}
    regions = sorted({r.region for recs in views.values() for r in recs})
    cultures = tuple(sorted((REGION_CULTURES[r] for r in regions), key=lambda c: (c == "west", c)))
    if len(cultures) != 2:
        raise ConfigError(f"{folder}: expected two regions, found {regions}")
    return DlamaPair(name, folder, langs, (cultures[0], cultures[1]), views)


def to_facts(pair: DlamaPair) -> tuple[list[Fact], dict[str, Entity], list[Drop]]:
    """Facts (one per aligned record), entities (labels of every language view) and import drops."""
    drops: list[Drop] = []
    langs = pair.languages
    by_uuid = {lang: {r.uuid: r for r in recs} for lang, recs in pair.views.items()}
    first = pair.views[langs[0]]
    facts: list[Fact] = []
    label_votes: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(int)))
    for rec in first:
        others = [by_uuid[lang].get(rec.uuid) for lang in langs[1:]]
        fid = fact_id(rec.culture, rec.predicate, rec.subject)
        bad = [lang for lang, o in zip(langs[1:], others, strict=True)
               if o is None or o.subject != rec.subject or o.objects != rec.objects]
        if bad:
            drops.append(Drop(fid, STEP, f"misaligned:{bad[0]}", f"uuid {rec.uuid} differs or is absent in {bad}",
                              rec.culture, rec.predicate))
            continue
        for r in (rec, *others):
            label_votes[r.subject][r.lang][r.subject_label] += 1
            for q, lbl in zip(r.objects, r.object_labels, strict=True):
                label_votes[q][r.lang][lbl] += 1
        facts.append(Fact(fid, rec.predicate, rec.subject, tuple(ObjectRef(q) for q in rec.objects), rec.culture,
                          rec.countries, float(rec.size), rec.line))
    seen_ids = Counter(f.id for f in facts)
    for fid in sorted(k for k, v in seen_ids.items() if v > 1):
        drops.append(Drop(fid, STEP, "duplicate-subject", "the subject appears twice in one file"))
    facts = [f for f in facts if seen_ids[f.id] == 1]

    entities: dict[str, Entity] = {}
    for q, per_lang in label_votes.items():
        labels = {}
        for lang, votes in per_lang.items():
            # one label (nearly every entity): no vote to settle
            best = next(iter(votes)) if len(votes) == 1 else min(votes, key=lambda lbl: (-votes[lbl], lbl))
            labels[lang] = best
            if len(votes) > 1:
                others = ", ".join(f"'{x}'" for x in sorted(votes) if x != best)
                drops.append(Drop(q, STEP, f"label-conflict:{lang}", f"kept '{best}' ({votes[best]} records); "
                                                                     f"also {others}"))
        entities[q] = Entity(q, frozen_mapping(labels))
    return facts, entities, drops


def read_mlama_templates(folder: str | os.PathLike, langs: Sequence[str]) -> dict[str, dict[str, str]]:
    """mLAMA templates: ``<folder>/<lang>.jsonl`` (or ``<folder>/<lang>/templates.jsonl``) lines
    ``{"relation": "P19", "template": "[X] was born in [Y] ."}`` -> lang -> relation -> text."""
    folder = Path(folder)
    out: dict[str, dict[str, str]] = {}
    for lang in langs:
        path = folder / f"{lang}.jsonl"
        if not path.exists():
            path = folder / lang / "templates.jsonl"
        if not path.exists():
            raise ConfigError(f"{folder}: no mLAMA templates for '{lang}' (expected {lang}.jsonl or "
                              f"{lang}/templates.jsonl)")
        texts: dict[str, str] = {}
        for relation, template in jsonl_records(path, "an mLAMA template line",
                                                lambda r, _n: (r["relation"], r["template"])):
            texts.setdefault(relation, template)
        out[lang] = texts
    return out


def source_meta(pair: DlamaPair, root: str | os.PathLike) -> dict[str, Any]:
    return {
        "kind": "dlama-v1", "path": str(Path(root)), "pair_folder": pair.folder.parent.name,
        "record_counts": pair.counts(), "duplicate_form_records": pair.duplicate_form_records(),
        "citation": "Keleg & Magdy (2023), DLAMA: A Framework for Curating Culturally Diverse Facts for "
                    "Probing the Knowledge of Pretrained Language Models, Findings of ACL 2023.",
    }


@gc_paused
def import_dlama(path: str | os.PathLike, pair: str = "arab-west", *, out: str | os.PathLike | None = None,
                 mlama_templates: str | os.PathLike | None = None, templates_root: str | os.PathLike | None = None,
                 write: bool = True):
    """DLAMA-v1 pair -> benchmark directory ``<out>/build/`` (default ``runs/dlama-v1-<pair>``).

    Prompts come from the published mLAMA templates when ``mlama_templates`` is given (plain
    substitution, as DLAMA probed), else from the factatlas template library. Candidates are
    predicate-wide, as in DLAMA.
    """
    from datetime import UTC, datetime

    from factatlas.builder.build import BuildSpec, build_benchmark, toolkit_version
    from factatlas.builder.importers.common import IMPORT_FRACTIONS, default_out, write_import
    from factatlas.builder.sources import LibrarySource, SubstitutionSource

    started = datetime.now(UTC)
    data = read_pair(path, pair)
    facts, entities, drops = to_facts(data)
    if mlama_templates is not None:
        source = SubstitutionSource(read_mlama_templates(mlama_templates, data.languages), entities,
                                    origin=str(mlama_templates))
    else:
        from factatlas.templates import load_library

        source = LibrarySource(load_library(langs=data.languages, root=templates_root), entities)
    name = f"dlama-v1-{data.name}"
    spec = BuildSpec(name=name, subject_candidate="kept", pair=data.name, cultures=data.cultures, languages=data.languages,
                     fractions=dict(IMPORT_FRACTIONS), source={**source_meta(data, path), **source.describe()})
    result = build_benchmark(facts, entities, source, spec, upstream_drops=drops, toolkit_version=toolkit_version())
    if write:
        write_import(out or default_out(name), result.content, started=started,
                     config={"importer": "dlama-v1", "path": str(path), "pair": data.name,
                             "mlama_templates": str(mlama_templates) if mlama_templates else None},
                     counts=result.counts)
    return result
