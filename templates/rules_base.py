"""What every article rule shares (backend_rules.py, rules_germanic.py, backend_el.py, backend_he.py): the
tables of templates/data/articles.yaml, the failure a rule raises when a form needs what is unknown, gender
keys into the tables, the vowel and semivowel tests, capitalisation at a sentence start, joining a phrase,
whether a name takes an article, and the status of a composed form."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources

import yaml

from factatlas.records import Gender
from factatlas.templates.morphology import EXACT, GUESSED, InflectionRequest

# languages whose tables in articles.yaml are read by a backend of their own (backend_el.py, backend_he.py)
OWN_BACKENDS = ("el", "he")
VOWELS = set("aeiouyàâäáéèêëíìîïóòôöúùûüœæAEIOUYÀÂÄÁÉÈÊËÍÌÎÏÓÒÔÖÚÙÛÜŒÆ")
IT_LO = ("s", "z", "gn", "ps", "x", "y", "pn")


@cache
def article_tables() -> Mapping[str, Mapping]:
    return yaml.safe_load(resources.files("factatlas.templates").joinpath("data/articles.yaml").read_text("utf-8"))


class Cannot(Exception):
    pass


def gender_key(gender: Gender, number: str) -> str:
    base = {Gender.MASCULINE: "masc", Gender.FEMININE: "fem", Gender.NEUTER: "neut"}.get(gender, "")
    if number == "pl":
        return f"{base}.pl" if base else "pl"
    return base


def pick_form(table: Mapping[str, str], key: str, what: str) -> str:
    if key in table:
        return table[key]
    if key.endswith(".pl") and "pl" in table:
        return table["pl"]
    if key == "pl":
        values = {v for k, v in table.items() if k.endswith("pl")}
        if len(values) == 1:
            return values.pop()
    raise Cannot(f"no {what} for gender/number '{key or 'unknown'}'")


def starts_with_vowel(text: str, spec: Mapping) -> bool:
    if not text:
        return False
    if any(text == w or text.startswith(w + " ") for w in spec.get("no_elision", ())):
        return False  # a vowel letter read as a consonant: «de One Piece» (/wan/), never «d'One Piece»
    if semivowel(text, spec.get("semivowels", ())):
        return False  # ca: «el Iemen», «de Iàssir Arafat», «de Huelva»: a semivowel i/u is a consonant
    if text[0] in "hH":
        aspire = spec.get("h_aspire", ())
        return not any(text == w or text.startswith(w + " ") or text.lower().startswith(w.lower())
                       for w in aspire)
    if text[0] in "yY" and len(text) > 1 and text[1] in VOWELS:
        return False  # a consonantal y: le Yémen, au Yémen, la Yougoslavie
    return text[0] in VOWELS


def semivowel(text: str, letters) -> bool:
    """An initial ``letters`` (ca i/u, also after h) before another vowel is a semivowel: «el Iemen», «de Huelva»."""
    low = text.lower()
    if low[:1] == "h":
        low = low[1:]
    return len(low) > 1 and low[0] in letters and low[1] in VOWELS


def capitalise(text: str, request: InflectionRequest) -> str:
    return text[:1].upper() + text[1:] if request.sentence_initial and text else text


def takes_article(label: str, etype: str, spec: Mapping) -> bool:
    if label in spec.get("without_article", ()):
        return False
    if label in spec.get("with_article", ()):
        return True
    if etype in spec.get("article_types", ()):
        return True
    # a place named by a common noun (fr «tour Eiffel», «gouvernorat de …») takes the article; a proper
    # name (Marrakech, Burj Khalifa) does not
    if etype in spec.get("common_head_types", ()):
        first = label.split(" ", 1)[0]
        return label[:1].islower() or first in spec.get("admin_heads", {}) or first in spec.get("article_heads", ())
    return False


def join_phrase(*parts: str) -> str:
    out = ""
    for p in parts:
        if not p:
            continue
        out = p if not out else (out + p if out.endswith("'") else out + " " + p)
    return out


def entry_decides(request: InflectionRequest) -> bool:
    """The entity's lexicon entry made the choices of the phrase (its article class, preposition class or
    gender): the rule only spelled them out."""
    entry = request.entry
    return entry is not None and bool(entry.article or entry.prep or entry.gender)


def composed_status(request: InflectionRequest, used_gender: bool) -> str:
    src = request.agreement.source
    return GUESSED if used_gender and (src.startswith("suffix") or not src) else EXACT
