"""Ukrainian: pymorphy3 with pymorphy3-dicts-uk behind the protocol (backend_uk.py, on the engine it shares
with Russian), the euphony of у/в and з/із/зі, на for islands, case forms by the standard, and the three
shipped pairs built in Ukrainian with nothing dropped (tests/templates/test_templates_fa.py, slow tier)."""

from __future__ import annotations

import pytest

from factatlas.records import Entity, Gender, Life, RenderFailure, frozen_mapping
from factatlas.templates.backend_registry import make_backend
from factatlas.templates.backend_uk import UkrainianBackend, u_or_v, z_form
from factatlas.templates.library import Template
from factatlas.templates.morphology import Agreement, Features, InflectionRequest
from factatlas.templates.render import Renderer

GEN, LOC, INS = Features(case="gen"), Features(case="loc"), Features(case="ins")
LOC_V, INS_Z = Features(case="loc", preposition="в"), Features(case="ins", preposition="з")
CITY, COUNTRY = InflectionRequest(entity_type="settlement"), InflectionRequest(entity_type="country")
AFTER_VOWEL = InflectionRequest(entity_type="country", before="народився")
AFTER_CONSONANT = InflectionRequest(entity_type="country", before="помер")


def _form(label: str, features: Features, request: InflectionRequest) -> tuple[str, str]:
    result = UkrainianBackend().inflect(label, "uk", features, request)
    return result.form, result.status


@pytest.mark.parametrize(("label", "features", "request_", "form"), [
    # § 82: a city's genitive in -а, a country's or region's in -у; the dictionary lists both for some
    ("Каїр", GEN, CITY, "Каїра"),
    ("Єгипет", GEN, COUNTRY, "Єгипту"),
    ("Туніс", GEN, CITY, "Туніса"),
    ("Туніс", GEN, COUNTRY, "Тунісу"),  # the country is the dictionary's second paradigm of «Туніс»
    ("Судан", GEN, COUNTRY, "Судану"),
    ("Квебек", GEN, InflectionRequest(entity_type="settlement", classes=("Q11828004",)), "Квебеку"),  # a province
    ("Квебек", GEN, InflectionRequest(entity_type="settlement", classes=("Q1549591",)), "Квебека"),  # a city
    ("джаз", GEN, InflectionRequest(entity_type="genre"), "джазу"),
    ("саксофон", GEN, InflectionRequest(entity_type="instrument"), "саксофона"),
    # the locative: -і, -у after к and х, never the personal -ові; г -> з before -і
    ("Каїр", LOC, CITY, "Каїрі"),
    ("Ірак", LOC, COUNTRY, "Іраку"),
    ("Цюрих", LOC, CITY, "Цюриху"),
    ("Гамбург", LOC, CITY, "Гамбурзі"),
    ("Люксембург", LOC, COUNTRY, "Люксембурзі"),
    ("Китай", LOC, COUNTRY, "Китаї"),
    ("Мекка", LOC, CITY, "Мецці"),
    ("Доха", LOC, CITY, "Досі"),
    # adjectives inside a name decline with the head (issue 40 item 3); «-ому», not the poetic «-ім»
    ("Об'єднані Арабські Емірати", LOC, COUNTRY, "Об'єднаних Арабських Еміратах"),
    ("Об'єднані Арабські Емірати", GEN, COUNTRY, "Об'єднаних Арабських Еміратів"),
    ("Сполучені Штати Америки", INS, COUNTRY, "Сполученими Штатами Америки"),
    ("Новий Південний Уельс", LOC, COUNTRY, "Новому Південному Уельсі"),
    ("Саудівська Аравія", GEN, COUNTRY, "Саудівської Аравії"),
    ("Держава Палестина", LOC, COUNTRY, "Державі Палестина"),  # the dictionary's caseless lemma «Держава»
    # indeclinables stay
    ("Торонто", LOC, CITY, "Торонто"),
    ("Сантьяго", GEN, CITY, "Сантьяго"),
    ("Маямі", INS, CITY, "Маямі"),
    ("Мороні", LOC, CITY, "Мороні"),  # not the plural adjective the dictionary also reads
])
def test_ukrainian_case_forms_of_real_names(label, features, request_, form):
    assert _form(label, features, request_)[0] == form


def test_one_dictionary_word_is_exact_and_a_composed_phrase_guessed():
    assert _form("Каїр", LOC, CITY) == ("Каїрі", "exact")
    assert _form("Саудівська Аравія", LOC, COUNTRY)[1] == "guessed"
    assert _form("Каїр", Features(case="nom"), CITY) == ("Каїр", "none")
    assert _form("Toronto", LOC, CITY) == ("Toronto", "none")  # Latin script untouched


