"""Vietnamese, Thai and Nepali (issue 39): the sentences a reader of each language expects, rendered from the
real templates and the labels of the embedded sample, where these languages are known to be hard.

vi: a head noun the label carries is not written twice («dòng nhạc pop», never «dòng nhạc nhạc pop»), a
language family is not an official language («tiếng Berber»), work subjects are named by their kind with
the title in “…” («phim “Bố già”»), a lower-case label opens a sentence with a capital («Tháp Eiffel»), and
the dead take «từng là» / «đã» where a role ends with death («Victor Hugo từng là công dân Pháp»).

th: no spaces between words; a name is glued to the word before it and a space follows it; a head noun the
template writes glued before the answer is dropped from the label («เจ้าของภาษาอาหรับ», never «เจ้าของภาษา
ภาษาอาหรับ»), a city-state is named without «ประเทศ», the dead take «เคย».

ne: postpositions glued to the name («होनोलुलुमा», «बराक ओबामाको»); verbs and the genitive agree with the
subject's gender in the middle honorific («जन्मिएका थिए» / «जन्मिएकी थिइन्», «फ्रान्सका» / «फ्रान्सकी नागरिक»); the
copula follows life status («हुन्» / «थिए», «थिइन्»), and while it is unknown «… भनेर चिनिन्छन्» (is known as);
an attribute named by a noun (पेशा, मातृभाषा, the country of citizenship) takes «हो» for the living and «थियो»
otherwise (true of both).
"""

from __future__ import annotations

import pytest

from factatlas.records import Entity, Gender, Life, frozen_mapping
from factatlas.templates.library import load_library
from factatlas.templates.render import RenderedPrompt, Renderer
from tests.templates.conftest import PAIRS

from .templates_fixtures import filled

HUMAN, COUNTRY, CITY, LANGUAGE, OCCUPATION, GENRE, FILM, SERIES = (
    "Q5", "Q6256", "Q515", "Q1288568", "Q28640", "Q188451", "Q11424", "Q5398426")


def _e(qid: str, labels: dict[str, str], classes: tuple[str, ...], gender: Gender = Gender.UNKNOWN,
       life: Life = Life.UNKNOWN, female: dict[str, str] | None = None) -> Entity:
    return Entity(qid, frozen_mapping(labels), frozen_mapping(), gender, "P21" if gender is not Gender.UNKNOWN else "",
                  classes, female_labels=frozen_mapping(female or {}), life=life,
                  life_source="P570" if life is Life.DEAD else ("test" if life is Life.ALIVE else ""))


