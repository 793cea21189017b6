"""Persian: the orthography the validator enforces (Persian letters, never the Arabic «ي»/«ك»; the
half-space in «می‌», «‌ها»), the sample's labels in Persian letters, what the renderer does for Persian (the
repeated «زبان», life status, a city named like its country, work titles by their kind), and the three shipped
pairs built in Persian with nothing dropped."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from factatlas.records import Entity, Life, frozen_mapping
from factatlas.templates.library import Template, read_language_file, templates_dir
from factatlas.templates.morphology import language_spec
from factatlas.templates.render import Renderer
from factatlas.templates.validate import orthography_issues, validate_file
from tests.templates.conftest import PAIRS

REPO = Path(__file__).resolve().parents[2]
ZWNJ = "\u200c"
HEADER = "lang: fa\nname: Persian\nscripts: [Arabic]\ngenders: []\ntemplates:\n"


def _issues(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "fa.yaml"
    path.write_text(HEADER + "  P19:\n    - id: P19/1\n      text: \"" + text + "\"\n      status: draft\n"
                    "      source: human\n    - id: P19/q1\n      kind: question\n      text: \"[X] کجا به دنیا آمد؟\"\n"
                    "      status: draft\n      source: human\n", "utf-8")
    return [str(i) for i in validate_file(read_language_file(path, display_path="fa.yaml"))]


def test_the_validator_refuses_arabic_letters_in_persian(tmp_path):
    assert _issues(tmp_path, "[X] در [Y] به دنیا آمد.") == []
    yeh = _issues(tmp_path, "[X] در [Y] به دنيا آمد.")  # an Arabic yeh (U+064A) in «دنیا»
    column = (tmp_path / "fa.yaml").read_text("utf-8").splitlines()[7].index("\u064a") + 1  # independent of the validator
    assert yeh == [f"fa.yaml:8:{column}: P19/1: 'ي' (U+064A ARABIC LETTER YEH) belongs to another language's "
                   "alphabet; fix: type 'ی' (U+06CC ARABIC LETTER FARSI YEH)"]
    kaf = _issues(tmp_path, "[X] در [Y] متولد شد، در آن شهر كوچك.")
    assert len(kaf) == 2 and all("U+0643 ARABIC LETTER KAF" in i and "U+06A9 ARABIC LETTER KEHEH" in i for i in kaf)


def test_the_validator_asks_for_the_half_space():
    spec = language_spec("fa").options
    assert orthography_issues(f"[X] در [Y] زندگی می{ZWNJ}کند.", 0, spec) == []
    text = "[X] در [Y] شناخته می شود و زبان ها را می‌داند."
    found = orthography_issues(text, 0, spec)
    assert [(offset, message) for offset, message, _ in found] == [
        (text.index("می "), "'می' written apart from its word with a space"),
        (text.index(" ها"), "'ها' written apart from its word with a space")]
    assert found[0][2] == f"join it with a half-space (ZWNJ, U+200C): 'می{ZWNJ}'"


def test_the_shipped_persian_templates_and_labels_use_persian_letters():
    assert [str(i) for i in validate_file(read_language_file(templates_dir() / "fa.yaml"))] == []
    labels = yaml.safe_load((REPO / "curate/sample/source/labels_fa.yaml").read_text("utf-8"))["labels"]["fa"]
    assert len(labels) >= 664
    wrong = {q: t for q, t in labels.items() if orthography_issues(t, 0, language_spec("fa").options)}
    assert wrong == {}


def _entity(qid: str, label: str, classes: tuple[str, ...] = (), life: Life = Life.UNKNOWN) -> Entity:
    return Entity(qid, frozen_mapping({"fa": label}), frozen_mapping(), classes=classes, life=life)


ENTITIES = {e.qid: e for e in (
    _entity("Q1", "ویکتور هوگو", ("Q5",), Life.DEAD),
    _entity("Q2", "اد شیران", ("Q5",), Life.ALIVE),
    _entity("Q3", "نجیب محفوظ", ("Q5",)),
    _entity("Q150", "زبان فرانسوی", ("Q1288568",)),
    _entity("Q29919", "عربی مصری", ("Q34770",)),
    _entity("Q3572", "تونس (شهر)", ("Q5119",)),
    _entity("Q948", "تونس", ("Q6256",)),
    _entity("Q47703", "پدرخوانده", ("Q11424",)),
)}


def _template(tid: str, text: str) -> Template:
    return Template(id=tid, lang="fa", predicate=tid.split("/")[0], kind="cloze", text=text, status="draft",
                    source="human")


def test_zaban_is_written_once_before_the_answer():
    renderer = Renderer(ENTITIES)
    spoken = _template("P1412/1", "[X] به زبان [Y] سخن {X: alive=می‌گوید | dead=می‌گفت | other=گفته است}.")
    assert renderer.render_answer(spoken, "Q150", "Q1").forms[0] == "فرانسوی"
    assert renderer.render_answer(spoken, "Q29919", "Q1").forms[0] == "عربی مصری"  # no «زبان» to drop
    plain = _template("P37/1", "زبان رسمی [X] [Y] است.")
    assert renderer.render_answer(plain, "Q150", "Q948").forms[0] == "زبان فرانسوی"


def test_life_status_chooses_the_copula():
    renderer = Renderer(ENTITIES)
    template = _template("P27/1", "[X] شهروند [Y] {X: alive=است | dead=بود | other=بوده است}.")
    assert renderer.render_prompt(template, "Q1").text == "ویکتور هوگو شهروند [Y] بود."
    assert renderer.render_prompt(template, "Q2").text == "اد شیران شهروند [Y] است."
    assert renderer.render_prompt(template, "Q3").text == "نجیب محفوظ شهروند [Y] بوده است."  # unknown: true of both


def test_a_city_named_like_its_country_and_a_work_named_by_its_kind():
    renderer = Renderer(ENTITIES)
    capital = _template("P1376/1", "[X] پایتخت [Y] است.")
    assert renderer.render_prompt(capital, "Q3572").text == "شهر تونس پایتخت [Y] است."
    city = _template("P36/2", "پایتخت [X] شهر [Y] است.")
    assert renderer.render_answer(city, "Q3572", "Q948").forms[0] == "تونس"  # «شهر» written once
    origin = _template("P495/1", "کشور سازندهٔ [X] [Y] است.")
    assert renderer.render_prompt(origin, "Q47703").text == "کشور سازندهٔ فیلم «پدرخوانده» [Y] است."


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["fa", "uk"])
@pytest.mark.parametrize("pair", PAIRS)
def test_the_three_shipped_pairs_build_with_nothing_dropped(shipped_builds, pair, lang):
    run = shipped_builds[pair]
    prompts = pq.read_table(run / "build" / "prompts.parquet", columns=["lang", "fact_id"]).to_pylist()
    mine = sorted(r["fact_id"] for r in prompts if r["lang"] == lang)
    assert mine and mine == sorted(r["fact_id"] for r in prompts if r["lang"] == "en"), pair
    drops = pq.read_table(run / "build" / "dropped.parquet").to_pylist()
    assert not [d for d in drops if f"|{lang}|" in d["item"] or lang in (d["detail"] or "").split()], pair


# ---- second reading (issue 39): life status and the present-tense counter; a label read again -------------

def test_the_shipped_templates_say_nothing_in_the_present_of_the_dead():
    """Every template of a predicate whose statements hold only in life, rendered for a dead man and a living
    one (seen red: P27/1 with dead=است, 1 red; the counter over asia-west: 30 prompts)."""
    from factatlas.templates.library import load_library
    from factatlas.templates.population import _data, present_forms

    predicates = set(_data("tense.yaml")["predicates"])
    templates = [t for t in load_library(["fa"]).templates("fa") if t.predicate in predicates]
    present = present_forms()["fa"]
    renderer = Renderer(ENTITIES)
    dead = {t.id: renderer.render_prompt(t, "Q1").text for t in templates}
    alive = {t.id: renderer.render_prompt(t, "Q2").text for t in templates}
    assert len(dead) == 28
    assert {tid: text for tid, text in dead.items() if present.search(text)} == {}
    assert sorted(tid for tid, text in alive.items() if not present.search(text)) == [
        "P106/3", "P1303/1", "P136/2", "P264/1", "P264/3", "P264/q1"]
    assert dead["P1303/2"] == "سازی که ویکتور هوگو می‌نواخت [Y] بود."
    assert dead["P1412/2"] == "یکی از زبان‌هایی که ویکتور هوگو به آن سخن می‌گفت [Y] بود."


@pytest.mark.parametrize(("text", "found"), [
    ("X شهروند Y است.", True), ("X شهروند Y بود.", False), ("X شهروند Y بوده است.", False),
    ("آثار X توسط Y منتشر شده است.", False), ("X از زبان Y استفاده می‌کند.", True), ("X چه سازی می‌نوازد؟", True),
    ("X چه سازی می‌نواخت؟", False), ("X تابعیت Y را دارد.", True), ("X تابعیت Y را داشت.", False),
    ("X به عنوان Y شناخته می‌شود.", False),
])
def test_the_persian_present_forms(text, found):
    from factatlas.templates.population import present_forms

    assert bool(present_forms()["fa"].search(text)) is found


def test_the_berber_family_is_named_as_one_language():
    berber = {"Q25448": _entity("Q25448", "زبان‌های بربری", ("Q25295",))}
    official = _template("P37/1", "زبان رسمی [X] [Y] است.")
    assert Renderer(berber).render_answer(official, "Q25448").forms[0] == "زبان بربری"
