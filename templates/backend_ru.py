"""Russian inflection with pymorphy3 (OpenCorpora dictionary, offline).

Multiword names inflect head-first: the adjectives and participles before the head noun agree with it,
the head takes the case, the rest stays (``Соединённые Штаты Америки -> Соединённых Штатах Америки``).
Person names inflect every name word (first name, patronymic, surname) in the person's gender.
Indeclinables (``Fixd``: Торонто, Сочи) stay, capitalisation is restored, names in Latin script are
kept as written, and a name spelt without ``ё`` keeps being spelt without it.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

from factatlas.templates.morphology import (
    EXACT,
    GUESSED,
    NONE,
    Agreement,
    Features,
    InflectionRequest,
    InflectionResult,
)

from factatlas.records import Gender

CASE_TAGS = {"nom": "nomn", "gen": "gent", "dat": "datv", "acc": "accs", "ins": "ablt", "loc": "loct"}
NUMBER_TAGS = {"sg": "sing", "pl": "plur"}
NAME_TAGS = {"Name", "Surn", "Patr"}
_CYRILLIC = re.compile(r"[\u0400-\u04FF]")
_SPLIT = re.compile(r"(\s+)")


@cache
def analyzer():
    import pymorphy3

    return pymorphy3.MorphAnalyzer(lang="ru")


def _is_dictionary(parse) -> bool:
    return type(parse.methods_stack[0][0]).__name__ == "DictionaryAnalyzer"


def _restore(new: str, old: str) -> str:
    from pymorphy3.shapes import restore_capitalization

    if "-" in old and new.count("-") == old.count("-"):
        return "-".join(restore_capitalization(n, o) for n, o in zip(new.split("-"), old.split("-"), strict=True))
    out = restore_capitalization(new, old)
    if "ё" not in old.lower():
        out = out.replace("ё", "е").replace("Ё", "Е")
    return out


def _nominative(parses, pos: tuple[str, ...], gender: str | None = None):
    for p in parses:
        if p.tag.POS in pos and p.tag.case == "nomn" and (gender is None or p.tag.gender in (gender, None)):
            return p
    return None


_GENDER_TAG = {Gender.MASCULINE: "masc", Gender.FEMININE: "femn", Gender.NEUTER: "neut"}


@lru_cache(maxsize=200_000)
def inflect_russian(label: str, case: str, number: str | None, person_gender: str | None,
                    is_person: bool) -> tuple[str, str, str] | None:
    """(form, status, detail) or None when the head cannot be found or pymorphy3 cannot inflect it."""
    morph = analyzer()
    parts = _SPLIT.split(label)
    words = parts[0::2]
    grammemes = {CASE_TAGS[case]} | ({NUMBER_TAGS[number]} if number else set())
    parses = [morph.parse(w) for w in words]
    out = list(words)
    guessed: list[str] = []

    def inflect_at(i: int, parse) -> bool:
        if "Fixd" in parse.tag:
            return True
        new = parse.inflect(grammemes)
        if new is None:
            return False
        if not _is_dictionary(parse):
            guessed.append(words[i])
        out[i] = _restore(new.word, words[i])
        return True

    if is_person:
        done = 0
        for i, ps in enumerate(parses):
            p = next((p for p in ps if p.tag.case == "nomn" and NAME_TAGS & set(p.tag.grammemes)
                      and (person_gender is None or p.tag.gender in (person_gender, None))), None)
            if p is None:
                p = _nominative(ps, ("NOUN",), person_gender)
            if p is None:
                continue
            if not inflect_at(i, p):
                return None
            done += 1
        if not done:
            return None
    else:
        head = None
        for i, ps in enumerate(parses):
            modifier = _nominative(ps, ("ADJF", "PRTF"))
            noun = _nominative(ps, ("NOUN",))
            next_is_noun = i + 1 < len(parses) and _nominative(parses[i + 1], ("NOUN",)) is not None
            if modifier is not None and (noun is None or next_is_noun):
                continue
            if noun is not None:
                head = i
            break
        if head is None:
            return None
        head_parse = _nominative(parses[head], ("NOUN",))
        if not inflect_at(head, head_parse):
            return None
        for i in range(head):
            mod = _nominative(parses[i], ("ADJF", "PRTF"))
            if mod is None or not inflect_at(i, mod):
                return None
    parts[0::2] = out
    form = "".join(parts)
    if guessed:
        return form, GUESSED, "not in the OpenCorpora dictionary: " + ", ".join(guessed)
    return form, EXACT, ""


def lexicon_agreement(label: str) -> Agreement | None:
    """Gender and number of a Russian name's head noun, from the dictionary (None if unknown/Latin)."""
    if not _CYRILLIC.search(label):
        return None
    morph = analyzer()
    words = label.split()
    parses = [morph.parse(w) for w in words]
    for i, ps in enumerate(parses):
        modifier = _nominative(ps, ("ADJF", "PRTF"))
        noun = _nominative(ps, ("NOUN",))
        next_is_noun = i + 1 < len(parses) and _nominative(parses[i + 1], ("NOUN",)) is not None
        if modifier is not None and (noun is None or next_is_noun):
            continue
        if noun is None or not _is_dictionary(noun):
            return None
        if noun.tag.number == "plur" or "Pltm" in noun.tag:
            return Agreement(Gender.UNKNOWN, "pl", "lexicon:pymorphy3")
        gender = {"masc": Gender.MASCULINE, "femn": Gender.FEMININE, "neut": Gender.NEUTER}.get(noun.tag.gender or "")
        if gender is None or "Ms-f" in noun.tag:
            return None
        return Agreement(gender, "sg", "lexicon:pymorphy3")
    return None


class RussianBackend:
    name = "pymorphy3"

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        if features.article or features.preposition or features.particle:
            return None
        if features.is_plain or (features.case in (None, "nom") and features.number is None):
            return InflectionResult(label, NONE, self.name)
        if not _CYRILLIC.search(label):
            return InflectionResult(label, NONE, self.name, "non-Cyrillic name kept as written")
        is_person = request.entity_type == "person"
        gender = _GENDER_TAG.get(request.agreement.gender)
        found = inflect_russian(label, features.case or "nom", features.number, gender, is_person)
        if found is None:
            return None
        form, status, detail = found
        return InflectionResult(form, status, self.name, detail)
