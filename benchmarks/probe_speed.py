"""Our scorers vs the anchors' algorithms and vs the limit, for the SAME scoring rule, one process.

For each masked-LM rule three sides run on the same prompts:
- the **limit**: the bare encoder forward (no LM head, no scoring code) on exactly the passes the rule
  needs, in the same batches, tensors built beforehand; a scorer's throughput is printed as a fraction
  of it (it can pass 1.0: the scorer runs the last layer and the head only where it reads);
- ours: ``MaskedLMScorer(mode="independent" | "pll")``;
- the anchor: the mLAMA-style batching (independent) or the BMLAMA-style per-candidate loop (PLL: one
  pass per candidate token, batch 1, fp32, autograd on, NumPy softmax per scored token), on a subset,
  ours timed on the same subset for the ratio.
Causal rules get the same limit: the bare decoder forward (no LM head) on exactly the packed rows the rule
runs, in its batches, with its masks and position ids.
Rankings are checked first (fp32: identical up to numerical near-ties of 1e-5; bf16/fp16: differences
only where the fp32 reference's scores are within ``--half-tol``, stated in the output); nothing is timed
or printed as a ratio unless the check passes. Sides are timed interleaved, ``--repeats`` times, in
process CPU time (CUDA: wall time with synchronisation); min and median are printed, ratios use mins.
Threads: the project's rule (``factatlas.probe.threads``) unless ``--threads`` says otherwise.

Data: ``--data synthetic`` (cloze sentences over pseudo-words) or ``--data bmlama17`` (the BMLAMA-17
English prompts and candidates from ``../shared/reference/bmlama``, tokenizer trained on the prompts
without answers: about 84 % of candidates are multi-token at ``--tokenizer-vocab 1000``).

    python benchmarks/probe_speed.py --quick
    python benchmarks/probe_speed.py --data bmlama17 --prompts 600 --bmlama-prompts 30
    python benchmarks/probe_speed.py --device cuda --dtype bf16 --preset mbert          # GPU: mBERT shape
    python benchmarks/probe_speed.py --device cuda --dtype bf16 --preset llama-1b       # 1B-class causal
    python benchmarks/probe_speed.py --preset t5-tiny --prompts 600                      # seq2seq (CPU)

Seq2seq presets: the limit is the bare encoder once per prompt plus the bare teacher-forced decoder (no
LM head) on the scorer's own batches; ``+ head`` adds the vocabulary projection of as many rows as the
rule reads; the anchor is the BMLAMA-style mT5 loop (encoder and decoder again for every candidate).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

RELATIONS = (
    "The capital of {X} is [Y] .", "{X} was born in [Y] .", "[Y] is the official language of {X} .",
    "{X} is a member of [Y] .", "The religion of {X} is [Y] .", "{X} plays the [Y] .",
    "{X} died in the city of [Y] .", "[Y] is where {X} works .", "{X} is located in [Y] .",
    "The original language of {X} is [Y] .",
)
SYLLABLES = [c + v for c in "bcdfghjklmnprstvz" for v in "aeiou"] + ["ar", "el", "on", "is", "um", "an"]


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
    # a 1B-class decoder (TinyLlama-1.1B's shape), built from its config with random weights
    "llama-1b": Sizes(layers=22, hidden=2048, heads=32, intermediate=5632, vocab=32000),
    "llama-small": Sizes(layers=4, hidden=256, heads=8, intermediate=1024, vocab=30000),  # CPU-sized decoder
    # encoder-decoders (T5-shaped, mT5-style untied head, random weights); ``layers``: each stack's
    "t5-small": Sizes(layers=6, hidden=512, heads=8, intermediate=2048, vocab=32128),  # T5-small's shape
    "t5-tiny": Sizes(layers=4, hidden=256, heads=4, intermediate=1024, vocab=30000),  # CPU-sized
}
CAUSAL_PRESETS = {"llama-1b", "llama-small"}
SEQ2SEQ_PRESETS = {"t5-small", "t5-tiny"}


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
            gap = abs(b[pos[ra[first]]] - b[pos[rb[first]]])  # how close the reference found them
            if gap > tol:
                unexplained += 1
    return differ, unexplained


def pass_flops(lm, queries, mode: str, batch_tokens: int, sizes: Sizes) -> float:
    """Matmul FLOPs our scorer spends (its batches, attention, LM head on the read positions only)."""
    from factatlas.probe.mlm import plan_passes
    from factatlas.probe.slots import special_wrap, tokenize_slots

    wrap = special_wrap(lm.tokenizer)
    plan = plan_passes(tokenize_slots(lm.tokenizer, queries), mode, lm.tokenizer.mask_token_id, wrap.head, wrap.tail)
    from factatlas.probe.mlm import MaskedLMScorer

    partial = MaskedLMScorer(lm, mode)._last is not None  # last layer at the read positions only
    h, f = sizes.hidden, sizes.intermediate
    full_layers = sizes.layers - 1 if partial else sizes.layers
    total = 0.0
    for batch in plan.batches(batch_tokens):
        rows, width = batch.ids.shape
        tokens = width * rows
        reads = len(batch.cols)
        total += full_layers * (2 * tokens * (4 * h * h + 2 * h * f) + 4 * rows * width * width * h)
        if partial:  # keys and values everywhere; queries, output, feed-forward and attention at the reads
            total += 2 * tokens * 2 * h * h + 2 * reads * (2 * h * h + 2 * h * f) + 4 * reads * width * h
        total += 2 * reads * (h * h + h * sizes.vocab)
    return total


def pll_accounting(lm, queries, batch_tokens: int) -> dict[str, int]:
    """Where a PLL scorer's work goes against the per-candidate loop on the same prompts: the loop's passes
    (one per candidate token), ours (one per trie node, identical inputs of different prompts once), the
    tokens in our passes and in our batches (the difference is padding)."""
    from factatlas.probe.mlm import plan_passes
    from factatlas.probe.slots import special_wrap, tokenize_slots

    wrap = special_wrap(lm.tokenizer)
    slots = tokenize_slots(lm.tokenizer, queries)
    plan = plan_passes(slots, "pll", lm.tokenizer.mask_token_id, wrap.head, wrap.tail)
    return {"loop_passes": sum(len(c) for slot in slots for c in slot.candidates), "passes": len(plan.ids),
            "pass_tokens": sum(len(i) for i in plan.ids),
            "batch_tokens": sum(b.ids.size for b in plan.batches(batch_tokens))}


ROOT = Path(__file__).resolve().parents[1]
BMLAMA = next((p for p in (ROOT.parent / "shared" / "reference" / "bmlama", ROOT.parents[1] / "shared" / "reference" / "bmlama")
               if p.exists()), ROOT.parent / "shared" / "reference" / "bmlama")


def bmlama_queries(folder: Path, lang: str, n: int):
    """BMLAMA-17 prompts with their candidate lists (10 each), and the prompts without answers as corpus."""
    from factatlas.probe.protocol import ClozeQuery

    path = folder / "BMLAMA17" / f"{lang}.tsv"
    if not path.exists():
        raise SystemExit(f"--data bmlama17: {path} not found (pass --bmlama DIR)")
    queries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "Prompt" or fields[0].count("<mask>") != 1:
                continue
            queries.append(ClozeQuery(fields[0].replace("<mask>", "[Y]"), tuple(fields[2].split(", "))))
    corpus = [q.text.replace("[Y]", "") for q in queries]
    return queries[:n], corpus


def limit_batches(lm, queries, mode: str, batch_tokens: int):
    """The id tensors of exactly the passes ``mode`` needs, in the scorer's batches."""
    import torch

    from factatlas.probe.mlm import plan_passes
    from factatlas.probe.slots import special_wrap, tokenize_slots

    wrap = special_wrap(lm.tokenizer)
    plan = plan_passes(tokenize_slots(lm.tokenizer, queries), mode, lm.tokenizer.mask_token_id, wrap.head, wrap.tail)
    return [torch.from_numpy(b.ids).to(lm.device) for b in plan.batches(batch_tokens)]


