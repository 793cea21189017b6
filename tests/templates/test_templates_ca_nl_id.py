"""Catalan, Dutch and Indonesian: the exact forms their grammar needs in the shipped templates.

ca: articles by gender and number, elision (l', d') before a vowel or a silent h but not before a semivowel
i/u or a pronounced h, de/a + el/els fused (del, al, dels, als), a label's own article fused («al Caire»),
which countries take the article (lexicon), generic nouns of divisions and monuments in lower case after it.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from factatlas.records import Gender, Life
from factatlas.templates.backend_rules import RulesBackend
from factatlas.templates.library import load_library
from factatlas.templates.morphology import Agreement, Features, InflectionRequest
from factatlas.templates.render import Renderer
from tests.templates.conftest import PAIRS

from .templates_fixtures import COUNTRY, HUMAN, entity, filled

M, F = Gender.MASCULINE, Gender.FEMININE
CITY, CONTINENT, GOVERNORATE, GENRE, LANGUAGE, MOSQUE, WORK = (
    "Q1549591", "Q5107", "Q204910", "Q188451", "Q1288568", "Q32815", "Q11424")


def req(gender: Gender = Gender.UNKNOWN, number: str = "sg", etype: str = "", source: str = "lexicon:table"):
    return InflectionRequest(Agreement(gender, number, source), etype)


DEF, DEF_DE, DEF_A, DE = (Features(article="def"), Features(article="def", preposition="de"),
                          Features(article="def", preposition="a"), Features(preposition="de"))


@pytest.mark.parametrize(("label", "features", "request_", "form"), [
    # the label's own article fuses with de/a: «del Caire», «al Caire»; la/l' do not fuse
    ("el Caire", DEF_DE, req(M, etype="settlement"), "del Caire"),
    ("el Caire", DEF_A, req(M, etype="settlement"), "al Caire"),
    ("el Caire", DEF, req(M, etype="settlement"), "el Caire"),
    ("la Meca", DEF_A, req(F, etype="settlement"), "a la Meca"),
    ("la Meca", DEF_DE, req(F, etype="settlement"), "de la Meca"),
    # a foreign article is part of the name: never fused, never lower-cased
    ("La Paz", DEF_DE, req(F, etype="settlement"), "de La Paz"),
    ("Los Angeles", DEF_A, req(M, etype="settlement"), "a Los Angeles"),
    # elision before a vowel or a silent h; none before a semivowel i/u or a pronounced h
    ("àrab", DEF, req(M, etype="language"), "l'àrab"),
    ("harmònica", DEF, req(F, etype="instrument"), "l'harmònica"),
    ("hip-hop", DEF, req(M, etype="genre"), "el hip-hop"),
    ("hip-hop", DEF_A, req(M, etype="genre"), "al hip-hop"),
    ("Hongria", DE, req(F, etype="country"), "d'Hongria"),
    ("Houston", DE, req(M, etype="settlement"), "de Houston"),
    ("Hugh Jackman", DE, req(M, etype="person"), "de Hugh Jackman"),
    ("Iàssir Arafat", DE, req(M, etype="person"), "de Iàssir Arafat"),
    ("Umm Kulthum", DE, req(F, etype="person"), "d'Umm Kulthum"),
    ("One Piece", DE, req(M, etype="work"), "de One Piece"),
    # genres and instruments take the article by gender; «música» heads a feminine phrase
    ("música pop", DEF_A, req(F, etype="genre"), "a la música pop"),
    ("rock", DEF_A, req(M, etype="genre"), "al rock"),
    ("guitarra", DEF, req(F, etype="instrument"), "la guitarra"),
    # a division or a monument: the generic noun in lower case after the article; an official or
    # institutional name keeps its capital
    ("Governació d'Alexandria", DEF_A, req(F, etype="place"), "a la governació d'Alexandria"),
    ("Emirat de Dubai", DEF_A, req(M, etype="place"), "a l'emirat de Dubai"),
    ("Estat de Nova York", DEF_DE, req(M, etype="place"), "de l'estat de Nova York"),
    ("Cantó de Berna", DEF_A, req(M, etype="place"), "al cantó de Berna"),
    ("Castell de Windsor", DEF, req(M, etype="place"), "el castell de Windsor"),
    ("Comunitat de Madrid", DEF_A, req(F, etype="place"), "a la Comunitat de Madrid"),
    ("Museu del Prado", DEF, req(M, etype="place"), "el Museu del Prado"),
    ("Òpera de Sydney", DEF, req(F, etype="place"), "l'Òpera de Sydney"),
    ("Barcelona", DEF_A, req(F, etype="settlement"), "a Barcelona"),
    ("Alexandria", DEF_DE, req(F, etype="settlement"), "d'Alexandria"),
])
def test_catalan_rule_forms(label, features, request_, form):
    result = RulesBackend().inflect(label, "ca", features, request_)
    assert result.status != "failed", result.detail
    assert result.form == form


CA = {e.qid: e for e in (
    entity("Q30", {"ca": "Estats Units d'Amèrica"}, (COUNTRY,)),
    entity("Q1028", {"ca": "Marroc"}, (COUNTRY,)),
    entity("Q414", {"ca": "Argentina"}, (COUNTRY,)),
    entity("Q805", {"ca": "Iemen"}, (COUNTRY,)),
    entity("Q928", {"ca": "Filipines"}, (COUNTRY,)),
    entity("Q142", {"ca": "França"}, (COUNTRY,)),
    entity("Q79", {"ca": "Egipte"}, (COUNTRY,)),
    entity("Q237", {"ca": "Ciutat del Vaticà"}, (COUNTRY,)),
    entity("Q18", {"ca": "Amèrica del Sud"}, (CONTINENT,)),
    entity("Q15", {"ca": "Àfrica"}, (CONTINENT,)),
    entity("Q85", {"ca": "el Caire"}, (CITY,)),
    entity("Q35178", {"ca": "Ciutat de Kuwait"}, (CITY,)),
    entity("Q30805", {"ca": "Governació del Caire"}, (GOVERNORATE,)),
    entity("Q25448", {"ca": "llengües amazigues"}, (LANGUAGE,)),
    entity("Q13955", {"ca": "àrab"}, (LANGUAGE,)),
    entity("Q1273", {"ca": "Toscana"}, ("Q16110",)),
    entity("Q183562", {"ca": "Mesquita dels Omeies"}, (MOSQUE,)),
    entity("Q47703", {"ca": "El padrí"}, (WORK,)),
    entity("Q1110560", {"ca": "Umm Kulthum"}, (HUMAN,), F),
    entity("Q3247658", {"ca": "Fairuz"}, (HUMAN,), F),
    entity("Q76", {"ca": "Barack Obama"}, (HUMAN,), M),
)}


@pytest.fixture(scope="module")
def ca():
    return Renderer(CA), load_library(("ca",))


@pytest.mark.parametrize(("tid", "subject", "obj", "sentence"), [
    # countries with the article (lexicon) and without it, fused with a and de
    # Obama is alive: the present (the perfect «ha tingut» is for the unknown)
    ("P27/1", "Q76", "Q30", "Barack Obama té la ciutadania dels Estats Units d'Amèrica."),
    ("P36/1", "Q1028", "Q85", "La capital del Marroc és el Caire."),
    ("P36/2", "Q79", "Q85", "Egipte té la capital al Caire."),
    ("P36/1", "Q805", "Q85", "La capital del Iemen és el Caire."),
    ("P30/1", "Q414", "Q18", "L'Argentina es troba a l'Amèrica del Sud."),
    ("P30/2", "Q1028", "Q15", "El Marroc és un país d'Àfrica."),
    ("P17/1", "Q183562", "Q928", "La mesquita dels Omeies es troba a les Filipines."),
    ("P17/3", "Q85", "Q30", "El país on es troba el Caire són els Estats Units d'Amèrica."),
    ("P47/3", "Q142", "Q237", "França és un país veí de la Ciutat del Vaticà."),
    ("P37/2", "Q1028", "Q13955", "Al Marroc, la llengua oficial és l'àrab."),
    # a family of languages is named by its standard language: never «és les llengües amazigues»
    ("P37/1", "Q1028", "Q25448", "La llengua oficial del Marroc és l'amazic."),
    ("P19/1", "Q1110560", "Q30805", "Umm Kulthum va néixer a la governació del Caire."),
    ("P1376/3", "Q35178", "Q79", "La capital d'Egipte és la ciutat de Kuwait."),
    ("P19/2", "Q1110560", "Q1273", "El lloc de naixement d'Umm Kulthum és la Toscana."),
    # a work title in «»: the preposition stays outside, neither elided nor fused
    ("P495/1", "Q47703", "Q30", "El país d'origen de «El padrí» són els Estats Units d'Amèrica."),
    ("P495/2", "Q47703", "Q1028", "«El padrí» es va produir al Marroc."),
])
def test_catalan_sentences(ca, tid, subject, obj, sentence):
    renderer, lib = ca
    assert filled(renderer, lib.get("ca", tid), subject, obj) == sentence


@pytest.mark.parametrize(("life", "expected"), [
    (Life.ALIVE, "Fairuz és ciutadana del Líban."),
    (Life.DEAD, "Fairuz era ciutadana del Líban."),
    (Life.UNKNOWN, "Fairuz ha estat ciutadana del Líban."),
])
def test_catalan_copula_agrees_with_life_status(life, expected):
    people = dict(CA)
    people["Q3247658"] = replace(CA["Q3247658"], life=life, life_source="P570" if life is Life.DEAD else "test")
    people["Q822"] = entity("Q822", {"ca": "Líban"}, (COUNTRY,))
    renderer = Renderer(people)
    assert filled(renderer, load_library(("ca",)).get("ca", "P27/2"), "Q3247658", "Q822") == expected


@pytest.mark.parametrize(("tid", "life", "expected"), [
    # both verbs agree: the one of the relative clause and the copula that names the answer
    ("P1412/2", Life.DEAD, "Una de les llengües que parlava Fairuz era l'àrab."),
    ("P1412/2", Life.ALIVE, "Una de les llengües que parla Fairuz és l'àrab."),
    ("P1412/2", Life.UNKNOWN, "Una de les llengües que ha parlat Fairuz és l'àrab."),
    # a copula of its own: the present only for the living, the perfect (true of both) for the unknown
    ("P103/1", Life.DEAD, "La llengua materna de Fairuz era l'àrab."),
    ("P103/1", Life.ALIVE, "La llengua materna de Fairuz és l'àrab."),
    ("P103/1", Life.UNKNOWN, "La llengua materna de Fairuz ha estat l'àrab."),
])
def test_catalan_person_sentences_agree_with_life_status(tid, life, expected):
    people = dict(CA)
    people["Q3247658"] = replace(CA["Q3247658"], life=life, life_source="P570" if life is Life.DEAD else "test")
    assert filled(Renderer(people), load_library(("ca",)).get("ca", tid), "Q3247658", "Q13955") == expected


# ---- nl: de/het by gender and number, in/op, adjectives inside names ----------------------------------

N = Gender.NEUTER
IN, DEF_IN = Features(preposition="in"), Features(article="def", preposition="in")


@pytest.mark.parametrize(("label", "features", "request_", "form"), [
    ("gitaar", DEF, req(M, etype="instrument"), "de gitaar"),
    ("drumstel", DEF, req(N, etype="instrument"), "het drumstel"),
    ("Arabisch", DEF, req(N, etype="language"), "het Arabisch"),
    # a place takes the article only with a kind noun before its name (the disambiguator made head)
    ("gouvernement Caïro", DEF_IN, req(N, etype="place", source="lexicon:apposition"), "in het gouvernement Caïro"),
    ("staat New York", DEF, req(M, etype="place", source="lexicon:apposition"), "de staat New York"),
    ("Caïro", DEF_IN, req(N, etype="settlement"), "in Caïro"),
    ("Beieren", DEF_IN, req(N, etype="place"), "in Beieren"),
    # a bare adjective inside a name takes -e after the article, with Dutch spelling; listed names keep it
    ("Arabisch Museum", DEF, req(N, etype="instrument"), "het Arabische Museum"),
    ("Nationaal Park", DEF, req(N, etype="instrument"), "het Nationale Park"),
    ("Verenigd Emiraat", DEF, req(N, etype="instrument"), "het Verenigde Emiraat"),
    ("Verenigd Koninkrijk", DEF, req(N, etype="instrument"), "het Verenigd Koninkrijk"),
    ("Egyptisch Museum", DEF, req(N, etype="instrument"), "het Egyptisch Museum"),
    # foreign words are not adjectives: «de Big Ben», «de Mont Blanc», never «Bige», «Monte»
    ("Big Ben", DEF, req(M, etype="instrument"), "de Big Ben"),
    ("Mont Blanc", DEF, req(M, etype="instrument"), "de Mont Blanc"),
])
def test_dutch_rule_forms(label, features, request_, form):
    result = RulesBackend().inflect(label, "nl", features, request_)
    assert result.status != "failed", result.detail
    assert result.form == form


NL = {e.qid: e for e in (
    entity("Q30", {"nl": "Verenigde Staten"}, (COUNTRY,)),
    entity("Q145", {"nl": "Verenigd Koninkrijk"}, (COUNTRY,)),
    entity("Q928", {"nl": "Filipijnen"}, (COUNTRY,)),
    entity("Q1028", {"nl": "Marokko"}, (COUNTRY,)),
    entity("Q79", {"nl": "Egypte"}, (COUNTRY,)),
    entity("Q782", {"nl": "Hawaï"}, ("Q35657",)),
    entity("Q85", {"nl": "Caïro"}, (CITY,)),
    entity("Q30805", {"nl": "Caïro (gouvernement)"}, (GOVERNORATE,)),
    entity("Q243", {"nl": "Eiffeltoren"}, ("Q12518",)),
    entity("Q25448", {"nl": "Berbertalen"}, (LANGUAGE,)),
    entity("Q13955", {"nl": "Arabisch"}, (LANGUAGE,)),
    entity("Q128309", {"nl": "drumstel"}, ("Q34379",)),
    entity("Q1798603", {"nl": "snaarinstrument"}, ("Q34379",)),
    entity("Q47703", {"nl": "The Godfather"}, (WORK,)),
    entity("Q1110560", {"nl": "Umm Kulthum"}, (HUMAN,), F),
    entity("Q3247658", {"nl": "Fairuz"}, (HUMAN,), F),
)}


@pytest.fixture(scope="module")
def nl():
    return Renderer(NL), load_library(("nl",))


@pytest.mark.parametrize(("tid", "subject", "obj", "sentence"), [
    ("P17/1", "Q243", "Q79", "De Eiffeltoren ligt in Egypte."),
    ("P17/1", "Q85", "Q30", "Caïro ligt in de Verenigde Staten."),
    ("P17/3", "Q85", "Q145", "Het land waar Caïro ligt, is het Verenigd Koninkrijk."),
    ("P37/2", "Q928", "Q13955", "Op de Filipijnen is de officiële taal Arabisch."),
    ("P37/1", "Q1028", "Q25448", "De officiële taal van Marokko is Tamazight."),
    ("P19/1", "Q1110560", "Q782", "Umm Kulthum werd geboren op Hawaï."),
    ("P19/1", "Q1110560", "Q928", "Umm Kulthum werd geboren op de Filipijnen."),
    ("P47/1", "Q30", "Q1028", "De Verenigde Staten grenzen aan Marokko."),
    ("P1303/2", "Q3247658", "Q128309", "Het instrument van Fairuz was het drumstel."),
    ("P1303/1", "Q3247658", "Q1798603", "Fairuz bespeelde een snaarinstrument."),
    ("P103/2", "Q3247658", "Q13955", "Fairuz was moedertaalspreker van het Arabisch."),
    ("P495/1", "Q47703", "Q30", "Het land van herkomst van „The Godfather” is de Verenigde Staten."),
])
def test_dutch_sentences(nl, tid, subject, obj, sentence):
    renderer, lib = nl
    assert filled(renderer, lib.get("nl", tid), subject, obj) == sentence


def test_dutch_division_named_by_its_kind_where_it_competes_with_its_city(nl):
    """«Caïro (gouvernement)» beside the city «Caïro» in one pool: «in het gouvernement Caïro», never
    «in Caïro (gouvernement)» nor a second «in Caïro»."""
    renderer, lib = nl
    answer = renderer.render_answer(lib.get("nl", "P19/1"), "Q30805", "Q1110560")
    assert answer.forms[0] == "in het gouvernement Caïro"


@pytest.mark.parametrize(("life", "expected"), [
    (Life.ALIVE, "Fairuz is staatsburger van Marokko."),
    (Life.DEAD, "Fairuz was staatsburger van Marokko."),
    (Life.UNKNOWN, "Fairuz was staatsburger van Marokko."),
])
def test_dutch_copula_agrees_with_life_status(life, expected):
    people = dict(NL)
    people["Q3247658"] = replace(NL["Q3247658"], life=life, life_source="P570" if life is Life.DEAD else "test")
    assert filled(Renderer(people), load_library(("nl",)).get("nl", "P27/1"), "Q3247658", "Q1028") == expected


@pytest.mark.parametrize(("tid", "life", "expected"), [
    ("P1412/2", Life.DEAD, "Een van de talen die Fairuz sprak, was Arabisch."),
    ("P1412/2", Life.ALIVE, "Een van de talen die Fairuz spreekt, is Arabisch."),
    ("P1412/3", Life.DEAD, "Een taal die door Fairuz gesproken werd, was Arabisch."),
    ("P1412/3", Life.UNKNOWN, "Een taal die door Fairuz gesproken werd, was Arabisch."),
])
def test_dutch_copula_after_a_relative_clause_agrees_too(tid, life, expected):
    people = dict(NL)
    people["Q3247658"] = replace(NL["Q3247658"], life=life, life_source="P570" if life is Life.DEAD else "test")
    assert filled(Renderer(people), load_library(("nl",)).get("nl", tid), "Q3247658", "Q13955") == expected


# ---- id: no articles, no inflection; a head noun of the template is not repeated from the label -------------

ID = {e.qid: e for e in (
    entity("Q35178", {"id": "Kota Kuwait"}, (CITY,)),
    entity("Q85", {"id": "Kairo"}, (CITY,)),
    entity("Q79", {"id": "Mesir"}, (COUNTRY,)),
    entity("Q13955", {"id": "bahasa Arab"}, (LANGUAGE,)),
    entity("Q132689", {"id": "Casablanca (film)"}, (WORK,)),
    entity("Q33999", {"id": "aktor"}, ("Q28640",), female={"id": "aktris"}),
    entity("Q539171", {"id": "Dalida"}, (HUMAN,), F),
)}


@pytest.fixture(scope="module")
def indonesian():
    return Renderer(ID), load_library(("id",))


@pytest.mark.parametrize(("tid", "subject", "obj", "sentence"), [
    # «kota» written by the template before the answer: «kota Kuwait», never «kota Kota Kuwait»
    ("P190/2", "Q85", "Q35178", "Kairo menjalin hubungan kota kembar dengan kota Kuwait."),
    ("P190/2", "Q35178", "Q85", "Kota Kuwait menjalin hubungan kota kembar dengan kota Kairo."),
    # «berbahasa» ends in the label's head: «berbahasa Arab», never «berbahasa bahasa Arab»
    ("P364/3", "Q132689", "Q13955", "“Casablanca” aslinya berbahasa Arab."),
    ("P364/1", "Q132689", "Q13955", "Bahasa asli “Casablanca” adalah bahasa Arab."),
    ("P1376/2", "Q85", "Q79", "Kairo merupakan ibu kota negara Mesir."),
    ("P106/3", "Q539171", "Q33999", "Dalida berprofesi sebagai aktris."),
])
def test_indonesian_sentences(indonesian, tid, subject, obj, sentence):
    renderer, lib = indonesian
    assert filled(renderer, lib.get("id", tid), subject, obj) == sentence


def test_indonesian_answer_keeps_the_full_label_for_lenient_matching(indonesian):
    renderer, lib = indonesian
    answer = renderer.render_answer(lib.get("id", "P190/2"), "Q35178", "Q85")
    assert answer.forms[:2] == ("Kuwait", "Kota Kuwait")


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS)
def test_a_whole_pair_renders_in_catalan_dutch_and_indonesian_with_no_failure(sample_renders, pair):
    """Every fact of the pair, every template: no prompt and no gold dropped in ca, nl or id (the build would
    drop the fact from every language)."""
    from factatlas.templates.batch import render_facts

    _run, result, renderer = sample_renders.curated(pair)
    report = render_facts(result.facts, result.entities, sample_renders.library, ("ca", "nl", "id"), renderer=renderer)
    assert [(d.item, d.reason, d.detail) for d in report.drops] == []
    assert {r["lang"] for r in report.rows} == {"ca", "nl", "id"}
    assert len(report.rows) == 3 * 4 * len(result.facts)  # three cloze templates and a question per fact


def test_every_indonesian_person_template_is_declared_timeless_and_agrees_with_nothing():
    """Indonesian marks no tense: no template about a person carries a life-status group, each says why."""
    from factatlas.templates.predicates import PREDICATES
    from factatlas.templates.syntax import LIFE_VALUES, Group, parse

    person = [t for t in load_library(("id",)).templates("id") if PREDICATES[t.predicate].subject_type == "person"]
    assert len(person) == 9 * 4
    for t in person:
        assert t.timeless, t.id
        assert not any(isinstance(n, Group) and n.atoms & set(LIFE_VALUES) for n in parse(t.text).nodes), t.id


@pytest.mark.parametrize("lang", ["ca", "nl", "id"])
def test_person_templates_of_catalan_dutch_and_indonesian_are_held_to_life_status(lang):
    """Each either agrees with life status or is declared timeless, never both, never neither."""
    from factatlas.templates.predicates import PREDICATES
    from factatlas.templates.syntax import LIFE_VALUES, Group, parse

    for t in load_library((lang,)).templates(lang):
        if PREDICATES[t.predicate].subject_type != "person":
            continue
        agrees = any(isinstance(n, Group) and n.atoms & set(LIFE_VALUES) for n in parse(t.text).nodes)
        assert agrees != bool(t.timeless), (lang, t.id)
