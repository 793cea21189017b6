"""On an accelerator the host must never wait for the device inside a scorer's loop: every launch is queued
behind the last, and the host builds the next batch while the device runs this one. Operations that read
device values on the host (``.item()``, ``nonzero``, a boolean mask as an index) break that. They are
caught here on the CPU, with the accelerators' paths switched on, by recording every operation the
scoring dispatches; the scores must stay those of the CPU paths."""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from factatlas.probe.models import wrap_model
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import tokenize_slots

QUERIES = [
    ClozeQuery("The capital of Egypt is [Y].", ("Cairo", "Le Caire", "Amsterdam Centraal", "Rome")),
    ClozeQuery("[Y] is the capital city of the United Kingdom.", ("London", "Stockholm", "Beirut")),
    ClozeQuery("La capitale de l'Autriche est [Y] depuis longtemps.", ("Vienne", "Bruxelles", "Damas", "Alger")),
    ClozeQuery("Die Hauptstadt von Peru ist [Y].", ("Lima",)),
]
WAITING_OPS = {"aten.nonzero.default", "aten.masked_select.default", "aten._local_scalar_dense.default",
               "aten.is_nonzero.default", "aten.equal.default"}


SCALAR_READS = ("item", "__int__", "__float__", "__bool__", "__index__")


class HostWaits(TorchDispatchMode):
    """Counts the dispatched operations that make a CUDA host wait for the device's results, and every read
    of a tensor's value as a Python scalar (``.item()``, ``int(t)``, ``if t:``): under inference mode
    those skip the dispatch a mode sees, so they are counted where they are called."""

    def __init__(self):
        super().__init__()
        self.seen: dict[str, int] = {}
        self._own: dict[str, object] = {}

    def __enter__(self):
        for name in SCALAR_READS:
            own = self._own[name] = getattr(torch.Tensor, name)

            def counted(tensor, *args, _own=own, _name=name, **kwargs):
                key = f"Tensor.{_name}"
                self.seen[key] = self.seen.get(key, 0) + 1
                return _own(tensor, *args, **kwargs)

            setattr(torch.Tensor, name, counted)
        return super().__enter__()

    def __exit__(self, *exc):
        for name, own in self._own.items():
            setattr(torch.Tensor, name, own)
        return super().__exit__(*exc)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func)
        if name.startswith(("aten.index.Tensor", "aten.index_put")) and any(
                t is not None and t.dtype == torch.bool for t in args[1]):
            name += " with a boolean mask"
        elif name not in WAITING_OPS:
            name = ""
        if name:
            self.seen[name] = self.seen.get(name, 0) + 1
        return func(*args, **(kwargs or {}))


def _tokenizer(arch: str):
    from factatlas.probe.tiny import train_tokenizer

    corpus = [q.text.replace("[Y]", f) for q in QUERIES for f in q.forms] * 3
    return train_tokenizer(corpus, arch, vocab_size=150)


def _model(arch: str):
    import transformers

    tok = _tokenizer(arch)
    torch.manual_seed(0)
    if arch == "gpt2":
        config = transformers.GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=128,
                                         bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
        return wrap_model(transformers.GPT2LMHeadModel(config).eval(), tok, name="gpt2", family="causal")
    if arch == "bert":
        config = transformers.BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2,
                                         num_attention_heads=2, intermediate_size=64, pad_token_id=tok.pad_token_id)
        return wrap_model(transformers.BertForMaskedLM(config).eval(), tok, name="bert", family="mlm")
    config = transformers.T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                                   pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
                                   decoder_start_token_id=tok.pad_token_id)
    return wrap_model(transformers.T5ForConditionalGeneration(config).eval(), tok, name="t5", family="seq2seq")


def _scored_with_waits(scorer, slots):
    with HostWaits() as waits:
        scores = scorer.score_slots(slots)
    return scores, waits.seen


def _accelerator_paths(monkeypatch) -> None:
    """The device question answered as on CUDA, wherever a scorer asks it."""
    import factatlas.probe.causal as causal
    import factatlas.probe.causal_cache as causal_cache
    import factatlas.probe.causal_packed as causal_packed
    import factatlas.probe.normaliser as normaliser

    monkeypatch.setattr(normaliser, "fused_normaliser", lambda device: True)
    for module in (causal, causal_packed, causal_cache):
        monkeypatch.setattr(module, "fused_normaliser", lambda device: True)


@pytest.mark.parametrize("with_head_split", [True, False])
def test_packed_causal_rows_never_wait(monkeypatch, with_head_split):
    from factatlas.probe.causal import CausalLMScorer, head_split, logit_keeping, packs

    lm = _model("gpt2")
    assert packs(lm, logit_keeping(lm))
    slots = tokenize_slots(lm.tokenizer, QUERIES)
    cpu = CausalLMScorer(lm, "sum", include_remainder=True, batch_tokens=40).score_slots(slots)
    _accelerator_paths(monkeypatch)
    if not with_head_split:  # a model whose logits are not exactly head(base(...)): its own forward, full logits
        import factatlas.probe.causal as causal
        import factatlas.probe.causal_packed as causal_packed

        monkeypatch.setattr(causal_packed, "head_split", lambda lm, keep: None)
        monkeypatch.setattr(causal, "logit_keeping", lambda lm: causal.LogitKeeping(last=True, masked=False))
    else:
        assert head_split(lm, logit_keeping(lm)) is not None
    scorer = CausalLMScorer(lm, "sum", include_remainder=True, batch_tokens=40)
    fused, waits = _scored_with_waits(scorer, slots)
    assert waits == {}
    for a, b in zip(fused, cpu, strict=True):
        assert a == pytest.approx(b, abs=1e-5)


