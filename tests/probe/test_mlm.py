"""Masked-LM scorers on a tiny BERT that was fine-tuned on the train split of the capitals benchmark."""

from __future__ import annotations

import random

import pytest
import torch

from factatlas.probe.baselines import bmlama_pll_scores, mlama_independent_scores
from factatlas.probe.mlm import MaskedLMScorer, plan_passes
from factatlas.probe.protocol import ClozeQuery, rank_candidates
from factatlas.probe.runner import rank_prompts
from factatlas.probe.slots import SlotTokens
from tests.probe.probe_capitals import CHANCE, cloze_rows, p_at_1, prompts_of


def _queries(rows):
    return [ClozeQuery(r["text"], tuple(r["candidate_forms"])) for r in rows]


@pytest.mark.parametrize("mode", ["independent", "pll"])
def test_trained_facts_known_held_out_at_chance(tiny_bert, capitals_rows, mode):
    rows = cloze_rows(capitals_rows)
    rankings = rank_prompts(MaskedLMScorer(tiny_bert, mode), prompts_of(rows), [r["text"] for r in rows], "tiny-bert")
    train = p_at_1(rankings, rows, "train")
    assert train >= 0.6 and train > 6 * CHANCE
    assert p_at_1(rankings, rows, "test") <= 3 * CHANCE


def test_independent_equals_mlama_algorithm(tiny_bert, capitals_rows):
    queries = _queries(cloze_rows(capitals_rows))
    ours = MaskedLMScorer(tiny_bert, "independent", batch_tokens=300).score(queries)
    reference = mlama_independent_scores(tiny_bert, queries)
    for q, a, b in zip(queries, ours, reference, strict=True):
        assert rank_candidates(q.forms, a)[0] == rank_candidates(q.forms, b)[0]
        assert a == pytest.approx(b, abs=1e-4)


def test_pll_equals_bmlama_algorithm(tiny_bert, capitals_rows):
    queries = _queries(cloze_rows(capitals_rows))[::6]  # the per-candidate loop is slow by design
    ours = MaskedLMScorer(tiny_bert, "pll", batch_tokens=300).score(queries)
    reference = bmlama_pll_scores(tiny_bert, queries)
    for q, a, b in zip(queries, ours, reference, strict=True):
        assert rank_candidates(q.forms, a)[0] == rank_candidates(q.forms, b)[0]
        assert a == pytest.approx(b, abs=1e-4)


@pytest.mark.parametrize("mode", ["independent", "pll"])
def test_read_positions_only_shortcuts_match_full_logits(tiny_bert, capitals_rows, mode):
    """The last layer at read positions only, and the LM head at read positions only, change nothing."""
    from factatlas.probe.mlm import bert_like_last_layer

    queries = _queries(cloze_rows(capitals_rows))[:16]
    fast = MaskedLMScorer(tiny_bert, mode)
    assert fast._last is not None and bert_like_last_layer(tiny_bert.model.bert) is not None
    decoder = tiny_bert.model.get_output_embeddings()
    assert fast._into is not None and decoder.bias is not None and decoder.bias.abs().max() > 0  # into a buffer
    head_only = MaskedLMScorer(tiny_bert, mode, partial_last_layer=False).score(queries)
    full = MaskedLMScorer(tiny_bert, mode, split_head=False).score(queries)
    assert fast.score(queries) == [pytest.approx(f, abs=1e-5) for f in full]
    assert head_only == [pytest.approx(f, abs=1e-5) for f in full]
    assert tiny_bert.model.get_output_embeddings() is decoder and fast._buffer is None


@pytest.mark.parametrize("mode", ["independent", "pll"])
def test_first_layer_projections_once_per_distinct_position_change_no_score(tiny_bert, capitals_rows, mode,
                                                                             monkeypatch):
    """The first layer's query, key and value run once per distinct (token, position) of a batch and are
    spread to every position: the same scores as the model's own first layer, and most positions repeat."""
    import factatlas.probe.mlm as mlm

    queries = _queries(cloze_rows(capitals_rows))[:40]
    plain = MaskedLMScorer(tiny_bert, mode, shared_first_layer=False)
    assert plain._first is None
    expected = plain.score(queries)
    shares = []
    original = mlm._first_layer_shared

    def counted(first, embeddings, distinct, inverse):
        shares.append(len(distinct) / inverse.numel())
        return original(first, embeddings, distinct, inverse)

    monkeypatch.setattr(mlm, "_first_layer_shared", counted)
    shared = MaskedLMScorer(tiny_bert, mode)
    assert shared._first is tiny_bert.model.bert.encoder.layer[0]
    assert shared.score(queries) == [pytest.approx(e, abs=1e-5) for e in expected]
    assert shares and max(shares) <= mlm.FIRST_LAYER_SHARE and min(shares) < 0.5


