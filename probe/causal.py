"""Causal-LM candidate scoring: the prompt's context runs once for all of its candidates.

Packed (wherever the model honours it, tried once per model: ``packs``): one row per prompt holds the
context and then every candidate's tokens, each candidate at the positions it would have right after the
context and seeing only the context and its own earlier tokens (a 4-D additive attention mask and
position ids). Every token is computed once, nothing is copied per candidate, and rows are right-padded
in batches sorted by length. Otherwise (the KV-cache path): prompts are grouped by context length, the
context runs once with a KV cache whose rows are then selected once per candidate, and all candidates of
the batch continue in one right-padded pass. Either way only the positions that predict a scored token
are projected onto the vocabulary (``logits_to_keep``), and log-probs are gathered on the device.

Rules: ``mean`` / ``sum`` of log p(candidate tokens | prefix), optionally also the template's remainder
after the slot (``include_remainder``). ``causal-sentence-legacy`` is BMLAMA's whole-sentence score:
minus the mean NLL over every predicted token of the filled sentence, tokenized with the tokenizer's
own special tokens (what ``model(ids, labels=ids).loss`` computes in its code).
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from factatlas.probe.batching import greedy_batches, long_tensor, on_device, pad_right
from factatlas.probe.models import LoadedModel
from factatlas.probe.normaliser import fused_normaliser, target_log_probs
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import SlotTokens, special_wrap, tokenize_slots
from factatlas.probe.threads import torch_threads

if TYPE_CHECKING:
    import numpy as np

REDUCTIONS = ("mean", "sum")
LOGIT_BUDGET = 1 << 26  # vocabulary logits (floats) kept alive in one pass
# Rows of the vocabulary projection at a time on CPU, into one reused buffer that the normaliser then
# overwrites: the logits of a whole batch are a fresh mapping of tens of megabytes whose pages all fault
# in, and are streamed from memory twice more by the normaliser. Measured on one thread (1,412 read rows,
# 30,000 x 256 head, process CPU): whole batch 0.30 s (projection 0.22 + normaliser 0.08); in chunks of
# 64 rows 0.30 s, 128: 0.25 s, 256: 0.235 s, 512: 0.26 s, 2,048: 0.30 s.
HEAD_CHUNK = 256


@dataclass(frozen=True)
class LogitKeeping:
    """What a model's ``logits_to_keep`` can do: ``last``, an int (keep the last n positions); ``masked``, a
    2-D boolean mask (keep those positions of each row, flattened). Transformers takes the mask since 5.21;
    5.17 indexes the sequence axis with it and fails (seen on the GPU machine), and a model's own code may
    do anything, so the mask is tried rather than assumed from a version."""

    last: bool
    masked: bool


def logit_keeping(lm: LoadedModel) -> LogitKeeping:
    """Tried on the model itself, once per model: two rows of three tokens, a ragged mask; the mask is
    trusted only where its logits equal those of the full pass at the same positions."""
    import torch

    model = lm.model
    if not forward_accepts(model, "logits_to_keep"):
        return LogitKeeping(last=False, masked=False)
    known = _KEEPING.get(model)
    if known is None:
        vocab = model.get_input_embeddings().weight.shape[0]
        ids = torch.tensor([[1, 2, 3], [3, 2, 1]], device=lm.device) % vocab
        mask = torch.tensor([[True, False, True], [False, True, False]], device=lm.device)
        with torch.inference_mode():
            full = model(input_ids=ids).logits[mask].float()
            try:
                kept = model(input_ids=ids, logits_to_keep=mask).logits.float()
                masked = kept.shape == full.shape and bool(torch.allclose(kept, full, rtol=1e-2, atol=1e-2))
            except (IndexError, RuntimeError, TypeError, ValueError):
                masked = False
        known = _KEEPING[model] = LogitKeeping(last=True, masked=masked)
    return known


_KEEPING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def bos_ids(tokenizer) -> tuple[int, ...]:
    """What the tokenizer itself puts before a text (Llama's <s>), else nothing."""
    return tuple(special_wrap(tokenizer).head)


def context_start(tokenizer, prefix: Sequence[int]) -> list[int]:
    """The ids fed to the model before the slot: what the tokenizer itself puts first (Llama's <s>), else
    its BOS token if it has one (GPT-2's <|endoftext|>, the document start it was trained after), then the
    prefix. A slot opening the prompt then still has a distribution; without any BOS the EOS stands in."""
    head = list(bos_ids(tokenizer))
    if not head and tokenizer.bos_token_id is not None:
        head = [tokenizer.bos_token_id]
    ids = [*head, *prefix]
    if not ids:
        if tokenizer.eos_token_id is None:
            raise ValueError("tokenizer has neither BOS nor EOS: cannot score a slot that opens the prompt")
        ids = [tokenizer.eos_token_id]
    return ids


class CausalLMScorer:
    def __init__(self, lm: LoadedModel, reduce: str = "mean", include_remainder: bool = False,
                 batch_tokens: int = 8192, packed: bool | None = None, head_chunk: int | None = None):
        if lm.family != "causal":
            raise ValueError(f"CausalLMScorer needs a causal LM, got a {lm.family} model")
        if reduce not in REDUCTIONS:
            raise ValueError(f"unknown reduction '{reduce}'; expected one of {REDUCTIONS}")
        self.lm, self.reduce, self.include_remainder, self.batch_tokens = lm, reduce, include_remainder, batch_tokens
        self.scoring = f"causal-{reduce}" + ("+remainder" if include_remainder else "")
        self._keep, self.packed = logit_keeping(lm), packed  # packed: see continuation_sums
        self.head_chunk = head_chunk if head_chunk is not None else HEAD_CHUNK  # 0: the whole batch at once

    def context_needs(self, queries: Sequence[ClozeQuery], slots: Sequence[SlotTokens] | None = None):
        """Per query, the positions fed: the context (BOS first, as ``context_start``) and its longest
        continuation but the last token, which is only predicted."""
        from factatlas.probe.context import Need, short

        slots = tokenize_slots(self.lm.tokenizer, queries) if slots is None else slots
        needs = []
        for q, s in zip(queries, slots, strict=True):
            context = len(context_start(self.lm.tokenizer, s.prefix))
            longest = max((len(self._continuation(s, ci)) for ci in range(len(s.candidates))), default=1)
            needs.append(Need(context + longest - 1, f"prompt {short(q.text)} ({context} context tokens + {longest} "
                                                     "tokens of its longest continuation, the last only predicted)"))
        return needs

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        from factatlas.probe.context import CANDIDATE_FIX, model_limit, refuse_overlong

        slots = tokenize_slots(self.lm.tokenizer, queries)
        refuse_overlong(self.context_needs(queries, slots), model_limit(self.lm), self.lm.name, CANDIDATE_FIX)
        return self.score_slots(slots)

    def _continuation(self, slot: SlotTokens, ci: int) -> tuple[int, ...]:
        return slot.candidates[ci] + (slot.suffix if self.include_remainder else ())

    def contexts_and_continuations(self, slots: Sequence[SlotTokens]) -> tuple[list[list[int]], list[list[tuple[int, ...]]]]:
        """Per prompt, the ids before the slot and the token sequences scored after them."""
        contexts = [context_start(self.lm.tokenizer, s.prefix) for s in slots]
        return contexts, [[self._continuation(s, ci) for ci in range(len(s.candidates))] for s in slots]

    def score_slots(self, slots: Sequence[SlotTokens]) -> list[tuple[float, ...]]:
        contexts, conts = self.contexts_and_continuations(slots)
        with torch_threads(self.lm.model, self.lm.device):
            totals, _ = continuation_sums(self.lm, contexts, conts, self.batch_tokens, self._keep,
                                          packed=self.packed, head_chunk=self.head_chunk)
        if self.reduce == "mean":
            return [tuple(t / max(len(c), 1) for t, c in zip(ts, cs, strict=True)) for ts, cs in zip(totals, conts, strict=True)]
        return [tuple(ts) for ts in totals]


def continuation_sums(lm: LoadedModel, contexts: Sequence[Sequence[int]], conts: Sequence[Sequence[Sequence[int]]],
                      batch_tokens: int, keep: LogitKeeping, with_context: bool = False,
                      packed: bool | None = None, head_chunk: int = HEAD_CHUNK) -> tuple[list[list[float]], list[float]]:
    """Per prompt i and continuation c: sum of log p(c | contexts[i]) (-inf for an empty one); with
    ``with_context`` also per prompt the sum of log p(context token t | context tokens before t), t >= 1,
    read from the same pass (the whole-sentence rule needs it; the continuation rules do not).

    ``packed`` (None: wherever ``packs`` finds the model honours it) puts each prompt in one row: its
    context, then every continuation's tokens, each seeing only the context and its own earlier tokens.
    Otherwise the context runs once with a KV cache that is copied for every continuation. ``head_chunk``:
    packed rows on CPU project onto the vocabulary that many read rows at a time (``head_split``); 0, the
    whole batch at once (the previous way, kept for the speed benchmark)."""
    if packed is None:
        packed = packs(lm, keep)
    if packed:
        return _packed_sums(lm, contexts, conts, batch_tokens, keep, with_context, head_chunk)
    return _cached_sums(lm, contexts, conts, batch_tokens, keep, with_context)


def packs(lm: LoadedModel, keep: LogitKeeping) -> bool:
    """Whether the model takes a 4-D additive attention mask and position ids as given (transformers 5
    returns a 4-D mask as is); tried once per model on a small input against the KV-cache path (relative
    tolerance 1e-4 in fp32, 2e-2 in half precision), with a fallback to that path where it differs."""
    import torch

    model = lm.model
    known = _PACKS.get(model)
    if known is None:
        vocab = model.get_input_embeddings().weight.shape[0]
        contexts = [[1, 2, 3], [4, 5]]
        conts = [[(6, 7), (8,), (9, 10, 11), ()], [(12, 13), (14,), (15, 16), (17,)]]
        contexts = [[t % vocab for t in c] for c in contexts]
        conts = [[tuple(t % vocab for t in c) for c in cs] for cs in conts]
        dtype = next(model.parameters()).dtype
        tol = 1e-4 if dtype == torch.float32 else 2e-2
        try:
            a, a_ctx = _packed_sums(lm, contexts, conts, 1 << 12, keep, with_context=True)
        except (IndexError, RuntimeError, TypeError, ValueError):
            known = False
        else:
            b, b_ctx = _cached_sums(lm, contexts, conts, 1 << 12, keep, with_context=True)
            flat_a = [x for row in a for x in row] + a_ctx
            flat_b = [x for row in b for x in row] + b_ctx
            known = all(x == y or abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(flat_a, flat_b, strict=True))
        _PACKS[model] = known
    return known


_PACKS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class PackedBatch:
    """One batch of packed rows as host arrays: ``ids``/``positions`` [rows, width], ``allowed`` [rows,
    width, width] (which key each query position may see), ``kept`` [rows, width] (positions whose logits
    are read); per candidate target its index among the kept positions (``at``), token and cell; per
    context target (``with_context``) the same and its prompt."""

    ids: np.ndarray
    positions: np.ndarray
    allowed: np.ndarray
    kept: np.ndarray
    at: np.ndarray
    targets: np.ndarray
    cells: np.ndarray
    ctx_at: np.ndarray
    ctx_targets: np.ndarray
    ctx_prompts: np.ndarray


def packed_batches(contexts: Sequence[Sequence[int]], conts: Sequence[Sequence[Sequence[int]]], batch_tokens: int,
                   vocab: int, pad_id: int, with_context: bool) -> Iterator[PackedBatch]:
    """The packed rows (one per prompt: its context, then every continuation but its last token) in
    right-padded batches, longest first, under ``batch_tokens`` tokens and ``LOGIT_BUDGET`` kept logits.
    Cells (prompt i, continuation c) are numbered in prompt order. Batches are made one at a time: each
    holds a [rows, width, width] mask, too much to keep for a whole run of long prompts."""
    import numpy as np

    lengths = packed_lengths(contexts, conts)
    cell_base = np.cumsum([0] + [len(cs) for cs in conts]).tolist()
    for batch in packed_groups(contexts, conts, batch_tokens, vocab, with_context):
        yield packed_batch(batch, contexts, conts, lengths[batch[0]], cell_base, pad_id, with_context)


def packed_lengths(contexts: Sequence[Sequence[int]], conts: Sequence[Sequence[Sequence[int]]]) -> list[int]:
    """Per prompt, its packed row's length: the context and every continuation but its last token."""
    return [len(ctx) + sum(max(len(c) - 1, 0) for c in cs) for ctx, cs in zip(contexts, conts, strict=True)]


def packed_groups(contexts: Sequence[Sequence[int]], conts: Sequence[Sequence[Sequence[int]]], batch_tokens: int,
                  vocab: int, with_context: bool) -> list[list[int]]:
    """The prompts of each batch, longest first, under ``batch_tokens`` padded tokens and ``LOGIT_BUDGET``."""
    lengths = packed_lengths(contexts, conts)
    reads = [n - (0 if with_context else len(ctx) - 1) for n, ctx in zip(lengths, contexts, strict=True)]
    order = sorted(range(len(contexts)), key=lambda i: -lengths[i])
    groups: list[list[int]] = []
    logits = 0
    for i in order:  # longest first: the first row of a batch sets its padded width
        if (not groups or (len(groups[-1]) + 1) * lengths[groups[-1][0]] > batch_tokens
                or logits + reads[i] * vocab > LOGIT_BUDGET):
            groups.append([])
            logits = 0
        groups[-1].append(i)
        logits += reads[i] * vocab
    return groups


def packed_batch(batch: Sequence[int], contexts: Sequence[Sequence[int]], conts: Sequence[Sequence[Sequence[int]]],
                  width: int, cell_base: Sequence[int], pad_id: int, with_context: bool) -> PackedBatch:
    """One batch's host arrays. The loop over rows and continuations only gathers lists; every array is then
    made whole, with no numpy call per row or continuation (on a GPU the host builds batch n+1 while the
    device runs batch n, and numpy calls per continuation took the host longer than the device took for
    the batch). Every position gets a segment: 0 for its row's context, one id per continuation, -1 for
    padding; who may see whom follows from the segments and the columns."""
    import numpy as np

    rows = len(batch)
    # per segment, in row order: its row, length, first position id and id (context 0, continuations 1..)
    seg_row: list[int] = []
    seg_len: list[int] = []
    seg_pos: list[int] = []
    tokens: list[int] = []  # what the rows hold, in order
    cand_row: list[int] = []  # per non-empty continuation: its row, first column, cell, tokens
    cand_col: list[int] = []
    cand_cell: list[int] = []
    cand_tokens: list[int] = []
    cand_len: list[int] = []
    ctx_len = np.array([len(contexts[i]) for i in batch], dtype=np.int64)
    for b, i in enumerate(batch):
        ctx, n = contexts[i], len(contexts[i])
        seg_row.append(b)
        seg_len.append(n)
        seg_pos.append(0)
        tokens.extend(ctx)
        start = n
        for ci, c in enumerate(conts[i]):
            if not c:
                continue
            m = len(c) - 1  # its first token is read at the context's end, the others inside it
            seg_row.append(b)
            seg_len.append(m)
            seg_pos.append(n)
            tokens.extend(c[:-1])
            cand_row.append(b)
            cand_col.append(start)
            cand_cell.append(cell_base[i] + ci)
            cand_tokens.extend(c)
            cand_len.append(m + 1)
            start += m
    seg_len_a = np.array(seg_len, dtype=np.int64)
    seg_first = np.cumsum(seg_len_a) - seg_len_a  # flat index of each segment's first token
    row_first = seg_first[np.searchsorted(seg_row, np.arange(rows), side="left")]
    flat_row = np.repeat(np.array(seg_row, dtype=np.int64), seg_len_a)
    flat = np.arange(len(tokens), dtype=np.int64)
    col = flat - row_first[flat_row]
    within = flat - np.repeat(seg_first, seg_len_a)
    is_cand_seg = np.arange(len(seg_len)) - np.searchsorted(seg_row, seg_row, side="left")  # 0: a context
    ids = np.full((rows, width), pad_id, dtype=np.int64)
    positions = np.zeros((rows, width), dtype=np.int64)
    segment = np.full((rows, width), -1, dtype=np.int64)
    ids[flat_row, col] = tokens
    positions[flat_row, col] = np.repeat(np.array(seg_pos, dtype=np.int64), seg_len_a) + within
    segment[flat_row, col] = np.repeat(np.where(is_cand_seg > 0, np.arange(len(seg_len)) + 1, 0), seg_len_a)
    columns = np.arange(width)
    q, k = segment[:, :, None], segment[:, None, :]
    causal = columns[None, None, :] <= columns[None, :, None]
    allowed = ((q >= 0) & (k == 0) & ((q != 0) | causal)) | ((q > 0) & (q == k) & causal)
    allowed |= (q < 0) & (columns[None, None, :] == columns[None, :, None])  # padding sees itself: no NaN rows
    # kept: every continuation position and the context's last; with the context's own targets, all of it
    kept = segment >= 0 if with_context else (segment > 0) | (columns[None, :] == ctx_len[:, None] - 1)
    kept_index = np.cumsum(kept.ravel()) - 1  # flattened order of the kept positions, as the mask picks them
    cand_len_a = np.array(cand_len, dtype=np.int64)
    read = np.arange(int(cand_len_a.sum()), dtype=np.int64) - np.repeat(np.cumsum(cand_len_a) - cand_len_a, cand_len_a)
    at_row = np.repeat(np.array(cand_row, dtype=np.int64), cand_len_a)
    at_col = np.where(read == 0, ctx_len[at_row] - 1, np.repeat(np.array(cand_col, dtype=np.int64), cand_len_a) + read - 1)
    if with_context:
        ctx_rows = np.repeat(np.arange(rows), np.maximum(ctx_len - 1, 0))
        ctx_cols = np.arange(len(ctx_rows)) - np.repeat(np.cumsum(np.maximum(ctx_len - 1, 0)) - np.maximum(ctx_len - 1, 0),
                                                        np.maximum(ctx_len - 1, 0))
        ctx_targets = np.array([t for i in batch for t in contexts[i][1:]], dtype=np.int64)
        ctx_prompts = np.asarray(batch, dtype=np.int64)[ctx_rows]
        ctx_at = kept_index[ctx_rows * width + ctx_cols]
    else:
        ctx_at = ctx_targets = ctx_prompts = np.zeros(0, dtype=np.int64)
    return PackedBatch(ids, positions, allowed, kept, kept_index[at_row * width + at_col],
                       np.array(cand_tokens, dtype=np.int64), np.repeat(np.array(cand_cell, dtype=np.int64), cand_len_a),
                       ctx_at, ctx_targets, ctx_prompts)


def plan_packed(lm: LoadedModel, contexts: Sequence[Sequence[int]], conts: Sequence[Sequence[Sequence[int]]],
                batch_tokens: int, with_context: bool) -> Iterator[PackedBatch]:
    """``packed_batches`` with the model's vocabulary size and the tokenizer's padding id."""
    pad_id = lm.tokenizer.pad_token_id if lm.tokenizer.pad_token_id is not None else 0
    return packed_batches(contexts, conts, batch_tokens, _vocab_size(lm.model), pad_id, with_context)


def packed_inputs(batch: PackedBatch, dtype, device: str) -> dict:
    """The model's keyword inputs for a packed batch: ids, the 4-D additive mask, position ids."""
    import torch

    mask = torch.zeros(batch.allowed.shape, dtype=dtype).masked_fill_(
        torch.from_numpy(~batch.allowed), torch.finfo(dtype).min)[:, None]
    return {"input_ids": long_tensor(batch.ids, device), "attention_mask": on_device(mask, device),
            "position_ids": long_tensor(batch.positions, device), "use_cache": False}


def _packed_sums(lm: LoadedModel, contexts: Sequence[Sequence[int]], conts: Sequence[Sequence[Sequence[int]]],
                 batch_tokens: int, keep: LogitKeeping, with_context: bool,
                 head_chunk: int = HEAD_CHUNK) -> tuple[list[list[float]], list[float]]:
    """The packed rows' sums. Nothing in the loop makes the host wait for the device: the kept positions
    are picked by host-made indices (a boolean mask on the device is a ``nonzero``, which waits for every
    kernel launched so far), so on an accelerator the host builds batch n+1 while the device runs batch n."""
    import numpy as np
    import torch

    model, device = lm.model, lm.device
    dtype = next(model.parameters()).dtype
    fused = fused_normaliser(device)
    n_cells = sum(len(cs) for cs in conts)
    cand_sums = torch.zeros(n_cells, dtype=torch.float64, device=device)
    context_sums = torch.zeros(len(contexts), dtype=torch.float64, device=device)
    # accelerators: the head on the kept rows at once, one fused log-softmax; CPU: ``head_chunk`` rows at a time
    split = head_split(lm, keep) if fused or head_chunk else None
    with torch.inference_mode():
        for batch in plan_packed(lm, contexts, conts, batch_tokens, with_context):
            kept_rows = long_tensor(np.flatnonzero(batch.kept), device)  # row-major, as a boolean mask picks
            reads = [(batch.at, batch.targets), (batch.ctx_at, batch.ctx_targets)]
            if split is not None:
                base, head = split
                hidden = base(**packed_inputs(batch, dtype, device)).last_hidden_state
                hidden = hidden.flatten(0, 1).index_select(0, kept_rows)
                if fused:
                    cand, ctx = target_log_probs(head(hidden), _device_reads(reads, device), fused)
                else:
                    cand, ctx = chunked_target_log_probs(hidden, head, reads, head_chunk)
            else:
                if keep.masked:
                    extra = {"logits_to_keep": on_device(torch.from_numpy(batch.kept), device)}
                else:
                    extra = {}
                out = model(**packed_inputs(batch, dtype, device), **extra).logits
                if not keep.masked:
                    out = out.flatten(0, 1).index_select(0, kept_rows)
                cand, ctx = target_log_probs(out, _device_reads(reads, device), fused)
            cand_sums.index_add_(0, long_tensor(batch.cells, device), cand.double())
            context_sums.index_add_(0, long_tensor(batch.ctx_prompts, device), ctx.double())
    flat_sums = cand_sums.cpu().tolist()
    cell_base = 0
    totals = []
    for cs in conts:
        totals.append([flat_sums[cell_base + ci] if c else float("-inf") for ci, c in enumerate(cs)])
        cell_base += len(cs)
    return totals, context_sums.cpu().tolist()


def _device_reads(reads, device: str) -> list:
    """(rows, tokens) host index arrays as index tensors on ``device``."""
    return [(long_tensor(at, device), long_tensor(tokens, device)) for at, tokens in reads]


def head_split(lm: LoadedModel, keep: LogitKeeping):
    """(decoder, vocabulary projection) when the model's logits are exactly ``projection(decoder(...)
    .last_hidden_state)``, so the projection can run in chunks; None otherwise (a model that scales or
    caps its logits, a head that is not one linear layer, a forward that is not transformers' own: a
    subclass or wrapper may treat its inputs otherwise). Tried once per model on a small input against the
    model's own logits (relative tolerance 1e-4 in fp32, 2e-2 in half precision)."""
    import torch

    model = lm.model
    known = _SPLIT.get(model)
    if known is None:
        known = False
        prefix = getattr(model, "base_model_prefix", "")
        base = getattr(model, prefix, None) if prefix else None
        head = model.get_output_embeddings()
        owner = next((cls for cls in type(model).__mro__ if "forward" in cls.__dict__), object)
        own = owner.__module__.startswith("transformers.models.")
        if own and base is not None and isinstance(head, torch.nn.Linear) and not getattr(model, "hf_device_map", None):
            vocab = model.get_input_embeddings().weight.shape[0]
            ids = torch.tensor([[1, 2, 3], [3, 2, 1]], device=lm.device) % vocab
            tol = 1e-4 if head.weight.dtype == torch.float32 else 2e-2
            try:
                with torch.inference_mode():
                    full = model(input_ids=ids).logits.float()
                    mine = head(base(input_ids=ids).last_hidden_state).float()
                known = mine.shape == full.shape and bool(torch.allclose(mine, full, rtol=tol, atol=tol))
            except (AttributeError, IndexError, RuntimeError, TypeError, ValueError):
                known = False
        _SPLIT[model] = known = (base, head) if known else False
    return known or None


_SPLIT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def chunked_target_log_probs(hidden, head, reads, chunk: int = HEAD_CHUNK) -> list:
    """Per (rows, tokens) pair of host index arrays, float32 log p(token) at those rows of
    ``head(hidden)``, the projection run ``chunk`` rows at a time into one buffer (CPU)."""
    import numpy as np
    import torch

    from factatlas.probe.normaliser import logsumexp_rows_in_place

    n = hidden.shape[0]
    weight, bias = head.weight, head.bias
    buffer = torch.empty((min(chunk, n), weight.shape[0]), dtype=weight.dtype, device=hidden.device)
    out = [torch.empty(len(rows), dtype=torch.float32) for rows, _ in reads]
    orders = [np.argsort(rows, kind="stable") for rows, _ in reads]
    for start in range(0, n, chunk):
        end = min(n, start + chunk)
        logits = buffer[: end - start]
        if bias is None:
            torch.mm(hidden[start:end], weight.t(), out=logits)
        else:
            torch.addmm(bias, hidden[start:end], weight.t(), out=logits)
        logits = logits if logits.dtype == torch.float32 else logits.float()
        picked = []
        for (rows, tokens), order in zip(reads, orders, strict=True):
            lo, hi = np.searchsorted(rows[order], (start, end))
            which = order[lo:hi]
            local = torch.from_numpy(rows[which] - start)
            picked.append((which, local, logits[local, torch.from_numpy(tokens[which])]))
        norm = logsumexp_rows_in_place(logits)
        for o, (which, local, values) in zip(out, picked, strict=True):
            o[torch.from_numpy(which)] = values - norm[local]
    return out


def forward_accepts(model, name: str) -> bool:
    """Whether a call of the model reaches a forward that takes ``name``: the classes' forwards are read in
    method-resolution order, and one that only passes ``**kwargs`` on (a subclass wrapping the model's code)
    is looked through to the next; one that neither names it nor takes ``**kwargs`` ends the search. When
    every forward of the classes passed ``**kwargs`` on, a wrapper that names the model it calls
    (``get_base_model()``: PEFT's adapters) is looked through to that model; else ``**kwargs`` alone is no
    promise that the name is used."""
    import torch

    for cls in type(model).__mro__:
        if cls is torch.nn.Module:  # its forward is the "not implemented" stub every module inherits
            break
        forward = cls.__dict__.get("forward")
        if forward is None:
            continue
        params = inspect.signature(forward).parameters
        if name in params:
            return True
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return False
    base = getattr(model, "get_base_model", None)
    inner = base() if callable(base) else None
    return inner is not None and inner is not model and forward_accepts(inner, name)


def cache_argument(model) -> str:
    """The name the model's forward takes its KV cache under: transformers 5.24 renamed past_key_values to
    cache (the old name is deprecated until 5.40)."""
    return "cache" if forward_accepts(model, "cache") else "past_key_values"


def _cached_sums(lm: LoadedModel, contexts: Sequence[Sequence[int]], conts: Sequence[Sequence[Sequence[int]]],
                 batch_tokens: int, keep: LogitKeeping, with_context: bool) -> tuple[list[list[float]], list[float]]:
    import numpy as np
    import torch

    tok, model, device = lm.tokenizer, lm.model, lm.device
    vocab = _vocab_size(model)
    costs = []
    for ctx, cs in zip(contexts, conts, strict=True):
        width = max(len(c) for c in cs)
        kept = (len(ctx) if with_context else 1) + sum(len(c) for c in cs)
        costs.append((len(ctx) + len(cs) * (len(ctx) + width), kept * vocab))
    order = sorted(range(len(contexts)), key=lambda i: (len(contexts[i]), -max(len(c) for c in conts[i])))
    batches = []
    for group in _runs(order, key=lambda i: len(contexts[i])):
        batches.extend(greedy_batches(group, costs, (batch_tokens, LOGIT_BUDGET)))
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    cache_name = cache_argument(model)
    # Sums stay on the device until every batch is launched: reading one back would make the host wait.
    pending_rows, pending_context = [], []
    with torch.inference_mode():
        for batch in batches:
            ctx = long_tensor([contexts[i] for i in batch], device)
            kwargs = {"logits_to_keep": 1} if keep.last and not with_context else {}
            # one context length per batch: no padding, so no mask (a 0/1 mask makes transformers ask the
            # device whether it is all ones, and the host waits)
            out = model(input_ids=ctx, use_cache=True, **kwargs)
            first = torch.log_softmax(out.logits[:, -1], dim=-1, dtype=torch.float32)
            if with_context and ctx.shape[1] > 1:
                inner = torch.log_softmax(out.logits[:, :-1], dim=-1, dtype=torch.float32)
                pending_context.append((batch, inner.gather(-1, ctx[:, 1:, None])[..., 0].double().sum(dim=1)))
            row_prompt, row_cand, rows = [], [], []
            for b, i in enumerate(batch):
                for ci, c in enumerate(conts[i]):
                    row_prompt.append(b)
                    row_cand.append((i, ci))
                    rows.append(c)
            first_tokens = long_tensor([r[0] if r else 0 for r in rows], device)
            prompt_index = long_tensor(row_prompt, device)
            row_sums = first[prompt_index, first_tokens].double()
            width = max(len(r) for r in rows)
            if width > 1:
                ids, _ = pad_right([r[:-1] for r in rows], pad_id)
                read_counts = np.array([max(len(cont) - 1, 0) for cont in rows])  # an empty one reads nothing
                reads = torch.from_numpy(np.arange(ids.shape[1])[None, :] < read_counts[:, None])
                cache = out.get("cache")
                if cache is None:  # before transformers 5.24
                    cache = out.past_key_values
                cache.batch_select_indices(prompt_index)
                # Padding sits after every real token, so it cannot reach them; the mask says so anyway.
                attention = torch.zeros((len(rows), ctx.shape[1] + ids.shape[1]), dtype=torch.long)
                attention[:, : ctx.shape[1]] = 1
                for r, cont in enumerate(rows):
                    attention[r, ctx.shape[1]: ctx.shape[1] + len(cont) - 1] = 1
                reads_there = on_device(reads, device)
                extra = {"logits_to_keep": reads_there} if keep.masked else {}
                extra[cache_name] = cache
                logits = model(input_ids=on_device(ids, device), attention_mask=on_device(attention, device),
                               use_cache=True, **extra).logits
                if not keep.masked:  # host-made indices: a boolean mask on the device makes the host wait
                    logits = logits.flatten(0, 1).index_select(0, long_tensor(np.flatnonzero(reads.numpy()), device))
                next_tokens = long_tensor([t for cont in rows for t in cont[1:]], device)
                kept_rows = long_tensor(np.repeat(np.arange(len(rows)), read_counts), device)
                (picked,) = target_log_probs(logits, [(torch.arange(len(next_tokens), device=device), next_tokens)],
                                             fused_normaliser(device))
                row_sums.index_add_(0, kept_rows, picked.double())
            pending_rows.append((row_cand, rows, row_sums))
    totals: list[list[float]] = [[0.0] * len(cs) for cs in conts]
    if pending_rows:
        sums = torch.cat([s for _, _, s in pending_rows]).cpu().tolist()
        cells = ((cell, cont) for row_cand, rows, _ in pending_rows for cell, cont in zip(row_cand, rows, strict=True))
        for ((i, ci), cont), total in zip(cells, sums, strict=True):
            totals[i][ci] = total if cont else float("-inf")
    context_sums = [0.0] * len(contexts)
    if pending_context:
        picked = torch.cat([p for _, p in pending_context]).cpu().tolist()
        for i, total in zip((i for b, _ in pending_context for i in b), picked, strict=True):
            context_sums[i] = total
    return totals, context_sums


def _vocab_size(model) -> int:
    """Width of the vocabulary projection, what a kept logit row costs (1 when the model has none)."""
    head = model.get_output_embeddings()
    return head.weight.shape[0] if head is not None else 1


def _runs(order: Sequence[int], key) -> list[list[int]]:
    """Consecutive items of ``order`` with equal ``key``."""
    runs: list[list[int]] = []
    for i in order:
        if runs and key(runs[-1][-1]) == key(i):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


class SentenceLegacyScorer:
    """BMLAMA's causal score: minus the mean NLL of the whole filled sentence, batched across candidates."""

    scoring = "causal-sentence-legacy"

    def __init__(self, lm: LoadedModel, batch_tokens: int = 8192, packed: bool | None = None,
                 head_chunk: int | None = None):
        if lm.family != "causal":
            raise ValueError(f"SentenceLegacyScorer needs a causal LM, got a {lm.family} model")
        self.lm, self.batch_tokens = lm, batch_tokens
        self._keep, self.packed = logit_keeping(lm), packed  # packed: see continuation_sums
        self.head_chunk = head_chunk if head_chunk is not None else HEAD_CHUNK  # 0: the whole batch at once

    def sentences(self, queries: Sequence[ClozeQuery]) -> list[list[list[int]]]:
        tok = self.lm.tokenizer
        texts = [q.left + form + q.right for q in queries for form in q.forms]
        ids = tok(texts, add_special_tokens=True)["input_ids"] if texts else []
        out, pos = [], 0
        for q in queries:
            out.append(ids[pos: pos + len(q.forms)])
            pos += len(q.forms)
        return out

    def context_needs(self, queries: Sequence[ClozeQuery], per_query: list[list[list[int]]] | None = None):
        """Per query, the positions of its longest filled sentence."""
        from factatlas.probe.context import Need, short

        per_query = self.sentences(queries) if per_query is None else per_query
        return [Need(max((len(s) for s in ss), default=0), f"prompt {short(q.text)} filled with its longest "
                     "candidate") for q, ss in zip(queries, per_query, strict=True)]

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        """The filled sentences of a prompt share their first tokens (the template before the slot): that
        prefix runs once per prompt, its own tokens' log-probs are read from that pass, and the candidates
        continue from its KV cache. Same sum, same count of predicted tokens as the whole-sentence loss."""
        from factatlas.probe.context import CANDIDATE_FIX, model_limit, refuse_overlong

        per_query = self.sentences(queries)
        refuse_overlong(self.context_needs(queries, per_query), model_limit(self.lm), self.lm.name, CANDIDATE_FIX)
        scores = [[float("-inf")] * len(ss) for ss in per_query]
        shared, whole = shared_prefixes(per_query)
        with torch_threads(self.lm.model, self.lm.device):
            if shared:
                contexts = [per_query[qi][0][:cut] for qi, cut in shared]
                conts = [[x[cut:] for x in per_query[qi]] for qi, cut in shared]
                totals, inner = continuation_sums(self.lm, contexts, conts, self.batch_tokens, self._keep,
                                                  with_context=True, packed=self.packed,
                                                  head_chunk=self.head_chunk)
                for k, (qi, _) in enumerate(shared):
                    for ci, x in enumerate(per_query[qi]):
                        scores[qi][ci] = (inner[k] + totals[k][ci]) / (len(x) - 1)
            self._whole_sentences(per_query, [qi for qi, _ in whole], scores)
        return [tuple(s) for s in scores]

    def _whole_sentences(self, per_query: list[list[list[int]]], which: Sequence[int],
                         scores: list[list[float]]) -> None:
        """Prompts whose sentences share no token (a slot that opens the sentence, no BOS): every
        sentence in full, batched across candidates."""
        import numpy as np
        import torch

        tok, model, device = self.lm.tokenizer, self.lm.model, self.lm.device
        flat = [(qi, ci, s) for qi in which for ci, s in enumerate(per_query[qi])]
        if not flat:
            return
        vocab = _vocab_size(model)
        costs = [(len(s), len(s) * vocab) for _, _, s in flat]
        order = sorted(range(len(flat)), key=lambda i: -len(flat[i][2]))
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        sums = torch.zeros(len(flat), dtype=torch.float64, device=device)  # read back once, after every batch
        split = head_split(self.lm, self._keep)
        with torch.inference_mode():
            for batch in greedy_batches(order, costs, (self.batch_tokens, LOGIT_BUDGET)):
                rows = [flat[i][2] for i in batch]
                read_counts = np.array([max(len(s) - 1, 0) for s in rows])
                if not read_counts.any():
                    continue
                ids, mask = pad_right(rows, pad_id)
                reads = np.arange(ids.shape[1])[None, :] < read_counts[:, None]
                ids, kept = on_device(ids, device), long_tensor(np.flatnonzero(reads), device)
                if split is not None:
                    # transformers' own model: right padding comes after every real token of a causal model,
                    # so no padding mask (a 0/1 mask makes transformers ask the device whether it is all ones,
                    # and the host waits); the head on the read rows, picked by host-made indices
                    base, head = split
                    logits = head(base(input_ids=ids).last_hidden_state.flatten(0, 1).index_select(0, kept))
                elif self._keep.masked:
                    logits = model(input_ids=ids, attention_mask=on_device(mask, device),
                                   logits_to_keep=on_device(torch.from_numpy(reads), device)).logits
                else:
                    logits = model(input_ids=ids, attention_mask=on_device(mask, device)).logits.flatten(
                        0, 1).index_select(0, kept)
                targets = long_tensor([t for s in rows for t in s[1:]], device)
                (picked,) = target_log_probs(logits, [(torch.arange(len(targets), device=device), targets)],
                                             fused_normaliser(device))
                sums.index_add_(0, long_tensor(np.repeat(np.asarray(batch), read_counts), device), picked.double())
        for (qi, ci, s), total in zip(flat, sums.cpu().tolist(), strict=True):
            if len(s) > 1:
                scores[qi][ci] = total / (len(s) - 1)


def shared_prefixes(per_query: Sequence[Sequence[Sequence[int]]]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(prompt, prefix length) of the prompts whose sentences share a prefix, and of those that share none.
    One token after the prefix stays in every sentence: it carries the first candidate-dependent prediction
    (from the prefix's last position)."""
    shared, whole = [], []
    for qi, ss in enumerate(per_query):
        cut = min(_common_prefix(ss), min(len(x) for x in ss) - 1)
        (shared if cut >= 1 else whole).append((qi, cut))
    return shared, whole


def _common_prefix(rows: Sequence[Sequence[int]]) -> int:
    """Length of the longest token prefix all rows share."""
    first = rows[0]
    n = min(len(r) for r in rows)
    for j in range(n):
        t = first[j]
        if any(r[j] != t for r in rows):
            return j
    return n
