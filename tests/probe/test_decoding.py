"""Our greedy decoding loop (``probe/decoding.py``) against transformers' ``generate``: the same answers on
the capitals prompts, batched and one prompt at a time, for a causal, a seq2seq and a chat model; rows that
end leave the batch; stop strings split across tokens; end-of-sequence; ``max_new_tokens``."""

from __future__ import annotations

import pytest
import torch

from factatlas.probe.decoding import Decoded, eos_ids_of, greedy_changes, greedy_decode, initial_positions
from factatlas.probe.generative import GreedyGenerator, cut_at_stop, prompt_text_for_generation, stopped_rows
from tests.probe.probe_capitals import prompts_of


def texts_of(capitals_rows, kind: str | None = None) -> list[str]:
    rows = [r for r in capitals_rows if kind is None or r["kind"] == kind]
    return [prompt_text_for_generation(p) for p in prompts_of(rows)]


ALONE = 3  # one prompt at a time: every third prompt (the batched answers: every prompt, in one batch)


def both(lm, prompts, stop_at_first_line: bool = True, **kw) -> dict[str, list[str]]:
    """Answers by our loop and by ``generate``, each batched and one prompt at a time."""
    out = {}
    for decoder in ("ours", "transformers"):
        gen = GreedyGenerator(lm, batch_tokens=100_000, decoder=decoder, **kw)
        gen.stop_at_first_line = stop_at_first_line
        out[f"{decoder} batched"] = gen.generate(prompts)
        out[f"{decoder} alone"] = [gen.generate([p])[0] for p in prompts[::ALONE]]
    return out


def left_padded(encoded: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(e) for e in encoded)
    ids = torch.tensor([[pad] * (width - len(e)) + e for e in encoded])
    mask = torch.tensor([[0] * (width - len(e)) + [1] * len(e) for e in encoded])
    return ids, mask


def assert_all_equal(answers: dict[str, list[str]]) -> list[str]:
    first = answers["ours batched"]
    for name, got in answers.items():
        assert got == (first[::ALONE] if name.endswith("alone") else first), name
    assert len(set(first)) > 3  # different answers: an equality of empty strings would prove nothing
    return first


@pytest.mark.parametrize("stop_at_first_line", [True, False])
def test_causal_answers_equal_generate_batched_and_alone(tiny_gpt2, capitals_rows, stop_at_first_line):
    assert_all_equal(both(tiny_gpt2, texts_of(capitals_rows), stop_at_first_line, max_new_tokens=10))


def test_seq2seq_answers_equal_generate_batched_and_alone(tiny_t5, capitals_rows):
    answers = both(tiny_t5, texts_of(capitals_rows), max_new_tokens=10)
    assert_all_equal(answers)
    gen = GreedyGenerator(tiny_t5, max_new_tokens=10, batch_tokens=100_000)
    gen.generate(texts_of(capitals_rows))
    steps = gen.last_rows_per_step
    assert steps[0] == len(capitals_rows) and steps[-1] < steps[0]  # T5 rows end at </s> at different steps


def test_chat_answers_equal_generate_batched_and_alone(tiny_chat, capitals_rows):
    from factatlas.probe.chat import LocalChat, conversation

    questions = [conversation(p.text, [], "Answer briefly.") for p in prompts_of(
        [r for r in capitals_rows if r["kind"] == "question"])]
    answers = {}
    for decoder in ("ours", "transformers"):
        chat = LocalChat(tiny_chat, max_new_tokens=8, batch_tokens=100_000)
        chat.generator.decoder = decoder
        answers[f"{decoder} batched"] = [r.answer for r in chat.chat(questions)]
        answers[f"{decoder} alone"] = [chat.chat([q])[0].answer for q in questions[::ALONE]]
    assert_all_equal(answers)


