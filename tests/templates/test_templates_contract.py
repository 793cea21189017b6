"""Contract test over every template file in templates/lang/: the validator passes and every template
renders (prompt for a feminine and a masculine / two different subjects, the answer filler for an object)
with the answer marker exactly once and nothing slot-like left."""

from __future__ import annotations

import re

import pytest

from factatlas.records import ANSWER_MARKER, Entity, Gender, frozen_mapping
from factatlas.templates.library import available_languages, load_library, read_language_file, templates_dir
from factatlas.templates.predicates import PREDICATES
from factatlas.templates.render import RenderedAnswer, RenderedPrompt, Renderer
from factatlas.templates.validate import validate_file
from tests.langs import FIRST_THIRTEEN, SHIPPED_LANGS

LANGS = SHIPPED_LANGS


def _labels(*values: str, **more: str) -> dict[str, str]:
    """The first thirteen languages' labels in order, the later languages' by their code."""
    return {**dict(zip(FIRST_THIRTEEN, values, strict=True)), **more}


# Real entities with their Wikidata labels in the 12+ languages (label order as in LANGS).
SAMPLES = {
    "Q7186": (("Q5",), Gender.FEMININE, _labels(
        "Marie Curie", "ماري كوري", "Marie Curie", "마리 퀴리", "玛丽·居里", "Мария Склодовская-Кюри", "Marie Curie",
        "Marie Curie", "マリ・キュリー", "Marie Curie", "मैरी क्यूरी", "Marie Curie", "Marie Curie", uk="Марія Склодовська-Кюрі", fa="ماری کوری")),
    "Q7200": (("Q5",), Gender.MASCULINE, _labels(
        "Alexander Pushkin", "ألكسندر بوشكين", "Aleksandr Pushkin", "알렉산드르 푸시킨", "亚历山大·普希金",
        "Александр Пушкин", "Alexandre Pouchkine", "Alexander Puschkin", "アレクサンドル・プーシキン",
        "Alexandre Pushkin", "अलेक्सान्द्र पुश्किन", "Alexander Pushkin", "Aleksandr Puškin", uk="Олександр Пушкін", fa="الکساندر پوشکین")),
    "Q270": (("Q515",), Gender.UNKNOWN, _labels(
        "Warsaw", "وارسو", "Varsovia", "바르샤바", "华沙", "Варшава", "Varsovie", "Warschau", "ワルシャワ", "Varsóvia",
        "वॉरसॉ", "Warszawa", "Varsavia", uk="Варшава", fa="ورشو")),
    "Q90": (("Q515",), Gender.UNKNOWN, _labels(
        "Paris", "باريس", "París", "파리", "巴黎", "Париж", "Paris", "Paris", "パリ", "Paris", "पैरिस", "Paris",
        "Parigi", uk="Париж", fa="پاریس")),
    "Q36": (("Q6256",), Gender.UNKNOWN, _labels(
        "Poland", "بولندا", "Polonia", "폴란드", "波兰", "Польша", "Pologne", "Polen", "ポーランド", "Polônia",
        "पोलैंड", "Poland", "Polonia", uk="Польща", fa="لهستان")),
    "Q142": (("Q6256",), Gender.UNKNOWN, _labels(
        "France", "فرنسا", "Francia", "프랑스", "法国", "Франция", "France", "Frankreich", "フランス", "França",
        "फ़्रान्स", "Ufaransa", "Francia", uk="Франція", fa="فرانسه")),
    "Q150": (("Q34770",), Gender.UNKNOWN, _labels(
        "French", "لغة فرنسية", "idioma francés", "프랑스어", "法语", "французский язык", "français", "Französisch",
        "フランス語", "língua francesa", "फ़्रान्सीसी भाषा", "Kifaransa", "lingua francese", uk="французька мова", fa="زبان فرانسوی")),
    "Q169470": (("Q28640",), Gender.UNKNOWN, _labels(
        "physicist", "فيزيائي", "físico", "물리학자", "物理学家", "физик", "physicien", "Physiker", "物理学者", "físico",
        "भौतिक विज्ञानी", "mwanafizikia", "fisico", uk="фізик", fa="فیزیک‌دان")),
    "Q8341": (("Q188451",), Gender.UNKNOWN, _labels(
        "jazz", "جاز", "jazz", "재즈", "爵士乐", "джаз", "jazz", "Jazz", "ジャズ", "jazz", "जैज़", "jazz", "jazz", uk="джаз", fa="جاز")),
    "Q5994": (("Q34379",), Gender.UNKNOWN, _labels(
        "piano", "بيانو", "piano", "피아노", "钢琴", "фортепиано", "piano", "Klavier", "ピアノ", "piano", "पियानो",
        "piano", "pianoforte", uk="фортепіано", fa="پیانو")),
    "Q183387": (("Q18127",), Gender.UNKNOWN, _labels(
        "Columbia Records", "كولومبيا ريكوردز", "Columbia Records", "컬럼비아 레코드", "哥伦比亚唱片",
        "Columbia Records", "Columbia Records", "Columbia Records", "コロムビア・レコード", "Columbia Records",
        "कोलंबिया रिकॉर्ड्स", "Columbia Records", "Columbia Records", uk="Columbia Records", fa="Columbia Records")),
    "Q9531": (("Q1616075",), Gender.UNKNOWN, _labels(
        "BBC", "بي بي سي", "BBC", "BBC", "英国广播公司", "Би-би-си", "BBC", "BBC", "BBC", "BBC", "बीबीसी", "BBC", "BBC", uk="Бі-Бі-Сі", fa="بی‌بی‌سی")),
    "Q132689": (("Q11424",), Gender.UNKNOWN, _labels(
        "Casablanca", "كازابلانكا", "Casablanca", "카사블랑카", "卡萨布兰卡", "Касабланка", "Casablanca", "Casablanca",
        "カサブランカ", "Casablanca", "कैसाब्लैंका", "Casablanca", "Casablanca", uk="Касабланка", fa="کازابلانکا (فیلم)")),
    "Q46": (("Q5107",), Gender.UNKNOWN, _labels(
        "Europe", "أوروبا", "Europa", "유럽", "欧洲", "Европа", "Europe", "Europa", "ヨーロッパ", "Europa", "यूरोप", "Ulaya",
        "Europa", uk="Європа", fa="اروپا")),
}
# Languages added after the first thirteen: lang -> qid -> label, one block per language (so that languages
# added side by side merge without touching each other's lines).
MORE_LABELS: dict[str, dict[str, str]] = {
    "ca": {"Q7186": "Marie Curie", "Q7200": "Aleksandr Puixkin", "Q270": "Varsòvia", "Q90": "París",
           "Q36": "Polònia", "Q142": "França", "Q150": "francès", "Q169470": "físic", "Q8341": "jazz",
           "Q5994": "piano", "Q183387": "Columbia Records", "Q9531": "BBC", "Q132689": "Casablanca",
           "Q46": "Europa"},
    "nl": {"Q7186": "Marie Curie", "Q7200": "Aleksandr Poesjkin", "Q270": "Warschau", "Q90": "Parijs",
           "Q36": "Polen", "Q142": "Frankrijk", "Q150": "Frans", "Q169470": "natuurkundige", "Q8341": "jazz",
           "Q5994": "piano", "Q183387": "Columbia Records", "Q9531": "BBC", "Q132689": "Casablanca",
           "Q46": "Europa"},
    "id": {"Q7186": "Marie Curie", "Q7200": "Aleksandr Pushkin", "Q270": "Warsawa", "Q90": "Paris",
           "Q36": "Polandia", "Q142": "Prancis", "Q150": "bahasa Prancis", "Q169470": "fisikawan", "Q8341": "jazz",
           "Q5994": "piano", "Q183387": "Columbia Records", "Q9531": "BBC", "Q132689": "Casablanca",
           "Q46": "Eropa"},
    "tr": {"Q7186": "Marie Curie", "Q7200": "Aleksandr Puşkin", "Q270": "Varşova", "Q90": "Paris",
           "Q36": "Polonya", "Q142": "Fransa", "Q150": "Fransızca", "Q169470": "fizikçi", "Q8341": "caz",
           "Q5994": "piyano", "Q183387": "Columbia Records", "Q9531": "BBC", "Q132689": "Kazablanka",
           "Q46": "Avrupa"},
    "hu": {"Q7186": "Marie Curie", "Q7200": "Alekszandr Puskin", "Q270": "Varsó", "Q90": "Párizs",
           "Q36": "Lengyelország", "Q142": "Franciaország", "Q150": "francia nyelv", "Q169470": "fizikus",
           "Q8341": "dzsessz", "Q5994": "zongora", "Q183387": "Columbia Records", "Q9531": "BBC",
           "Q132689": "Casablanca", "Q46": "Európa"},
    "vi": {"Q7186": "Marie Curie", "Q7200": "Aleksandr Pushkin", "Q270": "Warszawa", "Q90": "Paris",
           "Q36": "Ba Lan", "Q142": "Pháp", "Q150": "tiếng Pháp", "Q169470": "nhà vật lý học", "Q8341": "jazz",
           "Q5994": "dương cầm", "Q183387": "Columbia Records", "Q9531": "BBC", "Q132689": "Casablanca",
           "Q46": "châu Âu"},
    "th": {"Q7186": "มารี กูว์รี", "Q7200": "อะเลคซันดร์ พุชกิน", "Q270": "วอร์ซอ", "Q90": "ปารีส",
           "Q36": "ประเทศโปแลนด์", "Q142": "ประเทศฝรั่งเศส", "Q150": "ภาษาฝรั่งเศส", "Q169470": "นักฟิสิกส์",
           "Q8341": "แจ๊ส", "Q5994": "เปียโน", "Q183387": "โคลัมเบียเรเคิดส์", "Q9531": "บีบีซี",
           "Q132689": "คาซาบลังกา", "Q46": "ทวีปยุโรป"},
    "ne": {"Q7186": "मेरी क्युरी", "Q7200": "अलेक्जान्डर पुस्किन", "Q270": "वार्सा", "Q90": "पेरिस",
           "Q36": "पोल्याण्ड", "Q142": "फ्रान्स", "Q150": "फ्रान्सेली भाषा", "Q169470": "भौतिकशास्त्री",
           "Q8341": "ज्याज", "Q5994": "पियानो", "Q183387": "कोलम्बिया रेकर्ड्स", "Q9531": "बीबीसी",
           "Q132689": "कासाब्लान्का", "Q46": "युरोप"},
    "el": {"Q7186": "Μαρία Κιουρί", "Q7200": "Αλεξάντρ Πούσκιν", "Q270": "Βαρσοβία", "Q90": "Παρίσι",
           "Q36": "Πολωνία", "Q142": "Γαλλία", "Q150": "γαλλική γλώσσα", "Q169470": "φυσικός", "Q8341": "τζαζ",
           "Q5994": "πιάνο", "Q183387": "Columbia Records", "Q9531": "BBC", "Q132689": "Καζαμπλάνκα (ταινία)",
           "Q46": "Ευρώπη"},
    "he": {"Q7186": "מארי קירי", "Q7200": "אלכסנדר פושקין", "Q270": "ורשה", "Q90": "פריז", "Q36": "פולין",
           "Q142": "צרפת", "Q150": "צרפתית", "Q169470": "פיזיקאי", "Q8341": "ג'אז", "Q5994": "פסנתר",
           "Q183387": "קולומביה רקורדס", "Q9531": "BBC", "Q132689": "קזבלנקה (סרט)", "Q46": "אירופה"},
}
for _lang, _table in MORE_LABELS.items():
    for _qid, _label in _table.items():
        SAMPLES[_qid][2][_lang] = _label
