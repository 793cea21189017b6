"""The ranking's one-deep pipeline: chunk k+1 prepared on a second thread while chunk k runs
(``probe/pipeline.py``, ``ranking.ranked_rows``). The rankings must be the same scores, byte for byte,
with and without it, for every scorer split into ``prepare``/``run``; an error while preparing a chunk
surfaces as that error; the context refusal still comes before any forward pass."""

from __future__ import annotations

import sys
import threading
from dataclasses import replace

import pytest

from factatlas.probe import pipeline
from factatlas.probe.context import ContextTooLong
from factatlas.probe.pipeline import pipelined
from factatlas.probe.ranking import rank_prompts
from tests.probe.probe_capitals import cloze_rows, prompts_of
from tests.probe.test_no_host_waits import _model

PREPARING = "factatlas-prepare"

# ---- the pipeline alone ----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 5])  # two items are already a pipeline: the second prepared behind the first
def test_the_next_item_is_prepared_while_this_one_runs_and_results_keep_their_order(monkeypatch, n):
    """run(k) waits until prepare(k+1) has started on another thread: only a pipeline gets past it."""
    started = {k: threading.Event() for k in range(n)}
    threads: dict[int, str] = {}
    intervals: list[float] = []
    before = sys.getswitchinterval()
    monkeypatch.setattr(pipeline, "SWITCH_INTERVAL", before / 10)

    def prepare(k):
        threads[k] = threading.current_thread().name
        started[k].set()
        return k * 10

    def run(prepared):
        k = prepared // 10
        intervals.append(sys.getswitchinterval())
        if k + 1 in started:
            assert started[k + 1].wait(timeout=10), f"item {k + 1} was not prepared while item {k} ran"
        return prepared + 1

    assert list(pipelined(range(n), prepare, run)) == [(k, k * 10 + 1) for k in range(n)]
    assert threads[0] == threading.current_thread().name  # nothing to hide the first one behind
    assert all(threads[k].startswith(PREPARING) for k in range(1, n))
    assert not [t for t in threading.enumerate() if t.name.startswith(PREPARING)]
    # a switch interval asked for (pipeline.SWITCH_INTERVAL) holds while the two threads run, the interpreter's after
    assert intervals == [pytest.approx(before / 10)] * n and sys.getswitchinterval() == before


def test_without_prefetch_everything_runs_in_order_on_the_callers_thread():
    order: list[str] = []

    def prepare(k):
        order.append(f"prepare {k} {threading.current_thread().name}")
        return k

    def run(k):
        order.append(f"run {k}")
        return -k

    me = threading.current_thread().name
    assert list(pipelined([1, 2, 3], prepare, run, prefetch=False)) == [(1, -1), (2, -2), (3, -3)]
    assert order == [f"prepare 1 {me}", "run 1", f"prepare 2 {me}", "run 2", f"prepare 3 {me}", "run 3"]


def test_at_most_two_items_are_prepared_and_not_yet_run():
    lock, alive, most = threading.Lock(), [0], [0]

    def prepare(k):
        with lock:
            alive[0] += 1
            most[0] = max(most[0], alive[0])
        return k

    def run(k):
        with lock:
            alive[0] -= 1
        return k

    assert [r for _, r in pipelined(range(20), prepare, run)] == list(range(20))
    assert most[0] == 2


def test_an_error_preparing_the_next_item_is_raised_as_itself_after_this_item_ran():
    broken = ValueError("templates/lang/fr.yaml:3:1: the tokenizer cannot read chunk 2")
    ran: list[int] = []

    def prepare(k):
        if k == 2:
            raise broken
        return k

    def run(k):
        ran.append(k)
        return k

    with pytest.raises(ValueError) as caught:
        list(pipelined(range(4), prepare, run))
    assert caught.value is broken and str(caught.value) == str(broken)
    assert ran == [0, 1]  # chunk 2 never runs, nor anything after it
    assert not [t for t in threading.enumerate() if t.name.startswith(PREPARING)]


def test_an_error_running_an_item_leaves_no_preparing_thread_behind():
    def run(k):
        if k == 1:
            raise RuntimeError("CUDA out of memory")
        return k

    with pytest.raises(RuntimeError, match="out of memory"):
        list(pipelined(range(5), lambda k: k, run))
    assert not [t for t in threading.enumerate() if t.name.startswith(PREPARING)]


# ---- the default and the flag ---------------------------------------------------------------------

def test_the_pipeline_is_on_for_an_accelerator_and_off_on_cpu_unless_told():
    from types import SimpleNamespace

    from factatlas.probe.ranking import prefetching

    def on(device):
        return SimpleNamespace(lm=SimpleNamespace(device=device))

    assert [prefetching(on(d)) for d in ("cpu", "cuda", "cuda:1", "mps")] == [False, True, True, True]
    assert prefetching(on("cpu"), True) is True and prefetching(on("cuda"), False) is False
    assert prefetching(SimpleNamespace(score=None)) is False  # a scorer without a local model (a server's)


