"""Population counters: classes of defect counted over every prompt of a build, not over a sample.

A reader who has seen one instance of a class («Libya shares a border with Libya», «Umm Kulthum is a
native speaker of Arabic», «mit amerikanisches Englisch», «Nova Iorque» in a Brazilian sentence) counts
the whole class; samples of 25-30 prompts per language miss classes that touch 1-12 % of prompts. Each
counter reads a build's prompt rows (``prompts.parquet`` as dicts) and, where it needs them, its entities;
what a language counts as a defect is data, one entry per language, so a new language plugs in with an
entry:

- ``subject_candidates``: cloze prompts whose subject is among its own candidates;
- ``present_of_dead``: prompts about a subject known to be dead (``Entity.life``) whose text or whose
  gold or candidate filler holds a present-tense form of its language (``data/tense.yaml``);
- ``undeclined_after_preposition``: cloze prompts where a filler follows a case-governing preposition
  in a form the case rejects (``data/case_government.yaml``: de «mit amerikanisches Englisch»);
- ``mixed_locale``: prompts, golds and candidates holding a form of a language's other written variant
  (``data/locale_forms.yaml``: pt-PT «Nova Iorque» in pt-BR text).

``scripts/population_counts.py`` prints them over run directories; ``tests/templates/test_population.py``
holds every class at 0 over the three shipped pairs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from factatlas.errors import ConfigError
from factatlas.records import ANSWER_MARKER, Entity, Life

Row = Mapping[str, Any]


def _data(name: str) -> Any:
    from factatlas.yamlfile import load_located

    path = Path(str(resources.files("factatlas.templates").joinpath("data", name)))
    return load_located(path).data or {}


def _regex(pattern: str, where: str) -> re.Pattern:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ConfigError(f"{where}: {pattern!r} is not a regular expression ({e})") from e


@dataclass(frozen=True, slots=True)
class Hit:
    """One counted prompt: where the class showed (``text``, ``gold``, ``candidate``) and the words."""

    prompt_id: str
    where: str
    found: str


def filled(row: Row, filler: str) -> str:
    """The prompt's text with the answer marker replaced by a filler (the sentence a scorer reads)."""
    return row["text"].replace(ANSWER_MARKER, filler, 1)


# ---- the subject among its candidates -----------------------------------------------------------

def subject_candidates(rows: Iterable[Row], golds: bool = False) -> dict[str, list[Hit]]:
    """Per language: cloze prompts whose subject QID is one of its candidates, a distractor logic rejects
    (``golds=True``: those where the subject is a gold of its own fact instead, «the capital of Singapore
    is Singapore», which stays: it is the answer)."""
    out: dict[str, list[Hit]] = {}
    for r in rows:
        if r["kind"] == "cloze" and r["subject_qid"] in r["candidate_qids"] \
                and (r["subject_qid"] in r["gold_qids"]) == golds:
            out.setdefault(r["lang"], []).append(Hit(r["prompt_id"], "gold" if golds else "candidate",
                                                     r["subject_qid"]))
    return out


# ---- the present tense said of the dead ---------------------------------------------------------

@cache
def present_forms() -> dict[str, re.Pattern]:
    """lang -> one pattern matching the present-tense forms its templates may say of a person
    (``templates/data/tense.yaml``)."""
    raw = _data("tense.yaml").get("present", {})
    return {lang: _regex("|".join(f"(?:{p})" for p in patterns), f"templates/data/tense.yaml: present: {lang}")
            for lang, patterns in raw.items() if patterns}


def present_of_dead(rows: Iterable[Row], entities: Mapping[str, Entity],
                    forms: Mapping[str, re.Pattern] | None = None,
                    predicates: Iterable[str] | None = None) -> dict[str, list[Hit]]:
    """Per language: prompts of a predicate whose tense matters (``tense.yaml: predicates``) about a
    subject known to be dead, whose text or whose first gold or any candidate filler holds a
    present-tense form of the language (each checked alone: the forms are whole words)."""
    forms = present_forms() if forms is None else forms
    scope = set(tense_predicates() if predicates is None else predicates)
    out: dict[str, list[Hit]] = {}
    seen: dict[tuple[str, int], str | None] = {}  # shared candidate tuples: each checked once
    for r in rows:
        subject = entities.get(r["subject_qid"])
        pattern = forms.get(r["lang"])
        if subject is None or subject.life != Life.DEAD or pattern is None or r["predicate"] not in scope:
            continue
        hit = None
        m = pattern.search(r["text"].replace(ANSWER_MARKER, " "))
        if m:
            hit = Hit(r["prompt_id"], "text", m.group())
        elif r["kind"] == "cloze":
            found = _search_fillers(pattern, [f[0] for f in r["gold_forms"] if f])
            if found:
                hit = Hit(r["prompt_id"], "gold", found)
            else:
                key = (r["lang"], id(r["candidate_forms"]))
                if key not in seen:
                    seen[key] = _search_fillers(pattern, r["candidate_forms"])
                if seen[key]:
                    hit = Hit(r["prompt_id"], "candidate", seen[key])
        if hit is not None:
            out.setdefault(r["lang"], []).append(hit)
    return out


