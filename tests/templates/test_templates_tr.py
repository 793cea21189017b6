"""Turkish: case suffixes by the name's reading (templates/backend_tr.py), over exact forms and real renders.

The cases the issue names (Ankara'da, Kahire'de, İstanbul'da, Fas'ta), foreign names read otherwise than
spelt (Bordeaux'da, New York'ta, Michael Jackson'ın), acronyms by their letter names (ABD'de, BAE'de),
buffers after a vowel and the pronominal n after a possessive compound (Mısır'ın, Amerika Birleşik
Devletleri'nde), and common nouns without the apostrophe, softening their last consonant (Arapçada,
kitabı, müziği).
"""

from __future__ import annotations

import pytest

from factatlas.templates.backend_registry import particle_inventory
from factatlas.templates.backend_tr import PARTICLES, TurkishBackend, attach, reading, soften, suffix_for
from factatlas.templates.morphology import Features, InflectionRequest
from tests.templates.conftest import PAIRS

BACKEND = TurkishBackend()


def _form(label: str, suffix: str, etype: str = "settlement", classes: tuple[str, ...] = ()) -> str:
    result = BACKEND.inflect(label, "tr", Features(particle=suffix), InflectionRequest(entity_type=etype,
                                                                                        classes=classes))
    assert result is not None
    return result.form


@pytest.mark.parametrize(("label", "suffix", "expected"), [
    # harmony and d/t (the examples)
    ("Ankara", "da", "Ankara'da"), ("Kahire", "da", "Kahire'de"), ("İstanbul", "da", "İstanbul'da"),
    ("Fas", "da", "Fas'ta"), ("Paris", "da", "Paris'te"), ("Fas", "dan", "Fas'tan"), ("Kudüs", "da", "Kudüs'te"),
    # the four genitive vowels, buffers after a vowel
    ("Mısır", "in", "Mısır'ın"), ("Kahire", "in", "Kahire'nin"), ("Tokyo", "in", "Tokyo'nun"),
    ("Ürdün", "in", "Ürdün'ün"), ("Berlin", "in", "Berlin'in"), ("Trablus", "in", "Trablus'un"),
    ("Kahire", "a", "Kahire'ye"), ("Kahire", "ı", "Kahire'yi"), ("Fas", "a", "Fas'a"), ("Fas", "ı", "Fas'ı"),
    ("Kahire", "la", "Kahire'yle"), ("Paris", "la", "Paris'le"),
    # copula and locative + copula
    ("Paris", "dır", "Paris'tir"), ("Kahire", "dır", "Kahire'dir"), ("Bağdat", "dır", "Bağdat'tır"),
    ("Seul", "dır", "Seul'dür"), ("Fransa", "dadır", "Fransa'dadır"), ("Paris", "dadır", "Paris'tedir"),
    # foreign names by their reading
    ("Bordeaux", "da", "Bordeaux'da"), ("New York", "da", "New York'ta"), ("Los Angeles", "da", "Los Angeles'ta"),
    ("Georgetown", "in", "Georgetown'un"), ("Washington, D.C.", "in", "Washington, D.C.'nin"),
    # acronyms by their letter names, numbers by their reading
    ("ABD", "da", "ABD'de"), ("BAE", "da", "BAE'de"), ("NBC", "in", "NBC'nin"), ("HBO", "da", "HBO'da"),
    ("KBS2", "da", "KBS2'de"), ("Network 10", "da", "Network 10'da"), ("Antena 3", "da", "Antena 3'te"),
    # the pronominal n after a possessive compound; no apostrophe after a lower-case common-noun head
    ("Amerika Birleşik Devletleri", "da", "Amerika Birleşik Devletleri'nde"),
    ("Amerika Birleşik Devletleri", "in", "Amerika Birleşik Devletleri'nin"),
    ("Amerika Birleşik Devletleri", "dır", "Amerika Birleşik Devletleri'dir"),
    ("Amerika Birleşik Devletleri", "dadır", "Amerika Birleşik Devletleri'ndedir"),
    ("Eyfel Kulesi", "in", "Eyfel Kulesi'nin"), ("Hollanda Krallığı", "da", "Hollanda Krallığı'nda"),
    ("New York eyaleti", "da", "New York eyaletinde"),
])
def test_proper_names_take_the_apostrophe_and_the_suffix_of_their_reading(label, suffix, expected):
    assert _form(label, suffix) == expected


