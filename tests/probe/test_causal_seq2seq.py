"""Causal and seq2seq scorers on tiny GPT-2 / T5 models fine-tuned on the train split."""

from __future__ import annotations

import warnings

import pytest
import torch

from factatlas.probe.baselines import causal_per_candidate_scores, seq2seq_per_candidate_scores
from factatlas.probe.causal import CausalLMScorer, SentenceLegacyScorer
from factatlas.probe.protocol import ClozeQuery, rank_candidates
from factatlas.probe.runner import rank_prompts
from factatlas.probe.seq2seq import Seq2SeqScorer
from tests.probe.probe_capitals import CHANCE, cloze_rows, p_at_1, prompts_of


def _queries(rows):
    return [ClozeQuery(r["text"], tuple(r["candidate_forms"])) for r in rows]


def test_causal_knows_trained_facts(tiny_gpt2, capitals_rows):
    rows = cloze_rows(capitals_rows, "P36/1")  # the slot ends the sentence: the continuation rule fits
    rankings = rank_prompts(CausalLMScorer(tiny_gpt2, "mean"), prompts_of(rows), [r["text"] for r in rows], "tiny-gpt2")
    assert p_at_1(rankings, rows, "train") >= 0.7
    assert p_at_1(rankings, rows, "test") <= 3 * CHANCE


@pytest.mark.parametrize(("reduce", "remainder"), [("mean", False), ("sum", True)])
def test_kv_cache_scorer_equals_per_candidate_recomputation(tiny_gpt2, capitals_rows, reduce, remainder):
    queries = _queries(cloze_rows(capitals_rows))[::3]
    ours = CausalLMScorer(tiny_gpt2, reduce, remainder, batch_tokens=400).score(queries)
    reference = causal_per_candidate_scores(tiny_gpt2, queries, reduce, remainder)
    for q, a, b in zip(queries, ours, reference, strict=True):
        assert rank_candidates(q.forms, a)[0] == rank_candidates(q.forms, b)[0]
        assert a == pytest.approx(b, abs=1e-4)


def test_remainder_helps_when_the_slot_opens_the_sentence(tiny_gpt2, capitals_rows):
    rows = cloze_rows(capitals_rows, "P36/2")  # "[Y] is the capital city of X."
    texts = [r["text"] for r in rows]
    plain = rank_prompts(CausalLMScorer(tiny_gpt2, "sum"), prompts_of(rows), texts, "m")
    full = rank_prompts(CausalLMScorer(tiny_gpt2, "sum", include_remainder=True), prompts_of(rows), texts, "m")
    assert p_at_1(full, rows, "train") > p_at_1(plain, rows, "train") + 0.3


def test_sentence_legacy_equals_hf_loss(tiny_gpt2):
    q = ClozeQuery("The capital of Egypt is [Y].", ("Cairo", "Amsterdam", "Le Caire"))
    scores = SentenceLegacyScorer(tiny_gpt2).score([q])[0]
    tok = tiny_gpt2.tokenizer
    for form, score in zip(q.forms, scores, strict=True):
        ids = torch.tensor([tok(q.left + form + q.right)["input_ids"]])
        with torch.no_grad():
            loss = tiny_gpt2.model(input_ids=ids, labels=ids).loss
        assert score == pytest.approx(-float(loss), abs=1e-5)


def test_sentence_legacy_with_prefix_cache_equals_the_whole_sentence_loss(tiny_gpt2, capitals_rows):
    # the prefix runs once per prompt and candidates continue from its KV cache; the numbers must stay
    # those of BMLAMA's per-sentence loss: prompts of every template (slot last, slot first: no shared
    # prefix, then the whole-sentence path) plus a candidate that is a prefix of another
    queries = _queries(cloze_rows(capitals_rows))[::4]
    queries += [ClozeQuery("The capital of Egypt is [Y]", ("Cairo", "Cairo Cairo", "C")),
                ClozeQuery("[Y] is the capital of Egypt.", ("Cairo", "Rabat", "Amsterdam"))]
    assert any(q.left == "" for q in queries) and any(q.left for q in queries)
    ours = SentenceLegacyScorer(tiny_gpt2, batch_tokens=300).score(queries)
    tok = tiny_gpt2.model, tiny_gpt2.tokenizer
    for q, scores in zip(queries, ours, strict=True):
        reference = []
        for form in q.forms:
            ids = torch.tensor([tok[1](q.left + form + q.right)["input_ids"]])
            with torch.no_grad():
                reference.append(-float(tok[0](input_ids=ids, labels=ids).loss))
        assert scores == pytest.approx(reference, abs=1e-5)
        assert rank_candidates(q.forms, scores)[0] == rank_candidates(q.forms, reference)[0]


