"""DLAMA diagnostics on a hand-sized fixture: per country, augmentation, other-culture errors, equivalences."""

from __future__ import annotations

import pytest

from factatlas.errors import ConfigError
from factatlas.probe.analysis import dlama as D
from factatlas.records import Fact, GoldObject, ObjectRef
from tests.probe.analysis_fixture import result


def _g(*qids: str, aug: str = "") -> tuple[GoldObject, ...]:
    return (*(GoldObject(q) for q in qids), *((GoldObject(aug, "superclass"),) if aug else ()))


# one language, one template; tops chosen so that every error class occurs once
RESULTS = [
    result("A", "f1", "en", "west", "P1", True, golds=_g("Qa", aug="Qa2"), top="Qa2", countries=("Q30",)),
    result("A", "f2", "en", "west", "P1", True, golds=_g("Qb"), top="Qb", countries=("Q30", "Q145")),
    result("A", "f3", "en", "arab", "P1", False, golds=_g("Qc"), top="Qa", countries=("Q79",)),  # other culture
    result("A", "f4", "en", "arab", "P1", False, golds=_g("Qb"), top="Qz", countries=("Q79",)),  # neither
    result("A", "f6", "en", "arab", "P1", False, golds=_g("Qe"), top="Qb", countries=("Q79",)),  # shared (f2, f4)
    result("A", "f7", "en", "arab", "P1", False, golds=_g("Qf"), top="Qc", countries=("Q810",)),  # own (f3)
    result("A", "f5", "en", "arab", "P2", False, golds=_g("Q432"), top="Q47740", countries=("Q851",)),
]


def test_accuracy_by_country():
    rows = {(r.culture, r.country, r.lang): (r.acc.n_facts, r.acc.micro) for r in D.accuracy_by_country(RESULTS)}
    # f2 counts for both of its countries
    assert rows[("west", "Q30", "en")] == (2, 1.0)
    assert rows[("west", "Q145", "en")] == (1, 1.0)
    assert rows[("arab", "Q79", "en")] == (3, 0.0)
    assert rows[("arab", "Q79", "all")] == (3, 0.0)
    assert {k[1] for k in rows} == {"Q30", "Q145", "Q79", "Q810", "Q851"}


def test_augmentation_before_after():
    rows = {e.predicate: e for e in D.augmentation_effect(RESULTS)}
    # P1: six facts; direct objects only: f2 right -> 1/6; every valid object: f1 (via Qa2) and f2 -> 2/6
    assert (rows["P1"].n_facts, rows["P1"].n_augmented_facts) == (6, 1)
    assert rows["P1"].direct_only == pytest.approx(1 / 6)
    assert rows["P1"].all_valid == pytest.approx(2 / 6)
    assert (rows["P2"].direct_only, rows["P2"].all_valid) == (0.0, 0.0)
    assert rows["all"].direct_only == pytest.approx(1 / 12)  # macro over P1, P2
    assert rows["all"].all_valid == pytest.approx(1 / 6)


def _facts(results) -> list[Fact]:
    """The benchmark's facts behind ``results``: every valid object of each."""
    return [Fact(r.fact_id, r.predicate, f"S{r.fact_id}", tuple(ObjectRef(g.qid) for g in r.golds), r.culture,
                 r.countries, 1.0, 1) for r in {r.fact_id: r for r in results}.values()]


def test_wrong_answers_by_culture_of_the_answer():
    rows = {(e.predicate, e.culture): e for e in D.cross_culture_errors(RESULTS, D.object_cultures(_facts(RESULTS)))}
    arab = rows[("P1", "arab")]
    assert (arab.n_prompts, arab.wrong, arab.other_culture, arab.shared, arab.own_culture, arab.neither) == \
        (4, 4, 1, 1, 1, 1)
    assert arab.other_share == 0.25
    west = rows[("P1", "west")]
    assert (west.wrong, west.other_share) == (0, None)
    assert rows[("P2", "arab")].neither == 1


