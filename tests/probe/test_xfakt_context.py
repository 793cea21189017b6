"""X-FaKT's in-context recall and counterfactual-context tasks (seed 004, §3.2-3.3, §4.3), by hand."""

from __future__ import annotations

import pytest

from factatlas.probe.runner import ranking_row
from factatlas.probe.xfakt_context import (
    build_variants,
    context_cells,
    counterfactual_object,
    join_variants,
    resource_groups,
)
from tests.probe.probe_capitals import CAPITALS, cloze_rows, prompts_of


@pytest.fixture()
def prompts(capitals_rows):
    return prompts_of(cloze_rows(capitals_rows, "P36/1"))


def test_recall_variants_state_the_fact_in_each_language(prompts):
    variants, skipped = build_variants(prompts, "recall")
    assert len(variants) == 24 * 2 * 2 and not skipped  # 24 facts, asked in en and fr, context in en and fr
    v = next(v for v in variants if v.base_id == "arab:P36:Q79|fr|P36/1" and v.context_lang == "en")
    assert v.prompt.text == "The capital of Egypt is Cairo. La capitale de l'Égypte est [Y]."
    assert v.prompt.text.index("[Y]") == v.prompt.answer_start
    assert (v.prompt.prompt_id, v.prompt.template_id) == ("arab:P36:Q79|fr|P36/1|recall:en", "P36/1+recall:en")
    assert v.prompt.gold_qids == ("Q85",) and v.context_object == "Q85"
    same = next(v for v in variants if v.base_id == "arab:P36:Q79|fr|P36/1" and v.context_lang == "fr")
    assert same.prompt.text == "La capitale de l'Égypte est Le Caire. La capitale de l'Égypte est [Y]."


def test_counterfactual_object_is_wrong_and_shared_across_languages(prompts):
    only_en, _ = build_variants(prompts, "counterfactual", question_langs=["en"])
    assert {v.prompt.lang for v in only_en} == {"en"} and len(only_en) == 48
    variants, _ = build_variants(prompts, "counterfactual")
    assert len(variants) == 96
    by_fact: dict[str, set[str]] = {}  # questions in en and fr, contexts in en and fr: one false object
    for v in variants:
        by_fact.setdefault(v.prompt.fact_id, set()).add(v.context_object)
        assert v.context_object not in v.prompt.gold_qids
    assert all(len(objs) == 1 for objs in by_fact.values())
    egypt = next(p for p in prompts if p.prompt_id == "arab:P36:Q79|en|P36/1")
    q = counterfactual_object(egypt)
    names = {c[4]: (c[5], c[6]) for c in CAPITALS}
    v = next(v for v in variants if v.base_id == egypt.prompt_id and v.context_lang == "fr")
    assert v.prompt.text == f"La capitale de l'Égypte est {names[q][1]}. The capital of Egypt is [Y]."


def _ranked_first(variant, qid):
    p = variant.prompt
    ranked = (qid, *(c for c in p.candidate_qids if c != qid))
    return ranking_row(p, "m", "scripted", ranked, [float(-i) for i in range(len(ranked))], qid in p.gold_qids)


def test_cells_and_resource_groups_by_hand(prompts):
    recall, _ = build_variants(prompts, "recall")
    # right only when the context is in the question's language: 0.5 overall, 1 on the diagonal
    rows = [_ranked_first(v, v.context_object if v.context_lang == v.prompt.lang else counterfactual_object(v.prompt))
            for v in recall]
    cells = {(c.lang, c.context_lang): c for c in context_cells(join_variants(rows, recall).scored, recall)}
    assert (cells[("en", "en")].correct_micro, cells[("en", "fr")].correct_micro) == (1.0, 0.0)
    assert cells[("all", "all")].correct_micro == 0.5 and cells[("all", "all")].facts == 24
    assert cells[("fr", "all")].prompts == 48 and cells[("all", "all")].followed_micro is None

    cf, _ = build_variants(prompts, "counterfactual")
    # Arab facts asked in English follow the context; everything else keeps the right answer.
    # Per fact: an Arab fact follows in 2 of its 4 prompts (0.5), a Western one in none: followed 0.25,
    # right 0.75 (micro over 24 facts; one predicate, so macro alike). English errors: Arab facts 1, Western 0.
    follows = [v.prompt.culture == "arab" and v.prompt.lang == "en" for v in cf]
    rows = [_ranked_first(v, v.context_object if f else v.prompt.gold_qids[0]) for v, f in zip(cf, follows, strict=True)]
    cells = context_cells(join_variants(rows, cf).scored, cf)
    total = next(c for c in cells if (c.lang, c.context_lang) == ("all", "all"))
    assert (total.correct_micro, total.followed_micro, total.followed_macro) == (0.75, 0.25, 0.25)
    groups = {g.level: g for g in resource_groups(cells, "counterfactual", {"en": "high", "fr": "low"})}
    assert groups["high"].langs == ("en",) and groups["high"].error_rate == 0.5
    assert groups["low"].langs == ("fr",) and groups["low"].error_rate == 0.0
    assert groups["medium"].langs == () and groups["medium"].error_rate is None


