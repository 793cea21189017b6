"""Host-side work of the packed causal rows: building every batch's arrays (ids, positions, the mask, the
reads). On a GPU this is what the device waits for between batches (docs/benchmarks.md, "H200, 26 Nov 2026").

Two sides on the same prompts, interleaved in one process (process CPU time, min and median of --repeats):
- the loop over rows and continuations (factatlas before 8d58968; kept as the reference in
  tests/probe/test_packed_plan.py);
- ``causal.packed_batches``: whole arrays from one segment number per position.
Every array of every batch must be equal before any time is printed. No model runs.

    python3 benchmarks/packed_planning.py                      # 1,000 prompts x 20 candidates, as gpu.sh's 1B run
    python3 benchmarks/packed_planning.py --prompts 4000 --with-context
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))  # probe_speed, also when loaded as a module

from probe_speed import interleaved  # noqa: E402

from tests.probe.test_packed_plan import FIELDS, reference_batch  # noqa: E402


def main(argv=None) -> int:
    import numpy as np

    from factatlas.probe.causal import packed_batches, packed_groups, packed_lengths

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=1000)
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--with-context", action="store_true", help="also the context's own targets (whole sentences)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    rng = random.Random(args.seed)  # contexts of 8-16 tokens, candidates of 1-4 (gpu.sh's synthetic prompts)
    contexts = [[rng.randrange(1, args.vocab) for _ in range(rng.randint(8, 16))] for _ in range(args.prompts)]
    conts = [[tuple(rng.randrange(1, args.vocab) for _ in range(rng.randint(1, 4))) for _ in range(args.candidates)]
             for _ in range(args.prompts)]

    def loop():
        lengths = packed_lengths(contexts, conts)
        cell_base = np.cumsum([0] + [len(cs) for cs in conts]).tolist()
        return [reference_batch(b, contexts, conts, lengths[b[0]], cell_base, args.with_context)
                for b in packed_groups(contexts, conts, args.batch_tokens, args.vocab, args.with_context)]

    def ours():
        return list(packed_batches(contexts, conts, args.batch_tokens, args.vocab, 0, args.with_context))

    expected, got = loop(), ours()
    assert len(expected) == len(got)
    for a, b in zip(expected, got, strict=True):
        for name in FIELDS:
            x, y = getattr(a, name), getattr(b, name)
            assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), name
    print(f"check: {len(got)} batches, every array equal ({args.prompts} prompts x {args.candidates} candidates, "
          f"with_context={args.with_context})")
    sides = {"loop over rows and continuations": loop, "whole arrays (packed_batches)": ours}
    times = interleaved(sides, args.repeats, "cpu", now=time.process_time)
    for name, ts in times.items():
        print(f"  {name:<34} min {min(ts):.4f} s, median {statistics.median(ts):.4f} s")
    loop_t, ours_t = (min(ts) for ts in times.values())
    print(f"RATIO packed planning: {loop_t / ours_t:.2f}x the loop ({loop_t:.3f} s -> {ours_t:.3f} s process CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
