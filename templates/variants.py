"""What of a subject an answer form depends on: the build and the filler ledger share this one rule.

It lives with the templates, whose renderer makes the forms; the build imports it through
``builder/sources.py`` (the build calls the templates, never the other way round: issue 43)."""

from __future__ import annotations

from collections.abc import Mapping

from factatlas.records import Entity


def has_gendered_labels(entity: Entity) -> bool:
    """Whether the entity's label has gendered forms (P2521/P3321), so its answer form follows the subject."""
    return bool(entity.female_labels or entity.male_labels)


def answer_variant(entities: Mapping[str, Entity], object_qid: str, subject_qid: str) -> str:
    """What of the subject an object's answer form depends on: "" for most objects; the subject's
    gender for objects whose label has gendered forms (P2521/P3321: «actor» / «actriz»).

    The builder renders one answer form per (template, object, variant), so a prompt's gold and every
    candidate filler agree with its subject while the cost grows with the variants, not the subjects.
    """
    obj = entities.get(object_qid)
    if obj is None or not has_gendered_labels(obj):
        return ""
    return subject_key(entities, subject_qid)


def subject_key(entities: Mapping[str, Entity], subject_qid: str) -> str:
    """All that answer forms may depend on of a subject (its gender): subjects with the same key get
    the same answer forms, so predicate-wide candidate tuples are shared among them."""
    subject = entities.get(subject_qid)
    return str(subject.gender) if subject is not None else "unknown"
