"""The subject is never its own candidate (issue 40): «Libya shares a border with [Y]» offers no «Libya».

Exact candidate lists on a small P47 world in both candidate modes, the counts stats.json keeps, the
subject that is its fact's answer (the capital of a city-state), the importers' published sets, and the
invariant that rejects a planted subject."""

from __future__ import annotations

from dataclasses import replace

from factatlas.builder.invariants import check_content
from factatlas.records import Entity, frozen_mapping
from tests.builder.builder_fixtures import DictSource, build, make_facts, spec

# P47 «shares a border with»: Egypt-Libya-Sudan (arab), France-Germany (west); the pool holds all five
BORDERS = (
    ("arab", "P47", "Q79", ("Q1016", "Q1049")),  # Egypt: Libya, Sudan
    ("arab", "P47", "Q1016", ("Q79", "Q1049")),  # Libya: Egypt, Sudan
    ("arab", "P47", "Q1049", ("Q79", "Q1016")),  # Sudan: Egypt, Libya
    ("west", "P47", "Q142", ("Q183",)),
    ("west", "P47", "Q183", ("Q142",)),
)
LABELS = {"Q79": "Egypt", "Q1016": "Libya", "Q1049": "Sudan", "Q142": "France", "Q183": "Germany",
          "Q334": "Singapore", "Q90": "Paris", "Q85": "Cairo"}
TEMPLATES = {lang: {"P47/1": ("cloze", "[X] shares a border with [Y]."), "P36/1": ("cloze", "The capital of [X] is [Y].")}
             for lang in ("ar", "en")}


def _build(rows, **kw):
    from factatlas.builder.build import build_benchmark

    entities = {q: Entity(q, frozen_mapping({"en": label, "ar": label})) for q, label in LABELS.items()}
    return build_benchmark(make_facts(rows), entities, DictSource(entities, TEMPLATES), spec(**kw),
                           toolkit_version="test")


def _lists(result, lang="en"):
    return {p.subject_qid: p.candidate_qids for p in result.content.prompts if p.lang == lang}


def test_predicate_wide_lists_are_the_pool_less_the_subject():
    result = _build(BORDERS)
    assert _lists(result) == {
        "Q79": ("Q142", "Q183", "Q1016", "Q1049"),
        "Q142": ("Q79", "Q183", "Q1016", "Q1049"),
        "Q183": ("Q79", "Q142", "Q1016", "Q1049"),
        "Q1016": ("Q79", "Q142", "Q183", "Q1049"),
        "Q1049": ("Q79", "Q142", "Q183", "Q1016"),
    }
    forms = {p.subject_qid: p.candidate_forms for p in result.content.prompts if p.lang == "en"}
    assert forms["Q1016"] == ("Egypt", "France", "Germany", "Sudan")  # no «Libya» for Libya
    # one shared tuple per subject: every language holds the same QIDs
    assert _lists(result, "ar") == _lists(result)
    assert result.content.stats["candidates_removed"] == {"subject_candidate": "excluded", "subject": {"P47": 5}}
    assert result.content.meta["subject_candidate"] == "excluded"


def test_sampled_negatives_are_drawn_without_the_subject():
    result = _build(BORDERS, candidate_mode="sampled", k=4, seed=3)
    for subject, cands in _lists(result).items():
        assert subject not in cands and len(cands) == 4, (subject, cands)
    assert result.content.stats["candidates_removed"]["subject"] == {"P47": 5}


def test_a_subject_that_is_its_own_answer_stays_and_is_counted_apart():
    # Singapore's capital is Singapore (the city-state): the subject is the gold, not a distractor
    rows = (("asia", "P36", "Q334", ("Q334",)), ("arab", "P36", "Q79", ("Q85",)), ("west", "P36", "Q142", ("Q90",)))
    result = _build(rows, cultures=("asia", "arab", "west"))
    assert _lists(result)["Q334"] == ("Q85", "Q90", "Q334")
    assert result.content.stats["candidates_removed"] == {"subject_candidate": "excluded",
                                                          "subject-is-gold": {"P36": 1}}


def test_published_sets_keep_their_subject():
    result = _build(BORDERS, subject_candidate="kept")
    assert set(_lists(result).values()) == {("Q79", "Q142", "Q183", "Q1016", "Q1049")}
    assert result.content.stats["candidates_removed"] == {"subject_candidate": "kept"}