# labels as in curate/sample/source/labels_<lang>.yaml; life status as on Wikidata (P570)
ENTITIES = {e.qid: e for e in (
    _e("Q535", {"vi": "Victor Hugo", "th": "วิกตอร์ อูโก", "ne": "भिक्टर ह्युगो"}, (HUMAN,), Gender.MASCULINE, Life.DEAD),
    _e("Q3052772", {"vi": "Emmanuel Macron", "th": "แอมานุแอล มาครง", "ne": "इमानुएल म्याक्रों"}, (HUMAN,), Gender.MASCULINE, Life.ALIVE),
    _e("Q1631", {"vi": "Édith Piaf", "th": "เอดิต ปียัฟ", "ne": "एडिथ पियाफ"}, (HUMAN,), Gender.FEMININE, Life.DEAD),
    _e("Q40912", {"vi": "Frank Sinatra", "th": "แฟรงก์ ซินาตรา", "ne": "फ्र्याङ्क सिनात्रा"}, (HUMAN,), Gender.MASCULINE, Life.DEAD),
    _e("Q15123969", {"vi": "Sam Smith", "th": "แซม สมิธ", "ne": "स्याम स्मिथ"}, (HUMAN,), Gender.NON_BINARY),
    _e("Q5928", {"vi": "Jimi Hendrix", "th": "จิมิ เฮนดริกซ์"}, (HUMAN,), Gender.MASCULINE, Life.DEAD),
    _e("Q142", {"vi": "Pháp", "th": "ประเทศฝรั่งเศส", "ne": "फ्रान्स"}, (COUNTRY,)),
    _e("Q1028", {"vi": "Maroc", "th": "ประเทศโมร็อกโก", "ne": "मोरक्को"}, (COUNTRY,)),
    _e("Q30", {"vi": "Hoa Kỳ", "th": "สหรัฐ", "ne": "संयुक्त राज्य अमेरिका"}, (COUNTRY,)),
    _e("Q243", {"vi": "tháp Eiffel", "th": "หอไอเฟล", "ne": "आइफेल टावर"}, ("Q12518",)),
    _e("Q150", {"vi": "tiếng Pháp", "th": "ภาษาฝรั่งเศส", "ne": "फ्रान्सेली भाषा"}, (LANGUAGE,)),
    _e("Q1860", {"vi": "tiếng Anh", "th": "ภาษาอังกฤษ", "ne": "अङ्ग्रेजी भाषा"}, (LANGUAGE,)),
    _e("Q25448", {"vi": "các ngôn ngữ Berber", "th": "ภาษากลุ่มเบอร์เบอร์", "ne": "बर्बर भाषाहरू"}, ("Q34770",)),
    _e("Q177220", {"vi": "ca sĩ", "th": "นักร้อง", "ne": "गायक"}, (OCCUPATION,), female={"ne": "गायिका"}),
    _e("Q37073", {"vi": "nhạc pop", "th": "ดนตรีป็อป"}, (GENRE,)),
    _e("Q8341", {"vi": "jazz", "th": "แจ๊ส"}, (GENRE,)),
    _e("Q624044", {"vi": "âm nhạc Ả Rập", "th": "ดนตรีอาหรับ"}, (GENRE,)),
    _e("Q6607", {"vi": "guitar", "th": "กีตาร์"}, ("Q34379",)),
    _e("Q47703", {"vi": "Bố già", "th": "เดอะ ก็อดฟาเธอร์", "ne": "द गडफादर"}, (FILM,)),
    _e("Q79784", {"vi": "Những người bạn", "th": "เฟรนส์", "ne": "फ्रेन्ड्स"}, (SERIES,)),
    _e("Q334", {"th": "ประเทศสิงคโปร์"}, (COUNTRY, "Q5119")),
    _e("Q1110560", {"th": "อุมม์ กุลษูม", "ne": "उम्म कुलसुम"}, (HUMAN,), Gender.FEMININE, Life.DEAD),
    _e("Q13955", {"th": "ภาษาอาหรับ", "ne": "अरबी भाषा"}, (LANGUAGE,)),
    _e("Q651785", {"th": "ไฮฟา วะฮ์บี"}, (HUMAN,), Gender.FEMININE, Life.ALIVE),
    _e("Q4610556", {"th": "นายแบบ"}, (OCCUPATION,), female={"th": "นางแบบ"}),
    _e("Q23215", {"ne": "एडेल"}, (HUMAN,), Gender.FEMININE, Life.ALIVE),
    _e("Q10520", {"ne": "डेभिड बेकह्याम"}, (HUMAN,), Gender.MASCULINE, Life.ALIVE),
    _e("Q76", {"ne": "बराक ओबामा"}, (HUMAN,), Gender.MASCULINE, Life.ALIVE),
    _e("Q84", {"ne": "लन्डन"}, (CITY,)),
    _e("Q90", {"ne": "पेरिस"}, (CITY,)),
    _e("Q18094", {"ne": "होनोलुलु"}, (CITY,)),
    _e("Q145", {"ne": "संयुक्त अधिराज्य"}, (COUNTRY,)),
    _e("Q36180", {"ne": "लेखक"}, (OCCUPATION,), female={"ne": "लेखिका"}),
    _e("Q183387", {"ne": "कोलम्बिया रेकर्ड्स"}, ("Q18127",)),
    _e("Q13974", {"vi": "NBC", "th": "เอ็นบีซี", "ne": "एनबीसी"}, ("Q1616075",)),
)}

