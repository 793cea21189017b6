"""What the pymorphy3 backends of Russian and Ukrainian share: one engine, two languages' data.

Multiword names inflect head-first: the adjectives and participles before the head noun agree with it,
the head takes the case, the rest stays (``Соединённые Штаты Америки -> Соединённых Штатах Америки``,
``Об'єднані Арабські Емірати -> Об'єднаних Арабських Еміратах``). Person names inflect every name word
in the person's gender; foreign names ending in a vowel, and women's foreign names ending in a
consonant, stay. Indeclinables (``Fixd``: Торонто) stay, capitalisation is restored, names in Latin
script are kept as written. What differs between the languages is data (:class:`SlavicLanguage`: the
dictionary, name particles, the letters, the regular endings for unknown names) and, for Ukrainian, the
choice among the forms the dictionary lists for one case (``Каїрі`` / ``Каїрові`` / ``Каїру``), which a
language gives as ``choose``. The prepositions (ru в/на, во/со; uk у/в/на, з/із/зі) are each backend's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache

from factatlas.records import Gender
from factatlas.templates.morphology import (
    EXACT,
    FAILED,
    GUESSED,
    NONE,
    Agreement,
    Features,
    InflectionRequest,
    InflectionResult,
)

CASE_TAGS = {"nom": "nomn", "gen": "gent", "dat": "datv", "acc": "accs", "ins": "ablt", "loc": "loct"}
NUMBER_TAGS = {"sg": "sing", "pl": "plur"}
NAME_TAGS = {"Name", "Surn", "Patr"}
_SPLIT = re.compile(r"(\s+)")
_QUALIFIER = re.compile(r"\s+\([^()]*\)$")
_COMPOSED = re.compile(r"[\s-]")  # several words, or parts joined by a hyphen
_GENDER_TAG = {Gender.MASCULINE: "masc", Gender.FEMININE: "femn", Gender.NEUTER: "neut"}

# (parse, grammemes, kind) -> the form to use, or None for pymorphy3's own first form; kind is the
# entity type of the name ("settlement", "country", "genre", ...; "" unknown), "modifier" for an
# adjective agreeing with a head
Chooser = Callable[[object, frozenset, str], object | None]


@dataclass(frozen=True, eq=False)
class SlavicLanguage:
    """One language's data for the shared engine."""

    code: str  # the pymorphy3 dictionary (pymorphy3-dicts-<code>)
    letters: re.Pattern  # a letter of the language's script: a name without one is kept as written
    indeclinable_endings: frozenset[str]  # a foreign name ending in one of these never declines
    # a foreign name in «-а» after one of these vowels stays too: «Андреа Бочелли», «Пессоа»
    vowel_a_after: frozenset[str]
    particles: frozenset[str]  # inside Arabic, Dutch, German ... names, never declined («ибн», «ібн»)
    arabic_article: re.Pattern  # «Эр-Рияд», «Ер-Ріяд»: the article stays, the noun declines
    # regular endings for names the dictionary does not know: final letter ("" = a consonant) -> case ->
    # the ending that replaces it; soft_masculine: a man's name in -ь (Надаль -> Надаля)
    endings: Mapping[str, Mapping[str, str]]
    soft_masculine: Mapping[str, str]
    # the genitive of a name in -а after these stem letters (ru «Мекки», uk «Мекки» but «Ґаші»)
    genitive_a_after: tuple[str, str] = ("", "")
    choose: Chooser | None = None
    # whether pymorphy3's predictor may decline a word its dictionary lacks: the Russian one guesses well;
    # the Ukrainian one applies native alternations to foreign names («Нагіб» -> «Нагобу», «Кадім» ->
    # «Кадому»), so there the regular endings decline it instead («Нагіба»)
    predictor: bool = True
    keep_yo: bool = False  # ru: a name spelt without «ё» keeps being spelt without it
    notes: dict = field(default_factory=dict)


_CASES = ("gen", "dat", "acc", "ins", "loc")


