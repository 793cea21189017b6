"""The error taxonomy of wrong answers (X-FACTR §5 Table 2, DLAMA's other culture), one hand-made case per
kind, and on `factatlas compare`."""

from __future__ import annotations

import csv

from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.probe.analysis import errors as E
from factatlas.records import Fact, GoldObject, ObjectRef, ScoredPrompt
from tests.probe.test_analysis_cli import scripted_run  # noqa: F401  (the fixture)

CANDS = ("Qg", "Qo", "Qc", "Qc_arab", "Qrel", "Qwt", "Qwe", "Qunk", "S1")


def _scored(case: str, culture: str = "arab", top: str | None = None, prediction: str = "",
            correct: bool = False, gold: str = "Qg") -> ScoredPrompt:
    """A ranking (``top`` given: its order is set) or an open answer (``prediction``; ranked = what it matched)."""
    if top is not None:
        ranked = (top, *(c for c in CANDS if c != top))
        order = tuple(CANDS.index(q) for q in ranked)
    else:
        ranked, order = ((gold,) if correct else ()), ()
    rank = 1 if correct else (ranked.index(gold) + 1 if gold in ranked else None)
    return ScoredPrompt("m", f"{case}|en|T/1", case, "en", "T/1", culture, "P1", (GoldObject(gold),), ranked, rank,
                        candidates=CANDS, order=order, countries=("Qc_arab",), subject="S1",
                        subject_label="Foo Bar", prediction=prediction)


CTX = E.ErrorContext(
    classes={"Qg": frozenset({"C1"}), "Qwe": frozenset({"C1", "C2"}), "Qwt": frozenset({"C9"}),
             "Qo": frozenset({"C1"}), "Qrel": frozenset({"C1"})},
    subject_objects={"S1": frozenset({"Qg", "Qrel"})},  # S1's other fact (another predicate) has object Qrel
    country_cultures={"Qc": frozenset({"west"}), "Qc_arab": frozenset({"arab"})})


def test_each_kind_by_hand():
    west_fact = _scored("w", culture="west", top="Qo", correct=True, gold="Qo")  # makes Qo a Western object of P1
    cases = {
        "right": (_scored("a", top="Qg", correct=True), None),
        "empty": (_scored("b", prediction=" . "), E.EMPTY),
        "subject-qid": (_scored("c", top="S1"), E.SUBJECT),
        "subject-label": (_scored("d", prediction="the Foo Bar city"), E.SUBJECT),
        "other-object": (_scored("e", top="Qo"), E.OTHER_CULTURE),
        "other-country": (_scored("f", top="Qc"), E.OTHER_CULTURE),
        "related": (_scored("g", top="Qrel"), E.RELATED),
        "type": (_scored("h", top="Qwt"), E.WRONG_TYPE),
        "entity": (_scored("i", top="Qwe"), E.WRONG_ENTITY),
        "unknown": (_scored("j", top="Qunk"), E.TYPE_UNKNOWN),
        "unmatched": (_scored("k", prediction="Zzyzx"), E.UNMATCHED),
    }
    results = [west_fact, *(r for r, _ in cases.values())]
    owners = {("P1", "Qo"): frozenset({"west"}), ("P1", "Qg"): frozenset({"arab"})}
    for name, (r, kind) in cases.items():
        assert E.classify(r, CTX, owners) == kind, name
    # a fact's own country is related, not the other culture's
    assert E.classify(_scored("l", top="Qc_arab"), CTX, owners) == E.RELATED
    table = {(e.predicate, e.lang): e for e in E.error_taxonomy(results, CTX)}
    total = table[("all", "all")]
    assert (total.prompts, total.wrong) == (12, 10)
    assert dict(zip(E.CATEGORIES, total.by_category, strict=True)) == {
        E.EMPTY: 1, E.SUBJECT: 2, E.OTHER_CULTURE: 2, E.RELATED: 1, E.WRONG_TYPE: 1, E.WRONG_ENTITY: 1,
        E.TYPE_UNKNOWN: 1, E.UNMATCHED: 1}
    assert list(table) == [("P1", "en"), ("P1", "all"), ("all", "en"), ("all", "all")]


def test_context_from_facts():
    facts = [Fact("arab:P36:Q79", "P36", "Q79", (ObjectRef("Q85"),), "arab", ("Q79",), 1.0, 1),
             Fact("arab:P30:Q79", "P30", "Q79", (ObjectRef("Q15"),), "arab", ("Q79",), 1.0, 1),
             Fact("west:P36:Q142", "P36", "Q142", (ObjectRef("Q90"),), "west", ("Q142", "Q79"), 1.0, 1)]
    ctx = E.context_from_facts(facts, {"Q85": ("Q5119",)})
    assert ctx.subject_objects == {"Q79": frozenset({"Q85", "Q15"}), "Q142": frozenset({"Q90"})}
    assert ctx.country_cultures == {"Q79": frozenset({"arab", "west"}), "Q142": frozenset({"west"})}
    assert ctx.classes == {"Q85": frozenset({"Q5119"})}


def test_compare_writes_the_taxonomy(scripted_run, tmp_path):  # noqa: F811
    # --split all: the counts below are over every split (compare reads the held-out split by default)
    res = CliRunner().invoke(app, ["compare", str(scripted_run), "--models", "arab-expert,west-expert",
                                   "--split", "all", "--out", str(tmp_path), "--bootstrap", "20"])
    assert res.exit_code == 0, res.output
    with (tmp_path / "error_taxonomy.csv").open(encoding="utf-8") as f:
        rows = {(r["model"], r["predicate"], r["language"]): r for r in csv.DictReader(f)}
    # arab-expert answers Cairo (an Arab capital) to every Western fact: 48 answers from the other culture;
    # west-expert answers Cairo (Rabat for Egypt) to the Arab facts: own culture, and no classes recorded
    arab, west = rows[("arab-expert", "all", "all")], rows[("west-expert", "all", "all")]
    assert (arab["wrong"], arab["other culture"], arab["type unknown"]) == ("48", "48", "0")
    assert (west["wrong"], west["other culture"], west["type unknown"]) == ("48", "0", "48")
    assert rows[("arab-expert", "P36", "fr")]["other culture"] == "24"
    assert "Kinds of wrong answers" in (tmp_path / "compare.html").read_text("utf-8")
