"""The multi-parallel invariant of a benchmark, part of the contract: checked at the end of every build
(``factatlas.builder.invariants.check_content``), by `factatlas validate-benchmark DIR`, and by
``factatlas.benchmark.require_valid`` before probe and report compute a number.

Every language has exactly the same facts and, per fact, the same candidate QIDs in the same order and the
same gold QIDs; each language carries the templates (paraphrases) it has, so template sets may differ
between languages, but a template has one kind everywhere; every gold is among its candidates; cloze texts
hold the answer marker exactly once at ``answer_start``. Each violation names the row and the rule.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factatlas.records import ANSWER_MARKER, Fact, id_order

# Columns that describe the fact/template, not the language: they must agree across languages.
PARALLEL_COLUMNS = ("kind", "pair", "culture", "predicate", "split", "subject_qid", "gold_qids", "candidate_qids")
CANDIDATE_MODES = ("predicate", "sampled")


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str  # stable code, e.g. "missing-language", "gold-not-in-candidates"
    where: str  # the prompt id, fact id or file concerned
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.where}: {self.message}"


def format_violations(violations: Sequence[Violation], limit: int = 50) -> str:
    lines = [f"  {v}" for v in violations[:limit]]
    if len(violations) > limit:
        counts: dict[str, int] = defaultdict(int)
        for v in violations:
            counts[v.rule] += 1
        lines.append(f"  ... and {len(violations) - limit} more; per rule: "
                     + ", ".join(f"{k}={n}" for k, n in sorted(counts.items())))
    return "\n".join(lines)


def check_benchmark_rows(meta: Mapping[str, Any], prompts: Sequence[Mapping[str, Any]], facts: Sequence[Fact],
                         entity_qids: Iterable[str], candidates: Sequence[Mapping[str, Any]] = ()) -> list[Violation]:
    """All invariant violations of a benchmark held as rows (empty list = valid)."""
    out: list[Violation] = []
    if not prompts or not facts:
        # every other rule holds vacuously for no rows; a benchmark nobody can probe is never valid
        out.append(Violation("empty", "prompts.parquet" if not prompts else "facts.parquet",
                             f"the benchmark holds {len(facts)} facts and {len(prompts)} prompts; an empty "
                             "benchmark is never valid. Rebuild it: `factatlas build RUN --langs ...` names "
                             "the reasons every fact was dropped"))
    out += _check_meta(meta)
    languages = tuple(meta.get("languages", ()))
    out += _check_rows(prompts, meta)
    out += _check_parallel(prompts, languages, meta)
    out += _check_facts(prompts, facts)
    entity_qids = set(entity_qids)
    distinct_lists = {id(p["candidate_qids"]): p["candidate_qids"] for p in prompts}
    referenced = {p["subject_qid"] for p in prompts}.union(*distinct_lists.values())
    missing = sorted(referenced - entity_qids)
    for q in missing[:20]:
        out.append(Violation("entity-missing", q, "referenced by prompts but absent from entities.parquet"))
    if len(missing) > 20:
        out.append(Violation("entity-missing", "entities.parquet", f"{len(missing) - 20} more QIDs missing"))
    out += _check_candidate_pool(prompts, candidates, languages)
    return out


def _check_meta(meta: Mapping[str, Any]) -> list[Violation]:
    out = []
    for key in ("schema_version", "name", "pair", "cultures", "languages", "templates", "candidate_mode",
                "k", "splits", "source", "toolkit_version"):
        if key not in meta:
            out.append(Violation("meta-key-missing", "benchmark.json", f"key '{key}' is missing"))
    if meta.get("candidate_mode") not in CANDIDATE_MODES:
        out.append(Violation("meta-candidate-mode", "benchmark.json",
                             f"candidate_mode {meta.get('candidate_mode')!r} is not one of {CANDIDATE_MODES}"))
    langs = meta.get("languages") or []
    if not langs:
        out.append(Violation("meta-languages", "benchmark.json", "no languages"))
    templates = meta.get("templates", {})
    if set(templates) != set(langs):
        out.append(Violation("meta-templates", "benchmark.json",
                             f"templates are listed for {sorted(templates)} but languages are {sorted(langs)}"))
    return out


def _check_rows(prompts: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> list[Violation]:
    out = []
    sets: dict[int, tuple[Any, frozenset]] = {}  # candidate lists are shared between rows: check each once
    languages = set(meta.get("languages", ()))
    templates = {lang: set(t) for lang, t in meta.get("templates", {}).items()}
    split_names = set((meta.get("splits") or {}).get("fractions", {}))
    seen: set[str] = set()
    previous = None
    for p in prompts:
        pid = p["prompt_id"]
        expected = f"{p['fact_id']}|{p['lang']}|{p['template_id']}"
        if pid != expected:
            out.append(Violation("prompt-id", pid, f"expected '{expected}'"))
        if pid in seen:
            out.append(Violation("duplicate-prompt", pid, "prompt id appears more than once"))
        seen.add(pid)
        if previous is not None and pid < previous:
            out.append(Violation("unsorted", pid, f"rows are not sorted by prompt_id (after '{previous}')"))
        previous = pid
        if p["lang"] not in languages:
            out.append(Violation("unknown-language", pid, f"language '{p['lang']}' is not in benchmark.json"))
        elif p["template_id"] not in templates.get(p["lang"], ()):
            out.append(Violation("unknown-template", pid, f"template '{p['template_id']}' is not listed for "
                                                          f"'{p['lang']}' in benchmark.json"))
        if split_names and p["split"] not in split_names:
            out.append(Violation("unknown-split", pid, f"split '{p['split']}' not in {sorted(split_names)}"))
        cands = p["candidate_qids"]
        if id(cands) not in sets:
            sets[id(cands)] = (cands, frozenset(cands))
        out += _check_one_prompt(p, sets[id(cands)][1])
    return out


def _check_one_prompt(p: Mapping[str, Any], cand_set: frozenset) -> list[Violation]:
    out = []
    pid, text, kind = p["prompt_id"], p["text"], p["kind"]
    if kind == "cloze":
        if text.count(ANSWER_MARKER) != 1:
            out.append(Violation("answer-marker", pid, f"cloze text must hold {ANSWER_MARKER} exactly once: {text!r}"))
        elif p["answer_start"] != text.find(ANSWER_MARKER):
            out.append(Violation("answer-start", pid, f"answer_start {p['answer_start']} but the marker is at "
                                                      f"{text.find(ANSWER_MARKER)}"))
    elif kind == "question":
        if ANSWER_MARKER in text or p["answer_start"] != -1:
            out.append(Violation("answer-marker", pid, "a question has no answer marker and answer_start -1"))
    else:
        out.append(Violation("kind", pid, f"kind {kind!r} is neither 'cloze' nor 'question'"))
    if not text.strip():
        out.append(Violation("empty-text", pid, "prompt text is empty"))
    golds, cands = list(p["gold_qids"]), list(p["candidate_qids"])
    if not golds:
        out.append(Violation("no-gold", pid, "gold_qids is empty"))
    if len(cand_set) != len(cands):
        out.append(Violation("duplicate-candidate", pid, "candidate_qids holds a QID twice"))
    lost = [q for q in golds if q not in cand_set]
    if lost:
        out.append(Violation("gold-not-in-candidates", pid, f"gold {', '.join(lost)} not among the candidates"))
    if len(p["candidate_forms"]) != len(cands):
        out.append(Violation("candidate-forms", pid, f"{len(p['candidate_forms'])} forms for {len(cands)} candidates"))
    elif not all(p["candidate_forms"]):
        out.append(Violation("candidate-forms", pid, "a candidate form is empty"))
    if len(p["gold_forms"]) != len(golds) or any(not forms or not forms[0] for forms in p["gold_forms"]):
        out.append(Violation("gold-forms", pid, "gold_forms must give non-empty forms for every gold QID"))
    return out


def _check_parallel(prompts: Sequence[Mapping[str, Any]], languages: Sequence[str],
                    meta: Mapping[str, Any]) -> list[Violation]:
    """Facts, candidates and golds identical in every language; a template's kind the same everywhere.
    Template sets may differ: a language carries the paraphrases it has."""
    out = []
    first: dict[str, tuple[str, Mapping[str, Any]]] = {}  # fact -> (language, a row of it): the reference
    kinds: dict[tuple[str, str], tuple[str, str]] = {}  # (fact, template) -> (language, kind)
    facts_per_lang: dict[str, set[str]] = defaultdict(set)
    reported: set[tuple[str, str]] = set()
    for p in prompts:  # sorted by prompt_id: a fact's rows, language by language
        fid, lang = p["fact_id"], p["lang"]
        facts_per_lang[lang].add(fid)
        ref_lang, ref = first.setdefault(fid, (lang, p))
        for col in PARALLEL_COLUMNS:
            if col == "kind" or p[col] is ref[col] or (fid, col) in reported:
                continue
            if list_or_value(p[col]) != list_or_value(ref[col]):
                reported.add((fid, col))
                out.append(Violation(f"differs:{col}", p["prompt_id"],
                                     f"{col} in '{lang}' = {p[col]!r} differs from '{ref_lang}' = {ref[col]!r} "
                                     "(a fact has one value in every language and template)"))
        kind_lang, kind = kinds.setdefault((fid, p["template_id"]), (lang, p["kind"]))
        if p["kind"] != kind:
            out.append(Violation("differs:kind", p["prompt_id"], f"kind in '{lang}' = {p['kind']!r} differs from "
                                                                 f"'{kind_lang}' = {kind!r}"))
    fact_sets = {lang: frozenset(facts_per_lang.get(lang, ())) for lang in languages}
    union = frozenset().union(*fact_sets.values()) if fact_sets else frozenset()
    for fid in sorted(union):
        absent = [lang for lang in languages if fid not in fact_sets[lang]]
        if absent:
            present = [lang for lang in languages if fid in fact_sets[lang]]
            out.append(Violation("missing-language", fid, f"no row for {', '.join(absent)} "
                                                          f"(present: {', '.join(present)})"))
    used: dict[str, set[str]] = defaultdict(set)
    for p in prompts:
        used[p["lang"]].add(p["template_id"])
    for lang, listed in sorted((meta.get("templates") or {}).items()):
        idle = sorted(set(listed) - used.get(lang, set()))
        if idle and lang in fact_sets:
            out.append(Violation("template-without-rows", lang, f"benchmark.json lists {', '.join(idle)} for "
                                                                f"'{lang}' but no {lang} prompt uses it"))
    for lang, fs in sorted(fact_sets.items()):
        if fs != union:
            lost = sorted(union - fs)
            out.append(Violation("facts-differ", lang, f"{len(lost)} facts missing in '{lang}', e.g. {lost[:3]}"))
    excluded = meta.get("subject_candidate", "kept") == "excluded"
    if excluded:
        out += _subject_candidates(prompts)
    if meta.get("candidate_mode") == "predicate":
        per_pred: dict[str, set[tuple[tuple[str, ...], str]]] = defaultdict(set)
        seen_lists: set[tuple[int, str]] = set()
        for p in prompts:
            # shared lists: hash each distinct object once (per subject: a list may lack its subject)
            key = (id(p["candidate_qids"]), p["subject_qid"] if excluded else "")
            if key not in seen_lists:
                seen_lists.add(key)
                per_pred[p["predicate"]].add((tuple(p["candidate_qids"]), key[1]))
        for pred, lists in sorted(per_pred.items()):
            if excluded:
                # one list per predicate less the fact's subject: put each subject back, then compare
                members = {q for cands, _ in lists for q in cands}
                sets = {cands if subject in cands or subject not in members
                        else tuple(sorted((*cands, subject), key=lambda q: (id_order(q), q)))
                        for cands, subject in lists}
            else:
                sets = {cands for cands, _ in lists}
            if len(sets) > 1:
                out.append(Violation("predicate-candidates-differ", pred,
                                     f"candidate_mode 'predicate' but {len(sets)} different candidate lists"
                                     + (" (each with its subject restored)" if excluded else "")))
    return out


def _subject_candidates(prompts: Sequence[Mapping[str, Any]]) -> list[Violation]:
    """benchmark.json says subjects are excluded from their candidates: a prompt that offers its subject
    (and not as a gold of its fact) breaks it."""
    out = []
    for p in prompts:
        if p["subject_qid"] in p["candidate_qids"] and p["subject_qid"] not in p["gold_qids"]:
            out.append(Violation("subject-among-candidates", p["prompt_id"],
                                 f"the subject {p['subject_qid']} is one of its own candidates"))
            if len(out) >= 20:
                break
    return out


def list_or_value(v: Any) -> Any:
    if isinstance(v, tuple):
        return v
    return tuple(v) if isinstance(v, list) else v


def _check_facts(prompts: Sequence[Mapping[str, Any]], facts: Sequence[Fact]) -> list[Violation]:
    out = []
    by_id = {f.id: f for f in facts}
    if len(by_id) != len(facts):
        out.append(Violation("duplicate-fact", "facts.parquet", "a fact id appears more than once"))
    prompted = {p["fact_id"] for p in prompts}
    for fid in sorted(prompted - by_id.keys())[:20]:
        out.append(Violation("fact-missing", fid, "prompted but absent from facts.parquet"))
    for fid in sorted(by_id.keys() - prompted)[:20]:
        out.append(Violation("fact-unprompted", fid, "in facts.parquet but has no prompt"))
    seen: set[tuple[str, str]] = set()
    for p in prompts:
        f = by_id.get(p["fact_id"])
        if f is None or (p["fact_id"], p["template_id"]) in seen:
            continue
        seen.add((p["fact_id"], p["template_id"]))
        stray = [q for q in p["gold_qids"] if q not in f.object_qids]
        if stray:
            out.append(Violation("gold-not-valid", p["prompt_id"], f"gold {stray} not among the fact's objects"))
        if p["predicate"] != f.predicate or p["culture"] != f.culture or p["subject_qid"] != f.subject:
            out.append(Violation("fact-mismatch", p["prompt_id"], "predicate/culture/subject differ from facts.parquet"))
    return out


def _check_candidate_pool(prompts: Sequence[Mapping[str, Any]], candidates: Sequence[Mapping[str, Any]],
                          languages: Sequence[str]) -> list[Violation]:
    if not candidates:
        return [Violation("candidates-empty", "candidates.parquet", "no candidate pool rows")] if prompts else []
    out = []
    pool: dict[tuple[str, str], set[str]] = defaultdict(set)
    for c in candidates:
        pool[(c["predicate"], c["lang"])].add(c["qid"])
        if not c["label"]:
            out.append(Violation("candidate-label", f"{c['predicate']}|{c['lang']}|{c['qid']}", "empty label"))
    preds = sorted({pred for pred, _ in pool})
    for pred in preds:
        sets = {lang: frozenset(pool.get((pred, lang), ())) for lang in languages}
        if len(set(sets.values())) > 1:
            out.append(Violation("pool-differs", pred, "candidate pool QIDs differ between languages: "
                                 + ", ".join(f"{lang}={len(s)}" for lang, s in sorted(sets.items()))))
    reported: set[str] = set()
    checked: set[tuple[int, str, str]] = set()
    for p in prompts:
        key = (id(p["candidate_qids"]), p["predicate"], p["lang"])
        if key in checked:
            continue
        checked.add(key)
        stray = set(p["candidate_qids"]) - pool.get((p["predicate"], p["lang"]), set())
        if stray and p["predicate"] not in reported:
            reported.add(p["predicate"])
            out.append(Violation("candidate-not-in-pool", p["prompt_id"],
                                 f"{sorted(stray)[:5]} not in candidates.parquet for {p['predicate']}/{p['lang']}"))
    return out


def check_directory(path: str | os.PathLike) -> list[Violation]:
    """Load a benchmark from disk (a run directory, a benchmark directory or a release folder, found as
    ``Benchmark.open`` finds it) and return all violations (schemas included)."""
    import json

    from factatlas.benchmark import (
        BENCHMARK_FILES,
        Benchmark,
        BenchmarkError,
        Location,
        locate,
        meta_type_errors,
    )
    from factatlas.tables import (
        CANDIDATES_SCHEMA,
        DROPS_SCHEMA,
        ENTITIES_SCHEMA,
        ENTITIES_SCHEMA_V1,
        FACTS_SCHEMA,
        LABELS_SCHEMA,
        PROMPTS_SCHEMA,
        UnreadableTable,
        read_parquet_schema,
    )

    try:  # where Benchmark.open finds it: a run's build/, a benchmark directory, a release's shards
        where = locate(path)
    except BenchmarkError:  # not recognisable as a benchmark: list what is missing in the folder itself
        where = Location(Path(path), (Path(path) / "prompts.parquet",), None)
    path = where.benchmark
    side_names = [n for n in BENCHMARK_FILES if n != "prompts.parquet"]
    missing = [path / n for n in side_names if not (path / n).exists()]
    missing += [p for p in where.prompt_files if not p.exists()]
    if missing:
        return [Violation("file-missing", str(p), "required file is missing") for p in missing]
    schemas = {**{p: PROMPTS_SCHEMA for p in where.prompt_files}, path / "facts.parquet": FACTS_SCHEMA,
               path / "entities.parquet": ENTITIES_SCHEMA, path / "labels.parquet": LABELS_SCHEMA,
               path / "candidates.parquet": CANDIDATES_SCHEMA, path / "dropped.parquet": DROPS_SCHEMA}
    out = []
    for file, schema in schemas.items():
        try:
            found = read_parquet_schema(file)
        except UnreadableTable as e:
            out.append(Violation("unreadable", str(file), str(e).split(": ", 1)[1]))
            continue
        if not found.equals(schema, check_metadata=False) and not (
                schema is ENTITIES_SCHEMA and found.equals(ENTITIES_SCHEMA_V1, check_metadata=False)):
            out.append(Violation("schema", str(file), f"schema differs from the contract: {found}"))
    if out:
        return out
    try:
        meta = json.loads((path / "benchmark.json").read_text("utf-8"))
    except ValueError as e:
        return [Violation("meta-json", str(path / "benchmark.json"), f"not valid JSON: {e}")]
    if meta_type_errors(meta):  # the checks below read these keys
        return [Violation("meta-type", str(path / "benchmark.json"), problem) for problem in meta_type_errors(meta)]
    try:
        bench = Benchmark(where, meta)
        prompts, entities = bench.prompts, bench.entities
        out += check_benchmark_rows(meta, prompts, bench.facts, entities.keys(), bench.candidates)
    except UnreadableTable as e:  # a damaged row group past a readable footer
        where, _, message = str(e).partition(": ")
        return [Violation("unreadable", where, message)]
    except BenchmarkError as e:
        return [Violation("unreadable", str(path), str(e))]
    for p in prompts:
        e = entities.get(p["subject_qid"])
        if e is not None and p["subject_label"] and e.labels.get(p["lang"]) not in (None, p["subject_label"]):
            out.append(Violation("subject-label", p["prompt_id"], "subject_label differs from labels.parquet"))
            break
    return out
