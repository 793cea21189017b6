"""Turkish: case suffixes by the name's reading (templates/backend_tr.py), over exact forms and real renders.

The cases the issue names (Ankara'da, Kahire'de, İstanbul'da, Fas'ta), foreign names read otherwise than
spelt (Bordeaux'da, New York'ta, Michael Jackson'ın), acronyms by their letter names (ABD'de, BAE'de),
buffers after a vowel and the pronominal n after a possessive compound (Mısır'ın, Amerika Birleşik
Devletleri'nde), and common nouns without the apostrophe, softening their last consonant (Arapçada,
kitabı, müziği).
"""

from __future__ import annotations

import pytest

from factatlas.templates.backend_tr import PARTICLES, TurkishBackend, attach, reading, soften, suffix_for
from factatlas.templates.morphology import Features, InflectionRequest, particle_inventory

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
