"""A small hand-built world for the build-stage tests: real facts, entities and a real prompt source.

Pair arab-west, languages en/ar, predicates P36 (capital) and P19 (place of birth), two templates for
P36 (a cloze and a question) and one for P19. ``world(n)`` adds n synthetic P19 facts per culture so that
split tests have cells of a useful size; the facts of ``world(0)`` are those of the exact-output tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factatlas.builder.benchmark import write_benchmark
from factatlas.builder.build import BuildResult, BuildSpec, build_benchmark
from factatlas.builder.sources import TemplateInfo
from factatlas.records import (
    ANSWER_MARKER,
    Entity,
    Fact,
    ObjectRef,
    Provenance,
    RenderFailure,
    fact_id,
    frozen_mapping,
)

LANGS = ("ar", "en")
LABELS: dict[str, dict[str, str]] = {
    "Q79": {"en": "Egypt", "ar": "مصر"},
    "Q85": {"en": "Cairo", "ar": "القاهرة"},
    "Q810": {"en": "Jordan", "ar": "الأردن"},
    "Q3805": {"en": "Amman", "ar": "عمان"},
    "Q142": {"en": "France", "ar": "فرنسا"},
    "Q90": {"en": "Paris", "ar": "باريس"},
    "Q183": {"en": "Germany", "ar": "ألمانيا"},
    "Q64": {"en": "Berlin", "ar": "برلين"},
    "Q1": {"en": "Naguib Mahfouz", "ar": "نجيب محفوظ"},
    "Q2": {"en": "Victor Hugo", "ar": "فيكتور هوغو"},
}
# lang -> template id -> (kind, text with [X], and [Y] for a cloze)
TEMPLATES: dict[str, dict[str, tuple[str, str]]] = {
    "en": {"P36/1": ("cloze", "The capital of [X] is [Y]."), "P36/q1": ("question", "What is the capital of [X]?"),
           "P19/1": ("cloze", "[X] was born in [Y].")},
    "ar": {"P36/1": ("cloze", "عاصمة [X] هي [Y]."), "P36/q1": ("question", "ما عاصمة [X]؟"),
           "P19/1": ("cloze", "ولد [X] في [Y].")},
}
# (culture, predicate, subject, direct objects)
BASE_FACTS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("arab", "P36", "Q79", ("Q85",)),
    ("arab", "P36", "Q810", ("Q3805",)),
    ("west", "P36", "Q142", ("Q90",)),
    ("west", "P36", "Q183", ("Q64",)),
    ("arab", "P19", "Q1", ("Q85",)),
    ("west", "P19", "Q2", ("Q90",)),
)


@dataclass
class DictSource:
    """A real PromptSource over plain texts: [X] -> the subject's label, answers are object labels."""

    entities: Mapping[str, Entity]
    templates_by_lang: Mapping[str, Mapping[str, tuple[str, str]]] = field(default_factory=lambda: TEMPLATES)

    def templates(self, lang: str, predicate: str) -> tuple[TemplateInfo, ...]:
        return tuple(TemplateInfo(tid, kind, "reviewed") for tid, (kind, _) in
                     sorted(self.templates_by_lang.get(lang, {}).items()) if tid.split("/")[0] == predicate)

    def render_prompt(self, lang: str, template_id: str, subject_qid: str) -> str | RenderFailure:
        label = self.entities[subject_qid].labels.get(lang)
        if not label:
            return RenderFailure("no-label", f"{subject_qid}@{lang}")
        return self.templates_by_lang[lang][template_id][1].replace("[X]", label).replace("[Y]", ANSWER_MARKER)

    def render_answer(self, lang: str, template_id: str, object_qid: str,
                      subject_qid: str) -> tuple[str, ...] | RenderFailure:
        label = self.entities[object_qid].labels.get(lang)
        return (label,) if label else RenderFailure("no-label", f"{object_qid}@{lang}")

    def describe(self) -> dict[str, Any]:
        return {"templates": "test dictionary"}


