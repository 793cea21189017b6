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
_CYRILLIC = re.compile(r"[\u0400-\u04FF]")
_SPLIT = re.compile(r"(\s+)")
_QUALIFIER = re.compile(r"\s+\([^()]*\)$")


@cache
def analyzer():
    import pymorphy3

    return pymorphy3.MorphAnalyzer(lang="ru")


@lru_cache(maxsize=200_000)
def parse_word(word: str) -> tuple:
    """pymorphy3's analyses of one word (cached: names recur across templates and cases)."""
    return tuple(analyzer().parse(word))


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
                    is_person: bool, animate: bool | None = None) -> tuple[str, str, str] | None:
    """(form, status, detail) or None when the head cannot be found or pymorphy3 cannot inflect it.
    ``animate``: whether the thing named is animate (an occupation) or not (a genre, a place); None when
    unknown. A thing that is not animate never takes an animate reading of its head («данс-поп» is not
    the name «Данс»), so its accusative is the nominative: «исполняет данс-поп»."""
    parts = _SPLIT.split(label)
    words = parts[0::2]
    grammemes = {CASE_TAGS[case]} | ({NUMBER_TAGS[number]} if number else set())
    parses = [parse_word(w) for w in words]
    out = list(words)
    guessed: list[str] = []
    indeclinable: list[str] = []
    low_confidence: list[str] = []

    def inflect_word(word: str, parse) -> str | None:
        """The word in the requested case (indeclinables as they are); None when pymorphy3 cannot."""
        if "Fixd" in parse.tag:
            return word
        new = parse.inflect(grammemes)
        if new is None:
            return None
        if not _is_dictionary(parse):
            guessed.append(word)
        return _restore(new.word, word)

    def inflect_at(i: int, parse) -> bool:
        form = inflect_word(words[i], parse)
        if form is None:
            return False
        out[i] = form
        return True

    if is_person:
        def name_parse(ps):
            # a singular analysis: «Миядзаки» is also read as the plural of a name (-> «Миядзаков»)
            p = next((p for p in ps if p.tag.case == "nomn" and NAME_TAGS & set(p.tag.grammemes)
                      and p.tag.number in ("sing", None)
                      and (person_gender is None or p.tag.gender in (person_gender, None))), None)
            return p if p is not None else _nominative(ps, ("NOUN",), person_gender)

        def person_word(word: str, ps, last: bool) -> str | None:
            low = word.lower()
            if not last and low in NAME_PARTICLES:  # «Мухаммеда ибн Салмана», never «ибна»
                return word
            p = name_parse(ps)
            # Foreign names (no name analysis in the dictionary; a common noun that looks alike, such as
            # «лабак» for «Лабаки», does not count): vowel-final ones never decline (Бейонсе, Кайли,
            # Миядзаки); women's names ending in a consonant do not either (Селин Дион, Заха Хадид)
            foreign = p is None or not _is_dictionary(p) or not NAME_TAGS & set(p.tag.grammemes)
            # a foreign name ending in a vowel + «а» stays too: «Андреа Бочелли», «Гарсиа», «Пессоа»
            vowel_a = low[-1:] == "а" and low[-2:-1] in ("е", "и", "о", "у")
            if foreign and (low[-1:] in _INDECLINABLE_ENDINGS or vowel_a
                            or (person_gender == "femn" and low[-1:] not in "аяь")):
                indeclinable.append(word)
                return word
            if p is None:
                form = rule_declension(word, case, animate=True, masculine=person_gender == "masc")
                if form is not None:
                    guessed.append(word)
                return form
            if p.score < max(x.score for x in ps):
                # pymorphy3 prefers another reading of the word: the name reading is a guess, counted
                low_confidence.append(word)
            return inflect_word(word, p)

        done = 0
        for i, ps in enumerate(parses):
            last = i == len(parses) - 1
            if "-" in words[i]:  # double surnames decline part by part: Склодовской-Кюри
                # an Arabic article joined by a hyphen never declines: «Кадима ас-Сахира», «Фарида аль-Атраша»
                new_parts = [part if part.lower() in NAME_PARTICLES else person_word(part, parse_word(part), last)
                             for part in words[i].split("-")]
                out[i] = "-".join(n if n is not None else part for n, part in zip(new_parts, words[i].split("-"),
                                                                                  strict=True))
                done += 1
                continue
            new = person_word(words[i], ps, last)
            if new is None:
                continue
            out[i] = new
            done += 1
        if not done:
            return None
    else:
        compound = _noun_compound(label, case, number) if animate is not False else None
        if compound is not None:
            return compound
        if len(words) == 1 and _only_plural_reading(parses[0]):
            # «раи» (raï) read as the plural of «рай»: a single name is not a plural; keep it, counted
            return label, GUESSED, "kept as an indeclinable foreign word (the dictionary knows only a plural)"
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
            return _without_head(words, parses, grammemes, parts, case)
        head_parse = _nominative(parses[head], ("NOUN",))
        if animate is False:
            inanimate = next((p for p in parses[head] if p.tag.POS == "NOUN" and p.tag.case == "nomn"
                              and p.tag.animacy == "inan" and not NAME_TAGS & set(p.tag.grammemes)), None)
            if inanimate is not None and inanimate is not head_parse:
                head_parse = inanimate
                if not _is_dictionary(inanimate):
                    guessed.append(words[head])
        tail = _compound_tail(words[head], head_parse, grammemes) if animate is False else None
        if tail is not None:  # «данс-поп» -> «данс-попа»: only the last part of an unknown compound declines
            out[head] = tail
            guessed.append(words[head])
        elif not inflect_at(head, head_parse):
            return None
        # modifiers agree with the head in animacy too: «исполняет альтернативный рок» (inanimate
        # accusative), not «альтернативного рок»; animacy shows only in the masculine singular and the
        # plural — a feminine head keeps its own accusative: «арабскую музыку», never «арабский музыку»
        animacy = accusative_animacy(head_parse) if case == "acc" else None
        for i in range(head):
            mod = _nominative(parses[i], ("ADJF", "PRTF"))
            if mod is None:
                return None
            new = mod.inflect(grammemes | ({animacy} if animacy else set()))
            if new is None:
                return None
            out[i] = _restore(new.word, words[i])
    parts[0::2] = out
    form = "".join(parts)
    if guessed or indeclinable or low_confidence:
        notes = (["not in the OpenCorpora dictionary: " + ", ".join(guessed)] if guessed else []) + (
            ["kept as indeclinable foreign names: " + ", ".join(indeclinable)] if indeclinable else []) + (
            ["pymorphy3 prefers another reading of: " + ", ".join(low_confidence)] if low_confidence else [])
        return form, GUESSED, "; ".join(notes)
    return form, EXACT, ""