def load_language(code: str, choose: Chooser | None = None) -> SlavicLanguage:
    """A language's data from ``data/slavic.yaml`` (and its form chooser, code of its own backend)."""
    from importlib import resources

    import yaml

    raw = yaml.safe_load(resources.files("factatlas.templates").joinpath("data/slavic.yaml")
                         .read_text("utf-8"))[code]

    def cases(row: list[str]) -> dict[str, str]:
        return dict(zip(_CASES, (e.strip("-") for e in row), strict=True))

    return SlavicLanguage(
        code=code, letters=re.compile(r"[\u0400-\u04FF]"),
        indeclinable_endings=frozenset(raw["indeclinable_endings"]), vowel_a_after=frozenset(raw["vowel_a_after"]),
        particles=frozenset(raw["particles"]),
        arabic_article=re.compile(rf"^({'|'.join(raw['arabic_articles'])})-(.+)$"),
        endings={str(final): cases(row) for final, row in raw["endings"].items()},
        soft_masculine=cases(raw["soft_masculine"]), genitive_a_after=tuple(raw["genitive_a_after"]),
        choose=choose, keep_yo=raw["keep_yo"], predictor=raw["predictor"],
        notes={"dictionary": raw["dictionary"], "source": raw["source"]})


@cache
def analyzer(code: str):
    """pymorphy3's analyzer of ``code``'s dictionary. Its dictionaries share one tag class, and each load
    resets the grammemes that class knows to its own: ``"alt" in tag`` raises for a Ukrainian tag once the
    Russian dictionary was loaded after it. So a tag's grammemes are asked through ``tag.grammemes``, a
    plain set that never raises."""
    import pymorphy3

    return pymorphy3.MorphAnalyzer(lang=code)


@lru_cache(maxsize=200_000)
def parse_word(code: str, word: str) -> tuple:
    """pymorphy3's analyses of one word (cached: names recur across templates and cases)."""
    return tuple(_with_case(p) for p in analyzer(code).parse(word))


def _with_case(parse):
    """A dictionary noun or adjective read as the first form of its paradigm but tagged without a case is
    its nominative: pymorphy3-dicts-uk leaves the case off some lemmas («Держава»: «NOUN,inan femn»),
    which would hide the head of «Держава Палестина». OpenCorpora (ru) always tags it."""
    tag = parse.tag
    if tag.case is not None or tag.POS not in ("NOUN", "ADJF", "PRTF") or not is_dictionary(parse) \
            or parse.methods_stack[0][-1] != 0:
        return parse
    return parse._replace(tag=type(tag)(f"{tag},nomn"))


def is_dictionary(parse) -> bool:
    return type(parse.methods_stack[0][0]).__name__ == "DictionaryAnalyzer"


def restore(new: str, old: str, keep_yo: bool = False) -> str:
    from pymorphy3.shapes import restore_capitalization

    if "'" in old and old[:1].isupper() and old[1:] == old[1:].lower():
        # an apostrophe splits str.istitle(): «Об'єднані» is a capitalised word, «об'єднаних» follows it
        return new[:1].upper() + new[1:].lower()
    if "-" in old and new.count("-") == old.count("-"):
        return "-".join(restore_capitalization(n, o) for n, o in zip(new.split("-"), old.split("-"), strict=True))
    out = restore_capitalization(new, old)
    if keep_yo and "ё" not in old.lower():
        out = out.replace("ё", "е").replace("Ё", "Е")
    return out


def nominative(parses, pos: tuple[str, ...], gender: str | None = None):
    for p in parses:
        if p.tag.POS in pos and p.tag.case == "nomn" and (gender is None or p.tag.gender in (gender, None)):
            return p
    return None


def inflect_parse(lang: SlavicLanguage, parse, grammemes: set[str], kind: str = "", notes: list[str] | None = None):
    """The form of ``parse`` with ``grammemes``: the language's choice among the dictionary's forms, else
    pymorphy3's first one (None when there is none). A choice other than pymorphy3's first form is noted in
    ``notes`` (the ledger shows it: «rule uk-case-form: каїру -> каїра»)."""
    first = parse.inflect(grammemes)
    if lang.choose is not None:
        chosen = lang.choose(parse, frozenset(grammemes), kind)
        if chosen is not None:
            if notes is not None and first is not None and chosen.word != first.word:
                notes.append(f"{first.word} -> {chosen.word}")
            return chosen
    return first