def test_who_owns_an_answer_is_read_from_every_fact():
    """Only the Arab prompts are analysed (say, the held-out split); the Western facts f1 and f2 are not among
    them and still own Qa and Qb: f3's answer Qa is other culture, f6's Qb shared, as on the whole set."""
    arab_only = [r for r in RESULTS if r.culture == "arab"]
    rows = {(e.predicate, e.culture): e for e in D.cross_culture_errors(arab_only, D.object_cultures(_facts(RESULTS)))}
    arab = rows[("P1", "arab")]
    assert (arab.other_culture, arab.shared, arab.own_culture, arab.neither) == (1, 1, 1, 1)
    # owners from the analysed prompts alone would miss the Western facts: no answer from the other culture
    alone = {(e.predicate, e.culture): e for e in D.cross_culture_errors(arab_only, D.object_cultures(_facts(arab_only)))}
    assert (alone[("P1", "arab")].other_culture, alone[("P1", "arab")].neither) == (0, 2)


def test_equivalence_table_is_reported_separately():
    table = D.parse_equivalences({"equivalences": [["Q432", "Q47740"]]}, "eq.yaml")
    rows = {e.predicate: e for e in D.equivalence_effect(RESULTS, table)}
    assert (rows["P2"].strict, rows["P2"].with_equivalences, rows["P2"].rescued_prompts) == (0.0, 1.0, 1)
    assert rows["P1"].strict == rows["P1"].with_equivalences == pytest.approx(2 / 6)
    assert rows["all"].strict == pytest.approx(1 / 6)
    assert rows["all"].with_equivalences == pytest.approx(2 / 3)
    # a group limited to another predicate rescues nothing
    limited = D.parse_equivalences({"equivalences": [{"qids": ["Q432", "Q47740"], "predicates": ["P1"]}]}, "eq.yaml")
    assert {e.predicate: e.rescued_prompts for e in D.equivalence_effect(RESULTS, limited)}["P2"] == 0


def test_equivalence_file_errors_name_the_entry():
    with pytest.raises(ConfigError, match=r"eq.yaml: equivalences\[1\]: expected two or more QIDs"):
        D.parse_equivalences({"equivalences": [["Q1", "Q2"], ["Islam", "Q2"]]}, "eq.yaml")
    with pytest.raises(ConfigError, match="a list 'equivalences'"):
        D.parse_equivalences(["Q1"], "eq.yaml")


def test_the_equivalence_file_is_read_with_positions_and_the_alias_bound(tmp_path):
    path = tmp_path / "eq.yaml"
    path.write_text("equivalences:\n  - [Q432, Q47740]\n  - qids: [Islam, Q2]\n", "utf-8")
    with pytest.raises(ConfigError, match=r"eq.yaml:3:5: equivalences\[1\]: expected two or more QIDs"):
        D.load_equivalences(path)
    path.write_text("equivalences:\n  - [Q432, Q47740]\n  - [Q1, Q2\n", "utf-8")
    with pytest.raises(ConfigError, match=r"eq.yaml:4:1: not valid YAML"):
        D.load_equivalences(path)
    bomb = ["a: &a [Q1, Q2, Q3, Q4, Q5, Q6, Q7, Q8, Q9, Q10]"]
    bomb += [f"{c}: &{c} [{', '.join(['*' + p] * 10)}]" for p, c in zip("abcde", "bcdef", strict=True)]
    path.write_text("\n".join(bomb) + "\nequivalences: [*f]\n", "utf-8")  # 10^6 QIDs once expanded
    with pytest.raises(ConfigError, match="aliases expand this document"):
        D.load_equivalences(path)
    path.write_text("equivalences:\n  - [Q432, Q47740]\n", "utf-8")
    assert D.load_equivalences(path).same("P1", "Q432", "Q47740")


def test_an_augmented_object_belongs_to_its_fact():
    """f1's valid objects are Qa and, by augmentation (a superclass), Qa2: an Arab fact answered Qa2 gets an
    answer from the other culture, as with Qa (DLAMA's owners are every valid object, not the direct ones)."""
    wrong = result("A", "f9", "en", "arab", "P1", False, golds=_g("Qq"), top="Qa2", countries=("Q79",))
    (row,) = [e for e in D.cross_culture_errors([wrong], D.object_cultures(_facts(RESULTS))) if e.predicate == "P1"]
    assert (row.wrong, row.other_culture, row.neither) == (1, 1, 0)