def _search_fillers(pattern: re.Pattern, fillers: Iterable[str]) -> str | None:
    for filler in dict.fromkeys(fillers):
        m = pattern.search(filler)
        if m:
            return m.group()
    return None


@cache
def tense_predicates() -> tuple[str, ...]:
    """The predicates about a person whose statements hold only while the person lives (tense.yaml)."""
    return tuple(_data("tense.yaml").get("predicates", ()))


# ---- adjectives after a case-governing preposition ----------------------------------------------

@dataclass(frozen=True, slots=True)
class CaseRule:
    """After ``preposition`` (the words right before the filler, or its first word), a filler must not
    start with ``wrong`` (an adjective or article in a case the preposition does not govern)."""

    lang: str
    case: str
    preposition: re.Pattern
    wrong: re.Pattern


@cache
def case_rules() -> dict[str, tuple[CaseRule, ...]]:
    out: dict[str, tuple[CaseRule, ...]] = {}
    for lang, rules in _data("case_government.yaml").get("languages", {}).items():
        where = f"templates/data/case_government.yaml: {lang}"
        out[lang] = tuple(CaseRule(lang, r["case"], _regex(r"(?:^|\s)(?:" + r["prepositions"] + r")\s*$", where),
                                   _regex(r"^(?:" + r["wrong"] + r")(?=\s)", where)) for r in rules)
    return out


def undeclined_after_preposition(rows: Iterable[Row],
                                 rules: Mapping[str, Sequence[CaseRule]] | None = None) -> dict[str, list[Hit]]:
    """Per language: cloze prompts with a gold or candidate filler whose words after a case-governing
    preposition are not in that case («mit amerikanisches Englisch»); the preposition is the text right
    before the answer or the filler's own first word («aus der …» inside the filler)."""
    rules = case_rules() if rules is None else rules
    out: dict[str, list[Hit]] = {}
    # what of a filler the rules read depends on the filler alone, and the candidate lists repeat: each
    # filler is matched once per language, each row's text before the answer once per rule
    fillers: dict[tuple[str, str], tuple[tuple[bool, str | None], ...]] = {}
    for r in rows:
        lang_rules = rules.get(r["lang"])
        if not lang_rules or r["kind"] != "cloze":
            continue
        before = r["text"][:r["text"].index(ANSWER_MARKER)]
        after_before = tuple(bool(before and rule.preposition.search(before)) for rule in lang_rules)
        hit = None
        for filler in dict.fromkeys(f[0] for f in r["gold_forms"] if f):
            hit = hit or _case_hit(r["prompt_id"], "gold", before, after_before, filler, lang_rules,
                                   _filler_case(fillers, r["lang"], filler, lang_rules))
        if hit is None:
            hit = next((h for f in dict.fromkeys(r["candidate_forms"])
                        if (h := _case_hit(r["prompt_id"], "candidate", before, after_before, f, lang_rules,
                                           _filler_case(fillers, r["lang"], f, lang_rules)))), None)
        if hit is not None:
            out.setdefault(r["lang"], []).append(hit)
    return out


def _filler_case(memo: dict, lang: str, filler: str, rules: Sequence[CaseRule]) -> tuple[tuple[bool, str | None], ...]:
    """Per rule: whether the filler starts with a wrong form (after a preposition before it), and what
    its own first word as the preposition finds wrong after it ("head rest (case)", or None)."""
    found = memo.get((lang, filler))
    if found is None:
        words = filler.split(" ", 1)
        head, rest = (words[0] if len(words) > 1 else ""), words[-1]
        found = memo[(lang, filler)] = tuple(
            (bool(rule.wrong.search(filler + " ")),
             f"{head.split()[-1]} {rest} ({rule.case})"
             if head and rule.preposition.search(head) and rule.wrong.search(rest + " ") else None)
            for rule in rules)
    return found


def _case_hit(prompt_id: str, where: str, before: str, after_before: Sequence[bool], filler: str,
              rules: Sequence[CaseRule], filler_case: Sequence[tuple[bool, str | None]]) -> Hit | None:
    """The first rule, in order, that the filler breaks: after the text before it (``after_before``: where
    that text ends in the rule's preposition), else after its own first word."""
    for rule, ends_in_preposition, (wrong, own) in zip(rules, after_before, filler_case, strict=True):
        if ends_in_preposition and wrong:
            return Hit(prompt_id, where, f"{before.split()[-1]} {filler} ({rule.case})")
        if own is not None:
            return Hit(prompt_id, where, own)
    return None


# ---- the other written variant of a language ----------------------------------------------------

