"""The scorers on other real architectures (random tiny weights, no download): the fast paths must
reproduce the per-candidate reference loops — RoPE (Llama, Qwen2), ALiBi (BLOOM), RoBERTa-style and
DistilBERT-style heads (the latter without the encoder/head split), mT5."""

from __future__ import annotations

import pytest
import torch

from factatlas.probe.baselines import (
    causal_per_candidate_scores,
    mlama_independent_scores,
    seq2seq_per_candidate_scores,
)
from factatlas.probe.causal import CausalLMScorer
from factatlas.probe.mlm import MaskedLMScorer, bert_like_last_layer, lm_head_split
from factatlas.probe.models import wrap_model
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.seq2seq import Seq2SeqScorer

QUERIES = [
    ClozeQuery("The capital of Egypt is [Y].", ("Cairo", "Le Caire", "Amsterdam", "Rome")),
    ClozeQuery("[Y] is the capital city of the United Kingdom.", ("London", "Stockholm", "Beirut")),
    ClozeQuery("La capitale de l'Autriche est [Y] depuis longtemps.", ("Vienne", "Bruxelles", "Damas", "Alger")),
]


def _tok(tiny_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_dir)


def _causal(kind, tok):
    import transformers

    common = {"vocab_size": len(tok), "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id,
              "pad_token_id": tok.pad_token_id}
    if kind == "llama":
        cfg = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, **common)
        return transformers.LlamaForCausalLM(cfg)
    if kind == "qwen2":
        cfg = transformers.Qwen2Config(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, **common)
        return transformers.Qwen2ForCausalLM(cfg)
    cfg = transformers.BloomConfig(hidden_size=64, n_layer=2, n_head=4, **common)
    return transformers.BloomForCausalLM(cfg)


@pytest.mark.parametrize("kind", ["llama", "qwen2", "bloom"])
def test_kv_cache_scorer_matches_recomputation(tiny_gpt2_dir, kind):
    tok = _tok(tiny_gpt2_dir)
    torch.manual_seed(0)
    lm = wrap_model(_causal(kind, tok), tok, name=kind)
    assert lm.family == "causal"
    for remainder in (False, True):
        ours = CausalLMScorer(lm, "sum", include_remainder=remainder, batch_tokens=64).score(QUERIES)
        reference = causal_per_candidate_scores(lm, QUERIES, "sum", remainder)
        for a, b in zip(ours, reference, strict=True):
            assert a == pytest.approx(b, abs=1e-4)


@pytest.mark.parametrize("kind", ["xlm-roberta", "distilbert"])
def test_masked_scorer_on_other_encoders(tiny_bert_dir, kind):
    import transformers

    tok = _tok(tiny_bert_dir)
    torch.manual_seed(0)
    if kind == "xlm-roberta":
        cfg = transformers.XLMRobertaConfig(vocab_size=len(tok), hidden_size=64, num_hidden_layers=2,
                                            num_attention_heads=2, intermediate_size=128,
                                            pad_token_id=tok.pad_token_id)
        model = transformers.XLMRobertaForMaskedLM(cfg)
        assert bert_like_last_layer(lm_head_split(model)[0]) is not None  # the read-positions-only last layer
    else:
        cfg = transformers.DistilBertConfig(vocab_size=len(tok), dim=64, n_layers=2, n_heads=2, hidden_dim=128,
                                            pad_token_id=tok.pad_token_id)
        model = transformers.DistilBertForMaskedLM(cfg)
        assert lm_head_split(model) is None  # several head modules: full logits, same numbers
    lm = wrap_model(model, tok, name=kind)
    ours = MaskedLMScorer(lm, "independent", batch_tokens=64).score(QUERIES)
    reference = mlama_independent_scores(lm, QUERIES)
    for a, b in zip(ours, reference, strict=True):
        assert a == pytest.approx(b, abs=1e-4)
    if kind == "xlm-roberta":  # positions from the padding index on: the first layer shared per (token, position)
        pll = MaskedLMScorer(lm, "pll", batch_tokens=64)
        assert pll._first is not None
        plain = MaskedLMScorer(lm, "pll", batch_tokens=64, shared_first_layer=False).score(QUERIES)
        assert pll.score(QUERIES) == [pytest.approx(p, abs=1e-5) for p in plain]
    # CUDA's paths (the column-aligned projection copy, the fused log-softmax) on this head layout too
    accelerated = MaskedLMScorer(lm, "independent", batch_tokens=64, accelerator_paths=True)
    assert (accelerated._padded is not None) == (kind == "xlm-roberta")
    assert accelerated.score(QUERIES) == [pytest.approx(o, abs=1e-5) for o in ours]


def test_mt5_architecture(tiny_t5_dir):
    import transformers

    tok = _tok(tiny_t5_dir)
    torch.manual_seed(0)
    cfg = transformers.MT5Config(vocab_size=len(tok), d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                                 pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                                 decoder_start_token_id=tok.pad_token_id)
    lm = wrap_model(transformers.MT5ForConditionalGeneration(cfg), tok, name="mt5")
    assert lm.family == "seq2seq"
    ours = Seq2SeqScorer(lm, batch_tokens=64).score(QUERIES)
    reference = seq2seq_per_candidate_scores(lm, QUERIES)
    for a, b in zip(ours, reference, strict=True):
        assert a == pytest.approx(b, abs=1e-4)


def test_the_shared_first_layer_is_refused_where_embeddings_are_projected():
    """ELECTRA projects its embeddings before the first layer: its layers look like BERT's, but the
    once-per-model check against its own forward refuses the shared first layer; BERT passes it."""
    import transformers

    from factatlas.probe.mlm import bert_like_first_layer, bert_like_layer

    torch.manual_seed(0)
    electra = transformers.ElectraForMaskedLM(transformers.ElectraConfig(
        vocab_size=100, embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64)).eval()
    assert hasattr(electra.electra, "embeddings_project") and bert_like_layer(electra.electra, 0) is not None
    assert bert_like_first_layer(electra.electra) is None
    bert = transformers.BertForMaskedLM(transformers.BertConfig(
        vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)).eval()
    assert bert_like_first_layer(bert.bert) is bert.bert.encoder.layer[0]
    # a base whose output is not embeddings -> layers alone (here: shifted after the layers), same shapes
    shifted = transformers.BertForMaskedLM(bert.config).eval()
    own = type(shifted.bert).forward

    def forward(self, *args, **kwargs):
        out = own(self, *args, **kwargs)
        out.last_hidden_state = out.last_hidden_state + 1.0
        return out

    shifted.bert.forward = forward.__get__(shifted.bert)
    assert bert_like_first_layer(shifted.bert) is None
