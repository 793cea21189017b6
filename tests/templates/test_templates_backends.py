"""Inflection backends behind one protocol: pymorphy3 Russian, Korean particles, rules, UniMorph tables."""

from __future__ import annotations

import http.server
import threading
from importlib import resources

import pytest
import yaml

from factatlas.errors import FactatlasError
from factatlas.records import Gender
from factatlas.templates.backend_ko import KoreanBackend, attach, final_consonant
from factatlas.templates.backend_registry import make_backend
from factatlas.templates.backend_ru import RussianBackend, lexicon_agreement
from factatlas.templates.backend_rules import RulesBackend
from factatlas.templates.backend_unimorph import UnimorphBackend, UnimorphTable, download_table
from factatlas.templates.morphology import (
    Agreement,
    Features,
    IdentityBackend,
    InflectionBackend,
    InflectionRequest,
    language_registry,
)

LOC = Features(case="loc")


@pytest.mark.parametrize("name", ["identity", "pymorphy3", "pymorphy3-uk", "korean", "rules", "unimorph"])
def test_every_backend_implements_the_protocol(name, tmp_path):
    backend = make_backend(name, **({"cache_dir": tmp_path} if name == "unimorph" else {}))
    assert isinstance(backend, InflectionBackend) and backend.name == name


def test_registry_languages_name_real_backends_and_known_features():
    reg = language_registry()
    assert {"en", "ar", "es", "ko", "zh", "ru", "fr", "de", "ja", "pt", "hi", "sw"} <= set(reg)
    assert reg["ru"].backend == "pymorphy3" and "loc" in reg["ru"].features
    assert reg["ko"].backend == "korean" and reg["fr"].features >= {"def", "de", "a", "en"}


# ---- Russian -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("label", "features", "form", "status"), [
    ("Москва", LOC, "Москве", "exact"),
    ("Нижний Новгород", LOC, "Нижнем Новгороде", "guessed"),  # composed word by word: guessed (issue 26)
    ("Торонто", LOC, "Торонто", "exact"),
    ("Соединённые Штаты Америки", LOC, "Соединённых Штатах Америки", "guessed"),
    ("Соединенные Штаты Америки", LOC, "Соединенных Штатах Америки", "guessed"),  # no ё added
    ("Соединённые Штаты Америки", Features(case="gen"), "Соединённых Штатов Америки", "guessed"),
    ("Южная Корея", Features(case="ins"), "Южной Кореей", "guessed"),
    ("Ростов-на-Дону", LOC, "Ростове-на-Дону", "guessed"),
    ("Франция", Features(case="dat"), "Франции", "exact"),
    ("Москва", Features(case="nom"), "Москва", "none"),
    ("Toronto", LOC, "Toronto", "none"),  # Latin script untouched
])
def test_russian_inflection_of_real_names(label, features, form, status):
    result = RussianBackend().inflect(label, "ru", features, InflectionRequest(entity_type="settlement"))
    assert (result.form, result.status) == (form, status)


def test_russian_person_names_inflect_every_name_word_in_the_persons_gender():
    backend = RussianBackend()
    fem = InflectionRequest(Agreement(Gender.FEMININE, "sg", "P21"), "person")
    masc = InflectionRequest(Agreement(Gender.MASCULINE, "sg", "P21"), "person")
    assert backend.inflect("Анна Ахматова", "ru", Features(case="gen"), fem).form == "Анны Ахматовой"
    assert backend.inflect("Лев Толстой", "ru", Features(case="ins"), masc).form == "Львом Толстым"
    assert backend.inflect("Фёдор Достоевский", "ru", Features(case="dat"), masc).form == "Фёдору Достоевскому"
    # double surnames decline part by part; the indeclinable part stays
    assert backend.inflect("Мария Склодовская-Кюри", "ru", Features(case="gen"), fem).form == "Марии Склодовской-Кюри"