def make_facts(rows: Sequence[tuple[str, str, str, tuple[str, ...]]]) -> list[Fact]:
    return [Fact(fact_id(c, p, s), p, s, tuple(ObjectRef(o, Provenance.DIRECT) for o in objs), c, (), 1.0, 1)
            for c, p, s, objs in rows]


def synthetic_rows(n: int, start: int = 0) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """n extra P19 facts per culture (subjects Q900000+i), born in Cairo or Paris."""
    out = []
    for i in range(start, start + n):
        out.append(("arab", "P19", f"Q{900000 + 2 * i}", ("Q85",)))
        out.append(("west", "P19", f"Q{900000 + 2 * i + 1}", ("Q90",)))
    return out


def entities_for(rows: Sequence[tuple[str, str, str, tuple[str, ...]]]) -> dict[str, Entity]:
    labels = {q: dict(v) for q, v in LABELS.items()}
    for _, _, subject, _ in rows:
        if subject not in labels:
            labels[subject] = {"en": f"Person {subject}", "ar": f"شخص {subject}"}
    return {q: Entity(q, frozen_mapping(v)) for q, v in labels.items()}


def spec(**kw: Any) -> BuildSpec:
    base: dict[str, Any] = {"name": "tiny", "pair": "arab-west", "cultures": ("arab", "west"), "languages": LANGS}
    return BuildSpec(**{**base, **kw})


def build(rows: Sequence[tuple[str, str, str, tuple[str, ...]]] = BASE_FACTS, **kw: Any) -> BuildResult:
    entities = entities_for(rows)
    return build_benchmark(make_facts(rows), entities, DictSource(entities), spec(**kw), toolkit_version="test")


def write(result: BuildResult, folder: Path) -> Path:
    write_benchmark(folder, result.content)
    return folder


def complete_benchmark(folder: Path) -> Path:
    """Write the files a hand-made benchmark folder lacks (facts, entities + labels, candidates, drops,
    stats), derived from its prompts.parquet, so that the invariant checker sees a whole benchmark.

    Facts take the prompts' golds as objects; entities take subject labels and candidate forms as labels
    (an existing entities.parquet is kept). Probe and report tests use it on their hand-built rows."""
    import json

    from factatlas.atomic import write_json
    from factatlas.builder.benchmark import CANDIDATES_SCHEMA
    from factatlas.tables import (
        PROMPTS_SCHEMA,
        read_rows,
        write_drops,
        write_entities,
        write_facts,
        write_table,
    )

    rows = read_rows(folder / "prompts.parquet", PROMPTS_SCHEMA)
    first = {}
    for r in rows:
        first.setdefault(r["fact_id"], r)
    write_facts(folder / "facts.parquet",
                [Fact(fid, r["predicate"], r["subject_qid"], tuple(ObjectRef(q) for q in r["gold_qids"]),
                      r["culture"], (), 1.0, 1) for fid, r in sorted(first.items())])
    if not (folder / "entities.parquet").exists():
        labels: dict[str, dict[str, str]] = {}
        for r in rows:
            labels.setdefault(r["subject_qid"], {})[r["lang"]] = r["subject_label"]
            for q, form in zip(r["candidate_qids"], r["candidate_forms"], strict=True):
                labels.setdefault(q, {}).setdefault(r["lang"], form)
        write_entities(folder, [Entity(q, frozen_mapping(v)) for q, v in sorted(labels.items())])
    pool = {(r["predicate"], r["lang"], q): form for r in rows
            for q, form in zip(r["candidate_qids"], r["candidate_forms"], strict=True)}
    write_table(folder / "candidates.parquet",
                [{"predicate": p, "lang": lang, "qid": q, "label": label} for (p, lang, q), label in pool.items()],
                CANDIDATES_SCHEMA, sort_by=("predicate", "lang", "qid"))
    if not (folder / "dropped.parquet").exists():
        write_drops(folder / "dropped.parquet", [])
    if not (folder / "stats.json").exists():
        write_json(folder / "stats.json", {"facts": len(first), "prompts": len(rows)})
    json.loads((folder / "benchmark.json").read_text("utf-8"))  # a hand-made meta must at least parse
    return folder
