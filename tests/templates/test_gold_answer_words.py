"""Words that depend on the answer are rendered per candidate (issue 12, part 2), over real renders.

ru «в»/«на» and «во»/«со», the copula that agrees with a plural answer (de fr es pt it), and German
names headed by a common noun (die Volksrepublik China, des Königreichs der Niederlande): each
candidate is scored in the sentence that is grammatical for it, the gold filler is that form, and the
prompt outside the answer is the same for every candidate.
"""

from __future__ import annotations

import pytest

from factatlas.records import ANSWER_MARKER
from factatlas.templates.backend_ru import place_preposition, preposition_allomorph
from factatlas.templates.syntax import parse

LANGS = ("ru", "de", "fr", "es", "pt", "it")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def renders(sample_renders):
    sentences, renderers = {}, {}
    for pair in ("arab-west", "asia-west"):
        for r in sample_renders.rows(pair, LANGS):
            if r["kind"] == "cloze":
                sentences[r["prompt_id"]] = r["text"].replace(ANSWER_MARKER, r["gold_forms"][0][0])
        renderers[pair] = sample_renders.curated(pair)[2]
    return sentences, renderers, sample_renders.library


def _check(renders, expected: dict[str, str]) -> None:
    got = renders[0]
    assert {p: got.get(p) for p in expected} == expected


def test_russian_prepositions_follow_the_place(renders):
    _check(renders, {
        "west:P17:Q90|ru|P17/1": "Париж находится во Франции.",  # во before в/ф + consonant
        "asia:P17:Q1858|ru|P17/1": "Ханой находится во Вьетнаме.",
        "west:P47:Q38|ru|P47/2": "Италия граничит со Швейцарией.",  # со before с/з/ш/ж + consonant
        "arab:P17:Q3901|ru|P17/1": "Морони находится на Коморах.",  # на: island states (lexicon)
        "asia:P17:Q1867|ru|P17/1": "Тайбэй находится на Тайване.",
        "asia:P17:Q1461|ru|P17/1": "Манила находится на Филиппинах.",
        "west:P37:Q142|ru|P37/2": "Во Франции официальным языком является французский язык.",  # subject slot
    })


def test_the_copula_agrees_with_a_plural_answer(renders):
    _check(renders, {
        "west:P495:Q79784|de|P495/1": "Das Herkunftsland von „Friends“ sind die Vereinigten Staaten.",
        "west:P495:Q23733|fr|P495/1": "Le pays d'origine de Seinfeld, ce sont les États-Unis.",  # fr: only «ce» agrees
        "west:P495:Q23733|es|P495/1": "El país de origen de Seinfeld son los Estados Unidos.",
        "west:P495:Q23733|pt|P495/1": "O país de origem de Seinfeld são os Estados Unidos.",
        "west:P495:Q23733|it|P495/1": "Il paese di origine di Seinfeld sono gli Stati Uniti d'America.",
        "arab:P17:Q3901|fr|P17/3": "Le pays où se trouve Moroni, ce sont les Comores.",
    })


def test_german_names_headed_by_a_common_noun_take_their_article(renders):
    _check(renders, {
        "asia:P47:Q711|de|P47/2": "Die Mongolei grenzt an die Volksrepublik China.",
        "arab:P530:Q842|de|P530/1": "Oman unterhält diplomatische Beziehungen zur Volksrepublik China.",
        "west:P27:Q17163|de|P27/2": "Johan Cruyff war Staatsangehöriger des Königreichs der Niederlande.",
    })


@pytest.mark.parametrize(("lang", "tid", "subject", "prompt", "fillers"), [
    ("ru", "P17/1", "Q3901", "Морони находится [Y].",
     {"Q970": "на Коморах", "Q142": "во Франции", "Q79": "в Египте", "Q55": "в Нидерландах"}),
    ("fr", "P17/3", "Q3901", "Le pays où se trouve Moroni, [Y].",
     {"Q970": "ce sont les Comores", "Q142": "c'est la France", "Q79": "c'est l'Égypte",
      "Q30": "ce sont les États-Unis"}),
    ("de", "P495/1", "Q79784", "Das Herkunftsland von „Friends“ [Y].",
     {"Q30": "sind die Vereinigten Staaten", "Q142": "ist Frankreich", "Q55": "sind die Niederlande"}),
    ("de", "P47/1", "Q38", "Italien hat eine gemeinsame Grenze mit [Y].",
     {"Q237": "der Vatikanstadt", "Q148": "der Volksrepublik China", "Q29999": "dem Königreich der Niederlande",
      "Q30": "den Vereinigten Staaten", "Q39": "der Schweiz"}),
])
def test_each_candidate_gets_the_words_that_are_grammatical_for_it(renders, lang, tid, subject, prompt, fillers):
    _, renderers, library = renders
    renderer, template = renderers["arab-west"], library.get(lang, tid)
    assert renderer.render_prompt(template, subject).text == prompt  # one text for every candidate
    assert {q: renderer.render_answer(template, q, subject).forms[0] for q in fillers} == fillers


def test_every_preposition_choice_is_in_the_audit(renders):
    from factatlas.templates.audit import audit_renderer

    _, renderers, _ = renders
    ru = audit_renderer(renderers["asia-west"])["ru"].decisions
    assert ru[("preposition в", "lexicon")] >= 3  # Тайвань, Филиппины, Коморы ...
    assert ru[("preposition в", "allomorph")] >= 2  # во Франции, во Вьетнаме
    assert ru[("preposition в", "default")] >= 10
    assert ru[("preposition с", "allomorph")] >= 1  # со Швейцарией
    fr = audit_renderer(renderers["arab-west"])["fr"].decisions
    assert fr[("answer agreement", "lexicon:table")] >= 1  # les États-Unis: plural from the lexicon


@pytest.mark.parametrize(("label", "classes", "expected"), [
    ("Куба", (), ("на", "lexicon")),
    ("Исландия", ("Q112099",), ("в", "default")),  # an island state that takes в
    ("Остров Пасхи", ("Q23442",), ("на", "rule:island")),
    ("Республика Куба", (), ("в", "default")),  # headed by a common noun
])
def test_place_preposition_lexicon_then_island_rule(label, classes, expected):
    assert place_preposition(label, classes) == expected


@pytest.mark.parametrize(("preposition", "word", "expected"), [
    ("в", "Франции", "во"), ("в", "Вьетнаме", "во"), ("в", "Венгрии", "в"), ("в", "Германии", "в"),
    ("с", "Швейцарией", "со"), ("с", "Словакией", "со"), ("с", "Сербией", "с"), ("с", "Египтом", "с"),
    ("на", "Кубе", "на"),
])
def test_preposition_allomorphs(preposition, word, expected):
    assert preposition_allomorph(preposition, word) == expected


def test_the_answer_span_takes_only_groups_next_to_the_answer():
    assert parse("Le pays de [X] {Y: pl=sont | other=est} [Y.def].").answer_span() == (3, 5)
    assert parse("[X] est né à [Y], {Y: masc=un | fem=une} pays.").answer_span() == (2, 2)
    assert parse("Quel est le pays de [X] ?").answer_span() is None
