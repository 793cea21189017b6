"""zh, ja, ko as a native reader reads them (issue 26): one exact-output test per class of error the
reading of the three shipped pairs found, each with the rendered sentence, the gold filler and a
candidate filler. Entities carry their Wikidata labels as curated in the embedded sample."""

from __future__ import annotations

import pytest

from factatlas.records import Gender
from factatlas.templates.backend_ko import attach
from factatlas.templates.library import load_library
from factatlas.templates.render import Renderer

from .templates_fixtures import entity

FILM, SERIES, HUMAN, COUNTRY, LANGUAGE, OCCUPATION, CONTINENT, GENRE = (
    "Q11424", "Q5398426", "Q5", "Q6256", "Q34770", "Q28640", "Q5107", "Q188451")


ENTITIES = {e.qid: e for e in (
    entity("Q61448040", {"ko": "기생충", "zh": "寄生虫", "ja": "パラサイト 半地下の家族"}, (FILM,)),
    entity("Q79784", {"ko": "프렌즈", "zh": "老友记", "ja": "フレンズ"}, (SERIES,)),
    entity("Q495410", {"ko": "겨울연가"}, (SERIES,)),
    entity("Q884", {"ko": "대한민국"}, (COUNTRY,)),
    entity("Q30", {"ko": "미국"}, (COUNTRY,)),
    entity("Q13974", {"ko": "NBC"}, ("Q1616075",)),
    entity("Q1028", {"zh": "摩洛哥", "ja": "モロッコ"}, (COUNTRY,)),
    entity("Q25448", {"zh": "柏柏尔语族", "ja": "ベルベル諸語", "ko": "베르베르어"}, (LANGUAGE,)),
    entity("Q13955", {"zh": "阿拉伯语", "ja": "アラビア語"}, (LANGUAGE,)),
    entity("Q36268", {"zh": "碧姫·芭铎", "ja": "ブリジット・バルドー"}, (HUMAN,), Gender.FEMININE),
    entity("Q90", {"zh": "巴黎"}, ("Q515",)),
    entity("Q578416", {"ko": "사미라 사이드"}, (HUMAN,), Gender.FEMININE),
    entity("Q10800557", {"ko": "영화 배우"}, (OCCUPATION,)),
    entity("Q2526255", {"ko": "영화 감독"}, (OCCUPATION,)),
    entity("Q177220", {"ko": "가수", "ja": "歌手"}, (OCCUPATION,)),
    entity("Q334", {"ko": "싱가포르"}, (COUNTRY,)),
    entity("Q3960", {"ko": "오스트레일리아 대륙"}, (CONTINENT,)),
    entity("Q48", {"ko": "아시아"}, (CONTINENT,)),
    entity("Q539171", {"ko": "달리다", "ja": "ダリダ"}, (HUMAN,), Gender.FEMININE),
    entity("Q1062400", {"ko": "샹송", "ja": "シャンソン"}, (GENRE,)),
    entity("Q1344", {"ko": "오페라", "ja": "オペラ"}, (GENRE,)),
    # Wikidata labels of the P264 objects of Dalida (Barclay) and Elvis Presley (RCA Records)
    entity("Q2535085", {"ko": "바클레이", "ja": "バークレー"}, ("Q18127",)),
    entity("Q202585", {"ko": "RCA 레코드", "ja": "RCAレコード"}, ("Q18127",)),
    entity("Q5928", {"ko": "지미 헨드릭스", "ja": "ジミ・ヘンドリックス"}, (HUMAN,), Gender.MASCULINE),
    entity("Q6607", {"ko": "기타", "ja": "ギター"}, ("Q34379",)),
    entity("Q150", {"ko": "프랑스어", "ja": "フランス語"}, (LANGUAGE,)),
    entity("Q652", {"ko": "이탈리아어", "ja": "イタリア語"}, (LANGUAGE,)),
    entity("Q142", {"ko": "프랑스", "ja": "フランス"}, (COUNTRY,)),
    entity("Q79", {"ko": "이집트", "ja": "エジプト"}, (COUNTRY,)),
)}


@pytest.fixture(scope="module")
def lib():
    return load_library(("zh", "ja", "ko"))


def _sentence(lib, tid: str, subject: str, objects: tuple[str, ...]) -> tuple[str, ...]:
    """The prompt with each object's filler in it (the first object is the gold, the rest candidates)."""
    renderer = Renderer(ENTITIES)
    template = lib.get(tid.split(":")[0], tid.split(":")[1])
    text = renderer.render_prompt(template, subject).text
    return tuple(text.replace("[Y]", renderer.render_answer(template, o, subject).forms[0]) for o in objects)