# (lang, template, subject, gold or None for a question, the sentence a reader expects)
CASES = [
    # life status: «là» for the living and the unknown, «từng là» / «đã» for the dead
    ("vi", "P27/1", "Q535", "Q142", "Victor Hugo từng là công dân Pháp."),
    ("vi", "P27/1", "Q3052772", "Q142", "Emmanuel Macron là công dân Pháp."),
    ("vi", "P27/1", "Q15123969", "Q30", "Sam Smith là công dân Hoa Kỳ."),
    ("vi", "P27/q1", "Q535", None, "Victor Hugo từng là công dân của quốc gia nào?"),
    ("vi", "P106/2", "Q1631", "Q177220", "Édith Piaf từng là ca sĩ."),
    ("vi", "P106/2", "Q15123969", "Q177220", "Sam Smith là ca sĩ."),
    ("vi", "P1303/3", "Q5928", "Q6607", "Jimi Hendrix từng là nghệ sĩ chơi guitar."),
    ("vi", "P1412/2", "Q40912", "Q1860", "Một trong những ngôn ngữ mà Frank Sinatra đã sử dụng là tiếng Anh."),
    ("vi", "P1412/2", "Q3052772", "Q150", "Một trong những ngôn ngữ mà Emmanuel Macron sử dụng là tiếng Pháp."),
    ("vi", "P27/2", "Q535", "Q142", "Victor Hugo từng là người mang quốc tịch Pháp."),
    ("vi", "P27/2", "Q3052772", "Q142", "Emmanuel Macron là người mang quốc tịch Pháp."),
    ("vi", "P27/3", "Q535", "Q142", "Quốc gia mà Victor Hugo từng mang quốc tịch là Pháp."),
    ("vi", "P27/3", "Q15123969", "Q30", "Quốc gia mà Sam Smith mang quốc tịch là Hoa Kỳ."),
    ("vi", "P1303/2", "Q5928", "Q6607", "Nhạc cụ mà Jimi Hendrix đã chơi là guitar."),
    # the label's head noun is not written twice after «dòng nhạc»; a genre without it stays as it is
    ("vi", "P136/2", "Q1631", "Q37073", "Édith Piaf được biết đến với dòng nhạc pop."),
    ("vi", "P136/2", "Q1631", "Q8341", "Édith Piaf được biết đến với dòng nhạc jazz."),
    ("vi", "P136/3", "Q1631", "Q624044", "Édith Piaf từng là nghệ sĩ theo dòng nhạc Ả Rập."),
    ("vi", "P136/1", "Q1631", "Q37073", "Thể loại âm nhạc của Édith Piaf là nhạc pop."),
    # a family of languages is not one official language
    ("vi", "P37/1", "Q1028", "Q25448", "Ngôn ngữ chính thức của Maroc là tiếng Berber."),
    # works named by their kind, the title in “…”, capitalised at the start of a sentence
    ("vi", "P364/1", "Q47703", "Q1860", "Ngôn ngữ gốc của phim “Bố già” là tiếng Anh."),
    ("vi", "P449/1", "Q79784", "Q13974", "Phim truyền hình “Những người bạn” ban đầu được phát sóng trên NBC."),
    ("vi", "P17/1", "Q243", "Q142", "Tháp Eiffel nằm ở Pháp."),
    ("vi", "P17/3", "Q243", "Q142", "Quốc gia nơi có tháp Eiffel là Pháp."),
    # th: a name glued to the word before it, a space after it; the dead take «เคย»
    ("th", "P27/1", "Q535", "Q142", "วิกตอร์ อูโก เคยเป็นพลเมืองของประเทศฝรั่งเศส"),
    ("th", "P27/1", "Q3052772", "Q142", "แอมานุแอล มาครง เป็นพลเมืองของประเทศฝรั่งเศส"),
    ("th", "P27/q1", "Q535", None, "วิกตอร์ อูโก เคยเป็นพลเมืองของประเทศใด"),
    ("th", "P106/2", "Q1631", "Q177220", "เอดิต ปียัฟ เคยเป็นนักร้อง"),
    ("th", "P1412/2", "Q40912", "Q1860", "ภาษาหนึ่งที่แฟรงก์ ซินาตรา เคยใช้คือภาษาอังกฤษ"),
    # the head glued before the answer is not written twice; after a space or «คือ» the label keeps it
    ("th", "P103/2", "Q1110560", "Q13955", "อุมม์ กุลษูม เป็นเจ้าของภาษาอาหรับ"),
    ("th", "P1412/1", "Q3052772", "Q150", "แอมานุแอล มาครง เป็นผู้พูดภาษาฝรั่งเศส"),
    ("th", "P103/1", "Q1110560", "Q13955", "ภาษาแม่ของอุมม์ กุลษูม คือภาษาอาหรับ"),
    ("th", "P136/2", "Q1631", "Q37073", "เอดิต ปียัฟ เป็นที่รู้จักจากแนวดนตรีป็อป"),
    ("th", "P136/2", "Q1631", "Q8341", "เอดิต ปียัฟ เป็นที่รู้จักจากแนวดนตรีแจ๊ส"),
    ("th", "P136/1", "Q1631", "Q624044", "แนวดนตรีของเอดิต ปียัฟ คือดนตรีอาหรับ"),
    # lexicon: a family is not one official language; a city-state is its own capital without «ประเทศ»
    ("th", "P37/1", "Q1028", "Q25448", "ภาษาราชการของประเทศโมร็อกโก คือภาษาเบอร์เบอร์"),
    ("th", "P36/1", "Q334", "Q334", "เมืองหลวงของสิงคโปร์ คือสิงคโปร์"),
    # works named by kind and classifier, the title in “…”; a network after a space (often Latin script)
    ("th", "P364/1", "Q47703", "Q1860", "ภาษาต้นฉบับของภาพยนตร์เรื่อง “เดอะ ก็อดฟาเธอร์” คือภาษาอังกฤษ"),
    ("th", "P449/1", "Q79784", "Q13974", "ซีรีส์เรื่อง “เฟรนส์” ออกอากาศครั้งแรกทาง เอ็นบีซี"),
    ("th", "P17/1", "Q243", "Q142", "หอไอเฟล ตั้งอยู่ในประเทศฝรั่งเศส"),
    # the one occupation Thai marks for gender
    ("th", "P106/3", "Q651785", "Q4610556", "ไฮฟา วะฮ์บี เป็นที่รู้จักในฐานะนางแบบ"),
    # ne: the verb agrees with the subject's gender in the middle honorific; the unknown takes the masculine
    ("ne", "P19/3", "Q10520", "Q84", "डेभिड बेकह्याम लन्डनमा जन्मिएका थिए।"),
    ("ne", "P19/3", "Q1631", "Q90", "एडिथ पियाफ पेरिसमा जन्मिएकी थिइन्।"),
    ("ne", "P19/3", "Q15123969", "Q84", "स्याम स्मिथ लन्डनमा जन्मिएका थिए।"),
    ("ne", "P19/1", "Q76", "Q18094", "बराक ओबामाको जन्म होनोलुलुमा भएको थियो।"),
    # ne: the copula by life status and gender (हुन् / थिए / थिइन्), the genitive by gender (का / की), and
    # «… भनेर चिनिन्छन्» (is known as) while the status is unknown
    ("ne", "P27/1", "Q3052772", "Q142", "इमानुएल म्याक्रों फ्रान्सका नागरिक हुन्।"),
    ("ne", "P27/1", "Q23215", "Q145", "एडेल संयुक्त अधिराज्यकी नागरिक हुन्।"),
    ("ne", "P27/1", "Q535", "Q142", "भिक्टर ह्युगो फ्रान्सका नागरिक थिए।"),
    ("ne", "P27/1", "Q1631", "Q142", "एडिथ पियाफ फ्रान्सकी नागरिक थिइन्।"),
    ("ne", "P27/1", "Q15123969", "Q145", "स्याम स्मिथ संयुक्त अधिराज्यका नागरिक भनेर चिनिन्छन्।"),
    ("ne", "P27/q1", "Q535", None, "भिक्टर ह्युगोको नागरिकता भएको देश कुन थियो?"),
    ("ne", "P27/q1", "Q3052772", None, "इमानुएल म्याक्रोंको नागरिकता भएको देश कुन हो?"),
    ("ne", "P27/3", "Q23215", "Q145", "एडेलको नागरिकता भएको देश संयुक्त अधिराज्य हो।"),
    ("ne", "P27/3", "Q15123969", "Q145", "स्याम स्मिथको नागरिकता भएको देश संयुक्त अधिराज्य थियो।"),
    ("ne", "P106/1", "Q23215", "Q177220", "एडेलको पेशा गायिका हो।"),
    ("ne", "P103/1", "Q1110560", "Q13955", "उम्म कुलसुमको मातृभाषा अरबी थियो।"),
    ("ne", "P1412/q1", "Q76", None, "बराक ओबामाले बोल्ने भाषा कुन हो?"),
    ("ne", "P1412/q1", "Q1110560", None, "उम्म कुलसुमले बोल्ने भाषा कुन थियो?"),
    ("ne", "P106/2", "Q1631", "Q177220", "एडिथ पियाफ पेशाले गायिका थिइन्।"),
    ("ne", "P106/1", "Q535", "Q36180", "भिक्टर ह्युगोको पेशा लेखक थियो।"),
    ("ne", "P106/3", "Q23215", "Q177220", "एडेल गायिकाका रूपमा चिनिन्छिन्।"),
    ("ne", "P1412/1", "Q1110560", "Q13955", "उम्म कुलसुम अरबी भाषा बोल्थिन्।"),
    ("ne", "P1412/1", "Q3052772", "Q150", "इमानुएल म्याक्रों फ्रान्सेली भाषा बोल्छन्।"),
    ("ne", "P264/1", "Q1631", "Q183387", "एडिथ पियाफले कोलम्बिया रेकर्ड्ससँग सम्झौता गरेकी थिइन्।"),
    # ne: «भाषा [Y]» drops the label's भाषा; a family is not one official language; postpositions glued
    ("ne", "P37/1", "Q142", "Q150", "फ्रान्सको आधिकारिक भाषा फ्रान्सेली हो।"),
    ("ne", "P37/1", "Q1028", "Q25448", "मोरक्कोको आधिकारिक भाषा बर्बर हो।"),
    ("ne", "P37/3", "Q1028", "Q25448", "मोरक्कोका आधिकारिक भाषाहरूमध्ये एउटा बर्बर भाषा हो।"),
    ("ne", "P17/1", "Q243", "Q142", "आइफेल टावर फ्रान्समा अवस्थित छ।"),
    ("ne", "P364/1", "Q47703", "Q1860", "चलचित्र “द गडफादर”को मूल भाषा अङ्ग्रेजी हो।"),
    ("ne", "P449/1", "Q79784", "Q13974", "टेलिभिजन शृङ्खला “फ्रेन्ड्स” सुरुमा एनबीसीमा प्रसारित भएको थियो।"),
]


