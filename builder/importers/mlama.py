"""mLAMA 1.1 (Kassner, Dufter & Schütze, EACL 2021) -> factatlas benchmark.

Layout of the published mlama1.1 folder: ``<root>/<lang>/templates.jsonl`` (``{"relation", "template"}``)
and ``<root>/<lang>/<relation>.jsonl``, one triple per line (``sub_uri, sub_label, obj_uri, obj_label,
uuid``). Templates may instead come from a separate folder of ``<lang>.jsonl`` files (``--templates``).

Triples are grouped into facts per (relation, subject), every object kept. Only triples present in every
requested language are imported (the multi-parallel rule), the others are recorded as Drops
(``missing-in:<lang>``). Prompts are plain substitutions of the mLAMA template, candidates are
predicate-wide (mLAMA's "typed querying": all objects of the relation).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from factatlas.builder.importers.common import gc_paused, jsonl_records
from factatlas.errors import ConfigError
from factatlas.records import Culture, Drop, Entity, Fact, ObjectRef, fact_id, frozen_mapping

STEP = "import"
CULTURE = "global"


@dataclass(frozen=True, slots=True)
class Triple:
    lang: str
    relation: str
    subject: str
    obj: str
    subject_label: str
    object_label: str


def read_templates(folder: str | os.PathLike, lang: str) -> dict[str, str]:
    """relation -> template text from ``<folder>/<lang>.jsonl`` or ``<folder>/<lang>/templates.jsonl``."""
    from factatlas.builder.importers.dlama import read_mlama_templates

    return read_mlama_templates(folder, [lang])[lang]


def read_triples(root: Path, lang: str) -> list[Triple]:
    folder = root / lang
    if not folder.is_dir():
        raise ConfigError(f"{root}: no folder for language '{lang}' (expected {folder}/<relation>.jsonl)")
    out: list[Triple] = []
    for path in sorted(folder.glob("*.jsonl")):
        if path.name == "templates.jsonl":
            continue
        out.extend(jsonl_records(path, "an mLAMA triple", lambda r, _n, path=path: Triple(
            lang, path.stem, r["sub_uri"], r["obj_uri"], r["sub_label"], r["obj_label"])))
    return out


def to_facts(triples: Mapping[str, Sequence[Triple]]) -> tuple[list[Fact], dict[str, Entity], list[Drop]]:
    """Facts from the triples every language has; entities from their labels; drops for the rest."""
    langs = sorted(triples)
    keys = {lang: {(t.relation, t.subject, t.obj) for t in ts} for lang, ts in triples.items()}
    common = set.intersection(*keys.values()) if keys else set()
    drops: list[Drop] = []
    for lang in langs:
        others = set().union(*(keys[x] for x in langs if x != lang)) if len(langs) > 1 else set()
        for rel, sub, obj in sorted(others - keys[lang]):
            drops.append(Drop(f"{rel}:{sub}:{obj}", STEP, f"missing-in:{lang}", "triple absent from this language",
                              CULTURE, rel))
    labels: dict[str, dict[str, str]] = defaultdict(dict)
    objects: dict[tuple[str, str], list[str]] = defaultdict(list)
    for lang in langs:
        for t in triples[lang]:
            if (t.relation, t.subject, t.obj) not in common:
                continue
            labels[t.subject].setdefault(lang, t.subject_label)
            labels[t.obj].setdefault(lang, t.object_label)
            if lang == langs[0]:
                objects[(t.relation, t.subject)].append(t.obj)
    facts = [Fact(fact_id(CULTURE, rel, sub), rel, sub, tuple(ObjectRef(o) for o in dict.fromkeys(objs)), CULTURE,
                  (), 0.0, 0) for (rel, sub), objs in sorted(objects.items())]
    entities = {q: Entity(q, frozen_mapping(lbl)) for q, lbl in labels.items()}
    return facts, entities, drops


@gc_paused
def import_mlama(path: str | os.PathLike, langs: Sequence[str], *, out: str | os.PathLike | None = None,
                 templates: str | os.PathLike | None = None, write: bool = True,
                 cultures: Sequence[Culture] = ()):
    """mLAMA folder -> benchmark directory ``<out>/build/`` (default ``runs/mlama-<langs>``). With
    ``cultures``, facts whose subject's country is known (``builder.audit.cultures_from_countries``) get
    that country's culture instead of ``global``."""
    from datetime import UTC, datetime

    from factatlas.builder.build import BuildSpec, build_benchmark, toolkit_version
    from factatlas.builder.importers.common import IMPORT_FRACTIONS, default_out, write_import
    from factatlas.builder.sources import SubstitutionSource

    if not langs:
        raise ConfigError("import mlama: give languages, e.g. --langs en,fr")
    started = datetime.now(UTC)
    root = Path(path)
    triples = {lang: read_triples(root, lang) for lang in langs}
    facts, entities, drops = to_facts(triples)
    assigned: dict[str, int] = {}
    if cultures:
        from factatlas.builder.audit import cultures_from_countries
        from factatlas.predicates import load_predicates

        facts, outcome = cultures_from_countries(facts, load_predicates(), cultures)
        assigned = dict(sorted(outcome.items()))
    present = tuple(sorted({f.culture for f in facts})) or (CULTURE,)
    template_root = Path(templates) if templates else root
    texts = {lang: read_templates(template_root, lang) for lang in langs}
    source = SubstitutionSource(texts, entities, origin=str(template_root))
    name = "mlama-" + "-".join(langs)
    spec = BuildSpec(name=name, subject_candidate="kept", pair=name, cultures=present, languages=tuple(langs),
                     fractions=dict(IMPORT_FRACTIONS),
                     source={"kind": "mlama", "path": str(root), "triples": {x: len(t) for x, t in triples.items()},
                             "citation": "Kassner, Dufter & Schütze (2021), Multilingual LAMA, EACL 2021.",
                             **({"cultures_from_countries": assigned} if cultures else {}),
                             **source.describe()})
    result = build_benchmark(facts, entities, source, spec, upstream_drops=drops, toolkit_version=toolkit_version())
    if write:
        write_import(out or default_out(name), result.content, started=started,
                     config={"importer": "mlama", "path": str(root), "langs": list(langs),
                             "templates": str(templates) if templates else None}, counts=result.counts)
    return result
