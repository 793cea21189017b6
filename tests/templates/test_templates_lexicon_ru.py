"""Russian fillers the entity lexicon decides (templates/data/lexicon/ru.yaml), checked verbatim with the shipped
templates: case forms pymorphy3 gets wrong, and plural families that cannot be «the language» (issue 26)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from factatlas.records import ANSWER_MARKER, Gender, frozen_mapping
from factatlas.templates.library import load_library
from factatlas.templates.render import RenderedAnswer, Renderer
from tests.templates.templates_fixtures import CITY, COUNTRY, HUMAN, LANGUAGE, OCCUPATION, entity

SAMPLE = {e.qid: e for e in (
    entity("Q7200", {"ru": "Александр Пушкин"}, (HUMAN,), Gender.MASCULINE),
    entity("Q131248", {"ru": "Ли Куан Ю"}, (HUMAN,), Gender.MASCULINE),
    entity("Q970", {"ru": "Коморы"}, (COUNTRY,)),
    entity("Q1028", {"ru": "Марокко"}, (COUNTRY,)),
    entity("Q3901", {"ru": "Морони"}, (CITY,)),
    entity("Q25448", {"ru": "берберские языки"}, ("Q34770",)),
    entity("Q36368", {"ru": "курдские языки"}, ("Q34770",)),
    entity("Q1194795", {"ru": "магрибские диалекты арабского языка"}, (LANGUAGE,)),
    entity("Q34424", {"ru": "Шакира"}, (HUMAN,), Gender.FEMININE),
    entity("Q15123969", {"ru": "Сэм Смит"}, (HUMAN,)),  # no male or female P21
    replace(entity("Q483501", {"ru": "художник"}, (OCCUPATION,)), female_labels=frozen_mapping({"ru": "художница"})),
)}


@pytest.fixture(scope="module")
def renderer() -> Renderer:
    return Renderer(SAMPLE)


@pytest.fixture(scope="module")
def library():
    return load_library(langs=("ru",))


@pytest.mark.parametrize(("template_id", "subject", "obj", "expected"), [
    # Коморы, Комор (Лопатин), never «Коморов»
    ("P1376/1", "Q3901", "Q970", "Морони — столица Комор."),
    # a plural family is not «the official language», nor a dialect group «the mother tongue»
    ("P37/3", "Q1028", "Q25448", "Одним из официальных языков Марокко является берберский язык."),
    ("P37/3", "Q1028", "Q36368", "Одним из официальных языков Марокко является курдский язык."),
    ("P103/3", "Q7200", "Q1194795", "Для Александра Пушкина родным языком был магрибский диалект арабского языка."),
    # «artist» (a superclass gold of singers and actors) is not «художник/художница» (a painter), for either
    # gender: the lexicon's short name replaces the P2521 form too
    ("P106/1", "Q34424", "Q483501", "Шакира по роду занятий является деятелем искусств."),
    ("P106/3", "Q34424", "Q483501", "Шакира по профессии является деятелем искусств."),
    ("P106/2", "Q7200", "Q483501", "По профессии Александр Пушкин был деятель искусств."),
])
def test_russian_sentence_reads_right(renderer, library, template_id, subject, obj, expected):
    template = library.get("ru", template_id)
    answer = renderer.render_answer(template, obj, subject)
    assert isinstance(answer, RenderedAnswer), answer
    assert renderer.render_prompt(template, subject).text.replace(ANSWER_MARKER, answer.forms[0]) == expected


@pytest.mark.parametrize(("template_id", "subject", "expected"), [
    ("P36/1", "Q970", "Столица Комор — [Y]."),
    # only the last part of a Chinese name declines, and «Ю» does not: «Ли Куан Ю», never «Ли Куана Ю»
    ("P106/1", "Q131248", "Ли Куан Ю по роду занятий был [Y]."),
])
def test_russian_subject_prompt(renderer, library, template_id, subject, expected):
    assert renderer.render_prompt(library.get("ru", template_id), subject).text == expected


def test_the_dialect_group_declines_as_one_singular_phrase(renderer, library):
    answer = renderer.render_answer(library.get("ru", "P364/2"), "Q1194795", "Q7200")
    assert isinstance(answer, RenderedAnswer), answer
    assert answer.forms[0] == "магрибском диалекте арабского языка"


# Templates about a person hold for the living and the dead (issue 26 second reading): no present habit or
# state of the person («Пушкин работает …», «говорит на …», «исполняет …», «имеет гражданство …»); the
# attribute is the subject instead («Профессия X — Y»), which reads right for Pushkin (d. 1837) and Shakira.
@pytest.mark.parametrize(("template_id", "subject", "expected"), [
    ("P106/3", "Q7200", "Александр Пушкин по профессии был [Y]."),
    ("P136/2", "Q7200", "Творчество Александра Пушкина включает [Y]."),
    ("P136/q1", "Q7200", "К какому музыкальному жанру относится творчество Александра Пушкина?"),
    ("P1303/1", "Q7200", "Инструмент Александра Пушкина — [Y]."),
    ("P1303/2", "Q34424", "Шакира — исполнительница на [Y]."),
    ("P1303/q1", "Q7200", "Каким был музыкальный инструмент Александра Пушкина?"),
    ("P1412/1", "Q7200", "Язык общения Александра Пушкина — [Y]."),
    ("P1412/q1", "Q7200", "Каким был язык общения Александра Пушкина?"),
    ("P27/2", "Q7200", "Александр Пушкин имел гражданство [Y]."),
    ("P27/q1", "Q7200", "Какой была страна гражданства Александра Пушкина?"),
    ("P103/2", "Q7200", "Первый язык Александра Пушкина — [Y]."),
    ("P264/3", "Q7200", "Записи Александра Пушкина выпущены на лейбле [Y]."),
    # neither «гражданин(-ка)» (no such form) nor «имеет гражданство» (a present state)
    ("P27/1", "Q15123969", "Сэм Смит — человек с гражданством [Y]."),
])
def test_person_templates_hold_for_the_dead(renderer, library, template_id, subject, expected):
    assert renderer.render_prompt(library.get("ru", template_id), subject).text == expected


PRESENT_HABIT_RU = ("работает", "говорит", "общается", "владеет", "исполняет", "играет", "имеет гражданство",
                    "выпускает", "является носителем")


def test_no_person_template_states_a_present_habit(library):
    person_predicates = ("P27", "P103", "P106", "P136", "P264", "P1303", "P1412")
    found = [(t.id, t.text) for p in person_predicates for t in library.templates("ru", p)
             if any(w in t.text for w in PRESENT_HABIT_RU)]
    assert found == []


@pytest.mark.parametrize(("label", "forms"), [
    # rule hyphen-compound: a thing's compound unknown to the dictionary declines in its last part only, and
    # its masculine accusative is the nominative
    ("синти-поп", ("синти-попа", "синти-поп", "синти-попом")),
    ("данс-поп", ("данс-попа", "данс-поп", "данс-попом")),  # not «данса-попа»: «данс» is no animate noun here
    ("кантри-рок", ("кантри-рока", "кантри-рок", "кантри-роком")),
    ("нью-эйдж", ("нью-эйджа", "нью-эйдж", "нью-эйджем")),
    ("хип-хоп", ("хип-хопа", "хип-хоп", "хип-хопом")),  # in the dictionary as a whole
])
def test_hyphenated_genres_decline_in_their_last_part(label, forms):
    from factatlas.templates.backend_ru import inflect_russian

    got = tuple(inflect_russian(label, case, None, None, False, animate=False)[0] for case in ("gen", "acc", "ins"))
    assert got == forms


@pytest.mark.parametrize(("label", "forms"), [
    # two animate nouns the dictionary does not know as a whole: both parts decline
    ("автор-исполнитель", ("автора-исполнителя", "автора-исполнителя", "автором-исполнителем")),
    ("поэт-песенник", ("поэта-песенника", "поэта-песенника", "поэтом-песенником")),
])
def test_hyphenated_pairs_of_animate_nouns_decline_in_both_parts(label, forms):
    from factatlas.templates.backend_ru import inflect_russian

    got = [inflect_russian(label, case, None, None, False, animate=True) for case in ("gen", "acc", "ins")]
    assert tuple(g[0] for g in got) == forms
    assert {g[2] for g in got} == {"compound of two nouns, both declined"}