def test_ended_rows_leave_the_batch(tiny_gpt2, capitals_rows):
    """A stop rule that ends row r after r + 1 tokens: the forwards compute 6, 5, ..., 1 rows; and each
    row's tokens are those it gets decoded alone."""
    tok = tiny_gpt2.tokenizer
    gen = GreedyGenerator(tiny_gpt2)
    encoded = gen.encode(texts_of(capitals_rows)[:6])
    ids, mask = left_padded(encoded, tok.pad_token_id)

    def row_rule(rows):  # rows keep their order and all have as many tokens: the first still here is next
        return [j == 0 for j in range(len(rows))]

    decoded = greedy_decode(tiny_gpt2.model, ids, mask, 20, frozenset(), row_rule)
    assert decoded.rows_per_step == (6, 5, 4, 3, 2, 1)
    assert [len(t) for t in decoded.tokens] == [1, 2, 3, 4, 5, 6]
    for row, e in enumerate(encoded):
        alone = greedy_decode(tiny_gpt2.model, torch.tensor([e]), torch.ones(1, len(e), dtype=torch.long),
                              row + 1, frozenset())
        assert alone.tokens[0] == decoded.tokens[row]
    # the invariant on real stopping: a forward computes exactly the rows whose answers have not ended before it
    real = GreedyGenerator(tiny_gpt2, max_new_tokens=10, batch_tokens=100_000)
    ids, mask = left_padded(real.encode(texts_of(capitals_rows)), tok.pad_token_id)
    decoded = greedy_decode(tiny_gpt2.model, ids, mask, 10, eos_ids_of(tiny_gpt2.model.generation_config),
                            stopped_rows(tok, ("\n",)))
    counts = [len(t) for t in decoded.tokens]
    assert decoded.rows_per_step == tuple(sum(c > k for c in counts) for k in range(max(counts)))
    assert len(set(counts)) > 2  # rows did end at different steps


def straddling_pairs(tok, answers_ids: list[list[int]]) -> list[str]:
    """Two printable, non-space characters across a token boundary in the answers, most frequent first."""
    import collections

    counts: collections.Counter = collections.Counter()
    for ids in answers_ids:
        pieces = [tok.decode([i]) for i in ids]
        for a, b in zip(pieces[:-1], pieces[1:], strict=False):
            if a and b and not (a[-1] + b[0]).isspace() and " " not in a[-1] + b[0] and "\ufffd" not in a + b:
                counts[a[-1] + b[0]] += 1
    return [p for p, _ in counts.most_common()]


def test_stop_strings_split_across_tokens_equal_generate_stop_strings(tiny_gpt2, capitals_rows):
    tok = tiny_gpt2.tokenizer
    prompts = texts_of(capitals_rows)
    plain = GreedyGenerator(tiny_gpt2, max_new_tokens=10, batch_tokens=100_000)
    plain.stop_at_first_line = False
    ids, mask = left_padded(plain.encode(prompts), tok.pad_token_id)
    unstopped = greedy_decode(tiny_gpt2.model, ids, mask, 10, eos_ids_of(tiny_gpt2.model.generation_config))
    stops = ("\n", straddling_pairs(tok, [list(t) for t in unstopped.tokens])[0])
    answers = both(tiny_gpt2, prompts, max_new_tokens=10, stop_strings=stops)
    first = assert_all_equal(answers)
    # transformers' own stop_strings (with the tokenizer), cut as ours are
    new = tiny_gpt2.model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=10,
                                   pad_token_id=tok.pad_token_id, stop_strings=list(stops), tokenizer=tok)
    hf = [cut_at_stop(tok.decode(r[ids.shape[1]:], skip_special_tokens=True).strip(), stops) for r in new]
    assert hf == first
    split = sum(stops[1] in tok.decode(list(t)) for t in unstopped.tokens)
    assert split >= 3  # the stop string occurs, across a token boundary, in several answers


def test_end_of_sequence_and_max_new_tokens_as_generate(tiny_gpt2, capitals_rows):
    tok = tiny_gpt2.tokenizer
    encoded = GreedyGenerator(tiny_gpt2).encode(texts_of(capitals_rows)[:8])
    ids, mask = left_padded(encoded, tok.pad_token_id)
    free = greedy_decode(tiny_gpt2.model, ids, mask, 7, frozenset())
    assert [len(t) for t in free.tokens] == [7] * 8 and free.rows_per_step == (7 * (8,))[:7]
    eos = free.tokens[0][2]  # a token the first row writes third: as end of sequence, that row ends there
    ended = greedy_decode(tiny_gpt2.model, ids, mask, 7, frozenset({eos}))
    new = tiny_gpt2.model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=7,
                                   eos_token_id=eos, pad_token_id=tok.pad_token_id)[:, ids.shape[1]:].tolist()
    for ours, theirs, unended in zip(ended.tokens, new, free.tokens, strict=True):
        cut = unended.index(eos) + 1 if eos in unended else 7
        assert list(ours) == list(unended[:cut]) == theirs[:cut]
        assert all(t == tok.pad_token_id for t in theirs[cut:])  # generate pads the ended row; ours drops it
    assert len(ended.tokens[0]) <= 3 and ended.rows_per_step[-1] < 8