def test_the_invariant_rejects_a_subject_among_its_candidates():
    result = _build(BORDERS)
    assert check_content(result.content) == []
    planted = [replace(p, candidate_qids=("Q79", "Q142", "Q183", "Q1016", "Q1049"),
                       candidate_forms=("Egypt", "France", "Germany", "Libya", "Sudan"))
               if p.subject_qid == "Q1016" else p for p in result.content.prompts]
    found = {(v.rule, v.where) for v in check_content(replace(result.content, prompts=planted))}
    assert ("subject-among-candidates", "arab:P47:Q1016|ar|P47/1") in found
    assert ("subject-among-candidates", "arab:P47:Q1016|en|P47/1") in found
    # the list with its subject put back is the predicate's one list: no other rule fires
    assert {rule for rule, _ in found} == {"subject-among-candidates"}


def test_the_small_world_of_the_other_build_tests_is_unchanged():
    # P36 and P19 subjects (countries, people) are never in their pools: nothing is removed
    assert build().content.stats["candidates_removed"] == {"subject_candidate": "excluded"}
    assert spec().subject_candidate == "excluded"


def test_a_fact_s_own_list_never_stands_in_for_the_predicate_wide_one():
    """``SubjectExclusion.apply``: a list made for one fact (``shared=False``, a sampled list) is not kept for the
    (predicate, subject), so the predicate-wide list asked next is that pool less the subject, not the sample."""
    from factatlas.builder.candidates import SubjectExclusion
    from factatlas.records import Fact, ObjectRef

    fact = Fact(id="arab:P36:Q79", predicate="P36", subject="Q79", objects=(ObjectRef("Q85"),), culture="arab",
                countries=("Q79",), popularity=1.0, rank=1)
    exclusion = SubjectExclusion()
    assert exclusion.apply(fact, ("Q85", "Q79", "Q90"), ["Q85"], shared=False) == ("Q85", "Q90")
    assert exclusion.apply(fact, ("Q85", "Q3551", "Q79", "Q64"), ["Q85"]) == ("Q85", "Q3551", "Q64")
    assert {r: dict(c) for r, c in exclusion.counts.items()} == {"subject": {"P36": 2}}


def test_pool_collisions_name_forms_shared_by_two_answers_per_language():
    from factatlas.builder.candidates import SurfaceCollision, pool_collisions

    labels = {"Q1": {"en": "Georgia", "ka": "საქართველო"}, "Q2": {"en": "georgia"}, "Q3": {"en": "Tbilisi"}}
    found = pool_collisions({"P17": ["Q1", "Q2", "Q3"]}, labels, ("en", "ka"))
    assert found == {"en": [SurfaceCollision("en", "P17", "Georgia", ("Q1", "Q2"))], "ka": []}


def test_the_predicate_lists_are_kept_as_hashes_not_as_the_subjects_they_lack():
    # with the subject excluded every fact has a list of its own, so what the scan keeps per list grows with
    # the facts (122,858 at a million prompts): three 64-bit words, never the subject's string
    import sys

    from factatlas.invariants import InvariantScan, MemorySide

    result = _build(BORDERS)
    content = result.content
    # a fresh string object per subject (the literals are interned and shared), referenced by the rows alone
    subjects = {q: "".join(list(q)) for q in {p.subject_qid for p in content.prompts}}
    unreferenced = {q: sys.getrefcount(s) for q, s in subjects.items()}
    prompts = [replace(p, subject_qid=subjects[p.subject_qid]) for p in content.prompts]
    scan = InvariantScan(content.meta, MemorySide(content.facts, {e.qid for e in content.entities}),
                         content.candidates)
    scan.feed(prompts)
    scan.feed([])  # what a batch remembers goes at the next batch
    scan.block = None  # and the open fact's block at the end
    del prompts
    assert {q: sys.getrefcount(s) for q, s in subjects.items()} == unreferenced
    assert scan.finish() == []
    # and a list that differs from the predicate's once its subject is put back is still found
    planted = [replace(p, candidate_qids=p.candidate_qids[:-1], candidate_forms=p.candidate_forms[:-1])
               if p.subject_qid == "Q142" else p for p in content.prompts]
    scan = InvariantScan(content.meta, MemorySide(content.facts, {e.qid for e in content.entities}), content.candidates)
    scan.feed(planted)
    assert "predicate-candidates-differ" in {v.rule for v in scan.finish()}
