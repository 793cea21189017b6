"""en, de, ar, hi, sw templates about people agree with the subject's life status (issues 26 and 40).

A template that says a present state or habit of its subject («Frank Sinatra speaks English», «Jimi Hendrix
spielt Gitarre», «يعزف جيمي هندريكس على القيثارة», «… गिटार बजाते हैं», «Édith Piaf anafanya kazi kama
mwimbaji») is wrong for the many subjects who have died; so is a present copula («Umm Kulthum is a native
speaker of Arabic», «ist von Beruf», «ni raia wa», «… हैं»). The templates say a completed event, or agree
with life status ({X: alive=is | other=was}): the present for the living, the past for the dead and for
those whose status is unknown (true of both). Each case renders a real template of the library for a
subject who has died (P570), then for the same subject alive and unknown, with real labels, and compares the
whole sentence (cloze with the gold filled in, or question). Arabic nominal sentences carry no tense
(declared ``timeless``) and read the same in all three.
"""

from __future__ import annotations

import dataclasses

import pytest

from factatlas.records import Entity, Gender, Life
from factatlas.templates.library import load_library
from factatlas.templates.render import RenderedPrompt, Renderer

from .templates_fixtures import entity, filled

_G = {"masc": Gender.MASCULINE, "fem": Gender.FEMININE, "unknown": Gender.UNKNOWN}


def _e(qid: str, labels: dict[str, str], classes: tuple[str, ...], gender: str = "unknown",
       female: dict[str, str] | None = None) -> Entity:
    return entity(qid, labels, classes, _G[gender], female=female)


# labels, P31 classes, P21 and P2521 as in the embedded Wikidata sample
ENTITIES = {e.qid: e for e in (
    _e("Q40912", {"en": "Frank Sinatra", "de": "Frank Sinatra", "ar": "فرانك سيناترا", "hi": "फ़्रैंक सिनात्रा",
                  "sw": "Frank Sinatra"}, ("Q5",), "masc"),  # d. 1998
    _e("Q1631", {"en": "Édith Piaf", "de": "Édith Piaf", "ar": "إديث بياف", "hi": "एडिथ पियाफ़", "sw": "Édith Piaf"},
       ("Q5",), "fem"),  # d. 1963
    _e("Q5928", {"en": "Jimi Hendrix", "de": "Jimi Hendrix", "ar": "جيمي هندريكس", "hi": "जिमी हेंड्रिक्स",
                 "sw": "Jimi Hendrix"}, ("Q5",), "masc"),  # d. 1970
    _e("Q1110560", {"en": "Umm Kulthum", "de": "Umm Kulthum", "ar": "أم كلثوم", "hi": "उम्म कुलसुम", "sw": "Umm Kulthum"},
       ("Q5",), "fem"),  # d. 1975
    _e("Q1860", {"en": "English", "de": "Englisch", "ar": "الإنجليزية", "hi": "अंग्रेज़ी भाषा", "sw": "Kiingereza"},
       ("Q1288568",)),
    _e("Q150", {"en": "French", "de": "Französisch", "ar": "الفرنسية", "hi": "फ़्रान्सीसी भाषा", "sw": "Kifaransa"},
       ("Q1288568",)),
    _e("Q13955", {"en": "Arabic", "de": "Arabisch", "ar": "العربية", "hi": "अरबी भाषा", "sw": "Kiarabu"}, ("Q1288568",)),
    _e("Q6607", {"en": "guitar", "de": "Gitarre", "ar": "قيثارة", "hi": "गिटार", "sw": "gitaa"}, ("Q34379",)),
    _e("Q177220", {"en": "singer", "de": "Sänger", "ar": "مغني", "hi": "गायक", "sw": "mwimbaji"}, ("Q28640",),
       female={"de": "Sängerin", "ar": "مغنية", "hi": "गायिका"}),
    _e("Q183387", {"en": "Columbia Records", "de": "Columbia Records", "ar": "كولومبيا ريكوردز",
                   "hi": "कोलंबिया रिकॉर्ड्स", "sw": "Columbia Records"}, ("Q18127",)),
    _e("Q155152", {"en": "Polydor Records", "de": "Polydor Records", "ar": "بوليدور ريكوردز",
                   "hi": "पॉलीडोर रिकॉर्ड्स", "sw": "Polydor Records"}, ("Q18127",)),
    _e("Q30", {"en": "United States of America", "de": "Vereinigte Staaten", "ar": "الولايات المتحدة",
               "hi": "संयुक्त राज्य अमेरिका", "sw": "Marekani"}, ("Q6256", "Q3624078")),
    _e("Q142", {"en": "France", "de": "Frankreich", "ar": "فرنسا", "hi": "फ़्रान्स", "sw": "Ufaransa"},
       ("Q6256", "Q3624078")),
    _e("Q79", {"en": "Egypt", "de": "Ägypten", "ar": "مصر", "hi": "मिस्र", "sw": "Misri"}, ("Q6256", "Q3624078")),
    _e("Q1062400", {"en": "chanson", "de": "Chanson", "ar": "شانسون", "hi": "शांसों", "sw": "chanson"}, ("Q188451",)),
    _e("Q624044", {"en": "Arabic music", "de": "Arabische Musik", "ar": "موسيقى عربية", "hi": "अरबी संगीत",
                   "sw": "muziki wa Kiarabu"}, ("Q188451",)),
)}

