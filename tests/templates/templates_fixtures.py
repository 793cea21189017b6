"""Real Wikidata entities (QIDs and labels as on Wikidata) used by the templates tests."""

from __future__ import annotations

from factatlas.records import Entity, Gender, Life, frozen_mapping

HUMAN, COUNTRY, CITY, LANGUAGE, OCCUPATION, INSTRUMENT, CONTINENT = (
    "Q5", "Q6256", "Q515", "Q34770", "Q28640", "Q34379", "Q5107")


# The life status of the people the tests name, as Wikidata records it (a date of death for the dead; the
# living were born within a century), so that templates agree with it as they do in a curated run.
LIFE = {
    **dict.fromkeys(("Q7200", "Q80440", "Q254", "Q42", "Q131248", "Q173481", "Q4616", "Q539171", "Q5928",
                     "Q1110560", "Q1631", "Q40912", "Q37001", "Q37615"), Life.DEAD),
    **dict.fromkeys(("Q34424", "Q15123969", "Q21178405", "Q3571952", "Q36268", "Q578416", "Q23215", "Q76",
                     "Q152768"), Life.ALIVE),
}


def entity(qid: str, labels: dict[str, str], classes: tuple[str, ...], gender: Gender = Gender.UNKNOWN,
           aliases: dict[str, tuple[str, ...]] | None = None, female: dict[str, str] | None = None,
           life: Life | None = None) -> Entity:
    """``female``: the P2521 (female form of label) labels, by language; ``life``: default the person's real
    status (``LIFE``), unknown for anyone else."""
    source = "P21" if gender is not Gender.UNKNOWN else ""
    life = LIFE.get(qid, Life.UNKNOWN) if life is None else life
    return Entity(qid, frozen_mapping(labels), frozen_mapping(aliases or {}), gender, source, classes,
                  female_labels=frozen_mapping(female or {}), life=life,
                  life_source="P570" if life == Life.DEAD else ("P569:within-100y" if life == Life.ALIVE else ""))


def filled(renderer, template, subject: str, obj: str) -> str:
    """The cloze ``template`` rendered for ``subject`` with ``obj`` in its slot, as a reader reads it."""
    from factatlas.records import ANSWER_MARKER
    from factatlas.templates.render import RenderedAnswer

    answer = renderer.render_answer(template, obj, subject)
    assert isinstance(answer, RenderedAnswer), answer
    return renderer.render_prompt(template, subject).text.replace(ANSWER_MARKER, answer.forms[0], 1)


