"""Candidate tokenization in context: the same token ids every scorer (and every baseline) uses.

Subword tokenizers depend on the preceding text (BPE's leading-space tokens, sentencepiece's ``▁``), so a
candidate is tokenized as part of ``left + form`` and its ids are what follows the prompt prefix. The
prefix is shared by all candidates of a prompt: where a candidate merges with the last prefix token
(no space before the slot), the prefix is cut back to the longest prefix common to every candidate and
the merged piece counts as part of the candidate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from factatlas.probe.protocol import ANSWER_MARKER, ClozeQuery


@dataclass(frozen=True, slots=True)
class SlotTokens:
    """Token ids of one prompt split around the answer slot (no special tokens)."""

    prefix: tuple[int, ...]
    candidates: tuple[tuple[int, ...], ...]  # parallel to the query's forms; never empty
    suffix: tuple[int, ...]  # the template's remainder after the slot, tokenized after the first candidate


@dataclass(frozen=True, slots=True)
class SpecialWrap:
    """What the tokenizer adds around a text: ``head + ids + tail`` ([CLS] ... [SEP], <s> ... </s>, ...)."""

    head: tuple[int, ...]
    tail: tuple[int, ...]

    def wrap(self, ids: Sequence[int]) -> list[int]:
        return [*self.head, *ids, *self.tail]


def special_wrap(tokenizer) -> SpecialWrap:
    return _special_wrap_cached(_TokenizerKey(tokenizer))


class _TokenizerKey:
    """Hashable by identity so tokenizer-derived facts can be cached."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __hash__(self) -> int:
        return id(self.tokenizer)

    def __eq__(self, other) -> bool:
        return isinstance(other, _TokenizerKey) and other.tokenizer is self.tokenizer


@lru_cache(maxsize=32)
def _special_wrap_cached(key: _TokenizerKey) -> SpecialWrap:
    tok = key.tokenizer
    probe = "a b"
    bare = tok(probe, add_special_tokens=False)["input_ids"]
    full = tok(probe, add_special_tokens=True)["input_ids"]
    for start in range(len(full) - len(bare) + 1):
        if full[start: start + len(bare)] == bare:
            return SpecialWrap(tuple(full[:start]), tuple(full[start + len(bare):]))
    return SpecialWrap((), ())


def _common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def tokenize_slots(tokenizer, queries: Sequence[ClozeQuery]) -> list[SlotTokens]:
    """In-context token ids for every query and candidate (batched through the fast tokenizer).

    Fillers after whitespace (or at the very start) are tokenized once per distinct (whitespace, form)
    and reused across prompts — the pre-tokenizers of BERT, BPE and sentencepiece models split at
    whitespace, so a word's ids do not depend on the words before it. That shortcut is checked against
    the exact per-prompt tokenization on a sample of the queries and dropped for the whole call when any
    of them differs (a tokenizer that merges across spaces).
    """
    queries = list(queries)
    if not queries:
        return []
    fast = _fast_slots(tokenizer, queries)
    if fast is not None:
        sample = _sample_indices(len(queries))
        exact = _exact_slots(tokenizer, [queries[i] for i in sample])
        if all(fast[i] == e for i, e in zip(sample, exact, strict=True)):
            return fast
    return _exact_slots(tokenizer, queries)


def _sample_indices(n: int, k: int = 24) -> list[int]:
    if n <= k:
        return list(range(n))
    step = n / k
    return sorted({int(i * step) for i in range(k)} | {n - 1})


