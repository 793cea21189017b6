"""One rule for torch's CPU threads, applied by every scoring entry point (probe/threads.py)."""

from __future__ import annotations

import pytest
import torch
import transformers

from factatlas.errors import ConfigError
from factatlas.probe.causal import CausalLMScorer, SentenceLegacyScorer
from factatlas.probe.mlm import MaskedLMScorer
from factatlas.probe.models import wrap_model
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.seq2seq import Seq2SeqScorer
from factatlas.probe.threads import ENV, SMALL_MODEL_PARAMS, decide_threads, torch_threads
from factatlas.probe.tiny import train_tokenizer

TEXTS = ["The capital of Egypt is Cairo .", "The capital of France is Paris .", "Rabat is in Morocco ."] * 5
QUERY = ClozeQuery("The capital of Egypt is [Y] .", ("Cairo", "Paris", "Rabat"))


def test_the_rule():
    assert decide_threads(1_000, "cpu") == 1
    assert decide_threads(SMALL_MODEL_PARAMS - 1, "cpu") == 1
    assert decide_threads(SMALL_MODEL_PARAMS, "cpu") is None  # torch's own default
    assert decide_threads(1_000, "cuda") is None
    assert decide_threads(10**9, "cpu", env="3") == 3
    assert decide_threads(1_000, "cpu", env=" ") == 1
    for bad in ("0", "two", "-1"):
        with pytest.raises(ConfigError, match=ENV):
            decide_threads(1_000, "cpu", env=bad)


def _bert():
    tok = train_tokenizer(TEXTS, "bert", vocab_size=200)
    config = transformers.BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=64, pad_token_id=tok.pad_token_id)
    return wrap_model(transformers.BertForMaskedLM(config), tok, family="mlm")


def _gpt2():
    tok = train_tokenizer(TEXTS, "gpt2", vocab_size=300)
    config = transformers.GPT2Config(vocab_size=len(tok), n_embd=16, n_layer=2, n_head=2, n_positions=64)
    return wrap_model(transformers.GPT2LMHeadModel(config), tok, family="causal")


def _t5():
    tok = train_tokenizer(TEXTS, "t5", vocab_size=120)
    config = transformers.T5Config(vocab_size=len(tok), d_model=16, d_kv=8, d_ff=32, num_layers=2, num_heads=2,
                                   pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                                   decoder_start_token_id=tok.pad_token_id)
    return wrap_model(transformers.T5ForConditionalGeneration(config).eval(), tok, family="seq2seq")


def _threads_seen(lm, scorer) -> list[int]:
    seen: list[int] = []
    # every path runs it (a split head skips the top forward)
    base = lm.model.get_encoder() if lm.family == "seq2seq" else getattr(lm.model, lm.model.base_model_prefix)
    hook = base.register_forward_pre_hook(lambda *_: seen.append(torch.get_num_threads()))
    try:
        scorer.score([QUERY])
    finally:
        hook.remove()
    return seen


@pytest.mark.parametrize("make", ["mlm-independent", "mlm-pll", "causal-mean", "causal-sentence-legacy", "seq2seq"])
def test_every_scorer_runs_small_models_on_one_thread_and_restores(make, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    lm = _bert() if make.startswith("mlm") else _t5() if make == "seq2seq" else _gpt2()
    scorer = {"mlm-independent": lambda: MaskedLMScorer(lm, "independent", split_head=False),
              "mlm-pll": lambda: MaskedLMScorer(lm, "pll", split_head=False),
              "causal-mean": lambda: CausalLMScorer(lm, "mean"),
              "causal-sentence-legacy": lambda: SentenceLegacyScorer(lm),
              "seq2seq": lambda: Seq2SeqScorer(lm)}[make]()
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seen = _threads_seen(lm, scorer)
        assert seen and set(seen) == {1}
        assert torch.get_num_threads() == 2  # the caller's setting is back
        monkeypatch.setenv(ENV, "2")
        torch.set_num_threads(1)
        assert set(_threads_seen(lm, scorer)) == {2}
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_context_restores_after_an_error():
    lm = _bert()
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with pytest.raises(RuntimeError), torch_threads(lm.model, "cpu") as n:
            assert n == 1
            raise RuntimeError("boom")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("value", ["abc", "0", "-2"])
def test_a_bad_thread_count_is_refused_before_any_work(value, tmp_path):
    """Before the check at start-up, `probe` loaded (or trained) its model first and refused ~30 s later."""
    from tests.clirun import factatlas

    done = factatlas("probe", tmp_path / "nothing", "--model", "tiny", env={ENV: value})
    assert done.returncode == 2 and done.stderr.strip() == (
        f"error: {ENV}={value!r}: expected a positive number of threads"), done.stderr
    assert not (tmp_path / "nothing").exists()


def test_the_documented_threshold_and_one_thread_asked_for():
    """docs/benchmarks.md: models under 20M parameters run on one CPU thread; FACTATLAS_TORCH_THREADS=1 is a
    count like any other."""
    assert decide_threads(19_999_999, "cpu") == 1 and decide_threads(20_000_000, "cpu") is None
    assert decide_threads(10**9, "cpu", env="1") == 1
