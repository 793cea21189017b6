"""Hebrew: the definite article ה and the one-letter prepositions ב, כ, ל, מ glued to the name they govern.

A Hebrew preposition of one letter is written as part of the next word: «במצרים», «למצרים», «ממצרים». Three
of them, ב כ ל, absorb the definite article: the ה is no longer written (ב + הממלכה המאוחדת -> «בממלכה
המאוחדת», ל + הפיליפינים -> «לפיליפינים»), while מ keeps it («מהממלכה המאוחדת»). Whether a name's first ה
is the article (הממלכה המאוחדת, הפיליפינים, הנילוס) or part of the name (הונגריה, הודו, הולנד, הוואי) is
lexical: the entity's lexicon entry says so (`article: def`); without one the ה belongs to the name. Common
nouns take the article on the noun and on each agreeing adjective (מוזיקה קלאסית -> המוזיקה הקלאסית); a
construct state takes it on its last noun only (מוזיקת רוק -> מוזיקת הרוק), which a label does not show:
such phrases are flagged guessed.

Named rules (recorded as the result's ``choice``):
- ``he-prefix``: the preposition glued to the name;
- ``he-article-fusion``: ב/כ/ל replace the article ה;
- ``he-vav-doubling``: a name opening with a single consonantal ו doubles it after a prefix (the Academy's
  spelling without vowel points: ונצואלה -> «בוונצואלה», וינה -> «בווינה»; וושינגטון is written so already);
- ``he-prefix-hyphen``: before a name in Latin letters or digits the prefix takes a hyphen («ב-HBO», «ב-2M»);
- ``he-prefix-quote``: before a quoted title the prefix stays outside the quotes («ב"הסנדק"»).
"""

from __future__ import annotations

from collections.abc import Mapping

from factatlas.templates.morphology import (
    EXACT,
    FAILED,
    GUESSED,
    NONE,
    Features,
    InflectionRequest,
    InflectionResult,
)
from factatlas.templates.rules_base import article_tables, takes_article

ARTICLE = "ה"
PREFIXES = ("ב", "כ", "ל", "מ")
FUSING = ("ב", "כ", "ל")  # these absorb the article; מ does not
_HEBREW = range(0x05D0, 0x05EB)  # א..ת
_QUOTES = "\"'״׳“”„«"


class _Cannot(Exception):
    pass


def is_hebrew_letter(ch: str) -> bool:
    return bool(ch) and ord(ch[0]) in _HEBREW


def attach(prefix: str, word: str, definite: bool) -> tuple[str, str]:
    """(``prefix`` glued to ``word``, the rule that did it). ``definite``: ``word`` opens with the article ה."""
    if word[:1] in _QUOTES:
        return prefix + word, "he-prefix-quote"
    if not is_hebrew_letter(word[:1]):
        return f"{prefix}-{word}", "he-prefix-hyphen"
    if definite and word.startswith(ARTICLE) and prefix in FUSING:
        return prefix + word[1:], "he-article-fusion"
    if word.startswith("ו") and not word.startswith("וו"):
        return prefix + "ו" + word, "he-vav-doubling"
    return prefix + word, "he-prefix"


def definite_phrase(label: str, spec: Mapping) -> tuple[str, bool]:
    """(the phrase with the article, whether that is certain). Noun + adjectives: every word takes it
    (מוזיקה קלאסית -> המוזיקה הקלאסית), certain when every later word ends like an adjective
    (`adjective_endings`); a phrase already definite through a later word is a construct (מוזיקת הרוק)."""
    words = label.split(" ")
    if len(words) == 1:
        return ARTICLE + label, True
    if any(w.startswith(ARTICLE) for w in words[1:]):
        return label, True
    endings = tuple(spec.get("adjective_endings", ()))
    sure = bool(endings) and all(w.endswith(endings) for w in words[1:])
    return " ".join(ARTICLE + w for w in words), sure


class HebrewBackend:
    name = "hebrew"

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        spec = article_tables().get(lang)
        if lang != "he" or spec is None or features.particle or features.number or features.case:
            return None
        if features.is_plain:
            return InflectionResult(label, NONE, self.name)
        try:
            form, rules, sure = _hebrew(label, features, request, spec)
        except _Cannot as e:
            return InflectionResult(label, FAILED, self.name, f"he {features.describe()} of '{label}': {e}")
        entry = request.entry
        decided = entry is not None and entry.article is not None
        if sure and (decided or not _article_question(label, features)):
            status, detail = EXACT, (f"lexicon {entry.where}" if decided else ", ".join(rules))
        else:
            status, detail = GUESSED, ", ".join(rules) or "composed by the he rules"
        choice = None
        if decided:
            choice = ("lexicon", f"{label} <- {entry.where}")
        elif rules:
            choice = (f"rule:{rules[-1]}", form)
        return InflectionResult(form, status, self.name, detail, choice)


def _article_question(label: str, f: Features) -> bool:
    """Whether the form depends on knowing if a first ה is the article: only a fusing prefix before ה."""
    return f.preposition in FUSING and label.startswith(ARTICLE)


def _hebrew(label: str, f: Features, req: InflectionRequest, spec: Mapping) -> tuple[str, list[str], bool]:
    if f.article == "indef":
        raise _Cannot("Hebrew has no indefinite article; write the bare slot")
    if f.preposition is not None and f.preposition not in PREFIXES:
        raise _Cannot(f"'{f.preposition}' is not a one-letter preposition; use one of {', '.join(PREFIXES)}")
    entry = req.entry
    rules: list[str] = []
    sure = True
    phrase = label
    definite = entry is not None and entry.article == "def"
    if f.article == "def" and not definite:
        if entry is not None and entry.article == "none":
            pass  # a proper name used bare
        elif takes_article(label, req.entity_type, spec):
            phrase, sure = definite_phrase(label, spec)
            definite = phrase.startswith(ARTICLE)
            rules.append("he-definite")
    if f.preposition:
        phrase, rule = attach(f.preposition, phrase, definite)
        rules.append(rule)
    return phrase, rules, sure
