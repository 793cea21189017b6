"""The native reading of ar and hi (issue 26): one exact sentence, gold and candidate, per class of error
the reading found, rendered with the packaged templates, lexicons and rules.

ar: a plural label as the one official / native language («هي اللغات الأمازيغية»); a mountain read
feminine («تقع مون بلان»); a channel name in Latin letters in an Arabic sentence («RCN Televisión»); a
repeated head noun in the subject («مدينة مدينة الكويت»).
hi: the head noun repeated after the answer («ऑस्ट्रेलिया महाद्वीप महाद्वीप में»); a plural family as the
official language («बर्बर भाषाएँ है»); channel names in Latin letters; unmarked work titles («कासाब्लांका का
मूल देश» reads as the city); a series read feminine from its title's ending («डाउनटन एबी … प्रसारित हुई थी»).
"""

from __future__ import annotations

import pytest

from factatlas.records import Gender
from factatlas.templates.library import load_library
from factatlas.templates.render import RenderedPrompt, Renderer

from .templates_fixtures import CITY, CONTINENT, COUNTRY, HUMAN, LANGUAGE, entity, filled

FILM, SERIES, MOUNTAIN, TV_CHANNEL, DISTRICT = "Q11424", "Q5398426", "Q8502", "Q1616075", "Q15284"
CLOCK_TOWER = "Q12518"  # Big Ben's P31 in the embedded sample

ENTITIES = {e.qid: e for e in (
    entity("Q1028", {"ar": "المغرب", "hi": "मोरक्को"}, (COUNTRY,)),
    entity("Q408", {"ar": "أستراليا", "hi": "ऑस्ट्रेलिया"}, (COUNTRY,)),
    entity("Q817", {"ar": "الكويت", "hi": "कुवैत"}, (COUNTRY,)),
    entity("Q35178", {"ar": "مدينة الكويت", "hi": "कुवैत नगर"}, (CITY,)),
    entity("Q3960", {"ar": "قارة أستراليا", "hi": "ऑस्ट्रेलिया महाद्वीप"}, (CONTINENT,)),
    entity("Q48", {"ar": "آسيا", "hi": "एशिया"}, (CONTINENT,)),
    entity("Q25448", {"ar": "اللغات الأمازيغية", "hi": "बर्बर भाषाएँ"}, (LANGUAGE,)),
    entity("Q13955", {"ar": "العربية", "hi": "अरबी भाषा"}, (LANGUAGE,)),
    entity("Q1194795", {"ar": "اللهجات المغاربية", "hi": "मग़रिबी अरबी"}, (LANGUAGE,)),
    entity("Q583", {"ar": "مون بلان", "hi": "मों ब्लां"}, (MOUNTAIN,)),
    entity("Q80263", {"ar": "RCN Televisión", "hi": "RCN Televisión"}, (TV_CHANNEL,)),
    entity("Q13974", {"ar": "إن بي سي", "hi": "एन॰बी॰सी॰"}, (TV_CHANNEL,)),
    entity("Q132689", {"ar": "الدار البيضاء", "hi": "कासाब्लांका"}, (FILM,)),
    entity("Q83071", {"ar": "داونتون آبي", "hi": "डाउनटन एबी"}, (SERIES,)),
    entity("Q3571952", {"ar": "ياسين بونو", "hi": "यासीन बोनो"}, (HUMAN,), Gender.MASCULINE),
    # the second reading (seed 7): a district's head declines before a postposition; a channel's bare name
    entity("Q207199", {"ar": "مقاطعة لشبونة", "hi": "लिस्बन ज़िला"}, (DISTRICT,)),
    entity("Q173481", {"ar": "فرناندو بيسوا", "hi": "फ़र्नांडो पेसोआ"}, (HUMAN,), Gender.MASCULINE),
    entity("Q4616", {"ar": "مارلين مونرو", "hi": "मर्लिन मुनरो"}, (HUMAN,), Gender.FEMININE),
    entity("Q2276749", {"ar": "الأولى", "hi": "अल औला"}, (TV_CHANNEL,)),
    entity("Q23567", {"ar": "الضياع", "hi": "लॉस्ट"}, (SERIES,)),
    entity("Q41225", {"ar": "بيغ بن", "hi": "बिग बेन"}, (CLOCK_TOWER,)),
)}


@pytest.fixture(scope="module")
def reading() -> tuple[Renderer, object]:
    return Renderer(ENTITIES), load_library(("ar", "hi"))


def _sentence(reading, lang: str, tid: str, subject: str, obj: str) -> str:
    renderer, lib = reading
    return filled(renderer, lib.get(lang, tid), subject, obj)