def test_seq2seq_knows_trained_facts_and_equals_per_candidate_loop(tiny_t5, capitals_rows):
    rows = cloze_rows(capitals_rows)
    rankings = rank_prompts(Seq2SeqScorer(tiny_t5), prompts_of(rows), [r["text"] for r in rows], "tiny-t5")
    assert p_at_1(rankings, rows, "train") >= 0.6
    assert p_at_1(rankings, rows, "test") <= 3 * CHANCE
    queries = _queries(rows)[::8]
    ours = Seq2SeqScorer(tiny_t5, batch_tokens=500).score(queries)
    reference = seq2seq_per_candidate_scores(tiny_t5, queries)
    for q, a, b in zip(queries, ours, reference, strict=True):
        assert rank_candidates(q.forms, a)[0] == rank_candidates(q.forms, b)[0]
        assert a == pytest.approx(b, abs=1e-4)


class _SlicesTheSequenceAxis:
    """transformers 5.17's causal heads: ``hidden[:, logits_to_keep, :]``, so a 2-D row mask fails there."""

    def forward(self, *args, logits_to_keep=0, **kwargs):
        out = super().forward(*args, **kwargs)
        keep = slice(-logits_to_keep, None) if isinstance(logits_to_keep, int) else logits_to_keep
        out.logits = out.logits[:, keep, :]
        return out


def test_models_without_row_masks_score_as_those_with_them(tiny_gpt2, capitals_rows):
    import copy

    from factatlas.probe.causal import LogitKeeping, logit_keeping
    from factatlas.probe.models import wrap_model

    model = copy.deepcopy(tiny_gpt2.model)
    model.__class__ = type("OldGPT2", (_SlicesTheSequenceAxis, type(model)), {})
    old = wrap_model(model, tiny_gpt2.tokenizer, name="old-gpt2", family="causal")
    assert logit_keeping(old) == LogitKeeping(last=True, masked=False)
    if logit_keeping(tiny_gpt2).masked is False:
        pytest.skip("this transformers takes no row masks either (before 5.21): nothing to compare")
    queries = _queries(cloze_rows(capitals_rows))[::5]
    queries.append(ClozeQuery("[Y] is the capital of Egypt.", ("Cairo", "Rabat", "Amsterdam")))
    for scorer in (lambda lm: CausalLMScorer(lm, "sum", include_remainder=True), SentenceLegacyScorer):
        expected = scorer(tiny_gpt2).score(queries)
        with warnings.catch_warnings():  # its forward hides the cache argument's name behind **kwargs
            warnings.simplefilter("error", FutureWarning)
            got = scorer(old).score(queries)
        assert got == [pytest.approx(e, abs=1e-5) for e in expected]


@pytest.mark.parametrize("with_context", [False, True])
def test_packed_rows_sum_as_the_kv_cache_path(tiny_gpt2, with_context):
    """One row per prompt (context, then every continuation seeing only the context and itself) gives
    the sums of the KV-cache path, empty continuations (-inf) and one-token contexts included."""
    from factatlas.probe.causal import continuation_sums, logit_keeping, packs

    keep = logit_keeping(tiny_gpt2)
    assert packs(tiny_gpt2, keep)
    tok = tiny_gpt2.tokenizer
    contexts = [tok(t)["input_ids"] for t in ("The capital of Egypt is", "Cairo is the capital of", "Rabat")]
    contexts.append([tok.eos_token_id])  # a slot that opens the prompt: the context is one token
    conts = [[tuple(tok(" " + w)["input_ids"]) for w in ("Cairo", "Le Caire", "Amsterdam Centraal")] + [()]
             for _ in contexts]
    packed = continuation_sums(tiny_gpt2, contexts, conts, 64, keep, with_context, packed=True)
    cached = continuation_sums(tiny_gpt2, contexts, conts, 64, keep, with_context, packed=False)
    assert packed[0] == [pytest.approx(c, abs=1e-5) for c in cached[0]]
    assert packed[1] == pytest.approx(cached[1], abs=1e-5)
    assert all(row[-1] == float("-inf") for row in packed[0])
    assert any(len(c) > 2 for row in conts for c in row) and any(len(c) == 1 for c in contexts)


