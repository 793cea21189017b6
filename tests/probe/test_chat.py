"""Chat-template QA: example selection, exact conversations, the tiny instruction-tuned model, the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factatlas.errors import ConfigError
from factatlas.probe.chat import (
    ChatConfig,
    LocalChat,
    answer_conversations,
    build_conversations,
    conversation,
    shot_pools,
    shots_for,
)
from factatlas.probe.generative import alias_index
from factatlas.tables import probe_result_to_row
from tests.probe.probe_capitals import p_at_1, prompts_of


def _questions(rows):
    return [r for r in rows if r["kind"] == "question"]


def test_shots_same_language_never_the_fact_asked_deterministic(capitals_rows):
    config = ChatConfig(shots=3, shot_split="train", seed=0)
    pools = shot_pools(prompts_of(capitals_rows), config)
    assert sorted(pools) == ["en", "fr"]
    train_facts = {r["fact_id"] for r in capitals_rows if r["split"] == "train"}
    for lang, pool in pools.items():
        assert len(pool) == len(train_facts)  # one question per fact
        assert {s.fact_id for s in pool} == train_facts
        assert all(s.prompt_id.split("|")[1] == lang for s in pool)
    for p in prompts_of(_questions(capitals_rows)):
        shots = shots_for(p, pools, 3)
        assert len(shots) == 3
        assert p.fact_id not in {s.fact_id for s in shots}
        assert {s.prompt_id.split("|")[1] for s in shots} == {p.lang}
    # a pool member asked itself skips itself and takes the next one
    first = pools["en"][0]
    asked = next(r for r in prompts_of(capitals_rows) if r.prompt_id == first.prompt_id)
    assert [s.fact_id for s in shots_for(asked, pools, 2)] == [s.fact_id for s in pools["en"][1:3]]
    assert shot_pools(prompts_of(capitals_rows), config) == pools
    assert shot_pools(prompts_of(capitals_rows), ChatConfig(shots=3, shot_split="train", seed=1)) != pools


def test_missing_shot_split_is_named(capitals_rows):
    with pytest.raises(ConfigError, match=r"no 'dev' split .*\(it has test, train\); pass --shot-split"):
        shot_pools(prompts_of(capitals_rows), ChatConfig(shots=2))


def test_conversation_exact():
    from factatlas.probe.chat import Shot

    shots = [Shot("p", "f", "What is the capital of France?", "Paris")]
    assert conversation("What is the capital of Oman?", shots, "Answer with a name.") == [
        {"role": "system", "content": "Answer with a name."},
        {"role": "user", "content": "What is the capital of France?"},
        {"role": "assistant", "content": "Paris"},
        {"role": "user", "content": "What is the capital of Oman?"},
    ]
    assert conversation("Q?", [], None) == [{"role": "user", "content": "Q?"}]


def test_local_chat_renders_the_models_template_and_records_it(tiny_chat, capitals_rows):
    rows = prompts_of(_questions(capitals_rows))
    config = ChatConfig(system="Answer briefly.", shots=2, shot_split="train")
    rankings = answer_conversations(LocalChat(tiny_chat, max_new_tokens=8), rows, prompts_of(capitals_rows),
                                    alias_index(prompts_of(capitals_rows)), "tiny-chat", "chat", config)
    tok = tiny_chat.tokenizer
    for r, conv, o in zip(rows, build_conversations(rows, prompts_of(capitals_rows), config), rankings, strict=True):
        record = json.loads(o.conversation)
        assert record["messages"] == conv
        assert record["rendered"] == tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=True)
        assert record["rendered"].startswith("<|endoftext|><|system|>Answer briefly.\n<|user|>")
        assert record["rendered"].endswith(f"<|user|>{r.text}\n<|assistant|>")
        assert record["rendered"].count("<|assistant|>") == 3


def test_tiny_chat_model_answers_trained_questions(tiny_chat, capitals_rows, capitals_benchmark):
    from factatlas.probe.evaluate import compute_metrics

    rows = _questions(capitals_rows)
    rankings = answer_conversations(LocalChat(tiny_chat, max_new_tokens=8), prompts_of(rows), prompts_of(capitals_rows),
                                    alias_index(prompts_of(capitals_rows)), "tiny-chat", "chat", ChatConfig())
    assert p_at_1(rankings, rows, "train") >= 0.75
    assert p_at_1(rankings, rows, "test") <= 0.2
    assert all(r.prediction and "\n" not in r.prediction for r in rankings)
    # matched answers list a few candidates, not a ranking: metrics must use them, not drop them as foreign
    coverage = compute_metrics([probe_result_to_row(r) for r in rankings], capitals_benchmark)["coverage"]
    assert (coverage["used"], coverage["generative"], coverage["foreign_candidates"]) == (48, 48, 0)


def test_chat_needs_a_chat_template(tiny_gpt2, capitals_rows):
    rows = prompts_of(_questions(capitals_rows)[:1])
    with pytest.raises(ConfigError, match="no chat template"):
        answer_conversations(LocalChat(tiny_gpt2), rows, prompts_of(capitals_rows), alias_index(prompts_of(capitals_rows)), "m", "chat",
                             ChatConfig())


def test_cli_chat_with_shots(tmp_path, capitals_rows, tiny_chat_dir):
    from factatlas.app.cli import app
    from factatlas.tables import RANKINGS_SCHEMA, read_rows
    from tests.probe.probe_capitals import write_benchmark

    write_benchmark(tmp_path / "run" / "build", capitals_rows)
    result = CliRunner().invoke(app, ["probe", str(tmp_path / "run"), "--model", str(tiny_chat_dir), "--device",
                                      "cpu", "--scoring", "chat-lenient", "--shots", "1", "--shot-split", "train",
                                      "--system-prompt", "Be brief.", "--out-name", "c"])
    assert result.exit_code == 0, result.output
    out = read_rows(tmp_path / "run" / "probe" / "c" / "rankings.parquet", RANKINGS_SCHEMA)
    assert len(out) == len(_questions(capitals_rows))
    assert {r["scoring"] for r in out} == {"chat-lenient"}
    for r in out:
        messages = json.loads(r["conversation"])["messages"]
        assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
        assert messages[1]["content"] != messages[3]["content"]
    # the question-only baseline: the asked question has its subject replaced by the placeholder
    baseline = read_rows(tmp_path / "run" / "probe" / "c" / "rankings_template_only.parquet", RANKINGS_SCHEMA)
    subject = {r["prompt_id"]: r["subject_label"] for r in capitals_rows}
    assert len(baseline) == len(out)
    for r in baseline:
        asked = json.loads(r["conversation"])["messages"][-1]["content"]
        assert subject[r["prompt_id"]] not in asked
        assert ("something" if r["lang"] == "en" else "quelque chose") in asked