def inflect_phrase(lang: SlavicLanguage, label: str, case: str, number: str | None, person_gender: str | None,
                   is_person: bool, animate: bool | None = None, kind: str = "") -> tuple[str, str, str] | None:
    """(form, status, detail) or None when the head cannot be found or pymorphy3 cannot inflect it.
    ``animate``: whether the thing named is animate (an occupation) or not (a genre, a place); None when
    unknown. A thing that is not animate never takes an animate reading of its head («данс-поп» is not
    the name «Данс»), so its accusative is the nominative: «исполняет данс-поп». ``kind``: the entity
    type, for a language that chooses a form by it (uk genitive «Каїра» of a city, «Єгипту» of a country).
    Not cached here: each backend caches its own wrapper."""
    parts = _SPLIT.split(label)
    grammemes = {CASE_TAGS[case]} | ({NUMBER_TAGS[number]} if number else set())
    phrase = _Phrase(lang, case, grammemes, person_gender, is_person, animate, parts)
    if is_person:
        return phrase.person()
    return phrase.thing(label, number, kind)


@dataclass
class _Phrase:
    """One label inflected word by word (``parts``: words and the separators between them), and what the
    inflection noted on the way: words guessed, kept as indeclinable names, read against pymorphy3's
    preference, forms the language chose over pymorphy3's first one."""

    lang: SlavicLanguage
    case: str
    grammemes: set[str]
    person_gender: str | None
    is_person: bool
    animate: bool | None
    parts: list[str]
    guessed: list[str] = field(default_factory=list)
    indeclinable: list[str] = field(default_factory=list)
    low_confidence: list[str] = field(default_factory=list)
    chosen: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.words = self.parts[0::2]
        self.parses = [parse_word(self.lang.code, w) for w in self.words]
        self.out = list(self.words)

    def inflect_word(self, word: str, parse, word_kind: str) -> str | None:
        """The word in the requested case (indeclinables as they are); None when pymorphy3 cannot."""
        lang = self.lang
        if "Fixd" in parse.tag.grammemes:
            return word
        if not lang.predictor and not is_dictionary(parse):
            self.guessed.append(word)
            return rule_declension(lang, word, self.case, animate=bool(self.is_person or self.animate),
                                   masculine=self.person_gender == "masc" or parse.tag.gender == "masc")
        new = inflect_parse(lang, parse, self.grammemes, word_kind, self.chosen)
        if new is None:
            return None
        if not is_dictionary(parse):
            self.guessed.append(word)
        return restore(new.word, word, lang.keep_yo)

    # ---- a person's name: every word declines as a name ----

    def name_parse(self, ps):
        # a singular analysis: «Миядзаки» is also read as the plural of a name (-> «Миядзаков»)
        person_gender = self.person_gender
        p = next((p for p in ps if p.tag.case == "nomn" and NAME_TAGS & set(p.tag.grammemes)
                  and p.tag.number in ("sing", None)
                  and (person_gender is None or p.tag.gender in (person_gender, None))), None)
        return p if p is not None else nominative(ps, ("NOUN",), person_gender)

    def person_word(self, word: str, ps, last: bool) -> str | None:
        lang, person_gender = self.lang, self.person_gender
        low = word.lower()
        if not last and low in lang.particles:  # «Мухаммеда ибн Салмана», never «ибна»
            return word
        p = self.name_parse(ps)
        # Foreign names (no name analysis in the dictionary; a common noun that looks alike, such as
        # «лабак» for «Лабаки», does not count): vowel-final ones never decline (Бейонсе, Кайли,
        # Миядзаки); women's names ending in a consonant do not either (Селин Дион, Заха Хадид)
        foreign = p is None or not is_dictionary(p) or not NAME_TAGS & set(p.tag.grammemes)
        # a foreign name ending in a vowel + «а» stays too: «Андреа Бочелли», «Гарсиа», «Пессоа»
        vowel_a = low[-1:] == "а" and low[-2:-1] in lang.vowel_a_after
        if foreign and (low[-1:] in lang.indeclinable_endings or vowel_a
                        or (person_gender == "femn" and low[-1:] not in "аяь")):
            self.indeclinable.append(word)
            return word
        if p is None or foreign and not lang.predictor:
            # no name reading: the regular endings (a look-alike common noun's paradigm is not the
            # name's: uk «маддах» is inanimate, «Маддаху»; the name is «Маддаха»)
            form = rule_declension(lang, word, self.case, animate=True, masculine=person_gender == "masc")
            if form is not None:
                self.guessed.append(word)
            return form
        if p.score < max(x.score for x in ps):
            # pymorphy3 prefers another reading of the word: the name reading is a guess, counted
            self.low_confidence.append(word)
        return self.inflect_word(word, p, "person")

    def person(self) -> tuple[str, str, str] | None:
        words, out, lang = self.words, self.out, self.lang
        done = 0
        for i, ps in enumerate(self.parses):
            last = i == len(self.parses) - 1
            if "-" in words[i]:  # double surnames decline part by part: Склодовской-Кюри
                # an Arabic article joined by a hyphen never declines: «Кадима ас-Сахира», «Фарида аль-Атраша»
                new_parts = [part if part.lower() in lang.particles
                             else self.person_word(part, parse_word(lang.code, part), last)
                             for part in words[i].split("-")]
                out[i] = "-".join(n if n is not None else part for n, part in zip(new_parts, words[i].split("-"),
                                                                                  strict=True))
                done += 1
                continue
            new = self.person_word(words[i], ps, last)
            if new is None:
                continue
            out[i] = new
            done += 1
        if not done:
            return None
        return self.result()

    # ---- a thing's name: the head noun declines, its modifiers agree ----

    def thing(self, label: str, number: str | None, kind: str) -> tuple[str, str, str] | None:
        lang, case, animate, words, parses, out = self.lang, self.case, self.animate, self.words, self.parses, self.out
        compound = noun_compound(lang, label, case, number) if animate is not False else None
        if compound is not None:
            return compound
        if len(words) == 1 and only_plural_reading(parses[0]):
            # «раи» (raï) read as the plural of «рай»: a single name is not a plural; keep it, counted
            return label, GUESSED, "kept as an indeclinable foreign word (the dictionary knows only a plural)"
        head = find_head(lang.code, parses)
        if head is None:
            return without_head(lang, words, parses, self.grammemes, self.parts, case)
        head_parse = nominative(parses[head], ("NOUN",))
        if animate is False:
            inanimate = next((p for p in parses[head] if p.tag.POS == "NOUN" and p.tag.case == "nomn"
                              and p.tag.animacy == "inan" and not NAME_TAGS & set(p.tag.grammemes)), None)
            if inanimate is not None and inanimate is not head_parse:
                head_parse = inanimate
                if not is_dictionary(inanimate):
                    self.guessed.append(words[head])
        tail = compound_tail(lang, words[head], head_parse, self.grammemes) if animate is False else None
        if tail is not None:  # «данс-поп» -> «данс-попа»: only the last part of an unknown compound declines
            out[head] = tail
            self.guessed.append(words[head])
        else:
            form = self.inflect_word(words[head], head_parse, kind)
            if form is None:
                return None
            out[head] = form
        # modifiers agree with the head in animacy too: «исполняет альтернативный рок» (inanimate
        # accusative), not «альтернативного рок»; animacy shows only in the masculine singular and the
        # plural — a feminine head keeps its own accusative: «арабскую музыку», never «арабский музыку»
        animacy = accusative_animacy(head_parse) if case == "acc" else None
        for i in range(head):
            mod = nominative(parses[i], ("ADJF", "PRTF"))
            if mod is None:
                return None
            new = inflect_parse(lang, mod, self.grammemes | ({animacy} if animacy else set()), "modifier",
                                self.chosen)
            if new is None:
                return None
            out[i] = restore(new.word, words[i], lang.keep_yo)
        return self.result()

    def result(self) -> tuple[str, str, str]:
        """(form, status, detail): guessed when any word was, with what was noted."""
        parts = list(self.parts)
        parts[0::2] = self.out
        form = "".join(parts)
        rule = [f"rule {self.lang.code}-case-form: " + ", ".join(self.chosen)] if self.chosen else []
        if self.guessed or self.indeclinable or self.low_confidence:
            notes = ([f"not in the {dictionary_name(self.lang)} dictionary: " + ", ".join(self.guessed)]
                     if self.guessed else []) + (
                ["kept as indeclinable foreign names: " + ", ".join(self.indeclinable)] if self.indeclinable else []) + (
                ["pymorphy3 prefers another reading of: " + ", ".join(self.low_confidence)]
                if self.low_confidence else [])
            return form, GUESSED, "; ".join(notes + rule)
        return form, EXACT, "; ".join(rule)