def test_resource_levels_xfakt_table_with_our_fallback():
    from factatlas.probe.xfakt_context import resource_levels

    levels, sources = resource_levels("xfakt", {"tr": "medium"})
    # X-FaKT §3: Arabic medium, Turkish low (overridden here), Swahili low; German is not in its table
    assert (levels["ar"], sources["ar"]) == ("medium", "xfakt")
    assert (levels["sw"], levels["en"], levels["zh"]) == ("low", "high", "high")
    assert (levels["de"], sources["de"]) == ("high", "ours")
    assert (levels["tr"], sources["tr"]) == ("medium", "--resource")
    assert (levels["el"], levels["ne"], levels["th"]) == ("medium", "low", "low")
    ours, sources = resource_levels("ours")
    assert (ours["ar"], set(sources.values())) == ("high", {"ours"})
    with pytest.raises(ValueError, match="unknown resource grouping 'joshi'"):
        resource_levels("joshi")


def test_cli_resource_grouping(run_dir, tiny_bert_dir):
    import json

    from tests.clirun import factatlas

    done = factatlas("xfakt-context", run_dir, "--model", tiny_bert_dir, "--modes", "recall", "--device", "cpu",
                     "--resource", "fr=low")
    assert done.returncode == 0, done.stderr
    assert "resource levels: X-FaKT §3 for en; --resource for fr" in done.stderr
    summary = json.loads((run_dir / "xfakt_context" / tiny_bert_dir.name / "summary.json").read_text("utf-8"))
    assert summary["resource_levels"] == {"en": "high", "fr": "low"}
    assert summary["resource_grouping"] == "xfakt"
    groups = {g["level"]: g["langs"] for g in summary["modes"]["recall"]["resource_groups"]}
    assert groups == {"high": ["en"], "medium": [], "low": ["fr"]}
    done = factatlas("xfakt-context", run_dir, "--model", tiny_bert_dir, "--resource-grouping", "joshi")
    assert done.returncode == 2 and "--resource-grouping 'joshi'" in done.stderr


def test_resource_error_rate_is_one_minus_micro_over_every_context():
    """X-FaKT Table 3: a level's error rate = mean over its languages of 1 - micro P@1 (facts) over every
    context language, never the macro (predicates), a single context language's cell, or the "all" row.
    Here micro and macro differ in every cell (two predicates of unequal size), so a swap shows."""
    from factatlas.probe.xfakt_context import ContextCell

    def cell(lang: str, ctx: str, micro: float, macro: float, mode: str = "recall") -> ContextCell:
        return ContextCell(mode, lang, ctx, 12, 6, micro, macro, None, None)

    cells = [cell("en", "en", 1.0, 1.0), cell("en", "fr", 0.0, 0.5), cell("en", "all", 0.75, 0.5),
             cell("fr", "en", 0.5, 0.0), cell("fr", "all", 0.5, 0.25), cell("de", "all", 0.25, 0.75),
             cell("all", "all", 0.5, 0.5), cell("en", "all", 0.0, 0.0, mode="counterfactual")]
    groups = {g.level: g for g in resource_groups(cells, "recall", {"en": "high", "fr": "high", "de": "low"})}
    assert groups["high"].langs == ("en", "fr") and groups["high"].error_rate == (0.25 + 0.5) / 2
    assert groups["low"].langs == ("de",) and groups["low"].error_rate == 0.75
    assert "unknown" not in groups  # the "all" row is no language