def test_ko_work_titles_are_in_title_marks_with_the_particle_after_the_mark(lib):
    # unmarked, «기생충은 대한민국에서 제작되었다» reads "the parasite was made in Korea"
    assert _sentence(lib, "ko:P495/2", "Q61448040", ("Q884", "Q30")) == (
        "〈기생충〉은 대한민국에서 제작되었다.", "〈기생충〉은 미국에서 제작되었다.")
    assert _sentence(lib, "ko:P449/3", "Q79784", ("Q13974",)) == ("〈프렌즈〉를 처음 방송한 방송사는 NBC이다.",)
    assert _sentence(lib, "ko:P449/3", "Q495410", ("Q13974",)) == ("〈겨울연가〉를 처음 방송한 방송사는 NBC이다.",)
    assert attach("〈기생충〉", "은") == ("〈기생충〉은", "exact")  # the mark is not a sound
    # zh/ja keep their marks around the title
    renderer = Renderer(ENTITIES)
    assert renderer.render_prompt(lib.get("zh", "P495/2"), "Q79784").text == "《老友记》制作于[Y]。"
    assert renderer.render_prompt(lib.get("ja", "P495/2"), "Q79784").text == "『フレンズ』は[Y]で製作された。"


def test_language_families_are_named_as_the_language(lib):
    # «柏柏尔语族» / «ベルベル諸語» name a branch of languages, not the official language of Morocco
    assert _sentence(lib, "zh:P37/1", "Q1028", ("Q13955", "Q25448")) == (
        "摩洛哥的官方语言是阿拉伯语。", "摩洛哥的官方语言是柏柏尔语。")
    assert _sentence(lib, "ja:P37/2", "Q1028", ("Q13955", "Q25448")) == (
        "モロッコではアラビア語が公用語である。", "モロッコではベルベル語が公用語である。")


def test_zh_names_are_written_in_simplified_characters(lib):
    # Wikidata's zh label writes the Japanese kanji «姫»; Simplified Chinese writes «姬»
    assert _sentence(lib, "zh:P19/2", "Q36268", ("Q90",)) == ("碧姬·芭铎的出生地是巴黎。",)


def test_ko_dictionary_compounds_are_written_without_a_space(lib):
    # 영화배우, 영화감독: one word each in the Standard Korean Dictionary, with the particle after them
    assert _sentence(lib, "ko:P106/3", "Q578416", ("Q10800557", "Q2526255", "Q177220")) == (
        "사미라 사이드는 영화배우로 알려져 있다.", "사미라 사이드는 영화감독으로 알려져 있다.",
        "사미라 사이드는 가수로 알려져 있다.")


def test_ko_continent_template_does_not_repeat_its_head_noun(lib):
    # «[Y] 대륙에 속해 있다» gave «오스트레일리아 대륙 대륙에»
    assert _sentence(lib, "ko:P30/3", "Q334", ("Q48", "Q3960")) == (
        "싱가포르가 속한 대륙은 아시아이다.", "싱가포르가 속한 대륙은 오스트레일리아 대륙이다.")


def test_genres_are_not_played_by_singers(lib):
    # «샹송을 연주한다» / «シャンソンを演奏する»: a singer does not play a genre like an instrument
    assert _sentence(lib, "ko:P136/2", "Q539171", ("Q1062400", "Q1344")) == (
        "달리다의 음악은 샹송 장르에 속한다.", "달리다의 음악은 오페라 장르에 속한다.")
    assert _sentence(lib, "ja:P136/2", "Q539171", ("Q1062400", "Q1344")) == (
        "ダリダの音楽はシャンソンのジャンルに属する。", "ダリダの音楽はオペラのジャンルに属する。")


def test_career_templates_hold_for_the_dead_as_for_the_living(lib):
    # Dalida died in 1987: «ダリダは歌手として働いている», «달리다는 가수로 일하고 있다», «…と契約している»,
    # «…음반을 발매한다» say she works, is under contract, releases records now. Read in the second
    # reading of issue 26 (seed 2026): 6 of 260 sampled ja prompts, 6 of 260 ko prompts.
    assert _sentence(lib, "ja:P106/3", "Q539171", ("Q177220",)) == ("ダリダは歌手として知られている。",)
    assert _sentence(lib, "ko:P106/3", "Q539171", ("Q177220",)) == ("달리다는 가수로 알려져 있다.",)
    assert _sentence(lib, "ja:P264/1", "Q539171", ("Q2535085", "Q202585")) == (
        "ダリダはバークレーと契約を結んだ。", "ダリダはRCAレコードと契約を結んだ。")
    assert _sentence(lib, "ko:P264/1", "Q539171", ("Q2535085", "Q202585")) == (
        "달리다는 바클레이와 계약을 맺었다.", "달리다는 RCA 레코드와 계약을 맺었다.")
    assert _sentence(lib, "ja:P264/3", "Q539171", ("Q2535085",)) == ("ダリダはバークレーからレコードをリリースした。",)
    assert _sentence(lib, "ko:P264/3", "Q539171", ("Q2535085", "Q202585")) == (
        "달리다는 바클레이에서 음반을 발매했다.", "달리다는 RCA 레코드에서 음반을 발매했다.")
    renderer = Renderer(ENTITIES)
    assert renderer.render_prompt(lib.get("ja", "P264/q1"), "Q539171").text == (
        "ダリダはどのレコードレーベルと契約を結びましたか？")
    assert renderer.render_prompt(lib.get("ko", "P264/q1"), "Q539171").text == "달리다는 어느 음반사와 계약을 맺었습니까?"


