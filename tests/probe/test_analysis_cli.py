"""`factatlas compare` end to end on a hand-made run: the capitals benchmark and two scripted 'models'."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.tables import FACTS_SCHEMA, RANKINGS_SCHEMA, write_table
from tests.probe.probe_capitals import capital_prompt_rows, cloze_rows, write_benchmark


def _ranking(prompt: dict, model: str, right: bool) -> dict:
    gold = prompt["gold_qids"][0]
    others = [q for q in prompt["candidate_qids"] if q != gold]
    ranked = [gold, *others] if right else [others[0], gold, *others[1:]]
    return {"model": model, "scoring": "scripted", "prompt_id": prompt["prompt_id"], "fact_id": prompt["fact_id"],
            "lang": prompt["lang"], "template_id": prompt["template_id"], "culture": prompt["culture"],
            "predicate": prompt["predicate"], "ranked_qids": ranked, "scores": [float(-i) for i in range(len(ranked))],
            "correct_at_1": right, "prediction": None}


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory) -> Path:
    """Model 'arab-expert' is right on every Arab prompt only, 'west-expert' on every Western one only."""
    run = tmp_path_factory.mktemp("compare-run")
    rows = capital_prompt_rows()
    write_benchmark(run / "build", rows)
    facts = {r["fact_id"]: {"fact_id": r["fact_id"], "culture": r["culture"], "predicate": r["predicate"],
                            "subject_qid": r["subject_qid"], "countries": [r["subject_qid"]], "popularity": 1.0,
                            "rank": 0, "object_qids": r["gold_qids"], "object_provenance": ["direct"],
                            "object_via": [""]} for r in rows}
    write_table(run / "build" / "facts.parquet", list(facts.values()), FACTS_SCHEMA, sort_by=("fact_id",))
    (run / "build" / "stats.json").write_text(json.dumps({"western_culture": "west"}), "utf-8")
    meta_path = run / "build" / "benchmark.json"  # country names come from the benchmark, as a build records them
    meta = json.loads(meta_path.read_text("utf-8"))
    meta["country_labels"] = {r["subject_qid"]: r["subject_label"] for r in rows if r["lang"] == "en"}
    meta_path.write_text(json.dumps(meta), "utf-8")
    for model, culture in (("arab-expert", "arab"), ("west-expert", "west")):
        rankings = [_ranking(p, model, p["culture"] == culture) for p in cloze_rows(rows)]
        write_table(run / "probe" / model / "rankings.parquet", rankings, RANKINGS_SCHEMA, sort_by=("prompt_id",))
    return run


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
def test_compare_tables_on_a_scripted_run(scripted_run, tmp_path):
    res = CliRunner().invoke(app, ["compare", str(scripted_run), "--models", "arab-expert,west-expert",
                                   "--out", str(tmp_path / "a"), "--bootstrap", "200", "--split", "all"])
    assert res.exit_code == 0, res.output
    cells = {(r["model"], r["culture"], r["language"]): r for r in _csv(tmp_path / "a" / "p_at_1.csv")}
    # 12 Arab and 12 Western facts, 2 languages x 2 cloze templates each
    assert cells[("arab-expert", "arab", "all")]["P@1 micro"] == "1.0"
    assert cells[("arab-expert", "west", "en")]["P@1 macro"] == "0.0"
    assert cells[("west-expert", "all", "all")]["P@1 micro"] == "0.5"
    assert cells[("west-expert", "all", "all")]["prompts"] == "96"
    gaps = {r["model"]: r for r in _csv(tmp_path / "a" / "culture_gap.csv")}
    assert (gaps["arab-expert"]["gap"], gaps["arab-expert"]["CI low"], gaps["arab-expert"]["CI high"]) == \
        ("-1.0", "-1.0", "-1.0")
    assert gaps["west-expert"]["gap"] == "1.0"
    tests = {r["language"]: r for r in _csv(tmp_path / "a" / "mcnemar.csv")}
    # never both right, never both wrong: 48 discordant prompts each way -> p = 1
    assert (tests["all"]["A only"], tests["all"]["B only"], tests["all"]["p"]) == ("48", "48", "1.0")
    countries = _csv(tmp_path / "a" / "p_at_1_by_country.csv")
    assert {r["country label"] for r in countries if r["country"] == "Q79"} == {"Egypt"}
    pairs = {r["model"]: r for r in _csv(tmp_path / "a" / "rankc_pairs.csv")}
    # en and fr rank every query identically: RankC 1; each model is right on the same half in both
    assert (pairs["arab-expert"]["RankC"], pairs["arab-expert"]["COverlap"], pairs["arab-expert"]["queries"]) == \
        ("1.0", "1.0", "48")
    assert (pairs["arab-expert"]["same family"], pairs["arab-expert"]["same genus"]) == ("1", "0")
    assert (tmp_path / "a" / "compare.html").read_text("utf-8").count("<section>") >= 6
    # same inputs, same bytes; --no-plots: the same tables and pages, without a figure
    res = CliRunner().invoke(app, ["compare", str(scripted_run), "--out", str(tmp_path / "b"), "--bootstrap", "200",
                                   "--split", "all", "--no-plots"])
    assert res.exit_code == 0, res.output
    drawn = sorted(f.name for f in (tmp_path / "a").iterdir())
    assert sorted(f.name for f in (tmp_path / "b").iterdir()) == [n for n in drawn if not n.endswith(".png")]
    assert sum(n.endswith(".png") for n in drawn) >= 5
    for name in drawn:
        if name.endswith(".csv"):
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    for page in ("compare.html", "compare.md"):
        bare = (tmp_path / "b" / page).read_text("utf-8")
        assert "figures not drawn (--no-plots)" in bare and "<img" not in bare and "](" not in bare
        assert bare.count("<section>") == (tmp_path / "a" / page).read_text("utf-8").count("<section>")


def test_compare_names_an_unknown_model(scripted_run, tmp_path):
    res = CliRunner().invoke(app, ["compare", str(scripted_run), "--models", "arab-expret", "--out", str(tmp_path)])
    assert res.exit_code != 0
    assert "arab-expret" in str(res.exception) and "arab-expert" in str(res.exception)


def test_report_hook_writes_the_model_page_and_links_it(scripted_run, tmp_path):
    from factatlas.probe.analysis.hook import with_analyses

    page = with_analyses("<html><main><p>report</p></main></html>", scripted_run,
                         scripted_run / "probe" / "arab-expert")
    assert page.index('href="analyses/analyses.html"') < page.index("</main>")
    folder = scripted_run / "probe" / "arab-expert" / "analyses"
    augmentation = _csv(folder / "augmentation.csv")
    assert [(r["predicate"], r["P@1 direct only"], r["P@1 all valid"]) for r in augmentation] == \
        [("P36", "0.5", "0.5"), ("all", "0.5", "0.5")]
    # a model folder without rankings: the section says why instead of failing the report
    write_benchmark(tmp_path / "build", capital_prompt_rows())
    (tmp_path / "probe" / "m").mkdir(parents=True)
    page = with_analyses("<main></main>", tmp_path, tmp_path / "probe" / "m")
    assert "Analyses not written" in page and "rankings.parquet: missing" in page


def test_p_at_1_agrees_with_the_metrics_json_definitions(tmp_path):
    """compare's micro/macro P@1 are evaluate.compute_metrics' (one definition in the toolkit)."""
    from factatlas.probe.aggregate import accuracy
    from factatlas.probe.analysis.records import join_results
    from factatlas.probe.evaluate import compute_metrics
    from factatlas.records import Fact, ObjectRef
    from factatlas.tables import probe_result_from_row, prompt_from_row

    rows = cloze_rows(capital_prompt_rows())
    for r in rows[: len(rows) // 3]:  # a second, smaller predicate, so macro and micro differ
        r["predicate"] = "P1376"
    write_benchmark(tmp_path, rows)
    # right on a scattered subset: templates, languages and cultures all mixed
    rankings = [_ranking(p, "mixed", (i * 7) % 5 < 2 or (p["predicate"] == "P1376" and i % 2 == 0))
                for i, p in enumerate(rows)]
    facts = {r["fact_id"]: Fact(r["fact_id"], r["predicate"], r["subject_qid"], tuple(map(ObjectRef, r["gold_qids"])),
                                r["culture"], (), 0.0, 1) for r in rows}
    ours = accuracy(join_results("mixed", [probe_result_from_row(r) for r in rankings],
                                 {p["prompt_id"]: prompt_from_row(p) for p in rows}, facts).results)
    theirs = compute_metrics(rankings, tmp_path)["summary"]["overall"]
    assert ours.macro != pytest.approx(ours.micro)
    assert ours.macro == pytest.approx(theirs["p@1"])
    assert ours.micro == pytest.approx(theirs["p@1_micro"])
    assert 0.2 < ours.micro < 0.6


def test_compare_reads_the_reports_held_out_split(tmp_path):
    """Same run: compare's macro P@1 is the report's held-out headline (metrics.json validation), and every
    table names the split. A model that memorised its train split scores higher on every split."""
    from factatlas.probe.evaluate import compute_metrics

    run = tmp_path / "run"
    rows = cloze_rows(capital_prompt_rows())
    for r in rows[: len(rows) // 3]:  # a second predicate, so macro and micro differ
        r["predicate"] = "P1376"
    write_benchmark(run / "build", rows)
    rankings = [_ranking(p, "taught", p["split"] == "train" or (i * 7) % 5 < 2) for i, p in enumerate(rows)]
    folder = run / "probe" / "taught"
    write_table(folder / "rankings.parquet", rankings, RANKINGS_SCHEMA, sort_by=("prompt_id",))
    (folder / "probe.json").write_text(json.dumps({"trained_on_splits": ["train"]}), "utf-8")
    headline = compute_metrics(rankings, run / "build", trained_on=["train"])["validation"]["model"]

    res = CliRunner().invoke(app, ["compare", str(run), "--out", str(tmp_path / "held"), "--bootstrap", "20", "--no-plots"])
    assert res.exit_code == 0, res.output
    cell = {(r["culture"], r["language"]): r for r in _csv(tmp_path / "held" / "p_at_1.csv")}[("all", "all")]
    assert float(cell["P@1 macro"]) == pytest.approx(headline["macro"])
    assert float(cell["P@1 micro"]) == pytest.approx(headline["micro"])
    assert int(cell["facts"]) == headline["n_facts"] == 12
    assert "split test" in res.output
    page = (tmp_path / "held" / "compare.md").read_text("utf-8")
    assert "P@1 per model × culture × language (split test)" in page
    assert "P@1 per country (split test)" in page

    res = CliRunner().invoke(app, ["compare", str(run), "--split", "all", "--out", str(tmp_path / "all"),
                                   "--bootstrap", "20", "--no-plots"])
    assert res.exit_code == 0, res.output
    every = {(r["culture"], r["language"]): r for r in _csv(tmp_path / "all" / "p_at_1.csv")}[("all", "all")]
    assert int(every["facts"]) == 24 and float(every["P@1 macro"]) > headline["macro"] + 0.1
    res = CliRunner().invoke(app, ["compare", str(run), "--split", "tset", "--out", str(tmp_path / "x")])
    assert res.exit_code != 0 and "Did you mean 'test'" in str(res.exception) + res.output


def test_compare_says_rankc_is_na_for_open_answers(scripted_run, tmp_path):
    """An open-answer model (answers matched to at most one candidate) gets no RankC row, and a note why."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(scripted_run, run)
    rows = cloze_rows(capital_prompt_rows())
    answers = [{**_ranking(p, "talker", p["culture"] == "arab"), "scoring": "generative", "scores": [1.0],
                "prediction": "an answer"} for p in rows]
    for a in answers:
        a["ranked_qids"] = a["ranked_qids"][:1]
    write_table(run / "probe" / "talker" / "rankings.parquet", answers, RANKINGS_SCHEMA, sort_by=("prompt_id",))
    res = CliRunner().invoke(app, ["compare", str(run), "--out", str(tmp_path / "c"), "--bootstrap", "20", "--no-plots"])
    assert res.exit_code == 0, res.output
    assert {r["model"] for r in _csv(tmp_path / "c" / "rankc_pairs.csv")} == {"arab-expert", "west-expert"}
    assert {r["model"] for r in _csv(tmp_path / "c" / "rankc_correlations.csv")} == {"arab-expert", "west-expert"}
    assert "talker: RankC and COverlap n/a: its answers are open" in (tmp_path / "c" / "compare.md").read_text("utf-8")
    cell = {(r["model"], r["culture"], r["language"]): r for r in _csv(tmp_path / "c" / "p_at_1.csv")}
    assert cell[("talker", "arab", "all")]["P@1 micro"] == "1.0"


def test_held_out_for_several_models_is_what_every_one_of_them_held_out():
    """One model tuned on dev too: compare reads only the splits neither model saw, so both answer the
    same prompts; a model without a record falls back to the test split, as in its report."""
    from factatlas.probe.analysis.splits import choose_splits

    present = ["dev", "test", "train"]
    both = choose_splits("held-out", present, {"a": ["train"], "b": ["train", "dev"]})
    assert both.splits == ("test",) and both.label == "split test"
    assert "a: the splits the model was not trained on (trained on train)" in both.why
    assert choose_splits("held-out", present, {"a": ["train"]}).splits == ("dev", "test")
    assert choose_splits("held-out", present, {"a": None}).splits == ("test",)
    assert choose_splits("all", present, {"a": ["train"]}).splits == ("dev", "test", "train")
    assert choose_splits("dev, test", present, {"a": None}).splits == ("dev", "test")