@pytest.mark.parametrize(("label", "gender", "form"), [
    ("Барак Обама", Gender.MASCULINE, "Барака Обами"),
    ("Ангела Меркель", Gender.FEMININE, "Ангели Меркель"),  # a woman's surname in a consonant stays
    ("Нагіб Махфуз", Gender.MASCULINE, "Нагіба Махфуза"),  # not the predictor's «Нагобу Махфузу»
    ("Кадім ас-Сахір", Gender.MASCULINE, "Кадіма ас-Сахіра"),  # the article stays, no і/о alternation
    ("Талал Маддах", Gender.MASCULINE, "Талала Маддаха"),  # not the inanimate common noun «маддах»
    ("Насір Шамма", Gender.MASCULINE, "Насіра Шамми"),  # not the abbreviation the dictionary reads
    ("Хаяо Міядзакі", Gender.MASCULINE, "Хаяо Міядзакі"),
    ("Андреа Бочеллі", Gender.MASCULINE, "Андреа Бочеллі"),
    ("Заїд ібн Султан Аль Нахайян", Gender.MASCULINE, "Заїда ібн Султана Аль Нахайяна"),
    ("Умм Кульсум", Gender.FEMININE, "Умм Кульсум"),
    ("Рафаель Надаль", Gender.MASCULINE, "Рафаеля Надаля"),
])
def test_ukrainian_person_names_decline_in_the_persons_gender(label, gender, form):
    request = InflectionRequest(Agreement(gender, "sg", "P21"), "person")
    assert _form(label, GEN, request)[0] == form


@pytest.mark.parametrize(("before", "word", "expected"), [
    ("народився", "Каїрі", "в"),  # after a vowel
    ("помер", "Каїрі", "у"),  # between consonants
    ("помер", "Італії", "в"),  # before a vowel
    ("народився", "Франції", "у"),  # before ф
    ("народився", "Вашингтоні", "у"),  # before в
    ("народився", "Швейцарії", "у"),  # before a consonant + в
    ("", "Каїрі", "у"),  # the start of a sentence, before a consonant
    ("", "Італії", "в"),  # the start of a sentence, before a vowel
    ("Місто,", "Каїрі", "у"),  # a pause
    ("країна", "Об'єднаних", "в"),
])
def test_u_or_v_by_the_sounds_around_it(before, word, expected):
    assert u_or_v(before, word) == expected


@pytest.mark.parametrize(("before", "word", "expected"), [
    ("межує", "Єгиптом", "з"),
    ("межує", "Сирією", "з"),  # after a vowel
    ("кордон", "Сирією", "із"),  # between consonants
    ("межує", "Швейцарією", "зі"),  # з, с, ш, щ + a consonant
    ("межує", "Сполученими", "зі"),
    ("кордон", "Єгиптом", "з"),  # before a vowel
])
def test_z_forms_by_the_sounds_around_it(before, word, expected):
    assert z_form(before, word) == expected


def test_preposition_in_the_filler_with_na_for_islands_and_the_choice_recorded():
    backend = UkrainianBackend()
    assert backend.inflect("Франція", "uk", LOC_V, AFTER_VOWEL).form == "у Франції"
    assert backend.inflect("Італія", "uk", LOC_V, AFTER_CONSONANT).form == "в Італії"
    assert backend.inflect("Каїр", "uk", LOC_V, AFTER_CONSONANT).form == "у Каїрі"
    cuba = backend.inflect("Філіппіни", "uk", LOC_V, AFTER_VOWEL)
    assert (cuba.form, cuba.choice) == ("на Філіппінах", ("lexicon", "на Філіппінах"))
    island = backend.inflect("Кваркозябра", "uk", LOC_V,
                             InflectionRequest(entity_type="place", classes=("Q23442",), before="народився"))
    assert island.form.startswith("на ") and island.choice[0] == "rule:island"
    start = backend.inflect("Єгипет", "uk", LOC_V, InflectionRequest(entity_type="country", sentence_initial=True))
    assert start.form == "В Єгипті"
    assert backend.inflect("Швейцарія", "uk", INS_Z, InflectionRequest(before="межує")).form == "зі Швейцарією"
    unknown = backend.inflect("Каїр", "uk", LOC_V, InflectionRequest(entity_type="settlement", before=None))
    assert unknown.status == "failed" and "depends on the word before it" in unknown.detail


def _entity(qid: str, label: str, gender: Gender = Gender.UNKNOWN, classes: tuple[str, ...] = (),
            life: Life = Life.UNKNOWN) -> Entity:
    return Entity(qid, frozen_mapping({"uk": label}), frozen_mapping(), gender, "P21" if gender else "", classes,
                  life=life)