def bare_forward(lm, batches) -> None:
    """The encoder on every pass: no LM head, no reads, no scoring."""
    import torch

    base = getattr(lm.model, lm.model.base_model_prefix)
    with torch.inference_mode():
        for ids in batches:
            base(input_ids=ids)


def limit_reads(lm, queries, mode: str) -> int:
    """How many positions ``mode`` reads (each goes through the vocabulary projection once)."""
    from factatlas.probe.mlm import plan_passes
    from factatlas.probe.slots import special_wrap, tokenize_slots

    wrap = special_wrap(lm.tokenizer)
    plan = plan_passes(tokenize_slots(lm.tokenizer, queries), mode, lm.tokenizer.mask_token_id, wrap.head, wrap.tail)
    return len(plan.read_pass)


def bare_forward_and_head(lm, batches, reads: int):
    """The bare encoder on every pass, then the vocabulary projection of exactly ``reads`` rows (random
    states, nothing normalised), ``HEAD_ROWS`` at a time as the scorer pools them: the products no exact
    scorer of the rule can skip. Per batch instead, a batch with a handful of reads would stream the whole
    vocabulary matrix for them and make the limit easier to approach."""
    import torch

    from factatlas.probe.mlm import HEAD_ROWS

    weight = lm.model.get_output_embeddings().weight
    chunks = [torch.randn(min(HEAD_ROWS, reads - i), weight.shape[1], dtype=weight.dtype, device=weight.device)
              for i in range(0, reads, HEAD_ROWS)]

    def run() -> None:
        bare_forward(lm, batches)
        with torch.inference_mode():
            for h in chunks:
                h @ weight.t()
    return run


def clock_for(device: str):
    """Process CPU time on CPU (the box is shared), synchronised wall time on CUDA."""
    import torch

    if device == "cuda":
        def now() -> float:
            torch.cuda.synchronize()
            return time.perf_counter()
        return now
    return time.process_time


def interleaved(sides: dict, repeats: int, device: str, now=None) -> dict[str, list[float]]:
    """Every side once per round, rounds repeated: load changes hit all sides alike."""
    now = now or clock_for(device)
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(repeats):
        for name, fn in sides.items():
            t0 = now()
            fn()
            times[name].append(now() - t0)
    return times


def with_threads(fn, n: int):
    """``fn`` run on ``n`` torch threads, whatever the project's rule would pick (its override variable)."""
    import os

    import torch

    from factatlas.probe.threads import ENV

    def run() -> None:
        before, env = torch.get_num_threads(), os.environ.get(ENV)
        os.environ[ENV] = str(n)
        torch.set_num_threads(n)
        try:
            fn()
        finally:
            torch.set_num_threads(before)
            if env is None:
                del os.environ[ENV]
            else:
                os.environ[ENV] = env
    return run


def thread_scaling(rules: dict, repeats: int, counts: tuple[int, ...] = (1, 2)) -> None:
    """Per rule (name -> its scoring call), wall-clock time on 1 and 2 threads, interleaved; the speed-up
    of the medians. Wall time is what threads buy; on a shared box it is only as good as the load lets it
    be, so the load average is printed with it."""
    import os

    sides = {f"{rule} on {n} thread(s)": with_threads(fn, n) for rule, fn in rules.items() for n in counts}
    for fn in sides.values():
        fn()  # warm-up: each thread count's kernels
    load = os.getloadavg()[0]
    times = interleaved(sides, repeats, "cpu", now=time.perf_counter)
    load = (load + os.getloadavg()[0]) / 2
    for name, ts in times.items():
        print(f"  {name:<42} wall {stats(ts)}")
    for rule in rules:
        one = statistics.median(times[f"{rule} on {counts[0]} thread(s)"])
        for n in counts[1:]:
            print(f"THREADS {rule}: {one / statistics.median(times[f'{rule} on {n} thread(s)']):.2f}x wall-clock "
                  f"speed-up with {n} threads over {counts[0]} (medians of {repeats}; {os.cpu_count()} CPUs, "
                  f"load average {load:.1f} while measured{': the box was loaded' if load > 1.5 else ''})")


def measured_peak_tflops(device: str, dtype: str, size: int = 8192, repeats: int = 10) -> float:
    """The best dense matmul rate this device reaches in ``dtype`` (square ``size`` matrices)."""
    import torch

    from factatlas.probe.models import torch_dtype

    a = torch.randn(size, size, device=device, dtype=torch_dtype(dtype))
    b = torch.randn(size, size, device=device, dtype=torch_dtype(dtype))
    now = clock_for(device)
    best = float("inf")
    for _ in range(repeats):
        t0 = now()
        a @ b
        best = min(best, now() - t0)
    return 2 * size**3 / best / 1e12


