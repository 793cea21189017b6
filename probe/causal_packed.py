"""Packed causal rows (``causal.continuation_sums``): one row per prompt holds its context, then every
candidate's tokens, each at the positions it would have right after the context and seeing only the context
and its own earlier tokens (a 4-D additive mask and position ids). Host arrays are made whole-array per
batch (``packed_batch``); the model is tried once against the KV-cache path before it is trusted (``packs``)."""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from factatlas.probe.batching import long_tensor, on_device
from factatlas.probe.causal_cache import _cached_sums
from factatlas.probe.causal_head import (
    HEAD_CHUNK,
    LOGIT_BUDGET,
    LogitKeeping,
    _device_reads,
    _vocab_size,
    chunked_target_log_probs,
    head_split,
)
from factatlas.probe.models import LoadedModel
from factatlas.probe.normaliser import fused_normaliser, target_log_probs

if TYPE_CHECKING:
    import numpy as np


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
