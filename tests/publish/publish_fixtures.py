"""Hand-built benchmark directories (real parquet written with factatlas.tables) for the publish tests.

The world: pair arab-west, predicates P36 (capital) and P19 (place of birth), languages en/ar (+ fr in
v1.1.0). Every fact's prompts exist in every language, with the same candidates (all objects of the
predicate), as the benchmark contract requires.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from factatlas.atomic import write_json
from factatlas.builder.build import display_labels
from factatlas.records import Drop, Entity, Fact, ObjectRef, Provenance, fact_id, frozen_mapping
from factatlas.tables import PROMPTS_SCHEMA, write_drops, write_entities, write_facts, write_table

LABELS: dict[str, dict[str, str]] = {
    "Q79": {"en": "Egypt", "ar": "مصر", "fr": "Égypte"},
    "Q85": {"en": "Cairo", "ar": "القاهرة", "fr": "Le Caire"},
    "Q810": {"en": "Jordan", "ar": "الأردن", "fr": "Jordanie"},
    "Q3805": {"en": "Amman", "ar": "عمان", "fr": "Amman"},
    "Q142": {"en": "France", "ar": "فرنسا", "fr": "France"},
    "Q90": {"en": "Paris", "ar": "باريس", "fr": "Paris"},
    "Q183": {"en": "Germany", "ar": "ألمانيا", "fr": "Allemagne"},
    "Q64": {"en": "Berlin", "ar": "برلين", "fr": "Berlin"},
    "Q1": {"en": "Naguib Mahfouz", "ar": "نجيب محفوظ", "fr": "Naguib Mahfouz"},
    "Q2": {"en": "Victor Hugo", "ar": "فيكتور هوغو", "fr": "Victor Hugo"},
    "Q3": {"en": "Umm Kulthum", "ar": "أم كلثوم", "fr": "Oum Kalthoum"},
    "Q1726": {"en": "Munich", "ar": "ميونخ", "fr": "Munich"},
    "Q1741": {"en": "Vienna", "ar": "فيينا", "fr": "Vienne"},
    "Q40": {"en": "Austria", "ar": "النمسا", "fr": "Autriche"},
}
TEMPLATES = {
    "P36": {"en": "The capital of {x} is [Y].", "ar": "عاصمة {x} هي [Y].", "fr": "La capitale de {x} est [Y]."},
    "P19": {"en": "{x} was born in [Y].", "ar": "ولد {x} في [Y].", "fr": "{x} est né à [Y]."},
}
# (culture, predicate, subject, objects, countries)
BASE_FACTS = (
    ("arab", "P36", "Q79", ("Q85",), ("Q79",)),
    ("arab", "P36", "Q810", ("Q3805",), ("Q810",)),
    ("west", "P36", "Q142", ("Q90",), ("Q142",)),
    ("west", "P36", "Q183", ("Q64",), ("Q183",)),
    ("arab", "P19", "Q1", ("Q85",), ("Q79",)),
    ("west", "P19", "Q2", ("Q90",), ("Q142",)),
)


def make_benchmark(root: Path, *, facts=BASE_FACTS, langs=("ar", "en"), labels: Mapping | None = None,
                   splits: Mapping[str, str] | None = None, name: str = "arab-west-test",
                   with_run: bool = True, pair: str = "arab-west") -> Path:
    """Write a run directory (manifest + curate/queries.jsonl) with a benchmark in build/. Returns the run."""
    labels = {q: dict(v) for q, v in (labels or LABELS).items()}
    bench = root / "build" if with_run else root
    fact_records = []
    for culture, pred, subj, objs, countries in facts:
        fact_records.append(Fact(fact_id(culture, pred, subj), pred, subj,
                                 tuple(ObjectRef(o, Provenance.DIRECT) for o in objs), culture, countries,
                                 popularity=1.0, rank=1))
    fact_records.sort(key=lambda f: f.id)
    referenced = sorted({q for f in fact_records for q in (f.subject, *f.object_qids, *f.countries)})
    entities = [Entity(q, frozen_mapping({lg: labels[q][lg] for lg in langs if lg in labels[q]}))
                for q in referenced]
    candidates = {p: sorted({o for f in fact_records if f.predicate == p for o in f.object_qids})
                  for p in sorted({f.predicate for f in fact_records})}
    rows = []
    for f in fact_records:
        for lang in langs:
            tid = f"{f.predicate}/1"
            text = TEMPLATES[f.predicate][lang].replace("{x}", labels[f.subject][lang])
            rows.append({
                "prompt_id": f"{f.id}|{lang}|{tid}", "fact_id": f.id, "lang": lang, "template_id": tid,
                "kind": "cloze", "text": text, "answer_start": text.index("[Y]"), "pair": pair,
                "culture": f.culture, "predicate": f.predicate,
                "split": (splits or {}).get(f.id, "test"), "subject_qid": f.subject,
                "subject_label": labels[f.subject][lang], "gold_qids": list(f.object_qids),
                "gold_forms": [[labels[o][lang]] for o in f.object_qids],
                "candidate_qids": candidates[f.predicate],
                "candidate_forms": [labels[o][lang] for o in candidates[f.predicate]],
                "template_status": "reviewed" if lang != "fr" else "draft",
                "article_langs": [], "home_langs": [], "popularity": 1.0, "popularity_quantile": 1,
                "popularity_log10": 0,
            })
    bench.mkdir(parents=True, exist_ok=True)
    write_table(bench / "prompts.parquet", rows, PROMPTS_SCHEMA, sort_by=("prompt_id",))
    write_facts(bench / "facts.parquet", fact_records)
    write_entities(bench, entities)
    write_drops(bench / "dropped.parquet", [Drop("arab:P36:Q1016", "labels", "no-label:ar", culture="arab",
                                                 predicate="P36")])
    write_json(bench / "benchmark.json", {
        "schema_version": 1, "name": name, "pair": "arab-west", "cultures": ["arab", "west"],
        "languages": list(langs), "templates": {lg: ["P19/1", "P36/1"] for lg in langs},
        "candidate_mode": "predicate", "k": None, "splits": {"test": 1.0},
        "source": {"kind": "curated"}, "toolkit_version": "0.1.0",
        **display_labels(fact_records, {e.qid: e for e in entities})})
    (bench / "templates").mkdir(exist_ok=True)
    for lang in langs:
        (bench / "templates" / f"{lang}.yaml").write_text(
            "".join(f"{p}/1: {json.dumps(t[lang], ensure_ascii=False)}\n" for p, t in sorted(TEMPLATES.items())),
            "utf-8")
    if with_run:
        write_json(root / "manifest.json", {"run": root.name, "stages": {"curate": {
            "config": {"pair": "arab-west", "endpoint": "http://127.0.0.1:9999/sparql"},
            "finished": "2026-01-02T03:04:05+00:00", "versions": {"factatlas": "0.1.0"}}}})
        (root / "curate").mkdir(exist_ok=True)
        (root / "curate" / "queries.jsonl").write_text(
            '{"hash": "bbb", "rows": 3}\n{"hash": "aaa", "rows": 2}\n{"hash": "aaa", "rows": 2}\n', "utf-8")
    return root

