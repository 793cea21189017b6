"""Hungarian: case suffixes and the article (templates/backend_hu.py), over exact forms and real renders.

Harmony with the neutral i (Párizsban, Berlinben, Jeruzsálemben), lengthening (Ankarában, Chilében,
Chicagóban), the in/on split of place names (Londonban, but Budapesten, Szegeden, Magyarországon, a
Fülöp-szigeteken), silent endings with a hyphen (Bordeaux-ban, Marseille-jel), v-assimilation (Párizzsal,
Svájccal), and the article a/az by the sound that follows, only where the name takes one.
"""

from __future__ import annotations

import pytest

from factatlas.templates.backend_hu import PARTICLES, HungarianBackend, article_for, harmony_of, sound_of
from factatlas.templates.backend_registry import particle_inventory
from factatlas.templates.lexicon import LexiconEntry
from factatlas.templates.morphology import Features, InflectionRequest
from tests.templates.conftest import PAIRS

BACKEND = HungarianBackend()


def _form(label: str, suffix: str | None, etype: str = "settlement", article: str | None = None,
          classes: tuple[str, ...] = (), entry: LexiconEntry | None = None) -> str:
    result = BACKEND.inflect(label, "hu", Features(particle=suffix, article=article),
                             InflectionRequest(entity_type=etype, classes=classes, entry=entry))
    assert result is not None
    return result.form


def _on(qid: str, label: str) -> LexiconEntry:
    return LexiconEntry(qid, "hu", label, prep="on")


@pytest.mark.parametrize(("label", "suffix", "expected"), [
    # harmony: the neutral i/í lets the back vowel decide; e after a back vowel makes it front
    ("London", "ban", "Londonban"), ("Párizs", "ban", "Párizsban"), ("Berlin", "ban", "Berlinben"),
    ("Madrid", "ban", "Madridban"), ("Jeruzsálem", "ban", "Jeruzsálemben"), ("Buenos Aires", "ban", "Buenos Airesben"),
    ("Bécs", "ból", "Bécsből"), ("Kairó", "ba", "Kairóba"), ("Szöul", "ban", "Szöulban"),
    # lengthening of a final a, e, o
    ("Ankara", "ban", "Ankarában"), ("Chile", "ban", "Chilében"), ("Chicago", "ban", "Chicagóban"),
    ("Kairó", "nak", "Kairónak"), ("Tennessee", "ban", "Tennesseeben"),
    # silent endings: a hyphen, the suffix agreeing with the sound
    ("Bordeaux", "ban", "Bordeaux-ban"), ("Marseille", "ban", "Marseille-ben"), ("Marseille", "val", "Marseille-jel"),
    ("Bordeaux", "val", "Bordeaux-val"), ("Illinois", "ban", "Illinois-ban"), ("Île-de-France", "ban", "Île-de-France-ban"),
    # v-assimilation, digraphs doubled, a double letter with a hyphen, a sound the spelling hides
    ("Párizs", "val", "Párizzsal"), ("London", "val", "Londonnal"), ("Kairó", "val", "Kairóval"),
    ("Svájc", "val", "Svájccal"), ("Damaszkusz", "val", "Damaszkusszal"), ("Zürich", "val", "Zürichhel"),
    ("Nouakchott", "val", "Nouakchott-tal"), ("Paraguay", "val", "Paraguayjal"), ("Nápoly", "val", "Nápollyal"),
    # the on-class by rule: -szigetek, -föld
    ("Fülöp-szigetek", "ban", "Fülöp-szigeteken"), ("Thaiföld", "ban", "Thaiföldön"), ("Thaiföld", "ból", "Thaiföldről"),
    # accusative: straight -t or a linking vowel by harmony
    ("London", "t", "Londont"), ("Bagdad", "t", "Bagdadot"), ("Zürich", "t", "Zürichet"), ("Thaiföld", "t", "Thaiföldöt"),
])
def test_place_names_take_the_suffix_their_sound_asks_for(label, suffix, expected):
    assert _form(label, suffix) == expected


def test_the_in_on_split_comes_from_the_lexicon_for_single_names():
    assert _form("Budapest", "ban") == "Budapestben"  # no entry: the in-class, which is wrong for Budapest
    assert _form("Budapest", "ban", entry=_on("Q1781", "Budapest")) == "Budapesten"
    assert _form("Szeged", "ban", entry=_on("Q81581", "Szeged")) == "Szegeden"
    assert _form("Szeged", "ból", entry=_on("Q81581", "Szeged")) == "Szegedről"
    assert _form("Magyarország", "ban", entry=_on("Q28", "Magyarország")) == "Magyarországon"
    assert _form("Hawaii", "ban", entry=_on("Q782", "Hawaii")) == "Hawaiin"
    assert _form("Madeira", "ba", entry=_on("Q26253", "Madeira")) == "Madeirára"
    assert _form("London", "ban", entry=LexiconEntry("Q84", "hu", "London", prep="in")) == "Londonban"


