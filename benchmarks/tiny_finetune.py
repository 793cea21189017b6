"""Fine-tuning the quickstart's tiny BERT. Before: the masked-LM loss through the model's own ``labels=``
path (every position projected onto the vocabulary) and torch's per-tensor AdamW. After: ``masked_lm_loss``
(only the masked positions projected) and the fused AdamW kernel.

Both sides start from the same freshly built model (same tokenizer, same seed), see the same batches
and masks, and run in one process, interleaved per repeat (process CPU time, min and median). The
per-step losses must agree (max relative difference printed; the run stops if the first step differs by
more than 1e-5) before any time is printed. The training data is the quickstart's: the arab-west sample
curated and built in ar,en into a temporary folder, the dev split's true facts.

    python benchmarks/tiny_finetune.py [--steps 300] [--repeats 3]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    from factatlas.benchmark import Benchmark
    from factatlas.builder.run import build_run
    from factatlas.curate.engine import CurationConfig, curate
    from factatlas.probe.models import wrap_model
    from factatlas.probe.threads import torch_threads
    from factatlas.probe.tiny import (
        build_model,
        finetune,
        tokenizer_texts,
        train_tokenizer,
        true_fact_examples,
    )

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "quickstart"
        curate(CurationConfig(pair="arab-west", langs=("ar", "en")), run)
        build_run(run, ("ar", "en"))
        rows = Benchmark.open(run).prompts
    examples = true_fact_examples(rows, splits=["dev"])
    tokenizer = train_tokenizer(tokenizer_texts(rows), "bert", 2000)
    initial = build_model("bert", tokenizer)
    print(f"{len(examples)} training examples, vocabulary {tokenizer.vocab_size if hasattr(tokenizer, 'vocab_size') else '?'}, "
          f"{args.steps} steps, batch 16")

    def train(before: bool) -> tuple[float, list[float]]:
        model = copy.deepcopy(initial)
        lm = wrap_model(model, tokenizer, name="tiny-bert", family="mlm")
        with torch_threads(model, "cpu"):
            t0 = time.process_time()
            losses = finetune(lm, examples, steps=args.steps, seed=0, full_logits=before, fused=not before)
            return time.process_time() - t0, losses

    times: dict[str, list[float]] = {"before": [], "after": []}
    for i in range(args.repeats):
        before, old = train(True)
        after, new = train(False)
        if i == 0:
            if abs(old[0] - new[0]) > 1e-5 * abs(old[0]):
                print(f"the first step's losses differ ({old[0]} vs {new[0]}); no time printed")
                return 1
            drift = max(abs(a - b) / abs(a) for a, b in zip(old, new, strict=True))
            print(f"losses: step 1 {old[0]:.6f} vs {new[0]:.6f}; last {old[-1]:.4f} vs {new[-1]:.4f}; "
                  f"max relative difference over {len(old)} steps {drift:.2e}")
        times["before"].append(before)
        times["after"].append(after)
    b, a = min(times["before"]), min(times["after"])
    print(f"fine-tuning {args.steps} steps: labels= path, per-tensor AdamW {b:.2f} s (median "
          f"{statistics.median(times['before']):.2f})  masked positions only, fused AdamW {a:.2f} s (median "
          f"{statistics.median(times['after']):.2f})  ratio {b / a:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
