"""Cultures, pairs and predicates as data; validation errors; SPARQL builders and injection attempts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from factatlas.curate import sparql
from factatlas.curate.config import (
    list_cultures,
    list_pairs,
    load_culture,
    load_culture_config,
    load_pair,
    load_predicates,
    validate_file,
)
from factatlas.curate.engine import curate
from factatlas.curate.localserver import SparqlApp, serve
from factatlas.errors import ConfigError

REFERENCE = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "dlama" / "countries.json"


def test_bundled_cultures_pairs_and_predicates():
    assert list_cultures() == ["arab", "asia", "south-america", "west"]
    assert list_pairs() == ["arab-west", "asia-west", "south-america-west"]
    assert [len(load_culture(c).countries) for c in list_cultures()] == [22, 13, 12, 20]
    arab = load_culture_config("arab")
    assert arab.membership_use == "rule"
    assert (arab.culture.membership_rule.predicate, arab.culture.membership_rule.target) == ("P463", "Q7172")
    specs = load_predicates()
    assert sorted(specs, key=lambda p: int(p[1:])) == [
        "P17", "P19", "P20", "P27", "P30", "P36", "P37", "P47", "P103", "P106", "P136", "P190", "P264", "P364",
        "P449", "P495", "P530", "P1303", "P1376", "P1412"]
    assert specs["P1303"].object_type.exclude_items == ("Q17172850",)
    assert {"Q1656682", "Q13406463"} <= set(specs["P17"].subject_type.exclude)
    assert {specs[p].subject_type.name for p in ("P364", "P449", "P495")} <= {"work", "audiovisual-work"}
    assert {p for p, s in specs.items() if s.augment == "admin"} == {"P19", "P20"}


@pytest.mark.skipif(not REFERENCE.exists(), reason="DLAMA reference data not available")
def test_culture_qids_and_editions_match_dlama_reference():
    ref = json.loads(REFERENCE.read_text())
    observed = ref["dlama_v1_observed_country_subjects_P36"]
    for culture, region in (("arab", "ARAB_REGION"), ("west", "WESTERN_COUNTRIES"), ("asia", "ASIA"),
                            ("south-america", "SOUTH_AMERICA")):
        ours = set(load_culture(culture).country_qids)
        theirs = {c["qid"] for c in observed[region]}
        if culture == "west":
            theirs.add("Q55")  # v1 lost the Netherlands (not a sovereign state); we keep it
        assert ours == theirs, culture
    code = ref["code_HEAD_regions"]
    for culture, region in (("west", "WESTERN_COUNTRIES"), ("asia", "ASIA"), ("south-america", "SOUTH_AMERICA")):
        sites = {c.qid: set(c.wikipedia_sites) for c in load_culture(culture).countries}
        for c in code[region]:
            assert sites[c["qid"]] == set(c["wikipedia_langs_for_article_size"]), c["name"]
    assert set(load_culture("arab").membership_rule.wikipedia_sites) == set(
        code["ARAB_REGION"]["wikipedia_langs_for_article_size"])


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, "utf-8")
    return p


GOOD_CULTURE = "label: East Africa\ncountries:\n  - {qid: Q114, label: Kenya, wikipedia_sites: [sw, en]}\n"


@pytest.mark.parametrize("text, message", [
    ("label: X\ncountrys: []\n", "2:1: top level: unknown key 'countrys'. Did you mean 'countries'?"),
    ("label: X\ncountries:\n  - {qid: Q114, lable: Kenya, wikipedia_sites: [sw]}\n",
     "3:17: countries.0: unknown key 'lable'. Did you mean 'label'?"),
    ("label: X\ncountries:\n  - {qid: K114, label: Kenya, wikipedia_sites: [sw]}\n",
     "3:11: countries.0.qid: 'K114' is not a Wikidata item id; write it like 'Q79'"),
    ("label: X\ncountries:\n  - {qid: Q114, label: Kenya, wikipedia_sites: [Swahili]}\n",
     "3:49: countries.0.wikipedia_sites.0: 'Swahili' is not a Wikipedia edition code"),
    ("label: X\nmembership: {predicate: 463, target: Q7172}\ncountries: []\n",
     "2:25: membership.predicate: 463 is not a Wikidata property id"),
    ("label: X\nmembership: {predicate: P463, target: Q7172, use: rules}\ncountries: []\n",
     "membership.use: 'rules' is not one of rule, list. Did you mean 'rule'?"),
    ("label: X\ncountries: [\n", "not valid YAML"),
    ("label: X\ncountries:\n  - {qid: Q55, label: NL, wikipedia_sites: [nl], also_matches: [Kingdom]}\n",
     "countries.0.also_matches.0: 'Kingdom' is not a Wikidata item id"),
])
def test_culture_errors_name_file_line_key_and_fix(tmp_path, text, message):
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ConfigError) as e:
        load_culture(path)
    assert str(e.value).startswith(f"{path}:")
    assert message in str(e.value)


def test_predicate_errors(tmp_path):
    base = "types:\n  person: {classes: [Q5]}\npredicates:\n"
    cases = [
        ("  P27: {subject: person, object: persn, culture: {side: object}}\n", "unknown type 'persn'. Did you mean 'person'?"),
        ("  P27: {subject: person, object: person, culture: {side: objct}}\n", "Did you mean 'object'?"),
        ("  Q27: {subject: person, object: person, culture: {side: object}}\n", "'Q27' is not a Wikidata property id"),
        ("  P27: {subject: person, object: person, culture: {side: object, via: P27 }}\n", None),
        ("  P27: {subject: person, object: person, culture: {side: object}, augment: closure}\n",
         "unknown augment mode 'closure'"),
    ]
    for body, message in cases:
        path = write(tmp_path, "preds.yaml", base + body)
        if message is None:
            assert load_predicates(path)["P27"].culture_filter.via == "P27"
            continue
        with pytest.raises(ConfigError, match=message):
            load_predicates(path)
    path = write(tmp_path, "preds.yaml", "types:\n  person: {classes: [Q5], kind_of: persn}\npredicates: {}\n")
    with pytest.raises(ConfigError) as e:
        validate_file(path)
    assert str(e.value).startswith(f"{path}:2:")
    assert "types.person.kind_of: unknown type 'persn'. Did you mean 'person'?" in str(e.value)


def test_unknown_names_suggest(tmp_path):
    with pytest.raises(ConfigError, match="unknown culture 'arabb'. Did you mean 'arab'?"):
        load_culture("arabb")
    with pytest.raises(ConfigError, match="unknown pair 'arab-wset'. Did you mean 'arab-west'?"):
        load_pair("arab-wset")


def test_user_cultures_and_pairs_by_path(tmp_path):
    write(tmp_path, "east-africa.yaml", GOOD_CULTURE)
    pair = write(tmp_path, "ea-west.yaml", "name: ea-west\ncultures: [east-africa.yaml, west]\n")
    loaded = load_pair(pair)
    assert loaded.name == "ea-west" and loaded.cultures[1] == "west"
    assert load_culture(loaded.cultures[0]).country_qids == ("Q114",)
    assert validate_file(pair) == f"{pair}: ok — pair ea-west = {loaded.cultures[0]} + west"


def test_validate_all_bundled_files():
    root = Path(__file__).resolve().parents[2] / "curate"
    for path in [root.parent / "factatlas" / "predicates.yaml", root / "pairs.yaml", *sorted((root / "cultures").glob("*.yaml"))]:
        assert ": ok — " in validate_file(path)


# ---- SPARQL builders ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_store():
    from factatlas.curate.endpoints import SAMPLE_PATH, load_store

    if not SAMPLE_PATH.exists():
        pytest.skip("the embedded Wikidata sample is not built")
    return load_store(SAMPLE_PATH)


def _result_set(rows) -> list:
    return sorted(tuple(sorted((k, v["value"]) for k, v in r.items())) for r in rows)


@pytest.mark.parametrize(("predicate", "culture"), [("P106", "arab"), ("P1303", "west"), ("P37", "arab"),
                                                    ("P530", "west")])
def test_candidates_ask_the_subjects_objects_only_to_exist(sample_store, predicate, culture):
    """Subject-side filters: the objects of ?s are not projected, so joining them multiplied each row by the
    subject's object count before DISTINCT; FILTER EXISTS gives the same rows without the multiplication."""
    from factatlas.curate.endpoints import run_on_store

    spec = load_predicates()[predicate]
    assert spec.culture_filter.side == "subject"
    q = sparql.candidates_query(predicate, "subject", spec.culture_filter.via,
                                load_culture(culture).country_qids, ["ar", "en", "fr"])
    rows = run_on_store(sample_store, q)
    assert rows and len(run_on_store(sample_store, q.replace("SELECT DISTINCT", "SELECT"))) == len(rows)
    joined = q.replace(f"FILTER EXISTS {{ ?s wdt:{predicate} ?o }}", f"?s wdt:{predicate} ?o .")
    assert joined != q and "?o" not in q.replace(f"FILTER EXISTS {{ ?s wdt:{predicate} ?o }}", "")
    assert _result_set(rows) == _result_set(run_on_store(sample_store, joined))
    if predicate in ("P106", "P37", "P530"):  # subjects with several objects in the sample: the join multiplied
        assert len(run_on_store(sample_store, joined.replace("SELECT DISTINCT", "SELECT"))) > len(rows)