def build_causal(sizes: Sizes, corpus, device: str, dtype: str, seed: int, tokenizer_vocab: int):
    """A Llama-shaped decoder from its config (random weights, no download) with a BPE tokenizer."""
    import torch
    import transformers

    from factatlas.probe.models import torch_dtype, wrap_model
    from factatlas.probe.tiny import train_tokenizer

    tok = train_tokenizer(corpus, "gpt2", vocab_size=tokenizer_vocab)
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(
        vocab_size=max(sizes.vocab, len(tok)), hidden_size=sizes.hidden, num_hidden_layers=sizes.layers,
        num_attention_heads=sizes.heads, num_key_value_heads=max(1, sizes.heads // 8),
        intermediate_size=sizes.intermediate, max_position_embeddings=2048, bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    with torch.device(device):
        model = transformers.LlamaForCausalLM(config).to(dtype=torch_dtype(dtype)).eval()
    return wrap_model(model, tok, name=f"random-llama-{sizes.layers}x{sizes.hidden}", family="causal")


def build_seq2seq(sizes: Sizes, corpus, device: str, dtype: str, seed: int, tokenizer_vocab: int):
    """A T5-shaped encoder-decoder from its config (random weights, untied head as mT5's, no download) with
    a Unigram tokenizer that has the sentinels; ``sizes.layers`` in each stack."""
    import torch
    import transformers

    from factatlas.probe.models import torch_dtype, wrap_model
    from factatlas.probe.tiny import train_tokenizer

    tok = train_tokenizer(corpus, "t5", vocab_size=tokenizer_vocab)
    torch.manual_seed(seed)
    config = transformers.T5Config(
        vocab_size=max(sizes.vocab, len(tok)), d_model=sizes.hidden, d_kv=sizes.hidden // sizes.heads,
        d_ff=sizes.intermediate, num_layers=sizes.layers, num_heads=sizes.heads, feed_forward_proj="gated-gelu",
        tie_word_embeddings=False, pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id,
        decoder_start_token_id=tok.pad_token_id)
    with torch.device(device):
        model = transformers.T5ForConditionalGeneration(config).to(dtype=torch_dtype(dtype)).eval()
    return wrap_model(model, tok, name=f"random-t5-{sizes.layers}x{sizes.hidden}", family="seq2seq")


def seq2seq_limit_inputs(lm, scorer, queries) -> list[dict]:
    """The scorer's batches as device tensors, built beforehand: encoder ids and mask, each candidate row's
    prompt index, the decoder's input and mask, and the number of read rows."""
    from factatlas.probe.batching import long_tensor, on_device
    from factatlas.probe.slots import tokenize_slots

    return [{"ids": on_device(b.ids, lm.device), "mask": on_device(b.mask, lm.device),
             "index": long_tensor(b.row_prompt, lm.device), "dec_in": on_device(b.decoder_in, lm.device),
             "dec_mask": on_device(b.decoder_mask, lm.device), "reads": len(b.read_rows)}
            for b in scorer.plan(tokenize_slots(lm.tokenizer, queries))]


def bare_seq2seq_forward(lm, inputs: list[dict], head: bool = False):
    """The encoder once per prompt and the teacher-forced decoder on every candidate row (the encoder states
    selected per row, as the scorer does), no LM head, no reads; with ``head``, plus the vocabulary
    projection of as many rows as the rule reads (random states, nothing normalised)."""
    import torch

    encoder, decoder = lm.model.get_encoder(), lm.model.get_decoder()
    weight = lm.model.get_output_embeddings().weight
    states = [torch.randn(kw["reads"], weight.shape[1], dtype=weight.dtype, device=weight.device) if head else None
              for kw in inputs]

    def run() -> None:
        with torch.inference_mode():
            for kw, h in zip(inputs, states, strict=True):
                enc = encoder(input_ids=kw["ids"], attention_mask=kw["mask"]).last_hidden_state
                decoder(input_ids=kw["dec_in"], attention_mask=kw["dec_mask"], encoder_hidden_states=enc[kw["index"]],
                        encoder_attention_mask=kw["mask"][kw["index"]], use_cache=False)
                if h is not None:
                    h @ weight.t()
    return run


def seq2seq_flops(lm, scorer, queries) -> float:
    """Matmul FLOPs of the seq2seq rule as it runs (padding included): 2 x the encoder's parameters per
    encoder position; 2 x the decoder's per decoder position, but its cross-attention keys and values,
    which run per encoder position of every candidate row; the head on the read rows; attention scores
    left out (at these lengths a few per cent)."""
    from factatlas.probe.slots import tokenize_slots

    model = lm.model
    embed = model.get_input_embeddings().weight.numel()
    enc_params = sum(p.numel() for p in model.get_encoder().parameters()) - embed
    cross_kv = sum(p.numel() for name, p in model.get_decoder().named_parameters()
                   if any(k in name for k in ("EncDecAttention.k.", "EncDecAttention.v.", "encoder_attn.k_proj.",
                                              "encoder_attn.v_proj.")))
    dec_params = sum(p.numel() for p in model.get_decoder().parameters()) - embed - cross_kv
    total = 0.0
    for b in scorer.plan(tokenize_slots(lm.tokenizer, queries)):
        rows, width = len(b.row_prompt), b.ids.shape[1]
        total += 2.0 * enc_params * b.ids.numel() + 2.0 * dec_params * b.decoder_in.numel()
        total += 2.0 * cross_kv * rows * width + 2.0 * model.get_output_embeddings().weight.numel() * len(b.read_rows)
    return total


def seq2seq_main(args, lm, queries, peak: float | None) -> int:
    from factatlas.probe.baselines import seq2seq_per_candidate_scores
    from factatlas.probe.seq2seq import Seq2SeqScorer, decoder_split

    scorer = Seq2SeqScorer(lm, batch_tokens=args.batch_tokens)
    full = Seq2SeqScorer(lm, batch_tokens=args.batch_tokens, full_logits=True)  # the previous way
    padding = Seq2SeqScorer(lm, batch_tokens=args.batch_tokens, additive_masks=False)  # 0/1 masks, as before
    print(f"decoder/head split: {'yes' if decoder_split(lm) else 'no (the model forward, full logits)'}")
    tol = 1e-5 if args.dtype == "fp32" else args.half_tol
    scorer.score(queries)
    full.score(queries)  # warm-up
    if not check("seq2seq read rows vs full logits", queries, scorer.score(queries), full.score(queries), False, tol):
        print("FAILED: the two paths rank differently; no ratio printed", file=sys.stderr)
        return 1
    if not check("seq2seq 4-D additive masks vs 0/1 masks", queries, scorer.score(queries), padding.score(queries),
                 False, tol):
        print("FAILED: the two mask forms rank differently; no ratio printed", file=sys.stderr)
        return 1
    sub = queries[: args.bmlama_prompts]
    inputs = seq2seq_limit_inputs(lm, scorer, queries)
    sides = {"ours seq2seq": lambda: scorer.score(queries),
             "ours seq2seq, full logits (before)": lambda: full.score(queries),
             "ours seq2seq, 0/1 masks (before)": lambda: padding.score(queries),
             "limit seq2seq": bare_seq2seq_forward(lm, inputs),
             "limit seq2seq + head": bare_seq2seq_forward(lm, inputs, head=True)}
    if not args.skip_baselines:
        ref_lm = lm
        if args.dtype != "fp32":
            import copy

            from factatlas.probe.models import wrap_model

            ref_lm = wrap_model(copy.deepcopy(lm.model).float(), lm.tokenizer, name=lm.name, family="seq2seq")
        if not check("seq2seq vs per-candidate loop", sub, scorer.score(sub), seq2seq_per_candidate_scores(ref_lm, sub),
                     args.dtype != "fp32", tol):
            print("FAILED: rankings differ beyond the tolerance; no ratio printed", file=sys.stderr)
            return 1
        sides["ours seq2seq (subset)"] = lambda: scorer.score(sub)
        sides["per-candidate loop"] = lambda: seq2seq_per_candidate_scores(ref_lm, sub)
    rates = {"seq2seq": "ours seq2seq"}
    rate_flops = add_rate_sides(sides, rates, args.device, args.dtype)
    times = interleaved(sides, args.repeats, args.device)
    for name, ts in times.items():
        k = len(sub) if "subset" in name or "loop" in name else len(queries)
        print(f"  {name:<38} {stats(ts)}  {k / min(ts):9.1f} prompts/s")
    t = min(times["ours seq2seq"])
    line = (f"RATIO seq2seq: {len(queries) / t:.1f} prompts/s; {min(times['limit seq2seq']) / t:.2f} of the limit "
            f"(bare encoder once per prompt + bare decoder on its batches), {min(times['limit seq2seq + head']) / t:.2f} "
            f"of it plus the head's product at the read rows (which alone caps the first at "
            f"{min(times['limit seq2seq']) / min(times['limit seq2seq + head']):.2f}); "
            f"{min(times['ours seq2seq, full logits (before)']) / t:.2f}x the full-logits path (before); "
            f"{min(times['ours seq2seq, 0/1 masks (before)']) / t:.2f}x the 0/1 padding masks (before)")
    if peak:
        tflops = seq2seq_flops(lm, scorer, queries) / t / 1e12
        line += f"; {tflops:.1f} TFLOP/s = {tflops / peak:.1%} of the measured {args.dtype} peak"
    if not args.skip_baselines:
        line += f"; {min(times['per-candidate loop']) / min(times['ours seq2seq (subset)']):.1f}x the loop"
    print(line)
    print_rates(rates, rate_flops, times)
    return 0


def causal_flops(lm, queries) -> float:
    """Matmul FLOPs of the continuation rule: 2 x non-embedding parameters per token computed (prefix once
    per prompt, candidate tokens from the cache) plus the head on the scored positions."""
    from factatlas.probe.causal import context_start
    from factatlas.probe.slots import tokenize_slots

    model = lm.model
    head = model.get_output_embeddings().weight.numel()
    body = sum(p.numel() for p in model.parameters()) - head - model.get_input_embeddings().weight.numel()
    tokens = scored = 0
    for s in tokenize_slots(lm.tokenizer, queries):
        tokens += len(context_start(lm.tokenizer, s.prefix)) + sum(len(c) - 1 for c in s.candidates)
        scored += 1 + sum(len(c) - 1 for c in s.candidates)
    return 2.0 * body * tokens + 2.0 * head * scored


def record_products(fn):
    """Every matrix product ``fn()`` runs (linear layers, mm/addmm/bmm/matmul, scaled-dot-product
    attention), as (kind, shapes, flags) with their counts, recorded once through torch's dispatcher."""
    import collections

    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    aten = torch.ops.aten
    seen: collections.Counter = collections.Counter()

    def shape(t):
        return tuple(t.shape), t.dtype, str(t.device)

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            op = func.overloadpacket  # any overload: the default, ``out=`` (a reused buffer)
            if op is aten.linear:
                seen[("linear", shape(args[0]), shape(args[1]), len(args) > 2 and args[2] is not None)] += 1
            elif op in (aten.mm, aten.bmm, aten.matmul):
                seen[("mm", shape(args[0]), shape(args[1]), args[1].is_contiguous())] += 1
            elif op in (aten.addmm, aten.baddbmm):
                seen[("addmm", shape(args[1]), shape(args[2]), (shape(args[0]), args[2].is_contiguous()))] += 1
            elif op is aten.scaled_dot_product_attention:
                mask = args[3] if len(args) > 3 else kwargs.get("attn_mask")
                flags = (shape(mask) if mask is not None else None, bool(kwargs.get("is_causal", False)),
                         bool(kwargs.get("enable_gqa", False)))
                seen[("sdpa", shape(args[0]), shape(args[1]), flags)] += 1
            return func(*args, **kwargs)

    with Recorder():
        fn()
    return dict(seen)

def product_flops(key) -> float:
    """Multiply-add FLOPs of one recorded product (attention: QK^T and PV)."""
    import math

    kind, (a, _, _), (b, _, _), _ = key
    if kind == "linear":
        return 2.0 * math.prod(a) * b[0]
    if kind in ("mm", "addmm"):
        return 2.0 * math.prod(a) * b[-1]
    return 4.0 * math.prod(a) * b[-2]  # sdpa: q [.., heads, Lq, D], k [.., Lk, D]


def replay_products(products: dict):
    """A function running every recorded product as often as it ran, on random inputs of its shapes
    (built beforehand): the box's matmul rate at exactly the scorer's shapes."""
    import torch

    calls = []
    for key, count in products.items():
        kind, (a, dt, dev), (b, _, _), extra = key

        def rand(s, dt=dt, dev=dev, rows_first: bool = True):  # else a transposed view, as a weight's .t()
            if rows_first or len(s) < 2:
                return torch.randn(s, dtype=dt, device=dev)
            return torch.randn((*s[:-2], s[-1], s[-2]), dtype=dt, device=dev).transpose(-1, -2)

        if kind == "linear":
            x, w, bias = rand(a), rand(b), rand(b[:1]) if extra else None
            calls.append((lambda x=x, w=w, bias=bias: torch.nn.functional.linear(x, w, bias), count))
        elif kind == "mm":
            x, y = rand(a), rand(b, rows_first=extra)
            calls.append((lambda x=x, y=y: torch.matmul(x, y), count))
        elif kind == "addmm":
            x, y, c = rand(a), rand(b, rows_first=extra[1]), rand(extra[0][0])
            calls.append((lambda x=x, y=y, c=c: torch.addmm(c, x, y) if x.dim() == 2 else torch.baddbmm(c, x, y), count))
        else:
            mask_shape, causal, gqa = extra
            q, k, v = rand(a), rand(b), rand(b)
            mask = torch.zeros(mask_shape[0], dtype=mask_shape[1], device=dev) if mask_shape else None
            calls.append((lambda q=q, k=k, v=v, m=mask, c=causal, g=gqa: torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=m, is_causal=c, enable_gqa=g), count))

    def run() -> None:
        with torch.inference_mode():
            for fn, count in calls:
                for _ in range(count):
                    fn()
    return run


def square_gemm(device: str, dtype: str, size: int = 2048):
    """One ``size``-cubed matrix product (the rate quoted as the box's peak)."""
    import torch

    from factatlas.probe.models import torch_dtype

    a = torch.randn(size, size, device=device, dtype=torch_dtype(dtype))
    b = torch.randn(size, size, device=device, dtype=torch_dtype(dtype))
    return lambda: a @ b


def add_rate_sides(sides: dict, rules: dict[str, str], device: str, dtype: str) -> dict[str, float]:
    """Per rule (name -> the side that scores with it), the products that side runs, recorded once, and a
    side replaying them at their shapes; plus the 2048-cubed product. Returns each rule's matmul FLOPs."""
    flops = {}
    for rule, side in rules.items():
        products = record_products(sides[side])
        flops[rule] = sum(product_flops(k) * n for k, n in products.items())
        sides[f"products of {rule} at its shapes"] = replay_products(products)
    sides["2048^3 matmul"] = square_gemm(device, dtype)
    return flops


def print_rates(rules: dict, flops: dict[str, float], times: dict[str, list[float]],
                peak_tflops: float | None = None) -> None:
    """The matmul rate each scorer reached (its products' FLOPs over its own time) beside the rate the box
    reaches on the same products alone and on a 2048-cubed product, all from the same interleaved rounds.
    On a GPU the 2048-cubed product takes microseconds, too little to time, so the reference there is the
    device's measured peak (``peak_tflops``, from an 8192-cubed product)."""
    square = 2 * 2048**3 / min(times["2048^3 matmul"]) / 1e9
    for rule, side in rules.items():
        ours = flops[rule] / min(times[side]) / 1e9
        alone = flops[rule] / min(times[f"products of {rule} at its shapes"]) / 1e9
        reference = (f"{alone / (peak_tflops * 1e3):.0%} of the measured peak, {peak_tflops:.0f} TFLOP/s"
                     if peak_tflops else f"{alone / square:.0%} of the 2048^3 rate, {square:.1f} GFLOP/s")
        print(f"RATE {rule}: {flops[rule] / 1e9:.1f} GFLOP of matrix products (linear layers, head, attention); "
              f"ours {ours:.1f} GFLOP/s; the same products alone at their shapes {alone:.1f} GFLOP/s "
              f"({reference}); ours reaches {ours / alone:.0%} of its shapes' rate")


def stats(ts: list[float]) -> str:
    return f"min {min(ts):8.3f} s, median {statistics.median(ts):8.3f} s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", choices=("synthetic", "bmlama17"), default="synthetic")
    ap.add_argument("--bmlama", type=Path, default=BMLAMA, help="folder holding BMLAMA17/*.tsv")
    ap.add_argument("--prompts", type=int, default=2000)
    ap.add_argument("--candidates", type=int, default=20, help="synthetic data only (BMLAMA-17 has 10)")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="small")
    ap.add_argument("--layers", type=int)
    ap.add_argument("--hidden", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--intermediate", type=int)
    ap.add_argument("--vocab", type=int)
    ap.add_argument("--tokenizer-vocab", type=int, default=1000,
                    help="tokenizer vocabulary trained on the prompts (smaller = more multi-token candidates)")
    ap.add_argument("--bmlama-prompts", type=int, default=40,
                    help="prompts for the per-candidate PLL loop; ours is timed on the same subset")
    ap.add_argument("--mlama-prompts", type=int, default=200, help="prompts for the mLAMA-style baseline")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=0,
                    help="torch CPU threads for every side (0: the project's rule, factatlas.probe.threads)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--dtype", choices=("fp32", "bf16", "fp16"), default="fp32",
                    help="our scorers' dtype; the anchors always run fp32 as they do")
    ap.add_argument("--half-tol", type=float, default=0.05,
                    help="bf16/fp16: rankings may differ only where the fp32 reference's scores are this close (nats)")
    ap.add_argument("--thread-scaling", action="store_true",
                    help="only the wall-clock speed-up of each rule with 2 threads over 1 (CPU)")
    ap.add_argument("--generation", action="store_true",
                    help="only greedy generation: our loop against transformers' generate, batched and one prompt at a time")
    ap.add_argument("--max-new-tokens", type=int, default=8, help="--generation: new tokens per answer")
    ap.add_argument("--stop-strings", nargs="+", default=["auto"],
                    help="--generation: a row stops at the first of these in its new text (auto: the line break and "
                         "the character pair straddling a token boundary in the most unstopped answers)")
    ap.add_argument("--skip-baselines", action="store_true", help="GPU throughput only (no anchors, no check)")
    ap.add_argument("--quick", action="store_true", help="200 prompts, 10 candidates, 2 layers, vocab 8k")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    import torch

    from factatlas.probe.threads import model_threads

    sizes = PRESETS[args.preset]
    if args.quick:
        args.prompts, args.candidates, args.bmlama_prompts, args.mlama_prompts = 200, 10, 20, 100
        sizes = Sizes(layers=2, hidden=128, heads=2, intermediate=512, vocab=8000)
    sizes = Sizes(**{k: getattr(args, k) if getattr(args, k) is not None else v for k, v in vars(sizes).items()})
    if args.generation and args.vocab is None:
        # a random model over the preset's vocabulary emits ids the tokenizer does not have (text: nothing), so
        # answers would seldom meet a stop string: the model's vocabulary is the tokenizer's here
        sizes = Sizes(**{**vars(sizes), "vocab": 0})
    if args.data == "bmlama17":
        queries, corpus = bmlama_queries(args.bmlama, "en", args.prompts)
    else:
        queries, corpus = make_queries(args.prompts, args.candidates, args.seed)
    causal = args.preset in CAUSAL_PRESETS
    seq2seq = args.preset in SEQ2SEQ_PRESETS
    builder = build_causal if causal else build_seq2seq if seq2seq else build_model
    lm = builder(sizes, corpus, args.device, args.dtype, args.seed, args.tokenizer_vocab)
    threads = args.threads or model_threads(lm.model, args.device)
    if threads:
        torch.set_num_threads(threads)
    from factatlas.probe.slots import tokenize_slots

    lengths = [len(c) for s in tokenize_slots(lm.tokenizer, queries) for c in s.candidates]
    params = sum(p.numel() for p in lm.model.parameters())
    print(f"model: {type(lm.model).__name__} {sizes.layers} layers, hidden {sizes.hidden}, vocab "
          f"{lm.model.config.vocab_size}, {params / 1e6:.1f}M parameters, {args.device}/{args.dtype}, "
          f"{torch.get_num_threads()} thread(s)")
    print(f"data: {args.data}, {len(queries)} prompts x {len(queries[0].forms)} candidates; candidate tokens "
          f"mean {sum(lengths) / len(lengths):.2f}, max {max(lengths)}; "
          f"share multi-token {sum(n > 1 for n in lengths) / len(lengths):.0%}")
    peak = None
    if args.device == "cuda":
        peak = measured_peak_tflops(args.device, args.dtype)
        print(f"device: {torch.cuda.get_device_name()}, measured dense {args.dtype} matmul peak {peak:.0f} TFLOP/s")
    if args.thread_scaling:
        return scaling_main(args, lm, queries, causal)
    if args.generation:
        return generation_main(args, lm, queries)
    if seq2seq:
        return seq2seq_main(args, lm, queries, peak)
    if causal:
        return causal_main(args, lm, queries, peak)
    return mlm_main(args, lm, queries, sizes, peak)