def test_last_position_logits_are_bit_identical(tiny_gpt2, capitals_rows):
    tok = tiny_gpt2.tokenizer
    ids, mask = left_padded(GreedyGenerator(tiny_gpt2).encode(texts_of(capitals_rows)[:8]), tok.pad_token_id)
    with torch.inference_mode():
        full = tiny_gpt2.model(input_ids=ids, attention_mask=mask, position_ids=initial_positions(mask)).logits
        last = tiny_gpt2.model(input_ids=ids, attention_mask=mask, position_ids=initial_positions(mask),
                               logits_to_keep=1).logits
    assert torch.equal(full[:, -1:], last)
    assert initial_positions(torch.tensor([[0, 0, 1, 1, 1]])).tolist() == [[0, 0, 0, 1, 2]]


def test_generation_settings_that_change_greedy_choices_fall_back_to_generate(tiny_gpt2, capitals_rows, capsys):
    import copy

    from factatlas.probe.models import wrap_model

    model = copy.deepcopy(tiny_gpt2.model)
    model.generation_config.repetition_penalty = 3.0
    model.generation_config.no_repeat_ngram_size = 2
    lm = wrap_model(model, tiny_gpt2.tokenizer, name="penalised-gpt2", family="causal")
    assert greedy_changes(model.generation_config) == ["repetition_penalty=3.0", "no_repeat_ngram_size=2"]
    assert greedy_changes(tiny_gpt2.model.generation_config) == []
    prompts = texts_of(capitals_rows)[:12]
    ours = GreedyGenerator(lm, max_new_tokens=10)
    ours.stop_at_first_line = False
    theirs = GreedyGenerator(lm, max_new_tokens=10, decoder="transformers")
    theirs.stop_at_first_line = False
    assert ours.generate(prompts) == theirs.generate(prompts)
    assert ours.fallbacks == 1 and ours.counts == {"generation/batches-by-transformers-generate": 1}
    assert theirs.counts == {} and GreedyGenerator(tiny_gpt2).counts == {}
    assert "repetition_penalty=3.0, no_repeat_ngram_size=2" in capsys.readouterr().err


@pytest.mark.parametrize("scoring, model", [("generative", "tiny_gpt2"), ("chat", "tiny_chat")])
def test_a_fallback_to_generate_is_counted_in_probe_json(run_dir, scoring, model, request):
    """Every batch decoded by transformers' generate instead of our loop is in probe.json's counts."""
    import copy
    import json

    from factatlas.probe.models import wrap_model
    from factatlas.probe.runner import ProbeConfig, probe_benchmark

    loaded = request.getfixturevalue(model)
    penalised = copy.deepcopy(loaded.model)
    penalised.generation_config.repetition_penalty = 3.0
    lm = wrap_model(penalised, loaded.tokenizer, name="penalised", family="causal")
    config = ProbeConfig.from_flags(model="penalised", scoring=scoring, device="cpu", max_new_tokens=4, langs=("en",))
    outcome = probe_benchmark(run_dir, config, lm=lm)
    counts = json.loads((outcome.out_dir / "probe.json").read_text("utf-8"))["counts"]
    assert counts["generation/batches-by-transformers-generate"] >= 1
    with pytest.raises(ValueError, match="unknown decoder"):
        GreedyGenerator(lm, decoder="beam")


def test_no_new_tokens_and_no_rows():
    assert greedy_decode(None, torch.zeros((2, 3), dtype=torch.long), torch.ones((2, 3)), 0, frozenset()) == \
        Decoded(((), ()), ())