def test_russian_unknown_words_are_flagged_guessed():
    result = RussianBackend().inflect("Кваркозябра", "ru", LOC, InflectionRequest(entity_type="settlement"))
    assert result.status == "guessed" and "not in the OpenCorpora dictionary" in result.detail


def test_russian_backend_declines_what_it_cannot_do():
    assert RussianBackend().inflect("Москва", "ru", Features(article="def")) is None


def test_russian_lexicon_gender_of_the_head_noun():
    assert lexicon_agreement("Нижний Новгород") == Agreement(Gender.MASCULINE, "sg", "lexicon:pymorphy3")
    assert lexicon_agreement("Южная Корея") == Agreement(Gender.FEMININE, "sg", "lexicon:pymorphy3")
    assert lexicon_agreement("Соединённые Штаты Америки").number == "pl"
    assert lexicon_agreement("Toronto") is None


# ---- Korean --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "particle", "expected"), [
    ("서울", "은", "서울은"), ("도쿄", "은", "도쿄는"), ("서울", "는", "서울은"),
    ("한국", "이", "한국이"), ("미국", "가", "미국이"), ("프랑스", "이", "프랑스가"),
    ("독일", "을", "독일을"), ("도쿄", "을", "도쿄를"),
    ("독일", "와", "독일과"), ("프랑스", "과", "프랑스와"),
    ("서울", "으로", "서울로"), ("한국", "으로", "한국으로"), ("도쿄", "으로", "도쿄로"), ("부산", "로", "부산으로"),
    ("서울", "에서", "서울에서"), ("도쿄", "의", "도쿄의"),
    ("MBC", "은", "MBC는"), ("KBS", "이", "KBS가"), ("CNN", "을", "CNN을"), ("BBC", "와", "BBC와"),
    ("2020", "은", "2020은"), ("7", "으로", "7로"), ("3", "으로", "3으로"), ("5", "이", "5가"),
    ("Google", "은", "Google은(는)"), ("Google", "으로", "Google(으)로"),
])
def test_korean_particles_by_final_consonant(name, particle, expected):
    assert attach(name, particle)[0] == expected


def test_korean_hangul_arithmetic_and_unknown_endings():
    assert final_consonant("값") == (True, False)  # ㅄ
    assert final_consonant("길") == (True, True)  # ㄹ
    assert final_consonant("가") == (False, False)
    assert final_consonant("서울 (한국)") == (True, False)  # closing bracket skipped: 국 ends in ㄱ
    assert final_consonant("Google") is None
    assert KoreanBackend().inflect("Google", "ko", Features(particle="은")).status == "guessed"
    assert KoreanBackend().inflect("서울", "ko", Features(particle="없는")) is None


# ---- rules ---------------------------------------------------------------------------------------

def test_article_tables_hold_only_strings():
    """YAML 1.1 reads `no`, `on`, `yes` as booleans: every table value must still be a string."""
    data = yaml.safe_load(resources.files("factatlas.templates").joinpath("data/articles.yaml").read_text("utf-8"))

    def leaves(x):
        if isinstance(x, dict):
            for k, v in x.items():
                assert isinstance(k, str), k
                yield from leaves(v)
        elif isinstance(x, list):
            for v in x:
                yield from leaves(v)
        else:
            yield x

    assert all(isinstance(v, str) for v in leaves(data))


def test_rules_fail_with_a_reason_when_the_gender_is_unknown():
    r = RulesBackend().inflect("Zorg", "fr", Features(preposition="en"), InflectionRequest(entity_type="country"))
    assert r.status == "failed" and "gender unknown" in r.detail


def test_german_genitive_of_names_without_article():
    r = RulesBackend()
    neut = InflectionRequest(Agreement(Gender.NEUTER, "sg", "class-default:country"), "country")
    assert r.inflect("Frankreich", "de", Features(case="gen", article="def"), neut).form == "Frankreichs"
    assert r.inflect("Paris", "de", Features(case="gen"), neut).form == "Paris'"


