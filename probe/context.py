"""The model's context: how many positions an input may take, and the refusal of inputs that need more.

A model with learned absolute positions (BERT, GPT-2, XLM-R, BART, ...) fails with ``IndexError: index
out of range in self`` deep in its position embedding when an input is longer than its table; models
with rotary positions (Llama, Qwen) do not fail but were never trained past it. Every scorer therefore
compares what each input needs (prompt tokens + candidate tokens, or + the new tokens a generator may
add) with the model's limit *before* its forward pass and refuses with the numbers. Models with relative
positions (T5, mT5) record no limit: nothing is checked there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from factatlas.errors import ConfigError

# config fields that bound the positions, in the order transformers' architectures use them
LIMIT_FIELDS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "n_ctx")
# RoBERTa-style embeddings number positions from padding_idx + 1: the table holds pad + 1 fewer inputs
OFFSET_POSITIONS = frozenset({"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "data2vec-text",
                              "roberta-prelayernorm", "xmod", "mpnet"})
RELATIVE_POSITIONS = frozenset({"t5", "mt5", "umt5", "longt5", "byt5"})


@dataclass(frozen=True, slots=True)
class ContextLimit:
    positions: int  # the most positions one input may take
    source: str  # where it comes from, e.g. "config.n_positions = 128"


class ContextTooLong(ConfigError):
    """Inputs that need more positions than the model has; raised before any forward pass."""


def context_limit(config: Any) -> ContextLimit | None:
    """The positions one input may take, from a transformers config; None when the model has no such bound."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    model_type = getattr(text, "model_type", "") or ""
    if model_type in RELATIVE_POSITIONS:
        return None
    for name in LIMIT_FIELDS:
        value = getattr(text, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            if model_type in OFFSET_POSITIONS:
                pad = getattr(text, "pad_token_id", None)
                offset = (pad if isinstance(pad, int) else 1) + 1
                return ContextLimit(value - offset, f"config.{name} = {value}, less {offset} reserved by "
                                                    f"{model_type}'s padding offset")
            return ContextLimit(value, f"config.{name} = {value}")
    return None


@dataclass(frozen=True, slots=True)
class Need:
    """What one input takes: ``positions`` in all, and how that sum is made, for the message."""

    positions: int
    what: str | Callable[[], str]  # e.g. "prompt 'The capital of ...' (120 prompt tokens + 16 new tokens)";
    # a callable is asked only for the input the message names


def refuse_overlong(needs: Sequence[Need], limit: ContextLimit | None, model: str, fix: str,
                    total: int | None = None) -> None:
    """Raise ``ContextTooLong`` when any input needs more positions than ``limit``: how many (of ``total``,
    default all of ``needs``), the longest with its numbers, the limit and where it comes from, and ``fix``."""
    if limit is None:
        return
    over = [n for n in needs if n.positions > limit.positions]
    if not over:
        return
    worst = max(over, key=lambda n: n.positions)
    what = worst.what() if callable(worst.what) else worst.what
    raise ContextTooLong(f"{len(over)} of {total if total is not None else len(needs)} inputs do not fit the context of model {model}: the longest, "
                         f"{what}, needs {worst.positions} positions, the model has {limit.positions} "
                         f"({limit.source}); nothing was scored. {fix}")


def short(text: str, width: int = 60) -> str:
    """A prompt as a message quotes it: one line, at most ``width`` characters."""
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def model_limit(lm: Any) -> ContextLimit | None:
    """The limit of a loaded model (``LoadedModel``), None for one without a config."""
    config = getattr(getattr(lm, "model", None), "config", None)
    return context_limit(config) if config is not None else None


CANDIDATE_FIX = ("Drop the longest prompts or candidates from the benchmark (--langs, a template), or use a model "
                 "with a longer context.")
GENERATION_FIX = ("Lower --max-new-tokens, use fewer --shots or a shorter --system-prompt, or use a model with a "
                  "longer context.")


def slot_needs(slots: Sequence[Any], texts: Sequence[str], head: int, tail: int, with_suffix: bool = True) -> list[Need]:
    """Per prompt, its longest candidate in place: ``head`` specials + prefix + candidate (+ suffix) + ``tail``."""
    needs = []
    for slot, text in zip(slots, texts, strict=True):
        prompt = head + len(slot.prefix) + (len(slot.suffix) if with_suffix else 0) + tail
        longest = max((len(c) for c in slot.candidates), default=0)
        needs.append(Need(prompt + longest, f"prompt {short(text)} ({prompt} prompt tokens + {longest} tokens of "
                                            "its longest candidate)"))
    return needs


def generation_needs(encoded: Sequence[Sequence[int]], new_tokens: int, describe) -> list[Need]:
    """Per input, its tokens + the new tokens a causal generator may add, but the last, which is only
    predicted, never read; ``describe(i)`` names input i."""
    return [Need(len(e) + new_tokens - 1, lambda i=i, e=e: f"{describe(i)} ({len(e)} prompt tokens + {new_tokens} "
                                                         "new tokens, the last only predicted)")
            for i, e in enumerate(encoded)]


def text_bound(text: str) -> int:
    """More tokens than any tokenizer makes of ``text``: a token covers at least one UTF-8 byte (byte-level
    BPE, byte fallback) or one character (WordPiece, sentencepiece), doubled for normalisations that
    expand a character, plus a few for a leading word marker and special tokens."""
    return 2 * len(text.encode("utf-8")) + 8


def check_before_scoring(items: Sequence[Any], bound: Callable[[Any], int], needs: Callable[[Sequence[Any]], list[Need]],
                         lm: Any, fix: str) -> None:
    """The whole run's inputs checked before the first forward pass: only those whose cheap ``bound`` is
    past the limit are tokenized (``needs``), so a model with a long context costs no second tokenization."""
    limit = model_limit(lm)
    if limit is None:
        return
    suspects = [x for x in items if bound(x) > limit.positions]
    if suspects:
        refuse_overlong(needs(suspects), limit, lm.name, fix, total=len(items))


def cloze_bound(query: Any) -> int:
    """``text_bound`` of a cloze query filled with its longest candidate (by bytes)."""
    longest = max(query.forms, key=lambda f: len(f.encode("utf-8")), default="")
    return text_bound(query.left + longest + query.right)


def check_queries(scorer: Any, queries: Sequence[Any]) -> None:
    """A ranking scorer's whole run (its ``context_needs``) checked before the first forward pass."""
    check_before_scoring(queries, cloze_bound, scorer.context_needs, scorer.lm, CANDIDATE_FIX)