ENTITIES = {e.qid: e for e in (
    entity("Q7200", {"ru": "Александр Пушкин", "en": "Alexander Pushkin", "fr": "Alexandre Pouchkine",
                     "ko": "알렉산드르 푸시킨", "ar": "ألكسندر بوشكين", "de": "Alexander Puschkin",
                     "es": "Aleksandr Pushkin", "pt": "Alexandre Pushkin"}, (HUMAN,), Gender.MASCULINE),
    entity("Q80440", {"ru": "Анна Ахматова", "en": "Anna Akhmatova", "fr": "Anna Akhmatova",
                      "ar": "آنا أخماتوفا", "es": "Anna Ajmátova", "pt": "Anna Akhmatova", "ko": "안나 아흐마토바"},
           (HUMAN,), Gender.FEMININE),
    entity("Q42", {"en": "Douglas Adams", "ar": "دوغلاس آدمز"}, (HUMAN,)),  # P21 left out on purpose
    entity("Q254", {"ru": "Вольфганг Амадей Моцарт", "de": "Wolfgang Amadeus Mozart"}, (HUMAN,), Gender.MASCULINE),
    entity("Q21178405", {"fr": "Sam Smith", "en": "Sam Smith", "ar": "سام سميث"}, (HUMAN,), Gender.NON_BINARY),
    entity("Q649", {"ru": "Москва", "en": "Moscow", "fr": "Moscou", "ko": "모스크바", "de": "Moskau",
                    "ar": "موسكو", "es": "Moscú"}, (CITY,), aliases={"ru": ("Москва-река",)}),
    entity("Q891", {"ru": "Нижний Новгород", "en": "Nizhny Novgorod"}, (CITY,)),
    entity("Q172", {"ru": "Торонто", "en": "Toronto", "ko": "토론토", "fr": "Toronto"}, (CITY,)),
    entity("Q656", {"ru": "Санкт-Петербург", "ko": "상트페테르부르크"}, (CITY,)),
    entity("Q908", {"ru": "Ростов-на-Дону"}, (CITY,)),
    entity("Q60", {"ru": "Нью-Йорк", "en": "New York City", "ko": "뉴욕", "fr": "New York"}, (CITY,)),
    entity("Q1490", {"ko": "도쿄", "ru": "Токио", "ja": "東京都"}, (CITY,)),
    entity("Q8684", {"ko": "서울", "ru": "Сеул"}, (CITY,)),
    entity("Q85", {"fr": "Le Caire", "es": "El Cairo", "ar": "القاهرة", "ru": "Каир"}, (CITY,)),
    entity("Q1128437", {"fr": "Gouvernorat de Ninive", "ru": "Найнава"}, ("Q11828004",)),
    entity("Q1246047", {"fr": "Émirat d'Abou Dabi"}, ("Q11828004",)),
    entity("Q90", {"fr": "Paris", "de": "Paris", "es": "París", "ru": "Париж", "ar": "باريس"}, (CITY,)),
    entity("Q30", {"ru": "Соединённые Штаты Америки", "en": "United States of America", "fr": "États-Unis",
                   "es": "Estados Unidos", "pt": "Estados Unidos", "de": "Vereinigte Staaten",
                   "ko": "미국", "ar": "الولايات المتحدة", "it": "Stati Uniti d'America",
                   "el": "Ηνωμένες Πολιτείες της Αμερικής"}, (COUNTRY,), aliases={"en": ("USA", "US")}),
    entity("Q16", {"ru": "Канада", "fr": "Canada", "es": "Canadá", "pt": "Canadá", "de": "Kanada", "ko": "캐나다",
                   "ar": "كندا", "it": "Canada", "el": "Καναδάς"}, (COUNTRY,)),
    entity("Q142", {"ru": "Франция", "fr": "France", "es": "Francia", "pt": "França", "de": "Frankreich",
                    "ko": "프랑스", "ar": "فرنسا", "it": "Francia", "el": "Γαλλία"}, (COUNTRY,)),
    entity("Q794", {"fr": "Iran", "de": "Iran", "es": "Irán", "pt": "Irã", "ar": "إيران"}, (COUNTRY,)),
    entity("Q38", {"fr": "Italie", "es": "Italia", "pt": "Itália", "de": "Italien", "it": "Italia",
                   "ru": "Италия", "ko": "이탈리아"}, (COUNTRY,)),
    entity("Q668", {"es": "India", "fr": "Inde", "pt": "Índia", "de": "Indien", "ko": "인도"}, (COUNTRY,)),
    entity("Q419", {"es": "Perú", "fr": "Pérou", "pt": "Peru"}, (COUNTRY,)),
    entity("Q155", {"pt": "Brasil", "es": "Brasil", "fr": "Brésil", "de": "Brasilien"}, (COUNTRY,)),
    entity("Q45", {"pt": "Portugal", "fr": "Portugal", "es": "Portugal"}, (COUNTRY,)),
    entity("Q39", {"de": "Schweiz", "fr": "Suisse"}, (COUNTRY,)),
    entity("Q796", {"de": "Irak", "ar": "العراق", "fr": "Irak"}, (COUNTRY,)),
    entity("Q183", {"de": "Deutschland", "fr": "Allemagne", "ko": "독일"}, (COUNTRY,)),
    entity("Q241", {"fr": "Cuba", "es": "Cuba"}, (COUNTRY,)),
    entity("Q801", {"fr": "Israël"}, (COUNTRY,)),
    entity("Q96", {"fr": "Mexique", "es": "México"}, (COUNTRY,)),
    entity("Q878", {"de": "Vereinigte Arabische Emirate", "ar": "الإمارات العربية المتحدة"}, (COUNTRY,)),
    entity("Q79", {"ar": "مصر", "fr": "Égypte", "ru": "Египет"}, (COUNTRY,)),
    entity("Q1028", {"ar": "المغرب", "fr": "Maroc"}, (COUNTRY,)),
    entity("Q884", {"ko": "대한민국", "ru": "Республика Корея"}, (COUNTRY,)),
    entity("Q150", {"fr": "français", "es": "español", "pt": "língua francesa", "ar": "لغة فرنسية"}, (LANGUAGE,)),
    entity("Q1860", {"fr": "anglais", "es": "inglés", "pt": "língua inglesa", "de": "Englisch"}, (LANGUAGE,)),
    entity("Q5994", {"fr": "piano", "es": "piano", "pt": "piano", "de": "Klavier", "it": "pianoforte",
                     "ru": "фортепиано", "ar": "بيانو", "ko": "피아노"}, (INSTRUMENT,)),
    entity("Q6607", {"fr": "guitare", "es": "guitarra", "pt": "guitarra", "de": "Gitarre", "it": "chitarra",
                     "ar": "غيتار", "ko": "기타"}, (INSTRUMENT,)),
    entity("Q8338", {"it": "tromba", "fr": "trompette"}, (INSTRUMENT,)),
    entity("Q8371", {"it": "sassofono", "fr": "saxophone"}, (INSTRUMENT,)),
    entity("Q46", {"fr": "Europe", "es": "Europa", "ru": "Европа", "el": "Ευρώπη"}, (CONTINENT,)),
    entity("Q36834", {"ar": "ملحن", "fr": "compositeur", "es": "compositor"}, (OCCUPATION,)),
    entity("Q1930187", {"ar": "صحفي", "fr": "journaliste"}, (OCCUPATION,)),
    entity("Q1034542", {"ko": "KBS", "ru": "KBS"}, ("Q1616075",)),
    entity("Q499015", {"ko": "MBC"}, ("Q1616075",)),
    entity("Q9000001", {"ko": "2020"}, ()),
    entity("Q95", {"ko": "Google"}, ()),
    entity("Q9000002", {"ko": "7번가"}, ()),
)}
