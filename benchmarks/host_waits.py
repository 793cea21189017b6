"""How often each scorer makes the host wait for a CUDA device while it scores: torch's sync debug mode warns
at every synchronising call, and the warnings are counted per ``score_slots`` over a few batches (random tiny
models, the queries of tests/probe/test_no_host_waits.py, 40 tokens a batch). Reading the sums back at the
end is one wait by design; more means the host stops between batches and the device idles while the next
batch is built. The CPU check of the same thing is tests/probe/test_no_host_waits.py.

    python3 benchmarks/host_waits.py
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.probe.test_no_host_waits import QUERIES, _model  # noqa: E402


def main() -> int:
    import torch

    from factatlas.probe.causal import CausalLMScorer, SentenceLegacyScorer
    from factatlas.probe.mlm import MaskedLMScorer
    from factatlas.probe.models import wrap_model
    from factatlas.probe.seq2seq import Seq2SeqScorer
    from factatlas.probe.slots import tokenize_slots

    if not torch.cuda.is_available():
        print("host_waits: needs a CUDA device (tests/probe/test_no_host_waits.py checks the same on CPU)")
        return 0

    def on_cuda(arch: str):
        lm = _model(arch)
        return wrap_model(lm.model.to("cuda"), lm.tokenizer, name=lm.name, family=lm.family)

    rules = {
        "mlm-independent": (on_cuda("bert"), lambda lm: MaskedLMScorer(lm, "independent", batch_tokens=40)),
        "mlm-pll": (on_cuda("bert"), lambda lm: MaskedLMScorer(lm, "pll", batch_tokens=40)),
        "causal-sum (packed rows)": (on_cuda("gpt2"), lambda lm: CausalLMScorer(lm, "sum", batch_tokens=40)),
        "causal-sum (KV-cache path)": (on_cuda("gpt2"),
                                       lambda lm: CausalLMScorer(lm, "sum", batch_tokens=40, packed=False)),
        "causal-sentence-legacy": (on_cuda("gpt2"), lambda lm: SentenceLegacyScorer(lm, batch_tokens=40)),
        "seq2seq": (on_cuda("t5"), lambda lm: Seq2SeqScorer(lm, batch_tokens=40)),
    }
    for name, (lm, make) in rules.items():
        try:
            scorer = make(lm)
        except Exception as error:  # noqa: BLE001 - one rule's failure is printed, the others still run
            print(f"WAITS {name}: not run ({type(error).__name__}: {error})")
            continue
        slots = tokenize_slots(lm.tokenizer, QUERIES)
        score = scorer.score_slots if hasattr(scorer, "score_slots") else None
        scorer.score(QUERIES)  # once-per-model checks (head split, masks) happen here, not in the count
        torch.cuda.synchronize()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            try:
                score(slots) if score is not None else scorer.score(QUERIES)
            finally:
                torch.cuda.set_sync_debug_mode("default")
        waits = [w for w in seen if "synchroniz" in str(w.message)]
        print(f"WAITS {name}: {len(waits)} synchronising calls while scoring {len(QUERIES)} prompts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
