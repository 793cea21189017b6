"""Gender and number of an entity's label in a language, with the source of the decision.

Order (MORPHOLOGY.md): P21 for people -> lexicon gender of the head noun (pymorphy3 for Russian, the
`lexicon` tables in templates/data/genders.yaml elsewhere) -> P31 class defaults per language ->
suffix heuristics. Non-binary P21 values stay ``Gender.NON_BINARY`` (templates pick their ``other``
form); a person without P21 stays unknown — we never guess a person's gender from their name.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources

import yaml

from factatlas.records import Entity, Gender
from factatlas.templates.morphology import Agreement

_GENDERS = {"masc": Gender.MASCULINE, "fem": Gender.FEMININE, "neut": Gender.NEUTER}


@cache
def _data(name: str) -> Mapping:
    return yaml.safe_load(resources.files("factatlas.templates").joinpath(f"data/{name}").read_text("utf-8"))


@cache
def class_types() -> Mapping[str, str]:
    """P31 QID -> semantic type (templates/data/classes.yaml)."""
    out: dict[str, str] = {}
    for type_name, qids in _data("classes.yaml").items():
        for q in qids:
            out.setdefault(q, type_name)
    return out


def entity_type(entity: Entity, slot_type: str = "") -> str:
    """The entity's semantic type from its P31 classes, else the type its predicate slot implies.

    A P17 subject whose classes are not listed stays a generic ``place`` (a tower, a mosque, a region):
    treating it as a settlement gave it the settlement's gender default (ar «تقع برج إيفل» for a masculine noun).
    """
    types = class_types()
    for q in entity.classes:
        if q in types:
            return types[q]
    return slot_type


def parse_value(value: str) -> tuple[Gender, str]:
    """'fem' -> (FEMININE, 'sg'); 'masc.pl' -> (MASCULINE, 'pl'); 'pl' -> (UNKNOWN, 'pl')."""
    parts = value.split(".")
    gender = next((_GENDERS[p] for p in parts if p in _GENDERS), Gender.UNKNOWN)
    return gender, ("pl" if "pl" in parts else "sg")


def _before_complement(label: str, stops: tuple[str, ...] | list[str]) -> str:
    """The words before the first complement marker (de «Königreich der Niederlande» -> «Königreich»)."""
    words = label.split()
    for i, word in enumerate(words[1:], start=1):
        if word in stops:
            return " ".join(words[:i])
    return label


def _head_word(label: str, head: str) -> str:
    words = label.split()
    if not words:
        return label
    return words[0] if head == "first" else words[-1]


def _head_candidates(head_word: str, head: str) -> tuple[str, ...]:
    """Spellings of a head word to look up: as written (German nouns are capitalised), lower-cased, and for
    head-last languages the last part of a hyphenated compound (de «Dance-Pop» -> «Pop»)."""
    out = [head_word, head_word.lower()]
    if head == "last" and "-" in head_word.strip("-"):
        part = head_word.rsplit("-", 1)[1]
        out += [part, part.lower(), part[:1].upper() + part[1:]]
    return tuple(dict.fromkeys(w for w in out if w))


def is_region(classes: tuple[str, ...] | list[str], lang: str) -> bool:
    """Whether an entity of these P31 classes is a region (a state, province, region of a country) for ``lang``:
    only languages that list ``region_classes`` in genders.yaml (fr, it, pt) treat one apart, in their gender
    suffixes (``type_suffixes.region``) and their place prepositions (backend_rules.py). A region keeps its
    slot's type everywhere else (classes.yaml knows no region type), and a city-state is a city."""
    listed = _data("genders.yaml").get(lang, {}).get("region_classes", ())
    if not listed or not any(q in listed for q in classes):
        return False
    # a city that is a region of its own (Hamburg, Berlin: a city and a German state) stays a city: à Hambourg
    types = class_types()
    return not any(types.get(q) == "settlement" for q in classes)


def resolve_agreement(entity: Entity, lang: str, label: str, etype: str = "") -> Agreement:
    """Gender and number of ``label`` (the entity's label in ``lang``) and where that came from."""
    if entity.gender_source == "P21" or etype == "person" or entity.gender is Gender.NON_BINARY:
        if entity.gender is not Gender.UNKNOWN:
            return Agreement(entity.gender, "sg", entity.gender_source or "P21")
        if etype == "person":
            return Agreement(Gender.UNKNOWN, "sg", "P21:missing")
    if etype == "work":
        # a work named by its kind agrees with the kind noun, which the class gives (he «הסרט … הופק», «הסדרה
        # … הופקה»): `work_genders` {P31 class: gender} in genders.yaml, before the language's `work_gender`
        kinds = _data("genders.yaml").get(lang, {}).get("work_genders", {})
        for q in entity.classes:
            if q in kinds:
                g, n = parse_value(kinds[q])
                return Agreement(g, n, f"work-class:{q}")
    if etype in ("settlement", "place", "country") and is_region(entity.classes, lang):
        etype = "region"  # the gender suffixes of regions, which a settlement's default would get wrong
    return _label_agreement(lang, label, etype)


