"""Greedy generation stopping at stop strings: a random tiny GPT-2 made to emit a fixed token script per
prompt (a forward hook), so each answer's tokens, and where a stop string straddles two of them, are known.
Batched (left-padded, rows stopping at different steps) = one prompt at a time = transformers' ``generate``
with its own ``stop_strings``."""

from __future__ import annotations

import pytest
import torch

from factatlas.probe.generative import (
    GreedyGenerator,
    completing_tokens,
    cut_at_stop,
    stop_index,
    stop_strings_done,
)
from factatlas.probe.models import wrap_model

CORPUS = ["The capital of France is Paris. Questions: where is Rome? Answer: Rome is in Italy.",
          "Lima, Quito and Bogota are capitals; Stockholm too. The answer is Cairo, Egypt."] * 20
NEW = 20  # new tokens at most: more than any script
PROMPTS = ["The capital of France is", "Where is Rome?", "The answer is"]
SCRIPTS = {  # what each prompt's answer will be (its tokens), and a tail after the stop strings
    "The capital of France is": " Paris. Questions: Lima",
    "Where is Rome?": " Rome is in Italy; Stockholm",
    "The answer is": " Cairo, Egypt Answer: Quito",
}


@pytest.fixture(scope="module")
def scripted():
    import transformers

    from factatlas.probe.tiny import train_tokenizer

    tok = train_tokenizer(CORPUS, "gpt2", vocab_size=300)
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=1, n_head=2, n_positions=128,
                                  bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                                  pad_token_id=tok.pad_token_id)
    model = transformers.GPT2LMHeadModel(cfg).eval()
    scripts = {p: tok(s, add_special_tokens=False)["input_ids"] for p, s in SCRIPTS.items()}
    state: dict = {}

    def follow_script(module, args, kwargs, output):
        ids = kwargs["input_ids"]
        if ids.shape[1] > 1:  # the prompt's pass: which script each row follows, from its own text
            texts = tok.batch_decode(ids, skip_special_tokens=True)
            state["rows"], state["step"] = [scripts[t.strip()] for t in texts], 0
        else:  # rows that have stopped leave the batch (our loop): the rest are those whose last token is here
            state["step"] += 1
            state["rows"] = still_decoding(state["rows"], state["step"] - 1, ids[:, 0].tolist(), tok.eos_token_id)
        step = state["step"]
        forced = torch.full_like(output.logits[:, -1], -1e4)
        for r, script in enumerate(state["rows"]):
            forced[r, script[step] if step < len(script) else tok.eos_token_id] = 0
        output.logits[:, -1] = forced
        return output

    model.register_forward_hook(follow_script, with_kwargs=True)
    return wrap_model(model, tok, name="scripted-gpt2", family="causal"), scripts


def still_decoding(rows: list[list[int]], step: int, last_tokens: list[int], eos: int) -> list[list[int]]:
    """The scripts of the rows still in the batch: in order, the rows whose token at ``step`` is the next of
    ``last_tokens`` (rows keep their order when others leave)."""
    if len(last_tokens) == len(rows):  # none left (transformers' generate keeps finished rows, padded)
        return rows
    kept, it = [], iter(last_tokens)
    want = next(it, None)
    for script in rows:
        if want is not None and (script[step] if step < len(script) else eos) == want:
            kept.append(script)
            want = next(it, None)
    assert len(kept) == len(last_tokens), "the rows left in the batch match no subsequence of the scripts"
    return kept


def straddling_stop(tok, script: list[int], after: int) -> str:
    """Two characters across the boundary of the script's tokens ``after`` and ``after + 1``."""
    left, right = tok.decode(script[: after + 1]), tok.decode(script[after + 1: after + 2])
    return left[-1] + right[0]