def dictionary_name(lang: SlavicLanguage) -> str:
    return lang.notes.get("dictionary", f"pymorphy3-dicts-{lang.code}")


def find_head(code: str, parses: list) -> int | None:
    """The index of the head noun: the first noun after the adjectives and participles that agree with it."""
    for i, ps in enumerate(parses):
        modifier = nominative(ps, ("ADJF", "PRTF"))
        noun = nominative(ps, ("NOUN",))
        next_is_noun = i + 1 < len(parses) and nominative(parses[i + 1], ("NOUN",)) is not None
        if modifier is not None and (noun is None or next_is_noun):
            continue
        return i if noun is not None else None
    return None


def only_plural_reading(parses) -> bool:
    """True when every nominative noun reading of a word is a plural of a singular noun (not Pltm)."""
    nouns = [p for p in parses if p.tag.POS == "NOUN" and p.tag.case == "nomn"]
    return bool(nouns) and all(p.tag.number == "plur" and "Pltm" not in p.tag.grammemes for p in nouns)


def accusative_animacy(head) -> str | None:
    """The animacy a modifier's accusative must show for ``head`` (a pymorphy3 parse): only masculine
    singular and plural heads distinguish it; a feminine or neuter head has one accusative."""
    if head.tag.number == "plur" or "Pltm" in head.tag.grammemes or head.tag.gender == "masc":
        return head.tag.animacy
    return None


def compound_tail(lang: SlavicLanguage, word: str, parse, grammemes: set[str]) -> str | None:
    """A hyphenated name of a thing the dictionary does not know as a whole declines in its last part only
    (rule `hyphen-compound`): «данс-поп» -> «данс-попа», «синти-поп» -> «синти-попом»; None otherwise."""
    if "-" not in word or is_dictionary(parse):
        return None
    prefix, _, last = word.rpartition("-")
    ps = parse_word(lang.code, last)
    p = next((p for p in ps if p.tag.POS == "NOUN" and p.tag.case == "nomn"
              and p.tag.animacy == "inan" and is_dictionary(p)), None)
    if p is None:
        p = next((p for p in ps if p.tag.POS == "NOUN" and p.tag.case == "nomn"
                  and not NAME_TAGS & set(p.tag.grammemes)), None)
    if p is not None and "accs" in grammemes and p.tag.animacy != "inan" and (
            p.tag.gender == "masc" or p.tag.number == "plur"):
        return word  # a thing's masculine accusative is its nominative («исполняет данс-поп»)
    new = inflect_parse(lang, p, grammemes, "genre") if p is not None else None
    if new is None:
        return None
    return f"{prefix}-{restore(new.word, last, lang.keep_yo)}"


def noun_compound(lang: SlavicLanguage, label: str, case: str, number: str | None) -> tuple[str, str, str] | None:
    """A hyphenated pair of animate nouns the dictionary does not know as a whole declines in both parts:
    «автор-исполнитель» -> «автором-исполнителем» (pymorphy3 reads the whole as an indeclinable)."""
    if " " in label or label.count("-") != 1:
        return None
    whole = parse_word(lang.code, label)
    if whole and is_dictionary(whole[0]) and "Fixd" not in whole[0].tag:
        return None
    grammemes = {CASE_TAGS[case]} | ({NUMBER_TAGS[number]} if number else set())
    forms = []
    for part in label.split("-"):
        p = next((p for p in parse_word(lang.code, part) if p.tag.POS == "NOUN" and p.tag.case == "nomn"
                  and p.tag.number == "sing" and p.tag.animacy == "anim" and is_dictionary(p)), None)
        new = inflect_parse(lang, p, grammemes, "occupation") if p is not None else None
        if new is None:
            return None
        forms.append(restore(new.word, part, lang.keep_yo))
    return "-".join(forms), EXACT, "compound of two nouns, both declined"


