"""The vocabulary head of a causal LM, for the causal scorers: which positions a model can project alone
(``logits_to_keep``, tried once per model), the projection split from the decoder where that is exact
(``head_split``) and run in chunks on CPU, and the log-probs of the read targets gathered on the device."""

from __future__ import annotations

import inspect
import weakref
from dataclasses import dataclass

from factatlas.probe.batching import long_tensor
from factatlas.probe.models import LoadedModel

LOGIT_BUDGET = 1 << 26  # vocabulary logits (floats) kept alive in one pass


# Rows of the vocabulary projection at a time on CPU, into one reused buffer that the normaliser then
# overwrites: the logits of a whole batch are a fresh mapping of tens of megabytes whose pages all fault
# in, and are streamed from memory twice more by the normaliser. Measured on one thread (1,412 read rows,
# 30,000 x 256 head, process CPU): whole batch 0.30 s (projection 0.22 + normaliser 0.08); in chunks of
# 64 rows 0.30 s, 128: 0.25 s, 256: 0.235 s, 512: 0.26 s, 2,048: 0.30 s.
HEAD_CHUNK = 256


@dataclass(frozen=True)
class LogitKeeping:
    """What a model's ``logits_to_keep`` can do: ``last``, an int (keep the last n positions); ``masked``, a
    2-D boolean mask (keep those positions of each row, flattened). Transformers takes the mask since 5.21;
    5.17 indexes the sequence axis with it and fails (seen on the GPU machine), and a model's own code may
    do anything, so the mask is tried rather than assumed from a version."""

    last: bool
    masked: bool


def logit_keeping(lm: LoadedModel) -> LogitKeeping:
    """Tried on the model itself, once per model: two rows of three tokens, a ragged mask; the mask is
    trusted only where its logits equal those of the full pass at the same positions."""
    import torch

    model = lm.model
    if not forward_accepts(model, "logits_to_keep"):
        return LogitKeeping(last=False, masked=False)
    known = _KEEPING.get(model)
    if known is None:
        vocab = model.get_input_embeddings().weight.shape[0]
        ids = torch.tensor([[1, 2, 3], [3, 2, 1]], device=lm.device) % vocab
        mask = torch.tensor([[True, False, True], [False, True, False]], device=lm.device)
        with torch.inference_mode():
            full = model(input_ids=ids).logits[mask].float()
            try:
                kept = model(input_ids=ids, logits_to_keep=mask).logits.float()
                masked = kept.shape == full.shape and bool(torch.allclose(kept, full, rtol=1e-2, atol=1e-2))
            except (IndexError, RuntimeError, TypeError, ValueError):
                masked = False
        known = _KEEPING[model] = LogitKeeping(last=True, masked=masked)
    return known


_KEEPING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _device_reads(reads, device: str) -> list:
    """(rows, tokens) host index arrays as index tensors on ``device``."""
    return [(long_tensor(at, device), long_tensor(tokens, device)) for at, tokens in reads]


def head_split(lm: LoadedModel, keep: LogitKeeping):
    """(decoder, vocabulary projection) when the model's logits are exactly ``projection(decoder(...)
    .last_hidden_state)``, so the projection can run in chunks; None otherwise (a model that scales or
    caps its logits, a head that is not one linear layer, a forward that is not transformers' own: a
    subclass or wrapper may treat its inputs otherwise). Tried once per model on a small input against the
    model's own logits (relative tolerance 1e-4 in fp32, 2e-2 in half precision)."""
    import torch

    model = lm.model
    known = _SPLIT.get(model)
    if known is None:
        known = False
        prefix = getattr(model, "base_model_prefix", "")
        base = getattr(model, prefix, None) if prefix else None
        head = model.get_output_embeddings()
        owner = next((cls for cls in type(model).__mro__ if "forward" in cls.__dict__), object)
        own = owner.__module__.startswith("transformers.models.")
        if own and base is not None and isinstance(head, torch.nn.Linear) and not getattr(model, "hf_device_map", None):
            vocab = model.get_input_embeddings().weight.shape[0]
            ids = torch.tensor([[1, 2, 3], [3, 2, 1]], device=lm.device) % vocab
            tol = 1e-4 if head.weight.dtype == torch.float32 else 2e-2
            try:
                with torch.inference_mode():
                    full = model(input_ids=ids).logits.float()
                    mine = head(base(input_ids=ids).last_hidden_state).float()
                known = mine.shape == full.shape and bool(torch.allclose(mine, full, rtol=tol, atol=tol))
            except (AttributeError, IndexError, RuntimeError, TypeError, ValueError):
                known = False
        _SPLIT[model] = known = (base, head) if known else False
    return known or None


_SPLIT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def chunked_target_log_probs(hidden, head, reads, chunk: int = HEAD_CHUNK) -> list:
    """Per (rows, tokens) pair of host index arrays, float32 log p(token) at those rows of
    ``head(hidden)``, the projection run ``chunk`` rows at a time into one buffer (CPU)."""
    import numpy as np
    import torch

    from factatlas.probe.normaliser import logsumexp_rows_in_place

    n = hidden.shape[0]
    weight, bias = head.weight, head.bias
    buffer = torch.empty((min(chunk, n), weight.shape[0]), dtype=weight.dtype, device=hidden.device)
    out = [torch.empty(len(rows), dtype=torch.float32) for rows, _ in reads]
    orders = [np.argsort(rows, kind="stable") for rows, _ in reads]
    for start in range(0, n, chunk):
        end = min(n, start + chunk)
        logits = buffer[: end - start]
        if bias is None:
            torch.mm(hidden[start:end], weight.t(), out=logits)
        else:
            torch.addmm(bias, hidden[start:end], weight.t(), out=logits)
        logits = logits if logits.dtype == torch.float32 else logits.float()
        picked = []
        for (rows, tokens), order in zip(reads, orders, strict=True):
            lo, hi = np.searchsorted(rows[order], (start, end))
            which = order[lo:hi]
            local = torch.from_numpy(rows[which] - start)
            picked.append((which, local, logits[local, torch.from_numpy(tokens[which])]))
        norm = logsumexp_rows_in_place(logits)
        for o, (which, local, values) in zip(out, picked, strict=True):
            o[torch.from_numpy(which)] = values - norm[local]
    return out


def forward_accepts(model, name: str) -> bool:
    """Whether a call of the model reaches a forward that takes ``name``: the classes' forwards are read in
    method-resolution order, and one that only passes ``**kwargs`` on (a subclass wrapping the model's code)
    is looked through to the next; one that neither names it nor takes ``**kwargs`` ends the search. When
    every forward of the classes passed ``**kwargs`` on, a wrapper that names the model it calls
    (``get_base_model()``: PEFT's adapters) is looked through to that model; else ``**kwargs`` alone is no
    promise that the name is used."""
    import torch

    for cls in type(model).__mro__:
        if cls is torch.nn.Module:  # its forward is the "not implemented" stub every module inherits
            break
        forward = cls.__dict__.get("forward")
        if forward is None:
            continue
        params = inspect.signature(forward).parameters
        if name in params:
            return True
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return False
    base = getattr(model, "get_base_model", None)
    inner = base() if callable(base) else None
    return inner is not None and inner is not model and forward_accepts(inner, name)


def _vocab_size(model) -> int:
    """Width of the vocabulary projection, what a kept logit row costs (1 when the model has none)."""
    head = model.get_output_embeddings()
    return head.weight.shape[0] if head is not None else 1
