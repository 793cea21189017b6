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

from factatlas.probe.protocol import ClozeQuery


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
    """In-context token ids for every query and candidate (batched through the fast tokenizer)."""
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
    if not texts:
        return []
    return tokenizer(list(texts), add_special_tokens=False)["input_ids"]
