"""The packed rows' batches are built as whole arrays (``causal.packed_batch``); here they must equal,
array for array, what the plain loop over rows and continuations builds (the previous implementation,
kept as the reference), on random prompts: empty and one-token continuations, one-token contexts, with and
without the context's own targets, batches split by the token budget."""

from __future__ import annotations

import random

import numpy as np
import pytest

from factatlas.probe.causal import PackedBatch, packed_batches, packed_groups, packed_lengths

FIELDS = ("ids", "positions", "allowed", "kept", "at", "targets", "cells", "ctx_at", "ctx_targets", "ctx_prompts")


def reference_batch(batch, contexts, conts, width, cell_base, with_context, pad_id=0) -> PackedBatch:
    """One batch built by a loop over its rows and their continuations."""
    ids = np.full((len(batch), width), pad_id, dtype=np.int64)
    positions = np.zeros((len(batch), width), dtype=np.int64)
    allowed = np.zeros((len(batch), width, width), dtype=bool)
    kept = np.zeros((len(batch), width), dtype=bool)
    at_row, at_col, targets, cells, ctx_at, ctx_targets, ctx_prompts = [], [], [], [], [], [], []
    for b, i in enumerate(batch):
        ctx, n = contexts[i], len(contexts[i])
        ids[b, :n] = ctx
        positions[b, :n] = np.arange(n)
        allowed[b, :n, :n] = np.tri(n, dtype=bool)
        kept[b, n - 1] = True
        if with_context and n > 1:
            kept[b, : n - 1] = True
            ctx_at.extend(b * width + j for j in range(n - 1))
            ctx_targets.extend(ctx[1:])
            ctx_prompts.extend([i] * (n - 1))
        start = n
        for ci, c in enumerate(conts[i]):
            if not c:
                continue
            m = len(c) - 1  # its first token is read at the context's end, the others inside it
            span = slice(start, start + m)
            ids[b, span] = c[:-1]
            positions[b, span] = np.arange(n, n + m)
            allowed[b, span, :n] = True
            allowed[b, span, span] = np.tri(m, dtype=bool)
            kept[b, span] = True
            at_row.extend([b] * (m + 1))
            at_col.extend([n - 1, *range(start, start + m)])
            targets.extend(c)
            cells.extend([cell_base[i] + ci] * (m + 1))
            start += m
        pad = np.arange(start, width)
        allowed[b, pad, pad] = True  # padding sees itself: a row with no key would give NaN
    # flattened order of the kept positions, as logits_to_keep (or the mask after) returns them
    flat = np.cumsum(kept.ravel()) - 1

    def array(values):
        return np.asarray(values, dtype=np.int64)

    return PackedBatch(ids, positions, allowed, kept, flat[array(at_row) * width + array(at_col)],
                      array(targets), array(cells), flat[array(ctx_at)], array(ctx_targets), array(ctx_prompts))


def _random_prompts(rng: random.Random, n: int):
    contexts = [[rng.randrange(50) for _ in range(rng.randint(1, 9))] for _ in range(n)]
    conts = [[tuple(rng.randrange(50) for _ in range(rng.choice([0, 1, 1, 2, 3, 5]))) for _ in range(rng.randint(1, 6))]
             for _ in range(n)]
    return contexts, conts


@pytest.mark.parametrize("seed", range(6))
def test_whole_array_batches_equal_the_loop_over_rows(seed):
    rng = random.Random(seed)
    checked = 0
    for _ in range(40):
        contexts, conts = _random_prompts(rng, rng.randint(1, 30))
        with_context = rng.random() < 0.5
        budget = rng.choice([16, 40, 64, 8192])
        ours = list(packed_batches(contexts, conts, budget, 100, 0, with_context))
        groups = packed_groups(contexts, conts, budget, 100, with_context)
        lengths = packed_lengths(contexts, conts)
        cell_base = np.cumsum([0] + [len(cs) for cs in conts]).tolist()
        assert len(ours) == len(groups) and sorted(i for g in groups for i in g) == list(range(len(contexts)))
        for got, batch in zip(ours, groups, strict=True):
            expected = reference_batch(batch, contexts, conts, lengths[batch[0]], cell_base, with_context)
            for name in FIELDS:
                a, b = getattr(got, name), getattr(expected, name)
                assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), name
            checked += 1
    assert checked > 40



def test_the_planning_benchmark_prints_a_ratio_only_after_every_array_is_equal(capsys, monkeypatch):
    """benchmarks/packed_planning.py checks the loop and the whole-array batches equal before it times them."""
    import importlib.util
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "packed_planning.py"
    spec = importlib.util.spec_from_file_location("packed_planning", script)
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "packed_planning", bench)
    spec.loader.exec_module(bench)
    assert bench.main(["--prompts", "40", "--candidates", "5", "--batch-tokens", "256", "--repeats", "1",
                       "--with-context"]) == 0
    out = capsys.readouterr().out
    assert "every array equal" in out and "RATIO packed planning" in out
