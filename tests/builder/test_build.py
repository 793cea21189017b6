"""build_benchmark, candidates and stats on small hand-built inputs, with exact expected outputs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from factatlas.builder.build import build_benchmark
from factatlas.builder.candidates import (
    predicate_pools,
    qid_sort_key,
    sampled_candidates,
    surface_collisions,
)
from factatlas.builder.stats import compute_stats, leaks
from factatlas.errors import ConfigError
from factatlas.records import Drop, Entity, ObjectRef, Provenance, frozen_mapping
from factatlas.tables import prompt_to_row
from tests.builder.builder_fixtures import (
    BASE_FACTS,
    TEMPLATES,
    DictSource,
    build,
    entities_for,
    make_facts,
    spec,
    write,
)


def test_rows_of_one_fact_exactly():
    rows = [prompt_to_row(r) for r in build().content.prompts if r.fact_id == "arab:P36:Q79" and r.template_id == "P36/1"]
    common = {"fact_id": "arab:P36:Q79", "template_id": "P36/1", "kind": "cloze", "pair": "arab-west",
              "culture": "arab", "predicate": "P36", "split": "test", "subject_qid": "Q79", "gold_qids": ("Q85",),
              "candidate_qids": ("Q64", "Q85", "Q90", "Q3805"), "template_status": "reviewed",
              # the fixture's facts carry no locality and all have popularity 1: bottom quantile, 10^0 bin
              "article_langs": (), "home_langs": (), "popularity": 1.0, "popularity_quantile": 1,
              "popularity_log10": 0}
    assert rows == [
        {**common, "prompt_id": "arab:P36:Q79|ar|P36/1", "lang": "ar", "text": "عاصمة مصر هي [Y].", "answer_start": 13,
         "subject_label": "مصر", "gold_forms": (("القاهرة",),), "candidate_forms": ("برلين", "القاهرة", "باريس", "عمان")},
        {**common, "prompt_id": "arab:P36:Q79|en|P36/1", "lang": "en", "text": "The capital of Egypt is [Y].",
         "answer_start": 24, "subject_label": "Egypt", "gold_forms": (("Cairo",),),
         "candidate_forms": ("Berlin", "Cairo", "Paris", "Amman")},
    ]


def test_counts_meta_and_candidate_pool():
    result = build()
    assert result.counts == {"input_facts": 6, "facts": 6, "prompts": 20, "dropped": 0}
    meta = result.content.meta
    assert meta["templates"] == {"ar": ["P19/1", "P36/1", "P36/q1"], "en": ["P19/1", "P36/1", "P36/q1"]}
    assert (meta["candidate_mode"], meta["k"], meta["counts"]) == ("predicate", None,
                                                                   {"facts": 6, "prompts": 20, "dropped": 0})
    pool = [(c["predicate"], c["lang"], c["qid"]) for c in result.content.candidates if c["lang"] == "en"]
    assert pool == [("P19", "en", "Q85"), ("P19", "en", "Q90"), ("P36", "en", "Q64"), ("P36", "en", "Q85"),
                    ("P36", "en", "Q90"), ("P36", "en", "Q3805")]
    # entities: only what the prompts and facts reference, Q79..Q183 and the two persons
    assert sorted(e.qid for e in result.content.entities) == sorted(
        ["Q1", "Q2", "Q64", "Q79", "Q85", "Q90", "Q142", "Q183", "Q810", "Q3805"])


def test_facts_and_candidates_leave_every_language_templates_only_their_own():
    rows = [*BASE_FACTS, ("arab", "P19", "Q3", ("Q85",)), ("west", "P36", "Q40", ("Q1741",))]
    entities = entities_for(rows)
    entities["Q3"] = Entity("Q3", frozen_mapping({"en": "Umm Kulthum"}))  # subject without an Arabic label
    entities["Q40"] = Entity("Q40", frozen_mapping({"en": "Austria", "ar": "النمسا"}))
    entities["Q1741"] = Entity("Q1741", frozen_mapping({"en": "Vienna"}))  # object without an Arabic label
    entities["Q1748"] = Entity("Q1748", frozen_mapping({"en": "Copenhagen"}))
    facts = make_facts(rows)
    # an augmented object (a containing area) without an Arabic answer form leaves the fact's golds only
    paris = next(f for f in facts if f.id == "west:P36:Q142")
    facts[facts.index(paris)] = replace(paris, objects=(*paris.objects, ObjectRef("Q1748", Provenance.ADMIN_ANCESTOR,
                                                                                  "Q90")))
    templates = {"en": TEMPLATES["en"], "ar": {k: v for k, v in TEMPLATES["ar"].items() if k != "P36/q1"}}
    result = build_benchmark(facts, entities, DictSource(entities, templates), spec(), toolkit_version="test")
    assert result.content.drops == [
        Drop("P36/q1", "build", "template-missing:ar", "template P36/q1 exists in en but not in ar; skipped for ar",
             "", "P36", ""),
        Drop("arab:P19:Q3", "build", "no-label:ar", "missing: Q3@ar", "arab", "P19", ""),
        Drop("west:P36:Q40", "build", "no-label:ar", "missing: Q1741@ar", "west", "P36", ""),
        Drop("Q1748", "build", "no-label:ar", "object label missing in ar", "", "P36", ""),
        Drop("west:P36:Q142", "build", "augmented-object-removed", "Q1748", "west", "P36", ""),
    ]
    # 6 facts in both languages; en keeps its question template P36/q1 (4 prompts more than ar)
    assert result.counts == {"input_facts": 8, "facts": 6, "prompts": 16, "dropped": 5}
    assert result.content.meta["templates"] == {"ar": ["P19/1", "P36/1"], "en": ["P19/1", "P36/1", "P36/q1"]}
    per_lang = {lang: {(r.fact_id, r.template_id) for r in result.content.prompts if r.lang == lang}
                for lang in ("ar", "en")}
    assert per_lang["en"] - per_lang["ar"] == {(f, "P36/q1") for f in ("arab:P36:Q79", "arab:P36:Q810",
                                                                       "west:P36:Q142", "west:P36:Q183")}
    assert {r.fact_id for r in result.content.prompts if r.lang == "ar"} == \
        {r.fact_id for r in result.content.prompts if r.lang == "en"}
    assert {r.gold_qids for r in result.content.prompts if r.fact_id == "west:P36:Q142"} == {("Q90",)}
    assert "Q1748" not in {q for r in result.content.prompts for q in r.candidate_qids}
    assert result.content.stats["dropped"] == {"build/augmented-object-removed": 1, "build/no-label:ar": 3,
                                               "build/template-missing:ar": 1}
    from factatlas.builder.invariants import check_content

    assert check_content(result.content) == []


class OneTemplateFails(DictSource):
    """The Arabic answer of P36/1 renders for no object (a first-draft template the language cannot use)."""

    def render_answer(self, lang, template_id, object_qid, subject_qid):
        from factatlas.records import RenderFailure

        if (lang, template_id) == ("ar", "P36/1"):
            return RenderFailure("inflection-missing", f"no case form of {object_qid}")
        return super().render_answer(lang, template_id, object_qid, subject_qid)


def test_a_template_one_language_cannot_render_is_skipped_there_never_the_predicate():
    """One template failing in one language used to remove every fact of its predicate from every language."""
    from factatlas.builder.invariants import check_content
    from factatlas.builder.losses import losses_lines, parallel_losses, skipped_lines

    entities = entities_for(BASE_FACTS)
    result = build_benchmark(make_facts(BASE_FACTS), entities, OneTemplateFails(entities), spec(),
                             toolkit_version="test")
    assert result.counts["facts"] == 6  # all four P36 facts survive
    assert result.content.meta["templates"] == {"ar": ["P19/1", "P36/q1"], "en": ["P19/1", "P36/1", "P36/q1"]}
    assert [(d.item, d.reason, d.predicate) for d in result.content.drops] == [
        ("P36/1", "inflection-missing:ar", "P36")]
    assert "template P36/1 skipped for ar" in result.content.drops[0].detail
    assert check_content(result.content) == []
    losses = parallel_losses(result.content.drops, ("ar", "en"))
    assert losses_lines(losses) == []  # nothing removed from en
    assert skipped_lines(losses) == ["ar skips, P36: templates P36/1 (missing in ar or no ar answer form for some "
                                     "candidate)"]


def test_sampled_candidates_are_seeded_per_fact():
    pool = ["Q64", "Q85", "Q90", "Q3805", "Q142", "Q183"]
    assert sampled_candidates("arab:P19:Q1", ["Q85"], pool, 3, 0) == ("Q64", "Q3805", "Q85")
    assert sampled_candidates("arab:P19:Q1", ["Q85"], pool, 3, 1) == ("Q183", "Q3805", "Q85")
    assert sampled_candidates("west:P19:Q2", ["Q90"], pool, 3, 0) == ("Q183", "Q90", "Q64")
    # fewer negatives than K-1: all of them, ordered by sha256(fact id, QID), the gold at no fixed place
    assert sampled_candidates("west:P19:Q2", ["Q90"], ["Q64", "Q85", "Q90"], 10, 0) == ("Q90", "Q64", "Q85")
    with pytest.raises(ValueError, match="k must be >= 1"):
        sampled_candidates("x", ["Q1"], pool, 0, 0)
    sampled = build(candidate_mode="sampled", k=3).content
    assert {r.fact_id: r.candidate_qids for r in sampled.prompts} == {
        "arab:P19:Q1": ("Q90", "Q85"), "arab:P36:Q79": ("Q90", "Q3805", "Q85"),
        "arab:P36:Q810": ("Q64", "Q90", "Q3805"), "west:P19:Q2": ("Q90", "Q85"),
        "west:P36:Q142": ("Q3805", "Q64", "Q90"), "west:P36:Q183": ("Q3805", "Q85", "Q64")}
    assert sampled.meta["k"] == 3
    with pytest.raises(ConfigError, match="sampled candidates need --k >= 2"):
        build(candidate_mode="sampled", k=1)


def test_pools_order_qids_numerically_and_collisions_are_found():
    assert predicate_pools(make_facts(BASE_FACTS)) == {"P19": ("Q85", "Q90"), "P36": ("Q64", "Q85", "Q90", "Q3805")}
    assert sorted(["Q100", "Q42", "bm:ab", "Q7"], key=qid_sort_key) == ["Q7", "Q42", "Q100", "bm:ab"]
    found = surface_collisions("en", "P19", [("Q90", "Paris"), ("Q830149", "PARIS "), ("Q85", "Cairo")])
    assert [(c.form, c.qids) for c in found] == [("Paris", ("Q90", "Q830149"))]


def test_stats_exactly():
    rows = [*BASE_FACTS, ("arab", "P19", "Q5", ("Q85",))]
    entities = entities_for(rows)
    entities["Q5"] = Entity("Q5", frozen_mapping({"en": "Cairo University", "ar": "جامعة القاهرة"}))
    result = build_benchmark(make_facts(rows), entities, DictSource(entities), spec(), toolkit_version="test")
    stats = compute_stats(result.content.facts, result.content.prompts, entities, ("ar", "en"))
    # 7 facts, 4 arab; Q5's label holds its gold's label in both languages -> 1/7 overall, 1/4 in arab
    assert {k: stats[k] for k in ("facts", "prompts", "prompts_per_language", "templates_per_language",
                                  "facts_per_culture", "western_share", "valid_objects_per_fact",
                                  "label_coverage", "leakage_rate")} == {
        "facts": 7, "prompts": 22, "prompts_per_language": {"ar": 11, "en": 11},
        "templates_per_language": {"ar": 3, "en": 3}, "facts_per_culture": {"arab": 4, "west": 3},
        "western_share": round(3 / 7, 6), "valid_objects_per_fact": 1.0, "label_coverage": {"ar": 1.0, "en": 1.0},
        "leakage_rate": {lang: {"rate": round(1 / 7, 6), "facts": 1, "per_culture": {"arab": 0.25, "west": 0.0}}
                         for lang in ("ar", "en")}}
    cell = stats["cells"]["arab"]["P19"]
    assert (cell["facts"], cell["valid_objects_per_fact"], cell["distinct_objects"]) == ({"ar": 2, "en": 2}, 1.0, 1)
    assert stats["label_coverage_scope"] == "benchmark facts"
    # a subject without a label in a language is not a fact of that language's leakage rate (nor its coverage)
    entities["Q5"] = Entity("Q5", frozen_mapping({"en": "Cairo University"}))
    partial = compute_stats(result.content.facts, result.content.prompts, entities, ("ar", "en"),
                            input_facts=result.content.facts)
    assert partial["label_coverage_scope"] == "input facts"
    assert partial["leakage_rate"]["ar"] == {"rate": 0.0, "facts": 0, "per_culture": {"arab": 0.0, "west": 0.0}}
    assert partial["leakage_rate"]["ar"] != partial["leakage_rate"]["en"]
    assert partial["label_coverage"]["ar"] < 1.0 == partial["label_coverage"]["en"]
    assert leaks("Cairo University", ["cairo"]) and not leaks("Amman", ["Cairo", ""])


def test_identical_inputs_give_byte_identical_files(tmp_path):
    a, b = write(build(), tmp_path / "a"), write(build(), tmp_path / "b")
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir()) and "prompts.parquet" in names
    assert all((a / n).read_bytes() == (b / n).read_bytes() for n in names)


def test_western_share_is_na_for_a_pair_without_the_western_culture():
    from factatlas.builder.stats import stats_table

    result = build()
    stats = compute_stats(result.content.facts, result.content.prompts, entities_for(BASE_FACTS), ("ar", "en"),
                          western="rhine")
    assert stats["western_share"] is None
    assert stats_table(stats, ["ar", "en"]).caption.startswith("western share n/a (no 'rhine' culture) · ")
    assert result.content.stats["western_share"] == 0.5


def test_only_a_checked_benchmark_gets_its_validation_record(tmp_path):
    """validated.json says every rule ran on exactly these files: a write without the check leaves none."""
    from factatlas.builder.benchmark import write_benchmark
    from factatlas.validation import RECORD_NAME

    content = build().content
    write_benchmark(tmp_path / "checked", content)
    write_benchmark(tmp_path / "unchecked", content, check=False)
    assert (tmp_path / "checked" / RECORD_NAME).is_file() and not (tmp_path / "unchecked" / RECORD_NAME).exists()
