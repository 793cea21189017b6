"""mParaRel hygiene options of the builder on a hand-sized benchmark with a small in-test prompt source."""

from __future__ import annotations

import pytest

from factatlas.builder.build import BuildSpec, build_benchmark
from factatlas.builder.hygiene import Hygiene, final_text
from factatlas.builder.sources import TemplateInfo
from factatlas.errors import ConfigError
from factatlas.records import ANSWER_MARKER, Entity, Fact, ObjectRef, Provenance, RenderFailure, fact_id
from factatlas.tables import prompt_to_row

TEMPLATES = {  # predicate -> (id, kind, text); [X] subject, [Y] answer
    "P19": [("P19/1", "cloze", "[X] was born in [Y]."), ("P19/2", "cloze", "[Y] is where [X] was born ."),
            ("P19/q1", "question", "Where was [X] born?")],
    "P20": [("P20/1", "cloze", "[X] died in [Y].")],
}
LABELS = {"Q1": "Ann", "Q2": "Bob", "Q3": "Cy", "Q4": "Dee", "Q10": "Paris", "Q11": "Rome", "Q12": "Oslo"}


class TableSource:
    """Plain substitution from TEMPLATES; subject Q3 has no P19/2 prompt (a render failure)."""

    def templates(self, lang, predicate):
        return tuple(TemplateInfo(i, k, "reviewed") for i, k, _ in TEMPLATES.get(predicate, []))

    def render_prompt(self, lang, template_id, subject_qid):
        if (template_id, subject_qid) == ("P19/2", "Q3"):
            return RenderFailure("inflection-failed", "Cy")
        text = next(t for i, _, t in TEMPLATES[template_id.split("/")[0]] if i == template_id)
        return text.replace("[X]", LABELS[subject_qid]).replace("[Y]", ANSWER_MARKER)

    def render_answer(self, lang, template_id, object_qid, subject_qid):
        return (LABELS[object_qid],)

    def describe(self):
        return {"templates": "test table"}


def _fact(pred: str, subject: str, *objects: str) -> Fact:
    return Fact(fact_id("west", pred, subject), pred, subject, tuple(ObjectRef(o, Provenance.DIRECT) for o in objects),
                "west", ("Q142",), 1.0, 1)


FACTS = [_fact("P19", "Q1", "Q10"), _fact("P19", "Q2", "Q10", "Q11"), _fact("P19", "Q3", "Q12"),
         _fact("P20", "Q4", "Q11")]
ENTITIES = {q: Entity(q, {"en": label}) for q, label in LABELS.items()}


def _build(h: Hygiene):
    spec = BuildSpec("t", "arab-west", ("west",), ("en",), hygiene=h)
    return build_benchmark(FACTS, ENTITIES, TableSource(), spec).content


def test_default_build_keeps_everything_that_renders():
    content = _build(Hygiene())
    assert sorted(f.subject for f in content.facts) == ["Q1", "Q2", "Q3", "Q4"]
    assert "hygiene" not in content.meta  # default builds stay byte-identical to before
    texts = {r.prompt_id.split("|")[2] + "@" + r.subject_qid: r.text for r in content.prompts}
    assert texts["P19/1@Q1"] == f"Ann was born in {ANSWER_MARKER}."


def test_single_object_and_min_templates_drop_with_reasons():
    content = _build(Hygiene(single_object=("P19",), min_templates=2))
    # Q2 has two direct objects; P20 has one cloze template; Q3 renders only P19/1 (+ the question)
    assert [f.subject for f in content.facts] == ["Q1"]
    reasons = {(d.item, d.reason) for d in content.drops}
    assert (fact_id("west", "P19", "Q2"), "multi-object") in reasons
    assert (fact_id("west", "P20", "Q4"), "too-few-templates") in reasons
    assert (fact_id("west", "P19", "Q3"), "too-few-templates") in reasons
    assert content.meta["hygiene"] == {"single_object": ["P19"], "strip_final_punctuation": False,
                                       "min_templates": 2}
    # 'all' reaches every predicate; an unlisted predicate keeps its multi-object facts
    assert len(_build(Hygiene(single_object=("all",))).facts) == 3
    assert len(_build(Hygiene(single_object=("P20",))).facts) == 4


def test_final_punctuation_is_stripped_from_cloze_prompts_only():
    content = _build(Hygiene(strip_final_punctuation=True))
    texts = {(r.template_id, r.subject_qid): prompt_to_row(r) for r in content.prompts}
    assert texts[("P19/1", "Q1")]["text"] == f"Ann was born in {ANSWER_MARKER}"
    assert texts[("P19/2", "Q1")]["text"] == f"{ANSWER_MARKER} is where Ann was born"
    assert texts[("P19/q1", "Q1")]["text"] == "Where was Ann born?"
    assert texts[("P19/1", "Q1")]["answer_start"] == len("Ann was born in ")
    assert final_text("Le Caire est la capitale de [Y] 。", "cloze", Hygiene(strip_final_punctuation=True)) == \
        "Le Caire est la capitale de [Y]"
    assert final_text("القاهرة هي [Y]؟", "cloze", Hygiene(strip_final_punctuation=True)) == "القاهرة هي [Y]"


def test_bad_options_are_named():
    with pytest.raises(ConfigError, match="--min-templates must be >= 1"):
        _build(Hygiene(min_templates=0))
    with pytest.raises(ConfigError, match="'birthplace' is neither a predicate id"):
        _build(Hygiene(single_object=("birthplace",)))


def test_min_templates_drops_a_predicate_with_fewer_cloze_templates_naming_the_count():
    from factatlas.builder.hygiene import screen_facts

    kept, drops = screen_facts(FACTS, {"P19": 2, "P20": 1}, Hygiene(min_templates=2))
    assert [f.subject for f in kept] == ["Q1", "Q2", "Q3"]
    assert [(d.item, d.reason, d.detail) for d in drops] == [
        (fact_id("west", "P20", "Q4"), "too-few-templates",
         "P20 has 1 cloze template(s) in every language; --min-templates 2")]
    assert screen_facts(FACTS, {"P19": 2}, Hygiene(min_templates=2))[1] == []  # no template: another step's drop
    assert screen_facts(FACTS, {"P19": 2, "P20": 1}, Hygiene())[1] == []  # the default keeps every predicate