_unlabelled = sorted({lang for _q, (_c, _g, labels) in SAMPLES.items() for lang in set(LANGS) - set(labels)})
assert not _unlabelled, f"no sample labels in {_unlabelled}: add a block to MORE_LABELS"
ENTITIES = {q: Entity(q, frozen_mapping(labels), frozen_mapping(), g, "P21" if g is not Gender.UNKNOWN else "", cls)
            for q, (cls, g, labels) in SAMPLES.items()}
BY_TYPE = {"person": ("Q7186", "Q7200"), "place": ("Q90", "Q270"), "settlement": ("Q90", "Q270"),
           "country": ("Q142", "Q36"), "language": ("Q150",), "occupation": ("Q169470",), "genre": ("Q8341",),
           "instrument": ("Q5994",), "record-label": ("Q183387",), "tv-network": ("Q9531",), "work": ("Q132689",),
           "continent": ("Q46",)}
SURVIVOR = re.compile(r"[\[\]{}［］【】]")


def _files() -> list[str]:
    return list(available_languages())


def test_the_library_has_template_files():
    assert len(_files()) >= 12


@pytest.mark.parametrize("lang", _files())
def test_every_template_file_validates(lang):
    issues = validate_file(read_language_file(templates_dir() / f"{lang}.yaml"))
    assert [str(i) for i in issues] == []


