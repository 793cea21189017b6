"""The error taxonomy of wrong answers (X-FACTR §5 Table 2, DLAMA's other culture), one hand-made case per
kind, its evidence, ownership from every fact of the benchmark, and on `factatlas compare`."""

from __future__ import annotations

import csv

from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.probe.analysis import errors as E
from factatlas.records import Fact, GoldObject, ObjectRef, Prompt, ScoredPrompt
from tests.probe.test_analysis_cli import scripted_run  # noqa: F401  (the fixture)

CANDS = ("Qg", "Qo", "Qc", "Qc_arab", "Qrel", "Qwt", "Qwe", "Qunk", "S1", "Qx", "Qy", "Qz")


def _scored(case: str, culture: str = "arab", top: str | None = None, prediction: str = "",
            correct: bool = False, gold: str = "Qg", fact: str = "arab:P1:S1", predicate: str = "P1") -> ScoredPrompt:
    """A ranking (``top`` given: its order is set) or an open answer (``prediction``; ranked = what it matched)."""
    if top is not None:
        ranked = (top, *(c for c in CANDS if c != top))
        order = tuple(CANDS.index(q) for q in ranked)
    else:
        ranked, order = ((gold,) if correct else ()), ()
    rank = 1 if correct else (ranked.index(gold) + 1 if gold in ranked else None)
    return ScoredPrompt("m", f"{case}|en|T/1", fact, "en", "T/1", culture, predicate, (GoldObject(gold),), ranked, rank,
                        split="test", candidates=CANDS, order=order, countries=("Qc_arab",), subject="S1",
                        subject_label="Foo Bar", prediction=prediction)


def _fact(culture: str, predicate: str, subject: str, objects: tuple[str, ...], countries: tuple[str, ...]) -> Fact:
    return Fact(f"{culture}:{predicate}:{subject}", predicate, subject, tuple(ObjectRef(q) for q in objects), culture,
                countries, 1.0, 1)


# The benchmark's facts (every split): the asked fact arab:P1:S1 (gold Qg), S1's other fact (object Qrel),
# a Western fact with object Qo listing the Western country Qc, and the two "either" cases: Qx is a valid P1
# object of a Western fact only, but an Arab fact lists it as a country; Qy is the reverse (an Arab P1 object,
# a country only a Western fact lists).
FACTS = [
    _fact("arab", "P1", "S1", ("Qg",), ("Qc_arab",)),
    _fact("arab", "P2", "S1", ("Qrel",), ("Qc_arab",)),
    _fact("west", "P1", "W1", ("Qo",), ("Qc",)),
    _fact("west", "P1", "W2", ("Qx",), ("Qc",)),
    _fact("arab", "P2", "A3", ("Qz",), ("Qx",)),
    _fact("arab", "P1", "A4", ("Qy",), ("Qc_arab",)),
    _fact("west", "P2", "W5", ("Qz",), ("Qy",)),
]
CLASSES = {"Qg": ("C1",), "Qwe": ("C1", "C2"), "Qwt": ("C9",), "Qo": ("C1",), "Qrel": ("C1",)}
CTX = E.context_from_facts(FACTS, CLASSES, {"Qo": "Ohio", "Qg": "Gold City"})


def test_every_object_of_a_fact_owns_the_answer():
    """A fact with several valid objects: every one of them, not only the first, is its culture's answer
    (docs/metrics.md: ownership from every fact the benchmark holds, all of its objects)."""
    facts = [_fact("arab", "P1", "S1", ("Qg",), ("Qc_arab",)), _fact("west", "P1", "W1", ("Qo", "Qx"), ("Qc",))]
    ctx = E.context_from_facts(facts, {"Qg": ("C1",), "Qo": ("C1",), "Qx": ("C1",)})
    assert ctx.object_cultures("P1", "Qx") == ctx.object_cultures("P1", "Qo") == frozenset({"west"})
    assert E.classify(_scored("m", top="Qx"), ctx) == E.OTHER_CULTURE  # not a wrong entity of the same type


def test_each_kind_by_hand():
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
    for name, (r, kind) in cases.items():
        assert E.classify(r, CTX) == kind, name
    # a fact's own country is related, not the other culture's
    assert E.classify(_scored("l", top="Qc_arab"), CTX) == E.RELATED
    table = {(e.predicate, e.lang): e for e in E.error_taxonomy([r for r, _ in cases.values()], CTX)}
    total = table[("all", "all")]
    assert (total.prompts, total.wrong) == (11, 10)
    assert dict(zip(E.CATEGORIES, total.by_category, strict=True)) == {
        E.EMPTY: 1, E.SUBJECT: 2, E.OTHER_CULTURE: 2, E.RELATED: 1, E.WRONG_TYPE: 1, E.WRONG_ENTITY: 1,
        E.TYPE_UNKNOWN: 1, E.UNMATCHED: 1}
    assert list(table) == [("P1", "en"), ("P1", "all"), ("all", "en"), ("all", "all")]