@pytest.mark.parametrize(("label", "etype", "suffix", "expected"), [
    ("Michael Jackson", "person", "in", "Michael Jackson'ın"), ("Zinedine Zidane", "person", "in", "Zinedine Zidane'ın"),
    ("Brigitte Bardot", "person", "in", "Brigitte Bardot'nun"), ("Charles de Gaulle", "person", "in",
                                                                   "Charles de Gaulle'ün"),
    ("Ümmü Gülsüm", "person", "in", "Ümmü Gülsüm'ün"), ("Enver Sedat", "person", "in", "Enver Sedat'ın"),  # no softening
    # common nouns: no apostrophe, softening before a vowel
    ("Arapça", "language", "da", "Arapçada"), ("Arapça", "language", "dır", "Arapçadır"),
    ("Mısır Arapçası", "language", "dır", "Mısır Arapçasıdır"), ("Mısır Arapçası", "language", "da", "Mısır Arapçasında"),
    ("kitap", "occupation", "ı", "kitabı"), ("müzik", "genre", "ı", "müziği"), ("rock müzik", "genre", "dır", "rock müziktir"),
    ("caz", "genre", "ı", "cazı"), ("trompet", "instrument", "ı", "trompeti"), ("avukat", "occupation", "dır", "avukattır"),
    ("opera sanatçısı", "occupation", "dır", "opera sanatçısıdır"), ("şarkıcı", "occupation", "dır", "şarkıcıdır"),
])
def test_people_by_their_reading_and_common_nouns_without_apostrophe(label, etype, suffix, expected):
    assert _form(label, suffix, etype) == expected


def test_works_are_named_with_their_kind_noun():
    film, series = ("Q11424",), ("Q5398426",)
    assert _form("Baba", "in", "work", film) == "Baba filminin"
    assert _form("Friends", "da", "work", series) == "Friends dizisinde"
    nominative = BACKEND.inflect("Friends", "tr", Features(case="nom"), InflectionRequest(entity_type="work",
                                                                                          classes=series))
    assert nominative.form == "Friends dizisi"
    unknown = BACKEND.inflect("Baba", "tr", Features(particle="in"), InflectionRequest(entity_type="work"))
    assert unknown.status == "failed" and "work_nouns" in unknown.detail


def test_statuses_say_what_was_read_and_unsupported_features_are_refused():
    assert BACKEND.inflect("Kahire", "tr", Features(particle="da"), InflectionRequest()).status == "exact"
    as_spelt = BACKEND.inflect("Hampton", "tr", Features(particle="da"), InflectionRequest())
    assert (as_spelt.form, as_spelt.status) == ("Hampton'da", "exact")  # Turkish letters only: read as spelt
    foreign = BACKEND.inflect("Wrexham", "tr", Features(particle="da"), InflectionRequest())
    assert foreign.status == "guessed" and "tr_morphology.yaml" in foreign.detail
    assert BACKEND.inflect("Kahire", "tr", Features(particle="ban"), InflectionRequest()) is None
    assert BACKEND.inflect("Kahire", "tr", Features(article="def"), InflectionRequest()) is None
    assert BACKEND.inflect("Kahire", "tr", Features(), InflectionRequest()).form == "Kahire"
    assert particle_inventory("turkish") == ("Turkish", PARTICLES)


def test_readings_acronyms_numbers_and_softening():
    assert reading("ABD").how == "acronym" and reading("ABD").last_vowel == "e"
    assert reading("KBS2").how == "number" and reading("KBS2").last_vowel == "i"
    assert reading("Michael Jackson").how == "table" and reading("Michael Jackson").last_vowel == "ı"
    assert (reading("Kennedy").last_vowel, reading("Kennedy").vowel_final) == ("i", True)
    assert soften("kitap") == ("kitab", "rule:softening") and soften("renk") == ("reng", "rule:softening")
    assert soften("trompet") == ("trompet", "") and soften("caz") == ("caz", "")
    assert attach("Mısır", "gen", proper=True)[0] == "Mısır'ın"
    r = reading("Kahire")
    assert [suffix_for(c, r, False) for c in ("gen", "dat", "acc", "loc", "abl", "ins", "cop")] == \
        ["nin", "ye", "yi", "de", "den", "yle", "dir"]


@pytest.mark.slow
@pytest.mark.parametrize("pair", PAIRS)
def test_the_shipped_pairs_build_in_turkish_with_no_failure_and_no_guess(shipped_builds, pair):
    import json

    stats = json.loads((shipped_builds[pair] / "build" / "stats.json").read_text("utf-8"))
    assert stats["dropped"] == {}
    assert stats["prompts_per_language"]["tr"] == stats["prompts_per_language"]["en"] == 4 * stats["facts"]
    assert stats["label_coverage"]["tr"] == 1.0
    assert set(stats["answer_inflection"]["tr"]) <= {"exact", "none"}  # every reading reviewed: no guess left
    assert stats["duplicate_surface_forms"]["tr"]["forms"] == 0