# (lang, template, subject who has died, gold or None for a question, the sentence as rendered); the old
# wording of each is in the comment where it read as a present state or habit
CASES = [
    ("en", "P27/2", "Q40912", "Q30", "Frank Sinatra was a national of the United States of America."),  # holds the citizenship
    ("en", "P106/3", "Q1631", "Q177220", "Édith Piaf was known as a professional singer."),  # works as
    ("en", "P136/2", "Q1631", "Q1062400", "Édith Piaf was known for chanson."),  # performs
    ("en", "P136/q1", "Q1631", None, "What genre of music was Édith Piaf known for?"),
    ("en", "P264/1", "Q40912", "Q183387", "Frank Sinatra signed with the record label Columbia Records."),  # is signed to
    ("en", "P264/3", "Q40912", "Q183387", "Frank Sinatra released records on the label Columbia Records."),
    ("en", "P264/q1", "Q40912", None, "Which record label did Frank Sinatra sign with?"),
    ("en", "P1303/1", "Q5928", "Q6607", "Jimi Hendrix was known for playing the guitar."),  # plays the guitar
    ("en", "P1303/q1", "Q5928", None, "What instrument was Jimi Hendrix known for playing?"),
    ("en", "P1412/1", "Q40912", "Q1860", "Frank Sinatra was a speaker of English."),  # speaks English
    ("en", "P1412/2", "Q40912", "Q1860", "One of the languages spoken by Frank Sinatra was English."),  # is fluent in
    ("en", "P1412/3", "Q40912", "Q1860", "A language used by Frank Sinatra was English."),  # communicates in
    ("en", "P1412/q1", "Q40912", None, "What language was Frank Sinatra a speaker of?"),
    ("de", "P27/2", "Q40912", "Q30", "Frank Sinatra war Staatsangehöriger der Vereinigten Staaten."),  # besitzt die …
    ("de", "P27/3", "Q40912", "Q30", "Frank Sinatra besaß die Staatsbürgerschaft der Vereinigten Staaten."),
    ("de", "P27/q1", "Q40912", None, "Welchen Landes Staatsbürger war Frank Sinatra?"),
    ("de", "P103/2", "Q1631", "Q150", "Édith Piaf wuchs mit Französisch als Muttersprache auf."),  # spricht als …
    ("de", "P106/3", "Q1631", "Q177220", "Édith Piaf war als Sängerin bekannt."),  # arbeitet als
    ("de", "P136/2", "Q1631", "Q1062400", "Die Musik von Édith Piaf gehört zum Genre Chanson."),  # ist … tätig
    ("de", "P136/q1", "Q1631", None, "Zu welchem Musikgenre gehört die Musik von Édith Piaf?"),
    ("de", "P264/1", "Q40912", "Q183387",
     "Frank Sinatra unterschrieb einen Vertrag beim Plattenlabel Columbia Records."),  # steht unter Vertrag
    ("de", "P264/2", "Q40912", "Q183387", "Die Platten von Frank Sinatra erschienen beim Label Columbia Records."),
    ("de", "P264/3", "Q40912", "Q183387", "Frank Sinatra nahm Platten für das Label Columbia Records auf."),
    ("de", "P264/q1", "Q40912", None, "Bei welchem Plattenlabel unterschrieb Frank Sinatra einen Vertrag?"),
    ("de", "P1303/1", "Q5928", "Q6607", "Jimi Hendrix war dafür bekannt, Gitarre zu spielen."),  # spielt Gitarre
    ("de", "P1303/2", "Q5928", "Q6607", "Das Instrument von Jimi Hendrix war die Gitarre."),
    ("de", "P1303/q1", "Q5928", None, "Für welches Instrument war Jimi Hendrix bekannt?"),
    ("de", "P1412/1", "Q40912", "Q1860", "Die von Frank Sinatra gesprochene Sprache war Englisch."),  # spricht
    ("de", "P1412/2", "Q40912", "Q1860", "Eine der Sprachen von Frank Sinatra war Englisch."),
    ("de", "P1412/3", "Q40912", "Q1860", "Zu den Sprachen von Frank Sinatra zählte Englisch."),  # kommuniziert
    ("de", "P1412/q1", "Q40912", None, "Was war die Sprache von Frank Sinatra?"),
    ("ar", "P27/2", "Q40912", "Q30", "فرانك سيناترا حامل جنسية الولايات المتحدة."),  # يحمل
    ("ar", "P27/q1", "Q40912", None, "ما البلد الذي فرانك سيناترا حامل جنسيته؟"),
    ("ar", "P106/3", "Q1631", "Q177220", "إديث بياف معروفة كمغنية."),  # تعمل
    ("ar", "P136/1", "Q1631", "Q1062400", "نوع موسيقى إديث بياف هو الشانسون."),  # الذي تؤديه
    ("ar", "P136/2", "Q1631", "Q1062400", "إديث بياف معروفة بالشانسون."),  # تؤدي
    ("ar", "P136/q1", "Q1631", None, "ما نوع موسيقى إديث بياف؟"),
    ("ar", "P264/1", "Q40912", "Q183387", "وقّع فرانك سيناترا عقدًا مع شركة التسجيلات كولومبيا ريكوردز."),  # يرتبط
    ("ar", "P264/2", "Q40912", "Q183387", "شركة تسجيلات فرانك سيناترا هي كولومبيا ريكوردز."),  # يتعامل
    ("ar", "P264/3", "Q40912", "Q183387", "أصدر فرانك سيناترا أعماله عبر شركة التسجيلات كولومبيا ريكوردز."),  # يصدر
    ("ar", "P264/q1", "Q40912", None, "مع أي شركة تسجيلات وقّع فرانك سيناترا عقدًا؟"),
    ("ar", "P1303/1", "Q5928", "Q6607", "جيمي هندريكس عازف القيثارة."),  # يعزف
    ("ar", "P1303/2", "Q5928", "Q6607", "آلة جيمي هندريكس الموسيقية هي القيثارة."),
    ("ar", "P1303/q1", "Q5928", None, "ما آلة جيمي هندريكس الموسيقية؟"),
    ("ar", "P1412/1", "Q1110560", "Q13955", "أم كلثوم متحدثة بالعربية."),  # تتحدث
    ("ar", "P1412/2", "Q1110560", "Q13955", "إحدى لغات أم كلثوم هي العربية."),  # تجيد
    ("ar", "P1412/3", "Q1110560", "Q13955", "لغة تواصل أم كلثوم هي العربية."),  # تتواصل
    ("ar", "P1412/q1", "Q1110560", None, "ما لغة أم كلثوم؟"),
    ("hi", "P103/2", "Q1631", "Q150", "एडिथ पियाफ़ फ़्रान्सीसी भाषा के मूल वक्ता थीं।"),  # जन्म से … बोलती हैं
    ("hi", "P106/3", "Q1631", "Q177220", "एडिथ पियाफ़ गायिका के रूप में जानी जाती थीं।"),  # काम करती हैं
    ("hi", "P136/2", "Q1631", "Q1062400", "एडिथ पियाफ़ शांसों के लिए जानी जाती थीं।"),  # प्रस्तुत करती हैं
    ("hi", "P264/3", "Q40912", "Q183387", "फ़्रैंक सिनात्रा ने अपने रिकॉर्ड कोलंबिया रिकॉर्ड्स लेबल से जारी किए।"),  # जारी करते हैं
    ("hi", "P1303/1", "Q5928", "Q6607", "जिमी हेंड्रिक्स गिटार वादक थे।"),  # बजाते हैं
    ("hi", "P1303/2", "Q5928", "Q6607", "जिमी हेंड्रिक्स का वाद्ययंत्र गिटार था।"),
    ("hi", "P1303/q1", "Q5928", None, "जिमी हेंड्रिक्स का वाद्ययंत्र कौन सा था?"),
    ("hi", "P1412/1", "Q40912", "Q1860", "फ़्रैंक सिनात्रा की एक भाषा अंग्रेज़ी थी।"),  # बोलते हैं
    ("hi", "P1412/2", "Q40912", "Q1860", "फ़्रैंक सिनात्रा द्वारा बोली जाने वाली भाषा अंग्रेज़ी थी।"),
    ("hi", "P1412/3", "Q40912", "Q1860", "फ़्रैंक सिनात्रा अंग्रेज़ी भाषा के वक्ता थे।"),  # बातचीत करते हैं
    ("hi", "P1412/q1", "Q40912", None, "फ़्रैंक सिनात्रा की भाषा कौन सी थी?"),
    ("sw", "P27/2", "Q40912", "Q30", "Frank Sinatra alikuwa mwenye uraia wa Marekani."),  # ana uraia
    ("sw", "P106/3", "Q1631", "Q177220", "Édith Piaf alijulikana kama mwimbaji."),  # anafanya kazi kama
    ("sw", "P136/2", "Q1631", "Q1062400", "Aina ya muziki wa Édith Piaf ilikuwa chanson."),  # anayofanya
    ("sw", "P264/3", "Q40912", "Q183387", "Frank Sinatra alitoa rekodi zake kupitia lebo ya Columbia Records."),  # hutoa
    ("sw", "P1303/1", "Q5928", "Q6607", "Jimi Hendrix alikuwa mpiga gitaa."),  # anapiga
    ("sw", "P1303/2", "Q5928", "Q6607", "Ala ya muziki ya Jimi Hendrix ilikuwa gitaa."),  # anayopiga
    ("sw", "P1303/q1", "Q5928", None, "Ala ya muziki ya Jimi Hendrix ilikuwa ipi?"),
    ("sw", "P1412/1", "Q40912", "Q1860", "Frank Sinatra alikuwa mzungumzaji wa Kiingereza."),  # anazungumza
    ("sw", "P1412/2", "Q40912", "Q1860", "Mojawapo ya lugha za Frank Sinatra ilikuwa Kiingereza."),
    ("sw", "P1412/3", "Q40912", "Q1860", "Lugha ya mawasiliano ya Frank Sinatra ilikuwa Kiingereza."),  # huwasiliana
    ("sw", "P1412/q1", "Q40912", None, "Lugha ya Frank Sinatra ilikuwa ipi?"),
]