@pytest.mark.parametrize(("label", "etype", "suffix", "classes", "expected"), [
    ("Amerikai Egyesült Államok", "country", "ban", (), "az Amerikai Egyesült Államokban"),
    ("Egyesült Királyság", "country", "val", (), "az Egyesült Királysággal"),
    ("Holland Királyság", "country", None, (), "a Holland Királyság"),
    ("Comore-szigetek", "country", "ban", (), "a Comore-szigeteken"),
    ("Franciaország", "country", "ban", (), "Franciaországban"),  # a country without a common-noun head
    ("Kairó", "settlement", "ban", (), "Kairóban"),
    ("Eiffel-torony", "place", None, ("Q12518",), "az Eiffel-torony"), ("Duna", "place", None, ("Q4022",), "a Duna"),
    ("arab nyelv", "language", "t", (), "az arab nyelvet"), ("gitár", "instrument", "on", (), "a gitáron"),
    ("zongora", "instrument", "on", (), "a zongorán"), ("úd", "instrument", "on", (), "az údon"),
    ("NBC", "tv-network", None, (), "az NBC"), ("HBO", "tv-network", None, (), "a HBO"),
    ("Universal Music Group", "record-label", None, (), "a Universal Music Group"),
    ("EMI", "record-label", None, (), "az EMI"), ("2M TV", "tv-network", None, (), "a 2M TV"),
    # acronyms: the article, a hyphen, the suffix of the last letter's name (AkH § 279)
    ("USA", "country", "ban", (), "az USA-ban"), ("EAE", "country", "val", (), "az EAE-vel"),
    ("ENSZ", "country", "val", (), "az ENSZ-szel"),
])
def test_the_article_only_where_the_name_takes_one(label, etype, suffix, classes, expected):
    assert _form(label, suffix, etype, "def", classes) == expected


def test_languages_occupations_and_works():
    assert _form("amerikai angol", "on", "language") == "amerikai angol nyelven"  # "in a language" needs the noun
    assert _form("arab nyelv", "on", "language") == "arab nyelven"
    assert _form("énekesnő", "ként", "occupation") == "énekesnőként"
    assert _form("zongorista", "ként", "occupation") == "zongoristaként"  # no lengthening before -ként
    series, film = ("Q5398426",), ("Q11424",)
    assert _form("Jóbarátok", None, "work", "def", series) == "a Jóbarátok című sorozat"
    assert _form("Életrevalók", None, "work", "def", film) == "az Életrevalók című film"
    assert _form("A Keresztapa", None, "work", "def", film) == "A Keresztapa című film"
    assert _form("Jóbarátok", "ban", "work", "def", series) == "a Jóbarátok című sorozatban"
    failed = BACKEND.inflect("Jóbarátok", "hu", Features(article="def"), InflectionRequest(entity_type="work"))
    assert failed.status == "failed" and "work_nouns" in failed.detail


def test_sounds_articles_and_statuses():
    assert (harmony_of("párizs"), harmony_of("berlin"), harmony_of("thaiföld"), harmony_of("zürich")) == \
        ("back", "front", "rounded", "front")
    assert sound_of("Marseille").silent and sound_of("Marseille").last == "j"
    assert [article_for(w) for w in ("arab", "HBO", "NBC", "RCA", "Universal", "One Piece", "1 csatorna", "Île")] == \
        ["az", "a", "az", "az", "a", "a", "az", "az"]
    assert BACKEND.inflect("Kairó", "hu", Features(particle="ban"), InflectionRequest()).status == "exact"
    foreign = BACKEND.inflect("Wrexham", "hu", Features(particle="ban"), InflectionRequest())
    assert foreign.status == "guessed" and "hu_morphology.yaml" in foreign.detail
    assert BACKEND.inflect("Kairó", "hu", Features(particle="da"), InflectionRequest()) is None
    assert BACKEND.inflect("Kairó", "hu", Features(case="loc"), InflectionRequest()) is None
    assert BACKEND.inflect("Kairó", "hu", Features(), InflectionRequest()).form == "Kairó"
    assert particle_inventory("hungarian") == ("Hungarian", PARTICLES)


