"""Place prepositions of countries and regions that have no entity-lexicon entry (templates/data/lexicon/): fr
en/au/aux and de/du/des, it in/nel/negli and del/dello/della, from the name's gender and number
(genders.yaml `type_suffixes` and `lexicon`), never a city's «à» / «a»; an undecidable gender is a counted
failure with its reason. Checked verbatim through the shipped templates (backend_rules.py, gender.py)."""

from __future__ import annotations

import pytest

from factatlas.records import Gender, RenderFailure
from factatlas.templates.library import load_library
from factatlas.templates.render import RenderedAnswer, Renderer
from tests.templates.templates_fixtures import COUNTRY, HUMAN, entity

# P31 classes of regions (genders.yaml `region_classes`); a city that is also a state keeps its city class
REGION_OF_ITALY, REGION_OF_FRANCE, US_STATE, GERMAN_STATE, BIG_CITY = "Q16110", "Q36784", "Q35657", "Q1221156", "Q1549591"

PLACES = {e.qid: e for e in (
    entity("Q7200", {"fr": "Alexandre Pouchkine", "it": "Aleksandr Puškin", "pt": "Alexandre Pushkin"}, (HUMAN,),
           Gender.MASCULINE),
    entity("Q954", {"fr": "Zimbabwe", "it": "Zimbabwe"}, (COUNTRY,)),
    entity("Q114", {"fr": "Kenya", "it": "Kenya"}, (COUNTRY,)),  # it: a lexicon entry without a preposition class
    entity("Q1036", {"fr": "Ouganda", "it": "Uganda"}, (COUNTRY,)),
    entity("Q30", {"fr": "États-Unis", "it": "Stati Uniti d'America"}, (COUNTRY,)),
    entity("Q55", {"fr": "Pays-Bas", "it": "Paesi Bassi"}, (COUNTRY,)),
    entity("Q796", {"fr": "Irak", "it": "Iraq"}, (COUNTRY,)),
    entity("Q1029", {"fr": "Mozambique", "it": "Mozambico"}, (COUNTRY,)),
    entity("Q1009", {"fr": "Cameroun", "it": "Camerun"}, (COUNTRY,)),
    entity("Q145", {"fr": "Royaume-Uni", "it": "Regno Unito"}, (COUNTRY,)),
    entity("Q1005", {"fr": "Gambie", "it": "Gambia"}, (COUNTRY,)),
    entity("Q685", {"fr": "Îles Salomon", "it": "Isole Salomone", "pt": "Ilhas Salomão"}, (COUNTRY,)),
    entity("Q1042", {"pt": "Seicheles"}, (COUNTRY,)),
    entity("Q424", {"pt": "Camboja"}, (COUNTRY,)),
    entity("Q819", {"fr": "Laos", "it": "Laos"}, (COUNTRY,)),
    entity("Q241", {"fr": "Cuba", "it": "Cuba"}, (COUNTRY,)),
    entity("Q801", {"fr": "Israël", "it": "Israele"}, (COUNTRY,)),
    entity("Q790", {"fr": "Haïti"}, (COUNTRY,)),
    entity("Q1210", {"fr": "Lombardie", "it": "Lombardia"}, (REGION_OF_ITALY,)),
    entity("Q1216", {"fr": "Piémont", "it": "Piemonte"}, (REGION_OF_ITALY,)),
    entity("Q1279", {"fr": "Marches", "it": "Marche", "pt": "Marcas"}, (REGION_OF_ITALY,)),
    entity("Q12130", {"fr": "Bretagne", "it": "Bretagna", "pt": "Bretanha"}, (REGION_OF_FRANCE,)),
    entity("Q1261", {"fr": "Colorado", "it": "Colorado", "pt": "Colorado"}, (US_STATE,)),
    entity("Q1055", {"fr": "Hambourg", "it": "Amburgo"}, (BIG_CITY, GERMAN_STATE)),
    # undecidable: a French name in -s that no table lists (a plural? a masculine?), an Italian name in -a
    entity("Q763", {"fr": "Saint-Kitts-et-Nevis"}, (COUNTRY,)),
    entity("Q769", {"it": "Grenada"}, (COUNTRY,)),
)}


@pytest.fixture(scope="module")
def renderer() -> Renderer:
    return Renderer(PLACES)


@pytest.fixture(scope="module")
def library():
    return load_library(langs=("fr", "it", "pt"))


