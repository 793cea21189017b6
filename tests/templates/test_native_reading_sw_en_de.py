"""Exact sentences of the shipped sw, en, de templates after the issue-26 native reading of the three pairs.

Each case renders a real template of the library with real labels, once with an accepted gold and once
with a candidate, and compares the whole sentence: the defect classes the reading found (a class-noun
place after a Swahili verb without «katika», «Nchi ya» before a place that is no country, a repeated
head noun, an English network without «the», German names that take the article or «auf», a plural name
after «des Landes», «spielt Oper») cannot come back in the gold nor in a distractor.
"""

from __future__ import annotations

import pytest

from factatlas.records import Gender
from factatlas.templates.library import load_library
from factatlas.templates.render import RenderedPrompt, Renderer

from .templates_fixtures import entity, filled

PERSON, CITY, COUNTRY, REGION = ("Q5",), ("Q515",), ("Q6256",), ("Q10864048",)
ENTITIES = {e.qid: e for e in (
    entity("Q76", {"sw": "Barack Obama", "de": "Barack Obama"}, PERSON, Gender.MASCULINE),
    entity("Q10833", {"sw": "Johan Cruyff"}, PERSON, Gender.MASCULINE),
    entity("Q23215", {"sw": "Adele"}, PERSON, Gender.FEMININE),
    entity("Q43067", {"de": "Sophia Loren"}, PERSON, Gender.FEMININE),
    entity("Q37001", {"de": "Luciano Pavarotti", "en": "Luciano Pavarotti"}, PERSON, Gender.MASCULINE),
    entity("Q18094", {"sw": "Honolulu"}, CITY),
    entity("Q1249255", {"sw": "Mkoa wa Riyadh"}, REGION),
    entity("Q1492", {"sw": "Barcelona"}, CITY),
    entity("Q60", {"sw": "Jiji la New York"}, CITY),
    entity("Q1490", {"sw": "Tokyo"}, CITY),
    entity("Q84", {"sw": "London"}, CITY),
    entity("Q16557", {"sw": "Dallas"}, CITY),
    entity("Q30", {"sw": "Marekani", "de": "Vereinigte Staaten"}, COUNTRY),
    entity("Q142", {"sw": "Ufaransa", "de": "Frankreich", "en": "France"}, COUNTRY),
    entity("Q37073", {"sw": "muziki wa pop"}, ("Q188451",)),
    entity("Q131272", {"sw": "muziki wa soul"}, ("Q188451",)),
    entity("Q2085", {"en": "Twin Peaks", "de": "Twin Peaks"}, ("Q5398426",)),
    entity("Q169889", {"en": "American Broadcasting Company", "de": "American Broadcasting Company"},
       ("Q1616075",)),
    entity("Q13974", {"en": "NBC", "de": "NBC"}, ("Q1616075",)),
    entity("Q1282", {"de": "Latium"}, ("Q16110",)),
    entity("Q782", {"de": "Hawaii"}, ("Q35657",)),
    entity("Q309104", {"de": "Tibesti"}, ("Q46831",)),
    entity("Q657", {"de": "Tschad"}, COUNTRY),
    entity("Q1016", {"de": "Libyen"}, COUNTRY),
    entity("Q1848", {"de": "Stadt San Marino"}, CITY),
    entity("Q238", {"de": "San Marino"}, COUNTRY),
    entity("Q61", {"de": "Washington, D.C."}, CITY),
    entity("Q90", {"de": "Paris", "en": "Paris"}, CITY),
    entity("Q1344", {"de": "Oper", "en": "opera"}, ("Q188451",)),
    entity("Q11399", {"de": "Rockmusik"}, ("Q188451",)),
    # the second reading (seed 2611)
    entity("Q239", {"en": "City of Brussels"}, ("Q5119", "Q1549591")),
    entity("Q31", {"en": "Belgium"}, COUNTRY),
    entity("Q64", {"en": "Berlin"}, CITY),
    entity("Q9730", {"en": "western classical music"}, ("Q188451",)),
    entity("Q152768", {"de": "Daniel Barenboim"}, PERSON, Gender.MASCULINE),
    entity("Q168407", {"de": "Deutsche Grammophon"}, ("Q18127",)),
    entity("Q557632", {"de": "Decca Records"}, ("Q18127",)),
)}