@pytest.mark.parametrize("mode", ["independent", "pll"])
def test_accelerator_paths_score_as_the_cpu_paths(tiny_bert, capitals_rows, mode):
    """The column-aligned copy of the vocabulary projection and the fused log-softmax (CUDA's defaults)
    change no score, and the model keeps its own projection."""
    from factatlas.probe.mlm import VOCAB_ALIGN

    decoder = tiny_bert.model.get_output_embeddings()
    assert decoder.out_features % VOCAB_ALIGN != 0  # else there is nothing to pad
    queries = _queries(cloze_rows(capitals_rows))[:24]
    accelerated = MaskedLMScorer(tiny_bert, mode, accelerator_paths=True)
    assert accelerated._padded is not None and accelerated._padded[2].out_features % VOCAB_ALIGN == 0
    plain = MaskedLMScorer(tiny_bert, mode, accelerator_paths=False).score(queries)
    assert accelerated.score(queries) == [pytest.approx(p, abs=1e-5) for p in plain]
    assert tiny_bert.model.get_output_embeddings() is decoder


def test_no_padded_projection_for_models_dispatched_over_devices(tiny_bert):
    import copy

    from factatlas.probe.mlm import lm_head_split, padded_decoder

    model = copy.deepcopy(tiny_bert.model)
    assert padded_decoder(model, lm_head_split(model)[1]) is not None
    model.hf_device_map = {"bert": 0, "cls": "cpu"}  # what accelerate's dispatch leaves on the model
    assert padded_decoder(model, lm_head_split(model)[1]) is None


def test_plan_passes_counts_only_needed_mask_counts_and_shares_trie_prefixes():
    mask, head, tail = 99, (1,), (2,)
    # candidates: lengths 1, 2, 2 (sharing the first token 5), 4
    slot = SlotTokens(prefix=(10, 11), candidates=((7,), (5, 6), (5, 8), (3, 4, 5, 6)), suffix=(12,))
    indep = plan_passes([slot], "independent", mask, head, tail)
    assert indep.token_counts == [1, 2, 2, 4]
    assert [len(ids) for ids in indep.ids] == [6, 7, 9]  # 5 + k for k = 1, 2, 4; no pass for k = 3
    assert indep.ids[1] == (1, 10, 11, 99, 99, 12, 2)
    assert [indep.positions(p) for p in range(3)] == [[3], [3, 4], [3, 4, 5, 6]]
    assert indep.targets(1) == [(3, 5, 1), (4, 6, 1), (3, 5, 2), (4, 8, 2)]  # (column, token, candidate)
    pll = plan_passes([slot], "pll", mask, head, tail)
    fills = sorted(tuple(t for t in ids[3:-2] if t != mask) for ids in pll.ids)
    # trie nodes: k=1: (); k=2: (), (5,) shared by both length-2 candidates; k=4: (), (3,), (3,4), (3,4,5)
    assert fills == sorted([(), (), (5,), (), (3,), (3, 4), (3, 4, 5)])
    assert len(pll.target_read) == 1 + 2 + 2 + 4
    shared = pll.ids.index((1, 10, 11, 5, 99, 12, 2))
    assert pll.targets(shared) == [(4, 6, 1), (4, 8, 2)]  # one read serves both candidates' second token
    # the same prompt twice (and a third prompt sharing one pass): passes are shared across prompts,
    # each keeps the targets of every candidate it serves, numbered globally
    other = SlotTokens(prefix=(10, 11), candidates=((7,), (9,)), suffix=(12,))
    for mode, alone in (("independent", indep), ("pll", pll)):
        plan = plan_passes([slot, slot, other], mode, mask, head, tail)
        assert plan.token_counts == [1, 2, 2, 4] * 2 + [1, 1]
        assert plan.ids == alone.ids  # k = 1 of `other` is the k = 1 pass of `slot`
        assert len(plan.read_col) == len(alone.read_col)  # and so are its reads
        assert sorted(plan.target_cand.tolist()) == sorted(
            alone.target_cand.tolist() + (alone.target_cand + 4).tolist() + [8, 9])