def hf_stop_strings_generate(lm, encoded, batches, stops, max_new_tokens: int) -> list[str]:
    """transformers' ``generate`` with its own ``stop_strings`` (and the tokenizer), on our token ids in our
    left-padded batches: only the stopping differs from ours. Answers decoded as ours are (not cut)."""
    import torch

    tok, model = lm.tokenizer, lm.model
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    out = [""] * len(encoded)
    with torch.inference_mode():
        for batch in batches:
            width = max(len(encoded[i]) for i in batch)
            ids = torch.tensor([[pad_id] * (width - len(encoded[i])) + list(encoded[i]) for i in batch], device=lm.device)
            mask = torch.tensor([[0] * (width - len(encoded[i])) + [1] * len(encoded[i]) for i in batch], device=lm.device)
            gen = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, num_beams=1,
                                 max_new_tokens=max_new_tokens, pad_token_id=pad_id, stop_strings=list(stops),
                                 tokenizer=tok)
            gen = gen[:, width:] if lm.family == "causal" else gen
            for r, i in enumerate(batch):
                out[i] = tok.decode(gen[r].tolist(), skip_special_tokens=True).strip()
    return out


def auto_stop_strings(lm, prompts, args) -> tuple[str, ...]:
    """The line break and the two characters that straddle a token boundary in the most unstopped answers
    (a random model seldom writes a line break): rows then stop at different steps, many of them on a stop
    string split across two tokens. Not U+FFFD: a byte-level token that ends inside a character decodes to
    it until the next token completes the character, so no real stop string holds it; no space either (a
    stop string ending in one gets no token filter, ``generative.completing_tokens``)."""
    import collections

    from factatlas.probe.generative import GreedyGenerator

    gen = GreedyGenerator(lm, max_new_tokens=args.max_new_tokens, batch_tokens=args.batch_tokens)
    gen.stop_at_first_line = False
    tok = lm.tokenizer
    counts: collections.Counter = collections.Counter()
    for text in gen.generate(prompts):
        ids = tok(text, add_special_tokens=False)["input_ids"]
        pieces = [tok.decode([i]) for i in ids]
        pairs = {a[-1] + b[0] for a, b in zip(pieces[:-1], pieces[1:], strict=True)
                 if a and b and (a[-1] + b[0]).isprintable() and not any(c.isspace() for c in a[-1] + b[0])
                 and "\ufffd" not in a[-1] + b[0]}
        counts.update(pairs)
    best = [pair for pair, _ in counts.most_common(1)]
    return ("\n", *best)


