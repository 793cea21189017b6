"""The one place that decides how many CPU threads torch uses while a model scores or trains.

Small models on CPU run on one thread: their matrices gain nothing from a second thread and lose a lot
when the cores are busy (6-20x slower measured on a shared 2-core machine; torch's default swung a tiny
model's throughput 2.8x-120x between runs). Larger models and accelerators keep torch's own setting.
``FACTATLAS_TORCH_THREADS=N`` overrides the rule for every entry point (the CLI, the Python API's scorers,
tiny-model training and the speed benchmark all come through here).

Why larger models keep torch's setting rather than one thread: ``benchmarks/probe_speed.py
--thread-scaling`` on the shared 2-core box (load average 3.9-4.8, medians of 3 wall-clock rounds) gave
2 threads 0.20x (independent) and 0.40x (PLL) of one thread's speed at the mBERT shape, 0.27-0.34x for
the causal rules at a 12 x 768 decoder: a busy box punishes a second thread, so there the override is the
answer. On the same box nearly idle (load from the measurement itself, 26 Nov 2026, medians of 3) 2 threads
gave 1.72x (independent) and 1.87x (PLL) at the mBERT shape, 1.80-1.82x for the three causal rules at
12 x 768 and 1.86x for seq2seq at T5-small's shape: large models keep every core by default. The count is
not chosen from the load at run time: thread counts change float sums in their last digits, and the same
settings must give the same rankings byte for byte.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from factatlas.errors import ConfigError

SMALL_MODEL_PARAMS = 20_000_000
ENV = "FACTATLAS_TORCH_THREADS"


def decide_threads(parameters: int, device: str, env: str | None = None) -> int | None:
    """Threads for a model of ``parameters`` on ``device``: an int to set, or None for torch's default."""
    if env is not None and env.strip():
        try:
            n = int(env)
        except ValueError:
            n = 0
        if n < 1:
            raise ConfigError(f"{ENV}={env!r}: expected a positive number of threads")
        return n
    if device == "cpu" and parameters < SMALL_MODEL_PARAMS:
        return 1
    return None


def model_threads(model, device: str) -> int | None:
    """``decide_threads`` for a torch module (its parameter count) and the environment."""
    return decide_threads(sum(p.numel() for p in model.parameters()), device, os.environ.get(ENV))


@contextmanager
def torch_threads(model, device: str) -> Iterator[int]:
    """Run the block with the decided thread count, restoring torch's setting after; yields the count."""
    import torch

    before = torch.get_num_threads()
    n = model_threads(model, device)
    if n is not None and n != before:
        torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
