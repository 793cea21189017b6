"""Reference implementations of the anchors' algorithms, kept slow on purpose.

They compute the SAME scoring rules as ``factatlas.probe.mlm`` the way the published code does, so that
tests can check our fast scorers rank identically and ``benchmarks/probe_speed.py`` can measure the
speed-up on identical inputs:

- ``bmlama_pll_scores``: BMLAMA's loop — one forward pass per candidate token, batch size 1, fp32,
  autograd on, a NumPy softmax over the whole vocabulary per scored token, the prompt re-tokenized for
  every candidate.
- ``mlama_independent_scores``: mLAMA's loop — 4 prompts per batch, one pass per mask count from 1 to
  the largest count in the batch (including counts no candidate needs), the full-vocabulary
  log-softmax for every position copied to the host, the candidate tokens read there.

They apply the same tokenization RULE as our scorers (a candidate is tokenized in context, as
``left + form``; the prefix is cut back where a candidate merges with it) but implement it on their own,
one query at a time through the tokenizer's public ``__call__``:
a bug in ``factatlas.probe.slots`` (its filler cache, its batching, its special-token probe) then makes
the equality tests fail instead of cancelling out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from factatlas.probe.models import LoadedModel
from factatlas.probe.protocol import ClozeQuery


@dataclass(frozen=True)
class ReferenceSlot:
    prefix: list[int]
    candidates: list[list[int]]
    suffix: list[int]


def reference_slot(tok, q: ClozeQuery) -> ReferenceSlot:
    """The in-context tokenization rule, written plainly: every ``left + form`` tokenized whole."""

    def ids(text: str) -> list[int]:
        return list(tok(text, add_special_tokens=False)["input_ids"])

    left = ids(q.left.rstrip())
    with_forms = [ids(q.left + form) for form in q.forms]
    cut = len(left)
    for full in with_forms:
        same = 0
        while same < min(len(left), len(full)) and left[same] == full[same]:
            same += 1
        cut = min(cut, same, max(len(full) - 1, 0))  # every candidate keeps at least one token
    candidates = [full[cut:] for full in with_forms]
    whole = ids(q.left + q.forms[0] + q.right)
    head = left[:cut] + candidates[0]
    suffix = whole[len(head):] if whole[:len(head)] == head else ids(q.right)
    return ReferenceSlot(left[:cut], candidates, suffix)


def _specials(tok) -> tuple[list[int], list[int]]:
    """(ids the tokenizer puts before a text, ids it puts after): found around the text "a"."""
    bare = list(tok("a", add_special_tokens=False)["input_ids"])
    full = list(tok("a", add_special_tokens=True)["input_ids"])
    at = next(i for i in range(len(full) - len(bare) + 1) if full[i:i + len(bare)] == bare)
    return full[:at], full[at + len(bare):]


def with_specials(tok, ids: list[int]) -> list[int]:
    """``ids`` with the model's special tokens ([CLS] ... [SEP], ... </s>), as the tokenizer adds them."""
    head, tail = _specials(tok)
    return [*head, *ids, *tail]


def specials_before(tok) -> int:
    """How many special tokens the tokenizer puts before a text."""
    return len(_specials(tok)[0])