def test_identity_backend_refuses_features():
    assert IdentityBackend().inflect("東京", "ja", Features()).form == "東京"
    assert IdentityBackend().inflect("東京", "ja", Features(case="loc")) is None


# ---- UniMorph ------------------------------------------------------------------------------------

HUN_TABLE = """\
Budapest\tBudapesten\tN;ON+ESS;SG
Budapest\tBudapestnek\tN;DAT;SG
Szeged\tSzegeden\tN;ON+ESS;SG
Pécs\tPécsen\tN;ON+ESS;SG
Debrecen\tDebrecenben\tN;IN+ESS;SG
Bécs\tBécsben\tN;IN+ESS;SG
London\tLondonban\tN;IN+ESS;SG
Berlin\tBerlinben\tN;IN+ESS;SG
Párizs\tPárizsban\tN;IN+ESS;SG
"""

POL_TABLE = """\
Warszawa\tWarszawie\tN;ESS;SG
Warszawa\tWarszawy\tN;GEN;SG
Kraków\tKrakowie\tN;ESS;SG
Praga\tPradze\tN;ESS;SG
Ostrawa\tOstrawie\tN;ESS;SG
Odessa\tOdessie\tN;ESS;SG
"""


def test_unimorph_exact_lookup_compares_feature_sets():
    table = UnimorphTable.from_lines("pol", POL_TABLE.splitlines())
    assert table.lookup("Warszawa", frozenset({"SG", "ESS", "N"})) == "Warszawie"
    assert table.lookup("Warszawa", frozenset({"N", "GEN", "SG"})) == "Warszawy"


def test_unimorph_suffix_analogy_is_flagged_guessed(tmp_path):
    (tmp_path / "pol.tsv").write_text(POL_TABLE, "utf-8")
    backend = UnimorphBackend(cache_dir=tmp_path)
    exact = backend.inflect("Kraków", "pl", LOC)
    assert (exact.form, exact.status) == ("Krakowie", "exact")
    guessed = backend.inflect("Bratysława", "pl", LOC)  # -awa -> -awie by analogy with Warszawa, Ostrawa
    assert (guessed.form, guessed.status) == ("Bratysławie", "guessed")
    assert "analogy" in guessed.detail
    # head = last word for Polish; a modifier the table does not know leaves the phrase a guess
    multi = backend.inflect("Nowa Warszawa", "pl", LOC)
    assert (multi.form, multi.status) == ("Nowa Warszawie", "guessed")
    assert "agreement unknown: Nowa" in multi.detail


def test_unimorph_multiword_names_agree_as_a_phrase(tmp_path):
    adjectives = "nowy\tnowa\tADJ;NOM;FEM;SG\nnowy\tnowej\tADJ;ESS;FEM;SG\nnowy\tnowej\tADJ;GEN;FEM;SG\n"
    (tmp_path / "pol.tsv").write_text(POL_TABLE + adjectives, "utf-8")
    backend = UnimorphBackend(cache_dir=tmp_path)
    multi = backend.inflect("Nowa Warszawa", "pl", LOC)
    assert (multi.form, multi.status) == ("Nowej Warszawie", "exact")


def test_unimorph_missing_table_says_how_to_fetch(tmp_path):
    result = UnimorphBackend(cache_dir=tmp_path).inflect("Budapest", "hu", LOC)
    assert result.status == "failed"
    assert "factatlas templates unimorph-fetch hun" in result.detail


class _TableHandler(http.server.BaseHTTPRequestHandler):
    tables: dict[str, str] = {}
    requests: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server API
        type(self).requests.append(self.path)
        if self.path.endswith("/busy"):  # a throttled server asking to come back in an hour
            self.send_response(429)
            self.send_header("Retry-After", "3600")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = self.tables.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture()