def test_builders_are_engine_neutral_and_anchored():
    queries = [
        sparql.membership_query("P463", "Q7172"),
        sparql.candidates_query("P19", "object", "P17", ["Q79", "Q822"], ["ar", "en"]),
        sparql.candidates_query("P36", "subject", None, ["Q79"], ["ar"]),
        sparql.class_reach_query(["Q5119"], ["Q486972", "Q6256"]),
        sparql.objects_query("P106", ["Q100001"]),
        sparql.describe_query(["Q85"], ["ar", "en"]),
        sparql.superclass_edges_query(["Q177220"]),
        sparql.admin_edges_query(["Q85"]),
    ]
    for q in queries:
        assert "SERVICE" not in q and "hint:" not in q and "bd:" not in q
    # closures start from bound values, never from an unbound subject
    # the class-reach closure ends in a variable joined with a triple, as Virtuoso requires
    assert "?class wdt:P279* ?mid .\n  ?mid wdt:P279 ?root ." in queries[3] and "VALUES ?root" in queries[3]
    assert "?class wdt:P279* ?root" not in queries[3]
    # the augmentation asks one hop at a time: no path at all
    assert "VALUES ?sub { wd:Q177220 }\n  ?sub wdt:P279 ?super ." in queries[6] and "*" not in queries[6]
    assert "VALUES ?sub { wd:Q85 }\n  ?sub wdt:P131 ?super ." in queries[7] and "*" not in queries[7]