def hf_answers(lm, prompts, stops, batched: bool) -> list[str]:
    """transformers' own ``generate`` with ``stop_strings``, on the same token ids as ours."""
    tok = lm.tokenizer
    gen = GreedyGenerator(lm, max_new_tokens=NEW)
    encoded = gen.encode(prompts)
    groups = [list(range(len(prompts)))] if batched else [[i] for i in range(len(prompts))]
    out = [""] * len(prompts)
    for group in groups:
        width = max(len(encoded[i]) for i in group)
        ids = torch.tensor([[tok.pad_token_id] * (width - len(encoded[i])) + encoded[i] for i in group])
        mask = torch.tensor([[0] * (width - len(encoded[i])) + [1] * len(encoded[i]) for i in group])
        new = lm.model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=NEW,
                                pad_token_id=tok.pad_token_id, stop_strings=list(stops), tokenizer=tok)[:, width:]
        for r, i in enumerate(group):
            out[i] = tok.decode(new[r], skip_special_tokens=True).strip()
    return out


def test_a_stop_string_split_across_tokens_stops_the_row_where_it_completes(scripted):
    lm, scripts = scripted
    tok = lm.tokenizer
    script = scripts[PROMPTS[1]]
    pieces = [tok.decode([t]) for t in script]
    assert len(pieces) >= 4
    stop = straddling_stop(tok, script, 5)  # "Ital" + "y": "ly"
    text = tok.decode(script)
    assert stop not in tok.decode(script[:6]) and stop in tok.decode(script[:7])  # the seventh token completes it
    gen = GreedyGenerator(lm, max_new_tokens=NEW, stop_strings=(stop,))
    answer = gen.generate([PROMPTS[1]])[0]
    assert answer == text[: text.index(stop)].strip()
    # the criterion itself: done exactly at the token that completes the stop string, never on the prompt
    prompt = gen.encode([PROMPTS[1]])[0]
    for done in (stop_strings_done(tok, len(prompt), (stop,)), gen.stopping_criterion(len(prompt))):
        states = [done(torch.tensor([prompt + script[:k]])).item() for k in range(1, len(script) + 1)]
        assert states.index(True) == 6 and all(states[6:])
    # the token filter: only tokens holding the stop string's last character (or U+FFFD) are decoded for
    may_complete = completing_tokens(tok, (stop,))
    assert may_complete[script[6]] and not may_complete[script[5]]
    assert completing_tokens(tok, ("m ",)) is None  # a space can come from between tokens: no filter


def test_batched_answers_equal_one_at_a_time_and_transformers_stop_strings(scripted):
    lm, scripts = scripted
    tok = lm.tokenizer
    stops = (".", straddling_stop(tok, scripts[PROMPTS[1]], 5), "Answer")  # "Answer": "Ans" + "wer"
    gen = GreedyGenerator(lm, max_new_tokens=NEW, batch_tokens=10_000, stop_strings=stops)
    batched = gen.generate(PROMPTS)
    alone = [gen.generate([p])[0] for p in PROMPTS]
    assert batched == alone
    expected = [cut_at_stop(tok.decode(scripts[p]), stops) for p in PROMPTS]
    assert batched == expected
    assert expected == ["Paris", "Rome is in Ita", "Cairo, Egypt"]  # rows stop at different steps
    for hf in (hf_answers(lm, PROMPTS, stops, batched=False), hf_answers(lm, PROMPTS, stops, batched=True)):
        assert [cut_at_stop(a, stops) for a in hf] == batched
        # transformers keeps the stop string (and the rest of the token that completed it): same tokens
        assert all(a.startswith(b) and stop_index(a, stops) is not None for a, b in zip(hf, batched, strict=True))
    unstopped = GreedyGenerator(lm, max_new_tokens=NEW, stop_strings=stops)
    unstopped.stop_at_first_line = False
    assert [a.strip() for a in unstopped.generate(PROMPTS)] == [tok.decode(scripts[p]).strip() for p in PROMPTS]


def test_leading_line_breaks_do_not_end_an_answer(scripted):
    assert stop_index("\n\nParis\nRome", ("\n",)) == 5
    assert cut_at_stop("\n Paris\nRome", ("\n",)) == "Paris"
    assert cut_at_stop("Lima. Quito", (";", ".")) == "Lima"
    assert cut_at_stop("Lima", (".",)) == "Lima"
    with pytest.raises(ValueError, match="stop_strings"):
        GreedyGenerator(scripted[0], stop_strings=("",))