@pytest.fixture(scope="module")
def field() -> tuple[Renderer, object]:
    return Renderer(ENTITIES), load_library(tuple(sorted({c[0] for c in CASES})))


@pytest.mark.parametrize(("lang", "tid", "subject", "gold", "sentence"), CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}" for c in CASES])
def test_sentences_read_as_a_speaker_writes_them(field, lang, tid, subject, gold, sentence):
    renderer, lib = field
    template = lib.get(lang, tid)
    if gold is None:
        prompt = renderer.render_prompt(template, subject)
        assert isinstance(prompt, RenderedPrompt), prompt
        assert prompt.text == sentence
        return
    assert filled(renderer, template, subject, gold) == sentence


def test_a_dropped_head_is_recorded_for_the_audit(field):
    renderer, lib = field
    filled(renderer, lib.get("vi", "P136/2"), "Q1631", "Q37073")
    filled(renderer, lib.get("th", "P103/2"), "Q1110560", "Q13955")
    assert ("vi", "label", "rule:repeated-head", "Q37073 nhạc pop -> pop") in renderer.decisions
    assert ("th", "label", "rule:repeated-head", "Q13955 ภาษาอาหรับ -> อาหรับ") in renderer.decisions


# a head noun written twice, in any sentence of a whole build (the head the template writes, then the label's)
DOUBLED_HEADS = {
    "vi": ("tiếng tiếng", "nhạc nhạc", "châu châu", "sông sông", "tỉnh tỉnh", "phim phim"),
    "th": ("ภาษาภาษา", "ประเทศประเทศ", "ทวีปทวีป", "ดนตรีดนตรี", "เรื่องเรื่อง", "แนวดนตรีดนตรี"),
    "ne": ("भाषा भाषा", "भाषा अरबी भाषा", "भाषा अङ्ग्रेजी भाषा", "महादेश महादेश", "सहर सहर"),
}


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS)
def test_every_fact_of_a_shipped_pair_renders_with_no_failure_and_no_doubled_head(sample_renders, pair):
    """Every fact of the pair renders in every template of these languages (no drop, no gold left out), and no
    sentence with its gold filled in writes a head noun twice."""
    from factatlas.records import ANSWER_MARKER
    from factatlas.templates.batch import render_facts
    from tests.langs import SHIPPED_LANGS

    langs = tuple(lang for lang in DOUBLED_HEADS if lang in SHIPPED_LANGS)
    _run, result, renderer = sample_renders.curated(pair)
    report = render_facts(result.facts, result.entities, sample_renders.library, langs, renderer=renderer)
    assert not report.drops, report.table()
    assert not [k for k in report.counts if k.startswith("gold-dropped")], report.table()
    doubled = []
    for row in report.rows:
        golds = [forms[0] for forms in row["gold_forms"]] if row["kind"] == "cloze" else [""]
        for gold in golds:
            sentence = row["text"].replace(ANSWER_MARKER, gold)
            doubled += [f"{row['prompt_id']}: {sentence}" for head in DOUBLED_HEADS[row["lang"]] if head in sentence]
    assert not doubled, "\n".join(doubled[:20])
    assert {r["lang"] for r in report.rows} == set(langs)