def generation_main(args, lm, queries) -> int:
    """``--generation``: the generative rules' greedy decoding (``GreedyGenerator``: left-padded batches
    under ``--batch-tokens``, the model's KV cache, rows stopping at ``--stop-strings``), our own loop
    (``decoding.greedy_decode``: rows that have ended leave the batch) against transformers' ``generate``
    (``decoder="transformers"``), each batched and one prompt at a time, against ours without stopping,
    and against ``generate`` with its own ``stop_strings`` (batched in our batches, and one prompt at a
    time), on the prompts cut at the slot; answers compared first (transformers' cut at the first stop
    string as ours are), then all timed interleaved (process CPU, or CUDA events)."""
    from factatlas.probe.batching import token_budget_batches
    from factatlas.probe.generative import GreedyGenerator, cut_at_stop, stop_index

    prompts = [q.left.rstrip() for q in queries]
    stops = tuple(args.stop_strings) if args.stop_strings != ["auto"] else auto_stop_strings(lm, prompts, args)

    def generator(decoder: str, stopping: bool = True) -> GreedyGenerator:
        g = GreedyGenerator(lm, max_new_tokens=args.max_new_tokens, batch_tokens=args.batch_tokens,
                            stop_strings=stops, decoder=decoder)
        g.stop_at_first_line = stopping  # False: every row decodes to its EOS or max_new_tokens
        return g

    gen, hf, full = generator("ours"), generator("transformers"), generator("ours", stopping=False)
    encoded = gen.encode(prompts)
    batches = token_budget_batches([len(e) + args.max_new_tokens for e in encoded], args.batch_tokens)
    ones = [[i] for i in range(len(prompts))]
    batched = gen.generate(prompts)
    rows_per_step = gen.last_rows_per_step  # of the last batch
    unstopped = full.generate(prompts)
    references = {"ours one prompt at a time": [gen.generate([p])[0] for p in prompts],
                  "generate batched": hf.generate(prompts),
                  "generate one prompt at a time": [hf.generate([p])[0] for p in prompts],
                  "ours without stopping, cut": [cut_at_stop(a, stops) for a in unstopped],
                  "transformers stop_strings, batched": [cut_at_stop(a, stops) for a in hf_stop_strings_generate(
                      lm, encoded, batches, stops, args.max_new_tokens)],
                  "transformers stop_strings, one at a time": [cut_at_stop(a, stops) for a in hf_stop_strings_generate(
                      lm, encoded, ones, stops, args.max_new_tokens)]}
    differ = 0
    for name, ref in references.items():
        n = sum(a != b for a, b in zip(batched, ref, strict=True))
        differ += n
        print(f"check generation ours batched vs {name}: {len(prompts) - n} of {len(prompts)} answers equal")
    print(f"stop strings {stops!r}: {sum(stop_index(u, stops) is not None for u in unstopped)} of {len(prompts)} "
          f"answers without stopping run past one; {len(batches)} batches; rows per forward, last batch: "
          f"{' '.join(map(str, rows_per_step))}")
    if gen.fallbacks:
        print(f"note: our loop fell back to generate for {gen.fallbacks} batches (generation config)")
    if differ:
        print("FAILED: batched answers differ; no ratio printed", file=sys.stderr)
        return 1
    sides = {"ours batched": lambda: gen.generate(prompts),
             "ours batched, no stopping": lambda: full.generate(prompts),
             "ours one prompt at a time": lambda: [gen.generate([p]) for p in prompts],
             "generate batched": lambda: hf.generate(prompts),
             "generate one prompt at a time": lambda: [hf.generate([p]) for p in prompts],
             "transformers stop_strings, batched": lambda: hf_stop_strings_generate(
                 lm, encoded, batches, stops, args.max_new_tokens),
             "transformers stop_strings, one at a time": lambda: hf_stop_strings_generate(
                 lm, encoded, ones, stops, args.max_new_tokens)}
    times = interleaved(sides, args.repeats, args.device)
    for name, ts in times.items():
        print(f"  {name:<42} {stats(ts)}  {len(prompts) / min(ts):9.1f} prompts/s")
    best = {name: min(ts) for name, ts in times.items()}
    t = best["ours batched"]
    print(f"RATIO generation: ours batched {best['generate batched'] / t:.2f}x generate batched alike, "
          f"{best['generate one prompt at a time'] / t:.2f}x generate one prompt at a time, "
          f"{best['ours one prompt at a time'] / t:.2f}x ours one prompt at a time, "
          f"{best['transformers stop_strings, batched'] / t:.2f}x transformers' stop_strings batched, "
          f"{best['ours batched, no stopping'] / t:.2f}x ours without stopping; ours one at a time "
          f"{best['generate one prompt at a time'] / best['ours one prompt at a time']:.2f}x generate one at a "
          f"time ({args.max_new_tokens} new tokens, {len(prompts)} prompts, stop strings {stops!r}, "
          f"{'CUDA' if args.device == 'cuda' else 'process CPU'}, mins)")
    return 0


