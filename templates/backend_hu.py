"""Hungarian case suffixes and the definite article (backend "hungarian").

A template writes a suffix after ``+`` in its back-vowel spelling, and ``.def`` for the article; the
backend gives both the shape the name takes (rules of *A magyar helyesírás szabályai*, 12th ed., 2015,
§§ 215-219 on foreign names, and the grammar of suffixes in Keszler (ed.), *Magyar grammatika*, 2000):

=======  =====================================================  =============================================
 suffix   meaning                                               examples
=======  =====================================================  =============================================
 +ban     where: inessive -ban/-ben, or superessive -on/-en/-ön  Londonban, Kairóban, Berlinben; Magyarországon,
          for the names that take it (islands, -föld, lexicon)   a Fülöp-szigeteken, Thaiföldön, Tajvanon
 +ból     where from: elative / delative, by the same class      Franciaországból, Magyarországról
 +ba      where to: illative / sublative, by the same class      Kairóba, Magyarországra
 +on      superessive always (instruments, "in a language")      gitáron, zongorán, arab nyelven
 +t       accusative -t, linking vowel o/e/ö where needed        az arab nyelvet, Londont, Bagdadot
 +nak     dative -nak/-nek                                       Párizsnak, Bécsnek
 +val     instrumental -val/-vel, v assimilated                  Párizzsal, Londonnal, Kairóval, Svájccal
 +ként    essive-formal -ként (invariant)                        énekesként, zongoristaként
=======  =====================================================  =============================================

- **Harmony** from the last vowel that is not i/í (those are neutral: Párizsban, Madridban, but
  Berlinben); e/é after a back vowel make the word front (Jeruzsálemben, Buenos Airesben); ö ő ü ű take
  the rounded -ön. Foreign names are read by ``templates/data/hu_morphology.yaml`` (Auckland -> oklend:
  Aucklandben; d'Azur -> dazür).
- **Lengthening** of a final a, e, o before a suffix: Ankara -> Ankarában, Chile -> Chilében, Chicago ->
  Chicagóban (not before -ként: zongoristaként).
- **Silent final letters** (Bordeaux, Marseille, Illinois, Île-de-France) take a hyphen, and the suffix
  agrees with the sound: Bordeaux-ban, Marseille-ben, Marseille-jel (§ 217).
- **v-assimilation**: the instrumental's v becomes the last consonant, doubled as Hungarian writes it
  (Párizzsal, Svájccal, Zürichhel); a name ending in a double letter takes a hyphen (Nouakchott-tal).
- **The article** a/az before the sound that follows (az arab nyelv, a gitár, az NBC, a HBO, a Universal
  Music Group), only for names that take one: common nouns, names headed by a common noun (az Egyesült
  Államok, a Holland Királyság, a Fülöp-szigetek), landmarks (az Eiffel-torony, a Duna), companies, and
  the lexicon's `article: def` (a Vatikán); never a person, a city, a country name without such a head.
- **Works** are named with their kind (``work_nouns``): «a Jóbarátok című sorozat», «A Keresztapa című
  film» (a title's own article stands for the article), the suffix going on the kind noun.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml

from factatlas.templates.morphology import (
    EXACT,
    FAILED,
    GUESSED,
    NONE,
    Features,
    InflectionRequest,
    InflectionResult,
    language_registry,
)
from factatlas.templates.predicates import COMMON_NOUN_TYPES

# canonical spelling -> (case, whether the place's in/on class decides it)
SUFFIXES = {"ban": "ine", "ból": "ela", "ba": "ill", "on": "sup", "t": "acc", "nak": "dat", "val": "ins",
            "ként": "ess"}
PARTICLES = frozenset(SUFFIXES)
# the on-class counterpart of the in-class local cases (Magyarországon, -ról, -ra)
ON_CLASS = {"ine": "sup", "ela": "del", "ill": "sub"}
# case -> (back, front unrounded, front rounded) endings after a consonant / after a vowel
_ENDINGS = {
    "ine": (("ban", "ben", "ben"),) * 2,
    "ela": (("ból", "ből", "ből"),) * 2,
    "ill": (("ba", "be", "be"),) * 2,
    "dat": (("nak", "nek", "nek"),) * 2,
    "del": (("ról", "ről", "ről"),) * 2,
    "sub": (("ra", "re", "re"),) * 2,
    "sup": (("on", "en", "ön"), ("n", "n", "n")),
    "ess": (("ként", "ként", "ként"),) * 2,
}
BACK, FRONT, ROUNDED = frozenset("aáoóuú"), frozenset("eé"), frozenset("öőüű")
NEUTRAL = frozenset("ií")
VOWELS = BACK | FRONT | ROUNDED | NEUTRAL
_LENGTHEN = {"a": "á", "e": "é", "o": "ó"}
# accusative -t straight after these (Londont, Párizst), a linking vowel after the others (Bagdadot)
_T_DIRECT = ("j", "l", "ly", "n", "ny", "r", "s", "sz", "z", "zs")
_DIGRAPHS = ("dzs", "sz", "zs", "cs", "gy", "ny", "ty", "ly", "dz", "ch")
_FOREIGN = str.maketrans({"à": "a", "â": "a", "ã": "a", "ä": "e", "è": "e", "ê": "e", "ë": "e", "î": "i",
                          "ï": "i", "ì": "i", "ô": "o", "ò": "o", "õ": "o", "ù": "u", "û": "u", "ñ": "n",
                          "ç": "sz", "w": "v", "x": "ksz", "q": "k"})
# letter names: whether the name of the letter starts with a vowel (el, em, en, er, es, ef, iksz)
_VOWEL_LETTERS = frozenset("aáeéiíoóöőuúüűflmnrsxy")
_DIGIT_WORDS = ("nulla", "egy", "kettő", "három", "négy", "öt", "hat", "hét", "nyolc", "kilenc")
_ACRONYM = re.compile(r"^[A-ZÁÉÍÓÖŐÚÜŰ0-9.]{2,}$")


@cache
def _data() -> dict:
    raw = yaml.safe_load(resources.files("factatlas.templates").joinpath("data/hu_morphology.yaml")
                         .read_text("utf-8")) or {}
    return {"readings": {str(k): str(v) for k, v in (raw.get("readings") or {}).items()},
            "silent_end": frozenset(raw.get("silent_end") or ()),
            "on_class_words": tuple(raw.get("on_class_words") or ()),
            "article_heads": frozenset(raw.get("article_heads") or ()),
            "landmark_classes": frozenset(raw.get("landmark_classes") or ())}


@dataclass(frozen=True, slots=True)
class Sound:
    """How a word ends when read: its harmony class, its last sound, and whether the spelling ends silently."""

    harmony: str  # back | front | rounded
    last: str  # the last sound, in Hungarian letters ("á", "n", "sz", "j")
    vowel_final: bool
    silent: bool  # the written end is not pronounced: a hyphen before the suffix
    how: str  # table | spelling | spelling:foreign


def harmony_of(sound: str) -> str:
    """back | front | rounded: the last vowel that is not the neutral i/í decides back or front (Párizs back,
    Berlin front); a front word is rounded when its very last vowel is ö ő ü ű (Thaiföldön, but Zürichet)."""
    vowels = [ch for ch in sound if ch in VOWELS]
    for ch in reversed(vowels):
        if ch in BACK:
            return "back"
        if ch in FRONT | ROUNDED:
            return "rounded" if vowels[-1] in ROUNDED else "front"
    return "front"


def _last_sound(sound: str) -> str:
    for dg in _DIGRAPHS:
        if sound.endswith(dg):
            return dg
    return sound[-1:] if sound else ""


# Hungarian letter names: how an acronym's last letter is read (USA -> á: «USA-ban»; ENSZ -> esz: «ENSZ-szel»)
_LETTER_NAMES = {"a": "á", "á": "á", "b": "bé", "c": "cé", "d": "dé", "e": "e", "é": "é", "f": "ef", "g": "gé",
                 "h": "há", "i": "i", "í": "í", "j": "jé", "k": "ká", "l": "el", "m": "em", "n": "en", "o": "ó",
                 "ó": "ó", "ö": "ő", "ő": "ő", "p": "pé", "q": "kú", "r": "er", "s": "es", "t": "té", "u": "ú",
                 "ú": "ú", "ü": "ű", "ű": "ű", "v": "vé", "w": "duplavé", "x": "iksz", "y": "ipszilon", "z": "zé"}


_DIGRAPH_NAMES = {"SZ": "esz", "ZS": "zsé", "CS": "csé", "GY": "gyé", "NY": "eny", "TY": "tyé", "LY": "ellipszilon"}


def is_acronym(word: str) -> bool:
    """An initialism written in capitals (USA, EAE, NBC, ENSZ): read by its letter names."""
    bare = word.strip(".")
    return len(bare) >= 2 and bare.isalpha() and bare.isupper()


def sound_of(word: str) -> Sound:
    """The end of ``word`` as a Hungarian reader says it: the readings table, an acronym's letter name (the
    suffix then follows a hyphen, AkH § 279: «USA-ban», «az EAE-ben»), else the spelling."""
    data = _data()
    bare = word.strip("'\"”“’()")
    if is_acronym(bare) and bare not in data["readings"]:
        digraph = next((d for d in ("SZ", "ZS", "CS", "GY", "NY", "TY", "LY") if bare.endswith(d)), None)
        name = _DIGRAPH_NAMES[digraph] if digraph else _LETTER_NAMES.get(bare[-1].lower(), bare[-1].lower())
        last = _last_sound(name)
        return Sound(harmony_of(name), last, last in VOWELS, True, "acronym")
    # a hyphenated name is read by its last part where the whole is not listed: Új-Dél-Wales like Wales
    part = bare.rsplit("-", 1)[-1]
    reading = data["readings"].get(bare, data["readings"].get(part))
    silent = bare in data["silent_end"] or part in data["silent_end"]
    if reading is not None:
        s, how = reading.lower(), "table"
    else:
        low = bare.lower()
        # letters Hungarian does not write natively (y only in ly ny gy ty, as in Nápoly)
        foreign = any(c.isalpha() and c not in "aábcdeéfghiíjklmnoóöőpqrstuúüűvwxyz" for c in low) or \
            any(c in low for c in "qwx") or re.search(r"(?<![lngt])y", low) is not None
        # y is a vowel (i) except in the digraphs ly ny gy ty (Nápoly, Kenya)
        s = re.sub(r"(?<![lngt])y", "i", low).translate(_FOREIGN)
        how = "spelling:foreign" if foreign else "spelling"
    letters = "".join(c for c in s if c.isalpha())
    last = _last_sound(letters)
    return Sound(harmony_of(letters), last, last in VOWELS, silent, how)


def _pick(options: tuple[str, str, str], harmony: str) -> str:
    return options[{"back": 0, "front": 1, "rounded": 2}[harmony]]


def _assimilated(stem: str, sound: Sound) -> tuple[str, str]:
    """(stem, ending) of the instrumental: -val/-vel after a vowel, else the last consonant doubled."""
    vowel = "a" if sound.harmony == "back" else "e"
    if sound.vowel_final:  # Kairóval; after a silent end with a hyphen: Bordeaux-val
        return stem + ("-" if sound.silent else ""), "v" + vowel + "l"
    last = sound.last
    if sound.silent or (len(stem) > 1 and stem[-1] == stem[-2] and stem[-1].isalpha()):
        # Marseille-jel, Illinois-jal, Nouakchott-tal: a hyphen, then the sound doubled
        return stem + "-", (last if len(last) == 1 else last) + vowel + "l"
    if last == "ch":  # Zürichhel, Bachhal: ch is read h
        return stem, "h" + vowel + "l"
    if len(last) > 1 and stem.lower().endswith(last):  # a digraph: sz -> ssz, zs -> zzs, dzs -> ddzs
        return stem[:-len(last)] + last[0] + stem[-len(last):], vowel + "l"
    # a consonant doubled (Londonnal, Svájccal), or one the spelling does not show: Paraguay -> Paraguayjal
    return stem, last + vowel + "l"


def inflect_word(stem: str, case: str, sound: Sound) -> str:
    """``stem`` (its last word read as ``sound``) with the suffix of ``case``."""
    if case == "ess":
        return stem + ("-" if sound.silent else "") + "ként"
    if case == "ins":
        base, ending = _assimilated(stem, sound)
        if not sound.silent and sound.vowel_final and stem[-1:] in _LENGTHEN and stem[-2:] not in ("ee", "oo"):
            base = stem[:-1] + _LENGTHEN[stem[-1]]
        return base + ending
    if sound.silent:
        stem += "-"
    elif stem[-1:] in _LENGTHEN and stem[-2:] not in ("ee", "oo"):  # Tennesseeben: ee is read í
        stem = stem[:-1] + _LENGTHEN[stem[-1]]
    if case == "acc":
        if sound.vowel_final:
            return stem + "t"
        if sound.last in _T_DIRECT:
            return stem + "t"
        return stem + _pick(("o", "e", "ö"), sound.harmony) + "t"
    after_consonant, after_vowel = _ENDINGS[case]
    return stem + _pick(after_vowel if sound.vowel_final else after_consonant, sound.harmony)


def article_for(text: str) -> str:
    """a or az, by the first sound of ``text`` (az arab, a HBO, az NBC, a Universal, az 1)."""
    data = _data()
    first = text.split()[0] if text.split() else text
    bare = first.strip("„“”\"'(")
    reading = data["readings"].get(bare)
    if reading is not None:
        return "az" if reading[:1].lower() in VOWELS else "a"
    if not bare:
        return "a"
    if bare[0].isdigit():
        digits = re.match(r"\d+", bare).group()
        return "az" if digits in ("1", "5") or (len(digits) == 1 and digits in "15") else "a"
    if _ACRONYM.match(bare) and not bare.isdigit():
        return "az" if bare[0].lower() in _VOWEL_LETTERS else "a"
    ch = bare[0].lower().translate(_FOREIGN)[:1]
    return "az" if ch in VOWELS else "a"


def on_class(label: str, entry) -> bool:
    """Whether a place takes the superessive: the lexicon's `prep: on`, else a last word listed in
    hu_morphology.yaml (-szigetek, -föld, terület)."""
    if entry is not None and entry.prep:
        return entry.prep == "on"
    last = label.split()[-1].lower() if label.split() else ""
    return any(last.endswith(w) for w in _data()["on_class_words"])


def takes_article(label: str, etype: str, classes: tuple[str, ...], entry) -> tuple[bool, str]:
    """(whether the name takes the definite article in running text, the rule that decided)."""
    if entry is not None and entry.article:
        return entry.article == "def", entry.how
    if etype in COMMON_NOUN_TYPES or etype in ("record-label", "tv-network"):
        return True, "rule:common-noun"
    words = label.replace("-", " ").split()
    if words and words[-1] in _data()["article_heads"]:
        return True, "rule:common-head"
    if etype == "country" and len(words) == 1 and is_acronym(words[0]):  # az USA, az EAE
        return True, "rule:acronym"
    if set(classes) & _data()["landmark_classes"]:
        return True, "rule:landmark"
    return False, "rule:proper-name"


class HungarianBackend:
    name = "hungarian"

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        if features.number or features.preposition or features.article not in (None, "def"):
            return None
        if features.case not in (None, "nom"):
            return None
        if features.particle is not None and features.particle not in SUFFIXES:
            return None
        case = SUFFIXES.get(features.particle or "")
        details: list[str] = []
        if request.entity_type == "work":
            return self._work(label, lang, case, request)
        stem, status = label, EXACT
        if case is not None:
            if request.entity_type in COMMON_NOUN_TYPES and case == "sup" and request.entity_type == "language" \
                    and label.split()[-1] != "nyelv":
                stem = f"{label} nyelv"  # «amerikai angol» -> «amerikai angol nyelven»
                details.append("rule:language-noun")
            if case in ON_CLASS and on_class(label, request.entry):
                case = ON_CLASS[case]
                details.append(f"on-class:{request.entry.how if request.entry is not None and request.entry.prep else 'rule'}")
            words = stem.split(" ")
            sound = sound_of(words[-1])
            if sound.how == "spelling:foreign":
                status = GUESSED
                details.append(f"'{words[-1]}' is read as spelt: add its reading to templates/data/hu_morphology.yaml")
            else:
                details.append(f"read: {sound.how}")
            words[-1] = inflect_word(words[-1], case, sound)
            stem = " ".join(words)
        if features.article == "def":
            takes, how = takes_article(label, request.entity_type, request.classes, request.entry)
            details.append(f"article {how}")
            if takes:
                stem = f"{article_for(label)} {stem}"
        if case is None and not features.article:
            return InflectionResult(label, NONE, self.name)
        return InflectionResult(stem, status, self.name, "; ".join(details))

    def _work(self, label: str, lang: str, case: str | None, request: InflectionRequest) -> InflectionResult:
        spec = language_registry().get(lang)
        nouns = spec.options.get("work_nouns", {}) if spec else {}
        noun = next((str(nouns[q]) for q in request.classes if q in nouns), None)
        if noun is None:
            return InflectionResult(label, FAILED, self.name,
                                    f"no kind noun for the work '{label}' (classes {', '.join(request.classes) or 'none'}); "
                                    "add its P31 class to work_nouns (templates/data/languages.yaml, hu)")
        words = noun.split(" ")
        if case is not None:
            words[-1] = inflect_word(words[-1], case, sound_of(words[-1]))
        # the title's own article stands for the article: «A Keresztapa című film»
        own = label.split(" ", 1)[0] in ("A", "Az")
        phrase = f"{label} című {' '.join(words)}" if own else f"{article_for(label)} {label} című {' '.join(words)}"
        return InflectionResult(phrase, EXACT, self.name, "rule:work-noun")