def _fast_slots(tokenizer, queries: Sequence[ClozeQuery]) -> list[SlotTokens] | None:
    """Slots with cached filler ids; None when no query has whitespace (or nothing) before its slot.

    Candidate lists repeat across prompts (DLAMA-style benchmarks give every prompt of a predicate and
    language the same list), so the ids of a list are looked up once per distinct (whitespace, list)."""
    lefts = [q.left for q in queries]
    cacheable = [left == "" or left[-1].isspace() for left in lefts]
    if not any(cacheable):
        return None
    anchor = "a"
    anchor_ids = _encode(tokenizer, [anchor])[0]
    # per query its whitespace before the slot (None: not cacheable); per whitespace the forms it fills
    spaces = [left[len(left.rstrip()):] if ok else None for left, ok in zip(lefts, cacheable, strict=True)]
    lists = dict.fromkeys((ws, q.forms) for ws, q in zip(spaces, queries, strict=True) if ws is not None)
    forms_after: dict[str, dict[str, None]] = {}
    for ws, forms in lists:
        forms_after.setdefault(ws, {}).update(dict.fromkeys(forms))
    keys = [(ws, form) for ws, forms in forms_after.items() for form in forms]
    texts = [form if ws == "" else anchor + ws + form for ws, form in keys]
    cache: dict[str, dict[str, tuple[int, ...]]] = {ws: {} for ws in forms_after}
    for (ws, form), ids in zip(keys, _encode(tokenizer, texts), strict=True):
        if ws:
            if ids[: len(anchor_ids)] != anchor_ids:
                return None
            ids = ids[len(anchor_ids):]
        cache[ws][form] = tuple(ids)
    candidates_of = {(ws, forms): tuple(map(cache[ws].__getitem__, forms)) for ws, forms in lists}
    if any(() in candidates for candidates in candidates_of.values()):
        return None
    slow = [q for q, ok in zip(queries, cacheable, strict=True) if not ok]
    slow_slots = iter(_exact_slots(tokenizer, slow))
    fast = [i for i, ok in enumerate(cacheable) if ok]
    encoded = _encode(tokenizer, [lefts[i].rstrip() for i in fast]
                      + [lefts[i] + queries[i].forms[0] + queries[i].text[len(lefts[i]) + len(ANSWER_MARKER):]
                         for i in fast])
    n = len(fast)
    out: list[SlotTokens] = []
    fi = 0
    for q, ws in zip(queries, spaces, strict=True):
        if ws is None:
            out.append(next(slow_slots))
            continue
        prefix = tuple(encoded[fi])
        candidates = candidates_of[(ws, q.forms)]
        full = encoded[n + fi]
        head = len(prefix) + len(candidates[0])
        if tuple(full[:head]) == prefix + candidates[0]:
            suffix = tuple(full[head:])
        else:
            suffix = tuple(_encode(tokenizer, [q.right])[0])
        out.append(SlotTokens(prefix, candidates, suffix))
        fi += 1
    return out


def _exact_slots(tokenizer, queries: Sequence[ClozeQuery]) -> list[SlotTokens]:
    """Every ``left + form`` tokenized as a whole: the reference the cached path must reproduce."""
    if not queries:
        return []
    lefts = [q.left.rstrip() for q in queries]
    texts: list[str] = []
    for q in queries:
        texts.extend(q.left + form for form in q.forms)
    texts.extend(q.left + q.forms[0] + q.right for q in queries)
    encoded = _encode(tokenizer, lefts + texts)
    left_ids, rest = encoded[: len(queries)], encoded[len(queries):]
    out: list[SlotTokens] = []
    pos = 0
    n_cand = sum(len(q.forms) for q in queries)
    for qi, q in enumerate(queries):
        with_forms = rest[pos: pos + len(q.forms)]
        pos += len(q.forms)
        prefix = left_ids[qi]
        cut = len(prefix)
        for ids in with_forms:
            cut = min(cut, _common_prefix_length(prefix, ids))
        # Every candidate keeps at least one token: a form swallowed by the prefix would be unscorable.
        for ids in with_forms:
            cut = min(cut, max(len(ids) - 1, 0))
        prefix_ids = tuple(prefix[:cut])
        candidates = tuple(tuple(ids[cut:]) for ids in with_forms)
        full = rest[n_cand + qi]
        head = len(prefix_ids) + len(candidates[0])
        if tuple(full[:head]) == prefix_ids + candidates[0]:
            suffix = tuple(full[head:])
        else:
            suffix = tuple(_encode(tokenizer, [q.right])[0])
        out.append(SlotTokens(prefix_ids, candidates, suffix))
    return out


def _encode(tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Token ids without special tokens; straight through the Rust tokenizer when there is one (the
    Python-side conversion of transformers' batch encoding costs as much as the tokenization itself)."""
    if not texts:
        return []
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is not None and hasattr(backend, "encode_batch"):
        return [e.ids for e in backend.encode_batch(list(texts), add_special_tokens=False)]
    return tokenizer(list(texts), add_special_tokens=False)["input_ids"]
