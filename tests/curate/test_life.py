"""Life status from Wikidata (issue 40): the rule of curate/life.py on its own inputs, and the sample's people
as curate labels them (the dead from their P570/P20, the living from a birth within a century)."""

from __future__ import annotations

from datetime import date

import pytest

from factatlas.curate.endpoints import SAMPLE_PATH
from factatlas.curate.life import birth_date, life_status
from factatlas.records import Life

REF = date(2026, 11, 29)


@pytest.mark.parametrize(("deaths", "places", "births", "expected"), [
    (["1975-02-03T00:00:00Z"], [], ["1898-12-31T00:00:00Z"], (Life.DEAD, "P570")),
    (["http://www.wikidata.org/.well-known/genid/abc"], [], [], (Life.DEAD, "P570")),  # an unknown date of death
    ([], ["http://www.wikidata.org/entity/Q85"], ["1992-06-15T00:00:00Z"], (Life.DEAD, "P20")),
    ([], [], ["1992-06-15T00:00:00Z"], (Life.ALIVE, "P569:within-100y")),
    ([], [], ["1926-11-29T00:00:00Z"], (Life.ALIVE, "P569:within-100y")),  # exactly 100 years before
    ([], [], ["1926-11-28T00:00:00Z"], (Life.UNKNOWN, "")),  # a day earlier: no longer decided
    ([], [], ["1934-01-01T00:00:00Z", "1920-01-01T00:00:00Z"], (Life.UNKNOWN, "")),  # the earliest birth counts
    ([], [], [], (Life.UNKNOWN, "")),  # nothing known: unknown, never alive
    ([], [], ["-0500-01-01T00:00:00Z"], (Life.UNKNOWN, "")),  # a birth before the common era
])
def test_the_life_rule(deaths, places, births, expected):
    assert life_status(deaths, places, births, REF) == expected


def test_the_window_is_the_runs_choice():
    assert life_status([], [], ["1950-01-01T00:00:00Z"], REF, alive_within_years=50) == (Life.UNKNOWN, "")
    assert life_status([], [], ["1950-01-01T00:00:00Z"], REF, alive_within_years=80) == (Life.ALIVE,
                                                                                          "P569:within-80y")
    # a reference date of 29 February: the window starts on 28 February of the earlier year
    assert life_status([], [], ["2023-02-28T00:00:00Z"], date(2024, 2, 29), alive_within_years=1) == (
        Life.ALIVE, "P569:within-1y")


def test_birth_dates_read_from_literals():
    assert birth_date("1958-08-16T00:00:00Z") == date(1958, 8, 16)
    assert birth_date("1958-00-00T00:00:00Z") == date(1958, 1, 1)  # a year-precision value written with zeros
    assert birth_date("+1958-02-30T00:00:00Z") == date(1958, 2, 1)
    assert birth_date("not a date") is None
    # BCE and years outside what a date holds are unknown, not wrapped: -0500 is not the year 500
    assert birth_date("-0500-01-01T00:00:00Z") is None
    assert birth_date("9999-12-31T00:00:00Z") == date(9999, 12, 31)
    assert birth_date("+10000-01-01T00:00:00Z") is None and birth_date("0000-01-01T00:00:00Z") is None


def test_the_reference_date_is_resolved_into_the_config_and_checked():
    from factatlas.curate.engine import CurationConfig
    from factatlas.errors import ConfigError

    assert CurationConfig(pair="arab-west", reference_date="2030-01-01").validated().reference_date == "2030-01-01"
    assert date.fromisoformat(CurationConfig(pair="arab-west").validated().reference_date)  # today, recorded
    with pytest.raises(ConfigError, match="--reference-date '2030-13-01': expected a date YYYY-MM-DD"):
        CurationConfig(pair="arab-west", reference_date="2030-13-01").validated()


@pytest.fixture(scope="module")
def curated(tmp_path_factory):
    from factatlas.curate.engine import CurationConfig, curate

    if not SAMPLE_PATH.exists():
        pytest.skip("the embedded Wikidata sample is not built yet")
    return curate(CurationConfig(pair="arab-west", langs=("en", "pt"), reference_date="2026-11-29"),
                  tmp_path_factory.mktemp("life"))


@pytest.mark.slow  # curates the sample
def test_the_samples_people_by_life_status(curated):
    """The embedded sample's 130 people: 57 with a date of death (P570, some with a place of death too), the
    73 others born in 1933 or later, so alive at any reference date before 2033; arab-west holds 118 of them."""
    result = curated
    people = {q: e for q, e in result.entities.items() if "Q5" in e.classes}
    by = {}
    for e in people.values():
        by.setdefault(e.life, []).append(e.qid)
    assert {life: len(qs) for life, qs in by.items()} == {Life.DEAD: 46, Life.ALIVE: 72}
    assert people["Q1110560"].life == Life.DEAD and people["Q1110560"].life_source == "P570"  # Umm Kulthum
    assert people["Q3575465"].life == Life.DEAD  # Ziad Rahbani, d. 2025
    assert people["Q1354960"].life == Life.ALIVE and people["Q1354960"].life_source == "P569:within-100y"
    assert all(e.life == Life.UNKNOWN and e.life_source == "" for e in result.entities.values()
               if "Q5" not in e.classes)


@pytest.mark.slow
def test_portuguese_labels_come_from_the_brazilian_tag_first(curated):
    result = curated
    pt = {q: result.entities[q].labels["pt"] for q in ("Q3572", "Q60", "Q3692", "Q213", "Q79") if q in result.entities}
    assert pt == {"Q3572": "Túnis", "Q60": "Nova York", "Q3692": "Riad", "Q213": "Tchéquia", "Q79": "Egito"}