_INDECLINABLE_ENDINGS = set("еиоуюэыё")
_COMPOSED = re.compile(r"[\s-]")  # several words, or parts joined by a hyphen
# Particles inside Arabic, Hebrew, Dutch, German ... names: never declined («Заида ибн Султана»)
NAME_PARTICLES = frozenset({"ибн", "бин", "бен", "бинт", "аль", "эль", "ад", "ас", "ан", "ар", "аш", "ат",
                            "абдель", "абдул", "абд",
                            "фон", "ван", "дер", "де", "ди", "да", "дель", "ла", "ле", "ду", "дос", "дас"})
_ARABIC_ARTICLE = re.compile(r"^(Эль|Эр|Аль|Ар|Ас|Аш|Ад|Ат|Ан|Аз|Эн|Эс|Эт|Эд|Эш|Эз)-(.+)$")


def _only_plural_reading(parses) -> bool:
    """True when every nominative noun reading of a word is a plural of a singular noun (not Pltm)."""
    nouns = [p for p in parses if p.tag.POS == "NOUN" and p.tag.case == "nomn"]
    return bool(nouns) and all(p.tag.number == "plur" and "Pltm" not in p.tag for p in nouns)


def accusative_animacy(head) -> str | None:
    """The animacy a modifier's accusative must show for ``head`` (a pymorphy3 parse): only masculine
    singular and plural heads distinguish it; a feminine or neuter head has one accusative."""
    if head.tag.number == "plur" or "Pltm" in head.tag or head.tag.gender == "masc":
        return head.tag.animacy
    return None


