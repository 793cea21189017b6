"""Causal-LM candidate scoring: the prompt prefix runs once, candidates continue from its KV cache.

Prompts are grouped by prefix length, so a batch of prefixes needs no padding (and no attention-mask or
position-id bookkeeping that differs between architectures). The prefix pass keeps only the last
position's logits (the first candidate token's distribution) and its KV cache; the cache rows are then
selected once per candidate and all candidates of the batch continue in one pass, right-padded (padding
after the real tokens cannot affect them under causal attention). Only the positions that predict a
scored token are projected onto the vocabulary (``logits_to_keep``), and log-probs are gathered on the
device.

Rules: ``mean`` / ``sum`` of log p(candidate tokens | prefix), optionally also the template's remainder
after the slot (``include_remainder``). ``causal-sentence-legacy`` is BMLAMA's whole-sentence score:
minus the mean NLL over every predicted token of the filled sentence, tokenized with the tokenizer's
own special tokens (what ``model(ids, labels=ids).loss`` computes in its code).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from factatlas.probe.batching import greedy_batches, pad_right
from factatlas.probe.models import LoadedModel
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import SlotTokens, special_wrap, tokenize_slots
from factatlas.probe.threads import torch_threads

REDUCTIONS = ("mean", "sum")
LOGIT_BUDGET = 1 << 26  # vocabulary logits (floats) kept alive in one pass


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
                 batch_tokens: int = 8192):
        if lm.family != "causal":
            raise ValueError(f"CausalLMScorer needs a causal LM, got a {lm.family} model")
        if reduce not in REDUCTIONS:
            raise ValueError(f"unknown reduction '{reduce}'; expected one of {REDUCTIONS}")
        self.lm, self.reduce, self.include_remainder, self.batch_tokens = lm, reduce, include_remainder, batch_tokens
        self.scoring = f"causal-{reduce}" + ("+remainder" if include_remainder else "")
        self._keep_ok = "logits_to_keep" in inspect.signature(lm.model.forward).parameters

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        return self.score_slots(tokenize_slots(self.lm.tokenizer, queries))

    def _continuation(self, slot: SlotTokens, ci: int) -> tuple[int, ...]:
        return slot.candidates[ci] + (slot.suffix if self.include_remainder else ())

    def score_slots(self, slots: Sequence[SlotTokens]) -> list[tuple[float, ...]]:
        tok = self.lm.tokenizer
        contexts = [context_start(tok, s.prefix) for s in slots]
        conts = [[self._continuation(s, ci) for ci in range(len(s.candidates))] for s in slots]
        with torch_threads(self.lm.model, self.lm.device):
            totals, _ = continuation_sums(self.lm, contexts, conts, self.batch_tokens, self._keep_ok)
        if self.reduce == "mean":
            return [tuple(t / max(len(c), 1) for t, c in zip(ts, cs, strict=True)) for ts, cs in zip(totals, conts, strict=True)]
        return [tuple(ts) for ts in totals]


def continuation_sums(lm: LoadedModel, contexts: Sequence[Sequence[int]], conts: Sequence[Sequence[Sequence[int]]],
                      batch_tokens: int, keep_ok: bool, with_context: bool = False
                      ) -> tuple[list[list[float]], list[float]]:
    """Per prompt i and continuation c: sum of log p(c | contexts[i]) (-inf for an empty one); with
    ``with_context`` also per prompt the sum of log p(context token t | context tokens before t), t >= 1,
    read from the same prefix pass (the whole-sentence rule needs it; the continuation rules do not)."""
    import torch

    tok, model, device = lm.tokenizer, lm.model, lm.device
    vocab = model.get_output_embeddings().weight.shape[0] if model.get_output_embeddings() is not None else 1
    costs = []
    for ctx, cs in zip(contexts, conts, strict=True):
        width = max(len(c) for c in cs)
        kept = (len(ctx) if with_context else 1) + sum(len(c) for c in cs)
        costs.append((len(ctx) + len(cs) * (len(ctx) + width), kept * vocab))
    order = sorted(range(len(contexts)), key=lambda i: (len(contexts[i]), -max(len(c) for c in conts[i])))
    batches = []
    for group in _runs(order, key=lambda i: len(contexts[i])):
        batches.extend(greedy_batches(group, costs, (batch_tokens, LOGIT_BUDGET)))
    totals: list[list[float]] = [[0.0] * len(cs) for cs in conts]
    context_sums = [0.0] * len(contexts)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
    with torch.inference_mode():
        for batch in batches:
            ctx = torch.tensor([contexts[i] for i in batch], device=device)
            kwargs = {"logits_to_keep": 1} if keep_ok and not with_context else {}
            out = model(input_ids=ctx, attention_mask=torch.ones_like(ctx), use_cache=True, **kwargs)
            first = torch.log_softmax(out.logits[:, -1].float(), dim=-1)
            if with_context and ctx.shape[1] > 1:
                inner = torch.log_softmax(out.logits[:, :-1].float(), dim=-1)
                picked = inner.gather(-1, ctx[:, 1:, None])[..., 0].double().sum(dim=1)
                for i, total in zip(batch, picked.cpu().tolist(), strict=True):
                    context_sums[i] = total
            row_prompt, row_cand, rows = [], [], []
            for b, i in enumerate(batch):
                for ci, c in enumerate(conts[i]):
                    row_prompt.append(b)
                    row_cand.append((i, ci))
                    rows.append(c)
            first_tokens = torch.tensor([r[0] if r else 0 for r in rows], device=device)
            prompt_index = torch.tensor(row_prompt, device=device)
            row_sums = first[prompt_index, first_tokens].double()
            width = max(len(r) for r in rows)
            if width > 1:
                ids, _ = pad_right([r[:-1] for r in rows], pad_id)
                keep = torch.zeros(ids.shape, dtype=torch.bool)
                for r, cont in enumerate(rows):
                    keep[r, : len(cont) - 1] = True
                cache = out.past_key_values
                cache.batch_select_indices(prompt_index)
                # Padding sits after every real token, so it cannot reach them; the mask says so anyway.
                attention = torch.zeros((len(rows), ctx.shape[1] + ids.shape[1]), dtype=torch.long)
                attention[:, : ctx.shape[1]] = 1
                for r, cont in enumerate(rows):
                    attention[r, ctx.shape[1]: ctx.shape[1] + len(cont) - 1] = 1
                extra = {"logits_to_keep": keep.to(device)} if keep_ok else {}
                logits = model(input_ids=ids.to(device), attention_mask=attention.to(device),
                               past_key_values=cache, use_cache=True, **extra).logits
                if not keep_ok:
                    logits = logits[keep.to(device)]
                logp = torch.log_softmax(logits.float(), dim=-1)
                kept_rows = keep.nonzero()[:, 0]
                next_tokens = torch.tensor([t for cont in rows for t in cont[1:]], device=device)
                row_sums.index_add_(0, kept_rows.to(device),
                                    logp[torch.arange(len(next_tokens), device=device), next_tokens].double())
            sums = row_sums.cpu().tolist()
            for (i, ci), total, cont in zip(row_cand, sums, rows, strict=True):
                totals[i][ci] = total if cont else float("-inf")
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


class SentenceLegacyScorer:
    """BMLAMA's causal score: minus the mean NLL of the whole filled sentence, batched across candidates."""

    scoring = "causal-sentence-legacy"

    def __init__(self, lm: LoadedModel, batch_tokens: int = 8192):
        if lm.family != "causal":
            raise ValueError(f"SentenceLegacyScorer needs a causal LM, got a {lm.family} model")
        self.lm, self.batch_tokens = lm, batch_tokens
        self._keep_ok = "logits_to_keep" in inspect.signature(lm.model.forward).parameters

    def sentences(self, queries: Sequence[ClozeQuery]) -> list[list[list[int]]]:
        tok = self.lm.tokenizer
        texts = [q.left + form + q.right for q in queries for form in q.forms]
        ids = tok(texts, add_special_tokens=True)["input_ids"] if texts else []
        out, pos = [], 0
        for q in queries:
            out.append(ids[pos: pos + len(q.forms)])
            pos += len(q.forms)
        return out

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        """The filled sentences of a prompt share their first tokens (the template before the slot): that
        prefix runs once per prompt, its own tokens' log-probs are read from that pass, and the candidates
        continue from its KV cache. Same sum, same count of predicted tokens as the whole-sentence loss."""
        per_query = self.sentences(queries)
        scores = [[float("-inf")] * len(ss) for ss in per_query]
        shared, whole = [], []
        for qi, ss in enumerate(per_query):
            # keep one token after the prefix in every sentence: it carries the first candidate-dependent
            # prediction (from the prefix's last position)
            cut = min(_common_prefix(ss), min(len(x) for x in ss) - 1)
            (shared if cut >= 1 else whole).append((qi, cut))
        with torch_threads(self.lm.model, self.lm.device):
            if shared:
                contexts = [per_query[qi][0][:cut] for qi, cut in shared]
                conts = [[x[cut:] for x in per_query[qi]] for qi, cut in shared]
                totals, inner = continuation_sums(self.lm, contexts, conts, self.batch_tokens, self._keep_ok,
                                                  with_context=True)
                for k, (qi, _) in enumerate(shared):
                    for ci, x in enumerate(per_query[qi]):
                        scores[qi][ci] = (inner[k] + totals[k][ci]) / (len(x) - 1)
            self._whole_sentences(per_query, [qi for qi, _ in whole], scores)
        return [tuple(s) for s in scores]

    def _whole_sentences(self, per_query: list[list[list[int]]], which: Sequence[int],
                         scores: list[list[float]]) -> None:
        """Prompts whose sentences share no token (a slot that opens the sentence, no BOS): every
        sentence in full, batched across candidates."""
        import torch

        tok, model, device = self.lm.tokenizer, self.lm.model, self.lm.device
        flat = [(qi, ci, s) for qi in which for ci, s in enumerate(per_query[qi])]
        if not flat:
            return
        vocab = model.get_output_embeddings().weight.shape[0] if model.get_output_embeddings() is not None else 1
        costs = [(len(s), len(s) * vocab) for _, _, s in flat]
        order = sorted(range(len(flat)), key=lambda i: -len(flat[i][2]))
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        with torch.inference_mode():
            for batch in greedy_batches(order, costs, (self.batch_tokens, LOGIT_BUDGET)):
                rows = [flat[i][2] for i in batch]
                ids, mask = pad_right(rows, pad_id)
                keep = torch.zeros(ids.shape, dtype=torch.bool)
                for r, s in enumerate(rows):
                    keep[r, : max(len(s) - 1, 0)] = True
                if not keep.any():
                    continue
                ids, mask = ids.to(device), mask.to(device)
                if self._keep_ok:
                    logits = model(input_ids=ids, attention_mask=mask, logits_to_keep=keep.to(device)).logits
                else:
                    logits = model(input_ids=ids, attention_mask=mask).logits[keep.to(device)]
                logp = torch.log_softmax(logits.float(), dim=-1)
                targets = torch.tensor([t for s in rows for t in s[1:]], device=device)
                picked = logp[torch.arange(len(targets), device=device), targets].double()
                sums = torch.zeros(len(rows), dtype=torch.float64, device=device)
                sums.index_add_(0, keep.nonzero()[:, 0].to(device), picked)
                for i, total in zip(batch, sums.cpu().tolist(), strict=True):
                    qi, ci, s = flat[i]
                    if len(s) > 1:
                        scores[qi][ci] = total / (len(s) - 1)


def _common_prefix(rows: Sequence[Sequence[int]]) -> int:
    """Length of the longest token prefix all rows share."""
    first = rows[0]
    n = min(len(r) for r in rows)
    for j in range(n):
        t = first[j]
        if any(r[j] != t for r in rows):
            return j
    return n
