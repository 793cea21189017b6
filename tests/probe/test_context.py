"""The model's context (probe/context.py): an input that cannot fit the model's positions is refused before
any forward pass, with the numbers, for every scoring rule and the judge; --shots takes the examples that
fit. Without this, the tiny chat model the docs name (128 positions) died with ``IndexError: index out of
range in self`` on ``--scoring chat --shots 3`` and on ``judge``."""

from __future__ import annotations

import json

import pytest

from factatlas.probe.context import ContextTooLong, context_limit
from factatlas.probe.models import load_model, wrap_model
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.runner import ProbeConfig, probe_benchmark
from factatlas.tables import RANKINGS_SCHEMA, read_rows

QUERY = ClozeQuery("The capital of France is [Y] and that is known.", ("Paris", "Berlin", "Kuwait City"))


@pytest.fixture(scope="module")
def chat128_dir(tiny_chat_dir, tmp_path_factory):
    """The session's tiny chat model cut to the 128 positions of the docs' tiny-chat (probe/tiny.py's
    default size): the first 128 rows of its position table, the rest of the weights as they are."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(tiny_chat_dir)
    wpe = model.transformer.wpe
    model.transformer.wpe = torch.nn.Embedding.from_pretrained(wpe.weight.data[:128].clone(), freeze=False)
    model.config.n_positions = 128
    out = tmp_path_factory.mktemp("chat128")
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(tiny_chat_dir).save_pretrained(out)
    return out


def _forwards(lm) -> list[int]:
    """Counts the model's forward passes (pre-hooks on the module the scorers call and on its decoder,
    which a scorer projecting onto the vocabulary itself calls alone)."""
    calls: list[int] = []
    lm.model.register_forward_pre_hook(lambda module, args: calls.append(1))
    base = getattr(lm.model, getattr(lm.model, "base_model_prefix", ""), None)
    if base is not None:
        base.register_forward_pre_hook(lambda module, args: calls.append(1))
    return calls


def test_chat_with_three_shots_takes_the_examples_that_fit(tmp_path, capitals_rows, chat128_dir):
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    lm = load_model(str(chat128_dir), device="cpu")
    outcome = probe_benchmark(run, ProbeConfig.from_flags(model="chat128", scoring="chat", shots=3, shot_split="train",
                                               max_new_tokens=16, out_name="c"), lm=lm)
    rows = read_rows(run / "probe" / "c" / "rankings.parquet", RANKINGS_SCHEMA)
    assert len(rows) == 48
    examples = []
    for r in rows:
        record = json.loads(r["conversation"])
        ids = lm.tokenizer(record["rendered"], add_special_tokens=False)["input_ids"]
        assert len(ids) + 16 - 1 <= 128, r["prompt_id"]  # the last new token is predicted, never read
        examples.append(sum(m["role"] == "assistant" for m in record["messages"]))
    cut = {k: v for k, v in outcome.counts.items() if k.startswith("chat/shots-cut-to-fit:")}
    assert sum(cut.values()) == sum(n < 3 for n in examples) > 0
    info = json.loads((run / "probe" / "c" / "probe.json").read_text())
    assert {k: v for k, v in info["counts"].items() if k.startswith("chat/shots-cut")} == cut
    print(f"examples per prompt: {sorted(examples)}; cut: {cut}")


def test_the_judge_refuses_conversations_longer_than_its_context_before_any_forward(tmp_path, capitals_rows,
                                                                                   chat128_dir):
    from factatlas.probe.chat import LocalChat
    from factatlas.probe.judge import JUDGE_CONTEXT_FIX, JudgeConfig, judge_run
    from factatlas.records import ProbeResult
    from factatlas.tables import write_probe_results
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    question = next(r for r in capitals_rows if r["kind"] == "question" and r["lang"] == "en")
    long_answer = "the city that every traveller knows as the old capital of the kingdom " * 3
    row = ProbeResult("m", "chat", question["prompt_id"], question["fact_id"], "en", question["template_id"],
                      question["culture"], question["predicate"], (), (), False, long_answer.strip())
    write_probe_results(run / "probe" / "c" / "rankings.parquet", [row])
    lm = load_model(str(chat128_dir), device="cpu")
    calls = _forwards(lm)
    with pytest.raises(ContextTooLong, match=r"^1 of 1 inputs do not fit the context of model .*chat128.*: the "
                                             r"longest, the conversation of 'Question: .*' \(0 examples, rendered "
                                             r"with the chat template\) \((\d+) prompt tokens \+ 4 new tokens, the last only "
                                             r"predicted\), "
                                             r"needs \d+ positions, the model has 128 \(config.max_position_embeddings = "
                                             r"128\); nothing was scored\. Use a judge \(--judge\) with a longer "
                                             r"context\.$") as caught:
        judge_run(run, "c", JudgeConfig(str(chat128_dir)), backend=LocalChat(lm, max_new_tokens=4,
                                                                             context_fix=JUDGE_CONTEXT_FIX))
    assert calls == []
    message = str(caught.value)
    prompt_tokens = int(message.split(") (")[1].split(" prompt tokens")[0])
    assert f"needs {prompt_tokens + 3} positions" in message and prompt_tokens + 3 > 128


def test_judge_on_the_128_position_chat_model_is_a_clean_cli_error(tmp_path, capitals_rows, chat128_dir):
    """The case of the issue: probe with chat, then judge with the same tiny model, from the command line."""
    from typer.testing import CliRunner

    from factatlas.app.cli import app
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    cli = CliRunner()
    probed = cli.invoke(app, ["probe", str(run), "--model", str(chat128_dir), "--device", "cpu", "--scoring", "chat",
                              "--shots", "3", "--shot-split", "train", "--out-name", "c"])
    assert probed.exit_code == 0, probed.output
    judged = cli.invoke(app, ["judge", str(run), "--model", "c", "--judge", str(chat128_dir), "--device", "cpu"])
    if judged.exit_code != 0:  # refused with the numbers, never an IndexError from the position table
        assert isinstance(judged.exception, ContextTooLong), judged.exception
        assert "the model has 128 (config.max_position_embeddings = 128)" in str(judged.exception)
    else:
        assert (run / "probe" / "c" / "judgements.parquet").exists()


# ---- every rule: an input of exactly the model's positions runs, one more is refused before a forward -------

def _limited(arch: str, tokenizer, positions: int):
    from factatlas.probe.tiny import TinySize, build_model

    return wrap_model(build_model(arch, tokenizer, TinySize(max_positions=positions)), tokenizer, name=f"{arch}-{positions}")


def _filled(tokenizer, query: ClozeQuery) -> int:
    """Tokens of the prompt filled with its longest candidate (by tokens), without special tokens."""
    left, _, right = query.text.partition("[Y]")
    return max(len(tokenizer(left + form + right, add_special_tokens=False)["input_ids"]) for form in query.forms)


def _left_filled(tokenizer, query: ClozeQuery) -> int:
    left, _, _ = query.text.partition("[Y]")
    return max(len(tokenizer(left + form, add_special_tokens=False)["input_ids"]) for form in query.forms)


def _boundary(make, need: int, scorer_of, call, limit_source: str) -> None:
    """``call(scorer_of(model))`` runs on a model of exactly ``need`` positions and is refused, with no
    forward pass after the scorer is built (some scorers probe the model once when built), on ``need - 1``."""
    call(scorer_of(make(need)))  # exactly the model's positions: scored
    short = make(need - 1)
    scorer = scorer_of(short)
    calls = _forwards(short)
    with pytest.raises(ContextTooLong, match=rf"^1 of 1 inputs do not fit .*needs {need} positions, the model has "
                                             rf"{need - 1} \({limit_source} = {need - 1}\)"):
        call(scorer)
    assert calls == []


def _score(scorer):
    return scorer.score([QUERY])


@pytest.mark.parametrize("mode", ["independent", "pll"])
def test_masked_lm_rules(tiny_bert, mode):
    from factatlas.probe.mlm import MaskedLMScorer

    tok = tiny_bert.tokenizer
    need = 2 + _filled(tok, QUERY)  # [CLS] ... [SEP]
    _boundary(lambda n: _limited("bert", tok, n), need, lambda lm: MaskedLMScorer(lm, mode), _score,
              "config.max_position_embeddings")


def test_xfactr(tiny_bert):
    from factatlas.probe.xfactr import XFactrDecoder

    tok = tiny_bert.tokenizer
    left, _, right = QUERY.text.partition("[Y]")
    bare = len(tok(left + "x" + right, add_special_tokens=False)["input_ids"]) - len(tok("x", add_special_tokens=False)["input_ids"])
    need = 2 + bare + 3  # up to 3 masks
    _boundary(lambda n: _limited("bert", tok, n), need,
              lambda lm: XFactrDecoder(lm, max_masks=3), lambda d: d.generate([QUERY.text]),
              "config.max_position_embeddings")


def test_causal_rules(tiny_gpt2):
    from factatlas.probe.causal import CausalLMScorer, SentenceLegacyScorer, context_start

    tok = tiny_gpt2.tokenizer
    bos = len(context_start(tok, ()))  # GPT-2: <|endoftext|> first; the last candidate token is not fed
    _boundary(lambda n: _limited("gpt2", tok, n), bos + _left_filled(tok, QUERY) - 1,
              CausalLMScorer, _score, "config.max_position_embeddings")
    _boundary(lambda n: _limited("gpt2", tok, n), bos + _filled(tok, QUERY) - 1,
              lambda lm: CausalLMScorer(lm, include_remainder=True), _score, "config.max_position_embeddings")
    whole = max(len(tok(QUERY.left + f + QUERY.right, add_special_tokens=True)["input_ids"]) for f in QUERY.forms)
    _boundary(lambda n: _limited("gpt2", tok, n), whole,
              SentenceLegacyScorer, _score, "config.max_position_embeddings")


def test_generative_rule(tiny_gpt2):
    from factatlas.probe.causal import context_start
    from factatlas.probe.generative import GreedyGenerator

    tok = tiny_gpt2.tokenizer
    question = "What is the capital of France?"
    need = len(context_start(tok, tok(question, add_special_tokens=False)["input_ids"])) + 5 - 1
    _boundary(lambda n: _limited("gpt2", tok, n), need,
              lambda lm: GreedyGenerator(lm, max_new_tokens=5), lambda g: g.generate([question]),
              "config.max_position_embeddings")


def test_relative_position_models_record_no_limit_and_absolute_ones_do(tiny_t5, tiny_gpt2, tiny_bert):
    from transformers import XLMRobertaConfig

    assert context_limit(tiny_t5.model.config) is None  # T5 and mT5: relative positions, nothing to overflow
    assert context_limit(tiny_gpt2.model.config).positions == tiny_gpt2.model.config.n_positions
    assert context_limit(tiny_bert.model.config).positions == tiny_bert.model.config.max_position_embeddings
    xlmr = context_limit(XLMRobertaConfig(max_position_embeddings=514, pad_token_id=1))
    assert xlmr.positions == 512 and "padding offset" in xlmr.source


def test_the_whole_run_is_checked_before_the_first_forward(tiny_gpt2, capitals_rows):
    """One query per scoring call (chunk=1): the second, too long, is refused before the first is scored."""
    from factatlas.probe.causal import CausalLMScorer
    from factatlas.probe.generative import (
        GreedyGenerator,
        alias_index,
        answer_prompts,
        prompt_text_for_generation,
    )
    from factatlas.probe.runner import rank_prompts
    from tests.probe.probe_capitals import prompts_of

    tok = tiny_gpt2.tokenizer
    cloze = [p for p in prompts_of(capitals_rows) if p.kind == "cloze"][:2]
    texts = [cloze[0].text, "As every atlas of the world has said for a long time, " + cloze[1].text]
    wide = CausalLMScorer(_limited("gpt2", tok, 512))
    first, second = (n.positions for n in wide.context_needs([ClozeQuery(t, p.candidate_forms)
                                                              for t, p in zip(texts, cloze, strict=True)]))
    assert first < second
    lm = _limited("gpt2", tok, first)
    scorer = CausalLMScorer(lm)
    calls = _forwards(lm)
    with pytest.raises(ContextTooLong, match=rf"^1 of 2 inputs do not fit .*needs {second} positions, the model has "
                                             rf"{first} "):
        rank_prompts(scorer, cloze, texts, "m", chunk=1)
    assert calls == []

    questions = [p for p in prompts_of(capitals_rows) if p.kind == "question"][:2]
    lengths = [len(tok(prompt_text_for_generation(p))["input_ids"]) for p in questions]
    generator = GreedyGenerator(_limited("gpt2", tok, min(lengths) + 1 + 4 - 1), max_new_tokens=4)
    calls = _forwards(generator.lm)
    if max(lengths) > min(lengths):
        with pytest.raises(ContextTooLong, match=r"^1 of 2 inputs do not fit"):
            answer_prompts(generator, sorted(questions, key=lambda p: len(p.text)), alias_index(prompts_of(capitals_rows)),
                           "m", "generative", chunk=1)
        assert calls == []