def test_an_empty_option_leaves_no_space_before_the_full_stop():
    from dataclasses import replace

    from factatlas.records import Entity, Gender, Life, frozen_mapping
    from factatlas.templates.library import load_library
    from factatlas.templates.render import Renderer

    from .templates_fixtures import filled

    umm = Entity("Q1110560", frozen_mapping({"hu": "Umm Kulszúm"}), frozen_mapping(), Gender.FEMININE, "P21", ("Q5",))
    arabic = Entity("Q13955", frozen_mapping({"hu": "arab nyelv"}), frozen_mapping(), Gender.UNKNOWN, "",
                    ("Q1288568",))
    egypt = Entity("Q79", frozen_mapping({"hu": "Egyiptom"}), frozen_mapping(), Gender.UNKNOWN, "", ("Q6256",))
    lib = load_library(["hu"])
    for life, native, citizen, question in (
            (Life.DEAD, "Umm Kulszúm anyanyelve az arab nyelv volt.", "Umm Kulszúm Egyiptom állampolgára volt.",
             "Mi volt Umm Kulszúm anyanyelve?"),
            (Life.UNKNOWN, "Umm Kulszúm anyanyelve az arab nyelv volt.", "Umm Kulszúm Egyiptom állampolgára volt.",
             "Mi volt Umm Kulszúm anyanyelve?"),
            (Life.ALIVE, "Umm Kulszúm anyanyelve az arab nyelv.", "Umm Kulszúm Egyiptom állampolgára.",
             "Mi Umm Kulszúm anyanyelve?")):
        r = Renderer({e.qid: e for e in (replace(umm, life=life), arabic, egypt)})
        assert filled(r, lib.get("hu", "P103/1"), "Q1110560", "Q13955") == native
        assert filled(r, lib.get("hu", "P27/1"), "Q1110560", "Q79") == citizen
        assert r.render_prompt(lib.get("hu", "P103/q1"), "Q1110560").text == question


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS)
def test_the_shipped_pairs_build_in_hungarian_with_no_failure_and_no_guess(shipped_builds, pair):
    import json

    stats = json.loads((shipped_builds[pair] / "build" / "stats.json").read_text("utf-8"))
    assert stats["dropped"] == {}
    assert stats["prompts_per_language"]["hu"] == stats["prompts_per_language"]["en"] == 4 * stats["facts"]
    assert stats["label_coverage"]["hu"] == 1.0
    assert set(stats["answer_inflection"]["hu"]) <= {"exact", "none"}
    assert stats["duplicate_surface_forms"]["hu"]["forms"] == 0


@pytest.mark.slow
def test_real_renders_read_as_a_speaker_writes_them(sample_renders):
    rows = {r["prompt_id"]: r for r in sample_renders.rows("arab-west", ("hu",))}

    def sentence(pid: str) -> str:
        r = rows[pid]
        return r["text"].replace("[Y]", r["gold_forms"][0][0]) if r["kind"] == "cloze" else r["text"]

    expected = {
        "arab:P19:Q1391164|hu|P19/1": "Tamer Hosny Kairóban született.",
        "west:P20:Q2831|hu|P20/1": "Michael Jackson Los Angelesben hunyt el.",
        "west:P36:Q30|hu|P36/1": "Az Amerikai Egyesült Államok fővárosa Washington.",
        "arab:P37:Q79|hu|P37/1": "Egyiptom hivatalos nyelve az arab nyelv.",
        "west:P17:Q243|hu|P17/1": "Az Eiffel-torony Franciaországban található.",
        "arab:P364:Q3184088|hu|P364/1": "Az Omar című sorozat eredeti nyelve az arab nyelv.",
        "west:P449:Q79784|hu|P449/1": "A Jóbarátok című sorozat először az NBC csatornán került adásba.",
        "arab:P106:Q3247658|hu|P106/3": "Fejrúz énekesnőként vált ismertté.",
        "west:P1303:Q5928|hu|P1303/1": "Jimi Hendrix a gitáron való játékáról ismert.",
    }
    assert {pid: sentence(pid) for pid in expected} == expected


def test_the_present_tense_counter_sees_every_form_the_living_take_and_none_of_the_others():
    """data/tense.yaml `present: hu` matches each `alive` verb («szerepel»); the other `alive` forms are the
    zero copula of the present, whose group says «… volt» for the dead and the unknown."""
    from .test_templates_uk import _present_forms_cover_the_templates

    _present_forms_cover_the_templates("hu", zero_copula="volt")


def test_a_name_headed_by_an_adjective_and_a_common_noun_takes_the_article():
    """The lexicon gives «a Madridi autonóm közösség» its article, as a subject and as an answer; a name and
    its kind noun («Kairó kormányzóság», like «Pest megye») stay bare."""
    from factatlas.records import Entity, Gender, frozen_mapping
    from factatlas.templates.library import load_library
    from factatlas.templates.render import Renderer

    from .templates_fixtures import filled

    def place(qid: str, label: str, classes: tuple[str, ...]) -> Entity:
        return Entity(qid, frozen_mapping({"hu": label}), frozen_mapping(), Gender.UNKNOWN, "", classes)

    people = Entity("Q1", frozen_mapping({"hu": "Antonio Banderas"}), frozen_mapping(), Gender.MASCULINE, "P21",
                    ("Q5",))
    r = Renderer({e.qid: e for e in (people, place("Q5756", "Madridi autonóm közösség", ("Q10742",)),
                                      place("Q3258", "Ausztráliai fővárosi terület", ("Q1061238",)),
                                      place("Q29", "Spanyolország", ("Q6256",)),
                                      place("Q408", "Ausztrália", ("Q6256",)),
                                      place("Q1", "Antonio Banderas", ("Q5",)))})
    lib = load_library(["hu"])
    assert filled(r, lib.get("hu", "P19/1"), "Q1", "Q5756") == "Antonio Banderas a Madridi autonóm közösségben született."
    assert filled(r, lib.get("hu", "P17/1"), "Q5756", "Q29") == "A Madridi autonóm közösség Spanyolországban található."
    assert filled(r, lib.get("hu", "P17/3"), "Q3258", "Q408") == \
        "Az ország, amelyben az Ausztráliai fővárosi terület található, Ausztrália."
