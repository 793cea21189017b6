"""`factatlas probe` end to end on the capitals benchmark: outputs, invariants, shards, determinism."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.errors import ConfigError
from factatlas.tables import RANKINGS_SCHEMA, read_rows
from tests.probe.probe_capitals import CHANCE


def _probe(*args):
    result = CliRunner().invoke(app, ["probe", *map(str, args)])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output
    return result


def test_probe_writes_rankings_baseline_metrics_and_manifest(run_dir, tiny_bert_dir, capitals_rows):
    _probe(run_dir, "--model", tiny_bert_dir, "--scoring", "mlm-independent", "--out-name", "bert")
    out = run_dir / "probe" / "bert"
    rankings = read_rows(out / "rankings.parquet", RANKINGS_SCHEMA)
    prompts = {r["prompt_id"]: r for r in capitals_rows}
    cloze = sorted(p for p, r in prompts.items() if r["kind"] == "cloze")
    assert [r["prompt_id"] for r in rankings] == cloze
    for r in rankings:
        p = prompts[r["prompt_id"]]
        assert sorted(r["ranked_qids"]) == sorted(p["candidate_qids"])
        assert r["scores"] == sorted(r["scores"], reverse=True)
        assert r["correct_at_1"] == (r["ranked_qids"][0] in p["gold_qids"])
        assert (r["model"], r["scoring"]) == (str(tiny_bert_dir), "mlm-independent")
    train = [r["correct_at_1"] for r in rankings if prompts[r["prompt_id"]]["split"] == "train"]
    baseline = read_rows(out / "rankings_template_only.parquet", RANKINGS_SCHEMA)
    assert len(baseline) == len(rankings)  # every subject label occurs verbatim in these prompts
    base_train = [r["correct_at_1"] for r in baseline if prompts[r["prompt_id"]]["split"] == "train"]
    # without the subject the model cannot tell which capital is asked for
    assert sum(base_train) / len(base_train) <= 3 * CHANCE < sum(train) / len(train)
    metrics = json.loads((out / "metrics.json").read_text("utf-8"))
    assert (metrics["model"], metrics["scoring"]) == (str(tiny_bert_dir), "mlm-independent")
    assert metrics["summary"]["overall"]["n_prompts"] == len(rankings)
    assert metrics["template_only"]["summary"]["overall"]["n_prompts"] == len(baseline)
    info = json.loads((out / "probe.json").read_text("utf-8"))
    assert info["counts"]["prompts/scored"] == len(cloze)
    assert info["counts"]["skipped/kind-not-used-by-mlm-independent"] == len(prompts) - len(cloze)
    manifest = json.loads((run_dir / "manifest.json").read_text("utf-8"))
    assert "probe/bert/rankings.parquet" in manifest["stages"]["probe/bert"]["outputs"]


def _same_rankings(a, b):
    assert [r["prompt_id"] for r in a] == [r["prompt_id"] for r in b]
    for x, y in zip(a, b, strict=True):
        assert x["ranked_qids"] == y["ranked_qids"]
        assert x["scores"] == pytest.approx(y["scores"], abs=1e-5)  # batch shapes change float rounding only


def test_rerun_is_byte_identical_and_shards_merge_to_the_same_rankings(run_dir, tiny_bert_dir):
    args = ["--model", tiny_bert_dir, "--scoring", "mlm-pll", "--no-template-only"]
    _probe(run_dir, *args, "--out-name", "full")
    first = (run_dir / "probe" / "full" / "rankings.parquet").read_bytes()
    _probe(run_dir, *args, "--out-name", "full")
    assert (run_dir / "probe" / "full" / "rankings.parquet").read_bytes() == first
    full = read_rows(run_dir / "probe" / "full" / "rankings.parquet", RANKINGS_SCHEMA)
    _probe(run_dir, *args, "--out-name", "small-batches", "--batch-tokens", "97")
    _same_rankings(read_rows(run_dir / "probe" / "small-batches" / "rankings.parquet", RANKINGS_SCHEMA), full)
    for i in range(3):
        _probe(run_dir, *args, "--out-name", "sharded", "--shard", f"{i}/3")
        assert (run_dir / "probe" / "sharded" / "metrics.json").exists() == (i == 2)
    _same_rankings(read_rows(run_dir / "probe" / "sharded" / "rankings.parquet", RANKINGS_SCHEMA), full)
    # merged, the folder is a single process's: no shard file left, one probe.json counting every shard
    assert sorted(p.name for p in (run_dir / "probe" / "sharded").iterdir()) == \
        sorted(p.name for p in (run_dir / "probe" / "full").iterdir())
    counts = json.loads((run_dir / "probe" / "sharded" / "probe.json").read_text("utf-8"))["counts"]
    assert counts["prompts/scored"] == len(full) and counts["prompts/selected"] == len(read_rows(
        run_dir / "build" / "prompts.parquet"))


def test_langs_filter_and_registry_errors(run_dir, tiny_bert_dir, tiny_gpt2_dir):
    _probe(run_dir, "--model", tiny_bert_dir, "--langs", "fr", "--out-name", "fr", "--no-template-only")
    rankings = read_rows(run_dir / "probe" / "fr" / "rankings.parquet", RANKINGS_SCHEMA)
    assert rankings and {r["lang"] for r in rankings} == {"fr"}
    with pytest.raises(ConfigError, match="Did you mean 'mlm-pll'"):
        _probe(run_dir, "--model", tiny_bert_dir, "--scoring", "mlm-pl")
    with pytest.raises(ConfigError, match="needs a mlm model"):
        _probe(run_dir, "--model", tiny_gpt2_dir, "--scoring", "mlm-pll")
    with pytest.raises(ConfigError, match="not in the benchmark"):
        _probe(run_dir, "--model", tiny_bert_dir, "--langs", "de")


def test_generative_rule_uses_question_prompts(run_dir, tiny_gpt2_dir, capitals_rows):
    _probe(run_dir, "--model", tiny_gpt2_dir, "--scoring", "generative", "--max-new-tokens", "6")
    out = run_dir / "probe" / f"{tiny_gpt2_dir.name}--generative"
    rankings = read_rows(out / "rankings.parquet", RANKINGS_SCHEMA)
    assert {r["template_id"] for r in rankings} == {"P36/q1"}
    assert any(r["correct_at_1"] and r["prediction"] for r in rankings)
    # the question-only baseline: the same questions with the subject replaced, answered the same way
    baseline = read_rows(out / "rankings_template_only.parquet", RANKINGS_SCHEMA)
    assert [r["prompt_id"] for r in baseline] == [r["prompt_id"] for r in rankings]
    assert {r["scoring"] for r in baseline} == {"generative"}
    metrics = json.loads((out / "metrics.json").read_text("utf-8"))
    assert metrics["ranking"] is False and metrics["validation"]["template_only"]["n_pairs"] > 0
    assert metrics["summary"]["overall"]["mrr"] is None and metrics["summary"]["overall"]["p@5"] is None
    assert metrics["summary"]["overall"]["p@1"] is not None


def test_tiny_model_built_on_the_spot(run_dir):
    result = _probe(run_dir, "--model", "tiny", "--tiny-steps", "30")
    out = run_dir / "probe" / "tiny-bert"
    assert (out / "rankings.parquet").exists() and (out / "metrics.json").exists()
    info = json.loads((out / "probe.json").read_text("utf-8"))
    assert info["tiny_model"]["trained_on_splits"] == ["train"]
    assert info["tiny_model"]["train_examples"] == 48  # 12 train facts x 2 languages x 2 cloze templates
    assert (run_dir / "probe" / "_models" / "tiny-bert" / "config.json").exists()
    assert "rankings:" in result.output


@pytest.mark.parametrize(("model_fixture", "scoring"), [("tiny_t5_dir", "seq2seq"), ("tiny_gpt2_dir", "causal-mean"),
                                                        ("tiny_bert_dir", "xfactr"), ("tiny_t5_dir", "generative")])
def test_every_family_end_to_end(request, run_dir, capitals_rows, model_fixture, scoring):
    folder = request.getfixturevalue(model_fixture)
    _probe(run_dir, "--model", folder, "--scoring", scoring, "--out-name", "m", "--no-template-only",
           *(["--xfactr-max-masks", "3"] if scoring == "xfactr" else []))
    rankings = read_rows(run_dir / "probe" / "m" / "rankings.parquet", RANKINGS_SCHEMA)
    split = {r["prompt_id"]: r["split"] for r in capitals_rows}
    train = [r["correct_at_1"] for r in rankings if split[r["prompt_id"]] == "train"]
    assert rankings and {r["scoring"] for r in rankings} == {scoring}
    assert sum(train) / len(train) >= 3 * CHANCE


def test_bad_option_values_are_config_errors(run_dir, tiny_bert_dir):
    with pytest.raises(ConfigError, match="--xfactr-init 'sideways': expected one of independent, order, confidence"):
        _probe(run_dir, "--model", tiny_bert_dir, "--scoring", "xfactr", "--xfactr-init", "sideways")
    with pytest.raises(ConfigError, match="--shard"):
        _probe(run_dir, "--model", tiny_bert_dir, "--shard", "2/2")
    with pytest.raises(ConfigError, match="not a run directory"):
        _probe(run_dir / "nowhere", "--model", tiny_bert_dir)
    with pytest.raises(ConfigError, match=r"--model \./no-such-model: no such folder"):
        _probe(run_dir, "--model", "./no-such-model")



def test_metrics_json_is_what_the_report_would_compute(run_dir, tiny_bert_dir):
    """The probe computes metrics.json with the report's configuration and records its inputs, so that
    `factatlas report` can reuse it (tests/probe/test_validation.py checks when it may)."""
    import pyarrow.parquet as pq

    from factatlas.probe.evaluate import VALIDATION_BOOTSTRAP, MetricsConfig, compute_metrics, metrics_inputs

    _probe(run_dir, "--model", tiny_bert_dir, "--scoring", "mlm-independent", "--out-name", "bert")
    out = run_dir / "probe" / "bert"
    written = json.loads((out / "metrics.json").read_text("utf-8"))
    inputs = written.pop("inputs")
    assert inputs["trained_on"] is None  # a model of its own: probe.json records no training split
    assert inputs == metrics_inputs(out / "rankings.parquet", out / "rankings_template_only.parquet",
                                    run_dir / "build", None)
    fresh = compute_metrics(pq.read_table(out / "rankings.parquet").to_pylist(), run_dir / "build",
                            MetricsConfig(bootstrap=VALIDATION_BOOTSTRAP),
                            template_only_rows=pq.read_table(out / "rankings_template_only.parquet").to_pylist())
    assert json.loads(json.dumps(fresh)) == written