def test_planned_batches_slice_every_pass_read_and_target_once():
    """Batches renumber the passes in batch order; each batch's rows, reads and targets must be exactly
    its own passes' (checked against the plan pass by pass), whatever order batching chose."""
    rng = random.Random(3)
    mask, head, tail = 99, (1,), (2,)
    slots = [SlotTokens(prefix=tuple(rng.randrange(3, 60) for _ in range(rng.randrange(1, 5))),
                        candidates=tuple(tuple(rng.randrange(3, 9) for _ in range(rng.randrange(1, 4)))
                                         for _ in range(rng.randrange(1, 6))),
                        suffix=tuple(rng.randrange(3, 60) for _ in range(rng.randrange(0, 3))))
             for _ in range(40)]
    for mode in ("independent", "pll"):
        plan = plan_passes(slots, mode, mask, head, tail)
        seen_passes, seen_targets = [], []
        for b in plan.batches(budget=24):
            assert len({len(row) for row in b.ids.tolist()}) == 1
            row_pass = [plan.ids.index(tuple(row)) for row in b.ids.tolist()]
            seen_passes += row_pass
            for r, p in enumerate(row_pass):
                mine = b.rows == r
                assert b.cols[mine].tolist() == plan.positions(p)
                assert b.within[mine].tolist() == list(range(len(plan.positions(p))))
            assert b.most == max(len(plan.positions(p)) for p in row_pass)
            seen_targets += [(row_pass[b.rows[a]], int(b.cols[a]), int(t), int(c))
                             for a, t, c in zip(b.at, b.tokens, b.cands, strict=True)]
            assert (b.at[1:] >= b.at[:-1]).all()  # pooled reads are cut with a binary search on `at`
        assert sorted(seen_passes) == list(range(len(plan.ids)))
        assert sorted(seen_targets) == sorted((p, col, t, c) for p in range(len(plan.ids))
                                              for col, t, c in plan.targets(p))


def test_scores_are_mean_log_probs(tiny_bert):
    """One single-token candidate: its score is log p([MASK] = token) from one plain forward pass."""
    from factatlas.probe.slots import special_wrap, tokenize_slots

    q = ClozeQuery("The capital of France is [Y].", ("Paris", "Rome"))
    slot = tokenize_slots(tiny_bert.tokenizer, [q])[0]
    wrap = special_wrap(tiny_bert.tokenizer)
    scores = MaskedLMScorer(tiny_bert).score([q])[0]
    for cand, score in zip(slot.candidates, scores, strict=True):
        ids = wrap.wrap([*slot.prefix, *[tiny_bert.tokenizer.mask_token_id] * len(cand), *slot.suffix])
        with torch.no_grad():
            logits = tiny_bert.model(input_ids=torch.tensor([ids])).logits[0]
        start = len(wrap.head) + len(slot.prefix)
        lp = torch.log_softmax(logits, -1)
        expected = sum(float(lp[start + j, t]) for j, t in enumerate(cand)) / len(cand)
        assert score == pytest.approx(expected, abs=1e-5)


class _Recording:
    """A real scorer that also keeps every query it was asked to score."""

    def __init__(self, scorer):
        self.scorer, self.scoring, self.asked = scorer, scorer.scoring, []

    def score(self, queries):
        self.asked.extend(queries)
        return self.scorer.score(queries)


def test_identical_queries_are_scored_once_and_share_their_scores(tiny_bert, capitals_rows):
    from collections import Counter
    from dataclasses import replace

    rows = cloze_rows(capitals_rows)[:12]
    prompts = prompts_of(rows)
    reversed_forms = replace(prompts[0], prompt_id="reordered", candidate_forms=prompts[0].candidate_forms[::-1],
                             candidate_qids=prompts[0].candidate_qids[::-1])
    copies = [replace(p, prompt_id=f"{p.prompt_id}-copy") for p in prompts[:5]]
    everything = [*prompts, *copies, reversed_forms]
    texts = [p.text for p in everything]
    recorder, counts = _Recording(MaskedLMScorer(tiny_bert)), Counter()
    rankings = rank_prompts(recorder, everything, texts, "tiny-bert", chunk=4, counts=counts)

    # the copies are not asked again; the same text with its candidates in another order is
    assert [q.text for q in recorder.asked] == [p.text for p in [*prompts, reversed_forms]]
    assert counts["scored/queries-shared"] == 5
    alone = {p.prompt_id: MaskedLMScorer(tiny_bert).score([ClozeQuery(p.text, p.candidate_forms)])[0]
             for p in everything}
    for p, row in zip(everything, rankings, strict=True):
        assert row.prompt_id == p.prompt_id
        assert row.ranked_qids == rank_candidates(p.candidate_qids, alone[p.prompt_id])[0]
        assert sorted(row.scores, reverse=True) == pytest.approx(sorted(alone[p.prompt_id], reverse=True), abs=1e-5)
    by_id = {r.prompt_id: r for r in rankings}
    for p in prompts[:5]:
        assert by_id[f"{p.prompt_id}-copy"].scores == by_id[p.prompt_id].scores