class _IgnoresItsMask:
    """A decoder that builds its own causal mask from the sequence: it honours no 4-D mask and no positions."""

    def forward(self, *args, attention_mask=None, position_ids=None, **kwargs):
        if attention_mask is not None and attention_mask.dim() == 4:
            attention_mask = None
        return super().forward(*args, attention_mask=attention_mask, **kwargs)


def test_forward_accepts_looks_through_kwargs_only_forwards():
    from factatlas.probe.causal import forward_accepts

    class Base:
        def forward(self, input_ids, cache=None, **kwargs):
            return input_ids

    class Wrapper(Base):
        def forward(self, *args, attention_mask=None, **kwargs):
            return super().forward(*args, **kwargs)

    class Closed(Base):
        def forward(self, input_ids, attention_mask=None):  # passes nothing else on
            return super().forward(input_ids)

    assert forward_accepts(Wrapper(), "cache") and forward_accepts(Wrapper(), "attention_mask")
    assert not forward_accepts(Wrapper(), "logits_to_keep")  # no forward names it: **kwargs alone is no promise
    assert not forward_accepts(Closed(), "cache") and forward_accepts(Closed(), "attention_mask")


def test_peft_adapters_are_looked_through(tiny_gpt2, capitals_rows):
    """A LoRA adapter wrapped around the model with PEFT (``PeftModelForCausalLM``, not a subclass of the
    model: its forward passes **kwargs on to the model it names) keeps the row masks and this transformers'
    cache argument; with a fresh adapter (B = 0) it scores as the model itself."""
    import copy

    peft = pytest.importorskip("peft")
    from factatlas.probe.causal import cache_argument, forward_accepts, logit_keeping
    from factatlas.probe.models import wrap_model

    with warnings.catch_warnings():  # peft asks this transformers for a renamed attribute: not ours to fix
        warnings.simplefilter("ignore", FutureWarning)
        adapted = peft.get_peft_model(copy.deepcopy(tiny_gpt2.model),
                                      peft.LoraConfig(r=2, target_modules=["c_attn"], fan_in_fan_out=True))
    assert not isinstance(adapted, type(tiny_gpt2.model))
    for name in ("logits_to_keep", "attention_mask", cache_argument(tiny_gpt2.model)):
        assert forward_accepts(adapted, name) == forward_accepts(tiny_gpt2.model, name), name
    lora = wrap_model(adapted.eval(), tiny_gpt2.tokenizer, name="lora-gpt2", family="causal")
    assert cache_argument(adapted) == cache_argument(tiny_gpt2.model)
    assert logit_keeping(lora) == logit_keeping(tiny_gpt2)
    queries = _queries(cloze_rows(capitals_rows))[::7]
    for packed in (True, False):
        expected = CausalLMScorer(tiny_gpt2, "sum", include_remainder=True, packed=packed).score(queries)
        with warnings.catch_warnings():
            warnings.simplefilter("error", FutureWarning)
            got = CausalLMScorer(lora, "sum", include_remainder=True, packed=packed).score(queries)
        assert got == [pytest.approx(e, abs=1e-5) for e in expected]


def test_models_that_ignore_packed_masks_keep_the_kv_cache_path(tiny_gpt2, capitals_rows):
    import copy

    from factatlas.probe.causal import logit_keeping, packs
    from factatlas.probe.models import wrap_model

    model = copy.deepcopy(tiny_gpt2.model)
    model.__class__ = type("MaskBlindGPT2", (_IgnoresItsMask, type(model)), {})
    blind = wrap_model(model, tiny_gpt2.tokenizer, name="mask-blind-gpt2", family="causal")
    assert not packs(blind, logit_keeping(blind))
    # its forward hides logits_to_keep behind **kwargs, yet the row masks still reach the model's code
    assert logit_keeping(blind) == logit_keeping(tiny_gpt2)
    queries = _queries(cloze_rows(capitals_rows))[::7]
    expected = CausalLMScorer(tiny_gpt2, "sum", include_remainder=True).score(queries)
    with warnings.catch_warnings():  # its forward hides the cache argument's name behind **kwargs
        warnings.simplefilter("error", FutureWarning)
        got = CausalLMScorer(blind, "sum", include_remainder=True).score(queries)
    assert got == [pytest.approx(e, abs=1e-5) for e in expected]


