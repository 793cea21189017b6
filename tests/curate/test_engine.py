"""The five steps on the fixture graph through the embedded (pyoxigraph) endpoint: exact outputs."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from factatlas.curate.engine import CurationConfig, curate
from factatlas.errors import ConfigError
from factatlas.records import Gender, Provenance
from factatlas.tables import read_drops, read_entities, read_facts
from tests.curate.support import OUTPUT_FILES, output_bytes


@pytest.fixture(scope="module")
def result(fixture_files, tmp_path_factory):
    graph, table = fixture_files
    run = tmp_path_factory.mktemp("engine")
    res = curate(CurationConfig(pair="arab-west", langs=("ar", "en"), sample=str(graph), page_lengths=str(table)), run)
    return res, run


def objects(res, fid):
    fact = next(f for f in res.facts if f.id == fid)
    return [(o.qid, o.provenance, o.via) for o in fact.objects]


def drops_for(res, item):
    return sorted((d.step, d.reason) for d in res.drops if d.item == item)


def test_every_predicate_yields_facts_for_both_cultures_except_where_the_graph_has_none(result):
    res, _ = result
    assert len(res.predicates) == 20
    missing = {(c, p) for c in res.counts for p, n in res.counts[c].items() if n == 0}
    assert missing == {("arab", "P449")}  # the fixture has no Arab TV series


def test_type_constraints_remove_dlama_pollution_with_reasons(result):
    res, _ = result
    assert drops_for(res, "arab:P17:Q100031") == [("candidates", "subject-type")]  # an event
    assert drops_for(res, "west:P17:Q100032") == [("candidates", "subject-type")]  # a list article
    assert drops_for(res, "arab:P17:Q79") == [("candidates", "subject-type")]  # the country itself
    assert drops_for(res, "arab:P495:Q100012") == [("candidates", "subject-type")]  # "Kurds" is not a work
    # voice is never an instrument: dropped as an object; a singer with only "voice" loses the fact
    assert objects(res, "arab:P1303:Q100001") == [("Q211784", Provenance.DIRECT, None)]
    assert drops_for(res, "arab:P1303:Q100001") == [("objects", "object-type")]
    assert drops_for(res, "arab:P1303:Q100002") == [("objects", "no-valid-object"), ("objects", "object-type")]
    assert not any(f.id == "arab:P1303:Q100002" for f in res.facts)


def test_admin_ancestors_stop_before_the_country(result):
    res, _ = result
    assert objects(res, "arab:P19:Q100001") == [
        ("Q85", Provenance.DIRECT, None), ("Q30513", Provenance.ADMIN_ANCESTOR, "Q85")]
    assert objects(res, "west:P20:Q100003") == [
        ("Q90", Provenance.DIRECT, None), ("Q13917", Provenance.ADMIN_ANCESTOR, "Q90")]
    for f in res.facts:
        if f.predicate in ("P19", "P20"):
            assert not {"Q79", "Q142", "Q55", "Q822"} & set(f.object_qids), f.id


def test_superclasses_are_added_only_when_they_have_the_object_type(result):
    res, _ = result
    assert objects(res, "arab:P106:Q100001") == [
        ("Q177220", Provenance.DIRECT, None),
        ("Q483501", Provenance.SUPERCLASS, "Q177220"),
        ("Q639669", Provenance.SUPERCLASS, "Q177220"),
    ]
    # "person" (Q215627) is a superclass of artist but not an occupation: dropped with a reason
    assert ("augment", "superclass-type") in drops_for(res, "Q215627")
    assert objects(res, "arab:P103:Q100001") == [
        ("Q29919", Provenance.DIRECT, None), ("Q13955", Provenance.SUPERCLASS, "Q29919")]


def test_labels_and_metadata(result):
    res, _ = result
    assert drops_for(res, "arab:P106:Q100005") == [("labels", "no-label:ar")]
    assert all(f.subject != "Q100005" for f in res.facts)
    umm = res.entities["Q100001"]
    assert umm.labels == {"ar": "أم كلثوم", "en": "Umm Kulthum"}
    assert umm.aliases == {"ar": ("كوكب الشرق",), "en": ("Kawkab al-Sharq",)}
    assert (umm.gender, umm.gender_source, umm.classes) == (Gender.FEMININE, "P21", ("Q5",))
    assert res.entities["Q100004"].gender == Gender.NON_BINARY  # P21 = non-binary (Q48270)
    assert res.entities["Q85"].gender == Gender.UNKNOWN
    assert res.entities["Q85"].classes == ("Q5119", "Q1549591")
    # the Netherlands (Q55, not a sovereign state) is not lost
    assert objects(res, "west:P36:Q55") == [("Q727", Provenance.DIRECT, None)]


def test_popularity_rank_and_countries(result):
    res, _ = result
    p17 = sorted((f for f in res.facts if f.id.startswith("arab:P17:")), key=lambda f: f.rank)
    assert [f.subject for f in p17] == ["Q3820", "Q100033", "Q100030", "Q85"]
    assert [f.popularity for f in p17] == sorted((f.popularity for f in p17), reverse=True)
    beirut = p17[0]
    # max over the culture's editions (en is the longer one in the fixture table)
    assert beirut.popularity == (3820 % 997) * 37 + 1000 + 500
    assert beirut.countries == ("Q822",)


def test_files_round_trip_and_manifest(result):
    res, run = result
    out = run / "curate"
    assert read_facts(out / "facts.parquet") == res.facts
    assert read_entities(out) == res.entities
    assert sorted(read_drops(out / "dropped.parquet"), key=repr) == sorted(res.drops, key=repr)
    stage = json.loads((run / "manifest.json").read_text())["stages"]["curate"]
    assert stage["config"]["pair"] == "arab-west" and stage["config"]["langs"] == ["ar", "en"]
    assert stage["membership"]["arab"]["resolved"] == ["Q79", "Q822"]
    assert len(stage["membership"]["arab"]["only_in_list"]) == 20
    assert stage["cultures"]["arab"] == ["Q79", "Q822"]
    assert stage["counts"]["facts"] == len(res.facts)
    assert set(stage["outputs"]) == {f"curate/{n}" for n in OUTPUT_FILES}
    assert len(stage["queries"]["hashes"]) == stage["queries"]["sent"]
    lines = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    assert {x["status"] for x in lines} == {"ok"} and all(x["text"].startswith("PREFIX") for x in lines)


def test_identical_inputs_give_byte_identical_outputs(config, tmp_path, reference_outputs):
    curate(config, tmp_path / "again")
    assert output_bytes(tmp_path / "again") == reference_outputs


def test_max_subjects_and_country_quota(config, tmp_path):
    res = curate(replace(config, max_subjects=1, predicates=("P17", "P27")), tmp_path / "a")
    # N caps the ranked subjects; a later step may still drop one (Q100005, the most popular Egyptian
    # person, has no Arabic label) — that drop is reported, never refilled silently from below the cut
    assert res.counts == {"arab": {"P17": 1, "P27": 0}, "west": {"P17": 1, "P27": 1}}
    assert [(d.step, d.reason) for d in res.drops if d.item == "arab:P27:Q100005"] == [("labels", "no-label:ar")]
    dropped = {d.item for d in res.drops if d.reason == "max-subjects"}
    assert {"arab:P17:Q100033", "arab:P17:Q100030", "arab:P17:Q85"} <= dropped
    res = curate(replace(config, country_quota=1, predicates=("P17",)), tmp_path / "b")
    # one place per country: Beirut for Lebanon and the most popular Egyptian place
    assert sorted(f.subject for f in res.facts if f.culture == "arab") == ["Q100033", "Q3820"]
    assert {d.item for d in res.drops if d.reason == "country-quota"} == {"arab:P17:Q100030", "arab:P17:Q85",
                                                                         "west:P17:Q90"}


def test_sitelinks_popularity(config, tmp_path):
    res = curate(replace(config, popularity="sitelinks", predicates=("P36",)), tmp_path / "s")
    assert {f.subject: f.popularity for f in res.facts if f.culture == "arab"} == {"Q79": 30 + 79 % 7,
                                                                                  "Q822": 20 + 822 % 7}


def test_membership_list_mode_uses_the_checked_list(config, tmp_path):
    culture = tmp_path / "arab-list.yaml"
    text = (config_path("arab")).read_text().replace("use: rule", "use: list")
    culture.write_text(text)
    pair = tmp_path / "pair.yaml"
    pair.write_text(f"name: arab-list-west\ncultures: [{culture}, west]\n")
    res = curate(replace(config, pair=str(pair), predicates=("P36",)), tmp_path / "l")
    assert len(res.cultures["arab-list"].countries) == 22
    assert res.counts["arab-list"]["P36"] == 2
    assert len(res.empty_countries()["arab-list"]) == 20


def config_path(name):
    from factatlas.curate.config import CULTURES_DIR

    return CULTURES_DIR / f"{name}.yaml"


def test_bad_run_options_are_config_errors(config, tmp_path):
    for bad in (replace(config, langs=("ar", "EN!")), replace(config, popularity="size"),
                replace(config, max_subjects=0), replace(config, pair="arab-wset"),
                replace(config, predicates=("P999999",))):
        with pytest.raises(ConfigError):
            curate(bad, tmp_path / "x")
    with pytest.raises(ConfigError, match="Did you mean 'length'"):
        curate(replace(config, popularity="lenght"), tmp_path / "x")


def test_countries_added_by_the_rule_are_curated_and_reported(config, tmp_path):
    culture = tmp_path / "arab-small.yaml"
    culture.write_text("label: Arab League (list of one)\nmembership: {predicate: P463, target: Q7172, "
                       "wikipedia_sites: [ar, en]}\ncountries:\n  - {qid: Q79, label: Egypt, wikipedia_sites: [ar, en]}\n")
    pair = tmp_path / "pair.yaml"
    pair.write_text(f"cultures: [{culture}, west]\n")
    res = curate(replace(config, pair=str(pair), predicates=("P36",)), tmp_path / "r")
    pinned = res.membership["arab-small"]
    assert (pinned["only_in_rule"], pinned["only_in_list"]) == (["Q822"], [])
    lebanon = next(c for c in res.cultures["arab-small"].countries if c.qid == "Q822")
    assert (lebanon.label, lebanon.wikipedia_sites) == ("لبنان", ("ar", "en"))  # first requested language
    assert res.counts["arab-small"]["P36"] == 2
    assert "only in the rule: Q822" in res.table()
