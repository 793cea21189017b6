"""Russian inflection with pymorphy3 (OpenCorpora dictionary, offline), on the engine it shares with
Ukrainian (``backend_slavic``): head-first multiword inflection, person names in the person's gender,
indeclinables kept, capitalisation restored, names in Latin script kept as written, and a name spelt
without ``ё`` keeps being spelt without it. Russian's own: «в» or «на» before a place (lexicon
``data/ru_prepositions.yaml``, then islands by class) and «во»/«со» before some clusters.
"""

from __future__ import annotations

from functools import lru_cache

import factatlas.templates.backend_slavic as slavic
from factatlas.templates.morphology import Agreement, Features, InflectionRequest

RUSSIAN = slavic.load_language("ru")
NAME_PARTICLES = RUSSIAN.particles


def parse_word(word: str) -> tuple:
    return slavic.parse_word("ru", word)


@lru_cache(maxsize=200_000)
def inflect_russian(label: str, case: str, number: str | None, person_gender: str | None,
                    is_person: bool, animate: bool | None = None) -> tuple[str, str, str] | None:
    """(form, status, detail) or None: ``backend_slavic.inflect_phrase`` in Russian."""
    return slavic.inflect_phrase(RUSSIAN, label, case, number, person_gender, is_person, animate)


def lexicon_agreement(label: str) -> Agreement | None:
    """Gender and number of a Russian name's head noun, from the dictionary (None if unknown/Latin)."""
    return slavic.lexicon_agreement(RUSSIAN, label)


def indeclinable_name(label: str) -> bool:
    """A one-word foreign name ending in a vowel that does not decline: «Теннесси», «Абу-Даби»."""
    return slavic.indeclinable_name(RUSSIAN, label)


def place_preposition(label: str, classes: tuple[str, ...] = ()) -> tuple[str, str]:
    """«в» or «на» before the place ``label`` (its nominative), and how it was decided: ``lexicon``
    (templates/data/ru_prepositions.yaml), ``rule:<class>`` (an island or archipelago), or ``default``."""
    return slavic.place_preposition("ru", label, classes)


_VOWEL_LETTERS = frozenset("аеёиоуыэюя")


def preposition_allomorph(preposition: str, word: str) -> str:
    """«во»/«со» before a word opening with a consonant cluster whose first sound repeats the preposition's:
    «во Франции», «во Вьетнаме», «со Швейцарией», «со Словакией»; «в Венгрии», «с Сербией» otherwise."""
    low = word.lower()
    if len(low) < 2 or low[1] in _VOWEL_LETTERS or not ("\u0400" <= low[1] <= "\u04ff"):
        return preposition
    if preposition == "в" and low[0] in "вф":
        return "во"
    if preposition == "с" and low[0] in "сзшжщ":
        return "со"
    return preposition


class RussianBackend(slavic.SlavicBackend):
    name = "pymorphy3"
    language = RUSSIAN
    prepositions = ("в", "с")

    def phrase(self, label, case, number, person_gender, is_person, animate, kind):
        return inflect_russian(label, case, number, person_gender, is_person, animate)

    def preposition(self, features: Features, label: str, bare: str, request: InflectionRequest
                    ) -> tuple[str, str]:
        entry = request.entry
        if features.preposition == "в" and entry is not None and entry.prep in ("в", "на"):
            word, how = entry.prep, entry.how
        elif features.preposition == "в":
            word, how = place_preposition(label, request.classes)
        else:
            word, how = "с", "fixed"
        word = preposition_allomorph(word, bare.lstrip("«„\""))
        if word != features.preposition and how in ("default", "fixed"):
            how = "allomorph"
        return word, how