def bmlama_pll_scores(lm: LoadedModel, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
    """Left-to-right rule, one candidate at a time, one pass per candidate token."""
    import torch

    tok, model = lm.tokenizer, lm.model
    mask_id = tok.mask_token_id
    out = []
    with torch.enable_grad():
        for q in queries:
            scores = []
            for ci in range(len(q.forms)):
                slot = reference_slot(tok, q)  # re-tokenized in the loop, as the original does
                cand = slot.candidates[ci]
                start = specials_before(tok) + len(slot.prefix)
                logps = []
                for j in range(len(cand)):
                    ids = with_specials(tok, [*slot.prefix, *cand[:j], *([mask_id] * (len(cand) - j)), *slot.suffix])
                    logits = model(input_ids=torch.tensor([ids], device=lm.device)).logits
                    row = logits[0, start + j].detach().float().cpu().numpy().astype(np.float64)
                    probs = np.exp(row - row.max())
                    probs = probs / probs.sum()
                    logps.append(float(np.log(probs[cand[j]])))
                scores.append(float(np.mean(logps)) if logps else float("-inf"))
            out.append(tuple(scores))
    return out


def mlama_independent_scores(lm: LoadedModel, queries: Sequence[ClozeQuery], batch_size: int = 4
                             ) -> list[tuple[float, ...]]:
    """Independent-mask rule, mLAMA's batching: every mask count up to the batch maximum."""
    import torch

    from factatlas.probe.batching import pad_right

    tok, model = lm.tokenizer, lm.model
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    out: list[tuple[float, ...]] = []
    with torch.no_grad():
        for b in range(0, len(queries), batch_size):
            batch = queries[b: b + batch_size]
            slots = [reference_slot(tok, q) for q in batch]
            max_k = max(len(c) for s in slots for c in s.candidates)
            scores = [[0.0] * len(s.candidates) for s in slots]
            for k in range(1, max_k + 1):
                rows = [with_specials(tok, [*s.prefix, *([tok.mask_token_id] * k), *s.suffix]) for s in slots]
                ids, mask = pad_right(rows, pad_id)
                logits = model(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device)).logits
                log_probs = torch.log_softmax(logits.float(), dim=-1).cpu().numpy()  # full vocab, every position
                for r, s in enumerate(slots):
                    start = specials_before(tok) + len(s.prefix)
                    for ci, cand in enumerate(s.candidates):
                        if len(cand) == k:
                            scores[r][ci] = float(np.mean([log_probs[r, start + j, t] for j, t in enumerate(cand)]))
            out.extend(tuple(s) for s in scores)
    return out


def causal_per_candidate_scores(lm: LoadedModel, queries: Sequence[ClozeQuery], reduce: str = "mean",
                                include_remainder: bool = False) -> list[tuple[float, ...]]:
    """BMLAMA's decoder-only loop for the continuation rule: the prompt recomputed for every candidate."""
    import torch

    from factatlas.probe.causal import context_start

    tok, model = lm.tokenizer, lm.model
    out = []
    with torch.no_grad():
        for q in queries:
            slot = reference_slot(tok, q)
            ctx = context_start(tok, tuple(slot.prefix))
            scores = []
            for cand in slot.candidates:
                cont = list(cand) + (list(slot.suffix) if include_remainder else [])
                ids = torch.tensor([ctx + cont], device=lm.device)
                logp = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)
                picked = [float(logp[len(ctx) - 1 + j, t]) for j, t in enumerate(cont)]
                total = float(np.sum(picked))
                scores.append(total / len(cont) if reduce == "mean" else total)
            out.append(tuple(scores))
    return out


def seq2seq_per_candidate_scores(lm: LoadedModel, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
    """BMLAMA's mT5 loop: encoder and decoder rerun for every candidate, batch size 1."""
    import torch

    from factatlas.probe.seq2seq import sentinel_ids

    tok, model = lm.tokenizer, lm.model
    s0, s1 = sentinel_ids(tok)
    out = []
    with torch.no_grad():
        for q in queries:
            slot = reference_slot(tok, q)
            enc = torch.tensor([with_specials(tok, [*slot.prefix, s0, *slot.suffix])], device=lm.device)
            scores = []
            for cand in slot.candidates:
                labels = torch.tensor([[s0, *cand, s1]], device=lm.device)
                logits = model(input_ids=enc, labels=labels).logits[0]
                logp = torch.log_softmax(logits.float(), dim=-1)
                scores.append(float(np.mean([float(logp[j, t]) for j, t in enumerate(labels[0].tolist())])))
            out.append(tuple(scores))
    return out