def scaling_main(args, lm, queries, causal: bool) -> int:
    """``--thread-scaling``: every rule of the model's family, 1 thread against 2."""
    if lm.family == "seq2seq":
        from factatlas.probe.seq2seq import Seq2SeqScorer

        scorers = {"seq2seq": Seq2SeqScorer(lm, batch_tokens=args.batch_tokens)}
    elif causal:
        from factatlas.probe.causal import CausalLMScorer, SentenceLegacyScorer

        scorers = {"causal-mean": CausalLMScorer(lm, "mean", batch_tokens=args.batch_tokens),
                   "causal-sum": CausalLMScorer(lm, "sum", batch_tokens=args.batch_tokens),
                   "causal-sentence-legacy": SentenceLegacyScorer(lm, batch_tokens=args.batch_tokens)}
    else:
        from factatlas.probe.mlm import MaskedLMScorer

        scorers = {mode: MaskedLMScorer(lm, mode, batch_tokens=args.batch_tokens) for mode in ("independent", "pll")}
    thread_scaling({rule: (lambda s=s: s.score(queries)) for rule, s in scorers.items()}, args.repeats)
    return 0


def check(label: str, queries, ours, reference, half: bool, tol: float) -> bool:
    differ, bad = compare(queries, ours, reference, tol=tol)
    verdict = "identical" if not differ else f"differ on {differ} ({bad} beyond near-ties of {tol:g})"
    print(f"check {label}: rankings {verdict} on {len(queries)} prompts"
          + (f" (ours {'half precision'} vs the fp32 anchor, tolerance {tol:g} nats)" if half else ""))
    return bad == 0


