"""Our masked-LM scorers vs the anchors' algorithms for the SAME scoring rule, same prompts, one process.

Pairs (each checked for identical rankings before a ratio is printed):
- left-to-right / PLL rule: BMLAMA-style loop (one pass per candidate token, batch 1, fp32, autograd on,
  NumPy softmax per scored token, prompt re-tokenized per candidate) vs ``MaskedLMScorer(mode="pll")``;
- independent-mask rule: mLAMA-style batching (4 prompts per batch, a pass for every mask count up to
  the batch maximum, full-vocabulary log-softmax of every position copied to the host) vs
  ``MaskedLMScorer(mode="independent")``.

The model is BERT-shaped with random weights (speed does not depend on what it knows); prompts are
synthetic cloze sentences over pseudo-words, candidates drawn from per-relation pools so they have 1-5
subword tokens. The per-candidate baseline is slow by design: by default it runs on a subset
(``--bmlama-prompts``) and our scorer is timed on that same subset for its ratio.

    python benchmarks/probe_speed.py --quick            # a minute: small sizes
    python benchmarks/probe_speed.py                    # 4 layers, hidden 256, vocab 30k, 2000 x 20
    python benchmarks/probe_speed.py --device cuda --dtype bf16 --preset mbert   # GPU: prompts/s, TFLOP/s
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass

RELATIONS = (
    "The capital of {X} is [Y] .", "{X} was born in [Y] .", "[Y] is the official language of {X} .",
    "{X} is a member of [Y] .", "The religion of {X} is [Y] .", "{X} plays the [Y] .",
    "{X} died in the city of [Y] .", "[Y] is where {X} works .", "{X} is located in [Y] .",
    "The original language of {X} is [Y] .",
)
SYLLABLES = [c + v for c in "bcdfghjklmnprstvz" for v in "aeiou"] + ["ar", "el", "on", "is", "um", "an"]
HALF_PRECISION_TOL = 0.05  # nats: bf16/fp16 scorer vs fp32 anchors, see main()

# Dense bf16/fp16 tensor-core peaks (TFLOP/s) by device-name substring; --peak-tflops overrides.
PEAK_TFLOPS = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "L40S": 362.0, "A10": 125.0, "4090": 165.0}


@dataclass(frozen=True)
class Sizes:
    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab: int


PRESETS = {
    "small": Sizes(layers=4, hidden=256, heads=4, intermediate=1024, vocab=30000),
    "mbert": Sizes(layers=12, hidden=768, heads=12, intermediate=3072, vocab=119547),
}


def pseudo_word(rng: random.Random, lo: int, hi: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(lo, hi))).capitalize()


def make_queries(n_prompts: int, n_candidates: int, seed: int):
    from factatlas.probe.protocol import ClozeQuery

    rng = random.Random(seed)
    pools = [[pseudo_word(rng, 1, 4) for _ in range(max(3 * n_candidates, 60))] for _ in RELATIONS]
    queries = []
    for i in range(n_prompts):
        rel = i % len(RELATIONS)
        subject = " ".join(pseudo_word(rng, 2, 3) for _ in range(rng.randint(1, 2)))
        forms = tuple(rng.sample(pools[rel], n_candidates))
        queries.append(ClozeQuery(RELATIONS[rel].replace("{X}", subject), forms))
    corpus = [q.text.replace("[Y]", f) for q in queries for f in q.forms[:3]] + [w for p in pools for w in p]
    return queries, corpus


def build_model(sizes: Sizes, corpus, device: str, dtype: str, seed: int, tokenizer_vocab: int):
    import torch
    import transformers

    from factatlas.probe.models import torch_dtype, wrap_model
    from factatlas.probe.tiny import train_tokenizer

    tok = train_tokenizer(corpus, "bert", vocab_size=tokenizer_vocab)
    torch.manual_seed(seed)
    config = transformers.BertConfig(
        vocab_size=max(sizes.vocab, len(tok)), hidden_size=sizes.hidden, num_hidden_layers=sizes.layers,
        num_attention_heads=sizes.heads, intermediate_size=sizes.intermediate, max_position_embeddings=512,
        pad_token_id=tok.pad_token_id)
    model = transformers.BertForMaskedLM(config).to(device=device, dtype=torch_dtype(dtype)).eval()
    return wrap_model(model, tok, name=f"random-bert-{sizes.layers}x{sizes.hidden}", family="mlm")


def compare(queries, ours, reference, tol: float) -> tuple[int, int]:
    """(prompts whose rankings differ, of which not explained by a numerical near-tie)."""
    from factatlas.probe.protocol import rank_candidates

    differ = unexplained = 0
    for q, a, b in zip(queries, ours, reference, strict=True):
        ra, rb = rank_candidates(q.forms, a)[0], rank_candidates(q.forms, b)[0]
        if ra != rb:
            differ += 1
            pos = {f: i for i, f in enumerate(q.forms)}
            first = next(i for i in range(len(ra)) if ra[i] != rb[i])
            gap = abs(a[pos[ra[first]]] - a[pos[rb[first]]])
            if gap > tol:
                unexplained += 1
    return differ, unexplained


def timed(fn, device: str):
    import torch

    if device == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return result, time.perf_counter() - start


def pass_flops(lm, queries, mode: str, batch_tokens: int, sizes: Sizes) -> float:
    """Matmul FLOPs our scorer spends (its batches, attention, LM head on the read positions only)."""
    from factatlas.probe.batching import token_budget_batches
    from factatlas.probe.mlm import plan_passes
    from factatlas.probe.slots import special_wrap, tokenize_slots

    wrap = special_wrap(lm.tokenizer)
    passes, _ = plan_passes(tokenize_slots(lm.tokenizer, queries), mode, lm.tokenizer.mask_token_id,
                            wrap.head, wrap.tail)
    from factatlas.probe.mlm import MaskedLMScorer

    partial = MaskedLMScorer(lm, mode)._last is not None  # last layer at the read positions only
    h, f = sizes.hidden, sizes.intermediate
    full_layers = sizes.layers - 1 if partial else sizes.layers
    total = 0.0
    for batch in token_budget_batches([len(p.ids) for p in passes], batch_tokens, same_length=True):
        width = max(len(passes[i].ids) for i in batch)
        tokens = width * len(batch)
        reads = sum(len(passes[i].positions) for i in batch)
        total += full_layers * (2 * tokens * (4 * h * h + 2 * h * f) + 4 * len(batch) * width * width * h)
        if partial:  # keys and values everywhere; queries, output, feed-forward and attention at the reads
            total += 2 * tokens * 2 * h * h + 2 * reads * (2 * h * h + 2 * h * f) + 4 * reads * width * h
        total += 2 * reads * (h * h + h * sizes.vocab)
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=2000)
    ap.add_argument("--candidates", type=int, default=20)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="small")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--intermediate", type=int)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--tokenizer-vocab", type=int, default=1000,
                    help="WordPiece vocabulary trained on the prompts (smaller = more multi-token candidates)")
    ap.add_argument("--bmlama-prompts", type=int, default=200,
                    help="prompts for the per-candidate baseline (0: all); ours is timed on the same subset")
    ap.add_argument("--mlama-prompts", type=int, default=0, help="prompts for the mLAMA-style baseline (0: all)")
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=0, help="torch CPU threads, the same for every side (0: torch default)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--dtype", choices=("fp32", "bf16", "fp16"), default="fp32",
                    help="our scorers' dtype; the baselines always run fp32 as the anchors do")
    ap.add_argument("--skip-baselines", action="store_true", help="GPU throughput only")
    ap.add_argument("--peak-tflops", type=float, help="the card's dense matmul peak (default: by device name)")
    ap.add_argument("--quick", action="store_true", help="200 prompts, 10 candidates, 2 layers, vocab 8k")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import torch

    from factatlas.probe.baselines import bmlama_pll_scores, mlama_independent_scores
    from factatlas.probe.mlm import MaskedLMScorer

    if args.threads:
        torch.set_num_threads(args.threads)
    args.threads = torch.get_num_threads()
    sizes = PRESETS[args.preset]
    if args.quick:
        args.prompts, args.candidates, args.bmlama_prompts = 200, 10, 40
        sizes = Sizes(layers=2, hidden=128, heads=2, intermediate=512, vocab=8000)
    sizes = Sizes(**{k: getattr(args, k) if getattr(args, k) is not None else v for k, v in vars(sizes).items()})
    queries, corpus = make_queries(args.prompts, args.candidates, args.seed)
    lm = build_model(sizes, corpus, args.device, args.dtype, args.seed, args.tokenizer_vocab)
    from factatlas.probe.slots import tokenize_slots

    lengths = [len(c) for s in tokenize_slots(lm.tokenizer, queries) for c in s.candidates]
    print(f"model: BERT {sizes.layers} layers, hidden {sizes.hidden}, vocab {lm.model.config.vocab_size}, "
          f"{args.device}/{args.dtype}, {args.threads} thread(s)")
    print(f"data: {len(queries)} prompts x {args.candidates} candidates; candidate tokens "
          f"mean {sum(lengths) / len(lengths):.2f}, max {max(lengths)}; "
          f"share multi-token {sum(n > 1 for n in lengths) / len(lengths):.0%}")

    indep = MaskedLMScorer(lm, "independent", batch_tokens=args.batch_tokens)
    pll = MaskedLMScorer(lm, "pll", batch_tokens=args.batch_tokens)
    indep.score(queries[:8])  # warm-up (allocator, kernels)
    results = {}
    ours_indep, t_indep = timed(lambda: indep.score(queries), args.device)
    ours_pll, t_pll = timed(lambda: pll.score(queries), args.device)
    print(f"ours  mlm-independent: {len(queries) / t_indep:9.1f} prompts/s ({t_indep:.2f} s)")
    print(f"ours  mlm-pll:         {len(queries) / t_pll:9.1f} prompts/s ({t_pll:.2f} s)")
    name = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    peak = args.peak_tflops or next((v for k, v in PEAK_TFLOPS.items() if k in name), None)
    for label, seconds in (("independent", t_indep), ("pll", t_pll)):
        tflops = pass_flops(lm, queries, label, args.batch_tokens, sizes) / seconds / 1e12
        share = f", {tflops / peak:.1%} of {peak:.0f} TFLOP/s {args.dtype} peak ({name})" if peak else ""
        print(f"      {label}: {tflops:.3f} TFLOP/s of matmul work achieved{share}")
    if args.skip_baselines:
        return 0

    ref_lm = lm
    if args.dtype != "fp32":  # the anchors run fp32: an fp32 copy of the same weights and tokenizer
        import copy

        from factatlas.probe.models import wrap_model

        ref_lm = wrap_model(copy.deepcopy(lm.model).float(), lm.tokenizer, name=lm.name, family="mlm")
    # Half precision reorders near-equal candidates: there a ranking may differ only between candidates
    # whose fp32 scores lie within HALF_PRECISION_TOL (mean log-probability, nats; bf16 keeps ~3 digits).
    tol = 1e-5 if args.dtype == "fp32" else HALF_PRECISION_TOL
    if args.dtype != "fp32":
        print(f"note: ours runs {args.dtype}, the anchors fp32: rankings must agree up to score gaps of {tol}")
    n_m = args.mlama_prompts or len(queries)
    sub = queries[:n_m]
    ref, t_ref = timed(lambda: mlama_independent_scores(ref_lm, sub), args.device)
    ours_sub = ours_indep[:n_m] if n_m == len(queries) else indep.score(sub)
    t_ours = t_indep * n_m / len(queries) if n_m == len(queries) else timed(lambda: indep.score(sub), args.device)[1]
    differ, bad = compare(sub, ours_sub, ref, tol=tol)
    if bad:
        print(f"FAILED: mLAMA-style rankings differ on {bad} prompts beyond gaps of {tol}", file=sys.stderr)
        return 1
    results["mlama"] = t_ref / t_ours
    print(f"mLAMA-style independent: {n_m / t_ref:9.1f} prompts/s ({t_ref:.2f} s) on {n_m} prompts; rankings "
          f"{'identical' if not differ else f'differ on {differ} ({bad} beyond near-ties)'}")
    print(f"RATIO independent-mask scorer vs mLAMA-style: {results['mlama']:.1f}x  (target >= 3x)")

    n_b = args.bmlama_prompts or len(queries)
    sub = queries[:n_b]
    ref, t_ref = timed(lambda: bmlama_pll_scores(ref_lm, sub), args.device)
    ours_sub, t_ours = timed(lambda: pll.score(sub), args.device)
    differ, bad = compare(sub, ours_sub, ref, tol=tol)
    if bad:
        print(f"FAILED: BMLAMA-style rankings differ on {bad} prompts beyond gaps of {tol}", file=sys.stderr)
        return 1
    results["bmlama"] = t_ref / t_ours
    print(f"BMLAMA-style per-candidate PLL: {n_b / t_ref:9.2f} prompts/s ({t_ref:.2f} s) on {n_b} prompts; "
          f"ours on the same {n_b}: {n_b / t_ours:.1f} prompts/s; rankings "
          f"{'identical' if not differ else f'differ on {differ} ({bad} beyond near-ties)'}")
    print(f"RATIO PLL scorer vs BMLAMA-style per-candidate loop: {results['bmlama']:.1f}x  (target >= 20x)")
    if n_b < len(queries):
        print(f"      (ours on all {len(queries)} prompts: {len(queries) / t_pll:.1f} prompts/s, "
              f"{(len(queries) / t_pll) / (n_b / t_ref):.1f}x the baseline's throughput)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
