"""The ranking with its one-deep pipeline (chunk k+1 tokenized and planned on a second thread while chunk k
runs) against the same ranking without it: the same queries, one process, interleaved rounds.

Both sides are ``ranking.ranked_rows`` on the same scorer, ``--prefetch`` and ``--no-prefetch``; every score
of the first round is checked equal (==) before anything is timed or a ratio printed. Per side: wall and
process CPU time, min and median of ``--repeats`` rounds (the order of the sides alternates per round), and
the ratio off/on of the minima (wall: > 1 means the pipeline is faster). The host share is the scorer's
host step (``prepare``: tokenizing, the context check, the plan of passes and batches) over the whole
ranking, measured by timing each step with the pipeline off: it bounds what the pipeline can hide, and
only chunks after the first can be hidden (the first chunk is prepared before anything runs). Printed
with the machine, its load before and after, and its one-thread fp32 matmul rate
(``big_benchmark.matmul_rate``), since the box is shared.

    python benchmarks/prefetch_speed.py                                  # small masked shape on CPU
    python benchmarks/prefetch_speed.py --tiny --mode pll                # the quickstart's tiny BERT shape
    python benchmarks/prefetch_speed.py --preset mbert --prompts 1200 --repeats 2
    python benchmarks/prefetch_speed.py --device cuda --dtype bf16 --preset mbert --prompts 12000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(ROOT))
from big_benchmark import matmul_rate  # noqa: E402  (the one matmul probe of the benchmarks)
from probe_speed import (  # noqa: E402  (the speed script's shapes, data and models)
    CAUSAL_PRESETS,
    PRESETS,
    SEQ2SEQ_PRESETS,
    build_causal,
    build_model,
    build_seq2seq,
    make_queries,
)


def prompts_for(queries) -> list:
    """The queries as the probe's prompt records (the ranking reads their text, forms and QIDs)."""
    from factatlas.records import Prompt

    out = []
    for i, q in enumerate(queries):
        qids = tuple(f"Q{i}-{c}" for c in range(len(q.forms)))
        out.append(Prompt(f"f{i}|en|t", f"f{i}", "en", "t", "cloze", q.text, q.text.index("[Y]"), "p", "c", "P1",
                          "test", f"Q{i}", "s", qids[:1], ((q.forms[0],),), qids, q.forms, "reviewed"))
    return out


class Timed:
    """A scorer whose host and model steps add their wall time to ``host`` and ``model`` (the same steps)."""

    def __init__(self, scorer):
        self.scoring, self.lm, self.context_needs = scorer.scoring, scorer.lm, scorer.context_needs
        self.host = self.model = 0.0
        self.prepare = self._timed(scorer.prepare, "host")
        if hasattr(scorer, "prepare_slots"):
            self.prepare_slots, self.score_slots = self._timed(scorer.prepare_slots, "host"), scorer.score_slots
        self.run, self.score = self._timed(scorer.run, "model"), scorer.score

    def _timed(self, step: Callable, where: str) -> Callable:
        def timed(items):
            t0 = time.perf_counter()
            try:
                return step(items)
            finally:
                setattr(self, where, getattr(self, where) + time.perf_counter() - t0)
        return timed


def make_scorer(lm, preset: str, rule: str, batch_tokens: int):
    if preset in CAUSAL_PRESETS:
        from factatlas.probe.causal import CausalLMScorer

        return CausalLMScorer(lm, "mean", batch_tokens=batch_tokens)
    if preset in SEQ2SEQ_PRESETS:
        from factatlas.probe.seq2seq import Seq2SeqScorer

        return Seq2SeqScorer(lm, batch_tokens=batch_tokens)
    from factatlas.probe.mlm import MaskedLMScorer

    return MaskedLMScorer(lm, rule, batch_tokens=batch_tokens)