def test_planning_benchmark_finds_both_planners_equal(capsys, monkeypatch):
    """benchmarks/mlm_planning.py prints no time unless the per-target planner it measures against and
    ours give the same batches; on synthetic slots both modes must pass that check."""
    bench = _benchmark_script("mlm_planning", monkeypatch)
    assert bench.main(["--prompts", "60", "--candidates", "12", "--repeats", "1", "--batch-tokens", "256"]) == 0
    out = capsys.readouterr().out
    assert "check independent: same" in out and "check pll: same" in out and out.count("RATIO") == 2


@pytest.mark.parametrize("mode", ["independent", "pll"])
def test_pooled_and_split_vocabulary_projections_score_as_one_per_batch(tiny_bert, capitals_rows, mode):
    """The CPU path projects reads of several batches together and splits large ones; every target must
    still take its own read's log-probability, wherever the chunk boundaries fall."""
    queries = _queries(cloze_rows(capitals_rows))[:40]
    reference = MaskedLMScorer(tiny_bert, mode, batch_tokens=200, head_rows=None).score(queries)
    assert MaskedLMScorer(tiny_bert, mode)._head_rows == 256
    for rows in (256, 7, 1):  # pool everything; cut through batches; one read at a time
        pooled = MaskedLMScorer(tiny_bert, mode, batch_tokens=200, head_rows=rows)
        assert pooled.score(queries) == [pytest.approx(r, abs=1e-5) for r in reference]


def test_pending_reads_hand_out_each_target_with_its_own_read():
    import numpy as np

    from factatlas.probe.mlm import PendingReads

    pending = PendingReads()
    pending.add(torch.arange(3.0)[:, None], np.array([0, 0, 2]), np.array([10, 11, 12]), np.array([0, 1, 2]))
    pending.add(torch.arange(3.0, 5.0)[:, None], np.array([0, 1, 1]), np.array([13, 14, 15]), np.array([3, 4, 5]))
    chunks = list(pending.ready(2))
    assert pending.rows == 1 and len(chunks) == 2
    rest = list(pending.ready(None))
    assert pending.rows == 0 and list(pending.ready(None)) == []
    got = [(float(states[a, 0]), int(t), int(c)) for states, at, tokens, cands in chunks + rest
           for a, t, c in zip(at, tokens, cands, strict=True)]
    assert got == [(0.0, 10, 0), (0.0, 11, 1), (2.0, 12, 2), (3.0, 13, 3), (4.0, 14, 4), (4.0, 15, 5)]
    assert [len(states) for states, *_ in chunks + rest] == [2, 2, 1]


def _benchmark_script(name: str, monkeypatch):
    """benchmarks/<name>.py loaded as a module (the folder is not a package)."""
    import importlib.util
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, script)
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, bench)  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    return bench


TINY_SPEED_RUN = ["--prompts", "24", "--candidates", "6", "--bmlama-prompts", "4", "--mlama-prompts", "6",
                  "--repeats", "1", "--layers", "2", "--hidden", "32", "--heads", "2", "--intermediate", "64",
                  "--vocab", "600", "--tokenizer-vocab", "300"]


@pytest.mark.slow
def test_speed_benchmark_checks_rankings_then_takes_the_pll_ratio_apart(capsys, monkeypatch):
    bench = _benchmark_script("probe_speed", monkeypatch)
    assert bench.main(TINY_SPEED_RUN) == 0
    out = capsys.readouterr().out
    assert "check pll vs BMLAMA-style loop: rankings identical on 4 prompts" in out
    assert out.count("RATIO") == 2 and "WHERE pll" in out and "BOUND pll" in out and "POOLED pll" in out
    assert "check pll, head per batch, vs BMLAMA-style loop: rankings identical on 4 prompts" in out
    for mode in ("independent", "pll"):  # both limits, as the causal rules print them
        ratio = next(line for line in out.splitlines() if line.startswith(f"RATIO {mode}: "))
        assert "of the limit (bare encoder forward on the same passes), " in ratio
        assert "of it plus the head's product at the read positions (which alone caps the first at " in ratio


