"""Gender/number resolution: P21 -> lexicon head noun -> P31 class defaults -> suffix, source recorded."""

from __future__ import annotations

import pytest

from factatlas.records import Gender
from factatlas.templates.gender import entity_type, resolve_agreement
from factatlas.templates.morphology import Agreement
from tests.templates.templates_fixtures import ENTITIES, entity


def resolve(qid: str, lang: str, slot_type: str = "") -> Agreement:
    e = ENTITIES[qid]
    return resolve_agreement(e, lang, e.labels[lang], entity_type(e, slot_type))


@pytest.mark.parametrize(("qid", "lang", "expected"), [
    ("Q7200", "ru", Agreement(Gender.MASCULINE, "sg", "P21")),
    ("Q80440", "fr", Agreement(Gender.FEMININE, "sg", "P21")),
    ("Q21178405", "fr", Agreement(Gender.NON_BINARY, "sg", "P21")),  # kept, not collapsed to masc/fem
    ("Q42", "ar", Agreement(Gender.UNKNOWN, "sg", "P21:missing")),  # a person's gender is never guessed
    ("Q891", "ru", Agreement(Gender.MASCULINE, "sg", "lexicon:pymorphy3")),  # Нижний Новгород: head Новгород
    ("Q142", "ru", Agreement(Gender.FEMININE, "sg", "lexicon:pymorphy3")),
    ("Q30", "ru", Agreement(Gender.UNKNOWN, "pl", "lexicon:pymorphy3")),  # Соединённые Штаты: plural
    ("Q30", "fr", Agreement(Gender.MASCULINE, "pl", "lexicon:table")),
    ("Q96", "fr", Agreement(Gender.MASCULINE, "sg", "lexicon:table")),  # Mexique: -e but masculine
    # a country's gender comes from the country suffixes (genders.yaml `type_suffixes`), named in the source
    ("Q142", "fr", Agreement(Gender.FEMININE, "sg", "suffix:country:-e")),
    ("Q16", "fr", Agreement(Gender.MASCULINE, "sg", "suffix:country:default")),
    ("Q79", "ar", Agreement(Gender.FEMININE, "sg", "class-default:country")),  # مصر
    ("Q183", "de", Agreement(Gender.NEUTER, "sg", "class-default:country")),
    ("Q39", "de", Agreement(Gender.FEMININE, "sg", "lexicon:table")),  # die Schweiz
    ("Q150", "fr", Agreement(Gender.MASCULINE, "sg", "class-default:language")),  # le français
    ("Q6607", "es", Agreement(Gender.FEMININE, "sg", "suffix:-a")),
])
def test_resolution_order_and_recorded_source(qid, lang, expected):
    assert resolve(qid, lang) == expected


def test_predicate_slot_type_is_the_fallback_when_p31_is_unknown():
    e = entity("Q9000009", {"ar": "مدينة"}, ())
    assert entity_type(e, "settlement") == "settlement"
    assert resolve_agreement(e, "ar", "مدينة", "settlement") == Agreement(Gender.FEMININE, "sg", "class-default:settlement")
    assert entity_type(ENTITIES["Q30"], "settlement") == "country"  # P31 wins over the slot type


def test_no_rule_leaves_the_gender_unknown_with_no_source():
    e = entity("Q9000010", {"ja": "東京"}, ())
    assert resolve_agreement(e, "ja", "東京", "") == Agreement(Gender.UNKNOWN, "sg", "")


@pytest.mark.parametrize(("lang", "label", "gender"), [
    # a work agrees with the kind of work it is, not with its title's head noun («Мумия» is a film: «снят»)
    ("ru", "Мумия", Gender.MASCULINE),
    ("uk", "Мумія", Gender.MASCULINE),
    ("el", "Ο Νονός", Gender.FEMININE),  # η ταινία
])
def test_a_work_takes_its_languages_work_gender_without_title_articles(lang, label, gender):
    from factatlas.templates.gender import resolve_agreement

    from .templates_fixtures import entity

    film = entity("Q1", {lang: label}, ("Q11424",))
    got = resolve_agreement(film, lang, label, "work")
    assert (got.gender, got.number, got.source) == (gender, "sg", "work-default")


def test_a_gender_from_p21_holds_whatever_the_slot_and_a_person_s_gender_is_p21_s():
    """A gender Wikidata states (P21) decides agreement in any slot, not only a person's; a gender from any
    other source does not override the rules; a person's known gender is P21's even from a table that predates
    the gender's source."""
    from factatlas.records import Entity, frozen_mapping

    stated = Entity("Q1", frozen_mapping({"es": "Lola"}), gender=Gender.FEMININE, gender_source="P21")
    assert resolve_agreement(stated, "es", "Lola", "") == Agreement(Gender.FEMININE, "sg", "P21")
    guessed = Entity("Q2", frozen_mapping({"ja": "東京"}), gender=Gender.FEMININE, gender_source="suffix")
    assert resolve_agreement(guessed, "ja", "東京", "") == Agreement(Gender.UNKNOWN, "sg", "")
    older = Entity("Q3", frozen_mapping({"es": "Juan"}), gender=Gender.MASCULINE, gender_source="")
    assert resolve_agreement(older, "es", "Juan", "person") == Agreement(Gender.MASCULINE, "sg", "P21")


def test_a_head_last_compound_is_looked_up_by_its_last_part_as_written_lowered_and_capitalised():
    from factatlas.templates.gender import _head_candidates

    assert _head_candidates("Dance-pop", "last") == ("Dance-pop", "dance-pop", "pop", "Pop")
    assert _head_candidates("Dance-pop", "first") == ("Dance-pop", "dance-pop")
