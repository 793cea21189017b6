"""Balance between the cultures of a pair, on screen at curate and build time (issue 13)."""

from __future__ import annotations

import pytest

from factatlas.balance import balance_lines, balance_warning, culture_balance
from factatlas.records import Entity, Fact
from tests.clirun import factatlas


def _fact(culture: str, subject: str, countries: tuple[str, ...]) -> Fact:
    return Fact(id=f"{culture}:P17:{subject}", predicate="P17", subject=subject, objects=(), culture=culture,
                countries=countries, popularity=1.0, rank=1)


def test_counts_per_culture_and_country_and_the_warning_above_the_share():
    facts = [_fact("west", f"Q{i}", ("Q30",)) for i in range(100, 107)] + [_fact("arab", "Q9", ("Q79", "Q822"))]
    balance = culture_balance(facts, ["arab", "west", "asia"])
    assert balance.facts == {"arab": 1, "west": 7, "asia": 0}
    assert balance.countries == {"arab": {"Q79": 1, "Q822": 1}, "west": {"Q30": 7}, "asia": {}}
    assert balance.largest() == ("west", 7 / 8)
    entities = {"Q30": Entity("Q30", {"en": "United States"})}
    assert balance_lines(balance, entities) == [
        "balance: arab 1 (12.5%) · asia 0 (0.0%) · west 7 (87.5%)",
        "  arab by country: Q79 1, Q822 1",
        "  asia by country: none",
        "  west by country: United States (Q30) 7",
    ]
    warning = balance_warning(balance, 0.75)
    assert warning is not None and warning.startswith("west holds 87.5% of the facts (7; arab 1, asia 0), above "
                                                      "--max-culture-share 75%")
    assert balance_warning(balance, 0.9) is None
    assert balance_warning(culture_balance(facts[:3], ["west"]), 0.5) is None  # one culture: nothing to compare


@pytest.mark.slow
def test_a_lopsided_user_pair_is_warned_about_at_curate_and_build(tmp_path):
    (tmp_path / "comoros.yaml").write_text(
        "label: Comoros only\ncountries:\n  - {qid: Q970, label: Comoros, wikipedia_sites: [en, fr]}\n", "utf-8")
    (tmp_path / "pair.yaml").write_text("name: comoros-west\ncultures: [comoros.yaml, west]\n", "utf-8")
    run = tmp_path / "run"
    curate = factatlas("curate", run, "--pair", tmp_path / "pair.yaml", "--langs", "en")
    assert curate.returncode == 0, curate.stderr
    assert "balance: comoros 6 (0.8%) · west 763 (99.2%)" in curate.stdout
    assert "  comoros by country: Comoros (Q970) 6" in curate.stdout
    assert "warning: west holds 99.2% of the facts (763; comoros 6), above --max-culture-share 75%" in curate.stderr
    build = factatlas("build", run, "--langs", "en", "--max-culture-share", "0.995")
    assert build.returncode == 0, build.stderr
    assert "balance: comoros 6 (0.8%) · west 763 (99.2%)" in build.stdout
    assert "warning:" not in build.stderr  # raised on purpose


def test_a_culture_lists_its_top_countries_by_facts_then_qid_and_counts_the_rest():
    eight = [_fact("west", f"Q{i}", (f"Q{900 - i}",)) for i in range(8)]  # eight countries, one fact each
    assert balance_lines(culture_balance(eight, ["west"]))[1] == (
        "  west by country: Q893 1, Q894 1, Q895 1, Q896 1, Q897 1, Q898 1, Q899 1, Q900 1")  # ties by QID; no "more"
    nine = eight + [_fact("west", "Q8", ("Q892",)), _fact("west", "Q9", ("Q900",))]
    assert balance_lines(culture_balance(nine, ["west"]))[1] == (
        "  west by country: Q900 2, Q892 1, Q893 1, Q894 1, Q895 1, Q896 1, Q897 1, Q898 1, ... 1 more")
