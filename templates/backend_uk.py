"""Ukrainian inflection with pymorphy3 and ``pymorphy3-dicts-uk`` (the VESUM dictionary, offline), on the
engine it shares with Russian (``backend_slavic``): head-first multiword inflection with agreeing
adjectives (``Об'єднані Арабські Емірати -> Об'єднаних Арабських Еміратах``), person names in the
person's gender, indeclinables kept (Торонто, Сантьяго, Маямі), capitalisation restored.

Ukrainian's own, each a named rule recorded with the form:
- ``uk-case-form``: the dictionary lists several forms for some cases; the standard one is chosen
  (Український правопис 2019, §§ 82-83 and the locative of § 84): a city's genitive in «-а/-я» (Каїра,
  Лондона), a country's, region's, river's, genre's in «-у/-ю» (Єгипту, Техасу, Дунаю, джазу); the
  locative after у/в/на in «-і/-ї» (у Каїрі, в Єгипті, у Гамбурзі), in «-у/-ю» after a stem in «к»,
  «х» (в Іраку, у Нью-Йорку, у Цюриху), never the personal «-ові/-еві» (Іракові); a masculine adjective's
  locative in «-ому» (у Новому Південному Уельсі), not the poetic «-ім».
- ``uk-euphony`` (§ 23, § 24, милозвучність): «у» or «в», «з», «із» or «зі» by the sound before and after
  the preposition: «в Італії» (before a vowel), «у Франції», «у Швейцарії» (before в, ф and clusters
  with в), «народився в Каїрі» (after a vowel), «помер у Каїрі» (between consonants), «У Каїрі …» at the
  start of a sentence; «межує з Єгиптом», «із Сирією», «зі Швейцарією».
- «на» before islands and archipelagos (lexicon ``data/uk_prepositions.yaml``, then the island classes):
  «на Кубі», «на Філіппінах», «на Мадейрі».
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

import factatlas.templates.backend_slavic as slavic
from factatlas.templates.morphology import FAILED, Agreement, Features, InflectionRequest, InflectionResult

VOWELS = frozenset("аеєиіїоуюя")
# the kinds of thing whose masculine genitive is «-а/-я» when the dictionary lists both (§ 82: names
# of settlements; concrete things such as instruments); every other kind takes «-у/-ю»
_GENITIVE_A = frozenset({"settlement", "instrument", "person", "occupation"})
_PERSONAL_ENDINGS = ("ові", "еві", "єві")


def _ending_is(form: str, endings: str | tuple[str, ...]) -> bool:
    return form.endswith(endings)


def choose_form(parse, grammemes: frozenset, kind: str):
    """Rule ``uk-case-form``: the standard form among those the dictionary lists for one case, or None
    when it lists one (pymorphy3's own then)."""
    first = parse.inflect(set(grammemes))
    if first is None or parse.tag.POS not in ("NOUN", "ADJF", "PRTF"):
        return first
    # the word's other dictionary readings of the same kind are the same name in another paradigm: «Судан»
    # is listed twice, with «Судана» and with «Судану»
    lexemes = [parse.lexeme] + [p.lexeme for p in slavic.parse_word("uk", parse.normal_form)
                                if p.normal_form == parse.normal_form and p.tag.POS == parse.tag.POS
                                and p.tag.gender == parse.tag.gender and slavic.is_dictionary(p)
                                and "Fixd" not in p.tag.grammemes]
    same = [f for lexeme in lexemes for f in lexeme
            if f.tag.case == first.tag.case and f.tag.number == first.tag.number
            and f.tag.gender == first.tag.gender and "alt" not in f.tag.grammemes]
    words = list(dict.fromkeys(f.word for f in same))
    if len(words) < 2:
        return first
    by_word = {f.word: f for f in reversed(same)}
    case, noun = first.tag.case, parse.tag.POS == "NOUN"
    pick: str | None = None
    if noun and case == "loct":
        plain = [w for w in words if not _ending_is(w, _PERSONAL_ENDINGS)]
        stem = parse.normal_form[-1:]
        soft_u = [w for w in plain if _ending_is(w, ("у", "ю"))]
        soft_i = [w for w in plain if _ending_is(w, ("і", "ї"))]
        pick = next(iter((soft_u if stem in "кх" else soft_i) or soft_i or soft_u or plain), None)
    elif noun and case == "gent" and first.tag.number != "plur" and parse.tag.gender == "masc":
        wanted = ("а", "я") if kind in _GENITIVE_A or parse.tag.animacy == "anim" else ("у", "ю")
        pick = next((w for w in words if _ending_is(w, wanted)), None)
    elif noun and case == "datv" and first.tag.number != "plur" and parse.tag.gender == "masc":
        personal = kind in ("person", "occupation") or parse.tag.animacy == "anim"
        pick = next((w for w in words if _ending_is(w, _PERSONAL_ENDINGS) == personal), None)
    elif not noun and case == "loct" and first.tag.gender in ("masc", "neut"):
        pick = next((w for w in words if _ending_is(w, ("ому", "ьому"))), None)
    return by_word[pick] if pick is not None else first


UKRAINIAN = slavic.load_language("uk", choose=choose_form)


@lru_cache(maxsize=200_000)
def inflect_ukrainian(label: str, case: str, number: str | None, person_gender: str | None,
                      is_person: bool, animate: bool | None = None, kind: str = "") -> tuple[str, str, str] | None:
    """(form, status, detail) or None: ``backend_slavic.inflect_phrase`` in Ukrainian."""
    return slavic.inflect_phrase(UKRAINIAN, label, case, number, person_gender, is_person, animate, kind)


def lexicon_agreement(label: str) -> Agreement | None:
    """Gender and number of a Ukrainian name's head noun, from the dictionary (None if unknown/Latin)."""
    return slavic.lexicon_agreement(UKRAINIAN, label)


def indeclinable_name(label: str) -> bool:
    """A one-word foreign name ending in a vowel that does not decline: «Теннессі», «Абу-Дабі»."""
    return slavic.indeclinable_name(UKRAINIAN, label)


# ---- милозвучність: у/в, з/із/зі (rule uk-euphony) -------------------------------------------------

PAUSE = ""  # the start of a sentence, or a pause (comma, dash, colon ...) before the preposition


def _sound_before(before: str) -> str:
    """'vowel', 'consonant' or 'pause' for the last character written before the preposition."""
    low = before[-1:].lower()
    if not low or not low.isalpha() and low not in "'’":
        return "pause"
    return "vowel" if low in VOWELS else "consonant"


def _letters(word: str) -> str:
    return re.sub(r"[^\w']", "", word.lower())


def u_or_v(before: str, word: str) -> str:
    """«у» or «в» before ``word`` (правопис § 23): «у» before в, ф and a consonant + в (у Франції, у
    Швейцарії, у Львові); else «в» before a vowel (в Італії, В Єгипті …) and after a vowel (народився в
    Каїрі); «у» between consonants (помер у Каїрі) and at a pause before a consonant (У Каїрі …)."""
    low = _letters(word)
    first, second = low[:1], low[1:2]
    if first in ("в", "ф") or (first and first not in VOWELS and second == "в"):
        return "у"
    if first in VOWELS:
        return "в"
    return "в" if _sound_before(before) == "vowel" else "у"


def z_form(before: str, word: str) -> str:
    """«з», «із» or «зі» before ``word`` (правопис § 24): «зі» before з, с, ш, щ + a consonant
    (зі Швейцарією, зі Сполученими Штатами, зі Словаччиною); «із» between consonants (брат із Сирією); «з»
    otherwise: before a vowel, after a vowel, at the start (межує з Сирією, з Єгиптом, З Францією …)."""
    low = _letters(word)
    first, second = low[:1], low[1:2]
    if first and first in "зсшщ" and second and second not in VOWELS:
        return "зі"
    if first and first not in VOWELS and _sound_before(before) == "consonant":
        return "із"
    return "з"


@cache
def _settlement_classes() -> frozenset[str]:
    from factatlas.templates.gender import class_types

    return frozenset(q for q, kind in class_types().items() if kind == "settlement")


class UkrainianBackend(slavic.SlavicBackend):
    name = "pymorphy3-uk"
    language = UKRAINIAN
    prepositions = ("в", "з")

    def phrase(self, label, case, number, person_gender, is_person, animate, kind):
        return inflect_ukrainian(label, case, number, person_gender, is_person, animate, kind)

    def kind(self, request: InflectionRequest) -> str:
        """A place the predicate calls a settlement (a birthplace) whose classes name no settlement is a
        region («Квебеку», the province; «Квебека» would be the city): the genitive depends on it."""
        etype = request.entity_type
        if etype == "settlement" and request.classes and not _settlement_classes() & set(request.classes):
            return "region"
        return etype


    def _with_preposition(self, label: str, lang: str, features: Features, request: InflectionRequest
                          ) -> InflectionResult | None:
        if request.before is None:
            return InflectionResult(label, FAILED, self.name,
                                    f"«{features.preposition}» before '{label}' depends on the word before it, "
                                    "which changes with the subject here; write a fixed word before the slot")
        return super()._with_preposition(label, lang, features, request)

    def preposition(self, features: Features, label: str, bare: str, request: InflectionRequest
                    ) -> tuple[str, str]:
        before = "" if request.sentence_initial else request.before
        word = bare.lstrip("«„\"")
        if features.preposition == "з":
            return z_form(before, word), "rule:uk-euphony"
        entry = request.entry
        if entry is not None and entry.prep in ("в", "у", "на"):
            prep, how = ("в" if entry.prep == "у" else entry.prep), entry.how
        else:
            prep, how = slavic.place_preposition("uk", label, request.classes)
        if prep == "в":
            prep = u_or_v(before, word)
            if how == "default":
                how = "rule:uk-euphony"
        return prep, how