def _living(life: Life) -> dict[str, Entity]:
    """The sample's entities with every person's life status set to ``life``."""
    return {q: dataclasses.replace(e, life=life) if "Q5" in e.classes else e for q, e in ENTITIES.items()}


@pytest.fixture(scope="module")
def field() -> tuple[Renderer, object]:
    return Renderer(_living(Life.DEAD)), load_library(("en", "de", "ar", "hi", "sw"))


@pytest.mark.parametrize(("lang", "tid", "subject", "gold", "sentence"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_person_templates_hold_for_a_subject_who_has_died(field, lang, tid, subject, gold, sentence):
    renderer, lib = field
    template = lib.get(lang, tid)
    prompt = renderer.render_prompt(template, subject)
    assert isinstance(prompt, RenderedPrompt), prompt
    if gold is None:
        assert prompt.text == sentence
        return
    assert filled(renderer, template, subject, gold) == sentence


# the same subjects alive (the present) and of unknown life status (the past: true of the dead and the living)
LIVING = [
    ("en", "P27/2", "Q40912", "Q30",
     "Frank Sinatra is a national of the United States of America.",
     "Frank Sinatra was a national of the United States of America."),
    ("en", "P106/3", "Q1631", "Q177220",
     "Édith Piaf is known as a professional singer.",
     "Édith Piaf was known as a professional singer."),
    ("en", "P1303/1", "Q5928", "Q6607",
     "Jimi Hendrix is known for playing the guitar.",
     "Jimi Hendrix was known for playing the guitar."),
    ("en", "P1412/q1", "Q40912", None,
     "What language is Frank Sinatra a speaker of?",
     "What language was Frank Sinatra a speaker of?"),
    ("de", "P27/2", "Q40912", "Q30",
     "Frank Sinatra ist Staatsangehöriger der Vereinigten Staaten.",
     "Frank Sinatra war Staatsangehöriger der Vereinigten Staaten."),
    ("de", "P106/3", "Q1631", "Q177220",
     "Édith Piaf ist als Sängerin bekannt.",
     "Édith Piaf war als Sängerin bekannt."),
    ("de", "P1303/2", "Q5928", "Q6607",
     "Das Instrument von Jimi Hendrix ist die Gitarre.",
     "Das Instrument von Jimi Hendrix war die Gitarre."),
    ("de", "P1412/q1", "Q40912", None,
     "Was ist die Sprache von Frank Sinatra?",
     "Was war die Sprache von Frank Sinatra?"),
    ("ar", "P27/2", "Q40912", "Q30",
     "فرانك سيناترا حامل جنسية الولايات المتحدة.",
     "فرانك سيناترا حامل جنسية الولايات المتحدة."),
    ("ar", "P1303/2", "Q5928", "Q6607",
     "آلة جيمي هندريكس الموسيقية هي القيثارة.",
     "آلة جيمي هندريكس الموسيقية هي القيثارة."),
    ("hi", "P106/3", "Q1631", "Q177220",
     "एडिथ पियाफ़ गायिका के रूप में जानी जाती हैं।",
     "एडिथ पियाफ़ गायिका के रूप में जानी जाती थीं।"),
    ("hi", "P1303/1", "Q5928", "Q6607",
     "जिमी हेंड्रिक्स गिटार वादक हैं।",
     "जिमी हेंड्रिक्स गिटार वादक थे।"),
    ("hi", "P1412/q1", "Q40912", None,
     "फ़्रैंक सिनात्रा की भाषा कौन सी है?",
     "फ़्रैंक सिनात्रा की भाषा कौन सी थी?"),
    ("sw", "P27/2", "Q40912", "Q30",
     "Frank Sinatra ni mwenye uraia wa Marekani.",
     "Frank Sinatra alikuwa mwenye uraia wa Marekani."),
    ("sw", "P1303/2", "Q5928", "Q6607",
     "Ala ya muziki ya Jimi Hendrix ni gitaa.",
     "Ala ya muziki ya Jimi Hendrix ilikuwa gitaa."),
    ("sw", "P1412/q1", "Q40912", None,
     "Lugha ya Frank Sinatra ni ipi?",
     "Lugha ya Frank Sinatra ilikuwa ipi?"),
]


@pytest.mark.parametrize(("lang", "tid", "subject", "gold", "alive", "unknown"), LIVING,
                         ids=[f"{c[0]}-{c[1]}" for c in LIVING])
def test_person_templates_agree_with_life_status(lang, tid, subject, gold, alive, unknown):
    lib = load_library((lang,))
    template = lib.get(lang, tid)
    for life, sentence in ((Life.ALIVE, alive), (Life.UNKNOWN, unknown)):
        renderer = Renderer(_living(life))
        got = renderer.render_prompt(template, subject).text if gold is None else filled(renderer, template, subject, gold)
        assert got == sentence, life
