"""The 20 curated predicates templates are written for, with the semantic type of their slots.

Types drive validation (which predicates exist) and rendering defaults (an object of P37 is a language:
in French it takes the article, «le français»; a P19 object is a city: «à Paris»).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PredicateSlots:
    pid: str
    label: str
    subject_type: str
    object_type: str


PREDICATES: dict[str, PredicateSlots] = {p.pid: p for p in (
    PredicateSlots("P17", "country", "place", "country"),
    PredicateSlots("P19", "place of birth", "person", "city"),
    PredicateSlots("P20", "place of death", "person", "city"),
    PredicateSlots("P27", "country of citizenship", "person", "country"),
    PredicateSlots("P30", "continent", "country", "continent"),
    PredicateSlots("P36", "capital", "country", "city"),
    PredicateSlots("P37", "official language", "country", "language"),
    PredicateSlots("P47", "shares border with", "country", "country"),
    PredicateSlots("P103", "native language", "person", "language"),
    PredicateSlots("P106", "occupation", "person", "occupation"),
    PredicateSlots("P136", "genre", "person", "genre"),
    PredicateSlots("P190", "sister city", "city", "city"),
    PredicateSlots("P264", "record label", "person", "record-label"),
    PredicateSlots("P364", "original language of film or TV show", "work", "language"),
    PredicateSlots("P449", "original broadcaster", "work", "tv-network"),
    PredicateSlots("P495", "country of origin", "work", "country"),
    PredicateSlots("P530", "diplomatic relation", "country", "country"),
    PredicateSlots("P1303", "instrument", "person", "instrument"),
    PredicateSlots("P1376", "capital of", "city", "country"),
    PredicateSlots("P1412", "languages spoken, written or signed", "person", "language"),
)}

# Types whose labels are common nouns (lower-case in most languages, take articles where the language has
# them); the others are proper names.
COMMON_NOUN_TYPES = frozenset({"occupation", "genre", "instrument", "language"})
