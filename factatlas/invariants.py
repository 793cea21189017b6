"""The multi-parallel invariant of a benchmark, part of the contract: checked at the end of every build
(``factatlas.builder.invariants.check_content``), by `factatlas validate-benchmark DIR`
(``factatlas.validation.check_directory``), and by ``factatlas.validation.require_valid`` before probe and
report compute a number.

Every language has exactly the same facts and, per fact, the same candidate QIDs in the same order and the
same gold QIDs; each language carries the templates (paraphrases) it has, so template sets may differ
between languages, but a template has one kind everywhere; every gold is among its candidates; cloze texts
hold the answer marker exactly once at ``answer_start``. Each violation names the row and the rule.

The rules run as one streaming pass (``InvariantScan``) over the prompts in prompt_id order, fed a batch at
a time, beside lookups into the side tables (``SideTables``). In that order all rows of a fact are
contiguous (every prompt id of fact F starts with ``F|``), so what the parallel rules compare is held for
one fact at a time; across the benchmark the pass keeps a few bits per fact (the languages it has rows in),
per-language template sets, the distinct candidate lists of each predicate and the violations themselves,
never a row per prompt. A file that is not sorted is rejected (``unsorted``); a fact whose rows come back
after another fact's is then checked again as far as its later rows go, and duplicated ids among those rows
are found by a second pass over the id column (``recount``).
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from factatlas.records import ANSWER_MARKER, Fact, Prompt, id_order

# Columns that describe the fact/template, not the language: they must agree across languages.
PARALLEL_COLUMNS = ("kind", "pair", "culture", "predicate", "split", "subject_qid", "gold_qids", "candidate_qids")
CANDIDATE_MODES = ("predicate", "sampled")
# the sections of the report, in the order violations are listed
SECTIONS = ("empty", "meta", "rows", "parallel", "parallel-end", "facts-head", "facts", "entities", "pool",
            "pool-rows", "labels")
CHECKED_LISTS = 4096  # candidate lists whose entities were checked, remembered (then forgotten, and rechecked)


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


@dataclass(frozen=True, slots=True)
class FactRef:
    """What the rules compare a fact's prompts with (a row of facts.parquet)."""

    predicate: str
    culture: str
    subject: str
    object_qids: frozenset[str]


class SideTables(Protocol):
    """The side tables as the scan looks them up: facts by id (and all of them in id order), entities,
    labels. ``MemorySide`` holds records; ``factatlas.validation`` reads the files into compact indexes."""

    fact_count: int
    duplicate_fact: bool

    def fact_row(self, fact_id: str) -> int: ...  # -1: not in facts
    def fact_at(self, row: int) -> FactRef: ...
    def facts_in_order(self) -> Iterator[tuple[int, str]]: ...  # (row, fact id), sorted by fact id
    def has_entity(self, qid: str) -> bool: ...
    def entity_label(self, qid: str, lang: str) -> str | None: ...  # None: no entity or no label there


class MemorySide:
    """Side tables held in memory (the build's content)."""

    def __init__(self, facts: Sequence[Fact], entity_qids: Iterable[str],
                 labels: Mapping[tuple[str, str], str] | None = None):
        self.facts = list(facts)
        self.index = {f.id: i for i, f in enumerate(self.facts)}
        self.fact_count = len(self.facts)
        self.duplicate_fact = len(self.index) != len(self.facts)
        self.entities = set(entity_qids)
        self.labels = labels or {}

    def fact_row(self, fact_id: str) -> int:
        return self.index.get(fact_id, -1)

    def fact_at(self, row: int) -> FactRef:
        f = self.facts[row]
        return FactRef(f.predicate, f.culture, f.subject, frozenset(f.object_qids))

    def facts_in_order(self) -> Iterator[tuple[int, str]]:
        return iter(sorted(((i, f.id) for i, f in enumerate(self.facts)), key=lambda x: x[1]))

    def has_entity(self, qid: str) -> bool:
        return qid in self.entities

    def entity_label(self, qid: str, lang: str) -> str | None:
        return self.labels.get((qid, lang)) if qid in self.entities else None


