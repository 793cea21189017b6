"""The multi-parallel invariant checker, seen failing: a real benchmark built by ``build_benchmark``,
written to disk, then corrupted one invariant class at a time. ``check_directory`` (what
`validate-benchmark`, `probe` and `report` run) must reject each corruption with its rule named, and the
in-memory entry point ``check_content`` (what the writer runs) must agree on the row-level ones."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from factatlas.builder.invariants import check_content, check_directory, check_rows
from factatlas.tables import PROMPTS_SCHEMA, prompt_rows, read_rows, write_table
from tests.builder.builder_fixtures import build, write

Rows = list[dict[str, Any]]


@pytest.fixture(scope="module")
def built():
    return build()


@pytest.fixture
def bench(built, tmp_path) -> Path:
    return write(built, tmp_path / "bench")


def rewrite_prompts(folder: Path, change: Callable[[Rows], Rows]) -> None:
    rows = change(read_rows(folder / "prompts.parquet", PROMPTS_SCHEMA))
    write_table(folder / "prompts.parquet", rows, PROMPTS_SCHEMA)


def rewrite_meta(folder: Path, change: Callable[[dict], None]) -> None:
    meta = json.loads((folder / "benchmark.json").read_text("utf-8"))
    change(meta)
    (folder / "benchmark.json").write_text(json.dumps(meta), "utf-8")


def rules(violations) -> set[str]:
    return {v.rule for v in violations}


def test_the_uncorrupted_benchmark_is_valid(built, bench):
    assert check_content(built.content) == []
    assert check_directory(bench) == []


def drop_language_of_one_fact(rows: Rows) -> Rows:
    return [r for r in rows if not (r["fact_id"] == "arab:P36:Q79" and r["lang"] == "ar")]


def reorder_candidates_in_one_language(rows: Rows) -> Rows:
    for r in rows:
        if r["prompt_id"] == "west:P19:Q2|en|P19/1":
            r["candidate_qids"] = list(reversed(r["candidate_qids"]))
            r["candidate_forms"] = list(reversed(r["candidate_forms"]))
    return rows


def gold_outside_candidates(rows: Rows) -> Rows:
    for r in rows:
        if r["fact_id"] == "arab:P19:Q1":  # every language alike: only the gold rule can catch it
            r["gold_qids"], r["gold_forms"] = ["Q3805"], [["Amman"]]
    return rows


def duplicate_a_row(rows: Rows) -> Rows:
    return rows + [dict(rows[3])]


def truncate_rows(rows: Rows) -> Rows:
    return rows[:-3]  # a write cut short: the tail of the table is gone


def drop_template_in_one_language(rows: Rows) -> Rows:
    return [r for r in rows if not (r["template_id"] == "P36/q1" and r["lang"] == "en")]


def answer_start_off_the_marker(rows: Rows) -> Rows:
    for r in rows:
        if r["prompt_id"] == "west:P19:Q2|en|P19/1":
            r["answer_start"] += 1  # the text still holds the marker once, one character earlier
    return rows


def a_candidate_twice(rows: Rows) -> Rows:
    for r in rows:
        if r["fact_id"] == "arab:P19:Q1":  # every language alike: only the duplicate rule can catch it
            r["candidate_qids"] = [*r["candidate_qids"], r["candidate_qids"][0]]
            r["candidate_forms"] = [*r["candidate_forms"], r["candidate_forms"][0]]
    return rows


def the_marker_twice(rows: Rows) -> Rows:
    for r in rows:
        if r["prompt_id"] == "west:P19:Q2|en|P19/1":
            r["text"] = r["text"] + " [Y]"
    return rows


def a_question_with_a_marker(rows: Rows) -> Rows:
    for r in rows:
        if r["kind"] == "question" and r["lang"] == "en":
            r["answer_start"] = 0
            break
    return rows


def _one_fact(fact: str, change: Callable[[dict], None]) -> Callable[[Rows], Rows]:
    """Apply ``change`` to every row (every language and template) of one fact: parallel corruptions."""
    def corrupt(rows: Rows) -> Rows:
        for r in rows:
            if r["fact_id"] == fact:
                change(r)
        return rows
    return corrupt


def _one_row(pid: str, change: Callable[[dict], None]) -> Callable[[Rows], Rows]:
    def corrupt(rows: Rows) -> Rows:
        for r in rows:
            if r["prompt_id"] == pid:
                change(r)
        return rows
    return corrupt


ONE = "west:P19:Q2|en|P19/1"


def _renamed_fact(r: dict) -> None:
    r["fact_id"] = "west:P19:Q2x"
    r["prompt_id"] = f"west:P19:Q2x|{r['lang']}|{r['template_id']}"


def _swap_first_rows(rows: Rows) -> Rows:
    return [rows[1], rows[0], *rows[2:]]


def _a_cloze_in_one_language(r: dict) -> None:
    """A question template asked as a well-formed cloze in one language: only the kind rule can catch it."""
    from factatlas.records import ANSWER_MARKER

    r.update(kind="cloze", text=f"{r['text']} {ANSWER_MARKER}", answer_start=len(r["text"]) + 1)


ROW_CORRUPTIONS = {
    "a candidate form missing": (_one_row(ONE, lambda r: r.update(candidate_forms=r["candidate_forms"][:-1])),
                                 {"candidate-forms"}),
    "an empty question text": (_one_fact("arab:P36:Q79", lambda r: r.update(text="  ") if r["kind"] == "question"
                                         else None), {"empty-text"}),
    "an empty gold form": (_one_row(ONE, lambda r: r.update(gold_forms=[[""]])), {"gold-forms"}),
    "an unknown prompt kind": (_one_fact("arab:P36:Q79", lambda r: r.update(kind="fill")), {"kind"}),
    "a prompt without gold": (_one_fact("west:P19:Q2", lambda r: r.update(gold_qids=[], gold_forms=[])), {"no-gold"}),
    "a prompt id that is not fact|lang|template": (_one_row(ONE, lambda r: r.update(prompt_id=ONE + "x")),
                                                   {"prompt-id"}),
    "rows out of prompt_id order": (_swap_first_rows, {"unsorted"}),
    "a subject other than the fact's": (_one_fact("west:P19:Q2", lambda r: r.update(subject_qid="Q1")),
                                        {"fact-mismatch"}),
    "a prompted fact absent from the facts": (_one_fact("west:P19:Q2", _renamed_fact), {"fact-missing"}),
    "a subject absent from the entities": (_one_fact("west:P19:Q2", lambda r: r.update(subject_qid="Q999999")),
                                           {"entity-missing"}),
    "another candidate list for one fact of a predicate": (
        _one_fact("arab:P36:Q79", lambda r: r.update(candidate_qids=list(reversed(r["candidate_qids"])),
                                                     candidate_forms=list(reversed(r["candidate_forms"])))),
        {"predicate-candidates-differ"}),
    "a cloze text holding the answer marker twice": (the_marker_twice, {"answer-marker"}),
    "a question with an answer_start": (a_question_with_a_marker, {"answer-marker"}),
    "answer_start off the answer marker": (answer_start_off_the_marker, {"answer-start"}),
    "a candidate listed twice": (a_candidate_twice, {"duplicate-candidate"}),
    "a language missing a fact": (drop_language_of_one_fact, {"missing-language", "facts-differ"}),
    "a differing candidate list": (reorder_candidates_in_one_language, {"differs:candidate_qids"}),
    "a gold outside its candidates": (gold_outside_candidates, {"gold-not-in-candidates", "gold-not-valid"}),
    "a duplicated row": (duplicate_a_row, {"duplicate-prompt"}),
    "a truncated table": (truncate_rows, {"missing-language"}),
    "a template id missing in one language's rows": (drop_template_in_one_language, {"template-without-rows"}),
    "a template of another kind in one language": (_one_row("arab:P36:Q79|en|P36/q1", _a_cloze_in_one_language),
                                                    {"differs:kind"}),
}


@pytest.mark.parametrize("case", sorted(ROW_CORRUPTIONS))
def test_each_row_corruption_is_rejected_with_its_rule(case, built, bench):
    corrupt, expected = ROW_CORRUPTIONS[case]
    rewrite_prompts(bench, corrupt)
    found = check_directory(bench)
    assert expected <= rules(found), f"{case}: expected {expected}, got {[str(v) for v in found]}"
    # the writer's in-memory check sees the same corruption
    rows = corrupt(prompt_rows(built.content.prompts))
    assert expected <= rules(check_rows(built.content, rows))


def test_where_and_message_name_the_place(bench):
    rewrite_prompts(bench, drop_language_of_one_fact)
    found = [str(v) for v in check_directory(bench)]
    assert found == ["[missing-language] arab:P36:Q79: no row for ar (present: en)",
                     "[facts-differ] ar: 1 facts missing in 'ar', e.g. ['arab:P36:Q79']"]


def test_a_truncated_table_leaves_facts_unprompted(bench):
    # rows sorted by prompt id: the first 10 of 20 are the arab facts' (2 + 4 + 4)
    rewrite_prompts(bench, lambda rows: rows[:10])
    found = check_directory(bench)
    assert [v.where for v in found if v.rule == "fact-unprompted"] == ["west:P19:Q2", "west:P36:Q142",
                                                                       "west:P36:Q183"]


def test_template_ids_missing_in_one_language_of_benchmark_json(bench):
    rewrite_meta(bench, lambda m: m["templates"]["en"].remove("P36/q1"))
    found = check_directory(bench)
    assert rules(found) == {"unknown-template"}  # template sets may differ; the rows must match the listing
    assert sorted(v.where for v in found if v.rule == "unknown-template") == [
        "arab:P36:Q79|en|P36/q1", "arab:P36:Q810|en|P36/q1", "west:P36:Q142|en|P36/q1", "west:P36:Q183|en|P36/q1"]


def test_template_sets_may_differ_facts_and_candidates_may_not(built, bench):
    """A language with fewer paraphrases is valid; a fact or a candidate list that differs is not."""
    def en_without_p36_q1(meta):
        meta["templates"]["en"].remove("P36/q1")
    rewrite_meta(bench, en_without_p36_q1)
    rewrite_prompts(bench, drop_template_in_one_language)
    assert check_directory(bench) == []
    rewrite_prompts(bench, reorder_candidates_in_one_language)
    assert [v.rule for v in check_directory(bench)] == ["differs:candidate_qids", "predicate-candidates-differ"]


def test_benchmark_json_claiming_a_language_without_rows(bench):
    def add_fr(meta):
        meta["languages"].append("fr")
        meta["templates"]["fr"] = list(meta["templates"]["en"])
    rewrite_meta(bench, add_fr)
    found = check_directory(bench)
    assert "missing-language" in rules(found)
    assert all("no row for fr" in v.message for v in found if v.rule == "missing-language")


def test_benchmark_json_hiding_a_language_that_has_rows(bench):
    def hide_ar(meta):
        meta["languages"] = ["en"]
        del meta["templates"]["ar"]
    rewrite_meta(bench, hide_ar)
    found = check_directory(bench)
    assert "unknown-language" in rules(found)
    assert sum(v.rule == "unknown-language" for v in found) == 10  # every ar row


def test_benchmark_json_templates_for_another_language_set(bench):
    rewrite_meta(bench, lambda m: m["templates"].pop("ar"))
    assert "meta-templates" in rules(check_directory(bench))


def test_a_missing_file_and_an_unknown_split(bench, tmp_path):
    rewrite_prompts(bench, lambda rows: [{**r, "split": "train"} if r["fact_id"] == "west:P19:Q2" else r
                                         for r in rows])
    assert "unknown-split" in rules(check_directory(bench))
    (bench / "candidates.parquet").unlink()
    assert [str(v) for v in check_directory(bench)] == [
        f"[file-missing] {bench / 'candidates.parquet'}: required file is missing"]


def rewrite_candidates(folder: Path, change: Callable[[Rows], Rows]) -> None:
    from factatlas.tables import CANDIDATES_SCHEMA

    rows = change(read_rows(folder / "candidates.parquet", CANDIDATES_SCHEMA))
    write_table(folder / "candidates.parquet", rows, CANDIDATES_SCHEMA)


def test_each_candidate_pool_corruption_is_rejected_with_its_rule(bench):
    """candidates.parquet is the pool every prompt's candidates come from: the same QIDs in every
    language, a label for each, and no prompt candidate outside it."""
    from factatlas.tables import CANDIDATES_SCHEMA

    pool = read_rows(bench / "candidates.parquet", CANDIDATES_SCHEMA)
    gone = next(r for r in pool if r["predicate"] == "P36" and r["lang"] == "ar")
    rewrite_candidates(bench, lambda rows: [r for r in rows if not (
        r["predicate"] == gone["predicate"] and r["lang"] == "ar" and r["qid"] == gone["qid"])])
    found = check_directory(bench)
    assert [v.where for v in found if v.rule == "pool-differs"] == ["P36"]
    assert any(v.rule == "candidate-not-in-pool" and f"['{gone['qid']}']" in v.message for v in found)
    rewrite_candidates(bench, lambda rows: pool)  # restored
    assert check_directory(bench) == []
    rewrite_candidates(bench, lambda rows: [{**r, "label": ""} if r is rows[0] else r for r in rows])
    assert [v.where for v in check_directory(bench) if v.rule == "candidate-label"] == [
        f"{pool[0]['predicate']}|{pool[0]['lang']}|{pool[0]['qid']}"]
    rewrite_candidates(bench, lambda rows: [])
    assert "candidates-empty" in rules(check_directory(bench))


def test_a_subject_label_other_than_the_entity_label(bench):
    rewrite_prompts(bench, _one_row(ONE, lambda r: r.update(subject_label="Somebody Else")))
    assert [v.where for v in check_directory(bench) if v.rule == "subject-label"] == [ONE]


def test_content_level_rules_duplicate_fact_and_empty(built):
    content = built.content
    assert "duplicate-fact" in rules(check_content(replace(content, facts=[*content.facts, content.facts[0]])))
    assert "empty" in rules(check_content(replace(content, prompts=[])))


@pytest.mark.parametrize(("change", "rule"), [
    (lambda m: m.pop("k"), "meta-key-missing"),
    (lambda m: m.update(candidate_mode="nearby"), "meta-candidate-mode"),
    (lambda m: m.update(languages=[]), "meta-languages"),
])
def test_each_benchmark_json_corruption_is_rejected_with_its_rule(bench, change, rule):
    rewrite_meta(bench, change)
    assert rule in rules(check_directory(bench))


def test_unreadable_files_and_foreign_schemas(bench):
    import pyarrow as pa

    (bench / "benchmark.json").write_text("{not json", "utf-8")
    assert rules(check_directory(bench)) == {"meta-json"}
    write_table(bench / "facts.parquet", [{"fact_id": "x"}], pa.schema([("fact_id", pa.string())]))
    assert [v.where for v in check_directory(bench) if v.rule == "schema"] == [str(bench / "facts.parquet")]
    data = (bench / "labels.parquet").read_bytes()
    (bench / "labels.parquet").write_bytes(data[: len(data) // 2])
    assert str(bench / "labels.parquet") in {v.where for v in check_directory(bench) if v.rule == "unreadable"}


def test_a_release_folder_is_checked_where_benchmark_open_reads_it(bench, tmp_path):
    """validate-benchmark on a release: its prompts are the data/all shards, its tables under benchmark/."""
    from factatlas.publish.render import ReleaseOptions, render_release, write_release
    from factatlas.publish.source import load_source
    from factatlas.publish.versions import Version

    release = tmp_path / "release"
    write_release(render_release(load_source(bench), ReleaseOptions("org/atlas", Version(1, 0, 0))), release)
    assert check_directory(release) == []
    for shard in sorted((release / "data" / "all").glob("*.parquet")):
        rows = drop_language_of_one_fact(read_rows(shard, PROMPTS_SCHEMA))
        write_table(shard, rows, PROMPTS_SCHEMA)
    rewrite_prompts(bench, drop_language_of_one_fact)
    expected = rules(check_directory(bench))
    assert expected and rules(check_directory(release)) == expected


@pytest.mark.parametrize(("key", "value", "problem"), [
    ("languages", "ar,en", "'languages' is str, expected list"),
    ("splits", ["test"], "'splits' is list, expected dict"),
])
def test_benchmark_json_of_the_wrong_shape_is_named_not_a_traceback(bench, key, value, problem):
    """A key the checks read, of another JSON type: one meta-type violation naming it, before any row check."""
    rewrite_meta(bench, lambda meta: meta.__setitem__(key, value))
    violations = check_directory(bench)
    assert [(v.rule, v.where, v.message) for v in violations] == [
        ("meta-type", str(bench / "benchmark.json"), problem)]


def test_a_benchmark_written_before_life_status_is_still_valid(bench):
    """entities.parquet of an earlier release (ENTITIES_SCHEMA_V1, no life columns) is read with every life
    unknown, so the checker takes its schema too; any other entities schema stays a violation."""
    import pyarrow.parquet as pq

    from factatlas.tables import ENTITIES_SCHEMA_V1

    path = bench / "entities.parquet"
    table = pq.read_table(path)
    pq.write_table(table.select(ENTITIES_SCHEMA_V1.names).cast(ENTITIES_SCHEMA_V1), path)
    assert check_directory(bench) == []
    pq.write_table(table.select(ENTITIES_SCHEMA_V1.names[:-1]), path)
    assert rules(check_directory(bench)) == {"schema"}