def without_head(lang: SlavicLanguage, words: list[str], parses: list, grammemes: set[str], parts: list[str],
                 case: str) -> tuple[str, str, str] | None:
    """Names pymorphy3 finds no head noun in: substantivised adjectives (британский английский), an
    Arabic article before the noun (Эр-Рияд -> Эр-Рияде), vowel-final foreign names (Тимбукту)."""
    mods = [nominative(ps, ("ADJF", "PRTF")) for ps in parses]
    out = list(words)
    # a single word read only as a plural adjective is a foreign name, not a plural («Мороні»)
    lone_plural = len(mods) == 1 and mods[0] is not None and mods[0].tag.number == "plur"
    if all(m is not None for m in mods) and not lone_plural:
        for i, m in enumerate(mods):
            new = inflect_parse(lang, m, grammemes, "modifier")
            if new is None:
                return None
            out[i] = restore(new.word, words[i], lang.keep_yo)
        parts[0::2] = out
        return "".join(parts), GUESSED, "adjectives used as a noun: all inflected"
    if len(words) != 1:
        return None
    word = words[0]
    m = lang.arabic_article.match(word)
    if m:
        rest = m.group(2)
        p = next((p for p in parse_word(lang.code, rest) if p.tag.POS == "NOUN" and p.tag.case == "nomn"), None)
        new = inflect_parse(lang, p, grammemes) if p is not None else None
        rest_form = restore(new.word, rest, lang.keep_yo) if new is not None else rule_declension(
            lang, rest, case, animate=False)
        if rest_form is None:
            return None
        return f"{m.group(1)}-{rest_form}", GUESSED, "Arabic article kept, the noun inflected"
    if word[-1:].lower() in lang.indeclinable_endings:
        return word, GUESSED, "kept as an indeclinable foreign name"
    form = rule_declension(lang, word, case, animate=False)
    return (form, GUESSED, "declined by the regular endings (not in the dictionary)") if form else None


def rule_declension(lang: SlavicLanguage, word: str, case: str, animate: bool, masculine: bool = False) -> str | None:
    """Decline an unknown name by the language's regular endings (-а, -я, -й, consonant, and -ь for a
    man: Надаль -> Надаля); None for -ь otherwise (gender unclear)."""
    if case == "nom" or not word:
        return word
    low = word[-1].lower()
    if low == "ь" and masculine:
        return word[:-1] + lang.soft_masculine[case]
    if low in lang.indeclinable_endings or low == "ь" or not lang.letters.match(low):
        return None if low == "ь" else word
    key = max((k for k in lang.endings if k and word.lower().endswith(k)), key=len, default="")
    if key:
        stem, table = word[:-len(key)], lang.endings[key]
        ending = table[case]
        after, other = lang.genitive_a_after
        if low == "а" and case == "gen" and stem[-1:].lower() in after:
            ending = other
        if low == "й" and case == "acc" and animate:
            ending = "я"
        return stem + ending
    ending = lang.endings[""][case]
    if case == "acc" and animate:
        ending = "а"
    return word + ending


def lexicon_agreement(lang: SlavicLanguage, label: str) -> Agreement | None:
    """Gender and number of a name's head noun, from the dictionary (None if unknown or not Cyrillic)."""
    if not lang.letters.search(label):
        return None
    source = f"lexicon:{lang.notes.get('source', 'pymorphy3')}"
    parses = [parse_word(lang.code, w) for w in label.split()]
    head = find_head(lang.code, parses)
    noun = nominative(parses[head], ("NOUN",)) if head is not None else None
    if noun is None or not is_dictionary(noun):
        return None
    if noun.tag.number == "plur" or "Pltm" in noun.tag.grammemes:
        return Agreement(Gender.UNKNOWN, "pl", source)
    gender = {"masc": Gender.MASCULINE, "femn": Gender.FEMININE, "neut": Gender.NEUTER}.get(noun.tag.gender or "")
    if gender is None or "Ms-f" in noun.tag.grammemes:
        return None
    return Agreement(gender, "sg", source)


def indeclinable_name(lang: SlavicLanguage, label: str) -> bool:
    """True for a one-word (or hyphenated) foreign name ending in a vowel that pymorphy3 reads as an
    indeclinable singular (Fixd) or does not know: «Теннесси», «Абу-Даби», «Онтаріо»."""
    if " " in label or not lang.letters.search(label) or label[-1:].lower() not in lang.indeclinable_endings:
        return False
    parses = parse_word(lang.code, label)
    return any("Fixd" in p.tag.grammemes and p.tag.number != "plur" for p in parses) or not any(
        is_dictionary(p) for p in parses)