def test_the_flag_reaches_the_local_backends_options():
    from factatlas.errors import ConfigError
    from factatlas.probe.settings import ProbeConfig

    assert ProbeConfig.from_flags("tiny").backend.options.prefetch is None
    assert ProbeConfig.from_flags("tiny", prefetch=False).backend.options.prefetch is False
    assert ProbeConfig.from_flags("tiny", prefetch=True).backend.options.to_json()["prefetch"] is True
    with pytest.raises(ConfigError):
        ProbeConfig.from_flags("tiny", backend="openai", prefetch=True)  # a server's backend has no such option


# ---- the scorers: the same bytes with and without the pipeline ----------------------------------------

def _scorers():
    from factatlas.probe.causal import CausalLMScorer, SentenceLegacyScorer
    from factatlas.probe.mlm import MaskedLMScorer
    from factatlas.probe.seq2seq import Seq2SeqScorer

    return {
        "mlm-independent": ("bert", lambda lm: MaskedLMScorer(lm, "independent", batch_tokens=64)),
        "mlm-pll": ("bert", lambda lm: MaskedLMScorer(lm, "pll", batch_tokens=64)),
        "mlm-pll-meanprob": ("bert", lambda lm: MaskedLMScorer(lm, "pll", batch_tokens=64, average="prob")),
        "causal-mean packed": ("gpt2", lambda lm: CausalLMScorer(lm, "mean", batch_tokens=64, packed=True)),
        "causal-sum+remainder kv-cache": ("gpt2", lambda lm: CausalLMScorer(lm, "sum", include_remainder=True,
                                                                            batch_tokens=64, packed=False)),
        "causal-sentence-legacy": ("gpt2", lambda lm: SentenceLegacyScorer(lm, batch_tokens=64)),
        "seq2seq": ("t5", lambda lm: Seq2SeqScorer(lm, batch_tokens=64)),
    }


@pytest.fixture(scope="module")
def random_model():
    """The host-wait tests' untrained models (a tokenizer trained on a few sentences, random weights), made
    on first use: ``random_model("bert" | "gpt2" | "t5")``."""
    made: dict = {}

    def model(arch: str):
        if arch not in made:
            made[arch] = _model(arch)
        return made[arch]
    return model


class _Threads:
    """A scorer whose host steps record their name and the thread they ran on (the same steps, the same
    results)."""

    def __init__(self, scorer):
        self.scorer, self.scoring, self.lm, self.steps = scorer, scorer.scoring, scorer.lm, []
        self.context_needs, self.run = scorer.context_needs, scorer.run
        if hasattr(scorer, "score_slots"):
            self.score_slots, self.prepare_slots = scorer.score_slots, self._recorded(scorer.prepare_slots)
        self.score, self.prepare = scorer.score, self._recorded(scorer.prepare)

    def _recorded(self, step):
        def recorded(items):
            self.steps.append((step.__name__, threading.current_thread().name))
            return step(items)
        return recorded


def _past_the_bound(lm, prompts) -> str:
    """A lead that puts every prompt's byte bound past the model's context (the whole-run check then
    tokenizes every query and the scorer gets their slots) while its tokens still fit."""
    from factatlas.probe.context import cloze_bound, model_limit
    from factatlas.probe.protocol import ClozeQuery

    lead, limit = "", model_limit(lm).positions
    while min(cloze_bound(ClozeQuery(lead + p.text, p.candidate_forms)) for p in prompts) <= limit:
        lead += "As every atlas of the world has said for many years now, "
    return lead


CASES = [(rule, long) for rule in _scorers() for long in (False, True) if not (long and rule == "seq2seq")]


@pytest.mark.slow  # 0.3-2.5 s a case (PLL on the long texts)
@pytest.mark.parametrize(("rule", "long_prefix"), CASES,
                         ids=[f"{rule}-{'past-the-bound' if long else 'short'}" for rule, long in CASES])