@cache
def locale_forms() -> dict[str, re.Pattern]:
    """lang -> a pattern of the other variant's forms (``templates/data/locale_forms.yaml``), whole words."""
    out: dict[str, re.Pattern] = {}
    for lang, spec in _data("locale_forms.yaml").get("languages", {}).items():
        forms = [pair[0] for pair in spec["pairs"]]
        out[lang] = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
                               + r")(?!\w)")
    return out


def mixed_locale(rows: Iterable[Row], forms: Mapping[str, re.Pattern] | None = None) -> dict[str, Counter]:
    """Per language: prompts whose text, first gold filler or any candidate filler holds a form of the other
    variant (``text``, ``gold``, ``candidate`` counted apart; ``prompts`` counts each prompt once)."""
    forms = locale_forms() if forms is None else forms
    out: dict[str, Counter] = {}
    seen: dict[tuple[str, int], bool] = {}
    for r in rows:
        pattern = forms.get(r["lang"])
        if pattern is None:
            continue
        places = set()
        if pattern.search(r["text"]):
            places.add("text")
        if any(pattern.search(f[0]) for f in r["gold_forms"] if f):
            places.add("gold")
        key = (r["lang"], id(r["candidate_forms"]))
        if key not in seen:
            seen[key] = any(pattern.search(f) for f in r["candidate_forms"])
        if seen[key]:
            places.add("candidate")
        if places:
            c = out.setdefault(r["lang"], Counter())
            c.update(places)
            c["prompts"] += 1
    return out


def mixed_locale_examples(rows: Iterable[Row], forms: Mapping[str, re.Pattern] | None = None) -> Counter:
    """(lang, form) -> prompts it occurs in, over text and every filler: what is left to fix."""
    forms = locale_forms() if forms is None else forms
    found: Counter = Counter()
    for r in rows:
        pattern = forms.get(r["lang"])
        if pattern is None:
            continue
        words = set(pattern.findall(r["text"]))
        for f in r["gold_forms"]:
            words.update(pattern.findall(f[0]) if f else ())
        for f in r["candidate_forms"]:
            words.update(pattern.findall(f))
        found.update((r["lang"], w) for w in words)
    return found


# ---- all of them ---------------------------------------------------------------------------------

COUNTERS = ("subject_candidates", "present_of_dead", "undeclined_after_preposition", "mixed_locale")


def count_all(rows: Sequence[Row], entities: Mapping[str, Entity]) -> dict[str, dict[str, int]]:
    """counter -> lang -> prompts counted (every class above, over these rows)."""
    return {
        "subject_candidates": {k: len(v) for k, v in sorted(subject_candidates(rows).items())},
        "present_of_dead": {k: len(v) for k, v in sorted(present_of_dead(rows, entities).items())},
        "undeclined_after_preposition": {k: len(v) for k, v in
                                         sorted(undeclined_after_preposition(rows).items())},
        "mixed_locale": {k: v["prompts"] for k, v in sorted(mixed_locale(rows).items())},
    }


# the columns of a build's prompts that the counters read
COUNTED_COLUMNS = ("prompt_id", "lang", "kind", "text", "predicate", "subject_qid", "gold_qids", "gold_forms",
                   "candidate_qids", "candidate_forms")


def read_build(run: str | Path) -> tuple[list[dict], dict[str, Entity]]:
    """The prompt rows (as the table's rows, the columns the counters read: they read columns by name, like
    the hand-made rows of their tests) and the entities of ``RUN/build`` (entities with their life status).
    Equal candidate lists are one list object (about 1,400 distinct lists in a shipped pair's 52,000 cloze
    rows: the counters check each once, and Arrow makes each once)."""
    import pyarrow.parquet as pq

    from factatlas.tables import read_entities

    run = Path(run)
    build = run / "build" if (run / "build").is_dir() else run
    table = pq.read_table(build / "prompts.parquet", columns=list(COUNTED_COLUMNS))
    columns = [_shared_lists(table[name]) if name in ("candidate_qids", "candidate_forms") else table[name].to_pylist()
               for name in COUNTED_COLUMNS]
    return [dict(zip(COUNTED_COLUMNS, values, strict=True)) for values in zip(*columns, strict=True)], \
        read_entities(build)


def _shared_lists(column) -> list:
    """A list<string> column as Python lists, equal lists as one object. Lists are told apart by their
    length and their items joined with a separator that no item holds (else, or with nulls, each row is its
    own list)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    sep = "\x1f"
    if column.null_count or pc.any(pc.match_substring(pc.list_flatten(column), sep)).as_py():
        return column.to_pylist()
    key = pc.binary_join_element_wise(pc.cast(pc.list_value_length(column), pa.string()),
                                      pc.binary_join(column, sep), sep)
    codes = pc.dictionary_encode(key).indices.to_pylist()
    first: dict[int, int] = {}
    for row, code in enumerate(codes):
        first.setdefault(code, row)
    lists = dict(zip(first, column.take(pa.array(list(first.values()), pa.int64())).to_pylist(), strict=True))
    return [lists[code] for code in codes]