# (lang, template, object, the filler as the sentence reads it); P19/1 «est né [Y.a]», P19/3 «est originaire
# [Y.de]», P20/1 «est mort [Y.a]», P19/2 «a pour lieu de naissance [Y.def]»; it P19/3 «è originario [Y.di]»
CASES = [
    ("fr", "P19/1", "Q954", "au Zimbabwe"),  # masculine although in -e (genders.yaml lexicon)
    ("fr", "P19/3", "Q954", "du Zimbabwe"),
    ("fr", "P19/1", "Q114", "au Kenya"),
    ("fr", "P19/3", "Q114", "du Kenya"),
    ("fr", "P20/1", "Q1036", "en Ouganda"),
    ("fr", "P19/3", "Q1036", "d'Ouganda"),
    ("fr", "P19/1", "Q30", "aux États-Unis"),
    ("fr", "P19/3", "Q30", "des États-Unis"),
    ("fr", "P20/1", "Q55", "aux Pays-Bas"),
    ("fr", "P19/1", "Q796", "en Irak"),  # a vowel-initial masculine takes en, d'
    ("fr", "P19/3", "Q796", "d'Irak"),
    ("fr", "P19/1", "Q1029", "au Mozambique"),
    ("fr", "P19/1", "Q1009", "au Cameroun"),
    ("fr", "P19/3", "Q145", "du Royaume-Uni"),
    ("fr", "P19/1", "Q1005", "en Gambie"),
    ("fr", "P19/3", "Q1005", "de Gambie"),
    ("fr", "P19/1", "Q685", "aux Îles Salomon"),  # «Îles» heads the name: plural
    ("fr", "P19/1", "Q819", "au Laos"),  # a listed singular in -s
    ("fr", "P19/1", "Q241", "à Cuba"),  # listed without article: a city's preposition
    ("fr", "P19/3", "Q241", "de Cuba"),
    ("fr", "P19/1", "Q12130", "en Bretagne"),
    ("fr", "P19/3", "Q12130", "de Bretagne"),
    ("fr", "P19/2", "Q12130", "la Bretagne"),  # a region takes the article
    ("fr", "P19/1", "Q1216", "au Piémont"),
    ("fr", "P19/3", "Q1216", "du Piémont"),
    ("fr", "P19/1", "Q1279", "dans les Marches"),  # a plural region: dans les; a plural country: aux
    ("fr", "P19/3", "Q1279", "des Marches"),
    ("fr", "P19/1", "Q801", "en Israël"),  # a country named bare: en_exceptions, not a city's «à»
    ("fr", "P19/1", "Q790", "en Haïti"),
    ("fr", "P19/1", "Q1261", "au Colorado"),
    ("fr", "P19/1", "Q1055", "à Hambourg"),  # a city that is also a state stays a city
    ("fr", "P19/3", "Q1055", "de Hambourg"),
    ("it", "P19/1", "Q954", "in Zimbabwe"),
    ("it", "P19/3", "Q954", "dello Zimbabwe"),
    ("it", "P19/1", "Q114", "in Kenya"),
    ("it", "P19/3", "Q114", "del Kenya"),
    ("it", "P20/1", "Q1036", "in Uganda"),
    ("it", "P19/3", "Q1036", "dell'Uganda"),
    ("it", "P19/1", "Q30", "negli Stati Uniti d'America"),
    ("it", "P19/3", "Q30", "degli Stati Uniti d'America"),
    ("it", "P20/1", "Q55", "nei Paesi Bassi"),
    ("it", "P19/1", "Q145", "nel Regno Unito"),  # a name headed by a common noun takes the article
    ("it", "P19/3", "Q145", "del Regno Unito"),
    ("it", "P19/1", "Q1029", "in Mozambico"),
    ("it", "P19/3", "Q1029", "del Mozambico"),
    ("it", "P19/3", "Q1005", "del Gambia"),  # masculine against its -ia (genders.yaml lexicon)
    ("it", "P19/1", "Q685", "nelle Isole Salomone"),
    ("it", "P19/1", "Q241", "a Cuba"),
    ("it", "P19/3", "Q241", "di Cuba"),
    ("it", "P19/1", "Q801", "in Israele"),  # in_exceptions: bare, but not an island
    ("it", "P19/3", "Q801", "di Israele"),
    ("it", "P19/1", "Q1210", "in Lombardia"),
    ("it", "P19/3", "Q1210", "della Lombardia"),
    ("it", "P19/2", "Q1210", "è la Lombardia"),
    ("it", "P19/3", "Q1216", "del Piemonte"),
    ("it", "P19/1", "Q1279", "nelle Marche"),
    ("it", "P19/2", "Q1279", "sono le Marche"),
    ("it", "P19/1", "Q1055", "ad Amburgo"),
    # pt composes the article from the gender: plurals and a masculine in -a are listed (genders.yaml lexicon)
    ("pt", "P19/1", "Q685", "nas Ilhas Salomão"),
    ("pt", "P19/3", "Q1042", "das Seicheles"),
    ("pt", "P19/1", "Q424", "no Camboja"),
    # pt regions take the article as countries do (genders.yaml pt `region_classes`), never «em Bretanha»
    ("pt", "P19/1", "Q12130", "na Bretanha"),
    ("pt", "P19/3", "Q1279", "das Marcas"),
    ("pt", "P20/1", "Q1261", "no Colorado"),
]