@cache
def _compound_nouns(lang: str) -> tuple[str, ...]:
    """Single-word lexicon nouns (4+ letters) that may end a compound, longest first."""
    lexicon = _data("genders.yaml").get(lang, {}).get("lexicon", {})
    return tuple(sorted((w for w in lexicon if " " not in w and len(w) >= 4 and w[:1].isupper()),
                        key=len, reverse=True))


# languages whose head nouns' gender comes from a dictionary: the module with lexicon_agreement and
# indeclinable_name
_DICTIONARY_BACKENDS = {"ru": "backend_ru", "uk": "backend_uk"}


@cache
def _label_agreement(lang: str, label: str, etype: str) -> Agreement:
    spec = _data("genders.yaml").get(lang, {})
    if etype == "work" and (spec.get("title_articles") or spec.get("work_gender")):
        # a title is not a noun phrase to take the gender of: its own leading article decides, else the
        # kind of work it is (pt «A Mensagem foi produzida», «Casablanca foi produzido»)
        first = label.split(" ", 1)[0]
        if first in spec.get("title_articles", {}):
            g, n = parse_value(spec["title_articles"][first])
            return Agreement(g, n, "title-article")
        if spec.get("work_gender"):
            g, n = parse_value(spec["work_gender"])
            return Agreement(g, n, "work-default")
    if lang in _DICTIONARY_BACKENDS:
        from importlib import import_module

        backend = import_module(f"factatlas.templates.{_DICTIONARY_BACKENDS[lang]}")
        found = backend.lexicon_agreement(label)
        if found is not None:
            return found
        if backend.indeclinable_name(label):
            # «Теннесси», «Абу-Даби»: an indeclinable foreign name is singular and takes the gender of its
            # kind (штат, город, эмират: masculine unless the class says otherwise), never the plural
            # the «-и» suffix rule would guess («Теннесси находятся»)
            cls = spec.get("indeclinable", {}).get(etype) or spec.get("classes", {}).get(etype)
            g, _ = parse_value(cls) if cls else (Gender.MASCULINE, "sg")
            return Agreement(g, "sg", f"rule:{lang}-indeclinable")
    lexicon = spec.get("lexicon", {})
    if label in lexicon:
        g, n = parse_value(lexicon[label])
        return Agreement(g, n, "lexicon:table")
    # A common noun in apposition before a name is the head (de «Kanton Bern», «Provinz Riad»)
    first = label.split(" ", 1)[0]
    appositions = spec.get("apposition_heads", {})
    if first != label and first in appositions:
        g, n = parse_value(appositions[first])
        return Agreement(g, n, "lexicon:apposition")
    # The head noun's own gender beats the type's default: «língua francesa» is feminine although
    # languages default to masculine in Portuguese («o francês»); de «Dance-Pop» is masculine (Pop).
    head_pos = spec.get("head", "first")
    head = _head_word(_before_complement(label, spec.get("head_stops", ())), head_pos)
    candidates = _head_candidates(head, head_pos)
    for prefix in spec.get("strip_prefixes", ()):  # ar المتحف -> متحف
        candidates += tuple(w[len(prefix):] for w in candidates if w.startswith(prefix) and len(w) > len(prefix) + 1)
    for word in candidates:
        if word != label and word in lexicon:
            g, n = parse_value(lexicon[word])
            return Agreement(g, n, "lexicon:head")
    if spec.get("compounds"):
        # German compounds take the gender of their last noun: Rockmusik -> Musik (fem)
        low_head = head.lower()
        for noun in _compound_nouns(lang):
            if low_head.endswith(noun.lower()) and low_head != noun.lower():
                g, n = parse_value(lexicon[noun])
                return Agreement(g, n, "lexicon:compound")
    classes = spec.get("classes", {})
    if etype and etype in classes:
        g, n = parse_value(classes[etype])
        return Agreement(g, n, f"class-default:{etype}")
    # a type may have suffixes of its own (`type_suffixes`: names of countries and regions follow rules of
    # their own, see genders.yaml); a value `unknown` there says the ending decides nothing: the gender stays
    # unknown, and a form that needs it fails with a reason instead of a guess
    typed = spec.get("type_suffixes", {}).get(etype)
    suffixes = typed if typed is not None else spec.get("suffixes", {})
    kind = f"{etype}:" if typed is not None else ""
    low = head.lower()
    for suffix in sorted(suffixes, key=len, reverse=True):
        if low.endswith(suffix):
            g, n = parse_value(suffixes[suffix])
            return Agreement(g, n, f"suffix:{kind}-{suffix}" if suffix else f"suffix:{kind}default")
    return Agreement(Gender.UNKNOWN, "sg", "")
