"""A one-deep pipeline: item k+1's host work runs on a second thread while item k's model work runs here.

The ranking cuts a run's queries into chunks, and each chunk's scoring is a host step (tokenizing, the
plan of passes and batches as arrays) and a model step (the forward passes). Done one after the other,
the device waits while the host plans; here the next chunk is prepared while this one runs. Torch
releases the GIL inside its kernels and the fast tokenizers and numpy mostly do too, so the host work
can take a free core while the model runs; on an accelerator it can hide behind the device's queue.
The pass planner itself is Python, so the two threads share the GIL while it runs (``SWITCH_INTERVAL``).

At most two items' prepared work is alive at once (the one running and the one being prepared), an
error raised while preparing surfaces in the caller as that same exception when its item is reached,
and the model step always runs on the calling thread (torch's thread settings are the caller's)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

# The interpreter's switch interval while a chunk is prepared beside a running one (None: left as it is, 5 ms
# by default). Torch gives up the GIL in every operation and takes it back after; while the preparing
# thread runs Python (the pass planner's loops) the model's thread may wait up to the whole interval, once
# per operation. On the shared 2-core box (load 6-8) the tiny BERT shape measured 0.70x and 1.14x (min
# wall, off/on) at 5 ms in two runs and 1.15x and 1.16x at 0.5 ms: noise, no case for changing a
# process-wide setting; ``benchmarks/gpu.sh`` times 0.5 ms beside it on a GPU, where the host thread matters.
SWITCH_INTERVAL: float | None = None

Item = TypeVar("Item")
Prepared = TypeVar("Prepared")
Result = TypeVar("Result")


def pipelined(items: Sequence[Item], prepare: Callable[[Item], Prepared], run: Callable[[Prepared], Result],
              prefetch: bool = True) -> Iterator[tuple[Item, Result]]:
    """``(item, run(prepare(item)))`` for every item in order; with ``prefetch``, ``prepare`` of the next
    item runs on one background thread while ``run`` of this one runs on the caller's. Results are the
    same either way (the two steps see the same inputs in the same order); only when they run differs.

    The first item is prepared on the caller's thread (nothing runs yet to hide it behind), so an error
    preparing it, the usual place for a refusal, is raised before any ``run``."""
    if not prefetch or len(items) < 2:
        for item in items:
            yield item, run(prepare(item))
        return
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="factatlas-prepare")
    upcoming: Future | None = None
    switch = sys.getswitchinterval()
    if SWITCH_INTERVAL is not None:
        sys.setswitchinterval(SWITCH_INTERVAL)
    try:
        ready = prepare(items[0])
        for k, item in enumerate(items):
            upcoming = pool.submit(prepare, items[k + 1]) if k + 1 < len(items) else None
            result = run(ready)
            ready = None  # this item's prepared work is let go before the next one's is taken
            yield item, result
            if upcoming is not None:
                ready = upcoming.result()  # the preparing thread's exception, raised here as it was raised there
                upcoming = None
    finally:
        if upcoming is not None:
            upcoming.cancel()
        # waits for a preparation already under way (at most one item's), so no thread outlives the call
        pool.shutdown(wait=True, cancel_futures=True)
        sys.setswitchinterval(switch)
