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

from collections.abc import Sequence
from dataclasses import dataclass

from factatlas.probe.batching import greedy_batches, long_tensor, on_device, pad_right
from factatlas.probe.causal_cache import _cached_sums, cache_argument
from factatlas.probe.causal_head import (
    HEAD_CHUNK,
    LOGIT_BUDGET,
    LogitKeeping,
    _vocab_size,
    chunked_target_log_probs,
    forward_accepts,
    head_split,
    logit_keeping,
)
from factatlas.probe.causal_packed import (
    PackedBatch,
    _packed_sums,
    packed_batch,
    packed_batches,
    packed_groups,
    packed_inputs,
    packed_lengths,
    packs,
    plan_packed,
)
from factatlas.probe.models import LoadedModel
from factatlas.probe.normaliser import fused_normaliser, target_log_probs
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import SlotTokens, special_wrap, tokenize_slots
from factatlas.probe.threads import torch_threads

# the pieces of the two paths, importable from here as before
__all__ = ["HEAD_CHUNK", "LOGIT_BUDGET", "REDUCTIONS", "CausalLMScorer", "LogitKeeping", "PackedBatch",
           "SentenceLegacyScorer", "bos_ids", "cache_argument", "chunked_target_log_probs", "context_start",
           "continuation_sums", "forward_accepts", "head_split", "logit_keeping", "packed_batch", "packed_batches",
           "packed_groups", "packed_inputs", "packed_lengths", "packs", "plan_packed", "shared_prefixes"]


REDUCTIONS = ("mean", "sum")


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


@dataclass(frozen=True)
class Continuations:
    """A chunk's host work for ``CausalLMScorer.run``: per prompt, the ids before the slot and the token
    sequences scored after them."""

    contexts: list[list[int]]
    continuations: list[list[tuple[int, ...]]]


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
        return self.run(self.prepare(queries))

    def prepare(self, queries: Sequence[ClozeQuery]) -> Continuations:
        """The host step of ``score``: the queries tokenized in context, checked against the model's context
        (``ContextTooLong`` before any forward pass), and their contexts and continuations."""
        from factatlas.probe.context import CANDIDATE_FIX, model_limit, refuse_overlong

        slots = tokenize_slots(self.lm.tokenizer, queries)
        refuse_overlong(self.context_needs(queries, slots), model_limit(self.lm), self.lm.name, CANDIDATE_FIX)
        return self.prepare_slots(slots)

    def prepare_slots(self, slots: Sequence[SlotTokens]) -> Continuations:
        """Per prompt its context ids and the continuations scored after them; no model call. The packed
        rows' arrays are made batch by batch inside ``run``: each holds a [rows, width, width] mask, too
        much to hold a whole chunk's of while another chunk runs."""
        return Continuations(*self.contexts_and_continuations(slots))

    def _continuation(self, slot: SlotTokens, ci: int) -> tuple[int, ...]:
        return slot.candidates[ci] + (slot.suffix if self.include_remainder else ())

    def contexts_and_continuations(self, slots: Sequence[SlotTokens]) -> tuple[list[list[int]], list[list[tuple[int, ...]]]]:
        """Per prompt, the ids before the slot and the token sequences scored after them."""
        contexts = [context_start(self.lm.tokenizer, s.prefix) for s in slots]
        return contexts, [[self._continuation(s, ci) for ci in range(len(s.candidates))] for s in slots]

    def score_slots(self, slots: Sequence[SlotTokens]) -> list[tuple[float, ...]]:
        return self.run(self.prepare_slots(slots))

    def run(self, prepared: Continuations) -> list[tuple[float, ...]]:
        """The model step: every continuation's log-probability sum, reduced per the rule."""
        contexts, conts = prepared.contexts, prepared.continuations
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


@dataclass(frozen=True)
class Sentences:
    """A chunk's host work for ``SentenceLegacyScorer.run``: per query its filled sentences' ids, the
    (query, prefix length) of those whose sentences share a prefix, the queries whose sentences share
    none, and the shared ones cut into context and continuations."""

    per_query: list[list[list[int]]]
    shared: list[tuple[int, int]]
    whole: list[int]
    split: Continuations


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
        return self.run(self.prepare(queries))

    def prepare(self, queries: Sequence[ClozeQuery]) -> Sentences:
        """The host step of ``score``: the filled sentences tokenized, checked against the model's context
        (``ContextTooLong`` before any forward pass) and split at their shared prefixes; no model call."""
        from factatlas.probe.context import CANDIDATE_FIX, model_limit, refuse_overlong

        per_query = self.sentences(queries)
        refuse_overlong(self.context_needs(queries, per_query), model_limit(self.lm), self.lm.name, CANDIDATE_FIX)
        shared, whole = shared_prefixes(per_query)
        return Sentences(per_query, shared, [qi for qi, _ in whole],
                         Continuations([per_query[qi][0][:cut] for qi, cut in shared],
                                       [[x[cut:] for x in per_query[qi]] for qi, cut in shared]))

    def run(self, prepared: Sentences) -> list[tuple[float, ...]]:
        """The model step: each sentence's mean log-probability, from its shared prefix's pass and its
        continuation, or whole."""
        per_query, shared = prepared.per_query, prepared.shared
        scores = [[float("-inf")] * len(ss) for ss in per_query]
        with torch_threads(self.lm.model, self.lm.device):
            if shared:
                totals, inner = continuation_sums(self.lm, prepared.split.contexts, prepared.split.continuations,
                                                  self.batch_tokens, self._keep, with_context=True,
                                                  packed=self.packed, head_chunk=self.head_chunk)
                for k, (qi, _) in enumerate(shared):
                    for ci, x in enumerate(per_query[qi]):
                        scores[qi][ci] = (inner[k] + totals[k][ci]) / (len(x) - 1)
            self._whole_sentences(per_query, prepared.whole, scores)
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