def _compound_tail(word: str, parse, grammemes: set[str]) -> str | None:
    """A hyphenated name of a thing the dictionary does not know as a whole declines in its last part only
    (rule `hyphen-compound`): «данс-поп» -> «данс-попа», «синти-поп» -> «синти-попом»; None otherwise."""
    if "-" not in word or _is_dictionary(parse):
        return None
    prefix, _, last = word.rpartition("-")
    p = next((p for p in parse_word(last) if p.tag.POS == "NOUN" and p.tag.case == "nomn"
              and p.tag.animacy == "inan" and _is_dictionary(p)), None)
    if p is None:
        p = next((p for p in parse_word(last) if p.tag.POS == "NOUN" and p.tag.case == "nomn"
                  and not NAME_TAGS & set(p.tag.grammemes)), None)
    if p is not None and "accs" in grammemes and p.tag.animacy != "inan" and (
            p.tag.gender == "masc" or p.tag.number == "plur"):
        return word  # a thing's masculine accusative is its nominative («исполняет данс-поп»)
    new = p.inflect(grammemes) if p is not None else None
    if new is None:
        return None
    return f"{prefix}-{_restore(new.word, last)}"


def _noun_compound(label: str, case: str, number: str | None) -> tuple[str, str, str] | None:
    """A hyphenated pair of animate nouns the dictionary does not know as a whole declines in both parts:
    «автор-исполнитель» -> «автором-исполнителем» (pymorphy3 reads the whole as an indeclinable)."""
    if " " in label or label.count("-") != 1:
        return None
    whole = parse_word(label)
    if whole and _is_dictionary(whole[0]) and "Fixd" not in whole[0].tag:
        return None
    grammemes = {CASE_TAGS[case]} | ({NUMBER_TAGS[number]} if number else set())
    forms = []
    for part in label.split("-"):
        p = next((p for p in parse_word(part) if p.tag.POS == "NOUN" and p.tag.case == "nomn"
                  and p.tag.number == "sing" and p.tag.animacy == "anim" and _is_dictionary(p)), None)
        new = p.inflect(grammemes) if p is not None else None
        if new is None:
            return None
        forms.append(_restore(new.word, part))
    return "-".join(forms), EXACT, "compound of two nouns, both declined"


def _without_head(words: list[str], parses: list, grammemes: set[str], parts: list[str], case: str
                  ) -> tuple[str, str, str] | None:
    """Names pymorphy3 finds no head noun in: substantivised adjectives (британский английский), an
    Arabic article before the noun (Эр-Рияд -> Эр-Рияде), vowel-final foreign names (Тимбукту)."""
    mods = [_nominative(ps, ("ADJF", "PRTF")) for ps in parses]
    out = list(words)
    if all(m is not None for m in mods):
        for i, m in enumerate(mods):
            new = m.inflect(grammemes)
            if new is None:
                return None
            out[i] = _restore(new.word, words[i])
        parts[0::2] = out
        return "".join(parts), GUESSED, "adjectives used as a noun: all inflected"
    if len(words) != 1:
        return None
    word = words[0]
    m = _ARABIC_ARTICLE.match(word)
    if m:
        rest = m.group(2)
        p = next((p for p in parse_word(rest) if p.tag.POS == "NOUN" and p.tag.case == "nomn"), None)
        new = p.inflect(grammemes) if p is not None else None
        rest_form = _restore(new.word, rest) if new is not None else rule_declension(rest, case, animate=False)
        if rest_form is None:
            return None
        return f"{m.group(1)}-{rest_form}", GUESSED, "Arabic article kept, the noun inflected"
    if word[-1:].lower() in _INDECLINABLE_ENDINGS:
        return word, GUESSED, "kept as an indeclinable foreign name"
    form = rule_declension(word, case, animate=False)
    return (form, GUESSED, "declined by the regular endings (not in the dictionary)") if form else None


# Regular endings for names the dictionary does not know: ending -> case -> replacement of that ending.
_ENDINGS = {
    "а": {"gen": "ы", "dat": "е", "acc": "у", "ins": "ой", "loc": "е"},
    "я": {"gen": "и", "dat": "е", "acc": "ю", "ins": "ей", "loc": "е"},
    "й": {"gen": "я", "dat": "ю", "acc": "й", "ins": "ем", "loc": "е"},
    "": {"gen": "а", "dat": "у", "acc": "", "ins": "ом", "loc": "е"},
}


_SOFT_MASCULINE = {"gen": "я", "dat": "ю", "acc": "я", "ins": "ем", "loc": "е"}