def check_benchmark_rows(meta: Mapping[str, Any], prompts: Sequence[Mapping[str, Any] | Prompt],
                         facts: Sequence[Fact], entity_qids: Iterable[str],
                         candidates: Sequence[Mapping[str, Any]] = (),
                         labels: Mapping[tuple[str, str], str] | None = None) -> list[Violation]:
    """All invariant violations of a benchmark held in memory (empty list = valid). ``prompts`` are records
    or PROMPTS_SCHEMA rows; with ``labels`` ((qid, lang) -> label) subject labels are checked too."""
    from factatlas.tables import prompt_from_row

    records = [p if isinstance(p, Prompt) else prompt_from_row(p) for p in prompts]
    scan = InvariantScan(meta, MemorySide(facts, entity_qids, labels), candidates, check_labels=labels is not None,
                         recount=lambda ids: _count_ids(records, ids))
    scan.feed(records)
    return scan.finish()


def _count_ids(prompts: Iterable[Prompt], ids: set[str]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for p in prompts:
        if p.prompt_id in ids:
            counts[p.prompt_id] += 1
    return counts


@dataclass(slots=True)
class _FactBlock:
    """The rows of one fact seen so far (they are contiguous in prompt_id order)."""

    fact_id: str
    row: int  # in the side tables' facts, -1 when absent
    fact: FactRef | None
    late: bool  # the fact had rows before another fact's: the file is not sorted
    ref_lang: str
    ref: Prompt
    reported: set[str] = field(default_factory=set)  # columns already reported as differing
    kinds: dict[str, tuple[str, str]] = field(default_factory=dict)  # template -> (lang, kind)
    ids: set[str] = field(default_factory=set)
    templates_checked: set[str] = field(default_factory=set)
    subjects_checked: set[str] = field(default_factory=set)
    labels_checked: set[tuple[str, str, str]] = field(default_factory=set)


class InvariantScan:
    """The invariant as one pass: ``feed`` batches of prompts in prompt_id order, then ``finish``."""

    def __init__(self, meta: Mapping[str, Any], side: SideTables, candidates: Sequence[Mapping[str, Any]],
                 *, check_labels: bool = False, recount: Callable[[set[str]], Mapping[str, int]] | None = None):
        self.meta, self.side, self.check_labels, self.recount = meta, side, check_labels, recount
        self.languages = tuple(meta.get("languages", ()))
        self.lang_bit = {lang: 1 << i for i, lang in enumerate(self.languages)}
        self.any_bit = 1 << len(self.languages)  # the fact has a row in some language (known or not)
        self.templates = {lang: frozenset(t) for lang, t in (meta.get("templates") or {}).items()}
        self.split_names = frozenset((meta.get("splits") or {}).get("fractions", {}))
        self.predicate_mode = meta.get("candidate_mode") == "predicate"
        # benchmark.json says whether a fact's subject was removed from its candidates (issue 40)
        self.subject_excluded = meta.get("subject_candidate", "kept") == "excluded"
        self.out: dict[str, list[Violation]] = {s: [] for s in SECTIONS}
        self.has_pool = bool(candidates)
        self.pool = _candidate_pool(candidates, self.languages, self.out["pool"])
        self.presence: list[int] = [0] * side.fact_count  # per fact: language bits | any_bit
        self.unknown: dict[str, int] = {}  # prompted facts absent from the facts table: the same bits
        self.used_templates: dict[str, set[str]] = defaultdict(set)
        # predicate mode: per predicate, each list as three 64-bit words (hash as stored, hash with its subject
        # put back, hash of the subject or 0 for none), flat, and the QIDs the lists hold. With the subject
        # excluded every fact has a list of its own: at 122,858 facts a set of (hash, hash, subject) tuples
        # held 28 MB until the end (24 bytes each here); a list seen again in a later batch repeats its words,
        # which the end's set of hashes absorbs
        self.per_pred: dict[str, array] = defaultdict(lambda: array("q"))
        self.pred_members: dict[str, set[str]] = defaultdict(set)
        self.missing_entities: set[str] = set()
        self.checked_lists: set[tuple[str, ...]] = set()
        self.pool_reported: set[str] = set()
        self.duplicates_reported: set[str] = set()
        self.late_ids: set[str] = set()
        self.label_reported = False
        self.subjects_offered = 0
        self.rows = 0
        self.previous: str | None = None
        self.block: _FactBlock | None = None
        self._batch_sets: dict[int, tuple[Any, frozenset]] = {}
        self._batch_lists: set[tuple[int, str]] = set()
        self._batch_pool: set[tuple[int, str, str]] = set()

    # ---- the pass ---------------------------------------------------------------------------------

    def feed(self, prompts: Iterable[Prompt]) -> None:
        """The next prompts in file order. Candidate lists are remembered by identity within one call only,
        so a caller streaming row groups may rebuild them per group."""
        self._batch_sets, self._batch_lists, self._batch_pool = {}, set(), set()
        for p in prompts:
            self.rows += 1
            b = self.block
            if b is None or p.fact_id != b.fact_id:  # the next fact: the last one's rows are all seen
                b = self.block = self._open(p)
            self._row_rules(b, p)
            self._parallel(b, p)
            self._against_fact(b, p)
            self._entities(b, p)
            self._in_pool(p)
            if self.check_labels and not self.label_reported:
                self._subject_label(b, p)

    def finish(self) -> list[Violation]:
        self.block = None
        self._late_duplicates()
        out = self.out
        if not self.rows or not self.side.fact_count:
            # every other rule holds vacuously for no rows; a benchmark nobody can probe is never valid
            out["empty"].append(Violation(
                "empty", "prompts.parquet" if not self.rows else "facts.parquet",
                f"the benchmark holds {self.side.fact_count} facts and {self.rows} prompts; an empty benchmark is "
                "never valid. Rebuild it: `factatlas build RUN --langs ...` names the reasons every fact was "
                "dropped"))
        out["meta"] += check_meta(self.meta)
        self._languages_and_facts()
        self._templates_and_lists()
        missing = sorted(self.missing_entities)
        for q in missing[:20]:
            out["entities"].append(Violation("entity-missing", q, "referenced by prompts but absent from "
                                                                  "entities.parquet"))
        if len(missing) > 20:
            out["entities"].append(Violation("entity-missing", "entities.parquet", f"{len(missing) - 20} more "
                                                                                   "QIDs missing"))
        if not self.has_pool and self.rows:
            out["pool"] = [Violation("candidates-empty", "candidates.parquet", "no candidate pool rows")]
            out["pool-rows"] = []
        return [v for s in SECTIONS for v in out[s]]

    # ---- per row ----------------------------------------------------------------------------------

    def _open(self, p: Prompt) -> _FactBlock:
        row = self.side.fact_row(p.fact_id)
        seen = self.presence[row] if row >= 0 else self.unknown.get(p.fact_id, 0)
        fact = self.side.fact_at(row) if row >= 0 else None
        return _FactBlock(p.fact_id, row, fact, bool(seen), p.lang, p)

    def _row_rules(self, b: _FactBlock, p: Prompt) -> None:
        out = self.out["rows"]
        pid = p.prompt_id
        expected = f"{p.fact_id}|{p.lang}|{p.template_id}"
        if pid != expected:
            out.append(Violation("prompt-id", pid, f"expected '{expected}'"))
        if pid in b.ids:
            out.append(Violation("duplicate-prompt", pid, "prompt id appears more than once"))
            self.duplicates_reported.add(pid)
        b.ids.add(pid)
        if b.late:
            self.late_ids.add(pid)
        if self.previous is not None and pid < self.previous:
            out.append(Violation("unsorted", pid, f"rows are not sorted by prompt_id (after '{self.previous}')"))
        self.previous = pid
        if p.lang not in self.lang_bit:
            out.append(Violation("unknown-language", pid, f"language '{p.lang}' is not in benchmark.json"))
        elif p.template_id not in self.templates.get(p.lang, ()):
            out.append(Violation("unknown-template", pid, f"template '{p.template_id}' is not listed for "
                                                          f"'{p.lang}' in benchmark.json"))
        if self.split_names and p.split not in self.split_names:
            out.append(Violation("unknown-split", pid, f"split '{p.split}' not in {sorted(self.split_names)}"))
        cands = p.candidate_qids
        known = self._batch_sets.get(id(cands))
        if known is None or known[0] is not cands:
            known = self._batch_sets[id(cands)] = (cands, frozenset(cands))
        out += check_one_prompt(p, known[1])
        if self.subject_excluded and p.subject_qid in known[1] and p.subject_qid not in p.gold_qids \
                and self.subjects_offered < 20:
            self.subjects_offered += 1
            out.append(Violation("subject-among-candidates", pid,
                                 f"the subject {p.subject_qid} is one of its own candidates (benchmark.json: "
                                 "subject_candidate excluded)"))

    def _parallel(self, b: _FactBlock, p: Prompt) -> None:
        """Facts, candidates and golds identical in every language; a template's kind the same everywhere.
        Template sets may differ: a language carries the paraphrases it has."""
        bits = self.lang_bit.get(p.lang, 0) | self.any_bit
        if b.row >= 0:
            self.presence[b.row] |= bits
        else:
            self.unknown[p.fact_id] = self.unknown.get(p.fact_id, 0) | bits
        self.used_templates[p.lang].add(p.template_id)
        ref, out = b.ref, self.out["parallel"]
        for col in PARALLEL_COLUMNS[1:]:
            mine, theirs = getattr(p, col), getattr(ref, col)
            if mine is theirs or col in b.reported:
                continue
            if list_or_value(mine) != list_or_value(theirs):
                b.reported.add(col)
                out.append(Violation(f"differs:{col}", p.prompt_id,
                                     f"{col} in '{p.lang}' = {mine!r} differs from '{b.ref_lang}' = {theirs!r} "
                                     "(a fact has one value in every language and template)"))
        kind_lang, kind = b.kinds.setdefault(p.template_id, (p.lang, p.kind))
        if p.kind != kind:
            out.append(Violation("differs:kind", p.prompt_id, f"kind in '{p.lang}' = {p.kind!r} differs from "
                                                              f"'{kind_lang}' = {kind!r}"))
        subject = p.subject_qid if self.subject_excluded else ""
        if self.predicate_mode and (id(p.candidate_qids), subject) not in self._batch_lists:
            # shared lists: hash each distinct one once a batch (per subject: a list may lack its subject)
            self._batch_lists.add((id(p.candidate_qids), subject))
            cands = tuple(p.candidate_qids)
            restored = cands if not subject or subject in cands else \
                tuple(sorted((*cands, subject), key=lambda q: (id_order(q), q)))
            self.per_pred[p.predicate].extend((hash(cands), hash(restored), hash(subject) if subject else 0))
            self.pred_members[p.predicate].update(cands)

    def _against_fact(self, b: _FactBlock, p: Prompt) -> None:
        f = b.fact
        if f is None or p.template_id in b.templates_checked:
            return
        b.templates_checked.add(p.template_id)
        stray = [q for q in p.gold_qids if q not in f.object_qids]
        if stray:
            self.out["facts"].append(Violation("gold-not-valid", p.prompt_id,
                                               f"gold {stray} not among the fact's objects"))
        if p.predicate != f.predicate or p.culture != f.culture or p.subject_qid != f.subject:
            self.out["facts"].append(Violation("fact-mismatch", p.prompt_id,
                                               "predicate/culture/subject differ from facts.parquet"))

    def _entities(self, b: _FactBlock, p: Prompt) -> None:
        if p.subject_qid not in b.subjects_checked:
            b.subjects_checked.add(p.subject_qid)
            if not self.side.has_entity(p.subject_qid):
                self.missing_entities.add(p.subject_qid)
        cands = tuple(p.candidate_qids)
        if cands in self.checked_lists:
            return
        if len(self.checked_lists) >= CHECKED_LISTS:
            self.checked_lists.clear()
        self.checked_lists.add(cands)
        self.missing_entities.update(q for q in cands if not self.side.has_entity(q))

    def _in_pool(self, p: Prompt) -> None:
        if not self.has_pool:
            return
        key = (id(p.candidate_qids), p.predicate, p.lang)
        if key in self._batch_pool:
            return
        self._batch_pool.add(key)
        stray = set(p.candidate_qids) - self.pool.get((p.predicate, p.lang), frozenset())
        if stray and p.predicate not in self.pool_reported:
            self.pool_reported.add(p.predicate)
            self.out["pool-rows"].append(Violation(
                "candidate-not-in-pool", p.prompt_id,
                f"{sorted(stray)[:5]} not in candidates.parquet for {p.predicate}/{p.lang}"))

    def _subject_label(self, b: _FactBlock, p: Prompt) -> None:
        key = (p.subject_qid, p.lang, p.subject_label)
        if key in b.labels_checked:
            return
        b.labels_checked.add(key)
        label = self.side.entity_label(p.subject_qid, p.lang)
        if p.subject_label and label is not None and label != p.subject_label:
            self.out["labels"].append(Violation("subject-label", p.prompt_id,
                                                "subject_label differs from labels.parquet"))
            self.label_reported = True

    # ---- at the end -------------------------------------------------------------------------------

    def _late_duplicates(self) -> None:
        """Ids among the rows of a fact that came back (an unsorted file) may repeat a row of its first run:
        count them over the whole table once more (the id column only)."""
        ids = self.late_ids - self.duplicates_reported
        if not ids or self.recount is None:
            return
        for pid, n in sorted(self.recount(ids).items()):
            if n > 1:
                self.out["rows"].append(Violation("duplicate-prompt", pid, "prompt id appears more than once"))

    def _languages_and_facts(self) -> None:
        """missing-language and facts-differ per fact and language; fact-missing, fact-unprompted."""
        absent_in: list[tuple[str, int]] = []  # (fact id, language bits) of facts missing some language
        unprompted: list[str] = []
        every = (1 << len(self.languages)) - 1
        for row, fid in self.side.facts_in_order():
            bits = self.presence[row]
            if not bits:
                if len(unprompted) < 20:
                    unprompted.append(fid)
            elif bits & every and bits & every != every:
                absent_in.append((fid, bits))
        absent_in += [(fid, bits) for fid, bits in self.unknown.items() if bits & every and bits & every != every]
        absent_in.sort()
        lost: dict[str, list[str]] = defaultdict(list)
        for fid, bits in absent_in:
            absent = [lang for lang in self.languages if not bits & self.lang_bit[lang]]
            present = [lang for lang in self.languages if bits & self.lang_bit[lang]]
            self.out["parallel-end"].append(Violation("missing-language", fid, f"no row for {', '.join(absent)} "
                                                                               f"(present: {', '.join(present)})"))
            for lang in absent:
                lost[lang].append(fid)
        self._facts_differ = lost
        head = self.out["facts-head"]
        if self.side.duplicate_fact:
            head.append(Violation("duplicate-fact", "facts.parquet", "a fact id appears more than once"))
        for fid in sorted(self.unknown)[:20]:
            head.append(Violation("fact-missing", fid, "prompted but absent from facts.parquet"))
        for fid in unprompted:
            head.append(Violation("fact-unprompted", fid, "in facts.parquet but has no prompt"))

    def _templates_and_lists(self) -> None:
        out = self.out["parallel-end"]
        for lang, listed in sorted((self.meta.get("templates") or {}).items()):
            idle = sorted(set(listed) - self.used_templates.get(lang, set()))
            if idle and lang in self.lang_bit:
                out.append(Violation("template-without-rows", lang, f"benchmark.json lists {', '.join(idle)} for "
                                                                    f"'{lang}' but no {lang} prompt uses it"))
        for lang in sorted(self.languages):
            lost = self._facts_differ.get(lang)
            if lost:
                out.append(Violation("facts-differ", lang, f"{len(lost)} facts missing in '{lang}', e.g. "
                                                           f"{lost[:3]}"))
        for pred, words in sorted(self.per_pred.items()):
            # one list per predicate less the fact's subject: each list with its subject put back, where the
            # subject is one of the predicate's candidates at all (compared by hash, as the lists are)
            members = {hash(q) for q in self.pred_members[pred]}
            sets = {words[i + 1] if words[i + 2] and words[i + 2] in members else words[i]
                    for i in range(0, len(words), 3)}
            if len(sets) > 1:
                out.append(Violation("predicate-candidates-differ", pred,
                                     f"candidate_mode 'predicate' but {len(sets)} different candidate lists"
                                     + (" (each with its subject restored)" if self.subject_excluded else "")))


def check_meta(meta: Mapping[str, Any]) -> list[Violation]:
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


def check_one_prompt(p: Prompt, cand_set: frozenset) -> list[Violation]:
    """The rules one row must meet on its own (``cand_set``: its candidate QIDs as a set)."""
    out = []
    pid, text, kind = p.prompt_id, p.text, p.kind
    if kind == "cloze":
        if text.count(ANSWER_MARKER) != 1:
            out.append(Violation("answer-marker", pid, f"cloze text must hold {ANSWER_MARKER} exactly once: {text!r}"))
        elif p.answer_start != text.find(ANSWER_MARKER):
            out.append(Violation("answer-start", pid, f"answer_start {p.answer_start} but the marker is at "
                                                      f"{text.find(ANSWER_MARKER)}"))
    elif kind == "question":
        if ANSWER_MARKER in text or p.answer_start != -1:
            out.append(Violation("answer-marker", pid, "a question has no answer marker and answer_start -1"))
    else:
        out.append(Violation("kind", pid, f"kind {kind!r} is neither 'cloze' nor 'question'"))
    if not text.strip():
        out.append(Violation("empty-text", pid, "prompt text is empty"))
    golds, cands = p.gold_qids, p.candidate_qids
    if not golds:
        out.append(Violation("no-gold", pid, "gold_qids is empty"))
    if len(cand_set) != len(cands):
        out.append(Violation("duplicate-candidate", pid, "candidate_qids holds a QID twice"))
    lost = [q for q in golds if q not in cand_set]
    if lost:
        out.append(Violation("gold-not-in-candidates", pid, f"gold {', '.join(lost)} not among the candidates"))
    if len(p.candidate_forms) != len(cands):
        out.append(Violation("candidate-forms", pid, f"{len(p.candidate_forms)} forms for {len(cands)} candidates"))
    elif not all(p.candidate_forms):
        out.append(Violation("candidate-forms", pid, "a candidate form is empty"))
    if len(p.gold_forms) != len(golds) or any(not forms or not forms[0] for forms in p.gold_forms):
        out.append(Violation("gold-forms", pid, "gold_forms must give non-empty forms for every gold QID"))
    return out


def list_or_value(v: Any) -> Any:
    if isinstance(v, tuple):
        return v
    return tuple(v) if isinstance(v, list) else v


def _candidate_pool(candidates: Sequence[Mapping[str, Any]], languages: Sequence[str],
                    out: list[Violation]) -> dict[tuple[str, str], frozenset[str]]:
    """(predicate, lang) -> the pool's QIDs; empty labels and pools that differ between languages go to
    ``out``."""
    pool: dict[tuple[str, str], set[str]] = defaultdict(set)
    for c in candidates:
        pool[(c["predicate"], c["lang"])].add(c["qid"])
        if not c["label"]:
            out.append(Violation("candidate-label", f"{c['predicate']}|{c['lang']}|{c['qid']}", "empty label"))
    for pred in sorted({pred for pred, _ in pool}):
        sets = {lang: frozenset(pool.get((pred, lang), ())) for lang in languages}
        if len(set(sets.values())) > 1:
            out.append(Violation("pool-differs", pred, "candidate pool QIDs differ between languages: "
                                 + ", ".join(f"{lang}={len(s)}" for lang, s in sorted(sets.items()))))
    return {k: frozenset(v) for k, v in pool.items()}
