"""The seq2seq scorer's shortcuts (the vocabulary projection of read decoder positions only, pooled in
chunks, the in-place normaliser) against the model's full logits and the per-candidate loop, on random
tiny T5 (tied and untied embeddings) and BART models built here."""

from __future__ import annotations

import pytest
import torch

from factatlas.probe.baselines import seq2seq_per_candidate_scores
from factatlas.probe.models import wrap_model
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.seq2seq import Seq2SeqScorer, decoder_split

QUERIES = [
    ClozeQuery("The capital of Egypt is [Y].", ("Cairo", "Le Caire", "Amsterdam", "Rome")),
    ClozeQuery("[Y] is the capital city of the United Kingdom.", ("London", "Stockholm", "Beirut")),
    ClozeQuery("La capitale de l'Autriche est [Y] depuis longtemps.", ("Vienne", "Bruxelles", "Damas", "Alger")),
    ClozeQuery("Die Hauptstadt von Peru ist [Y].", ("Lima",)),
]


@pytest.fixture(scope="module")
def t5_tokenizer():
    from factatlas.probe.tiny import train_tokenizer

    corpus = [q.text.replace("[Y]", f) for q in QUERIES for f in q.forms] * 3
    return train_tokenizer(corpus, "t5", vocab_size=120)


def _model(kind: str, tok):
    import transformers

    torch.manual_seed(0)
    common = {"vocab_size": len(tok), "pad_token_id": tok.pad_token_id, "eos_token_id": tok.eos_token_id,
              "decoder_start_token_id": tok.pad_token_id}
    if kind.startswith("t5"):
        cfg = transformers.T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                                    tie_word_embeddings=kind == "t5-tied", **common)
        model = transformers.T5ForConditionalGeneration(cfg)
    else:
        cfg = transformers.BartConfig(d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                      decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                                      bos_token_id=tok.pad_token_id, forced_eos_token_id=None, **common)
        model = transformers.BartForConditionalGeneration(cfg)
        with torch.no_grad():  # a trained BART's separate logits bias is not zero
            model.final_logits_bias.normal_(0, 1.0)
    return wrap_model(model.eval(), tok, name=kind, family="seq2seq")


@pytest.mark.parametrize("kind", ["t5-tied", "t5-untied", "bart"])
@pytest.mark.parametrize("chunk", [1, 5, 256])
def test_read_rows_projection_equals_full_logits_and_the_loop(t5_tokenizer, kind, chunk):
    lm = _model(kind, t5_tokenizer)
    split = decoder_split(lm)
    assert split is not None
    assert split.scale == (32 ** -0.5 if kind == "t5-tied" else 1.0)
    ours = Seq2SeqScorer(lm, batch_tokens=40, head_chunk=chunk).score(QUERIES)
    full = Seq2SeqScorer(lm, batch_tokens=40, full_logits=True).score(QUERIES)
    loop = seq2seq_per_candidate_scores(lm, QUERIES)
    for a, b, c in zip(ours, full, loop, strict=True):
        assert a == pytest.approx(b, abs=1e-5)
        assert a == pytest.approx(c, abs=1e-5)


@pytest.mark.parametrize("own_module", [True, False])
def test_a_model_that_changes_its_logits_keeps_its_own_forward(t5_tokenizer, own_module):
    """Its forward caps the logits after the head; also when it claims to be transformers' own code, the
    numerical check refuses the split."""
    lm = _model("t5-untied", t5_tokenizer)
    base = type(lm.model)

    def forward(self, *args, **kwargs):
        out = base.forward(self, *args, **kwargs)
        out.logits = 0.5 * torch.tanh(out.logits)
        return out

    module = "transformers.models.t5.capped" if own_module else __name__
    lm.model.__class__ = type("Capped", (base,), {"forward": forward, "__module__": module})
    assert decoder_split(lm) is None
    ours = Seq2SeqScorer(lm, batch_tokens=40).score(QUERIES)
    for a, b in zip(ours, seq2seq_per_candidate_scores(lm, QUERIES), strict=True):
        assert a == pytest.approx(b, abs=1e-5)


def test_batches_read_every_target_token_once(t5_tokenizer):
    lm = _model("t5-untied", t5_tokenizer)
    scorer = Seq2SeqScorer(lm, batch_tokens=40)
    from factatlas.probe.slots import tokenize_slots

    slots = tokenize_slots(t5_tokenizer, QUERIES)
    batches = scorer.plan(slots)
    assert len(batches) > 1
    cells = sorted(c for b in batches for c in b.read_cells.tolist())
    lengths = [len(scorer.target(c)) for s in slots for c in s.candidates]
    assert cells == sorted(i for i, n in enumerate(lengths) for _ in range(n))
    for b in batches:  # the decoder reads the start token, then each target token but the last
        assert len(b.read_rows) == int(b.decoder_mask.sum())
        width = b.decoder_in.shape[1]
        shifted = b.decoder_in.flatten().tolist()
        for r, t in zip(b.read_rows.tolist(), b.read_tokens.tolist(), strict=True):
            if r % width + 1 < width and r + 1 in b.read_rows:
                assert shifted[r + 1] == t


@pytest.mark.parametrize("kind", ["t5-tied", "bart"])
def test_the_accelerators_fused_path_gives_the_same_scores(t5_tokenizer, kind, monkeypatch):
    """On CUDA the read rows' logits are projected at once and normalised by one log-softmax; run here by
    answering the device question as an accelerator would."""
    import factatlas.probe.normaliser as normaliser

    lm = _model(kind, t5_tokenizer)
    cpu = Seq2SeqScorer(lm, batch_tokens=40, head_chunk=5).score(QUERIES)
    monkeypatch.setattr(normaliser, "fused_normaliser", lambda device: True)
    fused = Seq2SeqScorer(lm, batch_tokens=40).score(QUERIES)
    for a, b in zip(fused, cpu, strict=True):
        assert a == pytest.approx(b, abs=1e-5)


def test_a_model_that_drops_4d_masks_keeps_its_padding_masks(t5_tokenizer):
    """Its forward drops a 4-D attention mask: the once-per-model check refuses the additive masks, and the
    scorer keeps the 0/1 padding masks (and its scores)."""
    from factatlas.probe.seq2seq import takes_additive_masks

    lm = _model("t5-untied", t5_tokenizer)
    assert takes_additive_masks(lm)
    base = type(lm.model)

    def forward(self, *args, attention_mask=None, **kwargs):
        if attention_mask is not None and attention_mask.dim() == 4:
            attention_mask = None
        return base.forward(self, *args, attention_mask=attention_mask, **kwargs)

    lm = _model("t5-untied", t5_tokenizer)
    lm.model.__class__ = type("DropsFourD", (base,), {"forward": forward})
    assert not takes_additive_masks(lm)
    ours = Seq2SeqScorer(lm, batch_tokens=40).score(QUERIES)
    for a, b in zip(ours, seq2seq_per_candidate_scores(lm, QUERIES), strict=True):
        assert a == pytest.approx(b, abs=1e-5)
