"""The KV-cache path of the causal scorers (models that do not honour packed rows): prompts grouped by
context length, the context run once with a KV cache whose rows are selected once per candidate, and every
candidate of the batch continued in one right-padded pass."""

from __future__ import annotations

from collections.abc import Sequence

from factatlas.probe.batching import greedy_batches, long_tensor, on_device, pad_right
from factatlas.probe.causal_head import LOGIT_BUDGET, LogitKeeping, _vocab_size, forward_accepts
from factatlas.probe.models import LoadedModel
from factatlas.probe.normaliser import fused_normaliser, target_log_probs


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


def _runs(order: Sequence[int], key) -> list[list[int]]:
    """Consecutive items of ``order`` with equal ``key``."""
    runs: list[list[int]] = []
    for i in order:
        if runs and key(runs[-1][-1]) == key(i):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs
