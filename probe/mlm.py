"""Masked-LM candidate scoring: independent masks (mLAMA) and left-to-right / PLL (BMLAMA).

Both rules reduce to *passes*: an input with the slot replaced by ``k`` positions, some filled with a
candidate's first tokens, the rest masked, and a list of targets ``(position, token, candidate)`` read
from that pass. Passes are deduplicated (independent: one per prompt and mask count some candidate
needs; left-to-right: one per node of the trie of candidate prefixes, grouped by length; identical inputs
of different prompts once), sorted by
length, batched under a token budget, and only the target positions go through the LM head; the
log-normaliser (logsumexp) and the gather run on the device, and only one float per candidate comes back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from factatlas.probe.batching import long_tensor, token_budget_batches
from factatlas.probe.models import LoadedModel
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import SlotTokens, special_wrap, tokenize_slots
from factatlas.probe.threads import torch_threads

MODES = ("independent", "pll")


@dataclass
class MaskedPass:
    """One forward pass and what to read from it."""

    ids: list[int]
    positions: list[int] = field(default_factory=list)  # distinct positions read from this pass
    targets: list[tuple[int, int, int]] = field(default_factory=list)  # (index into positions, token, cand)
    _index: dict[int, int] = field(default_factory=dict, repr=False)

    def read(self, position: int) -> int:
        """Index of ``position`` among the positions read (added on first use)."""
        i = self._index.get(position)
        if i is None:
            i = self._index[position] = len(self.positions)
            self.positions.append(position)
        return i


def plan_passes(slots: Sequence[SlotTokens], mode: str, mask_id: int, head: Sequence[int],
                tail: Sequence[int]) -> tuple[list[MaskedPass], list[int]]:
    """The passes a rule needs for these prompts, and per global candidate index its token count.

    Candidates are numbered globally in query order. Independent: one pass per (prompt, mask count
    present among its candidates). Left-to-right: one pass per distinct (mask count, filled prefix),
    i.e. per trie node, so candidates sharing first tokens share passes.
    """
    if mode not in MODES:
        raise ValueError(f"unknown masked-LM mode '{mode}'; expected one of {MODES}")
    token_counts: list[int] = []
    # Keyed by the input ids over all prompts: prompts with the same text (BMLAMA-17 has 4,620 distinct
    # texts in 6,792 prompts) share their passes too, not only candidates of one prompt.
    by_ids: dict[tuple[int, ...], MaskedPass] = {}
    offset = 0
    for slot in slots:
        start = len(head) + len(slot.prefix)
        by_key: dict[tuple[int, tuple[int, ...]], MaskedPass] = {}
        for ci, cand in enumerate(slot.candidates):
            k = len(cand)
            token_counts.append(k)
            fills = [()] if mode == "independent" else [cand[:j] for j in range(k)]
            for fill in fills:
                key = (k, fill)
                p = by_key.get(key)
                if p is None:
                    ids = (*head, *slot.prefix, *fill, *([mask_id] * (k - len(fill))), *slot.suffix, *tail)
                    p = by_ids.get(ids)
                    if p is None:
                        p = by_ids[ids] = MaskedPass(list(ids))
                    by_key[key] = p
                read = range(k) if mode == "independent" else (len(fill),)
                for j in read:
                    p.targets.append((p.read(start + j), cand[j], offset + ci))
        offset += len(slot.candidates)
    return list(by_ids.values()), token_counts


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
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    if not isinstance(layers, torch_module_list()) or len(layers) < 2:
        return None
    last = layers[-1]
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


def _last_layer_at(last, hidden, rows, cols):
    """The final BERT-style layer evaluated only at (rows, cols): keys and values still come from every
    position, but queries, attention output and feed-forward run for the read positions alone.
    ``rows`` must be grouped (all reads of a row together, rows ascending), as ``score_slots`` builds them."""
    import torch

    sa = last.attention.self
    batch, length, width = hidden.shape
    heads, size = sa.num_attention_heads, sa.attention_head_size
    per_row = torch.bincount(rows, minlength=batch)
    most = int(per_row.max())
    slot = torch.arange(len(rows), device=rows.device) - torch.repeat_interleave(
        torch.cumsum(per_row, 0) - per_row, per_row)  # index of each read within its row
    positions = torch.zeros((batch, most), dtype=torch.long, device=rows.device)
    positions[rows, slot] = cols
    query_in = hidden.gather(1, positions[..., None].expand(batch, most, width))  # [B, m, H]
    q = sa.query(query_in).view(batch, most, heads, size).transpose(1, 2)
    k = sa.key(hidden).view(batch, length, heads, size).transpose(1, 2)
    v = sa.value(hidden).view(batch, length, heads, size).transpose(1, 2)
    context = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=sa.scaling)
    context = context.transpose(1, 2).reshape(batch, most, heads * size)[rows, slot]
    query_in = query_in[rows, slot]
    attended = last.attention.output(context, query_in)
    return last.output(last.intermediate(attended), attended)


class MaskedLMScorer:
    """Candidate scorer for masked LMs. ``mode``: "independent" (mLAMA) or "pll" (left to right)."""

    def __init__(self, lm: LoadedModel, mode: str = "independent", batch_tokens: int = 8192,
                 split_head: bool = True, partial_last_layer: bool = True):
        if lm.family != "mlm":
            raise ValueError(f"MaskedLMScorer needs a masked LM, got a {lm.family} model")
        if mode not in MODES:
            raise ValueError(f"unknown masked-LM mode '{mode}'; expected one of {MODES}")
        if lm.tokenizer.mask_token_id is None:
            raise ValueError(f"tokenizer of {lm.name} has no mask token")
        self.lm, self.mode, self.batch_tokens = lm, mode, batch_tokens
        self.scoring = "mlm-independent" if mode == "independent" else "mlm-pll"
        self._split = lm_head_split(lm.model) if split_head else None
        self._last = None
        if self._split is not None and partial_last_layer:
            self._last = bert_like_last_layer(self._split[0])

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        slots = tokenize_slots(self.lm.tokenizer, queries)
        return self.score_slots(slots)

    def score_slots(self, slots: Sequence[SlotTokens]) -> list[tuple[float, ...]]:
        with torch_threads(self.lm.model, self.lm.device):
            return self._score_slots(slots)

    def _score_slots(self, slots: Sequence[SlotTokens]) -> list[tuple[float, ...]]:
        import numpy as np
        import torch

        tok = self.lm.tokenizer
        wrap = special_wrap(tok)
        passes, counts = plan_passes(slots, self.mode, tok.mask_token_id, wrap.head, wrap.tail)
        device = self.lm.device
        sums = torch.zeros(len(counts), dtype=torch.float64, device=device)
        with torch.inference_mode():
            # Passes of one length batch together: no padding, so no attention mask and no wasted rows.
            for batch in token_budget_batches([len(p.ids) for p in passes], self.batch_tokens, same_length=True):
                chosen = [passes[i] for i in batch]
                rows, cols, targets, bases = [], [], [], []
                for r, p in enumerate(chosen):
                    bases.extend([len(rows)] * len(p.targets))  # where this pass's reads start
                    rows.extend([r] * len(p.positions))
                    cols.extend(p.positions)
                    targets.extend(p.targets)
                read, tokens, cands = np.array(targets, dtype=np.int64).T
                at, tokens, cands = (long_tensor(x, device) for x in (read + np.array(bases), tokens, cands))
                logits = self._logits_at(long_tensor([p.ids for p in chosen], device), None,
                                         long_tensor(rows, device), long_tensor(cols, device))
                # log p(token) = logit - logsumexp(row): no vocabulary-sized log-softmax output is written
                logits = logits.float()
                norm = torch.logsumexp(logits, dim=-1)
                values = logits[at, tokens] - norm[at]
                sums.index_add_(0, cands, values.double())
        means = sums.cpu().tolist()
        out: list[tuple[float, ...]] = []
        g = 0
        for slot in slots:
            n = len(slot.candidates)
            out.append(tuple(means[g + i] / counts[g + i] if counts[g + i] else float("-inf") for i in range(n)))
            g += n
        return out

    def _logits_at(self, ids, mask, rows, cols):
        if self._split is not None and self._last is not None and mask is None:
            base, head = self._split
            layers = base.encoder.layer
            base.encoder.layer = layers[:-1]  # all but the last layer on every position
            try:
                hidden = base(input_ids=ids)[0]
            finally:
                base.encoder.layer = layers
            return head(_last_layer_at(self._last, hidden, rows, cols))
        if self._split is not None:
            base, head = self._split
            hidden = base(input_ids=ids, attention_mask=mask)[0]
            return head(hidden[rows, cols])
        return self.lm.model(input_ids=ids, attention_mask=mask).logits[rows, cols]
