"""The error taxonomy of wrong answers: X-FACTR (Jiang et al. 2020) §5 Table 2, with DLAMA's (Keleg & Magdy
2023) answer from the other culture, decided automatically from the benchmark's own data.

Every wrong prompt (not right at rank 1) gets exactly one category, the first that applies
(docs/metrics.md, "Kinds of wrong answers"):

1. ``unk/empty``: an open answer that is empty once normalised (nothing, or only special tokens);
2. ``repeats subject``: the answer is the subject (its top QID is the subject's, or the open answer
   contains the subject's label as whole words, both normalised);
3. ``other culture``: the answer belongs only to other cultures, by either of two rules: it is a valid
   object of the same predicate only in other cultures' facts, or it is a country that only other
   cultures' facts list as theirs. An answer valid (or a country listed) for the asked culture's facts
   too is not other culture by that rule;
4. ``related concept``: the answer is tied to the subject in the benchmark: a valid object of another of
   the subject's facts (another predicate: the capital asked, the largest city answered) or one of the
   fact's countries;
5. ``wrong type``: the answer shares no class (P31) with any valid object (both sides' classes known);
6. ``wrong entity``: an entity of a gold's class, just not a valid one;
7. ``type unknown``: an entity whose classes (or the golds') the benchmark does not record;
8. ``unmatched text``: an open answer that matches no candidate's form, so no entity to classify.

Who "owns" an answer (rules 3 and 4) is read from **every fact the benchmark holds**, all splits and all
cultures, never from the prompts being evaluated: an analysis of the held-out split still knows that a
training fact of the other culture has the answer as its object. Each category comes with its evidence
(the facts or classes that decided it), so a reader can check an answer by hand (``wrong_answers``).

Counted per model, predicate and language (with ``all`` margins), over ``ScoredPrompt`` records.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from factatlas.probe.analysis.records import benchmark_facts, margin_last, predicate_order
from factatlas.records import Fact, Prompt, ScoredPrompt

if TYPE_CHECKING:
    from factatlas.benchmark import Benchmark
    from factatlas.probe.aggregate import PromptStream

EMPTY, SUBJECT, OTHER_CULTURE, RELATED = "unk/empty", "repeats subject", "other culture", "related concept"
WRONG_TYPE, WRONG_ENTITY, TYPE_UNKNOWN, UNMATCHED = "wrong type", "wrong entity", "type unknown", "unmatched text"
CATEGORIES = (EMPTY, SUBJECT, OTHER_CULTURE, RELATED, WRONG_TYPE, WRONG_ENTITY, TYPE_UNKNOWN, UNMATCHED)

# facts named in an evidence text; the count is always given in full
EVIDENCE_FACTS = 3

Owners = Mapping[str, tuple[str, ...]]  # culture -> ids of its facts (sorted)


@dataclass(frozen=True)
class ErrorContext:
    """What the benchmark knows about the entities an answer can be: built from every one of its facts."""

    classes: Mapping[str, frozenset[str]]  # entity QID -> its P31 classes (absent or empty: unknown)
    object_owners: Mapping[tuple[str, str], Owners]  # (predicate, QID) -> facts with QID as a valid object
    country_owners: Mapping[str, Owners]  # country QID -> facts that list it among their countries
    subject_facts: Mapping[str, Mapping[str, frozenset[str]]]  # subject QID -> fact id -> its valid objects
    labels: Mapping[str, str] = field(default_factory=dict)  # QID -> display label (per-answer table only)

    def object_cultures(self, predicate: str, qid: str) -> frozenset[str]:
        return frozenset(self.object_owners.get((predicate, qid), {}))

    def country_cultures(self, qid: str) -> frozenset[str]:
        return frozenset(self.country_owners.get(qid, {}))


def context_from_facts(facts: Iterable[Fact], classes: Mapping[str, Iterable[str]],
                       labels: Mapping[str, str] | None = None) -> ErrorContext:
    """From ``Fact`` records (all of the benchmark's) and entity classes (``Entity.classes``)."""
    objects: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    countries: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    subjects: dict[str, dict[str, frozenset[str]]] = defaultdict(dict)
    for f in facts:
        for q in dict.fromkeys(f.object_qids):
            objects[(f.predicate, q)][f.culture].append(f.id)
        for c in dict.fromkeys(f.countries):
            countries[c][f.culture].append(f.id)
        subjects[f.subject][f.id] = frozenset(f.object_qids)

    def frozen(owners: Mapping[str, list[str]]) -> Owners:
        return {culture: tuple(sorted(ids)) for culture, ids in sorted(owners.items())}

    return ErrorContext({q: frozenset(c) for q, c in classes.items()},
                        {k: frozen(v) for k, v in objects.items()}, {k: frozen(v) for k, v in countries.items()},
                        {s: dict(sorted(fs.items())) for s, fs in subjects.items()}, dict(labels or {}))


def entity_classes(bench: Benchmark) -> dict[str, tuple[str, ...]]:
    """QID -> its classes (``Entity.classes``), read from the two columns of entities.parquet: the entities'
    labels and aliases in every language (``Benchmark.entities``) are not read for them."""
    from factatlas.tables import read_parquet

    table = bench._read(lambda: read_parquet(bench.file("entities.parquet"), ["qid", "classes"]), "entities.parquet")
    return dict(zip(table.column("qid").to_pylist(), (tuple(c) for c in table.column("classes").to_pylist()),
                    strict=True))


def benchmark_context(bench: Benchmark) -> ErrorContext:
    """The context of a benchmark: all its facts, the classes in its entity table (none without one: every
    type is then unknown, and the table says so) and its answers' display labels (English first)."""
    has_entities = all((bench.path / name).is_file() for name in ("entities.parquet", "labels.parquet"))
    classes = entity_classes(bench) if has_entities else {}
    labels: dict[str, str] = {}
    for (qid, _lang), label in sorted(bench.answer_labels.items(), key=lambda kv: (kv[0][1] != "en", kv[0])):
        labels.setdefault(qid, label)
    return context_from_facts(benchmark_facts(bench).values(), classes, labels)


@dataclass(frozen=True, slots=True)
class Verdict:
    """A wrong answer's category and the evidence that decided it (readable, names facts and classes)."""

    category: str
    evidence: str


def _owners_text(owners: Owners) -> str:
    parts = []
    for culture, ids in owners.items():
        shown = ", ".join(ids[:EVIDENCE_FACTS]) + (", ..." if len(ids) > EVIDENCE_FACTS else "")
        parts.append(f"{culture} {len(ids)} ({shown})")
    return "; ".join(parts)


def explain(r: ScoredPrompt, ctx: ErrorContext) -> Verdict | None:
    """The category of a wrong answer (module docstring) with its evidence; None when the prompt is right."""
    from factatlas.probe.generative import normalise

    if r.correct:
        return None
    top = r.top
    open_answer = not r.order
    if open_answer and not normalise(r.prediction) and top is None:
        return Verdict(EMPTY, f"open answer {r.prediction!r} is empty once normalised")
    if top is not None and top == r.subject:
        return Verdict(SUBJECT, f"the top answer {top} is the subject")
    label = normalise(r.subject_label)
    if open_answer and label and f" {label} " in f" {normalise(r.prediction)} ":
        return Verdict(SUBJECT, f"open answer {r.prediction!r} contains the subject's label {r.subject_label!r}")
    if top is None:
        return Verdict(UNMATCHED, f"open answer {r.prediction!r} matches no candidate")
    as_object = ctx.object_owners.get((r.predicate, top), {})
    as_country = ctx.country_owners.get(top, {})
    reasons = []
    if as_object and r.culture not in as_object:
        reasons.append(f"a valid {r.predicate} object only in other cultures' facts: {_owners_text(as_object)}")
    if as_country and r.culture not in as_country:
        reasons.append(f"a country only other cultures' facts list: {_owners_text(as_country)}")
    if reasons:
        return Verdict(OTHER_CULTURE, " | ".join(reasons))
    related = [fid for fid, objs in ctx.subject_facts.get(r.subject, {}).items()
               if fid != r.fact_id and top in objs and top not in r.gold_qids]
    if related:
        return Verdict(RELATED, "a valid object of the subject's other facts: " + ", ".join(related))
    if top in r.countries:
        return Verdict(RELATED, f"one of the fact's countries ({', '.join(r.countries)})")
    mine = ctx.classes.get(top, frozenset())
    theirs = frozenset().union(*(ctx.classes.get(q, frozenset()) for q in r.gold_qids))
    owned = f"{r.predicate} owners: {_owners_text(as_object) or 'none'}"
    if not mine or not theirs:
        side = "the answer's" if not mine else "the golds'"
        return Verdict(TYPE_UNKNOWN, f"{side} classes are not recorded; {owned}")
    shared = mine & theirs
    if shared:
        return Verdict(WRONG_ENTITY, f"shares class {', '.join(sorted(shared))} with a valid object; {owned}")
    return Verdict(WRONG_TYPE, f"classes {', '.join(sorted(mine))} vs the valid objects' "
                               f"{', '.join(sorted(theirs))}; {owned}")


def classify(r: ScoredPrompt, ctx: ErrorContext) -> str | None:
    """The category of a wrong answer (module docstring); None when the prompt is right at rank 1."""
    verdict = explain(r, ctx)
    return None if verdict is None else verdict.category


@dataclass(frozen=True, slots=True)
class ErrorCounts:
    predicate: str  # or "all"
    lang: str  # or "all"
    prompts: int
    wrong: int
    by_category: tuple[int, ...]  # parallel to CATEGORIES


def error_taxonomy(results: Sequence[ScoredPrompt], ctx: ErrorContext) -> list[ErrorCounts]:
    """Wrong answers by category per predicate and language, with ``all`` margins (natural PID order,
    languages sorted, ``all`` last)."""
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for r in results:
        kind = classify(r, ctx)
        for key in ((r.predicate, r.lang), (r.predicate, "all"), ("all", r.lang), ("all", "all")):
            counts[key]["n"] += 1
            if kind is not None:
                counts[key]["wrong"] += 1
                counts[key][kind] += 1
    order = sorted(counts, key=lambda k: ((k[0] == "all", predicate_order(k[0])), margin_last(k[1])))
    return [ErrorCounts(p, lang, counts[(p, lang)]["n"], counts[(p, lang)]["wrong"],
                        tuple(counts[(p, lang)][c] for c in CATEGORIES)) for p, lang in order]


# ---- one row per wrong answer ------------------------------------------------------------------

WRONG_ANSWER_HEAD = ("model", "prompt", "split", "predicate", "language", "culture", "subject", "subject label",
                     "prompt text", "answer", "answer label", "answer as written", "golds", "gold labels",
                     "category", "evidence")


@dataclass(frozen=True, slots=True)
class WrongAnswer:
    model: str
    prompt_id: str
    split: str
    predicate: str
    lang: str
    culture: str
    subject: str
    subject_label: str
    prompt_text: str  # "" when the prompt is not at hand
    answer: str  # the top QID; "" for an open answer that matched nothing
    answer_label: str  # the benchmark's display label of the answer (English first)
    answer_text: str  # the open answer, or the answer's form in the prompt
    golds: tuple[str, ...]
    gold_labels: tuple[str, ...]
    category: str
    evidence: str

    def row(self) -> tuple[str, ...]:
        return (self.model, self.prompt_id, self.split, self.predicate, self.lang, self.culture, self.subject,
                self.subject_label, self.prompt_text, self.answer, self.answer_label, self.answer_text,
                " ".join(self.golds), " | ".join(self.gold_labels), self.category, self.evidence)


def wrong_answers(results: Sequence[ScoredPrompt], ctx: ErrorContext,
                  prompts: Mapping[str, Prompt] | None = None) -> list[WrongAnswer]:
    """Every wrong answer with its category and evidence, in the order of ``results``; ``prompts`` (the
    benchmark's, by id) add the prompt's text and the answer's form in it."""
    return list(iter_wrong_answers(results, ctx, prompts))


def iter_wrong_answers(results: Sequence[ScoredPrompt], ctx: ErrorContext,
                       prompts: Mapping[str, Prompt] | PromptStream | None = None) -> Iterator[WrongAnswer]:
    """``wrong_answers`` one at a time; ``prompts`` may be a ``PromptStream`` (results in prompt_id order)."""
    for r in results:
        verdict = explain(r, ctx)
        if verdict is None:
            continue
        prompt = (prompts or {}).get(r.prompt_id)
        top = r.top or ""
        if r.order or not r.prediction:  # a ranking: the answer as the prompt's candidate form
            forms = dict(zip(prompt.candidate_qids, prompt.candidate_forms, strict=False)) if prompt else {}
            text = forms.get(top, "")
        else:
            text = r.prediction
        golds = tuple(sorted(r.gold_qids))
        yield WrongAnswer(r.model, r.prompt_id, r.split, r.predicate, r.lang, r.culture, r.subject,
                          r.subject_label, prompt.text if prompt else "", top, ctx.labels.get(top, ""), text,
                          golds, tuple(ctx.labels.get(g, "") for g in golds), verdict.category, verdict.evidence)
