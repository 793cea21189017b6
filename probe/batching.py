"""Token-budget batching: sort work items by length, cut batches whose padded size fits a budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where tensors are made, so planning batches does not load it
    import torch


def token_budget_batches(lengths: Sequence[int], budget: int, max_rows: int | None = None,
                         same_length: bool = False) -> list[list[int]]:
    """Indices of ``lengths`` grouped into batches, longest first, with ``rows * max_len <= budget``.

    Sorting by length keeps padding small; ``same_length`` removes it (a batch never mixes lengths, so
    it needs no attention mask). An item longer than the budget still gets a batch of its own. Ties keep
    the input order, so batches are deterministic.
    """
    if budget < 1:
        raise ValueError(f"token budget must be positive, got {budget}")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    current_max = 0
    for i in order:
        n = max(int(lengths[i]), 1)
        widest = max(current_max, n)
        too_many = max_rows is not None and len(current) >= max_rows
        new_length = same_length and bool(current) and n != current_max
        if current and (widest * (len(current) + 1) > budget or too_many or new_length):
            batches.append(current)
            current, widest = [], n
        current.append(i)
        current_max = widest
    if current:
        batches.append(current)
    return batches


def long_tensor(values, device: str = "cpu") -> torch.Tensor:
    """A long tensor on ``device`` from ints, equally long int lists or an int array, through numpy:
    torch.tensor on Python lists costs 4-10x more, and scoring builds several of these per batch."""
    import numpy as np
    import torch

    return on_device(torch.from_numpy(np.asarray(values, dtype=np.int64)), device)


def on_device(tensor: torch.Tensor, device) -> torch.Tensor:
    """A host tensor moved to ``device`` without making the host wait: to CUDA through pinned memory, so
    the copy is queued behind the kernels already launched instead of waiting for them to finish."""
    if str(device).startswith("cuda"):
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def pad_right(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, attention_mask) as long tensors, right-padded to the longest row."""
    import numpy as np
    import torch

    width = max((len(r) for r in rows), default=0)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        if r:
            ids[i, : len(r)] = r
            mask[i, : len(r)] = 1
    return torch.from_numpy(ids), torch.from_numpy(mask)


def greedy_batches(order: Sequence[int], costs: Sequence[Sequence[int]], limits: Sequence[int]) -> list[list[int]]:
    """Cut ``order`` into consecutive batches whose summed costs stay within every limit.

    ``costs[i]`` has one entry per limit (e.g. tokens computed, logits kept); an item that alone exceeds a
    limit gets a batch of its own.
    """
    batches: list[list[int]] = []
    current: list[int] = []
    totals = [0] * len(limits)
    for i in order:
        c = costs[i]
        if current and any(t + x > lim for t, x, lim in zip(totals, c, limits, strict=True)):
            batches.append(current)
            current, totals = [], [0] * len(limits)
        current.append(i)
        totals = [t + x for t, x in zip(totals, c, strict=True)]
    if current:
        batches.append(current)
    return batches