@pytest.mark.parametrize(("lang", "template_id", "qid", "expected"), CASES)
def test_country_and_region_fillers_read_right(renderer, library, lang, template_id, qid, expected):
    result = renderer.render_answer(library.get(lang, template_id), qid, "Q7200")
    assert isinstance(result, RenderedAnswer), result
    assert result.forms[0] == expected


@pytest.mark.parametrize(("lang", "template_id", "gold", "expected"), [
    ("fr", "P19/1", "Q954", ["au Zimbabwe", "au Kenya", "en Ouganda", "aux États-Unis", "aux Pays-Bas", "en Irak",
                             "au Mozambique", "au Cameroun", "au Royaume-Uni", "en Gambie", "aux Îles Salomon",
                             "au Laos", "à Cuba", "en Israël", "en Haïti"]),
    ("it", "P19/3", "Q30", ["dello Zimbabwe", "del Kenya", "dell'Uganda", "degli Stati Uniti d'America",
                            "dei Paesi Bassi", "dell'Iraq", "del Mozambico", "del Camerun", "del Regno Unito",
                            "del Gambia", "delle Isole Salomone", "del Laos", "di Cuba", "di Israele"]),
])
def test_the_gold_and_every_candidate_of_the_predicate_read_right(renderer, library, lang, template_id, gold,
                                                                    expected):
    """The build renders the gold and each candidate object through the same template: none reads as a city."""
    template = library.get(lang, template_id)
    countries = [q for q, e in PLACES.items() if COUNTRY in e.classes and lang in e.labels and q not in ("Q763", "Q769")]
    forms = [renderer.render_answer(template, q, "Q7200") for q in countries]
    assert [f.forms[0] for f in forms] == expected
    assert renderer.render_answer(template, gold, "Q7200").forms[0] == expected[countries.index(gold)]


@pytest.mark.parametrize(("lang", "template_id", "qid", "reason"), [
    ("fr", "P19/1", "Q763", "gender unknown (suffix:country:-s): cannot choose between 'en', 'au' and 'aux'"),
    ("fr", "P19/3", "Q763", "gender unknown (suffix:country:-s): cannot choose between 'de', 'du' and 'des'"),
    ("fr", "P17/1", "Q763", "gender unknown (suffix:country:-s): cannot choose between 'en', 'au' and 'aux'"),
    ("it", "P19/3", "Q769", "no definite article for gender/number 'unknown'"),
    ("it", "P27/1", "Q769", "no definite article for gender/number 'unknown'"),
])
def test_an_undecidable_gender_is_a_failure_with_its_reason(renderer, library, lang, template_id, qid, reason):
    result = renderer.render_answer(library.get(lang, template_id), qid, "Q7200")
    assert isinstance(result, RenderFailure)
    assert result.reason == "inflection-failed" and result.detail.endswith(reason), result.detail


def test_the_country_rule_is_named_in_the_decisions(renderer, library):
    renderer.render_answer(library.get("fr", "P19/1"), "Q1009", "Q7200")
    renderer.render_answer(library.get("it", "P19/3"), "Q1210", "Q7200")
    rules = {(lang, how, detail) for (lang, _what, how, detail) in renderer.decisions}
    assert ("fr", "rule:country", "Q1009 au Cameroun") in rules
    assert ("it", "rule:region", "Q1210 della Lombardia") in rules


def test_type_suffix_tables_speak_the_known_vocabulary():
    """genders.yaml `type_suffixes`: keyed by a registry type (or `region`, the classes of `region_classes`),
    valued by gender/number words or `unknown`; `region_classes` are QIDs."""
    from factatlas.templates.predicates import PREDICATES
    from tests.templates.test_templates_data import load

    types = {p.object_type for p in PREDICATES.values()} | {p.subject_type for p in PREDICATES.values()} | {"region"}
    seen = 0
    for lang, spec in load("genders.yaml").items():
        for etype, table in spec.get("type_suffixes", {}).items():
            assert etype in types, (lang, etype)
            assert etype != "region" or spec.get("region_classes"), (lang, "a region table without region_classes")
            for suffix, value in table.items():
                assert set(value.split(".")) <= {"masc", "fem", "neut", "pl", "unknown"}, (lang, etype, suffix)
                seen += 1
        assert all(q[:1] == "Q" and q[1:].isdigit() for q in spec.get("region_classes", ())), lang
    assert seen
