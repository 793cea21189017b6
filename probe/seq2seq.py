"""Seq2seq (mT5) sentinel scoring: the encoder runs once per prompt, candidates share its output.

Input: the prompt with ``<extra_id_0>`` in the slot. Target for candidate c: ``<extra_id_0> c <extra_id_1>``,
scored by teacher forcing; score(c) = mean log p over the target tokens. A batch of prompts is encoded
once; the encoder states are selected once per candidate row and every candidate of the batch is
decoded in one pass.

The vocabulary projection runs only on the decoder positions that are read (padding is never
projected), on CPU ``HEAD_CHUNK`` rows at a time into one reused buffer that the in-place normaliser then
consumes (``causal.chunked_target_log_probs``), when the model's logits are exactly that projection of its
decoder's output (``decoder_split``, tried once per model); otherwise the model's own forward, same numbers.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from factatlas.probe.batching import greedy_batches, pad_right
from factatlas.probe.causal import LOGIT_BUDGET
from factatlas.probe.models import LoadedModel
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import SlotTokens, special_wrap, tokenize_slots

if TYPE_CHECKING:
    import numpy as np
    import torch

SENTINELS = ("<extra_id_0>", "<extra_id_1>")


@dataclass(frozen=True)
class Seq2SeqBatch:
    """One batch of prompts and all their candidates, host tensors: the encoder's right-padded ids and
    mask; per candidate row its prompt's index in the batch, the decoder's teacher-forced input (start
    token, then the target but its last token) and mask; the read positions (flattened row * width + column
    of the decoder output), the token read at each and the candidate cell (flat over all prompts) it adds to."""

    ids: torch.Tensor
    mask: torch.Tensor
    row_prompt: np.ndarray
    decoder_in: torch.Tensor
    decoder_mask: torch.Tensor
    read_rows: np.ndarray
    read_tokens: np.ndarray
    read_cells: np.ndarray


@dataclass(frozen=True)
class DecoderSplit:
    """``logits == head(decoder(...).last_hidden_state * scale)`` for this model (``head``: an object with
    ``weight`` and ``bias``, the bias folding in a separate logits bias such as BART's)."""

    decoder: Any
    head: Any
    scale: float


def decoder_split(lm: LoadedModel) -> DecoderSplit | None:
    """The model's decoder stack and vocabulary projection when its logits are exactly the projection of the
    decoder's output, scaled by 1 or by ``d_model ** -0.5`` (T5 with tied embeddings), plus the head's bias
    or a separate ``final_logits_bias``; None otherwise (a model's own forward may do anything, so this is
    tried once per model on a small input against its own logits: relative tolerance 1e-4 in fp32, 2e-2 in
    half precision)."""
    import types

    import torch

    model = lm.model
    known = _SPLIT.get(model)
    if known is None:
        known = False
        head = model.get_output_embeddings()
        decoder = model.get_decoder() if hasattr(model, "get_decoder") else None
        owner = next((cls for cls in type(model).__mro__ if "forward" in cls.__dict__), object)
        own = owner.__module__.startswith("transformers.models.")
        if own and decoder is not None and isinstance(head, torch.nn.Linear) and not getattr(model, "hf_device_map", None):
            bias = head.bias
            extra = getattr(model, "final_logits_bias", None)
            if isinstance(extra, torch.Tensor) and extra.numel() == head.weight.shape[0]:
                bias = extra.reshape(-1) if bias is None else bias + extra.reshape(-1)
            projection = types.SimpleNamespace(weight=head.weight, bias=bias)
            vocab = model.get_input_embeddings().weight.shape[0]
            ids = torch.tensor([[1, 2, 3, 4], [4, 3, 2, 1]], device=lm.device) % vocab
            dec = torch.tensor([[0, 2, 1], [0, 1, 3]], device=lm.device) % vocab
            dec[:, 0] = model.config.decoder_start_token_id or 0
            tol = 1e-4 if head.weight.dtype == torch.float32 else 2e-2
            try:
                with torch.inference_mode():
                    full = model(input_ids=ids, decoder_input_ids=dec, use_cache=False).logits.float()
                    states = model.get_encoder()(input_ids=ids).last_hidden_state
                    hidden = decoder(input_ids=dec, encoder_hidden_states=states, use_cache=False).last_hidden_state
                    for scale in (1.0, model.config.d_model ** -0.5 if hasattr(model.config, "d_model") else 1.0):
                        mine = torch.nn.functional.linear(hidden * scale, projection.weight, projection.bias).float()
                        if mine.shape == full.shape and bool(torch.allclose(mine, full, rtol=tol, atol=tol)):
                            known = DecoderSplit(decoder, projection, scale)
                            break
            except (AttributeError, IndexError, RuntimeError, TypeError, ValueError):
                known = False
        _SPLIT[model] = known
    return known or None


_SPLIT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def takes_additive_masks(lm: LoadedModel) -> bool:
    """Whether the model gives the same outputs at unpadded positions when its encoder and cross-attention
    get prebuilt 4-D additive masks (``[rows, 1, 1, keys]``: 0, or the dtype's minimum at padding) and its
    decoder no padding mask (its causal mask alone: right padding comes after every position read). Given
    0/1 padding masks, transformers asks the device whether every position is unpadded
    (``padding_mask.all()``) for each mask it builds, and the host waits for the device three times a batch;
    a 4-D mask is used as given. Tried once per model on a padded input against its own 2-D masks
    (transformers 4's T5 refuses 4-D masks; a model's own forward may do anything)."""
    import torch

    model = lm.model
    known = _ADDITIVE.get(model)
    if known is None:
        known = False
        vocab = model.get_input_embeddings().weight.shape[0]
        ids = torch.tensor([[1, 2, 3, 4], [4, 3, 2, 0]], device=lm.device) % vocab
        mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]], device=lm.device)
        dec = torch.tensor([[0, 2, 1], [0, 1, 0]], device=lm.device) % vocab
        dec[:, 0] = model.config.decoder_start_token_id or 0
        dec_mask = torch.tensor([[1, 1, 1], [1, 1, 0]], device=lm.device)
        dtype = next(model.parameters()).dtype
        tol = 1e-4 if dtype == torch.float32 else 2e-2
        try:
            with torch.inference_mode():
                given = model(input_ids=ids, attention_mask=mask, decoder_input_ids=dec,
                              decoder_attention_mask=dec_mask, use_cache=False).logits.float()
                mine = model(input_ids=ids, attention_mask=additive_mask(mask, dtype), decoder_input_ids=dec,
                             use_cache=False).logits.float()
            read = dec_mask.bool()
            known = mine.shape == given.shape and bool(torch.allclose(mine[read], given[read], rtol=tol, atol=tol))
        except (AttributeError, IndexError, RuntimeError, TypeError, ValueError):
            known = False
        _ADDITIVE[model] = known
    return known