def mlm_main(args, lm, queries, sizes: Sizes, peak: float | None) -> int:
    from factatlas.probe.baselines import bmlama_pll_scores, mlama_independent_scores
    from factatlas.probe.mlm import MaskedLMScorer

    scorers = {mode: MaskedLMScorer(lm, mode, batch_tokens=args.batch_tokens) for mode in ("independent", "pll")}
    limits = {mode: limit_batches(lm, queries, mode, args.batch_tokens) for mode in scorers}
    sub_m, sub_b = queries[: args.mlama_prompts], queries[: args.bmlama_prompts]
    sides = {}
    for mode, scorer in scorers.items():
        sides[f"limit {mode}"] = lambda b=limits[mode]: bare_forward(lm, b)
        sides[f"limit {mode} + head"] = bare_forward_and_head(lm, limits[mode], limit_reads(lm, queries, mode))
        sides[f"ours {mode}"] = lambda s=scorer: s.score(queries)
        if scorer._first is not None:  # the first layer's projections at every position, as before
            everywhere = MaskedLMScorer(lm, mode, batch_tokens=args.batch_tokens, shared_first_layer=False)
            if not check(f"{mode} vs first layer everywhere", queries, scorer.score(queries), everywhere.score(queries),
                         args.dtype != "fp32", args.half_tol if args.dtype != "fp32" else 1e-5):
                print("FAILED: the shared first layer ranks differently; no ratio printed", file=sys.stderr)
                return 1
            sides[f"ours {mode}, first layer everywhere"] = lambda s=everywhere: s.score(queries)
    if not args.skip_baselines:
        ref_lm = lm
        if args.dtype != "fp32":  # the anchors run fp32: an fp32 copy of the same weights and tokenizer
            import copy

            from factatlas.probe.models import wrap_model

            ref_lm = wrap_model(copy.deepcopy(lm.model).float(), lm.tokenizer, name=lm.name, family="mlm")
        half = args.dtype != "fp32"
        tol = args.half_tol if half else 1e-5
        # correctness first: nothing is timed unless both rules rank as their anchors do
        ok = check("independent vs mLAMA-style", sub_m, scorers["independent"].score(sub_m),
                   mlama_independent_scores(ref_lm, sub_m), half, tol)
        loop_scores = bmlama_pll_scores(ref_lm, sub_b)
        per_batch = MaskedLMScorer(lm, "pll", batch_tokens=args.batch_tokens, head_rows=None)
        ok &= check("pll vs BMLAMA-style loop", sub_b, scorers["pll"].score(sub_b), loop_scores, half, tol)
        ok &= check("pll, head per batch, vs BMLAMA-style loop", sub_b, per_batch.score(sub_b), loop_scores,
                    half, tol)
        if not ok:
            print("FAILED: rankings differ beyond the tolerance; no ratio printed", file=sys.stderr)
            return 1
        sides["ours independent (mLAMA subset)"] = lambda: scorers["independent"].score(sub_m)
        sides["mLAMA-style independent"] = lambda: mlama_independent_scores(ref_lm, sub_m)
        sides["ours pll (BMLAMA subset)"] = lambda: scorers["pll"].score(sub_b)
        sides["ours pll (BMLAMA subset), head per batch"] = lambda: per_batch.score(sub_b)
        sides["limit pll (BMLAMA subset)"] = lambda b=limit_batches(lm, sub_b, "pll", args.batch_tokens): \
            bare_forward(lm, b)
        sides["BMLAMA-style per-candidate PLL"] = lambda: bmlama_pll_scores(ref_lm, sub_b)
    rates = {mode: f"ours {mode}" for mode in scorers}
    rate_flops = add_rate_sides(sides, rates, args.device, args.dtype)
    for mode in scorers:  # warm-up: first calls on new shapes build kernels (oneDNN bf16, CUDA)
        sides[f"limit {mode}"]()
        sides[f"limit {mode} + head"]()
        sides[f"ours {mode}"]()
    times = interleaved(sides, args.repeats, args.device)
    n = {name: len(sub_m) if "mLAMA" in name else len(sub_b) if "BMLAMA" in name else len(queries) for name in sides}
    print(f"times over {args.repeats} interleaved rounds ({'process CPU' if args.device == 'cpu' else 'wall, synced'}):")
    for name, ts in times.items():
        print(f"  {name:<42} {stats(ts)}  {n[name] / min(ts):9.1f} prompts/s")
    for mode in scorers:
        frac = min(times[f"limit {mode}"]) / min(times[f"ours {mode}"])
        line = f"RATIO {mode}: {frac:.2f} of the limit (bare encoder forward on the same passes)"
        limit_head = min(times[f"limit {mode} + head"])
        line += (f", {limit_head / min(times[f'ours {mode}']):.2f} of it plus the head's product at the read "
                 f"positions (which alone caps the first at {min(times[f'limit {mode}']) / limit_head:.2f})")
        if f"ours {mode}, first layer everywhere" in times:
            line += (f"; {min(times[f'ours {mode}, first layer everywhere']) / min(times[f'ours {mode}']):.2f}x the "
                     "first layer everywhere (before)")
        if peak:
            tflops = pass_flops(lm, queries, mode, args.batch_tokens, sizes) / min(times[f"ours {mode}"]) / 1e12
            line += f"; {tflops:.1f} TFLOP/s = {tflops / peak:.1%} of the measured {args.dtype} peak"
        if not args.skip_baselines:
            anchor, sub = (("mLAMA-style independent", "ours independent (mLAMA subset)") if mode == "independent"
                           else ("BMLAMA-style per-candidate PLL", "ours pll (BMLAMA subset)"))
            line += f"; {min(times[anchor]) / min(times[sub]):.1f}x the {anchor.split()[0]} loop on its subset"
            if n[anchor] < len(queries):  # passes shared across prompts pay off on the whole set
                line += (f", {(len(queries) / min(times[f'ours {mode}'])) / (n[anchor] / min(times[anchor])):.1f}x "
                         f"its throughput with ours on all {len(queries)}")
        print(line)
    print_rates(rates, rate_flops, times, peak)
    if not args.skip_baselines:
        cpu_peak = measured_peak_tflops("cpu", args.dtype, size=2048, repeats=5) if args.device == "cpu" else None
        where_pll_goes(lm, sub_b, args.batch_tokens, times, sizes, peak or cpu_peak)
    return 0


def where_pll_goes(lm, queries, batch_tokens: int, times: dict[str, list[float]], sizes: Sizes,
                   peak: float | None) -> None:
    """The PLL ratio against the loop, taken apart: fewer passes x cheaper passes, the most any exact
    scorer that runs these passes through this encoder can reach (the loop over the bare forward), and
    over the time our matrix products alone take at the device's measured matmul peak."""
    acc = pll_accounting(lm, queries, batch_tokens)
    loop, ours = min(times["BMLAMA-style per-candidate PLL"]), min(times["ours pll (BMLAMA subset)"])
    if "ours pll (BMLAMA subset), head per batch" in times:
        print(f"POOLED pll on the BMLAMA subset: one vocabulary projection per batch takes "
              f"{min(times['ours pll (BMLAMA subset), head per batch']) / ours:.2f}x the time of pooled reads "
              "(HEAD_ROWS at a time); both rank as the loop does (checked above)")
    limit = min(times["limit pll (BMLAMA subset)"])
    fewer = acc["loop_passes"] / acc["passes"]
    per_pass = (loop / acc["loop_passes"]) / (ours / acc["passes"])
    padding = 1 - acc["pass_tokens"] / acc["batch_tokens"]
    print(f"WHERE pll on the BMLAMA subset: the loop runs {acc['loop_passes']:,} passes, ours {acc['passes']:,} "
          f"({fewer:.2f}x fewer: the prefix trie and identical inputs shared); padding {padding:.1%} of the "
          f"{acc['batch_tokens']:,} batch tokens; a pass costs the loop {per_pass:.1f}x what it costs ours "
          f"(batch 1, autograd, LM head at every position); {fewer:.2f} x {per_pass:.1f} = {loop / ours:.1f}x. "
          f"Ours is {limit / ours:.2f} of the bare forward on its passes; an exact scorer running these passes "
          f"through this encoder reaches about {loop / limit:.1f}x the loop here (it passes the bare forward only "
          "by the last layer's work at positions it does not read)")
    if peak:
        flops = pass_flops(lm, queries, "pll", batch_tokens, sizes)
        at_peak = flops / (peak * 1e12)
        print(f"BOUND pll on the BMLAMA subset: our passes' matrix products are {flops / 1e9:.1f} GFLOP; at the "
              f"measured matmul peak ({peak * 1e3:.0f} GFLOP/s) they alone take {at_peak:.3f} s (ours "
              f"{ours:.3f} s, {at_peak / ours:.0%} of that rate): no scorer doing these products passes "
              f"{loop / at_peak:.1f}x the loop")


def sentence_loss_loop(lm, queries) -> list[tuple[float, ...]]:
    """BMLAMA's causal loop: each filled sentence alone, batch 1, ``-model(ids, labels=ids).loss``."""
    import torch

    out = []
    with torch.no_grad():
        for q in queries:
            row = []
            for form in q.forms:
                ids = torch.tensor([lm.tokenizer(q.left + form + q.right)["input_ids"]], device=lm.device)
                row.append(-float(lm.model(input_ids=ids, labels=ids).loss) if ids.shape[1] > 1 else float("-inf"))
            out.append(tuple(row))
    return out


def causal_limits(lm, queries, scorer, legacy, batch_tokens: int) -> dict[str, list[dict]]:
    """Per causal rule, the model inputs of exactly the packed rows it runs, in its batches, built
    beforehand. The legacy rule gets one only when every prompt's sentences share a prefix (otherwise
    some run whole, outside the packed rows)."""
    from factatlas.probe.causal import packed_inputs, plan_packed, shared_prefixes
    from factatlas.probe.slots import tokenize_slots

    dtype = next(lm.model.parameters()).dtype

    def inputs(contexts, conts, with_context: bool) -> list[dict]:
        return [dict(packed_inputs(b, dtype, lm.device), kept_rows=int(b.kept.sum()))
                for b in plan_packed(lm, contexts, conts, batch_tokens, with_context)]

    out = {"causal-mean": inputs(*scorer.contexts_and_continuations(tokenize_slots(lm.tokenizer, queries)), False)}
    per_query = legacy.sentences(queries)
    shared, whole = shared_prefixes(per_query)
    if not whole:
        out["causal-sentence-legacy"] = inputs([per_query[qi][0][:cut] for qi, cut in shared],
                                               [[x[cut:] for x in per_query[qi]] for qi, cut in shared], True)
    return out