def test_nationality_instrument_and_language_templates_hold_for_the_dead(lib):
    # «ダリダはフランスの国籍を持っている», «지미 헨드릭스는 기타를 연주한다», «ダリダはフランス語を話す»,
    # ja agrees with life status (である / であった, ですか / でしたか); the ko copula 이다 of a definition is
    # declared timeless (Korean encyclopedic style says it of the dead).
    # «달리다는 이탈리아어를 모국어로 사용한다»: a present state or habit said of the dead (Dalida d. 1987,
    # Jimi Hendrix d. 1970); the second reading (seed 2026) found it in 13 of 260 ja and 17 of 260 ko prompts.
    def renders(tid: str, subject: str, objects: tuple[str, ...]) -> tuple[str, ...]:
        return _sentence(lib, tid, subject, objects)

    assert renders("ja:P27/2", "Q539171", ("Q142", "Q79")) == (
        "ダリダはフランスの国籍を持っていた。", "ダリダはエジプトの国籍を持っていた。")
    assert renders("ko:P27/2", "Q539171", ("Q142", "Q79")) == ("달리다는 프랑스 국적의 인물이다.", "달리다는 이집트 국적의 인물이다.")
    assert renders("ko:P103/2", "Q539171", ("Q652", "Q150")) == ("달리다는 이탈리아어 원어민이다.", "달리다는 프랑스어 원어민이다.")
    assert renders("ja:P1303/1", "Q5928", ("Q6607",)) == ("ジミ・ヘンドリックスはギターの奏者であった。",)
    assert renders("ja:P1303/2", "Q5928", ("Q6607",)) == ("ジミ・ヘンドリックスの演奏楽器はギターであった。",)
    assert renders("ko:P1303/1", "Q5928", ("Q6607",)) == ("지미 헨드릭스는 기타 연주자이다.",)
    assert renders("ko:P1303/2", "Q5928", ("Q6607",)) == ("지미 헨드릭스의 연주 악기는 기타이다.",)
    assert renders("ja:P1412/1", "Q539171", ("Q150", "Q652")) == ("ダリダはフランス語の話者であった。", "ダリダはイタリア語の話者であった。")
    assert renders("ja:P1412/2", "Q539171", ("Q150",)) == ("ダリダの使用言語の一つはフランス語であった。",)
    assert renders("ja:P1412/3", "Q539171", ("Q150",)) == ("ダリダの使用言語はフランス語であった。",)
    assert renders("ko:P1412/1", "Q539171", ("Q150",)) == ("달리다의 사용 언어는 프랑스어이다.",)
    assert renders("ko:P1412/2", "Q539171", ("Q150",)) == ("달리다의 사용 언어 중 하나는 프랑스어이다.",)
    assert renders("ko:P1412/3", "Q539171", ("Q150",)) == ("달리다는 프랑스어 사용자이다.",)
    renderer = Renderer(ENTITIES)
    questions = {tid: renderer.render_prompt(lib.get(*tid.split(":")), subject).text for tid, subject in (
        ("ja:P27/q1", "Q539171"), ("ja:P1303/q1", "Q5928"), ("ja:P1412/q1", "Q539171"),
        ("ko:P1303/q1", "Q5928"), ("ko:P1412/q1", "Q539171"))}
    assert questions == {
        "ja:P27/q1": "ダリダの国籍はどの国でしたか？", "ja:P1303/q1": "ジミ・ヘンドリックスの演奏楽器は何でしたか？",
        "ja:P1412/q1": "ダリダの使用言語は何でしたか？", "ko:P1303/q1": "지미 헨드릭스의 연주 악기는 무엇입니까?",
        "ko:P1412/q1": "달리다의 사용 언어는 무엇입니까?"}