ENTITIES = {e.qid: e for e in (
    _entity("Q1", "Нагіб Махфуз", Gender.MASCULINE, ("Q5",)),
    _entity("Q2", "Умм Кульсум", Gender.FEMININE, ("Q5",), Life.DEAD),
    _entity("Q85", "Каїр", classes=("Q5119",)),
    _entity("Q142", "Франція", classes=("Q6256",)),
    _entity("Q878", "Об'єднані Арабські Емірати", classes=("Q6256",)),
)}


def _template(text: str, tid: str = "P19/1") -> Template:
    return Template(id=tid, lang="uk", predicate=tid.split("/")[0], kind="cloze", text=text, status="draft",
                    source="human")


def test_a_group_before_the_answer_counts_by_the_letter_its_forms_share():
    renderer = Renderer(ENTITIES)
    same = _template("[X] {X: masc=народився | fem=народилася | other=народився(-лася)} [Y.loc.в].")
    assert renderer.render_answer(same, "Q85", "Q1").forms[0] == "в Каїрі"
    assert renderer.render_answer(same, "Q142", "Q1").forms[0] == "у Франції"
    assert renderer.render_prompt(same, "Q2").text == "Умм Кульсум народилася [Y]."
    differ = _template("[X] {X: masc=помер | fem=померла | other=помер(-ла)} [Y.loc.в].", "P20/1")
    failure = renderer.render_answer(differ, "Q85", "Q1")
    assert isinstance(failure, RenderFailure) and failure.reason == "inflection-failed"
    fixed = _template("[X] {X: masc=закінчив | fem=закінчила | other=закінчив(-ла)} свої дні [Y.loc.в].", "P20/1")
    assert renderer.render_answer(fixed, "Q85", "Q1").forms[0] == "в Каїрі"  # «дні» ends in a vowel


def test_the_subject_takes_its_preposition_at_the_start_of_a_sentence():
    renderer = Renderer(ENTITIES)
    template = _template("[X.loc.в] офіційною мовою є [Y].", "P37/2")
    assert renderer.render_prompt(template, "Q142").text == "У Франції офіційною мовою є [Y]."
    assert renderer.render_prompt(template, "Q878").text == "В Об'єднаних Арабських Еміратах офіційною мовою є [Y]."


def test_life_status_picks_the_past_for_the_dead_and_a_form_true_of_both_otherwise():
    renderer = Renderer(ENTITIES)
    template = _template("[X] {X: masc+dead=був громадянином | fem+dead=була громадянкою | masc=— громадянин | "
                         "fem=— громадянка | other=— громадянин (громадянка)} [Y.gen].", "P27/1")
    assert renderer.render_prompt(template, "Q2").text == "Умм Кульсум була громадянкою [Y]."
    assert renderer.render_prompt(template, "Q1").text == "Нагіб Махфуз — громадянин [Y]."  # life unknown


def test_the_registry_names_the_ukrainian_backend():
    assert make_backend("pymorphy3-uk").name == "pymorphy3-uk"


def test_an_undeclined_adjective_after_a_ukrainian_preposition_is_counted():
    """The population counter's Ukrainian rules (data/case_government.yaml): a nominative adjective right
    after «в/у/на», «з/із/зі», «між», «до»... is counted; the declined phrase, a noun in the locative
    («в мухафазі Каїр»), the feminine locative in -ій and a one-word name are not."""
    from factatlas.records import ANSWER_MARKER
    from factatlas.templates import population as pop

    def row(before: str, gold: str, candidates: tuple[str, ...] = ()) -> dict:
        return {"prompt_id": f"x|uk|{gold}", "lang": "uk", "kind": "cloze", "text": f"{before}{ANSWER_MARKER}.",
                "gold_forms": [[gold]], "candidate_forms": candidates or (gold,)}

    counted = ["з Об'єднані Арабські Емірати", "у Сполучені Штати Америки", "в Нова Зеландія",
               "на Коморські Острови", "із Центральноафриканська Республіка", "з Брюссельський столичний регіон"]
    right = ["з Об'єднаними Арабськими Еміратами", "у Сполучених Штатах Америки", "в Новій Зеландії",
             "на Коморських Островах", "із Центральноафриканської Республіки", "у Південній Кореї",
             "в мухафазі Каїр", "в регіоні Прованс — Альпи — Лазурний Берег", "із міста Туніс", "в Каїрі",
             "з Державою Палестина", "в кантоні Женева"]
    rows = [row("Єгипет межує ", f) for f in counted + right]
    rows.append(row("Умм Кульсум грала на ", "губна гармоніка", ("губній гармоніці",)))  # the text's «на»
    found = pop.undeclined_after_preposition(rows)
    assert sorted(h.found.rsplit(" (", 1)[0] for h in found["uk"]) == sorted(counted + ["на губна гармоніка"])


def test_the_present_tense_counter_sees_every_form_the_living_take_and_none_of_the_others():
    """data/tense.yaml `present: uk` matches each `alive` form of the Ukrainian templates whose tense matters
    and no form said of the dead or the unknown."""
    _present_forms_cover_the_templates("uk")


