"""The capitals benchmark of the scorer tests, and helpers shared by them.

The benchmark is rendered here from a table of real capitals (Wikidata QIDs) in English and French,
two cultures, two cloze templates and one question template per language; even-ranked facts are the
train split, odd ones the test split.
"""

from __future__ import annotations

import json
from pathlib import Path

from factatlas.records import ANSWER_MARKER, Prompt, fact_id
from factatlas.tables import PROMPTS_SCHEMA, prompt_from_row, write_table
from tests.builder.builder_fixtures import complete_benchmark

# (culture, country qid, en, fr, capital qid, en, fr)
CAPITALS = [
    ("arab", "Q79", "Egypt", "l'Égypte", "Q85", "Cairo", "Le Caire"),
    ("arab", "Q1028", "Morocco", "le Maroc", "Q3551", "Rabat", "Rabat"),
    ("arab", "Q851", "Saudi Arabia", "l'Arabie saoudite", "Q3692", "Riyadh", "Riyad"),
    ("arab", "Q810", "Jordan", "la Jordanie", "Q3805", "Amman", "Amman"),
    ("arab", "Q822", "Lebanon", "le Liban", "Q3820", "Beirut", "Beyrouth"),
    ("arab", "Q796", "Iraq", "l'Irak", "Q1530", "Baghdad", "Bagdad"),
    ("arab", "Q858", "Syria", "la Syrie", "Q3766", "Damascus", "Damas"),
    ("arab", "Q948", "Tunisia", "la Tunisie", "Q3572", "Tunis", "Tunis"),
    ("arab", "Q262", "Algeria", "l'Algérie", "Q3561", "Algiers", "Alger"),
    ("arab", "Q846", "Qatar", "le Qatar", "Q3861", "Doha", "Doha"),
    ("arab", "Q842", "Oman", "Oman", "Q3826", "Muscat", "Mascate"),
    ("arab", "Q805", "Yemen", "le Yémen", "Q2471", "Sanaa", "Sanaa"),
    ("west", "Q142", "France", "la France", "Q90", "Paris", "Paris"),
    ("west", "Q183", "Germany", "l'Allemagne", "Q64", "Berlin", "Berlin"),
    ("west", "Q38", "Italy", "l'Italie", "Q220", "Rome", "Rome"),
    ("west", "Q29", "Spain", "l'Espagne", "Q2807", "Madrid", "Madrid"),
    ("west", "Q145", "United Kingdom", "le Royaume-Uni", "Q84", "London", "Londres"),
    ("west", "Q45", "Portugal", "le Portugal", "Q597", "Lisbon", "Lisbonne"),
    ("west", "Q41", "Greece", "la Grèce", "Q1524", "Athens", "Athènes"),
    ("west", "Q55", "Netherlands", "les Pays-Bas", "Q727", "Amsterdam", "Amsterdam"),
    ("west", "Q31", "Belgium", "la Belgique", "Q239", "Brussels", "Bruxelles"),
    ("west", "Q40", "Austria", "l'Autriche", "Q1741", "Vienna", "Vienne"),
    ("west", "Q34", "Sweden", "la Suède", "Q1754", "Stockholm", "Stockholm"),
    ("west", "Q27", "Ireland", "l'Irlande", "Q1761", "Dublin", "Dublin"),
]

TEMPLATES = {
    "en": {"P36/1": "The capital of {X} is [Y].", "P36/2": "[Y] is the capital city of {X}.",
           "P36/q1": "What is the capital of {X}?"},
    "fr": {"P36/1": "La capitale de {X} est [Y].", "P36/2": "[Y] est la capitale de {X}.",
           "P36/q1": "Quelle est la capitale de {X} ?"},
}


def capital_prompt_rows() -> list[dict]:
    rows = []
    cand_qids = [c[4] for c in CAPITALS]
    for rank, (culture, subj, subj_en, subj_fr, obj, obj_en, obj_fr) in enumerate(CAPITALS):
        fid = fact_id(culture, "P36", subj)
        split = "train" if rank % 2 == 0 else "test"
        for lang, subj_label in (("en", subj_en), ("fr", subj_fr)):
            col = 5 if lang == "en" else 6
            forms = [c[col] for c in CAPITALS]
            gold_form = obj_en if lang == "en" else obj_fr
            for tid, pattern in TEMPLATES[lang].items():
                text = pattern.replace("{X}", subj_label)
                if lang == "fr" and text.startswith(("l'", "le ", "la ", "les ")):
                    text = text[0].upper() + text[1:]
                kind = "question" if "/q" in tid else "cloze"
                rows.append({
                    "prompt_id": f"{fid}|{lang}|{tid}", "fact_id": fid, "lang": lang, "template_id": tid,
                    "kind": kind, "text": text,
                    "answer_start": text.find(ANSWER_MARKER) if kind == "cloze" else -1,
                    "pair": "arab-west", "culture": culture, "predicate": "P36", "split": split,
                    "subject_qid": subj, "subject_label": subj_label, "gold_qids": [obj],
                    "gold_forms": [[gold_form]], "candidate_qids": list(cand_qids),
                    "candidate_forms": forms, "template_status": "reviewed",
                })
    rows.sort(key=lambda r: r["prompt_id"])
    return rows


def write_benchmark(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_table(folder / "prompts.parquet", rows, PROMPTS_SCHEMA, sort_by=("prompt_id",))
    langs = sorted({r["lang"] for r in rows})
    meta = {"schema_version": 1, "name": "capitals", "pair": "arab-west", "cultures": ["arab", "west"],
            "languages": langs, "templates": {lang: sorted({r["template_id"] for r in rows if r["lang"] == lang})
                                              for lang in langs},
            "candidate_mode": "predicate", "k": None, "splits": {"train": 0.5, "test": 0.5},
            "source": {"kind": "curated"}, "toolkit_version": "test"}
    (folder / "benchmark.json").write_text(json.dumps(meta), "utf-8")
    return complete_benchmark(folder)  # facts, entities, candidates...: probe refuses partial benchmarks



def cloze_rows(rows, template_id=None):
    return [r for r in rows if r["kind"] == "cloze" and (template_id is None or r["template_id"] == template_id)]


def prompts_of(rows: list[dict] | list[Prompt]) -> list[Prompt]:
    """Benchmark rows as the probe's input records (records, as ``read_prompts`` gives them, pass through)."""
    return [r if isinstance(r, Prompt) else prompt_from_row(r) for r in rows]


def p_at_1(rankings, rows, split):
    picked = [o.correct_at_1 for o, r in zip(rankings, rows, strict=True) if r["split"] == split]
    return sum(picked) / len(picked)


CHANCE = 1 / len(CAPITALS)


def question_examples(rows: list[dict], splits=("train",)) -> list:
    """Question prompts followed by their answer, for generative training."""
    from factatlas.probe.tiny import ClozeExample

    return [ClozeExample(r["text"] + " " + ANSWER_MARKER, r["gold_forms"][0][0])
            for r in rows if r["kind"] == "question" and r["split"] in splits]
