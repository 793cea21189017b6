"""Imports stop being `global` where their subjects' countries are known (DLAMA, Keleg & Magdy 2023, §3.1):
BMLAMA's entities are no Wikidata items, so a country is recognised by its English label."""

from __future__ import annotations

import json

from factatlas.builder.audit import cultures_from_country_labels
from factatlas.builder.invariants import check_directory
from factatlas.curate.config import load_culture
from factatlas.predicates import load_predicates
from factatlas.records import Fact, ObjectRef


def _fact(fid: str, predicate: str, subject: str, objects: tuple[str, ...], culture: str = "global") -> Fact:
    return Fact(fid, predicate, subject, tuple(ObjectRef(o) for o in objects), culture, (), 0.0, 0)


LABELS = {"bm:fr": "France", "bm:eg": "Egypt", "bm:ua": "Ukraine", "bm:paris": "Paris", "bm:cairo": "Cairo",
          "bm:zz": "Zinedine Zidane", "bm:tower": "Eiffel Tower"}


def test_countries_from_english_labels_by_hand():
    facts = [
        _fact("q1", "P36", "bm:fr", ("bm:paris",)),          # subject is the country: France -> west
        _fact("q2", "P1376", "bm:paris", ("bm:fr",)),        # object is the country: Paris in France -> west
        _fact("q3", "P190", "bm:paris", ("bm:cairo",)),      # twin city (via P17): Paris known from q2 -> west
        _fact("q4", "P190", "bm:cairo", ("bm:paris",)),      # nothing tells Cairo's country
        _fact("q5", "P530", "bm:ua", ("bm:fr",)),            # Ukraine is in no culture file
        _fact("q6", "P27", "bm:zz", ("bm:fr", "bm:eg")),     # France and Egypt: two cultures
        _fact("q7", "P17", "bm:tower", ("bm:eg",), "west"),  # not global: left as it is, not counted
    ]
    cultures = [load_culture("west"), load_culture("arab")]
    out, counts = cultures_from_country_labels(facts, LABELS, load_predicates(), cultures)
    assert [(f.id, f.culture, f.countries) for f in out] == [
        ("q1", "west", ("Q142",)), ("q2", "west", ("Q142",)), ("q3", "west", ("Q142",)),
        ("q4", "global", ()), ("q5", "global", ()), ("q6", "global", ()), ("q7", "west", ())]
    assert counts == {"assigned:west": 3, "kept-global:no-country": 2, "kept-global:several-cultures": 1}
    # only the listed cultures count: without arab, q6's Egypt is no listed country and France decides
    out, counts = cultures_from_country_labels(facts, LABELS, load_predicates(), cultures[:1])
    assert out[5].culture == "west" and counts["assigned:west"] == 4


def _small_bmlama(folder):
    folder.mkdir(parents=True)
    header = "Prompt\tAns\tCandidate Ans\tSubject\n"
    (folder / "en.tsv").write_text(header + "The capital of Egypt is <mask>.\tCairo\tParis, Kyiv, Cairo\tEgypt\n"
                                   "The capital of France is <mask>.\tParis\tCairo, Kyiv, Paris\tFrance\n"
                                   "The capital of Ukraine is <mask>.\tKyiv\tCairo, Paris, Kyiv\tUkraine\n", "utf-8")
    (folder / "fr.tsv").write_text(header + "La capitale de l'Égypte est <mask>.\tLe Caire\tParis, Kiev, Le Caire\t"
                                   "Égypte\nLa capitale de la France est <mask>.\tParis\tLe Caire, Kiev, Paris\t"
                                   "France\nLa capitale de l'Ukraine est <mask>.\tKiev\tLe Caire, Paris, Kiev\t"
                                   "Ukraine\n", "utf-8")
    templates = folder.parent / "mlama"
    templates.mkdir()
    (templates / "en.jsonl").write_text(json.dumps({"relation": "P36", "template": "The capital of [X] is [Y] ."})
                                        + "\n", "utf-8")
    return folder, templates


def test_cli_import_bmlama_with_cultures(tmp_path):
    from factatlas.benchmark import Benchmark
    from tests.clirun import factatlas

    src, templates = _small_bmlama(tmp_path / "BMLAMA3")
    done = factatlas("import", "bmlama", src, tmp_path / "run", "--mlama-templates", templates, "--cultures", "all")
    assert done.returncode == 0, done.stderr
    assert "cultures from subject countries: assigned:arab 1, assigned:west 1, kept-global:no-country 1" in done.stderr
    assert check_directory(tmp_path / "run" / "build") == []
    bench = Benchmark.open(tmp_path / "run")
    assert [(f.id, f.predicate, f.culture) for f in bench.facts] == [
        ("bmlama3:00001", "P36", "arab"), ("bmlama3:00002", "P36", "west"), ("bmlama3:00003", "P36", "global")]
    assert {(p.fact_id, p.culture) for p in bench.prompts} == {
        ("bmlama3:00001", "arab"), ("bmlama3:00002", "west"), ("bmlama3:00003", "global")}
    assert bench.meta["cultures"] == ["arab", "west", "global"]

    done = factatlas("import", "bmlama", src, tmp_path / "no", "--cultures", "all")
    assert done.returncode == 2 and "give --mlama-templates" in done.stderr
