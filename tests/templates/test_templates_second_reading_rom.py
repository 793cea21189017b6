"""fr, es, it: the classes a second native reading of the shipped pairs found (issue 26), checked verbatim
with the shipped templates: statements about a person hold for the living and the dead, and the copula
agrees the way each language wants with a plural country or place."""

from __future__ import annotations

import re

import pytest

from factatlas.records import Gender
from factatlas.templates.library import load_library
from factatlas.templates.render import Renderer
from tests.templates.templates_fixtures import CITY, COUNTRY, HUMAN, INSTRUMENT, LANGUAGE, entity, filled

STATE = "Q35657"

SAMPLE = {e.qid: e for e in (
    # Pushkin died in 1837: nothing may say he works, plays, speaks or holds a contract today
    entity("Q7200", {"fr": "Alexandre Pouchkine", "es": "Aleksandr Pushkin", "it": "Aleksandr Puškin"},
           (HUMAN,), Gender.MASCULINE),
    entity("Q30", {"fr": "États-Unis", "es": "Estados Unidos", "it": "Stati Uniti d'America"}, (COUNTRY,)),
    entity("Q16", {"fr": "Canada", "es": "Canadá", "it": "Canada"}, (COUNTRY,)),
    entity("Q142", {"fr": "France", "es": "Francia", "it": "Francia"}, (COUNTRY,)),
    entity("Q61", {"fr": "Washington"}, (CITY,)),
    entity("Q782", {"fr": "Hawaï", "es": "Hawái", "it": "Hawaii"}, (STATE,)),
    entity("Q99", {"it": "California"}, (STATE,)),
    entity("Q1860", {"fr": "anglais", "es": "inglés", "it": "inglese"}, (LANGUAGE,)),
    entity("Q5994", {"fr": "piano", "es": "piano", "it": "pianoforte"}, (INSTRUMENT,)),
    entity("Q145", {"es": "Reino Unido"}, (COUNTRY,)),
    entity("Q21178405", {"fr": "Sam Smith", "it": "Sam Smith"}, (HUMAN,), Gender.NON_BINARY),
    entity("Q84", {"fr": "Londres", "it": "Londra"}, (CITY,)),
    entity("Q27", {"es": "Irlanda"}, (COUNTRY,)),
    entity("Q878", {"es": "Emiratos Árabes Unidos"}, (COUNTRY,)),
)}

# Person-subject predicates; a cloze or question about them must not state a present state or habit.
PERSON_PREDICATES = ("P27", "P103", "P106", "P136", "P1303", "P1412", "P264")
PRESENT_STATE = {
    "fr": r"\b(travaille|joue|parle|s'exprime|publie|est (un |une )?(citoyen|musicien|locut)\w*|possède|"
          r"sous contrat|est citoyen)\b",
    "es": r"\b(trabaja|toca|habla|domina|se comunica|interpreta|publica|es (un |una )?(ciudadan|músic|hablante)\w*|"
          r"tiene (la ciudadanía|contrato))\b",
    "it": r"\b(lavora|suona|parla|comunica|pubblica|è (un |una )?(cittadin|musicista)\w*|ha la cittadinanza|"
          r"sotto contratto)\b",
}


@pytest.fixture(scope="module")
def renderer() -> Renderer:
    return Renderer(SAMPLE)


@pytest.fixture(scope="module")
def library():
    return load_library(langs=("fr", "es", "it"))


@pytest.mark.parametrize("lang", ["fr", "es", "it"])
def test_no_person_template_states_a_present_state_or_habit(library, lang):
    offenders = [
        f"{t.id}: {t.text}" for predicate in PERSON_PREDICATES for t in library.templates(lang, predicate)
        if re.search(PRESENT_STATE[lang], t.text)
    ]
    assert offenders == []


def _sentence(renderer, library, lang, template_id, subject, obj):
    return filled(renderer, library.get(lang, template_id), subject, obj)


@pytest.mark.parametrize(("lang", "template_id", "obj", "expected"), [
    # a noun phrase or a completed event holds for the living and the dead
    ("fr", "P27/1", "Q142", "La nationalité d'Alexandre Pouchkine était celle de la France."),
    ("fr", "P1412/1", "Q1860", "L'une des langues parlées par Alexandre Pouchkine était l'anglais."),
    ("fr", "P1303/1", "Q5994", "Alexandre Pouchkine a joué du piano."),
    ("fr", "P1303/3", "Q5994", "L'instrument d'Alexandre Pouchkine était le piano."),
    ("es", "P27/1", "Q142", "La nacionalidad de Aleksandr Pushkin era la de Francia."),
    ("es", "P1412/2", "Q1860", "Entre los idiomas hablados por Aleksandr Pushkin figuraba el inglés."),
    ("es", "P1303/1", "Q5994", "Aleksandr Pushkin tocó el piano."),
    ("it", "P27/2", "Q142", "La nazionalità di Aleksandr Puškin era quella della Francia."),
    ("it", "P1412/2", "Q1860", "Tra le lingue parlate da Aleksandr Puškin c'era l'inglese."),
    ("it", "P1303/1", "Q5994", "Aleksandr Puškin ha suonato il pianoforte."),
    # it: the copula agrees with a plural place, as in «il problema sono i soldi»
    ("it", "P19/2", "Q782", "Il luogo di nascita di Aleksandr Puškin sono le Hawaii."),
    ("it", "P20/2", "Q99", "Il luogo di morte di Aleksandr Puškin è la California."),
])
def test_person_sentence_reads_right(renderer, library, lang, template_id, obj, expected):
    assert _sentence(renderer, library, lang, template_id, "Q7200", obj) == expected