@pytest.mark.parametrize("lang", _files())
def test_every_template_renders_for_real_entities(lang):
    lib = load_library([lang])
    renderer = Renderer(ENTITIES)
    failures = []
    for template in lib.templates(lang):
        slots = PREDICATES[template.predicate]
        for subject in BY_TYPE[slots.subject_type]:
            if lang not in SAMPLES[subject][2]:  # a new language needs its labels for the sample entities
                failures.append(f"SAMPLES[{subject!r}] has no {lang} label")
                continue
            prompt = renderer.render_prompt(template, subject)
            if not isinstance(prompt, RenderedPrompt):
                failures.append(f"{template.where()} {template.id} subject {subject}: {prompt}")
                continue
            rest = prompt.text.replace(ANSWER_MARKER, "", 1) if template.kind == "cloze" else prompt.text
            if (template.kind == "cloze" and prompt.text.count(ANSWER_MARKER) != 1) or SURVIVOR.search(rest):
                failures.append(f"{template.where()} {template.id}: bad render {prompt.text!r}")
        objects = [q for q in BY_TYPE[slots.object_type]]
        answer = renderer.render_answer(template, objects[-1], BY_TYPE[slots.subject_type][0])
        if not isinstance(answer, RenderedAnswer) or SURVIVOR.search(answer.forms[0]):
            failures.append(f"{template.where()} {template.id} object {objects[-1]}: {answer}")
    assert failures == []


def test_the_twelve_languages_are_covered():
    required = {"en", "ar", "es", "ko", "zh", "ru", "fr", "de", "ja", "pt", "hi", "sw"}
    assert required <= set(_files())
    lib = load_library(sorted(required))
    for lang in lib.languages:
        for pid in PREDICATES:
            assert lib.get(lang, f"{pid}/1") is not None, f"{lang} lacks {pid}/1"
            assert lib.templates(lang, pid, kind="question"), f"{lang} lacks a question for {pid}"