@pytest.mark.slow
def test_real_renders_read_as_a_speaker_writes_them(sample_renders):
    rows = {r["prompt_id"]: r for r in sample_renders.rows("arab-west", ("tr",))}

    def sentence(pid: str) -> str:
        r = rows[pid]
        return r["text"].replace("[Y]", r["gold_forms"][0][0]) if r["kind"] == "cloze" else r["text"]

    assert {pid: sentence(pid) for pid in (
        "arab:P19:Q1391164|tr|P19/1", "west:P20:Q2831|tr|P20/1", "west:P36:Q30|tr|P36/1",
        "arab:P37:Q79|tr|P37/1", "west:P17:Q243|tr|P17/3", "arab:P364:Q3184088|tr|P364/1",
        "west:P449:Q79784|tr|P449/1", "west:P27:Q2831|tr|P27/3", "west:P1376:Q61|tr|P1376/1")} == {
        "arab:P19:Q1391164|tr|P19/1": "Tamer Hosny, Kahire'de doğdu.",
        "west:P20:Q2831|tr|P20/1": "Michael Jackson, Los Angeles'ta öldü.",
        "west:P36:Q30|tr|P36/1": "Amerika Birleşik Devletleri'nin başkenti Washington, D.C.'dir.",
        "arab:P37:Q79|tr|P37/1": "Mısır'ın resmî dili Arapçadır.",
        "west:P17:Q243|tr|P17/3": "Eyfel Kulesi'nin bulunduğu ülke Fransa'dır.",
        "arab:P364:Q3184088|tr|P364/1": "Ömer dizisinin orijinal dili Arapçadır.",
        "west:P449:Q79784|tr|P449/1": "Friends dizisi ilk olarak NBC kanalında yayınlandı.",
        "west:P27:Q2831|tr|P27/3": "Michael Jackson'ın vatandaşı olduğu ülke Amerika Birleşik Devletleri'dir.",
        "west:P1376:Q61|tr|P1376/1": "Washington, D.C., Amerika Birleşik Devletleri'nin başkentidir.",
    }


def test_life_status_puts_the_living_in_the_present_and_the_dead_and_the_unknown_in_the_past():
    from dataclasses import replace

    from factatlas.records import Entity, Gender, Life, frozen_mapping
    from factatlas.templates.library import load_library
    from factatlas.templates.render import Renderer

    from .templates_fixtures import filled

    umm = Entity("Q1110560", frozen_mapping({"tr": "Ümmü Gülsüm"}), frozen_mapping(), Gender.FEMININE, "P21", ("Q5",))
    egypt = Entity("Q79", frozen_mapping({"tr": "Mısır"}), frozen_mapping(), Gender.UNKNOWN, "", ("Q6256",))
    guitar = Entity("Q6607", frozen_mapping({"tr": "gitar"}), frozen_mapping(), Gender.UNKNOWN, "", ("Q34379",))
    lib = load_library(["tr"])
    for life, citizen, player in (
            (Life.DEAD, "Ümmü Gülsüm, Mısır vatandaşıydı.", "Ümmü Gülsüm, gitar çalan bir müzisyendi."),
            (Life.UNKNOWN, "Ümmü Gülsüm, Mısır vatandaşıydı.", "Ümmü Gülsüm, gitar çalan bir müzisyendi."),
            (Life.ALIVE, "Ümmü Gülsüm, Mısır vatandaşıdır.", "Ümmü Gülsüm, gitar çalan bir müzisyendir.")):
        r = Renderer({e.qid: e for e in (replace(umm, life=life), egypt, guitar)})
        assert filled(r, lib.get("tr", "P27/1"), "Q1110560", "Q79") == citizen
        assert filled(r, lib.get("tr", "P1303/3"), "Q1110560", "Q6607") == player
    # where the answer ends the sentence it stands bare: the zero copula for the living, «idi» for the others
    arabic = Entity("Q13955", frozen_mapping({"tr": "Arapça"}), frozen_mapping(), Gender.UNKNOWN, "", ("Q1288568",))
    for life, native, question in (
            (Life.DEAD, "Ümmü Gülsüm'ün ana dili Arapça idi.", "Ümmü Gülsüm'ün ana dili neydi?"),
            (Life.UNKNOWN, "Ümmü Gülsüm'ün ana dili Arapça idi.", "Ümmü Gülsüm'ün ana dili neydi?"),
            (Life.ALIVE, "Ümmü Gülsüm'ün ana dili Arapça.", "Ümmü Gülsüm'ün ana dili nedir?")):
        r = Renderer({e.qid: e for e in (replace(umm, life=life), arabic)})
        assert filled(r, lib.get("tr", "P103/1"), "Q1110560", "Q13955") == native
        assert r.render_prompt(lib.get("tr", "P103/q1"), "Q1110560").text == question


def test_the_present_tense_counter_sees_every_form_the_living_take_and_none_of_the_others():
    """data/tense.yaml `present: tr` matches each `alive` form of the Turkish templates whose tense matters
    (vatandaşıdır, çalışmaktadır, nedir...) or is the zero copula that «idi» follows otherwise, and no form said of
    the dead or the unknown (vatandaşıydı, idi)."""
    from .test_templates_uk import _present_forms_cover_the_templates

    _present_forms_cover_the_templates("tr", zero_copula="idi")
