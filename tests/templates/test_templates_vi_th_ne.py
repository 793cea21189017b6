"""Vietnamese, Thai and Nepali (issue 39): the sentences a reader of each language expects, rendered from the
real templates and the labels of the embedded sample, where these languages are known to be hard.

vi: a head noun the label carries is not written twice («dòng nhạc pop», never «dòng nhạc nhạc pop»), a
language family is not an official language («tiếng Berber»), work subjects are named by their kind with
the title in “…” («phim “Bố già”»), a lower-case label opens a sentence with a capital («Tháp Eiffel»), and
the dead take «từng là» / «đã» where a role ends with death («Victor Hugo từng là công dân Pháp»).
"""

from __future__ import annotations

import pytest

from factatlas.records import Entity, Gender, Life, frozen_mapping
from factatlas.templates.library import load_library
from factatlas.templates.render import RenderedPrompt, Renderer

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
    _e("Q535", {"vi": "Victor Hugo"}, (HUMAN,), Gender.MASCULINE, Life.DEAD),
    _e("Q3052772", {"vi": "Emmanuel Macron"}, (HUMAN,), Gender.MASCULINE, Life.ALIVE),
    _e("Q1631", {"vi": "Édith Piaf"}, (HUMAN,), Gender.FEMININE, Life.DEAD),
    _e("Q40912", {"vi": "Frank Sinatra"}, (HUMAN,), Gender.MASCULINE, Life.DEAD),
    _e("Q15123969", {"vi": "Sam Smith"}, (HUMAN,), Gender.NON_BINARY),
    _e("Q5928", {"vi": "Jimi Hendrix"}, (HUMAN,), Gender.MASCULINE, Life.DEAD),
    _e("Q142", {"vi": "Pháp"}, (COUNTRY,)),
    _e("Q1028", {"vi": "Maroc"}, (COUNTRY,)),
    _e("Q30", {"vi": "Hoa Kỳ"}, (COUNTRY,)),
    _e("Q243", {"vi": "tháp Eiffel"}, ("Q12518",)),
    _e("Q150", {"vi": "tiếng Pháp"}, (LANGUAGE,)),
    _e("Q1860", {"vi": "tiếng Anh"}, (LANGUAGE,)),
    _e("Q25448", {"vi": "các ngôn ngữ Berber"}, ("Q34770",)),
    _e("Q177220", {"vi": "ca sĩ"}, (OCCUPATION,)),
    _e("Q37073", {"vi": "nhạc pop"}, (GENRE,)),
    _e("Q8341", {"vi": "jazz"}, (GENRE,)),
    _e("Q624044", {"vi": "âm nhạc Ả Rập"}, (GENRE,)),
    _e("Q6607", {"vi": "guitar"}, ("Q34379",)),
    _e("Q47703", {"vi": "Bố già"}, (FILM,)),
    _e("Q79784", {"vi": "Những người bạn"}, (SERIES,)),
    _e("Q13974", {"vi": "NBC"}, ("Q1616075",)),
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
    assert ("vi", "label", "rule:repeated-head", "Q37073 nhạc pop -> pop") in renderer.decisions