def table_server():
    _TableHandler.tables = {"/unimorph/pol/master/pol": POL_TABLE, "/unimorph/hun/master/hun": HUN_TABLE}
    _TableHandler.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _TableHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/unimorph/{{iso}}/master/{{iso}}"
    server.shutdown()
    server.server_close()


def test_downloader_fetches_into_the_cache_and_the_backend_uses_it(tmp_path, table_server):
    path = download_table("pol", tmp_path, table_server)
    assert path == tmp_path / "pol.tsv" and path.read_text("utf-8") == POL_TABLE
    assert _TableHandler.requests == ["/unimorph/pol/master/pol"]
    assert UnimorphBackend(cache_dir=tmp_path).inflect("Warszawa", "pl", LOC).form == "Warszawie"


def test_downloader_error_names_the_url_and_the_fix(tmp_path, table_server):
    with pytest.raises(FactatlasError, match=r"could not fetch the UniMorph table 'xxx' .*404.*ISO 639-3"):
        download_table("xxx", tmp_path, table_server)
    assert not (tmp_path / "xxx.tsv").exists()


def test_unimorph_fetch_has_the_options_its_http_messages_name(tmp_path, table_server):
    """factatlas.http says 'raise --timeout' / 'raise --max-retry-after': `templates unimorph-fetch` has both
    and they reach the request policy."""
    from tests.clirun import factatlas

    fetch = ["templates", "unimorph-fetch", "busy", "--cache-dir", tmp_path, "--url", table_server]
    res = factatlas(*fetch, "--max-retry-after", "1")
    assert res.returncode == 2, res.stderr
    assert "retry in 3600 s" in res.stderr and "longer than --max-retry-after 1 s" in res.stderr
    res = factatlas(*fetch, "--timeout", "0")
    assert res.returncode == 2 and "--timeout 0.0: must be above 0 (seconds)" in res.stderr, res.stderr
    assert not (tmp_path / "busy.tsv").exists()


def test_hungarian_locative_tag_is_configurable(tmp_path):
    (tmp_path / "hun.tsv").write_text(HUN_TABLE, "utf-8")
    assert language_registry()["hu"].options["loc_tag"] == "IN+ESS"
    assert UnimorphBackend(cache_dir=tmp_path).inflect("Bécs", "hu", LOC).form == "Bécsben"
    table = UnimorphTable.load(tmp_path / "hun.tsv")
    assert table.lookup("Bécs", frozenset({"N", "IN+ESS", "SG"})) == "Bécsben"
    assert table.guess("Győr", frozenset({"N", "ON+ESS", "SG"})) is None  # no shared suffix evidence
    assert table.guess("Bern", frozenset({"N", "IN+ESS", "SG"}))[0] == "Bernben"  # 2 x -ben vs 1 x -ban


def test_rendering_with_a_missing_table_never_downloads(monkeypatch, tmp_path):
    import importlib

    import factatlas.templates.backend_unimorph as module

    calls = []
    monkeypatch.setattr("requests.get", lambda *a, **k: calls.append(a))
    module = importlib.reload(module)
    result = module.UnimorphBackend(cache_dir=tmp_path).inflect("Warszawa", "pl", LOC)
    assert result.status == "failed" and calls == []


def test_backends_register_themselves_and_unknown_names_get_a_suggestion():
    from factatlas.errors import ConfigError
    from factatlas.templates.backend_registry import BACKEND_NAMES, BACKENDS, inflection_backend

    assert BACKEND_NAMES == tuple(BACKENDS) == ("identity", "unimorph", "pymorphy3", "pymorphy3-uk", "korean",
                                                  "rules", "greek", "hebrew", "turkish", "hungarian")
    with pytest.raises(ConfigError, match="unknown inflection backend 'rule'. Did you mean 'rules'"):
        make_backend("rule")
    with pytest.raises(ValueError, match="registered twice"):
        inflection_backend("korean")(lambda: None)
