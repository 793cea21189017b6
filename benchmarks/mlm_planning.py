"""Host-side work of masked-LM scoring: planning the passes and building every batch's index arrays.

On a GPU this work is what the device waits for (docs/probe.md, "Where the time goes"). Two sides, on the
same tokenized prompts, interleaved and repeated in one process (process CPU time, min and median):
- the per-target planner (factatlas before c59d89b): one object per pass, a dict lookup and a tuple per
  target, and per batch Python lists of rows, reads and targets turned into arrays;
- ``plan_passes(...).batches(...)``: flat arrays, renumbered once in batch order, every batch a slice.
Both must give the same batches (ids, reads and targets as multisets per row) before any time is printed.
No model runs: the inputs are a tokenizer's slots.

Data: ``--run RUN`` takes the cloze prompts of a built benchmark and the tokenizer of a model folder
(``--tokenizer``; default RUN/probe/_models/tiny-bert, which `factatlas quickstart` leaves behind);
without it, synthetic slots shaped like the quickstart's (36 candidates of 1-4 tokens).

    factatlas quickstart && python benchmarks/mlm_planning.py --run runs/quickstart
    python benchmarks/mlm_planning.py --prompts 8000
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class _Pass:
    ids: list[int]
    positions: list[int] = field(default_factory=list)
    targets: list[tuple[int, int, int]] = field(default_factory=list)
    index: dict[int, int] = field(default_factory=dict)

    def read(self, position: int) -> int:
        i = self.index.get(position)
        if i is None:
            i = self.index[position] = len(self.positions)
            self.positions.append(position)
        return i


def per_target_batches(slots, mode: str, mask_id: int, head, tail, budget: int) -> list[tuple]:
    """The planner and batch building as they were: per target Python objects, per batch Python lists."""
    import numpy as np

    from factatlas.probe.batching import token_budget_batches

    by_ids: dict[tuple[int, ...], _Pass] = {}
    for slot in slots:
        start = len(head) + len(slot.prefix)
        by_key: dict = {}
        for cand in slot.candidates:
            k = len(cand)
            for fill in ([()] if mode == "independent" else [cand[:j] for j in range(k)]):
                p = by_key.get((k, fill))
                if p is None:
                    ids = (*head, *slot.prefix, *fill, *([mask_id] * (k - len(fill))), *slot.suffix, *tail)
                    p = by_ids.get(ids)
                    if p is None:
                        p = by_ids[ids] = _Pass(list(ids))
                    by_key[(k, fill)] = p
                for j in (range(k) if mode == "independent" else (len(fill),)):
                    p.targets.append((p.read(start + j), cand[j], 0))
    passes = list(by_ids.values())
    out = []
    for batch in token_budget_batches([len(p.ids) for p in passes], budget, same_length=True):
        chosen = [passes[i] for i in batch]
        rows, within, cols, targets, bases = [], [], [], [], []
        for r, p in enumerate(chosen):
            bases.extend([len(rows)] * len(p.targets))
            rows.extend([r] * len(p.positions))
            within.extend(range(len(p.positions)))
            cols.extend(p.positions)
            targets.extend(p.targets)
        read, tokens, _ = np.array(targets, dtype=np.int64).T
        out.append((np.array([p.ids for p in chosen], dtype=np.int64), np.array(rows), np.array(within),
                    np.array(cols), read + np.array(bases), tokens))
    return out


def flat_batches(slots, mode: str, mask_id: int, head, tail, budget: int) -> list[tuple]:
    from factatlas.probe.mlm import plan_passes

    plan = plan_passes(slots, mode, mask_id, head, tail)
    return [(b.ids, b.rows, b.within, b.cols, b.at, b.tokens) for b in plan.batches(budget)]


def same_batches(a: list[tuple], b: list[tuple]) -> bool:
    """Same ids per batch, same reads per row, same (row, column, token) targets as multisets."""
    def bag(*arrays) -> list[tuple]:
        return sorted(zip(*(x.tolist() for x in arrays), strict=True))

    if len(a) != len(b):
        return False
    for (ids1, rows1, within1, cols1, at1, tok1), (ids2, rows2, within2, cols2, at2, tok2) in zip(a, b, strict=True):
        if ids1.tolist() != ids2.tolist() or bag(rows1, within1, cols1) != bag(rows2, within2, cols2):
            return False
        if bag(rows1[at1], cols1[at1], tok1) != bag(rows2[at2], cols2[at2], tok2):
            return False
    return True


def run_slots(run: Path, tokenizer: Path | None):
    from transformers import AutoTokenizer

    from factatlas.benchmark import Benchmark
    from factatlas.probe.protocol import ClozeQuery
    from factatlas.probe.slots import special_wrap, tokenize_slots
    from factatlas.records import ANSWER_MARKER

    tok = AutoTokenizer.from_pretrained(str(tokenizer or run / "probe" / "_models" / "tiny-bert"))
    prompts = Benchmark.open(run / "build").prompts
    queries = [ClozeQuery(p.text, p.candidate_forms) for p in prompts
               if p.text.count(ANSWER_MARKER) == 1 and p.candidate_forms]
    wrap = special_wrap(tok)
    return tokenize_slots(tok, queries), tok.mask_token_id, wrap.head, wrap.tail


def synthetic_slots(prompts: int, candidates: int, seed: int):
    from factatlas.probe.slots import SlotTokens

    rng = random.Random(seed)
    names = [tuple(rng.randrange(5, 4000) for _ in range(rng.choice((1, 1, 2, 2, 3, 4)))) for _ in range(400)]
    slots = []
    for _ in range(prompts):
        cands = tuple(rng.sample(names, candidates))
        slots.append(SlotTokens(prefix=tuple(rng.randrange(5, 4000) for _ in range(rng.randrange(3, 12))),
                                candidates=cands, suffix=tuple(rng.randrange(5, 4000) for _ in range(rng.randrange(0, 3)))))
    return slots, 4, (1,), (2,)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, help="a built run (RUN/build) whose cloze prompts to plan")
    ap.add_argument("--tokenizer", type=Path, help="model folder with the tokenizer (default: the quickstart's tiny BERT)")
    ap.add_argument("--prompts", type=int, default=8000, help="synthetic prompts")
    ap.add_argument("--candidates", type=int, default=36, help="synthetic candidates per prompt")
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    slots, mask_id, head, tail = (run_slots(args.run, args.tokenizer) if args.run
                                  else synthetic_slots(args.prompts, args.candidates, args.seed))
    cands = [len(c) for s in slots for c in s.candidates]
    print(f"data: {len(slots)} prompts, {len(cands)} candidates, {sum(cands)} candidate tokens "
          f"({'run ' + str(args.run) if args.run else 'synthetic'})")
    sides = {"per-target planner": per_target_batches, "flat arrays (ours)": flat_batches}
    for mode in ("independent", "pll"):
        results = {name: fn(slots, mode, mask_id, head, tail, args.batch_tokens) for name, fn in sides.items()}
        if not same_batches(*results.values()):
            print(f"{mode}: the two planners disagree; no times printed")
            return 1
        print(f"check {mode}: same {len(results['flat arrays (ours)'])} batches, reads and targets")
        times: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(args.repeats):
            for name, fn in sides.items():
                t0 = time.process_time()
                fn(slots, mode, mask_id, head, tail, args.batch_tokens)
                times[name].append(time.process_time() - t0)
        for name, ts in times.items():
            print(f"  {mode:<12} {name:<22} min {min(ts):7.3f} s, median {statistics.median(ts):7.3f} s")
        base, ours = (min(ts) for ts in times.values())
        print(f"RATIO {mode}: {base / ours:.2f}x less host CPU for planning and batch building")
    return 0


if __name__ == "__main__":
    sys.exit(main())