_ADDITIVE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def additive_mask(mask: torch.Tensor, dtype) -> torch.Tensor:
    """A 0/1 padding mask ``[rows, keys]`` as a 4-D additive one ``[rows, 1, 1, keys]`` of ``dtype``."""
    import torch

    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(
        mask == 0, torch.finfo(dtype).min)[:, None, None, :]


def sentinel_ids(tokenizer) -> tuple[int, int]:
    ids = tokenizer.convert_tokens_to_ids(list(SENTINELS))
    if any(i is None or i == tokenizer.unk_token_id for i in ids):
        raise ValueError(f"tokenizer has no {SENTINELS[0]}/{SENTINELS[1]} sentinels: not a T5-style model")
    return ids[0], ids[1]


@dataclass(frozen=True)
class Seq2SeqPlan:
    """A chunk's host work for ``Seq2SeqScorer.run``: its batches, per candidate its target's length (global
    candidate order), per prompt its number of candidates."""

    batches: tuple[Seq2SeqBatch, ...]
    lengths: tuple[int, ...]
    candidates: tuple[int, ...]


class Seq2SeqScorer:
    scoring = "seq2seq"

    def __init__(self, lm: LoadedModel, batch_tokens: int = 8192, head_chunk: int | None = None,
                 full_logits: bool = False, additive_masks: bool = True):
        """``head_chunk``: rows of the vocabulary projection at a time on CPU (default ``HEAD_CHUNK``);
        ``full_logits``: the model's own forward, logits at every decoder position (the previous way);
        ``additive_masks``: 4-D additive masks where ``takes_additive_masks`` finds the model honours them
        (False: 0/1 padding masks, the previous way, kept for the speed benchmark)."""
        from factatlas.probe.causal import HEAD_CHUNK

        if lm.family != "seq2seq":
            raise ValueError(f"Seq2SeqScorer needs an encoder-decoder model, got a {lm.family} model")
        self.lm, self.batch_tokens = lm, batch_tokens
        self.head_chunk = head_chunk or HEAD_CHUNK
        self.full_logits = full_logits
        self.additive_masks = additive_masks
        self.s0, self.s1 = sentinel_ids(lm.tokenizer)

    def context_needs(self, queries: Sequence[ClozeQuery], slots: Sequence[SlotTokens] | None = None):
        """Per query: the encoder reads the prompt with one sentinel; the decoder reads the start token,
        sentinel and candidate (the closing sentinel is only predicted); the larger of the two."""
        from factatlas.probe.context import Need, short

        slots = tokenize_slots(self.lm.tokenizer, queries) if slots is None else slots
        needs = []
        for q, s in zip(queries, slots, strict=True):
            enc, dec = len(self.encoder_input(s)), max((len(self.target(c)) for c in s.candidates), default=0)
            needs.append(Need(max(enc, dec), f"prompt {short(q.text)} ({enc} encoder tokens, {dec} decoder tokens "
                                             "for its longest candidate)"))
        return needs

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        return self.run(self.prepare(queries))

    def score_slots(self, slots: Sequence[SlotTokens]) -> list[tuple[float, ...]]:
        return self.run(self.prepare_slots(slots))

    def prepare(self, queries: Sequence[ClozeQuery]) -> Seq2SeqPlan:
        """The host step of ``score``: the queries tokenized in context, checked against the model's context
        (``ContextTooLong`` before any forward pass) and planned (``prepare_slots``)."""
        from factatlas.probe.context import CANDIDATE_FIX, model_limit, refuse_overlong

        slots = tokenize_slots(self.lm.tokenizer, queries)
        refuse_overlong(self.context_needs(queries, slots), model_limit(self.lm), self.lm.name, CANDIDATE_FIX)
        return self.prepare_slots(slots)

    def prepare_slots(self, slots: Sequence[SlotTokens]) -> Seq2SeqPlan:
        """The batches as host tensors (``plan``), each candidate's target length and each prompt's number of
        candidates; no model call (the model's config and vocabulary size are read, not run)."""
        return Seq2SeqPlan(tuple(self.plan(slots)), tuple(len(self.target(c)) for s in slots for c in s.candidates),
                           tuple(len(s.candidates) for s in slots))

    def encoder_input(self, slot: SlotTokens) -> list[int]:
        return special_wrap(self.lm.tokenizer).wrap([*slot.prefix, self.s0, *slot.suffix])

    def target(self, cand: Sequence[int]) -> list[int]:
        return [self.s0, *cand, self.s1]

    def plan(self, slots: Sequence[SlotTokens]) -> list[Seq2SeqBatch]:
        """The scorer's batches, host tensors built once: prompts longest first under ``batch_tokens``
        (encoder and decoder tokens) and ``LOGIT_BUDGET`` (read rows x vocabulary, for the fused path)."""
        import numpy as np

        tok, model = self.lm.tokenizer, self.lm.model
        start_id = model.config.decoder_start_token_id
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        vocab = model.get_output_embeddings().weight.shape[0]
        enc = [self.encoder_input(s) for s in slots]
        targets = [[self.target(c) for c in s.candidates] for s in slots]
        costs = [(len(e) + sum(len(t) for t in ts), sum(len(t) for t in ts) * vocab) for e, ts in zip(enc, targets, strict=True)]
        order = sorted(range(len(slots)), key=lambda i: -len(enc[i]))
        cell_base = np.cumsum([0, *(len(ts) for ts in targets)])
        out = []
        for batch in greedy_batches(order, costs, (self.batch_tokens, LOGIT_BUDGET)):
            ids, mask = pad_right([enc[i] for i in batch], pad_id)
            row_prompt = [b for b, i in enumerate(batch) for _ in targets[i]]
            rows = [t for i in batch for t in targets[i]]
            labels, label_mask = pad_right(rows, pad_id)
            decoder_in = labels.roll(1, dims=1)
            decoder_in[:, 0] = start_id
            read = label_mask.numpy().astype(bool)
            out.append(Seq2SeqBatch(
                ids=ids, mask=mask, row_prompt=np.asarray(row_prompt, dtype=np.int64), decoder_in=decoder_in,
                decoder_mask=label_mask, read_rows=np.flatnonzero(read.ravel()), read_tokens=labels.numpy()[read],
                read_cells=np.repeat(np.concatenate([cell_base[i] + np.arange(len(targets[i])) for i in batch]),
                                     read.sum(axis=1))))
        return out

    def run(self, prepared: Seq2SeqPlan) -> list[tuple[float, ...]]:
        """The model step: the planned batches through the encoder and decoder, one mean log-probability per
        candidate."""
        from factatlas.probe.threads import torch_threads

        with torch_threads(self.lm.model, self.lm.device):  # the one thread rule, as the other scorers
            return self._run(prepared)

    def _run(self, prepared: Seq2SeqPlan) -> list[tuple[float, ...]]:
        import numpy as np
        import torch

        from factatlas.probe.batching import long_tensor, on_device
        from factatlas.probe.causal import chunked_target_log_probs
        from factatlas.probe.normaliser import fused_normaliser, target_log_probs

        model, device = self.lm.model, self.lm.device
        lengths = prepared.lengths
        sums = torch.zeros(len(lengths), dtype=torch.float64, device=device)
        split = None if self.full_logits else decoder_split(self.lm)
        fused = fused_normaliser(device)
        encoder = model.get_encoder()
        additive = self.additive_masks and takes_additive_masks(self.lm)
        dtype = next(model.parameters()).dtype
        with torch.inference_mode():
            for b in prepared.batches:
                ids = on_device(b.ids, device)
                mask = on_device(additive_mask(b.mask, dtype) if additive else b.mask, device)
                states = encoder(input_ids=ids, attention_mask=mask).last_hidden_state
                index = long_tensor(b.row_prompt, device)
                dec_in = on_device(b.decoder_in, device)
                dec_mask = None if additive else on_device(b.decoder_mask, device)
                rows = long_tensor(b.read_rows, device)
                tokens = long_tensor(b.read_tokens, device)
                if split is not None:
                    hidden = split.decoder(input_ids=dec_in, attention_mask=dec_mask,
                                           encoder_hidden_states=states[index], encoder_attention_mask=mask[index],
                                           use_cache=False).last_hidden_state
                    hidden = hidden.flatten(0, 1)[rows]
                    if split.scale != 1.0:
                        hidden.mul_(split.scale)
                    if fused:
                        logits = torch.nn.functional.linear(hidden, split.head.weight, split.head.bias)
                        (picked,) = target_log_probs(logits, [(torch.arange(len(rows), device=device), tokens)], True)
                    else:
                        (picked,) = chunked_target_log_probs(hidden, split.head, [(np.arange(len(b.read_rows)),
                                                                              b.read_tokens)], self.head_chunk)
                else:
                    from transformers.modeling_outputs import BaseModelOutput

                    logits = model(encoder_outputs=BaseModelOutput(last_hidden_state=states[index]),
                                   attention_mask=mask[index], decoder_input_ids=dec_in,
                                   decoder_attention_mask=dec_mask, use_cache=False).logits
                    (picked,) = target_log_probs(logits.flatten(0, 1)[rows], [(torch.arange(len(rows), device=device),
                                                                               tokens)], fused)
                sums.index_add_(0, long_tensor(b.read_cells, device), picked.to(device).double())
        flat = sums.cpu().tolist()
        scores, base = [], 0
        for n in prepared.candidates:
            scores.append(tuple(total / length for total, length in zip(flat[base: base + n], lengths[base: base + n],
                                                                       strict=True)))
            base += n
        return scores
