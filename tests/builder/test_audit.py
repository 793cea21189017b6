"""DLAMA's Western-share audit (§3.1, Table A1) on hand-made facts and through `factatlas audit-culture`."""

from __future__ import annotations

import csv
import json

import pytest
from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.builder.audit import read_subject_countries, western_share
from factatlas.errors import ConfigError
from factatlas.predicates import load_predicates
from factatlas.records import CountryRef, Culture, Fact, ObjectRef
from tests.probe.test_analysis_cli import scripted_run  # noqa: F401  (the fixture)

WEST = Culture("west", "West", (CountryRef("Q142", "France", ("fr",)), CountryRef("Q55", "Netherlands", ("nl",),
                                                                                   ("Q29999",))))
ARAB = Culture("arab", "Arab", (CountryRef("Q79", "Egypt", ("ar",)),))


def _fact(pid: str, subject: str, objects: tuple[str, ...] = ("Qx",), countries: tuple[str, ...] = ()) -> Fact:
    return Fact(f"global:{pid}:{subject}", pid, subject, tuple(ObjectRef(o) for o in objects), "global",
                countries, 0.0, 1)


def test_western_share_by_hand():
    facts = [
        _fact("P36", "Q142"),                      # subject is a country: France -> Western
        _fact("P36", "Q79"),                       # Egypt -> non-Western
        _fact("P36", "Q8502"),                     # a mountain, no listed country -> unknown (unlisted)
        _fact("P27", "Qp1", ("Q29999",)),          # citizen of the Kingdom of the Netherlands -> Western
        _fact("P19", "Qp2"),                       # birthplace: country via P17, from the table -> Egypt
        _fact("P19", "Qp3"),                       # nothing known -> unknown
        _fact("P19", "Qp4", countries=("Q30",)),   # the fact's own country, outside the Western list
    ]
    rows = {r.predicate: r for r in western_share(facts, load_predicates(), [WEST, ARAB], "west",
                                                   {"Qp2": ("Q79",)})}
    assert (rows["P36"].western, rows["P36"].non_western, rows["P36"].unknown, rows["P36"].share) == (1, 1, 1, 0.5)
    assert dict(rows["P36"].sources) == {"subject": 2, "unlisted": 1}
    assert (rows["P27"].western, rows["P27"].share) == (1, 1.0)
    assert (rows["P19"].western, rows["P19"].non_western, rows["P19"].unknown, rows["P19"].share) == (0, 2, 1, 0.0)
    assert dict(rows["P19"].sources) == {"fact": 1, "table": 1}
    assert (rows["all"].facts, rows["all"].western, rows["all"].non_western, rows["all"].share) == (7, 2, 3, 0.4)
    assert list(rows) == ["P19", "P27", "P36", "all"]
    with pytest.raises(ConfigError, match="western culture 'north'"):
        western_share(facts, load_predicates(), [WEST, ARAB], "north")


def test_subject_countries_table_errors(tmp_path):
    path = tmp_path / "s.tsv"
    path.write_text("# subject countries\nQ1\tQ142,Q79\n\nQ2\tFrance\n", "utf-8")
    with pytest.raises(ConfigError, match=r"s\.tsv:4:1: expected SUBJECT_QID<TAB>COUNTRY_QID"):
        read_subject_countries(path)
    path.write_text("Q1\tQ142\nQ3\t\n", "utf-8")  # a subject with no country
    with pytest.raises(ConfigError, match=r"s\.tsv:2:1: expected SUBJECT_QID<TAB>COUNTRY_QID"):
        read_subject_countries(path)
    path.write_text("Q1\tQ142, Q79\n", "utf-8")
    assert read_subject_countries(path) == {"Q1": ("Q142", "Q79")}


def test_cli_on_the_capitals(scripted_run):  # noqa: F811
    # 24 capitals facts, countries = the country itself; DLAMA's 20 Western countries leave out Greece and
    # Sweden: 10 Western facts, 14 non-Western (12 Arab + 2)
    res = CliRunner().invoke(app, ["audit-culture", str(scripted_run)])
    assert res.exit_code == 0, res.output
    with (scripted_run / "audit" / "western_share.csv").open(encoding="utf-8") as f:
        rows = {r["predicate"]: r for r in csv.DictReader(f)}
    assert (rows["P36"]["western"], rows["P36"]["non-western"], rows["P36"]["unknown"]) == ("10", "14", "0")
    assert rows["all"]["western share"] == str(round(10 / 24, 4))
    data = json.loads((scripted_run / "audit" / "western_share.json").read_text("utf-8"))
    assert data["western"] == "west" and data["predicates"][-1]["predicate"] == "all"


def test_mlama_import_takes_cultures_from_countries(tmp_path):
    from factatlas.benchmark import BENCHMARK_FILES, Benchmark
    from factatlas.builder.importers import mlama
    from factatlas.builder.invariants import check_directory
    from tests.builder.importers.test_import_mlama import _write_mlama

    _write_mlama(tmp_path / "mlama1.1")
    result = mlama.import_mlama(tmp_path / "mlama1.1", ["en", "fr"], out=tmp_path / "run", cultures=[WEST, ARAB])
    out = tmp_path / "run" / "build"
    assert check_directory(out) == []
    bench = Benchmark.open(out, require=BENCHMARK_FILES)
    # P36 and P37 have the country as subject: Egypt -> arab, France -> west (Germany has no French triple)
    assert {f.id: f.countries for f in bench.facts_by_id.values()} == {
        "arab:P36:Q79": ("Q79",), "west:P36:Q142": ("Q142",), "arab:P37:Q79": ("Q79",)}
    assert result.content.meta["cultures"] == ["arab", "west"]
    assert result.content.meta["source"]["cultures_from_countries"] == {"assigned:arab": 2, "assigned:west": 1}
    default = mlama.import_mlama(tmp_path / "mlama1.1", ["en", "fr"], out=tmp_path / "run2")
    assert default.content.meta["cultures"] == ["global"]
