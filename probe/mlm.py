"""Masked-LM candidate scoring: independent masks (mLAMA) and left-to-right / PLL (BMLAMA).

Both rules reduce to *passes*: an input with the slot replaced by ``k`` positions, some filled with a
candidate's first tokens, the rest masked, and a list of targets ``(position, token, candidate)`` read
from that pass. Passes are deduplicated (independent: one per prompt and mask count some candidate
needs; left-to-right: one per node of the trie of candidate prefixes, grouped by length), sorted by
length, batched under a token budget, and only the target positions go through the LM head; the
log-softmax and the gather run on the device, and only one float per candidate comes back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from factatlas.probe.batching import pad_right, token_budget_batches
from factatlas.probe.models import LoadedModel
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import SlotTokens, special_wrap, tokenize_slots

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
    passes: list[MaskedPass] = []
    token_counts: list[int] = []
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
                    ids = [*head, *slot.prefix, *fill, *([mask_id] * (k - len(fill))), *slot.suffix, *tail]
                    p = by_key[key] = MaskedPass(ids)
                read = range(k) if mode == "independent" else (len(fill),)
                for j in read:
                    p.targets.append((p.read(start + j), cand[j], offset + ci))
        passes.extend(by_key.values())
        offset += len(slot.candidates)
    return passes, token_counts


def lm_head_split(model):
    """(encoder, head) when the MLM is ``base model + one head module``, so the vocabulary projection
    runs only on the positions read; None for layouts we do not know (then full logits are used)."""
    prefix = getattr(model, "base_model_prefix", "")
    base = getattr(model, prefix, None) if prefix else None
    heads = [m for name, m in model.named_children() if name != prefix and any(True for _ in m.parameters())]
    if base is None or len(heads) != 1:
        return None
    return base, heads[0]


class MaskedLMScorer:
    """Candidate scorer for masked LMs. ``mode``: "independent" (mLAMA) or "pll" (left to right)."""

    def __init__(self, lm: LoadedModel, mode: str = "independent", batch_tokens: int = 8192,
                 split_head: bool = True):
        if lm.family != "mlm":
            raise ValueError(f"MaskedLMScorer needs a masked LM, got a {lm.family} model")
        if mode not in MODES:
            raise ValueError(f"unknown masked-LM mode '{mode}'; expected one of {MODES}")
        if lm.tokenizer.mask_token_id is None:
            raise ValueError(f"tokenizer of {lm.name} has no mask token")
        self.lm, self.mode, self.batch_tokens = lm, mode, batch_tokens
        self.scoring = "mlm-independent" if mode == "independent" else "mlm-pll"
        self._split = lm_head_split(lm.model) if split_head else None

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        slots = tokenize_slots(self.lm.tokenizer, queries)
        return self.score_slots(slots)

    def score_slots(self, slots: Sequence[SlotTokens]) -> list[tuple[float, ...]]:
        import torch

        tok = self.lm.tokenizer
        wrap = special_wrap(tok)
        passes, counts = plan_passes(slots, self.mode, tok.mask_token_id, wrap.head, wrap.tail)
        device = self.lm.device
        sums = torch.zeros(len(counts), dtype=torch.float64, device=device)
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        with torch.inference_mode():
            for batch in token_budget_batches([len(p.ids) for p in passes], self.batch_tokens):
                chosen = [passes[i] for i in batch]
                ids, mask = pad_right([p.ids for p in chosen], pad_id)
                rows, cols, read_index, tokens, cands = [], [], [], [], []
                for r, p in enumerate(chosen):
                    base = len(rows)
                    rows.extend([r] * len(p.positions))
                    cols.extend(p.positions)
                    for pi, token, cand in p.targets:
                        read_index.append(base + pi)
                        tokens.append(token)
                        cands.append(cand)
                logits = self._logits_at(ids.to(device), mask.to(device), torch.tensor(rows, device=device),
                                         torch.tensor(cols, device=device))
                logp = torch.log_softmax(logits.float(), dim=-1)
                values = logp[torch.tensor(read_index, device=device), torch.tensor(tokens, device=device)]
                sums.index_add_(0, torch.tensor(cands, device=device), values.double())
        means = sums.cpu().tolist()
        out: list[tuple[float, ...]] = []
        g = 0
        for slot in slots:
            n = len(slot.candidates)
            out.append(tuple(means[g + i] / counts[g + i] if counts[g + i] else float("-inf") for i in range(n)))
            g += n
        return out

    def _logits_at(self, ids, mask, rows, cols):
        if self._split is not None:
            base, head = self._split
            hidden = base(input_ids=ids, attention_mask=mask)[0]
            return head(hidden[rows, cols])
        return self.lm.model(input_ids=ids, attention_mask=mask).logits[rows, cols]
