"""Turkish case suffixes: vowel harmony, buffer consonants, d/t alternation, the apostrophe (backend "turkish").

A template writes a suffix after ``+`` in one canonical spelling; the backend gives it the shape the name
takes (Göksel & Kerslake, *Turkish: A Comprehensive Grammar*, 2005, ch. 2-3 and 14; TDK *Yazım
Kılavuzu*, "Kesme işareti" and "Ünsüz yumuşaması"):

========  ===========================  ===================================================
 suffix    meaning                      examples
========  ===========================  ===================================================
 +in       genitive -(n)In               Kahire'nin, Paris'in, Tunus'un, Seul'ün
 +a        dative -(y)A                  Kahire'ye, Fas'a
 +ı        accusative -(y)I              Kahire'yi, Fas'ı
 +da       locative -DA                  Ankara'da, Kahire'de, Fas'ta, Paris'te
 +dan      ablative -DAn                 Kahire'den, Fas'tan
 +la       instrumental -(y)lA           Kahire'yle, Paris'le
 +dır      copula -DIr                   Paris'tir, Kahire'dir, Arapçadır, şarkıcıdır
 +dadır    locative + copula             Fransa'dadır, Paris'tedir
========  ===========================  ===================================================

- **Harmony** follows the last vowel *as the name is read*, not as it is spelt: foreign names are read
  by a table (``templates/data/tr_morphology.yaml``: Jackson -> ceksın, so «Michael Jackson'ın»;
  Bordeaux -> bordo, «Bordeaux'da»), acronyms by their letter names (ABD -> de: «ABD'de», BAE'de,
  NBC'de), numbers by their reading (KBS2 -> iki: «KBS2'de»); a foreign spelling the table does not
  know is read letter by letter and the form is flagged ``guessed``.
- **Buffers**: after a vowel the genitive takes n, the dative and accusative y, the instrumental y
  (Kahire'nin, Kahire'ye); after the 3rd person possessive of a compound name (izafet: «Amerika Birleşik
  Devletleri», «Eyfel Kulesi») the pronominal n comes before every case: «Devletleri'nde», «Kulesi'nin».
- **d/t**: the locative, ablative and copula start with t after a voiceless consonant (f s t k ç ş h p):
  «Fas'ta», «Paris'te», «rock müziktir».
- **Apostrophe** before the suffix of a proper name (people, places, countries, works, companies, and
  every acronym); none after a common noun (languages, genres, instruments, occupations: «Arapçada»,
  «şarkıcıdır»), whose final p/ç/k soften before a vowel (kitap -> kitabı, müzik -> müziği), while
  proper names never soften in writing (Sedat'ın).
- **Works** are named with their kind, the suffix going on the kind noun (``work_nouns`` in
  languages.yaml): «Baba filminin», «Friends dizisi» (``[X.nom]``), so that a foreign title's reading
  never decides a suffix.
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

# canonical spelling -> the case it stands for
SUFFIXES = {"in": "gen", "a": "dat", "ı": "acc", "da": "loc", "dan": "abl", "la": "ins", "dır": "cop",
            "dadır": "loc+cop"}
PARTICLES = frozenset(SUFFIXES)

BACK, FRONT = frozenset("aıou"), frozenset("eiöü")
VOWELS = BACK | FRONT
ROUNDED = frozenset("ouöü")
VOICELESS = frozenset("çfhkpsşt")  # "fıstıkçı şahap"
# Turkish letter names (TDK): how an acronym's last letter is read
LETTER_NAMES = {"a": "a", "b": "be", "c": "ce", "ç": "çe", "d": "de", "e": "e", "f": "fe", "g": "ge",
                "ğ": "yumuşak ge", "h": "he", "ı": "ı", "i": "i", "j": "je", "k": "ke", "l": "le", "m": "me",
                "n": "ne", "o": "o", "ö": "ö", "p": "pe", "r": "re", "s": "se", "ş": "şe", "t": "te", "u": "u",
                "ü": "ü", "v": "ve", "y": "ye", "z": "ze", "q": "kü", "w": "ve", "x": "iks"}
DIGITS = ("sıfır", "bir", "iki", "üç", "dört", "beş", "altı", "yedi", "sekiz", "dokuz")
TENS = ("", "on", "yirmi", "otuz", "kırk", "elli", "altmış", "yetmiş", "seksen", "doksan")
# letters of foreign spellings, mapped to the Turkish sound they stand for at the end of a name
_FOREIGN = str.maketrans({"á": "a", "à": "a", "ã": "a", "å": "o", "ä": "e", "é": "e", "è": "e", "ê": "e",
                          "ë": "e", "í": "i", "ì": "i", "ï": "i", "ó": "o", "ò": "o", "ô": "o", "õ": "o",
                          "ø": "ö", "ú": "u", "ù": "u", "ñ": "n", "ß": "s", "w": "v", "x": "ks", "q": "k",
                          "æ": "e", "œ": "ö", "č": "ç", "š": "ş", "ž": "j", "â": "a", "î": "i", "û": "u"})
_TURKISH_LETTERS = frozenset("abcçdefgğhıijklmnoöprsştuüvyzâîû")
_ACRONYM = re.compile(r"^(?:[A-ZÇĞİÖŞÜ]\.?){2,}$|^(?:[A-ZÇĞİÖŞÜ]\.){1,}$")
_NUMBER = re.compile(r"(\d+)$")


def tr_lower(text: str) -> str:
    """Lower case with the Turkish dotted and dotless i (I -> ı, İ -> i)."""
    return text.replace("I", "ı").replace("İ", "i").lower()


@cache
def _data() -> dict:
    raw = yaml.safe_load(resources.files("factatlas.templates").joinpath("data/tr_morphology.yaml")
                         .read_text("utf-8")) or {}
    return {"readings": dict(raw.get("readings") or {}),
            "possessive_heads": frozenset(tr_lower(w) for w in raw.get("possessive_heads") or ()),
            "no_softening": frozenset(raw.get("no_softening") or ()),
            "softening": dict(raw.get("softening") or {})}


@dataclass(frozen=True, slots=True)
class Reading:
    """How a name ends when read: its last vowel, whether it ends in a vowel or a voiceless consonant."""

    last_vowel: str
    vowel_final: bool
    voiceless: bool
    how: str  # table | acronym | number | spelling | spelling:foreign


def read_end(sound: str, how: str) -> Reading | None:
    """The reading of a Turkish-spelt sound string (lower case)."""
    letters = [c for c in sound if c.isalpha()]
    vowels = [c for c in letters if c in VOWELS]
    if not vowels:
        return None
    last = letters[-1]
    return Reading(vowels[-1], last in VOWELS, last in VOICELESS, how)


def _number_reading(number: str) -> str:
    n = int(number)
    if n % 10:
        return DIGITS[n % 10]
    if n == 0:
        return DIGITS[0]
    if n % 100:
        return TENS[(n % 100) // 10]
    if n % 1000:
        return "yüz"
    return "bin"


def _spelling(word: str) -> tuple[str, bool]:
    """A foreign or Turkish spelling as Turkish sounds (only the end matters), and whether it was foreign."""
    low = tr_lower(word)
    foreign = any(c.isalpha() and c not in _TURKISH_LETTERS for c in low)
    s = low
    # digraphs of English, French and German spellings
    for old, new in (("eau", "o"), ("ee", "i"), ("oo", "u"), ("ou", "u"), ("sh", "ş"), ("ch", "ş"),
                     ("th", "t"), ("ph", "f"), ("ck", "k"), ("gh", "g")):
        if old in s:
            s, foreign = s.replace(old, new), True
    s = s.translate(_FOREIGN)
    # a final y after a consonant, and a final -ie, are read i (Kennedy, McCartney, Bowie)
    if s.endswith("ie") or s.endswith("ey"):
        s, foreign = s[:-2] + "i", True
    elif len(s) > 1 and s.endswith("y") and s[-2] not in VOWELS:
        s, foreign = s[:-1] + "i", True
    return s, foreign


def reading(label: str) -> Reading | None:
    """How the end of ``label`` is read: the reading table (whole label, then last word), an acronym's
    letter name, a number, else the spelling (foreign spellings flagged)."""
    table = _data()["readings"]
    if label in table:
        return read_end(tr_lower(str(table[label])), "table")
    words = label.replace(",", " ").split()
    if not words:
        return None
    last = words[-1]
    bare = last.strip("'\"”“’()")
    for key in (bare, tr_lower(bare)):
        if key in table:
            return read_end(tr_lower(str(table[key])), "table")
    number = _NUMBER.search(bare)
    if number:
        return read_end(_number_reading(number.group(1)), "number")
    if _ACRONYM.match(bare) or (len(bare) >= 2 and bare.isupper() and bare.isalpha()):
        letter = tr_lower(bare.replace(".", "")[-1])
        return read_end(LETTER_NAMES.get(letter, letter), "acronym")
    if bare and bare[-1].isupper() and any(c.islower() for c in bare):  # tvN: the last letter is said alone
        return read_end(LETTER_NAMES.get(tr_lower(bare[-1]), ""), "acronym")
    sound, foreign = _spelling(bare)
    return read_end(sound, "spelling:foreign" if foreign else "spelling")


def _i(vowel: str) -> str:
    return {"a": "ı", "ı": "ı", "o": "u", "u": "u", "e": "i", "i": "i", "ö": "ü", "ü": "ü"}[vowel]


def _a(vowel: str) -> str:
    return "a" if vowel in BACK else "e"


def suffix_for(case: str, r: Reading, possessive: bool) -> str:
    """The shape of a case suffix after a stem read as ``r`` (``possessive``: the stem ends in the 3rd
    person possessive of a compound, which takes the pronominal n before a case)."""
    a, i = _a(r.last_vowel), _i(r.last_vowel)
    d = "t" if r.voiceless and not r.vowel_final else "d"
    if case == "gen":
        return ("n" if r.vowel_final else "") + i + "n"
    if case in ("acc", "dat"):
        vowel = i if case == "acc" else a
        if possessive:
            return "n" + vowel
        return ("y" if r.vowel_final else "") + vowel
    if case == "loc":
        return ("nd" if possessive else d) + a
    if case == "abl":
        return ("nd" if possessive else d) + a + "n"
    if case == "ins":
        return ("y" if r.vowel_final else "") + "l" + a
    if case == "cop":
        return d + i + "r"
    if case == "loc+cop":
        return ("nd" if possessive else d) + a + "d" + _i(a) + "r"
    raise ValueError(f"unknown Turkish case {case!r}")


def soften(word: str) -> tuple[str, str]:
    """A common noun's final p/ç/t/k before a vowel-initial suffix (TDK "Ünsüz yumuşaması"): the table's
    word, else p->b, ç->c, k->ğ in words of more than one syllable; t only from the table (most
    loanwords keep it: trompeti, avukatı), nk->ng in any word (renk -> rengi). Returns (stem, how)."""
    data = _data()
    low = tr_lower(word)
    if low in data["softening"]:
        return str(data["softening"][low]), "table"
    if low in data["no_softening"]:
        return word, ""
    if low.endswith("nk"):  # renk -> rengi, in one syllable too
        return word[:-1] + "g", "rule:softening"
    if sum(c in VOWELS for c in low) < 2:
        return word, ""
    last = low[-1]
    swap = {"p": "b", "ç": "c", "k": "ğ"}.get(last)
    if swap is None or low[-2] not in VOWELS | {"r", "l", "n"}:
        return word, ""
    return word[:-1] + swap, "rule:softening"


def possessive_compound(label: str) -> bool:
    """A compound whose last word carries the 3rd person possessive (izafet): «Amerika Birleşik Devletleri»,
    «Eyfel Kulesi», «Mısır Arapçası», «halk müziği» (heads listed in tr_morphology.yaml)."""
    words = label.split()
    return len(words) > 1 and tr_lower(words[-1]) in _data()["possessive_heads"]


def attach(stem: str, case: str, proper: bool, reading_of: str | None = None,
           possessive: bool | None = None) -> tuple[str, str, str]:
    """``stem`` with the suffix of ``case``: (form, status, detail). ``proper``: a proper name takes the
    apostrophe and never softens; ``reading_of``: the text whose reading decides harmony (default stem)."""
    r = reading(reading_of or stem)
    if r is None:
        return stem, FAILED, f"no vowel to harmonise with in '{stem}'"
    poss = possessive_compound(stem) if possessive is None else possessive
    ending = suffix_for(case, r, poss)
    acronym = r.how in ("acronym", "number")
    detail = [f"read: {r.how}"]
    if poss:
        detail.append("rule:izafet")
    # a proper name headed by a common noun in lower case takes no apostrophe: «New York eyaletinde» (TDK: the
    # suffix goes on the common noun)
    head_is_common = poss and stem.split()[-1][:1].islower()
    if (proper and not head_is_common) or acronym:
        form = f"{stem}'{ending}"
    else:
        base = stem
        if ending[0] in VOWELS and not r.vowel_final and not poss:
            words = stem.split(" ")
            soft, how = soften(words[-1])
            if how:
                base = " ".join([*words[:-1], soft])
                detail.append(f"softening:{how}")
        form = base + ending
    status = GUESSED if r.how == "spelling:foreign" else EXACT
    return form, status, "; ".join(detail)


class TurkishBackend:
    name = "turkish"

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        if features.number or features.article or features.preposition:
            return None
        if features.case not in (None, "nom"):
            return None
        if features.particle is not None and features.particle not in SUFFIXES:
            return None
        case = SUFFIXES.get(features.particle or "")
        if request.entity_type == "work":
            noun = self._work_noun(lang, request.classes)
            if noun is None:
                return InflectionResult(label, FAILED, self.name,
                                        f"no kind noun for the work '{label}' (classes {', '.join(request.classes) or 'none'}); "
                                        "add its P31 class to work_nouns (templates/data/languages.yaml, tr)")
            if case is None:
                return InflectionResult(f"{label} {noun}", EXACT, self.name, "rule:work-noun")
            form, status, detail = attach(noun, case, proper=False, possessive=True)
            return InflectionResult(f"{label} {form}", status, self.name, f"rule:work-noun; {detail}")
        if case is None:
            return InflectionResult(label, NONE, self.name)
        proper = request.entity_type not in COMMON_NOUN_TYPES
        form, status, detail = attach(label, case, proper)
        if status == FAILED:
            return InflectionResult(label, FAILED, self.name, detail)
        if status == GUESSED:
            detail += f"; '{label}' is read as spelt: add its reading to templates/data/tr_morphology.yaml"
        return InflectionResult(form, status, self.name, detail)

    @staticmethod
    def _work_noun(lang: str, classes: tuple[str, ...]) -> str | None:
        spec = language_registry().get(lang)
        nouns = spec.options.get("work_nouns", {}) if spec else {}
        for q in classes:
            if q in nouns:
                return str(nouns[q])
        return None