def bare_packed_forward(lm, inputs: list[dict], head: bool = False):
    """The decoder on every packed row: no LM head, no reads, no scoring; with ``head``, plus the
    vocabulary projection of as many rows as the rule reads (random states, nothing normalised): the
    products no exact scorer of the rule can skip."""
    import torch

    base = getattr(lm.model, lm.model.base_model_prefix)
    weight = lm.model.get_output_embeddings().weight
    states = [torch.randn(kw["kept_rows"], weight.shape[1], dtype=weight.dtype, device=weight.device) if head else None
              for kw in inputs]

    def run() -> None:
        with torch.inference_mode():
            for kw, h in zip(inputs, states, strict=True):
                base(**{k: v for k, v in kw.items() if k != "kept_rows"})
                if h is not None:
                    h @ weight.t()
    return run


def causal_main(args, lm, queries, peak: float | None) -> int:
    from factatlas.probe.baselines import causal_per_candidate_scores
    from factatlas.probe.causal import CausalLMScorer, SentenceLegacyScorer, logit_keeping, packs

    scorer = CausalLMScorer(lm, "mean", batch_tokens=args.batch_tokens)
    legacy = SentenceLegacyScorer(lm, batch_tokens=args.batch_tokens)
    # the KV-cache path (the context's cache copied per candidate), the rule's previous algorithm
    cached = CausalLMScorer(lm, "mean", batch_tokens=args.batch_tokens, packed=False)
    cached_legacy = SentenceLegacyScorer(lm, batch_tokens=args.batch_tokens, packed=False)
    # the previous packed path: the vocabulary projection of a whole batch at once, then its normaliser
    whole = CausalLMScorer(lm, "mean", batch_tokens=args.batch_tokens, head_chunk=0)
    whole_legacy = SentenceLegacyScorer(lm, batch_tokens=args.batch_tokens, head_chunk=0)
    print(f"packed rows: {packs(lm, logit_keeping(lm))}")
    for s in (scorer, legacy, cached, cached_legacy, whole, whole_legacy):  # warm-up: first calls build kernels (oneDNN bf16, CUDA)
        s.score(queries)
    ok = check("causal-mean packed vs KV-cache path", queries, scorer.score(queries), cached.score(queries),
               False, 1e-5 if args.dtype == "fp32" else args.half_tol)
    ok &= check("causal-sentence-legacy packed vs KV-cache path", queries, legacy.score(queries),
                cached_legacy.score(queries), False, 1e-5 if args.dtype == "fp32" else args.half_tol)
    ok &= check("causal-mean vs head whole batch", queries, scorer.score(queries), whole.score(queries), False,
                1e-5 if args.dtype == "fp32" else args.half_tol)
    ok &= check("causal-sentence-legacy vs head whole batch", queries, legacy.score(queries),
                whole_legacy.score(queries), False, 1e-5 if args.dtype == "fp32" else args.half_tol)
    if not ok:
        print("FAILED: the two paths rank differently; no ratio printed", file=sys.stderr)
        return 1
    sub = queries[: args.bmlama_prompts]
    sides = {"ours causal-mean": lambda: scorer.score(queries),
             "ours causal-mean, KV-cache path": lambda: cached.score(queries),
             "ours causal-mean, head whole batch": lambda: whole.score(queries),
             "ours causal-sentence-legacy": lambda: legacy.score(queries),
             "ours causal-sentence-legacy, head whole": lambda: whole_legacy.score(queries),
             "ours causal-sentence-legacy, KV-cache": lambda: cached_legacy.score(queries)}
    if not args.skip_baselines:
        ref_lm = lm
        if args.dtype != "fp32":
            import copy

            from factatlas.probe.models import wrap_model

            ref_lm = wrap_model(copy.deepcopy(lm.model).float(), lm.tokenizer, name=lm.name, family="causal")
        half = args.dtype != "fp32"
        tol = args.half_tol if half else 1e-5
        ok = check("causal-mean vs per-candidate loop", sub, scorer.score(sub),
                   causal_per_candidate_scores(ref_lm, sub), half, tol)
        ok &= check("causal-sentence-legacy vs per-sentence loss loop", sub, legacy.score(sub),
                    sentence_loss_loop(ref_lm, sub), half, tol)
        if not ok:
            print("FAILED: rankings differ beyond the tolerance; no ratio printed", file=sys.stderr)
            return 1
        sides["ours causal-mean (subset)"] = lambda: scorer.score(sub)
        sides["per-candidate loop"] = lambda: causal_per_candidate_scores(ref_lm, sub)
        sides["ours causal-sentence-legacy (subset)"] = lambda: legacy.score(sub)
        sides["per-sentence loss loop"] = lambda: sentence_loss_loop(ref_lm, sub)
    limits = causal_limits(lm, queries, scorer, legacy, args.batch_tokens) if packs(lm, logit_keeping(lm)) else {}
    for rule, inputs in limits.items():
        sides[f"limit {rule}"] = bare_packed_forward(lm, inputs)
        sides[f"limit {rule} + head"] = bare_packed_forward(lm, inputs, head=True)
    rates = {"causal-mean": "ours causal-mean", "causal-sentence-legacy": "ours causal-sentence-legacy"}
    rate_flops = add_rate_sides(sides, rates, args.device, args.dtype)
    times = interleaved(sides, args.repeats, args.device)
    for name, ts in times.items():
        k = len(sub) if "subset" in name or "loop" in name else len(queries)
        print(f"  {name:<38} {stats(ts)}  {k / min(ts):9.1f} prompts/s")
    t = min(times["ours causal-mean"])
    line = f"RATIO causal-mean: {len(queries) / t:.1f} prompts/s"
    if "causal-mean" in limits:
        line += (f"; {min(times['limit causal-mean']) / t:.2f} of the limit (bare decoder forward on its packed rows), "
                 f"{min(times['limit causal-mean + head']) / t:.2f} of it plus the head's product at the read rows "
                 f"(which alone caps the first at {min(times['limit causal-mean']) / min(times['limit causal-mean + head']):.2f})")
    line += f"; {min(times['ours causal-mean, head whole batch']) / t:.2f}x the head on whole batches (before)"
    if peak:
        tflops = causal_flops(lm, queries) / t / 1e12
        line += f"; {tflops:.1f} TFLOP/s = {tflops / peak:.1%} of the measured {args.dtype} peak"
    line += f"; {min(times['ours causal-mean, KV-cache path']) / t:.2f}x the KV-cache path"
    if not args.skip_baselines:
        line += f"; {min(times['per-candidate loop']) / min(times['ours causal-mean (subset)']):.1f}x the loop"
    print(line)
    t = min(times["ours causal-sentence-legacy"])
    line = f"RATIO causal-sentence-legacy: {len(queries) / t:.1f} prompts/s"
    if "causal-sentence-legacy" in limits:
        line += (f"; {min(times['limit causal-sentence-legacy']) / t:.2f} of the limit, "
                 f"{min(times['limit causal-sentence-legacy + head']) / t:.2f} of it plus the head's product")
    elif limits:
        line += "; no limit (some prompts' sentences share no prefix and run whole, outside the packed rows)"
    line += f"; {min(times['ours causal-sentence-legacy, head whole']) / t:.2f}x the head on whole batches (before)"
    line += f"; {min(times['ours causal-sentence-legacy, KV-cache']) / t:.2f}x the KV-cache path"
    if not args.skip_baselines:
        line += (f"; {min(times['per-sentence loss loop']) / min(times['ours causal-sentence-legacy (subset)']):.1f}x "
                 "the per-sentence loop")
    print(line)
    print_rates(rates, rate_flops, times, peak)
    return 0


if __name__ == "__main__":
    sys.exit(main())
