"""`factatlas export lm-eval`: exact task files (the real harness run is tests/probe/test_lmeval_harness.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factatlas.app.cli import app
from factatlas.errors import ConfigError
from factatlas.publish.lmeval import export_lmeval, mc_doc
from tests.probe.probe_capitals import capital_prompt_rows, write_benchmark


def odd_run(tmp_path_factory) -> Path:
    """The capitals benchmark with one prompt whose valid object is not among its candidates."""
    rows = capital_prompt_rows()
    # one prompt whose valid object is not among its candidates: exported nowhere, counted
    odd = next(r for r in rows if r["prompt_id"] == "arab:P36:Q79|en|P36/1")
    odd["candidate_qids"] = [q for q in odd["candidate_qids"] if q != "Q85"]
    odd["candidate_forms"] = [f for f in odd["candidate_forms"] if f != "Cairo"]
    run = tmp_path_factory.mktemp("lmeval") / "run"
    write_benchmark(run / "build", rows)
    return run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    return odd_run(tmp_path_factory)


def test_export_files_exact_and_deterministic(tmp_path, run_dir):
    result = CliRunner().invoke(app, ["export", "lm-eval", str(run_dir), str(tmp_path / "a"), "--bos-text", "<s>"])
    assert result.exit_code == 0, result.output
    assert "mc/skipped:no-valid-object-among-candidates: 1" in result.output
    a = tmp_path / "a"
    assert sorted(p.name for p in a.glob("*.yaml")) == [
        "factatlas_capitals.yaml", "factatlas_capitals_arab_west_en_gen.yaml", "factatlas_capitals_arab_west_en_mc.yaml",
        "factatlas_capitals_arab_west_fr_gen.yaml", "factatlas_capitals_arab_west_fr_mc.yaml",
        "factatlas_capitals_gen.yaml", "factatlas_capitals_mc.yaml"]
    docs = [json.loads(line) for line in (a / "data" / "arab_west" / "fr" / "mc.jsonl").read_text().splitlines()]
    assert len(docs) == 48
    egypt = next(d for d in docs if d["prompt_id"] == "arab:P36:Q79|fr|P36/1")
    assert egypt["context"] == "<s>La capitale de l'Égypte est "
    assert egypt["choices"][egypt["gold"][0]] == "Le Caire" and egypt["gold"] == [0]
    gen = [json.loads(line) for line in (a / "data" / "arab_west" / "en" / "gen.jsonl").read_text().splitlines()]
    assert next(d for d in gen if d["fact_id"] == "arab:P36:Q79") == {
        "prompt_id": "arab:P36:Q79|en|P36/q1", "fact_id": "arab:P36:Q79", "template_id": "P36/q1", "split": "train",
        "question": "<s>What is the capital of Egypt?", "answers": ["Cairo"]}
    export_lmeval(run_dir, tmp_path / "b", bos_text="<s>")
    for p in a.rglob("*"):
        if p.is_file():
            twin = (tmp_path / "b" / p.relative_to(a)).read_text()
            assert twin == p.read_text().replace(str(a), str(tmp_path / "b"))


def test_mc_doc_cuts_at_the_slot_and_lists_every_valid_object():
    from factatlas.records import Prompt

    row = Prompt("p", "f", "de", "t", "cloze", "Die Hauptstadt ist [Y].", 19, "x-y", "x", "P36", "test", "Q9", "S",
                 ("Q3", "Q1"), (("C",), ("A",)), ("Q1", "Q2", "Q3"), ("A", "B", "C"), "reviewed")
    assert mc_doc(row) == {"prompt_id": "p", "fact_id": "f", "template_id": "t", "split": "test",
                           "context": "Die Hauptstadt ist ", "choices": ["A", "B", "C"],
                           "choice_qids": ["Q1", "Q2", "Q3"], "gold": [0, 2]}


def test_unknown_split_is_named(tmp_path, run_dir):
    with pytest.raises(ConfigError, match="--splits: dev not in .*it has test, train"):
        export_lmeval(run_dir, tmp_path / "x", splits=["dev"])