def test_class_reach_adds_the_zero_step_and_keeps_classes_without_roots():
    row = {"class": {"type": "uri", "value": sparql.WD + "Q5119"}, "root": {"type": "uri", "value": sparql.WD + "Q486972"}}
    reach = sparql.class_reach([row], ["Q5119", "Q6256", "Q42"], ["Q486972", "Q6256"])
    assert reach == {"Q5119": {"Q486972"}, "Q6256": {"Q6256"}, "Q42": set()}


@pytest.mark.parametrize("call", [
    lambda: sparql.qid('Q1 } ?s ?p ?o . { ?x'),
    lambda: sparql.qid("wd:Q1"),
    lambda: sparql.pid("P31/wdt:P279*"),
    lambda: sparql.lang_literal('en") || true || ("'),
    lambda: sparql.site_iri("en.wikipedia.org/> . ?s ?p ?o . <x"),
    lambda: sparql.candidates_query("P17", "object", None, ["Q79 } DELETE WHERE { ?s ?p ?o"], ["en"]),
    lambda: sparql.describe_query(["Q79"], ['en"@']),
])
def test_builders_refuse_smuggled_sparql(call):
    with pytest.raises(sparql.UnsafeValue):
        call()


def test_smuggling_through_config_sends_nothing(fixture_store, config, tmp_path):
    evil_culture = write(tmp_path, "evil.yaml", "label: Evil\ncountries:\n"
                         "  - {qid: 'Q79 } ?s ?p ?o . { ?x', label: X, wikipedia_sites: [en]}\n")
    evil_pair = write(tmp_path, "evil-pair.yaml", f"cultures: [{evil_culture}, west]\n")
    evil_site = write(tmp_path, "evil-site.yaml", "label: Evil\ncountries:\n"
                      "  - {qid: Q79, label: X, wikipedia_sites: ['en.wikipedia.org/> ?s ?p ?o . <x']}\n")
    evil_site_pair = write(tmp_path, "evil-site-pair.yaml", f"cultures: [{evil_site}, west]\n")
    app = SparqlApp(fixture_store)
    with serve(app) as url:
        for bad in (replace(config, pair=str(evil_pair)), replace(config, pair=str(evil_site_pair)),
                    replace(config, langs=('en") } } DROP ALL ; SELECT * { {', "ar")),
                    replace(config, predicates=("P31/wdt:P279*",))):
            with pytest.raises(ConfigError):
                curate(replace(bad, endpoint=url + "/sparql"), tmp_path / "run")
    assert app.requests == []