def _present_forms_cover_the_templates(lang: str, zero_copula: str = "") -> None:
    """Each `alive` form is seen by the language's present pattern, or (with ``zero_copula``, the word the
    past adds to it: hu «volt») it is the present of a zero copula whose group says «<form> volt» otherwise;
    no other form is seen."""
    from factatlas.templates.library import load_library
    from factatlas.templates.population import _data, present_forms
    from factatlas.templates.syntax import Group, parse

    pattern, predicates = present_forms()[lang], set(_data("tense.yaml")["predicates"])
    unseen, other, groups = [], set(), 0
    for t in load_library([lang]).templates(lang):
        for node in parse(t.text).nodes:
            if t.predicate not in predicates or not isinstance(node, Group) or node.slot != "X":
                continue
            forms = {o.value: o.form for o in node.options}
            groups += any("alive" in value.split("+") for value in forms)
            for value, form in forms.items():
                if "alive" not in value.split("+"):
                    other.add(form)
                elif not pattern.search(form) and not (
                        zero_copula and forms.get("other") == f"{form} {zero_copula}".strip()):
                    unseen.append((t.id, form))
    assert groups >= 3, lang  # the language has groups for the living to check
    assert unseen == []
    assert [f for f in other if pattern.search(f)] == []


def test_the_present_has_no_gender_so_a_living_person_of_any_gender_takes_it():
    """«розмовляє» is said of a living person whatever the gender (Sam Smith, non-binary, alive), where the
    past agrees («розмовляв», «розмовляла», «розмовляв(-ла)»): the shipped groups give `alive=` beside
    `masc+alive=` (a gender alone would outrank the life status at equal specificity)."""
    from dataclasses import replace

    from factatlas.templates.library import load_library

    lib = load_library(["uk"])
    smith = _entity("Q1", "Сем Сміт", Gender.UNKNOWN, ("Q5",))
    expected = {
        (Gender.UNKNOWN, Life.ALIVE): ("Якою мовою розмовляє Сем Сміт?", "На якому інструменті грає Сем Сміт?"),
        (Gender.UNKNOWN, Life.DEAD): ("Якою мовою розмовляв(-ла) Сем Сміт?", "На якому інструменті грав(-ла) Сем Сміт?"),
        (Gender.MASCULINE, Life.ALIVE): ("Якою мовою розмовляє Сем Сміт?", "На якому інструменті грає Сем Сміт?"),
        (Gender.FEMININE, Life.DEAD): ("Якою мовою розмовляла Сем Сміт?", "На якому інструменті грала Сем Сміт?"),
    }
    for (gender, life), (speaks, plays) in expected.items():
        renderer = Renderer({"Q1": replace(smith, gender=gender, life=life)})
        assert renderer.render_prompt(lib.get("uk", "P1412/q1"), "Q1").text == speaks
        assert renderer.render_prompt(lib.get("uk", "P1303/q1"), "Q1").text == plays
    renderer = Renderer({"Q1": replace(smith, life=Life.ALIVE)})
    assert renderer.render_prompt(lib.get("uk", "P27/2"), "Q1").text == "Сем Сміт має громадянство [Y]."


@pytest.mark.parametrize("last", ["ru", "uk"])
def test_ukrainian_and_russian_forms_hold_whichever_dictionary_was_loaded_last(last):
    """pymorphy3 gives both dictionaries one tag class, and each load resets the grammemes it knows to that
    dictionary's: with Russian loaded after Ukrainian, `"alt" in tag` raised ValueError for every Ukrainian
    form (a build of uk and ru in one process, or a test order, decided it). The backends ask a tag's
    grammeme set, which never raises."""
    import pymorphy3

    from factatlas.templates import backend_slavic, backend_uk

    backend_slavic.analyzer("uk"), backend_slavic.analyzer("ru")  # the backends' own, loaded first
    pymorphy3.MorphAnalyzer(lang=last)  # the shared tag class now knows only this dictionary's grammemes
    for cached in (backend_uk.inflect_ukrainian, backend_slavic.parse_word):
        cached.cache_clear()  # forms made before the loads would hide what the loads did
    assert _form("Каїр", GEN, CITY) == ("Каїра", "exact")
    assert _form("Гамбург", LOC, CITY) == ("Гамбурзі", "exact")
    assert _form("Об'єднані Арабські Емірати", LOC, COUNTRY)[0] == "Об'єднаних Арабських Еміратах"
    russian = make_backend("pymorphy3")
    assert russian.inflect("Москва", "ru", GEN, CITY).form == "Москвы"
    assert russian.inflect("Нидерланды", "ru", LOC, COUNTRY).form == "Нидерландах"