@cache
def preposition_data(code: str) -> tuple[frozenset[str], dict[str, str]]:
    """The place names that take «на» (``data/<code>_prepositions.yaml``) and the classes that do."""
    from importlib import resources

    import yaml

    raw = yaml.safe_load(resources.files("factatlas.templates").joinpath(f"data/{code}_prepositions.yaml")
                         .read_text("utf-8"))
    return frozenset(raw["na"]), dict(raw["island_classes"])


def place_preposition(code: str, label: str, classes: tuple[str, ...] = ()) -> tuple[str, str]:
    """«на» or the language's «в» before the place ``label`` (its nominative), and how it was decided:
    ``lexicon`` (``data/<code>_prepositions.yaml``), ``rule:<class>`` (an island or archipelago), or
    ``default`` («в»)."""
    na, island_classes = preposition_data(code)
    if label in na:
        return "на", "lexicon"
    for q in classes:
        if q in island_classes:
            return "на", f"rule:{island_classes[q]}"
    return "в", "default"


class SlavicBackend:
    """The inflection protocol over :func:`inflect_phrase`; a language's backend gives its data, its
    cached ``phrase`` and its prepositions (``preposition``)."""

    name = ""
    language: SlavicLanguage
    prepositions: tuple[str, ...] = ()

    def phrase(self, label: str, case: str, number: str | None, person_gender: str | None, is_person: bool,
               animate: bool | None, kind: str) -> tuple[str, str, str] | None:
        raise NotImplementedError

    def preposition(self, features: Features, label: str, bare: str, request: InflectionRequest
                    ) -> tuple[str, str]:
        """(the preposition as written before ``bare``, how it was chosen)."""
        raise NotImplementedError

    def kind(self, request: InflectionRequest) -> str:
        """The kind of entity a language's form choice may depend on (its semantic type)."""
        return request.entity_type

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        if features.preposition in self.prepositions and not features.article and not features.particle:
            return self._with_preposition(label, lang, features, request)
        if features.article or features.preposition or features.particle:
            return None
        if features.is_plain or (features.case in (None, "nom") and features.number is None):
            return InflectionResult(label, NONE, self.name)
        if not self.language.letters.search(label):
            return InflectionResult(label, NONE, self.name, "non-Cyrillic name kept as written")
        entry = request.entry
        written = entry.forms.get(features.case or "nom") if entry is not None and not features.number else None
        if written is not None and entry.about(label) or written is not None and label == entry.short:
            return InflectionResult(written, EXACT, "lexicon", f"{entry.how} {entry.qid} {features.case}")
        is_person = request.entity_type == "person"
        gender = _GENDER_TAG.get(request.agreement.gender)
        qualifier = _QUALIFIER.search(label)  # «Эр-Рияд (провинция)»: the qualifier stays as it is
        core = label[: qualifier.start()] if qualifier else label
        etype = request.entity_type
        animate = True if etype in ("person", "occupation") else (False if etype else None)
        found = self.phrase(core, features.case or "nom", features.number, gender, is_person, animate,
                            self.kind(request))
        if found is None:
            return InflectionResult(label, FAILED, self.name,
                                    f"no {'name word' if is_person else 'head noun'} of '{label}' could be "
                                    f"put into {features.describe()} by pymorphy3")
        form, status, detail = found
        if status == EXACT and _COMPOSED.search(core.strip()):
            # every word is the dictionary's, but the phrase was declined word by word (agreement, compound
            # parts): only a form found whole — one dictionary word or a lexicon form — is exact
            status, detail = GUESSED, "; ".join([f"composed: declined word by word, each word from the "
                                                 f"{dictionary_name(self.language)} dictionary"] + ([detail] if detail else []))
        if qualifier:
            form += label[qualifier.start():]
        return InflectionResult(form, status, self.name, detail)

    def _with_preposition(self, label: str, lang: str, features: Features, request: InflectionRequest
                          ) -> InflectionResult | None:
        """The name in its case after the preposition, with the preposition's form chosen for it."""
        bare = self.inflect(label, lang, replace(features, preposition=None), replace(request, sentence_initial=False))
        if bare is None or bare.status == FAILED:
            return bare
        word, how = self.preposition(features, label, bare.form, request)
        if request.sentence_initial:
            word = word[:1].upper() + word[1:]
        form = f"{word} {bare.form}"
        return replace(bare, form=form, choice=(how, form))
