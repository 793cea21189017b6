"""The entity lexicon per language (`templates/data/lexicon/<lang>.yaml`): reviewed facts about how a name
behaves in running text, consulted before the rule tables.

```yaml
lang: it
entries:
  Q99:                  # the entity (object, candidate or subject)
    label: California   # the label the entry is about; a sample whose label differs is an error
    gender: fem         # masc | fem | neut, optionally .pl
    article: def        # def | none: does the name take the definite article in running text
    prep: in            # locative preposition class (it in|a; fr en|au|aux|à|dans; pt em; es en)
    forms: {di: "di Lussemburgo"}   # whole fillers by slot feature (`Features.describe()`), optional
    short: ...          # a shorter filler (drops a disambiguator or a repeated head noun), optional
    source: reviewed    # reviewed | wikidata:L<id> | rule:<name>
```
Every decision taken from an entry names it (`lexicon:<lang>:<qid>`) so that the audit shows where a
filler came from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from factatlas.yamlfile import Located, load_located

GENDER_VALUES = ("masc", "fem", "neut", "masc.pl", "fem.pl", "neut.pl", "pl")
ARTICLE_VALUES = ("def", "none")
PREP_VALUES: Mapping[str, tuple[str, ...]] = {
    "fr": ("en", "au", "aux", "à", "dans"),
    "it": ("in", "a"),
    "pt": ("em",),
    "es": ("en",),
}
FIELDS = ("label", "gender", "article", "prep", "forms", "short", "source")


@dataclass(frozen=True, slots=True)
class LexiconEntry:
    qid: str
    lang: str
    label: str
    gender: str = ""  # "" = not given: the gender rules decide
    article: str = ""  # "" = not given: the article rules decide
    prep: str = ""
    forms: Mapping[str, str] = field(default_factory=dict)
    short: str = ""
    source: str = "reviewed"
    where: str = ""  # file:line of the entry, for audit lines and errors

    @property
    def tag(self) -> str:
        return f"lexicon:{self.lang}:{self.qid}"


@dataclass(frozen=True, slots=True)
class Lexicon:
    lang: str
    by_qid: Mapping[str, LexiconEntry]
    by_label: Mapping[str, LexiconEntry]  # only labels that name one entry

    def find(self, qid: str, label: str) -> LexiconEntry | None:
        """The entry of ``qid`` when it is about ``label``; without a qid, the one entry with that label."""
        if qid:
            entry = self.by_qid.get(qid)
            return entry if entry is not None and label in (entry.label, _clean(entry.label), entry.short) else None
        return self.by_label.get(label)


_DISAMBIGUATOR = re.compile(r"\s*[(（][^()（）]+[)）]$")


def _clean(label: str) -> str:
    """The label without a trailing Wikipedia disambiguator (as `render.clean_label` writes it)."""
    return _DISAMBIGUATOR.sub("", label) or label


def lexicon_dir() -> Path:
    return Path(str(resources.files("factatlas.templates").joinpath("data/lexicon")))


@cache
def lexicon(lang: str) -> Lexicon:
    """The packaged lexicon of ``lang`` (empty when the language has none)."""
    path = lexicon_dir() / f"{lang}.yaml"
    if not path.is_file():
        return Lexicon(lang, {}, {})
    return parse_lexicon(load_located(path), lang)


def parse_lexicon(doc: Located, lang: str) -> Lexicon:
    """Check and index one lexicon document; every problem is a ConfigError at its file:line:col."""
    data = doc.data if isinstance(doc.data, dict) else {}
    if data.get("lang") != lang:
        raise doc.error(f"expected `lang: {lang}` (the file stem)", "lang")
    entries = data.get("entries") or {}
    if not isinstance(entries, dict):
        raise doc.error("`entries` must map QIDs to entries", "entries")
    by_qid: dict[str, LexiconEntry] = {}
    labels: dict[str, list[str]] = {}
    for qid, raw in entries.items():
        if not (isinstance(qid, str) and qid[:1] == "Q" and qid[1:].isdigit()):
            raise doc.key_error(f"'{qid}' is not a QID; expected Q followed by digits", "entries", qid)
        if not isinstance(raw, dict):
            raise doc.error("an entry maps field names to values", "entries", qid)
        for key in raw:
            if key not in FIELDS:
                raise doc.key_error(f"unknown field '{key}'; expected one of {', '.join(FIELDS)}", "entries", qid, key)
        label = raw.get("label")
        if not isinstance(label, str) or not label:
            raise doc.error("every entry needs the `label` it is about", "entries", qid)
        _check_choice(doc, raw, qid, "gender", GENDER_VALUES)
        _check_choice(doc, raw, qid, "article", ARTICLE_VALUES)
        _check_choice(doc, raw, qid, "prep", PREP_VALUES.get(lang, ()))
        forms = raw.get("forms") or {}
        if not isinstance(forms, dict) or not all(isinstance(v, str) and v for v in forms.values()):
            raise doc.error("`forms` maps slot features (def.de, a, en ...) to non-empty fillers", "entries", qid,
                            "forms")
        source = raw.get("source", "reviewed")
        if not (source == "reviewed" or str(source).startswith(("wikidata:L", "rule:"))):
            raise doc.error(f"source '{source}': expected reviewed, wikidata:L<id> or rule:<name>", "entries", qid,
                            "source")
        line, _ = doc.where("entries", qid)
        entry = LexiconEntry(qid, lang, label, raw.get("gender", ""), raw.get("article", ""), raw.get("prep", ""),
                             dict(forms), raw.get("short", "") or "", str(source), f"{doc.path}:{line}")
        by_qid[qid] = entry
        labels.setdefault(label, []).append(qid)
    by_label = {label: by_qid[qids[0]] for label, qids in labels.items() if len(qids) == 1}
    return Lexicon(lang, by_qid, by_label)


def _check_choice(doc: Located, raw: Mapping, qid: str, key: str, allowed: tuple[str, ...]) -> None:
    value = raw.get(key)
    if value is not None and value not in allowed:
        raise doc.error(f"{key} '{value}': expected one of {', '.join(allowed) or '(none for this language)'}",
                        "entries", qid, key)


def label_mismatches(lang: str, labels: Mapping[str, str]) -> list[str]:
    """Entries whose `label` is not the sample's label of their QID (``labels``: qid -> label), as
    ``file:line: ...`` lines: an entry written for another label must not decide this one's form."""
    out = []
    for qid, entry in sorted(lexicon(lang).by_qid.items()):
        found = labels.get(qid)
        if found is not None and found != entry.label:
            out.append(f"{entry.where}: {qid} label '{entry.label}' but the sample's {lang} label is '{found}'; "
                       "update the entry")
    return out