def test_every_score_is_the_same_with_and_without_the_pipeline(random_model, capitals_rows, rule, long_prefix):
    """Five chunks of the capitals prompts, ranked with the pipeline and without: equal scores (==, not
    approx) and rankings. ``past-the-bound``: texts long enough that the whole-run context check tokenizes
    them first and a slot scorer gets their slots (``prepare_slots``), else it tokenizes (``prepare``); T5
    has relative positions and no bound."""
    arch, make = _scorers()[rule]
    lm = random_model(arch)
    prompts = prompts_of(cloze_rows(capitals_rows)[:14])
    lead = _past_the_bound(lm, prompts) if long_prefix else ""
    texts = [lead + p.text for p in prompts]
    piped = _Threads(make(lm))
    on = rank_prompts(piped, prompts, texts, "random", chunk=3, prefetch=True)
    off = rank_prompts(make(lm), prompts, texts, "random", chunk=3, prefetch=False)
    assert [(r.prompt_id, r.ranked_qids, r.scores) for r in on] == [(r.prompt_id, r.ranked_qids, r.scores) for r in off]
    assert all(len(r.scores) == len(p.candidate_qids) for r, p in zip(on, prompts, strict=True))
    step = "prepare_slots" if long_prefix and hasattr(piped, "prepare_slots") else "prepare"
    assert [name for name, _ in piped.steps] == [step] * 5
    assert all(thread.startswith(PREPARING) for _, thread in piped.steps[1:])


@pytest.mark.slow  # the random model is made in 2-4 s
def test_an_error_preparing_a_later_chunk_reaches_the_caller_unchanged(random_model, capitals_rows):
    from factatlas.probe.mlm import MaskedLMScorer

    scorer = MaskedLMScorer(random_model("bert"))
    own, calls = scorer.prepare, []
    broken = RuntimeError("tokenizer of bert: chunk 3 could not be encoded")

    def prepare(queries):
        calls.append(threading.current_thread().name)
        if len(calls) == 3:
            raise broken
        return own(queries)

    scorer.prepare = prepare
    prompts = prompts_of(cloze_rows(capitals_rows)[:12])
    with pytest.raises(RuntimeError) as caught:
        rank_prompts(scorer, prompts, [p.text for p in prompts], "random", chunk=3, prefetch=True)
    assert caught.value is broken and str(caught.value) == "tokenizer of bert: chunk 3 could not be encoded"
    assert calls[2].startswith(PREPARING)


@pytest.mark.slow  # the random model is made in 2-4 s (shared with the test above)
def test_no_forward_pass_runs_before_the_context_refusal(random_model, capitals_rows):
    """One overlong prompt in the last chunk: refused with the numbers before the first chunk's forward pass,
    though the pipeline would prepare that chunk only while the one before it runs."""
    from factatlas.probe.mlm import MaskedLMScorer

    lm = random_model("bert")
    forwards = []
    hook = lm.model.get_input_embeddings().register_forward_hook(lambda *_: forwards.append(1))
    prompts = prompts_of(cloze_rows(capitals_rows)[:12])
    prompts[-1] = replace(prompts[-1], text=" ".join(["capital"] * 600) + " " + prompts[-1].text)
    try:
        with pytest.raises(ContextTooLong, match="1 of 12 inputs do not fit the context of model bert"):
            rank_prompts(MaskedLMScorer(lm), prompts, [p.text for p in prompts], "random", chunk=3, prefetch=True)
        assert forwards == []
        rank_prompts(MaskedLMScorer(lm), prompts[:3], [p.text for p in prompts[:3]], "random", prefetch=True)
        assert forwards  # the hook does see this model's forward passes
    finally:
        hook.remove()


@pytest.mark.slow
def test_the_speed_benchmark_checks_every_score_before_it_prints_a_ratio(capsys, monkeypatch):
    from tests.probe.test_mlm import _benchmark_script

    bench = _benchmark_script("prefetch_speed", monkeypatch)
    assert bench.main(TINY_BENCHMARK) == 0
    out = capsys.readouterr().out
    assert "in 3 chunks" in out and "check: 60 rankings and every score identical" in out
    assert "host share" in out and out.count("RATIO wall off/on") == 1


TINY_BENCHMARK = ["--prompts", "60", "--candidates", "6", "--chunk", "20", "--layers", "1", "--vocab", "600",
                  "--tokenizer-vocab", "300", "--repeats", "1", "--no-matmul"]


@pytest.mark.slow
def test_the_speed_benchmark_prints_no_time_when_a_score_differs(capsys, monkeypatch):
    """A pipeline that changed one score in its last bit: the benchmark says how many rankings differ, exits
    1, and prints no time and no ratio."""
    import factatlas.probe.ranking as ranking
    from tests.probe.test_mlm import _benchmark_script

    bench = _benchmark_script("prefetch_speed", monkeypatch)
    own = ranking.pipelined

    def nudged(items, prepare, run, prefetch=True):
        for item, scores in own(items, prepare, run, prefetch):
            if prefetch:
                scores = [tuple(s + 1e-12 if q == 0 else s for q, s in enumerate(row)) for row in scores]
            yield item, scores

    monkeypatch.setattr(ranking, "pipelined", nudged)
    assert bench.main(TINY_BENCHMARK) == 1
    out = capsys.readouterr().out
    assert "error: 60 of 60 rankings differ between --no-prefetch and --prefetch" in out
    assert "RATIO" not in out and "wall" not in out
