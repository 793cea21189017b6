"""The error taxonomy of wrong answers: X-FACTR (Jiang et al. 2020) §5 Table 2, with DLAMA's (Keleg & Magdy
2023) answer from the other culture, decided automatically from the benchmark's own data.

Every wrong prompt (not right at rank 1) gets exactly one category, the first that applies:

1. ``unk/empty``: an open answer that is empty once normalised (nothing, or only special tokens);
2. ``repeats subject``: the answer is the subject (its top QID is the subject's, or the open answer
   contains the subject's label as whole words, both normalised);
3. ``other culture``: the answer belongs only to other cultures: it is a valid object of the same
   predicate only for facts of other cultures, and (a country as the answer) it is not one of the asked
   culture's countries; an answer valid for both cultures is not counted here;
4. ``related concept``: the answer is tied to the subject in the benchmark: a valid object of another of
   the subject's facts (another predicate: the capital asked, the largest city answered) or one of the
   fact's countries;
5. ``wrong type``: the answer shares no class (P31) with any valid object (both sides' classes known);
6. ``wrong entity``: an entity of a gold's class, just not a valid one;
7. ``type unknown``: an entity whose classes (or the golds') the benchmark does not record;
8. ``unmatched text``: an open answer that matches no candidate's form, so no entity to classify.

Counted per model, predicate and language (with ``all`` margins), over ``ScoredPrompt`` records.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from factatlas.probe.analysis.dlama import object_cultures
from factatlas.probe.analysis.records import margin_last, predicate_order
from factatlas.records import ScoredPrompt

if TYPE_CHECKING:
    from factatlas.benchmark import Benchmark

EMPTY, SUBJECT, OTHER_CULTURE, RELATED = "unk/empty", "repeats subject", "other culture", "related concept"
WRONG_TYPE, WRONG_ENTITY, TYPE_UNKNOWN, UNMATCHED = "wrong type", "wrong entity", "type unknown", "unmatched text"
CATEGORIES = (EMPTY, SUBJECT, OTHER_CULTURE, RELATED, WRONG_TYPE, WRONG_ENTITY, TYPE_UNKNOWN, UNMATCHED)


@dataclass(frozen=True)
class ErrorContext:
    """What the benchmark knows about the entities an answer can be."""

    classes: Mapping[str, frozenset[str]]  # entity QID -> its P31 classes (absent or empty: unknown)
    subject_objects: Mapping[str, frozenset[str]]  # subject QID -> valid objects of all its facts
    country_cultures: Mapping[str, frozenset[str]]  # country QID -> cultures whose facts list it


def context_from_facts(facts: Iterable, classes: Mapping[str, Iterable[str]]) -> ErrorContext:
    """From ``Fact`` records and entity classes (``Entity.classes``)."""
    subject_objects: dict[str, set[str]] = defaultdict(set)
    country_cultures: dict[str, set[str]] = defaultdict(set)
    for f in facts:
        subject_objects[f.subject].update(f.object_qids)
        for c in f.countries:
            country_cultures[c].add(f.culture)
    return ErrorContext({q: frozenset(c) for q, c in classes.items()},
                        {s: frozenset(o) for s, o in subject_objects.items()},
                        {c: frozenset(v) for c, v in country_cultures.items()})


def benchmark_context(bench: Benchmark) -> ErrorContext:
    """The context of a benchmark: its facts and the classes in its entity table (none without one: every
    type is then unknown, and the table says so)."""
    has_entities = all((bench.path / name).is_file() for name in ("entities.parquet", "labels.parquet"))
    classes = {q: e.classes for q, e in bench.entities.items()} if has_entities else {}
    return context_from_facts(bench.facts_by_id.values(), classes)


def classify(r: ScoredPrompt, ctx: ErrorContext, owners: Mapping[tuple[str, str], frozenset[str]]) -> str | None:
    """The category of a wrong answer (module docstring); None when the prompt is right at rank 1."""
    from factatlas.probe.generative import normalise

    if r.correct:
        return None
    top = r.top
    open_answer = not r.order
    if open_answer and not normalise(r.prediction) and top is None:
        return EMPTY
    label = normalise(r.subject_label)
    if (top is not None and top == r.subject) or (
            open_answer and label and f" {label} " in f" {normalise(r.prediction)} "):
        return SUBJECT
    if top is None:
        return UNMATCHED
    cultures = owners.get((r.predicate, top), frozenset()) | ctx.country_cultures.get(top, frozenset())
    if cultures and r.culture not in cultures:
        return OTHER_CULTURE
    if top in (ctx.subject_objects.get(r.subject, frozenset()) - r.gold_qids) or top in r.countries:
        return RELATED
    mine = ctx.classes.get(top, frozenset())
    theirs = frozenset().union(*(ctx.classes.get(q, frozenset()) for q in r.gold_qids))
    if not mine or not theirs:
        return TYPE_UNKNOWN
    return WRONG_ENTITY if mine & theirs else WRONG_TYPE


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
    owners = object_cultures(results)
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for r in results:
        kind = classify(r, ctx, owners)
        for key in ((r.predicate, r.lang), (r.predicate, "all"), ("all", r.lang), ("all", "all")):
            counts[key]["n"] += 1
            if kind is not None:
                counts[key]["wrong"] += 1
                counts[key][kind] += 1
    order = sorted(counts, key=lambda k: ((k[0] == "all", predicate_order(k[0])), margin_last(k[1])))
    return [ErrorCounts(p, lang, counts[(p, lang)]["n"], counts[(p, lang)]["wrong"],
                        tuple(counts[(p, lang)][c] for c in CATEGORIES)) for p, lang in order]
