"""BMLAMA-17 / BMLAMA-53 (Qi, Fernández & Bisazza, EMNLP 2023) -> factatlas benchmark.

Layout: ``<root>/<lang>.tsv``, header ``Prompt	Ans	Candidate Ans	Subject`` (BMLAMA17/zh.tsv spells it
with an extra tab); row i is the same query in every language, candidates are joined by ``", "`` and
candidate j is the translation of candidate j in every language; the gold is the last candidate.

The files carry no QIDs and no relation ids, so the importer derives them:
- an entity is identified by its labels in every language (row-aligned candidates), its id is
  ``bm:`` + the first 12 hex digits of sha256 of those labels — stable across re-imports;
- a relation is identified by its English pattern (``[X] was born in [Y].``), its id is a slug of the
  pattern's words (``was-born-in``).

Defects in the published files are detected and recorded as Drops (step "import"), never imported:
- ``csv-quote-defect:<lang>``: fields written with CSV quoting into a TSV read without it — the gold or
  a candidate keeps a stray ``"`` (BMLAMA17/he: 134 rows, BMLAMA53/he: 44 rows; the same rows as
  ``known_data_defects.json``). The whole query is dropped from every language.
- ``label-truncated:<lang>``: a label cut at ``", "`` upstream, visible as an unclosed bracket
  (``Miami (kapital sa kondado sa Estados Unidos``). The candidate leaves that query in every language;
  the query is dropped when it is the gold.
- ``gold-not-in-candidates:<lang>``, ``mask-count:<lang>``: malformed rows (dropped).
With ``as_published=True`` (``factatlas import bmlama PATH --as-published``) nothing is dropped: every
query keeps its published prompt, gold field and candidate list unchanged (gold = the last candidate, as
the files lay it out), and the rows the default mode would drop are flagged instead, per fact id and
reason, in benchmark.json (``source.defects.flagged`` and ``flagged_queries``). Published numbers were
computed on exactly these rows, so they can be reproduced from such an import; probe the default import.
Labels that keep a comma in a script whose comma is not ``", "`` (Arabic ``،``) while other languages
have one short label are counted as *suspected* truncations (reported in benchmark.json, kept).
Prompt and subject fields that are correctly CSV-quoted (``"נאט""ו"``) are decoded and counted.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from factatlas.builder.importers.common import gc_paused
from factatlas.errors import ConfigError
from factatlas.records import ANSWER_MARKER, Culture, Drop, Entity, Fact, ObjectRef, Prompt, frozen_mapping

STEP = "import"
MASK = "<mask>"
SEPARATOR = ", "
CULTURE = "global"  # BMLAMA facts are not split by culture
BRACKETS = (("(", ")"), ("[", "]"), ("（", "）"), ("«", "»"))
COMMAS = ("،", "，", "、")


@dataclass(frozen=True, slots=True)
class BmlamaRow:
    lang: str
    index: int  # 0-based query index (same query in every language)
    line: int  # 1-based line in the file
    prompt: str
    gold: str
    candidates: tuple[str, ...]
    subject: str
    raw_gold: str
    raw_candidates: str


@dataclass(frozen=True)
class BmlamaData:
    name: str  # "bmlama17" | "bmlama53" | the folder name
    folder: Path
    languages: tuple[str, ...]
    rows: Mapping[str, tuple[BmlamaRow, ...]]  # lang -> rows
    decoded_fields: Mapping[str, int]  # lang -> correctly CSV-quoted prompt/subject fields decoded

    @property
    def queries(self) -> int:
        return len(self.rows[self.languages[0]])

    def counts(self) -> dict[str, dict[str, int]]:
        """lang -> {"queries", "candidates"} as published (before any drop)."""
        return {lang: {"queries": len(rows), "candidates": sum(len(r.candidates) for r in rows)}
                for lang, rows in self.rows.items()}


def unquote_csv_field(field: str) -> tuple[str, bool]:
    """``"a ""b"" c"`` -> ``a "b" c`` when the whole field is CSV-quoted; else unchanged."""
    if len(field) >= 2 and field[0] == '"' and field[-1] == '"':
        inner = field[1:-1]
        if '"' not in inner.replace('""', ""):
            return inner.replace('""', '"'), True
    return field, False


def read_tsv(path: Path, lang: str) -> tuple[tuple[BmlamaRow, ...], int]:
    rows: list[BmlamaRow] = []
    decoded = 0
    with open(path, encoding="utf-8", newline="") as fh:
        for n, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            if not line:
                continue
            fields = line.split("\t")
            if fields[0] == "Prompt":  # header (BMLAMA17/zh.tsv's has an extra tab)
                continue
            if len(fields) != 4:
                raise ConfigError(f"expected 4 tab-separated fields, found {len(fields)}", str(path), n)
            prompt, gold, raw_candidates, subject = fields
            if prompt[:1] == '"':  # only a field that opens with a quote can be CSV-quoted
                prompt, p_dec = unquote_csv_field(prompt)
                decoded += p_dec
            if subject[:1] == '"':
                subject, s_dec = unquote_csv_field(subject)
                decoded += s_dec
            rows.append(BmlamaRow(lang, len(rows), n, prompt, gold, tuple(raw_candidates.split(SEPARATOR)), subject,
                                  gold, raw_candidates))
    return tuple(rows), decoded


def read_bmlama(path: str | os.PathLike) -> BmlamaData:
    folder = Path(path)
    files = sorted(folder.glob("*.tsv"))
    if not files:
        raise ConfigError(f"{folder}: no <lang>.tsv files; pass a BMLAMA17 or BMLAMA53 folder")
    rows: dict[str, tuple[BmlamaRow, ...]] = {}
    decoded: dict[str, int] = {}
    for f in files:
        rows[f.stem], decoded[f.stem] = read_tsv(f, f.stem)
    sizes = {lang: len(r) for lang, r in rows.items()}
    if len(set(sizes.values())) != 1:
        raise ConfigError(f"{folder}: languages have different numbers of queries: {sizes}; rows must align")
    langs = tuple(sorted(rows))
    if "en" not in rows:
        raise ConfigError(f"{folder}: en.tsv is needed to name the relations")
    per_lang = {lang: [len(r.candidates) for r in rows[lang]] for lang in langs}
    first = per_lang[langs[0]]
    misaligned = [next(i for i, (a, b) in enumerate(zip(first, n, strict=True)) if a != b)
                  for n in per_lang.values() if n != first]
    if misaligned:
        i = min(misaligned)
        counts = {lang: per_lang[lang][i] for lang in langs}
        raise ConfigError(f"{folder}: query {i + 1} has different candidate counts per language: {counts}")
    return BmlamaData(folder.name.lower(), folder, langs, rows, decoded)


_BRACKET_RE = re.compile("[" + re.escape("".join(o + c for o, c in BRACKETS)) + "]")


@lru_cache(maxsize=1 << 16)
def unbalanced(label: str) -> bool:
    """An unclosed bracket: the label was cut at ", " upstream."""
    return bool(_BRACKET_RE.search(label)) and any(label.count(o) != label.count(c) for o, c in BRACKETS)


def relation_pattern(row: BmlamaRow) -> str:
    prompt = row.prompt.replace(MASK, "[Y]")
    return prompt.replace(row.subject, "[X]", 1) if row.subject in prompt else prompt


def slug(pattern: str) -> str:
    words = re.findall(r"[a-z0-9]+", pattern.replace("[X]", " ").replace("[Y]", " ").lower())
    return "-".join(words)[:48] or "relation"


def entity_id(labels: Sequence[str]) -> str:
    return "bm:" + hashlib.sha256("\x1f".join(labels).encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Converted:
    facts: list[Fact]
    entities: dict[str, Entity]
    prompts: list[Prompt]
    candidates: list[dict[str, Any]]
    drops: list[Drop]
    relations: dict[str, str]  # relation id -> English pattern
    defects: dict[str, Any]


def row_defects(data: BmlamaData, i: int) -> tuple[list[tuple[str, str]], dict[int, tuple[str, str]]]:
    """(reason, detail) that drop query i; and candidate position -> (reason, detail) for removed candidates."""
    query: list[tuple[str, str]] = []
    cands: dict[int, tuple[str, str]] = {}
    for lang in data.languages:
        r = data.rows[lang][i]
        if '"' in r.raw_gold or '"' in r.raw_candidates:
            query.append((f"csv-quote-defect:{lang}", f"line {r.line}: gold {r.raw_gold!r}, last candidate "
                                                       f"{r.candidates[-1]!r}"))
            continue
        if r.prompt.count(MASK) != 1:
            query.append((f"mask-count:{lang}", f"line {r.line}: {r.prompt!r}"))
        if r.candidates[-1] != r.gold:
            query.append((f"gold-not-in-candidates:{lang}", f"line {r.line}: gold {r.gold!r} is not the last "
                                                             f"candidate {r.candidates[-1]!r}"))
        if not _BRACKET_RE.search(r.raw_candidates):  # most rows: no bracket, so no candidate can be unbalanced
            continue
        for j, c in enumerate(r.candidates):
            if unbalanced(c) and j not in cands:
                cands[j] = (f"label-truncated:{lang}", f"line {r.line}: {c!r} (cut at ', ')")
    gold_pos = len(data.rows[data.languages[0]][i].candidates) - 1
    if gold_pos in cands:
        query.append(cands.pop(gold_pos))
    return query, cands


def normalise_pattern(pattern: str) -> str:
    """'[X] was born in [Y] .' and '[X] was born in [Y].' compare equal."""
    return re.sub(r"\s+([.,?!])", r"\1", " ".join(pattern.split()))


def relation_names(english_templates: Mapping[str, str]) -> dict[str, str]:
    """Normalised English pattern -> Wikidata PID, from mLAMA's English templates (relation -> text);
    patterns shared by several PIDs (mLAMA's "[X] is located in [Y]" is P17, P30, P131 and P276) are left out."""
    by_pattern: dict[str, set[str]] = defaultdict(set)
    for relation, text in english_templates.items():
        if re.fullmatch(r"P[1-9][0-9]*", relation):
            by_pattern[normalise_pattern(text)].add(relation)
    return {pat: next(iter(pids)) for pat, pids in by_pattern.items() if len(pids) == 1}


class _Entities:
    """Labels in every language -> entity id: one sha256 per entity, not per occurrence. A candidate's labels
    are checked for unsplit commas on first sight (the same labels give the same answer every time)."""

    def __init__(self, langs: Sequence[str]):
        self.langs = tuple(langs)
        self.labels_of: dict[str, dict[str, str]] = {}
        self.candidate_ids: dict[tuple[str, ...], str] = {}
        self.subject_ids: dict[tuple[str, ...], str] = {}
        self.seen_suspect: set[str] = set()
        self.suspected: Counter[str] = Counter()
        self.examples: list[dict[str, Any]] = []

    def candidate(self, labels: tuple[str, ...]) -> str:
        q = self.candidate_ids.get(labels)
        if q is not None:
            return q
        q = self.candidate_ids[labels] = entity_id(labels)
        self.labels_of.setdefault(q, dict(zip(self.langs, labels, strict=True)))
        if q not in self.seen_suspect and any(c in lbl for lbl in labels for c in COMMAS):
            self.seen_suspect.add(q)
            for lang, lbl in zip(self.langs, labels, strict=True):
                if not any(c in lbl for c in (*COMMAS, ",")):
                    self.suspected[lang] += 1
            if len(self.examples) < 5:
                self.examples.append(dict(zip(self.langs, labels, strict=True)))
        return q

    def subject(self, labels: tuple[str, ...]) -> str:
        q = self.subject_ids.get(labels)
        if q is None:
            q = self.subject_ids[labels] = entity_id(labels)
            self.labels_of.setdefault(q, dict(zip(self.langs, labels, strict=True)))
        return q


def _defects(data: BmlamaData, drops: Sequence[Drop], flagged: Mapping[str, list[str]] | None,
             inconsistent: Any, known: _Entities) -> dict[str, Any]:
    """What the import found wrong with the published rows: drops (or, ``as_published``, flags) by reason,
    decoded CSV fields, inconsistent translations and suspected truncated labels."""
    defect_counts = Counter(d.reason for d in drops)
    return {
        "dropped": dict(sorted(defect_counts.items())),
        **({"flagged": dict(sorted(Counter(r for rs in flagged.values() for r in rs).items())),
            "flagged_queries": dict(sorted(flagged.items()))} if flagged is not None else {}),
        "csv_quoted_fields_decoded": dict(sorted((k, v) for k, v in data.decoded_fields.items() if v)),
        "inconsistent_translations": inconsistent,
        "suspected_truncations": {"entities_with_unsplit_comma": len(known.seen_suspect),
                                  "short_label_languages": dict(sorted(known.suspected.items())),
                                  "examples": known.examples},
    }


def convert(data: BmlamaData, names: Mapping[str, str] | None = None, *, as_published: bool = False) -> Converted:
    """``names``: normalised English pattern -> relation id (e.g. from ``relation_names``); other patterns get
    a slug of their words. ``as_published``: keep every row unchanged and flag its defects instead of
    dropping (see the module docstring)."""
    langs = data.languages
    name = data.name
    drops: list[Drop] = []
    patterns: dict[str, str] = {}
    relation_of_pattern: dict[str, str] = {}
    facts: list[Fact] = []
    prompts: list[Prompt] = []
    pools: dict[str, set[str]] = defaultdict(set)
    flagged: dict[str, list[str]] = {}  # as_published: fact id -> reasons the default mode would drop for
    rows_by_lang = [data.rows[lang] for lang in langs]
    known = _Entities(langs)
    labels_of = known.labels_of
    for i in range(data.queries):
        en = data.rows["en"][i]
        row = [rows[i] for rows in rows_by_lang]
        pattern = relation_pattern(en)
        if pattern not in relation_of_pattern:
            rid = (names or {}).get(normalise_pattern(pattern)) or slug(pattern)
            while rid in patterns and patterns[rid] != pattern:
                rid += "-x"
            relation_of_pattern[pattern] = rid
            patterns[rid] = pattern
        pred = relation_of_pattern[pattern]
        fid = f"{name}:{i + 1:05d}"
        query_defects, cand_defects = row_defects(data, i)
        if as_published and (query_defects or cand_defects):
            flagged[fid] = sorted({reason for reason, _ in (*query_defects, *cand_defects.values())})
            query_defects, cand_defects = [], {}
        if query_defects:
            reason, detail = query_defects[0]
            more = f" (+{len(query_defects) - 1} more)" if len(query_defects) > 1 else ""
            drops.append(Drop(fid, STEP, reason, detail + more, CULTURE, pred))
            continue
        n = len(en.candidates)
        ids = [known.candidate(labels) for labels in zip(*(r.candidates for r in row), strict=True)]
        for j, (reason, detail) in sorted(cand_defects.items()):
            drops.append(Drop(f"{fid}|{ids[j]}", STEP, reason, detail, CULTURE, pred))
        keep = [j for j in range(n) if j not in cand_defects]
        subject = known.subject(tuple(r.subject for r in row))
        gold = ids[-1]
        cand_ids = tuple(ids[j] for j in keep)
        if len(set(cand_ids)) != len(cand_ids):
            if as_published:  # a benchmark cannot hold a QID twice in one list; say so rather than alter the row
                raise ConfigError(f"{data.folder}: query {i + 1} ({fid}) lists two candidates with the same labels "
                                  "in every language; it cannot be imported unchanged (import without "
                                  "--as-published to drop it)")
            drops.append(Drop(fid, STEP, "duplicate-candidate", "two candidates have the same labels everywhere",
                              CULTURE, pred))
            continue
        facts.append(Fact(fid, pred, subject, (ObjectRef(gold),), CULTURE, (), 0.0, i + 1))
        pools[pred].update(cand_ids)
        template_id = f"{pred}/1"
        gold_qids = (gold,)
        for lang, r in zip(langs, row, strict=True):
            text = r.prompt.replace(MASK, ANSWER_MARKER)
            prompts.append(Prompt(
                prompt_id=f"{fid}|{lang}|{template_id}", fact_id=fid, lang=lang, template_id=template_id,
                kind="cloze", text=text, answer_start=text.find(ANSWER_MARKER), pair=name,
                culture=CULTURE, predicate=pred, split="test", subject_qid=subject,
                subject_label=r.subject, gold_qids=gold_qids, gold_forms=((r.gold,),),
                candidate_qids=cand_ids,
                candidate_forms=tuple(r.candidates[j] for j in keep) if cand_defects else r.candidates,
                template_status="reviewed", article_langs=(), home_langs=(),
                popularity=0.0, popularity_quantile=0, popularity_log10=-1,
            ))
    entities = {q: Entity(q, frozen_mapping(labels)) for q, labels in labels_of.items()}
    used = {f.subject for f in facts} | {q for qs in pools.values() for q in qs}
    inconsistent = inconsistent_translations((labels for q, labels in labels_of.items() if q in used), langs)
    candidates = [{"predicate": pred, "lang": lang, "qid": q, "label": labels_of[q][lang]}
                  for pred, qs in sorted(pools.items()) for q in sorted(qs) for lang in langs]
    defects = _defects(data, drops, flagged if as_published else None, inconsistent, known)
    return Converted(facts, entities, prompts, candidates, drops, patterns, defects)


def with_cultures(conv: Converted, cultures: Sequence[Culture]) -> tuple[Converted, dict[str, int]]:
    """``conv`` with the facts whose subject's countries are known from English labels moved from
    ``global`` to their culture (prompts follow their fact); the outcome counts."""
    from dataclasses import replace

    from factatlas.builder.audit import cultures_from_country_labels
    from factatlas.predicates import load_predicates

    english = {q: e.labels.get("en", "") for q, e in conv.entities.items()}
    facts, outcome = cultures_from_country_labels(conv.facts, english, load_predicates(), cultures)
    culture_of = {f.id: f.culture for f in facts}
    prompts = [p if culture_of.get(p.fact_id, CULTURE) == p.culture else replace(p, culture=culture_of[p.fact_id])
               for p in conv.prompts]
    return replace(conv, facts=facts, prompts=prompts), dict(sorted(outcome.items()))


def inconsistent_translations(signatures, langs: Sequence[str], used: set[str] | None = None,
                              examples: int = 5) -> dict[str, Any]:
    """English labels whose translation differs between rows, per language (reported, not dropped).

    Candidate j of a row is the translation of candidate j in every language, so one English label should
    have one translation per language; BMLAMA17/el renders "Detroit" as «Βερολίνο» (Berlin) in some rows.
    """
    per_en: dict[str, list[Mapping[str, str]]] = defaultdict(list)
    for labels in signatures:
        if used is not None and entity_id([labels[lang] for lang in langs]) not in used:
            continue
        per_en[labels["en"]].append(labels)
    # an English label that names one entity has one translation per language: only shared ones can vary
    varying: dict[str, dict[str, set[str]]] = {}
    for en, group in per_en.items():
        if len(group) > 1:
            forms = {lang: {labels[lang] for labels in group} for lang in langs}
            varying[en] = {lang: v for lang, v in forms.items() if len(v) > 1}
    counts = {lang: sum(1 for by_lang in varying.values() if lang in by_lang) for lang in langs if lang != "en"}
    shown = [{"en": en, **{lang: sorted(v) for lang, v in sorted(by_lang.items())}}
             for en, by_lang in sorted(varying.items()) if by_lang][:examples]
    return {"english_labels": len(per_en), "varying_per_language": {k: v for k, v in sorted(counts.items()) if v},
            "examples": shown}


@gc_paused
def import_bmlama(path: str | os.PathLike, *, out: str | os.PathLike | None = None, write: bool = True,
                  mlama_templates: str | os.PathLike | None = None, as_published: bool = False,
                  cultures: Sequence[Culture] = ()):
    """BMLAMA folder -> benchmark directory ``<out>/build/`` (default ``runs/<bmlama17|bmlama53>``, or
    ``runs/<bmlama17|bmlama53>-as-published`` with ``as_published``: every row unchanged, defects flagged).

    With ``mlama_templates`` (mLAMA's ``en.jsonl``), relations whose English pattern is one mLAMA relation
    get its PID (``P19``) instead of a slug, so results line up with DLAMA/mLAMA per predicate. With
    ``cultures``, facts whose subject's countries are known from the English labels of the country sides
    (``builder.audit.cultures_from_country_labels``; needs the PIDs, so ``mlama_templates``) get that
    country's culture instead of ``global``."""
    from datetime import UTC, datetime

    from factatlas.builder.importers.common import default_out, write_import

    started = datetime.now(UTC)
    result = bmlama_benchmark(read_bmlama(path), path=path, mlama_templates=mlama_templates,
                              as_published=as_published, cultures=cultures)
    if write:
        write_import(out or default_out(result.content.meta["name"]), result.content, started=started,
                     config={"importer": "bmlama", "path": str(path), "as_published": as_published,
                             **({"cultures": [c.name for c in cultures]} if cultures else {})}, counts=result.counts)
    return result


def bmlama_benchmark(data: BmlamaData, *, path: str | os.PathLike | None = None,
                     mlama_templates: str | os.PathLike | None = None, as_published: bool = False,
                     cultures: Sequence[Culture] = ()):
    """The benchmark content and counts ``import_bmlama`` writes, from files already read (``read_bmlama``);
    ``path`` is the folder recorded in benchmark.json (default ``data.folder``)."""
    from factatlas.builder.benchmark import SCHEMA_VERSION, BenchmarkContent
    from factatlas.builder.build import (
        BuildResult,
        ambiguous_prompts,
        display_labels,
        drop_counts,
        toolkit_version,
    )
    from factatlas.builder.candidates import collision_report, pool_collisions
    from factatlas.builder.stats import compute_stats

    path = data.folder if path is None else path
    names = None
    if mlama_templates is not None:
        from factatlas.builder.importers.dlama import read_mlama_templates

        names = relation_names(read_mlama_templates(mlama_templates, ["en"])["en"])
    conv = convert(data, names, as_published=as_published)
    langs = data.languages
    assigned: dict[str, int] = {}
    if cultures:
        conv, assigned = with_cultures(conv, cultures)
    present = sorted({f.culture for f in conv.facts}, key=lambda c: (c == CULTURE, c == "west", c)) or [CULTURE]
    name = f"{data.name}-as-published" if as_published else data.name
    pools: dict[str, list[str]] = defaultdict(list)
    for c in conv.candidates:
        if c["lang"] == langs[0]:
            pools[c["predicate"]].append(c["qid"])
    labels = {q: dict(e.labels) for q, e in conv.entities.items()}
    stats = compute_stats(conv.facts, conv.prompts, conv.entities, langs, extra={
        "duplicate_surface_forms": collision_report(pool_collisions(pools, labels, langs)),
        "prompts_with_ambiguous_candidates": ambiguous_prompts(conv.prompts, langs),
        "dropped": drop_counts(conv.drops),
        **({"flagged": conv.defects["flagged"]} if as_published else {})})
    template_ids = sorted({p.template_id for p in conv.prompts})
    meta = {
        "schema_version": SCHEMA_VERSION, "name": name, "pair": data.name, "cultures": present,
        "languages": list(langs), "templates": {lang: template_ids for lang in langs},
        "candidate_mode": "sampled", "subject_candidate": "kept", "k": max((len(p.candidate_qids) for p in conv.prompts), default=0),
        "seed": None,
        "splits": {"method": "imported whole", "fractions": {"test": 1.0}, "counts": {"test": len(conv.facts)}},
        "source": {"kind": "bmlama", "path": str(path), "variant": data.name,
                   "mode": ("as-published: every row unchanged, gold = last candidate; defects flagged in "
                            "defects.flagged_queries" if as_published else "known defects dropped"),
                   "published_counts": data.counts(),
                   "relations": conv.relations, "defects": conv.defects,
                   "candidate_order": "as published (gold last)",
                   **({"cultures_from_countries": assigned} if cultures else {}),
                   "citation": "Qi, Fernández & Bisazza (2023), Cross-Lingual Consistency of Factual Knowledge in "
                               "Multilingual Language Models, EMNLP 2023."},
        "toolkit_version": toolkit_version(),
        "counts": {"facts": len(conv.facts), "prompts": len(conv.prompts), "dropped": len(conv.drops)},
        **display_labels(conv.facts, conv.entities),
    }
    content = BenchmarkContent(meta, conv.prompts, conv.facts, list(conv.entities.values()), conv.candidates,
                               conv.drops, stats)
    counts = {"input_queries": data.queries, "facts": len(conv.facts), "prompts": len(conv.prompts),
              "dropped": len(conv.drops)}
    if as_published:
        counts["flagged"] = len(conv.defects["flagged_queries"])
    return BuildResult(content, counts)
