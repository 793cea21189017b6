"""What a template says around a slot, which the slot's form depends on: a sentence start (capitalised), the
punctuation after it, the text before it (a preposition's sound), and the form of an agreement group
``{X: …}`` that holds for the subject (``choose_option``: gender, number, life status)."""

from __future__ import annotations

import re

from factatlas.records import Gender, Life
from factatlas.templates.morphology import Agreement
from factatlas.templates.syntax import Group, Text

_SENTENCE_END = (".", "!", "?", "。", "！", "？", "؟", ":", "\n")


def opens_sentence(nodes: tuple, index: int) -> bool:
    """True when the node at ``index`` opens the text or follows a sentence end."""
    tail = ""
    for node in reversed(nodes[:index]):
        if not isinstance(node, Text):
            return bool(tail.strip()) and tail.rstrip().endswith(_SENTENCE_END)
        tail = node.value + tail
        if tail.strip():
            return tail.rstrip().endswith(_SENTENCE_END)
    return True


def before_punctuation(nodes: tuple, index: int) -> bool:
    """True when the node after ``index`` is text that starts with sentence punctuation."""
    nxt = nodes[index + 1] if index + 1 < len(nodes) else None
    return isinstance(nxt, Text) and nxt.value[:1] in ".,;:!?"


def text_before(nodes: tuple) -> str | None:
    """The template text right before a slot, as far back as its last letter; an agreement group there
    counts by the last letter its forms share («народився» / «народилася»: «я»); None when a slot or a
    group whose forms end differently comes first (what is written there changes with the subject)."""
    tail = ""
    for node in reversed(nodes):
        if isinstance(node, Group) and not tail.strip():
            ends = {_LETTERS_END.sub("", option.form)[-1:] for option in node.options}
            return next(iter(ends)) + tail if len(ends) == 1 and "" not in ends else None
        if not isinstance(node, Text):
            return tail if tail.strip() else None
        tail = node.value + tail
        if tail.strip():
            return tail
    return tail


_LETTERS_END = re.compile(r"[\W\d_]+$")


def last_sound(before: str | None) -> str | None:
    """The last non-space character of ``before`` (all a preposition's form may depend on), so that
    forms are cached by it, not by the whole text."""
    return before.rstrip()[-1:] if before is not None else None


def _holds(value: str, agreement: Agreement, life: Life) -> bool:
    if value in ("sg", "pl"):
        return agreement.number == value
    if value in ("alive", "dead"):
        return life.value == value
    return _GENDER_VALUE.get(agreement.gender) == value


_GENDER_VALUE = {Gender.MASCULINE: "masc", Gender.FEMININE: "fem", Gender.NEUTER: "neut"}


def choose_option(group: Group, agreement: Agreement, life: Life = Life.UNKNOWN) -> str | None:
    """The form of an agreement group for an entity: the option whose values all hold, the most specific
    first (``fem+dead`` before ``dead`` before ``other``); among single values plural first, then gender,
    then sg (only in a group without gender forms), then life status; ``other`` when none holds.

    A life value holds only for a known status: a person whose death Wikidata does not record and whose
    life the curate stage could not decide takes the life-free options, which the validator makes the
    template give (``other``, or forms by gender/number alone)."""
    gendered = bool(group.atoms & {"masc", "fem", "neut"})
    best: tuple[tuple[int, bool, bool, bool], str] | None = None
    for option in group.options:
        values = option.values
        if values == ("other",) or (values == ("sg",) and gendered):
            continue
        if not all(_holds(v, agreement, life) for v in values):
            continue
        rank = (len(values), "pl" in values, bool(set(values) & {"masc", "fem", "neut"}),
                bool(set(values) & {"alive", "dead"}))
        if best is None or rank > best[0]:
            best = (rank, option.form)
    if best is not None:
        return best[1]
    return group.form("other")
