"""Masked-LM candidate scoring: independent masks (mLAMA) and left-to-right / PLL (BMLAMA).

Both rules reduce to *passes* (planned on the host in ``probe/mlm_plan.py``): an input with the slot
replaced by ``k`` positions, some filled with a candidate's first tokens, the rest masked, and the targets
read from it. Only the target positions go through the LM head; the log-normaliser (logsumexp) and the
gather run on the device, and only one float per candidate comes back.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

from factatlas.probe.batching import long_tensor
from factatlas.probe.mlm_plan import (
    MODES,
    PassPlan,
    PlannedBatch,
    PreparedPasses,
    distinct_positions,
    plan_passes,
)
from factatlas.probe.models import LoadedModel
from factatlas.probe.normaliser import target_log_probs
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import SlotTokens, special_wrap, tokenize_slots
from factatlas.probe.threads import torch_threads

# the host step's pieces, importable from here as before
__all__ = ["AVERAGES", "HEAD_ROWS", "MODES", "MaskedLMScorer", "PassPlan", "PendingReads", "PlannedBatch",
           "PreparedPasses", "distinct_positions", "plan_passes"]

def lm_head_split(model):
    """(encoder, head) when the MLM is ``base model + one head module``, so the vocabulary projection
    runs only on the positions read; None for layouts we do not know (then full logits are used)."""
    prefix = getattr(model, "base_model_prefix", "")
    base = getattr(model, prefix, None) if prefix else None
    heads = [m for name, m in model.named_children() if name != prefix and any(True for _ in m.parameters())]
    if base is None or len(heads) != 1:
        return None
    return base, heads[0]


def bert_like_last_layer(base):
    """The final layer of a BERT-style encoder (BERT, RoBERTa, XLM-R, ...) when its parts are the known
    ones — absolute positions, no cross-attention — so it can run for the read positions only; else None."""
    return bert_like_layer(base, -1)


def bert_like_first_layer(base):
    """The first layer of such an encoder, when the embeddings feeding it are the known BERT-style ones
    (a position's embedding depends on its token and position alone) and the encoder's output is exactly
    embeddings -> layers, so its query, key and value projections can run once per distinct (token,
    position); else None. Tried once per model on a small input with repeated (token, position) pairs
    against the model's own forward (relative tolerance 1e-4 in fp32, 2e-2 in half precision): a model
    may project or scale its embeddings between the two (ELECTRA's ``embeddings_project``)."""
    import numpy as np
    import torch

    known = _SHARED_FIRST.get(base)
    if known is None:
        known = False
        embeddings = getattr(base, "embeddings", None)
        first = bert_like_layer(base, 0)
        if first is not None and all(hasattr(embeddings, n) for n in ("word_embeddings", "position_embeddings",
                                                                       "LayerNorm")):
            vocab = embeddings.word_embeddings.weight.shape[0]
            rows = np.array([[5, 6, 7, 8, 9], [5, 6, 11, 8, 9], [5, 6, 7, 12, 9]]) % vocab
            device = embeddings.word_embeddings.weight.device
            ids = torch.as_tensor(rows, device=device)
            shared = tuple(torch.as_tensor(x, device=device) for x in distinct_positions(rows))
            tol = 1e-4 if embeddings.word_embeddings.weight.dtype == torch.float32 else 2e-2
            layers = base.encoder.layer
            try:
                with torch.inference_mode():
                    own = base(input_ids=ids)[0].float()
                    base.encoder.layer = layers[1:]
                    mine = base.encoder(_first_layer_shared(first, base.embeddings(input_ids=ids), *shared))[0]
                known = first if mine.shape == own.shape and bool(
                    torch.allclose(mine.float(), own, rtol=tol, atol=tol)) else False
            except (AttributeError, IndexError, RuntimeError, TypeError, ValueError):
                known = False
            finally:
                base.encoder.layer = layers
        _SHARED_FIRST[base] = known
    return known or None


_SHARED_FIRST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def bert_like_layer(base, index: int):
    """Layer ``index`` of a BERT-style encoder of at least two layers when its parts are the known ones, else
    None."""
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    if not isinstance(layers, torch_module_list()) or len(layers) < 2:
        return None
    last = layers[index]
    att = getattr(last, "attention", None)
    sa = getattr(att, "self", None)
    needed = (all(hasattr(sa, n) for n in ("query", "key", "value", "num_attention_heads", "attention_head_size",
                                           "scaling"))
              and hasattr(att, "output") and hasattr(last, "intermediate") and hasattr(last, "output"))
    if not needed or getattr(last, "add_cross_attention", False) or getattr(base.config, "is_decoder", False):
        return None
    if getattr(sa, "position_embedding_type", "absolute") != "absolute":
        return None
    return last


def torch_module_list():
    import torch

    return torch.nn.ModuleList


def _last_layer_at(last, hidden, rows, within, cols, most: int):
    """The final BERT-style layer evaluated only at (rows, cols): keys and values still come from every
    position, but queries, attention output and feed-forward run for the read positions alone.
    ``within`` numbers the reads of each row, ``most`` is the largest number of reads in one row; both
    come from the host, since asking the device would make the host wait for it."""
    import torch

    sa = last.attention.self
    batch, length, width = hidden.shape
    heads, size = sa.num_attention_heads, sa.attention_head_size
    positions = torch.zeros((batch, most), dtype=torch.long, device=rows.device)
    positions[rows, within] = cols
    query_in = hidden.gather(1, positions[..., None].expand(batch, most, width))  # [B, m, H]
    q = sa.query(query_in).view(batch, most, heads, size).transpose(1, 2)
    k = sa.key(hidden).view(batch, length, heads, size).transpose(1, 2)
    v = sa.value(hidden).view(batch, length, heads, size).transpose(1, 2)
    context = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=sa.scaling)
    context = context.transpose(1, 2).reshape(batch, most, heads * size)[rows, within]
    query_in = query_in[rows, within]
    attended = last.attention.output(context, query_in)
    return last.output(last.intermediate(attended), attended)


def _first_layer_shared(first, embeddings, distinct, inverse):
    """The first BERT-style layer with its query, key and value projections run once per distinct (token,
    position) of the batch and spread to every position: passes of one prompt differ only in and around
    the slot, and prompts of one template share its words, so most positions repeat. The rest of the layer
    (attention, output, feed-forward) depends on the whole pass and runs everywhere."""
    import torch

    sa = first.attention.self
    batch, length, width = embeddings.shape
    heads, size = sa.num_attention_heads, sa.attention_head_size
    once = embeddings.reshape(batch * length, width).index_select(0, distinct)

    def spread(projection):
        return projection(once).index_select(0, inverse).view(batch, length, heads, size).transpose(1, 2)

    context = torch.nn.functional.scaled_dot_product_attention(spread(sa.query), spread(sa.key), spread(sa.value),
                                                               scale=sa.scaling)
    attended = first.attention.output(context.transpose(1, 2).reshape(batch, length, heads * size), embeddings)
    return first.output(first.intermediate(attended), attended)


# Share of a batch's positions below which the first layer's projections run per distinct (token, position):
# above it the saving is too small for the gathers it adds.
FIRST_LAYER_SHARE = 0.9


# Reads per vocabulary projection on CPU: reads of consecutive batches are pooled up to this many, and a
# batch with more is split. Batches of one length can hold a handful of passes (the speed benchmark's 20
# BMLAMA-17 prompts: 14 lengths, 1 to 88 reads), and projecting each alone streams the whole vocabulary
# matrix for a few rows; large batches make logits that no cache holds. Measured on one thread, min of 5:
# those 414 reads at 30,000 x 256, 166-175 ms per batch, 97 ms at 256 (88-110 ms from 414 to 1,024 rows);
# the quickstart's tiny model (3,995 x 64) on 1,100-read batches, 192-197 ms, 155-159 ms at 256, but
# 204-253 ms at 1,024 and above; the mBERT shape (119,547 x 768), 5.53 s per batch, 5.45 s at 256.
HEAD_ROWS = 256


@dataclass
class PendingReads:
    """Hidden states at read positions waiting for the vocabulary projection, with their targets
    (``at`` numbers the pending reads; targets stay sorted by it, as each batch's are)."""

    states: list = field(default_factory=list)
    at: list = field(default_factory=list)
    tokens: list = field(default_factory=list)
    cands: list = field(default_factory=list)
    rows: int = 0

    def add(self, states, at, tokens, cands) -> None:
        self.states.append(states)
        self.at.append(at + self.rows)
        self.tokens.append(tokens)
        self.cands.append(cands)
        self.rows += states.shape[0]

    def take(self, n: int):
        """(states, at, tokens, cands) of the first ``n`` pending reads and their targets; the rest stay."""
        import numpy as np
        import torch

        states = self.states[0] if len(self.states) == 1 else torch.cat(self.states)
        at, tokens, cands = (np.concatenate(x) for x in (self.at, self.tokens, self.cands))
        cut = int(np.searchsorted(at, n, side="left"))
        taken = states[:n], at[:cut], tokens[:cut], cands[:cut]
        self.rows -= n
        if self.rows:
            self.states, self.at, self.tokens, self.cands = [states[n:]], [at[cut:] - n], [tokens[cut:]], [cands[cut:]]
        else:
            self.states, self.at, self.tokens, self.cands = [], [], [], []
        return taken

    def ready(self, rows: int | None):
        """Chunks of ``rows`` reads while that many are pending; None: everything pending, at once."""
        while self.rows and (rows is None or self.rows >= rows):
            yield self.take(self.rows if rows is None else rows)


VOCAB_ALIGN = 64


def padded_decoder(model, head, align: int = VOCAB_ALIGN):
    """(parent module, attribute name, padded copy) of the head's vocabulary projection when its output
    width is not a multiple of ``align``; else None. mBERT's 119,547 columns leave every output row
    misaligned, and cuBLAS then falls back to a pre-Hopper kernel: the projection ran at 59 TFLOP/s on an
    H100. The extra columns get bias -inf, so they add nothing to any normaliser and are never read. The
    copy is made when the scorer is built: a scorer kept across a change of the weights must be rebuilt."""
    import torch

    decoder = model.get_output_embeddings()
    if not isinstance(decoder, torch.nn.Linear) or decoder.out_features % align == 0:
        return None
    if getattr(model, "hf_device_map", None):  # dispatched over devices: the projection keeps its hooks
        return None
    parent = next((m for m in head.modules() for child in m.children() if child is decoder), None)
    if parent is None:
        return None
    name = next(n for n, child in parent.named_children() if child is decoder)
    width = -(-decoder.out_features // align) * align
    extra = width - decoder.out_features
    w = decoder.weight.detach()
    padded = torch.nn.Linear(decoder.in_features, width, device=w.device, dtype=w.dtype)
    with torch.no_grad():
        padded.weight.copy_(torch.cat([w, w.new_zeros(extra, w.shape[1])]))
        bias = decoder.bias.detach() if decoder.bias is not None else w.new_zeros(decoder.out_features)
        padded.bias.copy_(torch.cat([bias, bias.new_full((extra,), float("-inf"))]))
    return parent, name, padded.eval().requires_grad_(False)


def decoder_slot(model, head):
    """(parent module, attribute name) of the model's vocabulary projection inside ``head``, when it is a
    plain ``Linear`` there; else None."""
    import torch

    decoder = model.get_output_embeddings()
    if not isinstance(decoder, torch.nn.Linear):
        return None
    parent = next((m for m in head.modules() for child in m.children() if child is decoder), None)
    if parent is None:
        return None
    return parent, next(n for n, child in parent.named_children() if child is decoder)


def _linear_into(decoder, buffer):
    """A module computing ``decoder(x)`` (the same kernel: ``addmm``, or ``mm`` without bias) into the
    first rows of ``buffer``: a fresh vocabulary-sized output every projection is a new mapping whose
    pages all fault in, and a reused one is already mapped (and warm in cache)."""
    import torch

    class LinearInto(torch.nn.Module):
        def forward(self, x):
            if x.dim() != 2 or x.shape[0] > buffer.shape[0] or x.dtype != buffer.dtype:
                return decoder(x)
            out = buffer[: x.shape[0]]
            if decoder.bias is None:
                return torch.mm(x, decoder.weight.t(), out=out)
            return torch.addmm(decoder.bias, x, decoder.weight.t(), out=out)

    return LinearInto()


AVERAGES = ("logprob", "prob")


class MaskedLMScorer:
    """Candidate scorer for masked LMs. ``mode``: "independent" (mLAMA) or "pll" (left to right).
    ``average``: a candidate's score is the mean log p of its tokens ("logprob") or their mean p ("prob",
    mParaRel's multi-token scoring; rules ``*-meanprob``)."""

    def __init__(self, lm: LoadedModel, mode: str = "independent", batch_tokens: int = 8192,
                 split_head: bool = True, partial_last_layer: bool = True, accelerator_paths: bool | None = None,
                 head_rows: int | None = HEAD_ROWS, average: str = "logprob",
                 shared_first_layer: bool | None = None):
        if lm.family != "mlm":
            raise ValueError(f"MaskedLMScorer needs a masked LM, got a {lm.family} model")
        if mode not in MODES:
            raise ValueError(f"unknown masked-LM mode '{mode}'; expected one of {MODES}")
        if lm.tokenizer.mask_token_id is None:
            raise ValueError(f"tokenizer of {lm.name} has no mask token")
        if average not in AVERAGES:
            raise ValueError(f"unknown token average '{average}'; expected one of {AVERAGES}")
        self.lm, self.mode, self.batch_tokens, self.average = lm, mode, batch_tokens, average
        self.scoring = ("mlm-independent" if mode == "independent" else "mlm-pll") + (
            "-meanprob" if average == "prob" else "")
        self._split = lm_head_split(lm.model) if split_head else None
        self._last = None
        if self._split is not None and partial_last_layer:
            self._last = bert_like_last_layer(self._split[0])
        # On accelerators (None: on CUDA) the vocabulary projection gets a column-aligned copy and the
        # normaliser is one fused log-softmax; on CPU it runs in the logits' own memory (probe/normaliser.py).
        if accelerator_paths is None:
            accelerator_paths = str(lm.device).startswith("cuda")
        self._padded = padded_decoder(lm.model, self._split[1]) if accelerator_paths and self._split else None
        self._fused_norm = accelerator_paths
        # The first layer's projections once per distinct (token, position) of a batch (None: on CPU only).
        # It saves 5.9 % of PLL's products on BMLAMA-17 with a 4-layer BERT, but costs the host a sort and
        # four gathers per batch; on a GPU, where masked scoring waits on the host, that is not measured yet.
        if shared_first_layer is None:
            shared_first_layer = not accelerator_paths
        self._first = bert_like_first_layer(self._split[0]) if self._last is not None and shared_first_layer else None
        # On CPU, reads of consecutive batches are pooled for the vocabulary projection, ``head_rows`` at a
        # time (None: each batch's reads at once, as on accelerators, where pooling is not measured yet).
        if head_rows is not None and head_rows < 1:
            raise ValueError(f"head_rows must be a positive number of reads or None, got {head_rows}")
        self._head_rows = None if accelerator_paths or self._split is None else head_rows
        # ...and projected into one buffer per call (``_linear_into``), where the head's decoder is found
        self._into = decoder_slot(lm.model, self._split[1]) if self._head_rows is not None else None
        self._buffer = None

    def context_needs(self, queries: Sequence[ClozeQuery], slots: Sequence[SlotTokens] | None = None):
        """Per query, the positions of its longest candidate in place, special tokens included."""
        from factatlas.probe.context import slot_needs

        slots = tokenize_slots(self.lm.tokenizer, queries) if slots is None else slots
        wrap = special_wrap(self.lm.tokenizer)
        return slot_needs(slots, [q.text for q in queries], len(wrap.head), len(wrap.tail))

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        return self.run(self.prepare(queries))

    def score_slots(self, slots: Sequence[SlotTokens]) -> list[tuple[float, ...]]:
        return self.run(self.prepare_slots(slots))

    def prepare(self, queries: Sequence[ClozeQuery]) -> PreparedPasses:
        """The host step of ``score``: the queries tokenized in context, checked against the model's context
        (``ContextTooLong`` before any forward pass) and planned (``prepare_slots``)."""
        from factatlas.probe.context import CANDIDATE_FIX, model_limit, refuse_overlong

        slots = tokenize_slots(self.lm.tokenizer, queries)
        refuse_overlong(self.context_needs(queries, slots), model_limit(self.lm), self.lm.name, CANDIDATE_FIX)
        return self.prepare_slots(slots)

    def prepare_slots(self, slots: Sequence[SlotTokens]) -> PreparedPasses:
        """Everything ``run`` needs that calls no model: the passes planned and batched as host arrays, and
        each batch's distinct (token, position) pairs where the first layer shares its projections. Pure
        (no model state is read or written), so ``ranking.ranked_rows`` runs it on a second thread."""
        tok = self.lm.tokenizer
        wrap = special_wrap(tok)
        plan = plan_passes(slots, self.mode, tok.mask_token_id, wrap.head, wrap.tail)
        batches = tuple(plan.batches(self.batch_tokens))
        shared = []
        for b in batches:
            pairs = None
            if self._first is not None:
                distinct, inverse = b.distinct_positions()
                if len(distinct) <= FIRST_LAYER_SHARE * b.ids.size:
                    pairs = distinct, inverse
            shared.append(pairs)
        return PreparedPasses(batches, tuple(shared), tuple(plan.token_counts), tuple(len(s.candidates) for s in slots))

    def run(self, prepared: PreparedPasses) -> list[tuple[float, ...]]:
        """The model step of ``score``: the prepared batches through the model, one score per candidate."""
        with torch_threads(self.lm.model, self.lm.device):
            return self._run(prepared)

    def _run(self, prepared: PreparedPasses) -> list[tuple[float, ...]]:
        import numpy as np
        import torch

        device = self.lm.device
        sums = torch.zeros(len(prepared.token_counts), dtype=torch.float64, device=device)
        pending = PendingReads()
        if self._into is not None:
            weight = getattr(*self._into).weight
            self._buffer = torch.empty((self._head_rows, weight.shape[0]), dtype=weight.dtype, device=weight.device)
        with torch.inference_mode():
            # Passes of one length batch together: no padding, so no attention mask and no wasted rows.
            for b, pairs in zip(prepared.batches, prepared.shared, strict=True):
                ids, rows, within, cols = (long_tensor(x, device) for x in (b.ids, b.rows, b.within, b.cols))
                shared = None if pairs is None else tuple(long_tensor(x, device) for x in pairs)
                pending.add(self._read_states(ids, rows, within, cols, b.most, shared), b.at, b.tokens, b.cands)
                for chunk in pending.ready(self._head_rows):
                    self._add_log_probs(*chunk, sums)
            for chunk in pending.ready(None):
                self._add_log_probs(*chunk, sums)
        self._buffer = None
        counts = np.array(prepared.token_counts, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            means = np.where(counts > 0, sums.cpu().numpy() / counts, float("-inf")).tolist()
        out: list[tuple[float, ...]] = []
        g = 0
        for n in prepared.candidates:
            out.append(tuple(means[g:g + n]))
            g += n
        return out

    def _add_log_probs(self, states, at, tokens, cands, sums) -> None:
        """Each target's log-probability (its read's logits, normalised) added to its candidate's sum."""
        device = self.lm.device
        at, tokens, cands = (long_tensor(x, device) for x in (at, tokens, cands))
        (values,) = target_log_probs(self._project(states), [(at, tokens)], self._fused_norm)
        values = values.double()
        sums.index_add_(0, cands, values.exp() if self.average == "prob" else values)

    def _read_states(self, ids, rows, within, cols, most: int, shared=None):
        """The encoder's last hidden states at the read positions (the logits there when the head is not
        split off). ``shared``: (distinct, inverse) index tensors of the batch's (token, position) pairs,
        when the first layer's projections run once per pair."""
        if self._split is None:
            return self.lm.model(input_ids=ids).logits[rows, cols]
        base, _ = self._split
        if self._last is None:
            return base(input_ids=ids)[0][rows, cols]
        layers = base.encoder.layer
        try:
            if shared is None:
                base.encoder.layer = layers[:-1]  # all but the last layer on every position
                hidden = base(input_ids=ids)[0]
            else:  # BERT-style: the embeddings, the first layer, then the encoder's middle layers
                hidden = _first_layer_shared(self._first, base.embeddings(input_ids=ids), *shared)
                base.encoder.layer = layers[1:-1]
                hidden = base.encoder(hidden)[0]
        finally:
            base.encoder.layer = layers
        return _last_layer_at(self._last, hidden, rows, within, cols, most)

    def _project(self, states):
        """The LM head on hidden states at read positions (already logits without a split head)."""
        if self._split is None:
            return states
        head = self._split[1]
        if self._buffer is not None:
            parent, name = self._into
            decoder = getattr(parent, name)
            setattr(parent, name, _linear_into(decoder, self._buffer))  # the head's own code, into the buffer
            try:
                return head(states)
            finally:
                setattr(parent, name, decoder)
        if self._padded is None:
            return head(states)
        parent, name, padded = self._padded
        decoder = getattr(parent, name)
        setattr(parent, name, padded)  # the head's own code, with the aligned projection
        try:
            return head(states)
        finally:
            setattr(parent, name, decoder)