def test_cells_name_micro_and_macro_apart(prompts):
    """Two predicates of unequal size, so micro (facts) and macro (predicates) differ: the first four Arab
    facts are relabelled PX. The model answers (recall) or follows the context (counterfactual) on the Arab
    facts only. Recall right: micro 12/24 = 0.5; macro (PX 4/4 = 1, P36 8/20 = 0.4) = 0.7. Counterfactual:
    followed micro 0.5, macro 0.7; right (memory kept, the Western facts) micro 0.5, macro (0 + 12/20) / 2 = 0.3."""
    from dataclasses import replace

    relabel = {c[1] for c in CAPITALS[:4]}
    two = [replace(p, predicate="PX") if p.subject_qid in relabel else p for p in prompts]
    recall, _ = build_variants(two, "recall")
    rows = [_ranked_first(v, v.prompt.gold_qids[0] if v.prompt.culture == "arab" else counterfactual_object(v.prompt))
            for v in recall]
    total = next(c for c in context_cells(join_variants(rows, recall).scored, recall)
                 if (c.lang, c.context_lang) == ("all", "all"))
    assert (total.correct_micro, total.correct_macro) == (0.5, pytest.approx(0.7))
    cf, _ = build_variants(two, "counterfactual")
    rows = [_ranked_first(v, v.context_object if v.prompt.culture == "arab" else v.prompt.gold_qids[0]) for v in cf]
    total = next(c for c in context_cells(join_variants(rows, cf).scored, cf) if (c.lang, c.context_lang) == ("all", "all"))
    assert (total.followed_micro, total.followed_macro) == (0.5, pytest.approx(0.7))
    assert (total.correct_micro, total.correct_macro) == (0.5, pytest.approx(0.3))


@pytest.mark.slow  # the command three times with a model (about 20 s each here)
def test_cli_write_failures_leave_the_earlier_outputs_whole(tmp_path, run_dir, tiny_bert_dir):
    """A full disk while writing: one error line naming the folder, cells.csv and summary.json both as they
    were (they were written one after the other, and a full disk left a new cells.csv beside the old summary);
    a folder it may not write: refused before the model loads (it was after the whole run)."""
    import os

    from factatlas.atomic import TMP_PREFIX
    from tests.clirun import factatlas
    from tests.filesystems import modes_enforced, small_filesystem

    args = ("--model", tiny_bert_dir, "--modes", "recall", "--device", "cpu")
    assert factatlas("xfakt-context", run_dir, *args).returncode == 0
    with small_filesystem(tmp_path / "full", run_dir, free_kb=0) as run:  # no room for the run's lock file
        done = factatlas("xfakt-context", run, *args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr  # before the model ran
        assert done.stderr.startswith(f"error: {run}: cannot write the lock file .factatlas.lock into it (No "
                                      "space left on device)"), done.stderr
        assert [p for p in run.rglob(f"{TMP_PREFIX}*")] == [] and not (run / ".factatlas.lock").exists()
    with small_filesystem(tmp_path / "fs", run_dir, free_kb=4) as run:  # room for the lock file only
        out = run / "xfakt_context" / tiny_bert_dir.name
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        done = factatlas("xfakt-context", run, *args, "--resource", "fr=low")
        assert done.returncode == 2 and done.stderr.count("\n") == 2, done.stderr  # the mode's count, the error
        line = done.stderr.splitlines()[-1]
        assert line.startswith(f"error: {out}") and "(No space left on device)" in line and line.endswith(
            f"{out} is unchanged"), line
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
        assert [p for p in run.rglob(f"{TMP_PREFIX}*")] == []
    out = run_dir / "xfakt_context"
    os.chmod(out, 0o555)
    try:
        with modes_enforced():
            done = factatlas("xfakt-context", run_dir, *args)
    finally:
        os.chmod(out, 0o755)
    assert done.returncode == 2 and done.stderr.startswith(f"error: {out}: cannot make a folder in it (Permission "
                                                           "denied)"), done.stderr