def stats(ts: list[float]) -> str:
    return f"min {min(ts):.3f} s, median {statistics.median(ts):.3f} s"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="small")
    ap.add_argument("--mode", choices=("independent", "pll"), default="independent", help="masked presets' rule")
    ap.add_argument("--prompts", type=int, default=4000)
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--chunk", type=int, default=2048, help="queries per chunk (the probe's default)")
    ap.add_argument("--chunk-candidates", type=int, default=65536, help="candidates per chunk (the probe's default)")
    for name in ("layers", "hidden", "heads", "intermediate", "vocab"):
        ap.add_argument(f"--{name}", type=int, help=f"override the preset's {name}")
    ap.add_argument("--tiny", action="store_true", help="the quickstart's tiny BERT shape: 2 layers, hidden 64, "
                    "2 heads, intermediate 128, vocab 4,000 (masked presets)")
    ap.add_argument("--tokenizer-vocab", type=int, default=1000)
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: the project's rule)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--dtype", choices=("fp32", "bf16", "fp16"), default="fp32")
    ap.add_argument("--switch-intervals", type=float, nargs="*", default=[],
                    help="also time the pipeline with each of these interpreter switch intervals while its "
                         "thread runs (seconds; pipeline.SWITCH_INTERVAL; the pipeline's own is timed as 'on')")
    ap.add_argument("--no-matmul", action="store_true", help="skip the one-thread matmul probe")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import torch

    from factatlas.probe import pipeline
    from factatlas.probe.batching import greedy_batches
    from factatlas.probe.ranking import ranked_rows
    from factatlas.probe.threads import model_threads

    print(f"machine: {os.cpu_count()} cores; load {load()}"
          + ("" if args.no_matmul else f"; one-thread fp32 matmul {matmul_rate():.1f} GFLOP/s"), flush=True)
    sizes = PRESETS[args.preset]
    if args.tiny:
        sizes = type(sizes)(layers=2, hidden=64, heads=2, intermediate=128, vocab=4000)
    sizes = type(sizes)(**{k: getattr(args, k) or v for k, v in vars(sizes).items()})
    queries, corpus = make_queries(args.prompts, args.candidates, args.seed)
    builder = build_causal if args.preset in CAUSAL_PRESETS else build_seq2seq if args.preset in SEQ2SEQ_PRESETS \
        else build_model
    lm = builder(sizes, corpus, args.device, args.dtype, args.seed, args.tokenizer_vocab)
    threads = args.threads or model_threads(lm.model, args.device)
    if threads:
        torch.set_num_threads(threads)
    scorer = make_scorer(lm, args.preset, args.mode, args.batch_tokens)
    prompts, texts = prompts_for(queries), [q.text for q in queries]
    chunks = len(greedy_batches(range(len(queries)), [(1, len(q.forms)) for q in queries],
                                (args.chunk, args.chunk_candidates)))
    params = sum(p.numel() for p in lm.model.parameters())
    print(f"model: {type(lm.model).__name__} {sizes.layers} layers, hidden {sizes.hidden}, vocab "
          f"{lm.model.config.vocab_size}, {params / 1e6:.1f}M parameters, {args.device}/{args.dtype}, "
          f"{torch.get_num_threads()} torch thread(s); rule {scorer.scoring}")
    print(f"data: {len(queries)} prompts x {args.candidates} candidates in {chunks} chunks of at most {args.chunk} "
          f"queries / {args.chunk_candidates} candidates", flush=True)
    if chunks < 2:
        print("error: one chunk: nothing to prepare while a chunk runs (more --prompts or a smaller --chunk)")
        return 1

    def ranked(prefetch: bool, who=scorer):
        return ranked_rows(who, prompts, texts, "random", args.chunk, None, None, args.chunk_candidates, prefetch)

    def rows(r) -> list:
        return [(row.ranked_qids, row.scores) for row in r]

    off, on = rows(ranked(False)), rows(ranked(True))
    if off != on:
        bad = sum(a != b for a, b in zip(off, on, strict=True))
        print(f"error: {bad} of {len(off)} rankings differ between --no-prefetch and --prefetch; no times printed")
        return 1
    print(f"check: {len(off)} rankings and every score identical with and without the pipeline", flush=True)

    timed = Timed(scorer)
    t0 = time.perf_counter()
    ranked(False, timed)
    whole = time.perf_counter() - t0
    print(f"host share (pipeline off, one run): prepare {timed.host:.3f} s, run {timed.model:.3f} s, whole "
          f"{whole:.3f} s: {timed.host / whole:.1%} host; hideable (chunks after the first) about "
          f"{timed.host * (chunks - 1) / chunks / whole:.1%}", flush=True)

    clock = time.perf_counter
    if args.device == "cuda":
        def clock() -> float:
            torch.cuda.synchronize()
            return time.perf_counter()
    own = pipeline.SWITCH_INTERVAL
    sides = {"off": (False, own), "on": (True, own), **{f"on, switch {x * 1e3:g} ms": (True, x)
                                                         for x in args.switch_intervals}}
    wall: dict[str, list[float]] = {side: [] for side in sides}
    cpu: dict[str, list[float]] = {side: [] for side in sides}
    for round_ in range(args.repeats):
        for side in (list(sides) if round_ % 2 == 0 else list(sides)[::-1]):
            prefetch, pipeline.SWITCH_INTERVAL = sides[side]
            w0, c0 = clock(), time.process_time()
            ranked(prefetch)
            wall[side].append(clock() - w0)
            cpu[side].append(time.process_time() - c0)
    pipeline.SWITCH_INTERVAL = own
    own_label = "--prefetch" if own is None else f"--prefetch (switch {own * 1e3:g} ms)"
    for side in sides:
        label = {"off": "--no-prefetch", "on": own_label}.get(side, side)
        print(f"{label:>28}: wall {stats(wall[side])}; CPU {stats(cpu[side])}")
    for side in list(sides)[1:]:
        print(f"RATIO wall off/{side} {min(wall['off']) / min(wall[side]):.3f} (min), "
              f"{statistics.median(wall['off']) / statistics.median(wall[side]):.3f} (median); "
              f"CPU off/{side} {min(cpu['off']) / min(cpu[side]):.3f} (min)")
    print(f"after: load {load()}" + ("" if args.no_matmul else f"; one-thread fp32 matmul {matmul_rate():.1f} GFLOP/s"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