SENTENCES = [
    # ar number: one official / native language, not the plural family or dialect group
    ("ar", "P37/1", "Q1028", "Q25448", "اللغة الرسمية في المغرب هي الأمازيغية."),
    ("ar", "P103/1", "Q3571952", "Q1194795", "لغة ياسين بونو الأم هي العربية المغاربية."),
    ("ar", "P103/3", "Q3571952", "Q1194795", "ياسين بونو لغته الأم العربية المغاربية."),
    # ar script: a channel in Arabic letters
    ("ar", "P449/1", "Q83071", "Q80263", "تم عرض «داونتون آبي» لأول مرة على آر سي إن تلفزيون."),
    # ar: the subject's own head noun is not repeated
    ("ar", "P1376/2", "Q35178", "Q817", "مدينة الكويت هي المدينة التي تمثل عاصمة الكويت."),
    # hi: the head noun after the answer is not repeated; a continent without one is unchanged
    ("hi", "P30/3", "Q408", "Q3960", "ऑस्ट्रेलिया ऑस्ट्रेलिया महाद्वीप में स्थित है।"),
    ("hi", "P30/3", "Q408", "Q48", "ऑस्ट्रेलिया एशिया महाद्वीप में स्थित है।"),
    ("hi", "P30/1", "Q408", "Q3960", "ऑस्ट्रेलिया ऑस्ट्रेलिया महाद्वीप में स्थित है।"),
    # hi number: the official language, not the plural family; «भाषा» is not repeated either
    ("hi", "P37/1", "Q1028", "Q25448", "मोरक्को की आधिकारिक भाषा अमाज़ीग़ है।"),
    ("hi", "P37/3", "Q1028", "Q25448", "मोरक्को की आधिकारिक भाषाओं में से एक अमाज़ीग़ भाषा है।"),
    ("hi", "P37/1", "Q1028", "Q13955", "मोरक्को की आधिकारिक भाषा अरबी है।"),
    # hi script, titles marked, a series is masculine whatever its title ends in
    ("hi", "P449/1", "Q83071", "Q80263", "“डाउनटन एबी” मूल रूप से आर॰सी॰एन॰ टेलीविज़न पर प्रसारित हुआ था।"),
    ("hi", "P449/1", "Q83071", "Q13974", "“डाउनटन एबी” मूल रूप से एन॰बी॰सी॰ पर प्रसारित हुआ था।"),
    ("hi", "P495/1", "Q132689", "Q408", "“कासाब्लांका” का मूल देश ऑस्ट्रेलिया है।"),
    # hi case: «ज़िला» takes its oblique before a postposition, stays direct before «है»
    ("hi", "P19/1", "Q173481", "Q207199", "फ़र्नांडो पेसोआ का जन्म लिस्बन ज़िले में हुआ था।"),
    ("hi", "P19/3", "Q173481", "Q207199", "फ़र्नांडो पेसोआ मूल रूप से लिस्बन ज़िले के हैं।"),
    ("hi", "P19/3", "Q4616", "Q207199", "मर्लिन मुनरो मूल रूप से लिस्बन ज़िले की हैं।"),
    ("hi", "P20/1", "Q173481", "Q207199", "फ़र्नांडो पेसोआ की मृत्यु लिस्बन ज़िले में हुई थी।"),
    ("hi", "P20/3", "Q173481", "Q207199", "फ़र्नांडो पेसोआ का निधन लिस्बन ज़िले में हुआ था।"),
    ("hi", "P19/2", "Q173481", "Q207199", "फ़र्नांडो पेसोआ का जन्मस्थान लिस्बन ज़िला है।"),
    ("hi", "P19/1", "Q173481", "Q3960", "फ़र्नांडो पेसोआ का जन्म ऑस्ट्रेलिया महाद्वीप में हुआ था।"),
    # ar label: the Moroccan channel is not the ordinal «الأولى» (the first)
    ("ar", "P449/3", "Q23567", "Q2276749", "القناة التي عرضت «الضياع» لأول مرة هي القناة الأولى المغربية."),
    ("ar", "P449/2", "Q23567", "Q2276749", "بدأ عرض «الضياع» على القناة الأولى المغربية."),
]


@pytest.mark.parametrize(("lang", "tid", "subject", "obj", "expected"), SENTENCES)
def test_the_reading_sentences(reading, lang, tid, subject, obj, expected):
    assert _sentence(reading, lang, tid, subject, obj) == expected


def test_a_mountain_is_masculine_in_arabic(reading):
    renderer, lib = reading
    got = renderer.render_prompt(lib.get("ar", "P17/1"), "Q583")
    assert isinstance(got, RenderedPrompt), got
    assert got.text == "يقع مون بلان في [Y]."


def test_big_ben_is_masculine_in_arabic(reading):
    renderer, lib = reading
    texts = [renderer.render_prompt(lib.get("ar", tid), "Q41225") for tid in ("P17/1", "P17/q1")]
    assert [t.text for t in texts if isinstance(t, RenderedPrompt)] == [
        "يقع بيغ بن في [Y].", "في أي بلد يقع بيغ بن؟"]  # was «تقع بيغ بن» (places default to feminine)


def test_ar_twin_city_question_does_not_repeat_the_subjects_head_noun(reading):
    renderer, lib = reading
    got = renderer.render_prompt(lib.get("ar", "P190/q1"), "Q35178")
    assert isinstance(got, RenderedPrompt), got
    assert got.text == "ما المدينة المتوأمة مع مدينة الكويت؟"  # was «لمدينة مدينة الكويت»


def test_hi_question_of_a_series_is_masculine_and_quoted(reading):
    renderer, lib = reading
    got = renderer.render_prompt(lib.get("hi", "P449/q1"), "Q83071")
    assert isinstance(got, RenderedPrompt), got
    assert got.text == "“डाउनटन एबी” मूल रूप से किस चैनल पर प्रसारित हुआ था?"


def test_ar_and_hi_templates_are_reviewed():
    lib = load_library(("ar", "hi"))
    drafts = [t.id for lang in ("ar", "hi") for t in lib.templates(lang) if t.status != "reviewed"]
    assert drafts == []
