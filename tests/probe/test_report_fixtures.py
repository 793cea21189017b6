"""A small, real-data benchmark and deterministic rankings for the metrics and report tests.

Facts are real Wikidata statements (capital P36 with two templates, official language P37 with one) for
six Arab League and six Western countries, labelled in Arabic and English. Rankings come from a
seeded stand-in "model" that knows associative facts (Arab facts asked in Arabic, Western facts in
English) more often, written with factatlas.tables.RANKINGS_SCHEMA exactly as the prober writes them.
(No tests here: the module only builds fixtures; its name matches the files the metrics engineer owns.)
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from factatlas.predicates import load_predicates
from factatlas.records import ANSWER_MARKER, Entity, fact_id
from factatlas.tables import PROMPTS_SCHEMA, RANKINGS_SCHEMA, write_entities, write_table
from tests.builder.builder_fixtures import complete_benchmark

# culture, country qid, (en, ar) country label, capital qid, (en, ar), language qid
COUNTRIES = [
    ("arab", "Q79", ("Egypt", "مصر"), "Q85", ("Cairo", "القاهرة"), "Q13955"),
    ("arab", "Q1028", ("Morocco", "المغرب"), "Q3551", ("Rabat", "الرباط"), "Q13955"),
    ("arab", "Q851", ("Saudi Arabia", "السعودية"), "Q3692", ("Riyadh", "الرياض"), "Q13955"),
    ("arab", "Q810", ("Jordan", "الأردن"), "Q3805", ("Amman", "عمان"), "Q13955"),
    ("arab", "Q822", ("Lebanon", "لبنان"), "Q3820", ("Beirut", "بيروت"), "Q13955"),
    ("arab", "Q948", ("Tunisia", "تونس"), "Q3572", ("Tunis", "تونس"), "Q13955"),  # leaks in both languages
    ("west", "Q142", ("France", "فرنسا"), "Q90", ("Paris", "باريس"), "Q150"),
    ("west", "Q45", ("Portugal", "البرتغال"), "Q597", ("Lisbon", "لشبونة"), "Q5146"),
    ("west", "Q38", ("Italy", "إيطاليا"), "Q220", ("Rome", "روما"), "Q652"),
    ("west", "Q29", ("Spain", "إسبانيا"), "Q2807", ("Madrid", "مدريد"), "Q1321"),
    ("west", "Q145", ("United Kingdom", "المملكة المتحدة"), "Q84", ("London", "لندن"), "Q1860"),
    ("west", "Q40", ("Austria", "النمسا"), "Q1741", ("Vienna", "فيينا"), "Q188"),
]
# Extra real facts whose capital label is inside the country label: used to make a leaking benchmark.
LEAKY = [
    ("arab", "Q977", ("Djibouti", "جيبوتي"), "Q3604", ("Djibouti", "جيبوتي"), "Q13955"),
    ("arab", "Q817", ("Kuwait", "الكويت"), "Q35178", ("Kuwait", "الكويت"), "Q13955"),
    ("west", "Q32", ("Luxembourg", "لوكسمبورغ"), "Q1842", ("Luxembourg", "لوكسمبورغ"), "Q150"),
]
LANGUAGE_LABELS = {"Q13955": ("Arabic", "العربية"), "Q150": ("French", "الفرنسية"), "Q188": ("German", "الألمانية"),
                   "Q5146": ("Portuguese", "البرتغالية"),
                   "Q652": ("Italian", "الإيطالية"), "Q1321": ("Spanish", "الإسبانية"), "Q1860": ("English", "الإنجليزية")}
TEMPLATES = {
    ("en", "P36/1"): "The capital of {X} is [Y].", ("en", "P36/2"): "{X}'s capital city is [Y].",
    ("ar", "P36/1"): "عاصمة {X} هي [Y].", ("ar", "P36/2"): "[Y] هي عاصمة {X}.",
    ("en", "P37/1"): "The official language of {X} is [Y].", ("ar", "P37/1"): "اللغة الرسمية في {X} هي [Y].",
}
LANGS = ("ar", "en")
IDX = {"en": 0, "ar": 1}


def prompt_rows(countries=COUNTRIES) -> list[dict]:
    rows = []
    capitals = {c[3]: c[4] for c in countries}
    languages = sorted({c[5] for c in countries})
    for culture, subj, subj_labels, capital, _, language in countries:
        for pred, gold, pool, labels in (("P36", capital, sorted(capitals), capitals),
                                         ("P37", language, languages, LANGUAGE_LABELS)):
            fid = fact_id(culture, pred, subj)
            for lang in LANGS:
                for (t_lang, tid), pattern in sorted(TEMPLATES.items()):
                    if t_lang != lang or not tid.startswith(pred):
                        continue
                    text = pattern.replace("{X}", subj_labels[IDX[lang]])
                    rows.append({
                        "prompt_id": f"{fid}|{lang}|{tid}", "fact_id": fid, "lang": lang, "template_id": tid,
                        "kind": "cloze", "text": text, "answer_start": text.find(ANSWER_MARKER), "pair": "arab-west",
                        "culture": culture, "predicate": pred, "split": "test", "subject_qid": subj,
                        "subject_label": subj_labels[IDX[lang]], "gold_qids": [gold],
                        "gold_forms": [[labels[gold][IDX[lang]]]], "candidate_qids": list(pool),
                        "candidate_forms": [labels[q][IDX[lang]] for q in pool], "template_status": "reviewed",
                    })
    return sorted(rows, key=lambda r: r["prompt_id"])


def entities(countries=COUNTRIES) -> list[Entity]:
    out = {}
    for _, subj, subj_labels, capital, cap_labels, _ in countries:
        out[subj] = Entity(subj, {"en": subj_labels[0], "ar": subj_labels[1]})
        out[capital] = Entity(capital, {"en": cap_labels[0], "ar": cap_labels[1]})
    for q, (en, ar) in LANGUAGE_LABELS.items():
        out[q] = Entity(q, {"en": en, "ar": ar})
    return [out[q] for q in sorted(out)]


def write_benchmark_dir(folder: Path, rows: list[dict], ents: list[Entity]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_table(folder / "prompts.parquet", rows, PROMPTS_SCHEMA, sort_by=("prompt_id",))
    write_entities(folder, ents)
    meta = {"schema_version": 1, "name": "capitals-languages", "pair": "arab-west", "cultures": ["arab", "west"],
            "languages": list(LANGS), "templates": {lang: sorted({r["template_id"] for r in rows if r["lang"] == lang})
                                                    for lang in LANGS},
            "candidate_mode": "predicate", "k": None, "splits": {"test": 1.0}, "source": {"kind": "curated"},
            "toolkit_version": "test",
            "predicate_labels": {p: s.label for p, s in load_predicates().items() if p in {r["predicate"] for r in rows}},
            "country_labels": {}}
    (folder / "benchmark.json").write_text(json.dumps(meta, indent=2), "utf-8")
    return complete_benchmark(folder)  # facts, candidates...: report refuses partial benchmarks


def _rng(*parts: str) -> random.Random:
    return random.Random(int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:16], 16))


def model_rankings(rows: list[dict], model: str = "synth-model", assoc_skill: float = 0.85,
                   non_skill: float = 0.45) -> list[dict]:
    """The stand-in model: ranks the gold first with probability assoc_skill for associative prompts
    (arab fact in ar, west fact in en), non_skill otherwise; the rest in a seeded order per fact."""
    out = []
    for r in rows:
        associative = (r["culture"], r["lang"]) in {("arab", "ar"), ("west", "en")}
        skill = assoc_skill if associative else non_skill
        knows = _rng(model, r["fact_id"], r["lang"]).random() < skill  # same answer for both templates
        others = [q for q in r["candidate_qids"] if q not in r["gold_qids"]]
        _rng(model, r["fact_id"]).shuffle(others)  # the same wrong order in every language
        gold = r["gold_qids"][0]
        ranked = [gold, *others] if knows else [others[0], gold, *others[1:]]
        out.append(_ranking_row(model, r, ranked))
    return out


def template_only_rankings(rows: list[dict], model: str = "synth-model") -> list[dict]:
    """Without the subject the model can only guess: one fixed order per (language, template)."""
    out = []
    for r in rows:
        ranked = sorted(r["candidate_qids"])
        _rng(model, "template-only", r["lang"], r["template_id"]).shuffle(ranked)
        out.append(_ranking_row(model, r, ranked))
    return out


def _ranking_row(model: str, prompt: dict, ranked: list[str]) -> dict:
    return {"model": model, "scoring": "mlm-independent", "prompt_id": prompt["prompt_id"],
            "fact_id": prompt["fact_id"], "lang": prompt["lang"], "template_id": prompt["template_id"],
            "culture": prompt["culture"], "predicate": prompt["predicate"], "ranked_qids": ranked,
            "scores": [-float(i) - 0.5 for i in range(len(ranked))], "correct_at_1": ranked[0] in prompt["gold_qids"],
            "prediction": ""}


def write_run(root: Path, *, leaky: bool = False, template_only: str | None = "guess",
              model: str = "synth-model") -> Path:
    """A run directory: build/ (the benchmark) and probe/<model>/rankings*.parquet.

    template_only: "guess" (a subject-blind baseline), "same" (identical to the full rankings: the
    templates give the answer away), None (no baseline file).
    """
    countries = COUNTRIES + LEAKY if leaky else COUNTRIES
    rows = prompt_rows(countries)
    write_benchmark_dir(root / "build", rows, entities(countries))
    folder = root / "probe" / model
    folder.mkdir(parents=True, exist_ok=True)
    ranked = model_rankings(rows, model)
    write_table(folder / "rankings.parquet", ranked, RANKINGS_SCHEMA, sort_by=("prompt_id",))
    if template_only == "guess":
        write_table(folder / "rankings_template_only.parquet", template_only_rankings(rows, model), RANKINGS_SCHEMA,
                    sort_by=("prompt_id",))
    elif template_only == "same":
        write_table(folder / "rankings_template_only.parquet", ranked, RANKINGS_SCHEMA, sort_by=("prompt_id",))
    return root