# (lang, template, subject, gold, candidate, the sentence with the gold, the sentence with the candidate)
SENTENCES = [
    # a place named by a class noun takes «katika» after a verb (never «alizaliwa Mkoa wa Riyadh»)
    ("sw", "P19/1", "Q76", "Q18094", "Q1249255",
     "Barack Obama alizaliwa katika Honolulu.", "Barack Obama alizaliwa katika Mkoa wa Riyadh."),
    ("sw", "P20/3", "Q10833", "Q1492", "Q60",
     "Johan Cruyff alifariki dunia katika Barcelona.", "Johan Cruyff alifariki dunia katika Jiji la New York."),
    # «Nchi ya X» names X as a country: a city is part of its country («Nchi ya Dallas ni Marekani» was wrong)
    ("sw", "P17/3", "Q16557", "Q30", "Q142",
     "Nchi ambayo Dallas ni sehemu yake ni Marekani.", "Nchi ambayo Dallas ni sehemu yake ni Ufaransa."),
    # no class noun before a label with its own («Mji wa Jiji la New York» was wrong)
    ("sw", "P190/1", "Q60", "Q1490", "Q84",
     "Jiji la New York na Tokyo ni miji dada.", "Jiji la New York na London ni miji dada."),
    # no repeated head («ni mwanamuziki wa muziki wa pop» was wrong)
    ("sw", "P136/3", "Q23215", "Q37073", "Q131272",
     "Adele anajulikana kwa muziki wa pop.", "Adele anajulikana kwa muziki wa soul."),
    # a network named by a common noun takes «the»; NBC stays bare
    ("en", "P449/1", "Q2085", "Q169889", "Q13974",
     "Twin Peaks was originally broadcast on the American Broadcasting Company.",
     "Twin Peaks was originally broadcast on NBC."),
    # «im Latium» (the name takes the article), «auf Hawaii» (islands)
    ("de", "P19/1", "Q43067", "Q1282", "Q782",
     "Sophia Loren wurde im Latium geboren.", "Sophia Loren wurde auf Hawaii geboren."),
    # «Das Tibesti» as a subject (a mountain range takes the article)
    ("de", "P17/1", "Q309104", "Q657", "Q1016", "Das Tibesti liegt im Tschad.", "Das Tibesti liegt in Libyen."),
    # a P1376 subject with its article («Stadt San Marino ist die Hauptstadt» was wrong)
    ("de", "P1376/1", "Q1848", "Q238", "Q142",
     "Die Stadt San Marino ist die Hauptstadt San Marinos.", "Die Stadt San Marino ist die Hauptstadt Frankreichs."),
    # no plural name after «des Landes» («die Hauptstadt des Landes Vereinigte Staaten» was wrong), and the
    # genitive, not «von» + article («die Hauptstadt von den Vereinigten Staaten», second reading)
    ("de", "P1376/2", "Q61", "Q30", "Q142",
     "Washington ist Hauptstadt der Vereinigten Staaten.", "Washington ist Hauptstadt Frankreichs."),
    ("de", "P36/2", "Q30", "Q61", "Q90",
     "Die Hauptstadt der Vereinigten Staaten heißt Washington.", "Die Hauptstadt der Vereinigten Staaten heißt Paris."),
    # opera is sung, not played («Luciano Pavarotti spielt Oper» was wrong)
    ("de", "P136/2", "Q37001", "Q1344", "Q11399",
     "Die Musik von Luciano Pavarotti gehört zum Genre Oper.", "Die Musik von Luciano Pavarotti gehört zum Genre Rockmusik."),
    # the second reading (seed 2611): a city named «City of …» takes «the» at the start of the sentence too
    # («City of Brussels is a sister city of Berlin» was wrong)
    ("en", "P190/1", "Q239", "Q64", "Q90",
     "The City of Brussels is a sister city of Berlin.", "The City of Brussels is a sister city of Paris."),
    ("en", "P1376/3", "Q239", "Q31", "Q142",
     "The City of Brussels serves as the capital of Belgium.", "The City of Brussels serves as the capital of France."),
    # «Western» is a proper adjective («… is western classical music» was wrong)
    ("en", "P136/1", "Q37001", "Q9730", "Q1344",
     "The musical genre of Luciano Pavarotti was Western classical music.",
     "The musical genre of Luciano Pavarotti was opera."),
    # a company named by a common noun stands after «Sender» / «Label», never bare after «ist»
    # («Der ursprüngliche Sender von „Twin Peaks“ ist American Broadcasting Company» was wrong)
    ("de", "P449/3", "Q2085", "Q169889", "Q13974",
     "„Twin Peaks“ wurde zuerst vom Sender American Broadcasting Company ausgestrahlt.",
     "„Twin Peaks“ wurde zuerst vom Sender NBC ausgestrahlt."),
    ("de", "P264/2", "Q152768", "Q168407", "Q557632",
     "Die Platten von Daniel Barenboim erschienen beim Label Deutsche Grammophon.",
     "Die Platten von Daniel Barenboim erschienen beim Label Decca Records."),
]

# questions of the second reading: (lang, template, subject, the question as rendered)
QUESTIONS = [
    ("en", "P190/q1", "Q239", "Which city is a sister city of the City of Brussels?"),
    ("en", "P1376/q1", "Q239", "Of which country is the City of Brussels the capital?"),
    # a genre is not played («Welches Musikgenre spielt Luciano Pavarotti? – Oper» was wrong)
    ("de", "P136/q1", "Q37001", "Zu welchem Musikgenre gehört die Musik von Luciano Pavarotti?"),
]


@pytest.fixture(scope="module")
def field() -> tuple[Renderer, object]:
    return Renderer(ENTITIES), load_library(("sw", "en", "de"))


@pytest.mark.parametrize(("lang", "tid", "subject", "gold", "candidate", "with_gold", "with_candidate"), SENTENCES,
                         ids=[f"{c[0]}-{c[1]}" for c in SENTENCES])
def test_shipped_sentence_with_gold_and_candidate(field, lang, tid, subject, gold, candidate, with_gold,
                                                  with_candidate):
    renderer, lib = field
    template = lib.get(lang, tid)
    prompt = renderer.render_prompt(template, subject)
    assert isinstance(prompt, RenderedPrompt), prompt
    assert [filled(renderer, template, subject, obj) for obj in (gold, candidate)] == [with_gold, with_candidate]


@pytest.mark.parametrize(("lang", "tid", "subject", "question"), QUESTIONS, ids=[f"{c[0]}-{c[1]}" for c in QUESTIONS])
def test_shipped_question(field, lang, tid, subject, question):
    renderer, lib = field
    prompt = renderer.render_prompt(lib.get(lang, tid), subject)
    assert isinstance(prompt, RenderedPrompt), prompt
    assert prompt.text == question


def test_swahili_templates_are_all_reviewed():
    """The card lists no sw draft: every template was read (issue 26)."""
    lib = load_library(("sw",))
    assert {t.status for t in lib.templates("sw")} == {"reviewed"}