def test_kv_cache_path_uses_the_cache_argument_of_this_transformers(tiny_gpt2):
    """transformers 5.24 deprecates ``past_key_values`` for ``cache`` (removed in 5.40): no warning now."""
    import warnings

    q = ClozeQuery("The capital of Egypt is [Y].", ("Cairo", "Le Caire", "Amsterdam Centraal"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        scores = CausalLMScorer(tiny_gpt2, "sum", packed=False).score([q])[0]
    assert scores == pytest.approx(CausalLMScorer(tiny_gpt2, "sum", packed=True).score([q])[0], abs=1e-5)


@pytest.mark.parametrize("chunk", [1, 3, 4, 10, 64])
@pytest.mark.parametrize("bias", [True, False])
def test_chunked_head_reads_the_log_softmax_of_the_whole_projection(chunk, bias):
    import numpy as np
    import torch

    from factatlas.probe.causal import chunked_target_log_probs

    torch.manual_seed(0)
    hidden, head = torch.randn(10, 8), torch.nn.Linear(8, 50, bias=bias)
    reads = [(np.array([9, 0, 3, 3, 7, 4]), np.array([1, 49, 0, 2, 5, 7])), (np.array([], dtype=np.int64),) * 2,
             (np.array([2, 8]), np.array([3, 3]))]
    with torch.inference_mode():
        got = chunked_target_log_probs(hidden, head, reads, chunk=chunk)
        logp = torch.log_softmax(head(hidden), dim=-1)
    for g, (rows, tokens) in zip(got, reads, strict=True):
        assert g.tolist() == pytest.approx(logp[torch.from_numpy(rows), torch.from_numpy(tokens)].tolist(), abs=1e-6)


def test_generation_stops_a_row_once_its_first_line_is_complete(tiny_gpt2):
    import torch

    from factatlas.probe.generative import first_line_done

    tok = tiny_gpt2.tokenizer
    rows = [tok("Paris\nRome")["input_ids"], tok("\nParis")["input_ids"], tok(" Par")["input_ids"]]
    width = max(len(r) for r in rows)
    prompt = [7, 8]  # the prompt's columns are not read
    ids = torch.tensor([prompt + r + [tok.eos_token_id] * (width - len(r)) for r in rows])
    assert first_line_done(tok, len(prompt))(ids, None).tolist() == [True, False, False]


def test_answers_stopped_at_their_first_line_keep_it(tiny_gpt2, capitals_rows):
    """A copy of the tiny GPT-2 that favours a line break after a third of its tokens (by id), so rows of a
    batch finish their first lines at different steps, and answers have later lines and leading breaks."""
    import copy

    from factatlas.probe.generative import GreedyGenerator, first_line
    from factatlas.probe.models import wrap_model

    tok = tiny_gpt2.tokenizer
    newline = tok("\n")["input_ids"][-1]
    model = copy.deepcopy(tiny_gpt2.model)

    def favour_breaks(module, args, kwargs, output):
        last = kwargs["input_ids"][:, -1]
        output.logits[:, -1, newline] += 1e4 * ((last % 3 == 0) & (last != newline))
        return output

    model.register_forward_hook(favour_breaks, with_kwargs=True)
    lm = wrap_model(model, tok, name="breaks-gpt2", family="causal")
    prompts = [r["text"].split("[Y]")[0].rstrip() or r["text"] for r in capitals_rows[::5]] + ["\n", "a\nb\n"]
    stopped = GreedyGenerator(lm, max_new_tokens=12)
    full = GreedyGenerator(lm, max_new_tokens=12)
    full.stop_at_first_line = False
    got, want = stopped.generate(prompts), full.generate(prompts)
    assert sum("\n" in a for a in want) >= len(prompts) // 2  # the answers do run past their first line
    assert [first_line(a) for a in got] == [first_line(a) for a in want]
    assert sum(len(a) for a in got) < sum(len(a) for a in want)  # and the stopped rows did stop