def test_whole_sentences_never_wait(monkeypatch):
    """BMLAMA's whole-sentence rule: sentences that share a prefix go through the packed rows, the others
    (a slot that opens the sentence) whole, batched across candidates; neither path waits."""
    from factatlas.probe.causal import SentenceLegacyScorer, shared_prefixes

    lm = _model("gpt2")
    scorer = SentenceLegacyScorer(lm, batch_tokens=40)
    shared, whole = shared_prefixes(scorer.sentences(QUERIES))
    assert shared and whole
    cpu = scorer.score(QUERIES)
    _accelerator_paths(monkeypatch)
    with HostWaits() as waits:
        fused = SentenceLegacyScorer(lm, batch_tokens=40).score(QUERIES)
    assert waits.seen == {}
    for a, b in zip(fused, cpu, strict=True):
        assert a == pytest.approx(b, abs=1e-5)


def test_the_kv_cache_path_waits_only_where_transformers_picks_rows(monkeypatch):
    """The KV-cache path (models that ignore packed masks) picks its read rows with host-made indices. Where
    the model takes a row mask as ``logits_to_keep`` (transformers 5.21 on), transformers indexes with that
    boolean mask itself, which waits: that path is kept, as the fallback that trusts the model's own forward."""
    import factatlas.probe.causal as causal
    from factatlas.probe.causal import CausalLMScorer

    lm = _model("gpt2")
    slots = tokenize_slots(lm.tokenizer, QUERIES)
    cpu = CausalLMScorer(lm, "sum", include_remainder=True, batch_tokens=40, packed=False).score_slots(slots)
    _accelerator_paths(monkeypatch)
    monkeypatch.setattr(causal, "logit_keeping", lambda lm: causal.LogitKeeping(last=True, masked=False))
    scorer = CausalLMScorer(lm, "sum", include_remainder=True, batch_tokens=40, packed=False)
    fused, waits = _scored_with_waits(scorer, slots)
    assert waits == {}
    for a, b in zip(fused, cpu, strict=True):
        assert a == pytest.approx(b, abs=1e-5)


@pytest.mark.parametrize("shared_first_layer", [False, True])
@pytest.mark.parametrize("mode", ["independent", "pll"])
def test_masked_passes_never_wait(mode, shared_first_layer):
    from factatlas.probe.mlm import MaskedLMScorer

    lm = _model("bert")
    slots = tokenize_slots(lm.tokenizer, QUERIES)
    cpu = MaskedLMScorer(lm, mode, batch_tokens=40).score_slots(slots)
    scorer = MaskedLMScorer(lm, mode, batch_tokens=40, accelerator_paths=True, shared_first_layer=shared_first_layer)
    assert (scorer._first is not None) == shared_first_layer
    fused, waits = _scored_with_waits(scorer, slots)
    assert waits == {}
    for a, b in zip(fused, cpu, strict=True):
        assert a == pytest.approx(b, abs=1e-5)


def test_seq2seq_batches_never_wait(monkeypatch):
    from factatlas.probe.seq2seq import Seq2SeqScorer

    lm = _model("t5")
    slots = tokenize_slots(lm.tokenizer, QUERIES)
    cpu = Seq2SeqScorer(lm, batch_tokens=40).score_slots(slots)
    _accelerator_paths(monkeypatch)
    fused, waits = _scored_with_waits(Seq2SeqScorer(lm, batch_tokens=40), slots)
    assert waits == {}
    for a, b in zip(fused, cpu, strict=True):
        assert a == pytest.approx(b, abs=1e-5)


def test_the_recorder_sees_what_waits():
    """The check itself: a boolean mask, ``nonzero`` and scalar reads are each counted, also under inference
    mode (where ``.item()`` never reaches the dispatch a mode sees)."""
    x = torch.arange(6.0)
    with HostWaits() as waits:
        x[x > 2].sum().item()
        torch.nonzero(x)
        x[torch.tensor([0, 2])]  # host-made indices do not wait
    assert waits.seen == {"aten.index.Tensor with a boolean mask": 1, "aten._local_scalar_dense.default": 1,
                          "aten.nonzero.default": 1, "Tensor.item": 1}
    with HostWaits() as waits, torch.inference_mode():
        y = torch.arange(5)
        int(y.max())
        y.max().item()
    assert waits.seen == {"Tensor.__int__": 1, "Tensor.item": 1}
    assert torch.Tensor.item is not None and "counted" not in torch.Tensor.item.__name__  # restored
