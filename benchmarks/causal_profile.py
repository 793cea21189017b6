"""Where one causal-mean ``score`` goes, host against device: the host's parts timed alone (tokenizing, the
contexts and continuations, building every packed batch), the whole ``score_slots`` and ``score``, then a
torch profile of one ``score_slots`` (the ops by host time; on CUDA also by device time, the kernel count
and the device's busy time). This is how the packed batches' host loop was found on the H200
(docs/benchmarks.md, "H200, 26 Nov 2026"); on CUDA every time is synchronised wall time, on CPU process time.

    python3 benchmarks/causal_profile.py                         # CUDA: the 1B Llama shape, 1,000 prompts
    python3 benchmarks/causal_profile.py --preset llama-small --prompts 40   # CPU-sized
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import probe_speed as ps  # noqa: E402


def main(argv=None) -> int:
    import torch
    from torch.profiler import ProfilerActivity, profile

    from factatlas.probe.causal import CausalLMScorer, plan_packed
    from factatlas.probe.slots import tokenize_slots

    cuda = torch.cuda.is_available()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=sorted(ps.CAUSAL_PRESETS), default="llama-1b" if cuda else "llama-small")
    ap.add_argument("--prompts", type=int, default=1000 if cuda else 100)
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--tokenizer-vocab", type=int, default=1000)
    args = ap.parse_args(argv)

    device, dtype = ("cuda", "bf16") if cuda else ("cpu", "fp32")
    queries, corpus = ps.make_queries(args.prompts, args.candidates, 0)
    lm = ps.build_causal(ps.PRESETS[args.preset], corpus, device, dtype, 0, args.tokenizer_vocab)
    scorer = CausalLMScorer(lm, "mean", batch_tokens=args.batch_tokens)
    scorer.score(queries)  # warm-up: kernels, once-per-model checks
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    clock = time.perf_counter if cuda else time.process_time

    def timed(fn, *args):
        sync()
        start = clock()
        out = fn(*args)
        sync()
        return clock() - start, out

    print(f"{args.preset} on {device}/{dtype}, {args.prompts} prompts x {args.candidates} candidates, "
          f"{args.batch_tokens} batch tokens ({'wall, synchronised' if cuda else 'process CPU'}):")
    for _ in range(2):
        t_tok, slots = timed(tokenize_slots, lm.tokenizer, queries)
        t_ctx, (contexts, conts) = timed(scorer.contexts_and_continuations, slots)
        t_plan, batches = timed(list, plan_packed(lm, contexts, conts, args.batch_tokens, False))
        t_slots, _ = timed(scorer.score_slots, slots)
        t_score, _ = timed(scorer.score, queries)
        print(f"  tokenize {t_tok:.3f} s, contexts {t_ctx:.3f} s, packed batches {t_plan:.3f} s ({len(batches)}); "
              f"score_slots {t_slots:.3f} s, score {t_score:.3f} s")
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        scorer.score_slots(slots)
        sync()
    table = prof.key_averages()
    print(table.table(sort_by="self_cpu_time_total", row_limit=15, max_name_column_width=60))
    if cuda:
        print(table.table(sort_by="self_cuda_time_total", row_limit=10, max_name_column_width=60))
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        busy = sum(e.device_time for e in kernels) / 1e6
        launches = sum(e.count for e in table if e.key in ("cudaLaunchKernel", "cuLaunchKernelEx"))
        print(f"DEVICE busy {busy:.3f} s over {len(kernels)} kernels; {launches} launches from the host, "
              f"{launches / max(len(batches), 1):.0f} a batch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