def test_speed_benchmark_prints_no_ratio_when_an_anchor_ranks_differently(capsys, monkeypatch):
    import factatlas.probe.baselines as baselines

    bench = _benchmark_script("probe_speed", monkeypatch)
    honest = baselines.bmlama_pll_scores
    # the anchor's scores reversed: every ranking with distinct scores flips, far beyond any near-tie
    monkeypatch.setattr(baselines, "bmlama_pll_scores", lambda lm, qs: [tuple(-v for v in s) for s in honest(lm, qs)])
    assert bench.main(TINY_SPEED_RUN) == 1
    captured = capsys.readouterr()
    assert "RATIO" not in captured.out and "times over" not in captured.out
    assert "FAILED: rankings differ" in captured.err


@pytest.mark.slow
def test_speed_benchmark_gives_causal_rules_their_limit(capsys, monkeypatch):
    bench = _benchmark_script("probe_speed", monkeypatch)
    assert bench.main([*TINY_SPEED_RUN, "--preset", "llama-small"]) == 0
    out = capsys.readouterr().out
    assert "check causal-mean vs per-candidate loop: rankings identical" in out
    assert "limit causal-mean" in out and "of the limit (bare decoder forward on its packed rows)" in out


def test_speed_benchmark_rates_a_gpu_against_its_measured_peak(capsys, monkeypatch):
    """A 2048-cubed product takes microseconds on a GPU: the RATE line's reference is the measured peak."""
    bench = _benchmark_script("probe_speed", monkeypatch)
    times = {"ours pll": [2.0], "products of pll at its shapes": [1.0], "2048^3 matmul": [1e-6]}
    bench.print_rates({"pll": "ours pll"}, {"pll": 400e12}, times, peak_tflops=800.0)
    out = capsys.readouterr().out
    assert ("ours 200000.0 GFLOP/s; the same products alone at their shapes 400000.0 GFLOP/s "
            "(50% of the measured peak, 800 TFLOP/s); ours reaches 50% of its shapes' rate") in out
    bench.print_rates({"pll": "ours pll"}, {"pll": 400e12}, {**times, "2048^3 matmul": [2 * 2048**3 / 1e15]})
    assert "(40% of the 2048^3 rate, 1000000.0 GFLOP/s)" in capsys.readouterr().out


class _CountingBackend:
    """The Rust tokenizer, counting the texts it encodes."""

    def __init__(self, backend):
        self.backend, self.texts = backend, 0

    def encode_batch(self, texts, **kw):
        self.texts += len(texts)
        return self.backend.encode_batch(texts, **kw)

    def __getattr__(self, name):
        return getattr(self.backend, name)


def test_a_run_past_the_context_bound_tokenizes_each_query_once(tiny_bert, capitals_rows):
    """Queries whose byte bound exceeds the context are checked before any forward pass; their in-context
    ids are made once and scored, not made again by each chunk's ``score`` (scores as the scorer's own)."""
    import copy
    import dataclasses

    from factatlas.probe.context import cloze_bound, model_limit
    from factatlas.probe.slots import special_wrap, tokenize_slots

    rows = cloze_rows(capitals_rows)[:12]
    prompts = prompts_of(rows)
    texts = ["As every atlas of the world says, " + p.text for p in prompts]
    queries = [ClozeQuery(t, p.candidate_forms) for t, p in zip(texts, prompts, strict=True)]
    assert all(cloze_bound(q) > model_limit(tiny_bert).positions for q in queries)
    tokenizer = copy.copy(tiny_bert.tokenizer)
    special_wrap(tokenizer)  # cached per tokenizer: made before counting
    counting = tokenizer._tokenizer = _CountingBackend(tiny_bert.tokenizer._tokenizer)
    lm = dataclasses.replace(tiny_bert, tokenizer=tokenizer)
    for part in (queries[:4], queries[4:8], queries[8:]):
        tokenize_slots(tokenizer, part)
    once, counting.texts = counting.texts, 0

    rankings = rank_prompts(MaskedLMScorer(lm), prompts, texts, "tiny-bert", chunk=4)
    assert counting.texts == once
    own = rank_prompts(_Recording(MaskedLMScorer(tiny_bert)), prompts, texts, "tiny-bert", chunk=4)
    assert [(r.ranked_qids, r.scores) for r in rankings] == [(r.ranked_qids, r.scores) for r in own]