def test_other_culture_by_either_rule():
    """docs/metrics.md: a valid object only of other cultures' facts, *or* a country only they list (either
    rule alone suffices). Qx is a Western P1 object that an Arab fact lists as its country: asked by an Arab
    fact it is other culture by the object rule, asked by a Western fact by the country rule; Qy the same the
    other way round. Qz is a P2 object of both cultures and no country: neither rule holds."""
    west = {"culture": "west", "fact": "west:P1:W9"}
    verdicts = {case: E.explain(r, CTX) for case, r in (
        ("x-arab", _scored("x1", top="Qx")), ("x-west", _scored("x2", top="Qx", **west)),
        ("y-arab", _scored("y1", top="Qy")), ("y-west", _scored("y2", top="Qy", **west)),
        ("z-arab", _scored("z", top="Qz", predicate="P2", fact="arab:P2:S9")))}
    assert {case: (v.category, v.evidence) for case, v in verdicts.items()} == {
        "x-arab": (E.OTHER_CULTURE, "a valid P1 object only in other cultures' facts: west 1 (west:P1:W2)"),
        "x-west": (E.OTHER_CULTURE, "a country only other cultures' facts list: arab 1 (arab:P2:A3)"),
        "y-arab": (E.OTHER_CULTURE, "a country only other cultures' facts list: west 1 (west:P2:W5)"),
        "y-west": (E.OTHER_CULTURE, "a valid P1 object only in other cultures' facts: arab 1 (arab:P1:A4)"),
        "z-arab": (E.TYPE_UNKNOWN, "the answer's classes are not recorded; P2 owners: arab 1 (arab:P2:A3); "
                                   "west 1 (west:P2:W5)"),
    }


def test_ownership_comes_from_every_fact_not_the_evaluated_prompts():
    """Only the held-out prompt of arab:P1:S1 is evaluated; the Western fact that owns Qo has no prompt among
    them (it is in another split), and still decides that Qo is the other culture's answer."""
    (only,) = [_scored("e", top="Qo")]
    table = {(e.predicate, e.lang): e for e in E.error_taxonomy([only], CTX)}
    assert dict(zip(E.CATEGORIES, table[("all", "all")].by_category, strict=True))[E.OTHER_CULTURE] == 1
    # without the Western facts in the benchmark, the same answer is not the other culture's
    alone = E.context_from_facts([f for f in FACTS if f.culture == "arab"], CLASSES)
    assert E.classify(only, alone) == E.WRONG_ENTITY


def test_evidence_names_the_facts_and_classes():
    ev = {case: E.explain(_scored(case, top=top), CTX).evidence
          for case, top in (("o", "Qo"), ("c", "Qc"), ("x", "Qx"), ("r", "Qrel"), ("t", "Qwt"), ("e", "Qwe"),
                            ("u", "Qunk"), ("s", "S1"))}
    assert ev == {
        "o": "a valid P1 object only in other cultures' facts: west 1 (west:P1:W1)",
        "c": "a country only other cultures' facts list: west 2 (west:P1:W1, west:P1:W2)",
        "x": "a valid P1 object only in other cultures' facts: west 1 (west:P1:W2)",
        "r": "a valid object of the subject's other facts: arab:P2:S1",
        "t": "classes C9 vs the valid objects' C1; P1 owners: none",
        "e": "shares class C1 with a valid object; P1 owners: none",
        "u": "the answer's classes are not recorded; P1 owners: none",
        "s": "the top answer S1 is the subject",
    }
    assert E.explain(_scored("q", top="Qg", correct=True), CTX) is None
    assert E.explain(_scored("k", prediction="Zzyzx"), CTX).evidence == "open answer 'Zzyzx' matches no candidate"
    many = E.context_from_facts([_fact("west", "P1", f"W{i}", ("Qo",), ()) for i in range(5)], {})
    assert E.explain(_scored("o", top="Qo"), many).evidence == \
        "a valid P1 object only in other cultures' facts: west 5 (west:P1:W0, west:P1:W1, west:P1:W2, ...)"


def test_wrong_answers_one_row_each_with_the_prompt():
    prompt = Prompt("o|en|T/1", "arab:P1:S1", "en", "T/1", "cloze", "The capital of Foo Bar is [Y].", 23, "arab-west",
                    "arab", "P1", "test", "S1", "Foo Bar", ("Qg",), (("Gold City",),), CANDS,
                    tuple(f"form of {q}" for q in CANDS), "reviewed")
    results = [_scored("o", top="Qo"), _scored("a", top="Qg", correct=True), _scored("k", prediction="Zzyzx")]
    rows = [w.row() for w in E.wrong_answers(results, CTX, {prompt.prompt_id: prompt})]
    assert rows == [
        ("m", "o|en|T/1", "test", "P1", "en", "arab", "S1", "Foo Bar", "The capital of Foo Bar is [Y].", "Qo", "Ohio",
         "form of Qo", "Qg", "Gold City", E.OTHER_CULTURE,
         "a valid P1 object only in other cultures' facts: west 1 (west:P1:W1)"),
        ("m", "k|en|T/1", "test", "P1", "en", "arab", "S1", "Foo Bar", "", "", "", "Zzyzx", "Qg", "Gold City",
         E.UNMATCHED, "open answer 'Zzyzx' matches no candidate"),
    ]
    assert len(E.WRONG_ANSWER_HEAD) == len(rows[0])


