"""Our own greedy decoding loop: left-padded batches, the model's KV cache, and rows that leave the batch.

Causal models: one forward over the left-padded prompts (attention mask, position ids as transformers'
``generate`` computes them: cumsum of the mask - 1, 0 on padding, only the last position's logits), then one
token per step with the cache. Seq2seq models: the encoder once, then the decoder one token per step with
its self- and cross-attention caches. A row that has ended (an end-of-sequence token, ``stopped``, or
``max_new_tokens``) leaves the batch: its rows of the cache, the mask, the positions and the encoder states
are dropped, so later steps compute only the rows still decoding. ``generate`` keeps finished rows in the
batch, padding them, until the last row ends, and runs its logits processors at every step; with none
configured (``greedy_changes``) its choices are ours token for token.

The model call is the I/O edge; what a row's tokens are is decided by ``argmax`` of the last position's
logits (as float32, as ``generate`` does), and when it ends by ``row_ended``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

# generation_config fields whose set values make ``generate`` change greedy choices (its logits processors),
# with the value that changes nothing
NEUTRAL_SETTINGS = (
    ("repetition_penalty", (None, 1.0)),
    ("encoder_repetition_penalty", (None, 1.0)),
    ("no_repeat_ngram_size", (None, 0)),
    ("encoder_no_repeat_ngram_size", (None, 0)),
    ("bad_words_ids", (None,)),
    ("min_length", (None, 0)),
    ("min_new_tokens", (None, 0)),
    ("forced_bos_token_id", (None,)),
    ("forced_eos_token_id", (None,)),
    ("suppress_tokens", (None,)),
    ("begin_suppress_tokens", (None,)),
    ("sequence_bias", (None,)),
    ("exponential_decay_length_penalty", (None,)),
    ("guidance_scale", (None, 1.0)),
    ("watermarking_config", (None,)),
    ("cache_implementation", (None, "dynamic")),
)


def greedy_changes(generation_config) -> list[str]:
    """The model's generation settings under which transformers' ``generate`` would choose other tokens
    than a plain argmax (``name=value``); empty when our loop gives its answers."""
    changes = []
    for name, neutral in NEUTRAL_SETTINGS:
        value = getattr(generation_config, name, None)
        if value in ((),  []) and None in neutral:
            continue
        if value not in neutral:
            changes.append(f"{name}={value!r}")
    return changes


def eos_ids_of(generation_config) -> frozenset[int]:
    """The end-of-sequence ids ``generate`` stops a row at (one id or a list; none: rows never end so)."""
    eos = getattr(generation_config, "eos_token_id", None)
    if eos is None:
        return frozenset()
    return frozenset([eos] if isinstance(eos, int) else eos)


@dataclass(frozen=True)
class Decoded:
    """Each row's new tokens (its end-of-sequence token kept, as ``generate`` keeps it), and how many rows
    each forward computed (the first: the prompts' forward)."""

    tokens: tuple[tuple[int, ...], ...]
    rows_per_step: tuple[int, ...]


def row_ended(token: int, new_tokens: int, max_new_tokens: int, eos_ids: frozenset[int]) -> bool:
    """Whether a row ends with ``token``, its ``new_tokens``-th: end of sequence, or the last allowed."""
    return token in eos_ids or new_tokens >= max_new_tokens


def initial_positions(mask):
    """Position ids of left-padded prompts, as ``generate`` computes them: 0 on padding, then 0, 1, ..."""
    return (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 0)


def accepts(model, argument: str) -> bool:
    import inspect

    return argument in inspect.signature(model.forward).parameters


def dynamic_cache(model):
    """The cache ``generate`` makes by default (per-layer kinds, e.g. sliding windows, from the config)."""
    from transformers import DynamicCache

    try:
        return DynamicCache(config=model.config.get_text_config(decoder=True))
    except TypeError:  # transformers before the cache took a config
        return DynamicCache()


def greedy_decode(model, ids, mask, max_new_tokens: int, eos_ids: frozenset[int],
                  stopped: Callable[[Sequence[Sequence[int]]], Sequence[bool]] | None = None,
                  seq2seq: bool = False, decoder_start: int | None = None) -> Decoded:
    """Greedy new tokens for each row of the left-padded ``ids`` (``mask``: 1 on tokens, 0 on padding),
    on the model's device. ``stopped``: given the new tokens of the rows not ended by ``row_ended``, which
    of them have stopped (stop strings); those rows end too."""
    import torch
    from transformers import EncoderDecoderCache
    from transformers.modeling_outputs import BaseModelOutput

    n = ids.shape[0]
    tokens: list[list[int]] = [[] for _ in range(n)]
    live = list(range(n))
    rows_per_step: list[int] = []
    if max_new_tokens <= 0 or n == 0:
        return Decoded(tuple(tuple(t) for t in tokens), ())
    cache_name = "cache" if accepts(model, "cache") else "past_key_values"  # transformers 5 / 4
    step: dict
    if seq2seq:
        encoded = model.get_encoder()(input_ids=ids, attention_mask=mask, return_dict=True)
        states = encoded.last_hidden_state
        cache = EncoderDecoderCache(dynamic_cache(model), dynamic_cache(model))
        start = torch.full((n, 1), decoder_start, dtype=torch.long, device=ids.device)
        step = {"decoder_input_ids": start, "encoder_outputs": BaseModelOutput(last_hidden_state=states),
                "attention_mask": mask}
    else:
        cache = dynamic_cache(model)
        positions = initial_positions(mask)
        step = {"input_ids": ids, "attention_mask": mask}
        with_positions = accepts(model, "position_ids")  # as generate: models with their own (ALiBi) get none
        if with_positions:
            step["position_ids"] = positions
        if accepts(model, "logits_to_keep"):
            step["logits_to_keep"] = 1
    while True:
        rows_per_step.append(len(live))
        out = model(**step, **{cache_name: cache}, use_cache=True, return_dict=True)
        chosen = out.logits[:, -1].to(dtype=torch.float32).argmax(-1)
        open_rows = []
        for j, (row, token) in enumerate(zip(live, chosen.tolist(), strict=True)):
            tokens[row].append(token)
            if not row_ended(token, len(tokens[row]), max_new_tokens, eos_ids):
                open_rows.append(j)
        if stopped is not None and open_rows:
            done = stopped([tokens[live[j]] for j in open_rows])
            open_rows = [j for j, d in zip(open_rows, done, strict=True) if not d]
        if not open_rows:
            break
        if len(open_rows) < len(live):  # the ended rows leave: every later forward computes only the rest
            keep = torch.tensor(open_rows, dtype=torch.long, device=ids.device)
            # reorder_cache is an index_select on every layer kind (batch_select_indices misses recurrent states)
            cache.reorder_cache(keep)
            chosen, mask = chosen[keep], mask[keep]
            if seq2seq:
                states = states[keep]
            else:
                positions = positions[keep]
            live = [live[j] for j in open_rows]
        if seq2seq:
            step = {"decoder_input_ids": chosen[:, None], "encoder_outputs": BaseModelOutput(last_hidden_state=states),
                    "attention_mask": mask}
        else:
            mask = torch.cat([mask, mask.new_ones((len(live), 1))], dim=-1)
            positions = positions[:, -1:] + 1
            step = {**step, "input_ids": chosen[:, None], "attention_mask": mask}
            if with_positions:
                step["position_ids"] = positions
    return Decoded(tuple(tuple(t) for t in tokens), tuple(rows_per_step))