@pytest.mark.parametrize(("lang", "template_id", "expected"), [
    ("fr", "P106/2", "La profession d'Alexandre Pouchkine était [Y]."),
    ("fr", "P106/3", "L'occupation d'Alexandre Pouchkine était [Y]."),
    ("fr", "P264/1", "Alexandre Pouchkine a signé avec le label [Y]."),
    ("fr", "P27/q1", "Quel était le pays de citoyenneté d'Alexandre Pouchkine ?"),
    ("es", "P106/3", "La actividad profesional de Aleksandr Pushkin era [Y]."),
    ("es", "P264/q1", "¿Con qué sello discográfico firmó Aleksandr Pushkin?"),
    ("it", "P106/3", "L'attività professionale di Aleksandr Puškin era [Y]."),
    ("it", "P264/1", "Aleksandr Puškin ha firmato con l'etichetta [Y]."),
])
def test_person_prompt_reads_right(renderer, library, lang, template_id, expected):
    assert renderer.render_prompt(library.get(lang, template_id), "Q7200").text == expected


@pytest.mark.parametrize(("template_id", "subject", "obj", "expected"), [
    # fr: «Le pays … sont les États-Unis» is wrong; the dislocation «…, ce sont les États-Unis» agrees
    ("P17/3", "Q61", "Q30", "Le pays où se trouve Washington, ce sont les États-Unis."),
    ("P17/3", "Q61", "Q16", "Le pays où se trouve Washington, c'est le Canada."),
    ("P27/3", "Q7200", "Q30", "Le pays de citoyenneté d'Alexandre Pouchkine était les États-Unis."),
    # one country named in the plural is still «un pays voisin», not «des pays voisins»
    ("P47/3", "Q30", "Q16", "Les États-Unis sont un pays voisin du Canada."),
])
def test_fr_copula_with_a_plural_country(renderer, library, template_id, subject, obj, expected):
    assert _sentence(renderer, library, "fr", template_id, subject, obj) == expected


@pytest.mark.parametrize(("template_id", "subject", "obj", "expected"), [
    # es: «Reino Unido comparte frontera…», «Emiratos Árabes Unidos tiene…» are headline Spanish; in running
    # text the name takes its article and a plural name a plural verb (RAE, DPD)
    ("P47/1", "Q145", "Q27", "El Reino Unido comparte frontera con Irlanda."),
    ("P530/3", "Q878", "Q142", "Los Emiratos Árabes Unidos tienen lazos diplomáticos con Francia."),
    ("P530/1", "Q27", "Q145", "Irlanda mantiene relaciones diplomáticas con el Reino Unido."),
])
def test_es_country_subject_takes_its_article(renderer, library, template_id, subject, obj, expected):
    assert _sentence(renderer, library, "es", template_id, subject, obj) == expected


def test_es_country_question_takes_its_article(renderer, library):
    prompt = renderer.render_prompt(library.get("es", "P530/q1"), "Q145").text
    assert prompt == "¿Con qué país mantiene relaciones diplomáticas el Reino Unido?"


@pytest.mark.parametrize(("lang", "template_id", "expected"), [
    # a non-binary subject gets a verb that does not agree, not the notation «né(e)» / «nato/a»
    ("fr", "P19/1", "Sam Smith a vu le jour à Londres."),
    ("it", "P19/1", "Sam Smith ha visto la luce a Londra."),
    ("it", "P19/3", "Sam Smith è una persona originaria di Londra."),
])
def test_non_binary_subject_reads_right(renderer, library, lang, template_id, expected):
    assert _sentence(renderer, library, lang, template_id, "Q21178405", "Q84") == expected


@pytest.mark.parametrize(("lang", "template_id", "subject", "expected"), [
    ("fr", "P19/q1", "Q21178405", "Où a vu le jour Sam Smith ?"),
    ("it", "P19/q1", "Q21178405", "Dove ha visto la luce Sam Smith?"),
    ("fr", "P19/q1", "Q7200", "Où est né Alexandre Pouchkine ?"),
    ("it", "P19/1", "Q7200", "Aleksandr Puškin è nato [Y]."),
])
def test_birth_question_by_gender(renderer, library, lang, template_id, subject, expected):
    assert renderer.render_prompt(library.get(lang, template_id), subject).text == expected