def rule_declension(word: str, case: str, animate: bool, masculine: bool = False) -> str | None:
    """Decline an unknown name by the regular endings (-а, -я, -й, consonant, and -ь for a man: Надаль ->
    Надаля); None for -ь otherwise (gender unclear)."""
    if case == "nom" or not word:
        return word
    low = word[-1].lower()
    if low == "ь" and masculine:
        return word[:-1] + _SOFT_MASCULINE[case]
    if low in _INDECLINABLE_ENDINGS or low == "ь" or not ("\u0400" <= low <= "\u04ff"):
        return None if low == "ь" else word
    if low in "аяй":
        stem, table = word[:-1], _ENDINGS[low]
        ending = table[case]
        if low == "а" and case == "gen" and stem[-1:].lower() in "гкхжшчщ":
            ending = "и"
        if low == "й" and case == "acc" and animate:
            ending = "я"
        return stem + ending
    ending = _ENDINGS[""][case]
    if case == "acc" and animate:
        ending = "а"
    return word + ending


def lexicon_agreement(label: str) -> Agreement | None:
    """Gender and number of a Russian name's head noun, from the dictionary (None if unknown/Latin)."""
    if not _CYRILLIC.search(label):
        return None
    words = label.split()
    parses = [parse_word(w) for w in words]
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


def indeclinable_name(label: str) -> bool:
    """True for a one-word (or hyphenated) foreign name ending in a vowel that pymorphy3 reads as an
    indeclinable singular (Fixd) or does not know: «Теннесси», «Абу-Даби», «Онтарио»."""
    if " " in label or not _CYRILLIC.search(label) or label[-1:].lower() not in _INDECLINABLE_ENDINGS:
        return False
    parses = parse_word(label)
    return any("Fixd" in p.tag and p.tag.number != "plur" for p in parses) or not any(
        _is_dictionary(p) for p in parses)


@cache
def _preposition_data() -> tuple[frozenset[str], dict[str, str]]:
    from importlib import resources

    import yaml

    raw = yaml.safe_load(resources.files("factatlas.templates").joinpath("data/ru_prepositions.yaml")
                         .read_text("utf-8"))
    return frozenset(raw["na"]), dict(raw["island_classes"])


def place_preposition(label: str, classes: tuple[str, ...] = ()) -> tuple[str, str]:
    """«в» or «на» before the place ``label`` (its nominative), and how it was decided: ``lexicon``
    (templates/data/ru_prepositions.yaml), ``rule:<class>`` (an island or archipelago), or ``default``."""
    na, island_classes = _preposition_data()
    if label in na:
        return "на", "lexicon"
    for q in classes:
        if q in island_classes:
            return "на", f"rule:{island_classes[q]}"
    return "в", "default"


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


class RussianBackend:
    name = "pymorphy3"

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        if features.preposition in ("в", "с") and not features.article and not features.particle:
            return self._with_preposition(label, lang, features, request)
        if features.article or features.preposition or features.particle:
            return None
        if features.is_plain or (features.case in (None, "nom") and features.number is None):
            return InflectionResult(label, NONE, self.name)
        if not _CYRILLIC.search(label):
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
        found = inflect_russian(core, features.case or "nom", features.number, gender, is_person, animate)
        if found is None:
            return InflectionResult(label, FAILED, self.name,
                                    f"no {'name word' if is_person else 'head noun'} of '{label}' could be "
                                    f"put into {features.describe()} by pymorphy3")
        form, status, detail = found
        if status == EXACT and _COMPOSED.search(core.strip()):
            # every word is the dictionary's, but the phrase was declined word by word (agreement, compound
            # parts): only a form found whole — one dictionary word or a lexicon form — is exact
            status, detail = GUESSED, "composed: declined word by word, each word from the OpenCorpora dictionary"
        if qualifier:
            form += label[qualifier.start():]
        return InflectionResult(form, status, self.name, detail)

    def _with_preposition(self, label: str, lang: str, features: Features, request: InflectionRequest
                          ) -> InflectionResult | None:
        """The name in its case after «в»/«на» or «с», with the preposition's form chosen for it."""
        from dataclasses import replace

        bare = self.inflect(label, lang, replace(features, preposition=None), replace(request, sentence_initial=False))
        if bare is None or bare.status == FAILED:
            return bare
        entry = request.entry
        if features.preposition == "в" and entry is not None and entry.prep in ("в", "на"):
            word, how = entry.prep, entry.how
        elif features.preposition == "в":
            word, how = place_preposition(label, request.classes)
        else:
            word, how = "с", "fixed"
        word = preposition_allomorph(word, bare.form.lstrip("«„\""))
        if word != features.preposition and how in ("default", "fixed"):
            how = "allomorph"
        if request.sentence_initial:
            word = word[:1].upper() + word[1:]
        form = f"{word} {bare.form}"
        return replace(bare, form=form, choice=(how, form))
