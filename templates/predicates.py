"""The curated predicates templates are written for, with the semantic type of their slots, as the
core's predicate registry (factatlas/predicates.yaml) defines them.

Types drive validation (which predicates exist) and rendering defaults (an object of P37 is a language:
in French it takes the article, «le français»; a P19 object is a settlement: «à Paris»).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PredicateSlots:
    pid: str
    label: str
    subject_type: str
    object_type: str


def _slots() -> dict[str, PredicateSlots]:
    from factatlas.predicates import load_predicates

    return {pid: PredicateSlots(pid, spec.label, spec.subject_type.grammar_type, spec.object_type.grammar_type)
            for pid, spec in load_predicates().items()}


# From the core's registry (factatlas/predicates.yaml): the same predicates and type names as curate.
PREDICATES: dict[str, PredicateSlots] = _slots()

# Types whose labels are common nouns (lower-case in most languages, take articles where the language has
# them); the others are proper names.
COMMON_NOUN_TYPES = frozenset({"occupation", "genre", "instrument", "language"})