def test_context_from_facts():
    facts = [Fact("arab:P36:Q79", "P36", "Q79", (ObjectRef("Q85"),), "arab", ("Q79",), 1.0, 1),
             Fact("arab:P30:Q79", "P30", "Q79", (ObjectRef("Q15"),), "arab", ("Q79",), 1.0, 1),
             Fact("west:P36:Q142", "P36", "Q142", (ObjectRef("Q90"),), "west", ("Q142", "Q79"), 1.0, 1)]
    ctx = E.context_from_facts(facts, {"Q85": ("Q5119",)})
    assert ctx.subject_facts == {"Q79": {"arab:P30:Q79": frozenset({"Q15"}), "arab:P36:Q79": frozenset({"Q85"})},
                                 "Q142": {"west:P36:Q142": frozenset({"Q90"})}}
    assert ctx.country_owners == {"Q79": {"arab": ("arab:P30:Q79", "arab:P36:Q79"), "west": ("west:P36:Q142",)},
                                  "Q142": {"west": ("west:P36:Q142",)}}
    assert ctx.object_cultures("P36", "Q85") == frozenset({"arab"})
    assert ctx.country_cultures("Q79") == frozenset({"arab", "west"})
    assert ctx.classes == {"Q85": frozenset({"Q5119"})}


def test_compare_writes_the_taxonomy(scripted_run, tmp_path):  # noqa: F811
    # --split all: the counts below are over every split (compare reads the held-out split by default)
    res = CliRunner().invoke(app, ["compare", str(scripted_run), "--models", "arab-expert,west-expert",
                                   "--split", "all", "--out", str(tmp_path), "--bootstrap", "20", "--no-plots"])
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


def test_compare_on_the_held_out_split_owns_answers_by_every_fact(scripted_run, tmp_path):  # noqa: F811
    """The default (held-out) split holds the test facts only; Cairo's fact (Egypt) is a train fact. Its
    answer to a Western test fact is still the other culture's, and each wrong answer has its row."""
    res = CliRunner().invoke(app, ["compare", str(scripted_run), "--models", "arab-expert,west-expert",
                                   "--out", str(tmp_path), "--bootstrap", "20", "--no-plots"])
    assert res.exit_code == 0, res.output
    with (tmp_path / "error_taxonomy.csv").open(encoding="utf-8") as f:
        rows = {(r["model"], r["predicate"], r["language"]): r for r in csv.DictReader(f)}
    arab, west = rows[("arab-expert", "all", "all")], rows[("west-expert", "all", "all")]
    assert (arab["wrong"], arab["other culture"], arab["type unknown"]) == ("24", "24", "0")
    assert (west["wrong"], west["other culture"], west["type unknown"]) == ("24", "0", "24")
    with (tmp_path / "other_culture_errors.csv").open(encoding="utf-8") as f:
        dlama = {(r["model"], r["culture"], r["language"]): r for r in csv.DictReader(f)}
    assert (dlama[("arab-expert", "west", "en")]["other culture"], dlama[("west-expert", "arab", "en")]["own culture"]) \
        == ("12", "12")
    with (tmp_path / "wrong_answers.csv").open(encoding="utf-8") as f:
        answers = list(csv.DictReader(f))
    assert len(answers) == 48
    first = answers[0]
    assert (first["model"], first["prompt"], first["split"], first["answer"], first["answer label"],
            first["answer as written"], first["golds"], first["category"]) == \
        ("arab-expert", "west:P36:Q183|en|P36/1", "test", "Q85", "Cairo", "Cairo", "Q64", "other culture")
    assert first["prompt text"] == "The capital of Germany is [Y]."
    assert first["evidence"] == "a valid P36 object only in other cultures' facts: arab 1 (arab:P36:Q79)"
    page = (tmp_path / "compare.md").read_text("utf-8")
    assert "48 rows not shown here: `wrong_answers.csv` has them all" in page


def test_the_benchmark_context_takes_every_entitys_classes_from_its_entity_table(capitals_benchmark, tmp_path):
    """The classes decide ``wrong type`` against ``wrong entity``: read from entities.parquet's columns, they
    are the entity records' own (an entity without classes has an empty set: its type is unknown)."""
    import dataclasses
    import shutil

    from factatlas.benchmark import Benchmark
    from factatlas.tables import write_entities

    folder = tmp_path / "build"
    shutil.copytree(capitals_benchmark, folder)
    entities = list(Benchmark.open(folder).entities.values())
    classes = {e.qid: ("Q5119", "Q515") if i % 2 else () for i, e in enumerate(entities)}
    write_entities(folder, [dataclasses.replace(e, classes=classes[e.qid]) for e in entities])
    ctx = E.benchmark_context(Benchmark.open(folder))
    assert dict(ctx.classes) == {q: frozenset(c) for q, c in classes.items()}
    assert any(ctx.classes.values()) and not all(ctx.classes.values())
