"""The entity lexicon: per language, what the renderer must know about a name to put it into a slot.

One file per language, ``templates/data/lexicon/<lang>.yaml``::

    lang: de
    entries:
      Q99:                      # the entity (object, candidate or subject)
        label: Kalifornien      # the label the entry is about; another label on the entity is an error
        gender: neut            # masc | fem | neut, optionally .pl (fem.pl); or pl
        article: none           # def | none: does the name take the definite article in running text
        prep: in                # the locative preposition class (de in|auf|in-die, ru в|на, fr en|au|aux|à)
        forms: {dat: ...}       # inflected forms by feature (Features.describe(): dat, loc, def.dat.in)
        short: ...              # a shorter name used as the filler (drops a disambiguator or a head noun)
        source: reviewed        # reviewed | wikidata:L<id> | rule:<name>

The renderer consults the entry before any rule, and records every use as a decision whose source is
``lexicon:<source>``. Wikidata lexemes (P5185 grammatical gender, forms with features) are the
intended origin of most entries; what Wikidata lacks is written here as reviewed project data.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from factatlas.errors import ConfigError
from factatlas.records import QID_RE, Gender
from factatlas.yamlfile import load_located

ENTRY_KEYS = ("label", "gender", "article", "prep", "forms", "short", "source")
ARTICLE_CLASSES = ("def", "none")
_GENDERS = {"masc": Gender.MASCULINE, "fem": Gender.FEMININE, "neut": Gender.NEUTER}
# the preposition classes a language's rules know; a language not listed takes any text (de, ru)
PREP_CLASSES: Mapping[str, tuple[str, ...]] = {
    "fr": ("en", "au", "aux", "à", "dans"),
    "it": ("in", "a"),
    "pt": ("em",),
    "es": ("en",),
}
_SOURCE = re.compile(r"reviewed|wikidata:L[1-9][0-9]*|rule:[a-z][a-z0-9_-]*")


@dataclass(frozen=True, slots=True)
class LexiconEntry:
    qid: str
    lang: str
    label: str
    gender: Gender | None = None
    number: str | None = None  # "pl" for plural names, else None (singular unless said)
    article: str | None = None  # def | none
    prep: str | None = None
    forms: Mapping[str, str] = field(default_factory=dict)
    short: str | None = None
    source: str = "reviewed"
    where: str = ""  # file:line of the entry, for errors

    @property
    def how(self) -> str:
        """The decision source recorded for anything taken from this entry."""
        return f"lexicon:{self.source}"

    def about(self, label: str) -> bool:
        """True when ``label`` (raw or without its disambiguator) is the label this entry describes."""
        from factatlas.templates.labels import clean_label

        return label in (self.label, clean_label(self.label)) or clean_label(label) == self.label


def lexicon_dir() -> Path:
    return Path(str(resources.files("factatlas.templates").joinpath("data/lexicon")))


@cache
def load_lexicon(lang: str) -> Mapping[str, LexiconEntry]:
    """The packaged lexicon of ``lang`` (qid -> entry); empty when the language has none."""
    path = lexicon_dir() / f"{lang}.yaml"
    return read_lexicon(path, lang) if path.exists() else {}


def read_lexicon(path: str | Path, lang: str | None = None) -> dict[str, LexiconEntry]:
    """Read and check one lexicon file; every problem is a ``ConfigError`` at its file:line:col."""
    doc = load_located(path)
    data = doc.data
    if not isinstance(data, dict) or set(data) - {"lang", "entries"}:
        raise doc.error("expected a mapping with keys 'lang' and 'entries'")
    file_lang = data.get("lang")
    expected = lang or Path(path).stem
    if file_lang != expected:
        raise doc.error(f"lang is {file_lang!r} but the file is the lexicon of {expected!r}; write `lang: {expected}`",
                        "lang")
    entries = data.get("entries") or {}
    if not isinstance(entries, dict):
        raise doc.error("entries: expected a mapping of QIDs to entries", "entries")
    out: dict[str, LexiconEntry] = {}
    for qid, raw in entries.items():
        if not isinstance(qid, str) or not QID_RE.fullmatch(qid):
            raise doc.key_error(f"entries: {qid!r} is not a Wikidata item id; write it like 'Q79'", "entries", qid)
        out[qid] = _entry(doc, expected, qid, raw)
    return out


def _entry(doc, lang: str, qid: str, raw) -> LexiconEntry:
    keys = ("entries", qid)
    if not isinstance(raw, dict):
        raise doc.error(f"entries.{qid}: expected a mapping with keys {', '.join(ENTRY_KEYS)}", *keys)
    for k in raw:
        if k not in ENTRY_KEYS:
            raise doc.key_error(f"entries.{qid}: unknown key '{k}'; allowed: {', '.join(ENTRY_KEYS)}", *keys, k)
    label = raw.get("label")
    if not isinstance(label, str) or not label.strip():
        raise doc.error(f"entries.{qid}: 'label' is required (the {lang} label the entry is about)", *keys)
    gender, number = None, None
    if "gender" in raw:
        text = str(raw["gender"])
        head, _, tail = text.partition(".")
        if head == "pl" and not tail:
            number = "pl"
        elif head in _GENDERS and tail in ("", "pl"):
            gender, number = _GENDERS[head], ("pl" if tail else None)
        else:
            raise doc.error(f"entries.{qid}.gender: {text!r}; expected masc, fem or neut, optionally "
                            "followed by .pl (fem.pl), or pl", *keys, "gender")
    article = raw.get("article")
    if article is not None and article not in ARTICLE_CLASSES:
        raise doc.error(f"entries.{qid}.article: {article!r}; expected one of {', '.join(ARTICLE_CLASSES)}",
                        *keys, "article")
    forms = raw.get("forms") or {}
    if not isinstance(forms, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                              for k, v in forms.items()):
        raise doc.error(f"entries.{qid}.forms: expected a mapping of features (dat, loc, def.dat.in) to forms",
                        *keys, "forms")
    source = str(raw.get("source", ""))
    if not _SOURCE.fullmatch(source):
        raise doc.error(f"entries.{qid}.source: {source!r}; expected reviewed, wikidata:L<id> or rule:<name>",
                        *keys, "source")
    for k in ("prep", "short"):
        if k in raw and (not isinstance(raw[k], str) or not raw[k].strip()):
            raise doc.error(f"entries.{qid}.{k}: expected a non-empty text", *keys, k)
    prep = raw.get("prep")
    if prep is not None and lang in PREP_CLASSES and prep not in PREP_CLASSES[lang]:
        raise doc.error(f"entries.{qid}.prep: {prep!r}; expected one of {', '.join(PREP_CLASSES[lang])}",
                        *keys, "prep")
    line, _ = doc.where(*keys)
    return LexiconEntry(qid, lang, label, gender, number, article, raw.get("prep"), dict(forms), raw.get("short"),
                        source, f"{doc.path}:{line}")


def entry_for(qid: str, lang: str) -> LexiconEntry | None:
    return load_lexicon(lang).get(qid)


def label_mismatch(entry: LexiconEntry, label: str | None) -> ConfigError | None:
    """The error for an entry written for another label than the entity has now (a renamed item)."""
    if label is None or entry.about(label):
        return None
    return ConfigError(f"lexicon entry {entry.qid} is about {entry.label!r} but the {entry.lang} label is "
                       f"{label!r}; update the entry's label and check its forms", entry.where)
