"""Open-answer rules: greedy QA with alias matching (GPT-2, T5) and X-FACTR decoding (BERT)."""

from __future__ import annotations

import pytest

from factatlas.probe.generative import GreedyGenerator, alias_index, answer_prompts, judge, normalise
from factatlas.probe.xfactr import XFactrDecoder
from tests.probe.probe_capitals import CHANCE, cloze_rows, p_at_1, prompts_of


def test_normalise():
    assert normalise("  The  Hague! ") == "hague"
    assert normalise("l'Égypte") == "égypte"
    assert normalise("ＰＡＲＩＳ") == "paris"  # NFKC folds full-width letters
    assert normalise("Le Caire") == "caire"


def test_judge_strict_and_lenient():
    aliases = {"Q90": {normalise("Paris")}, "Q35178": {normalise("Kuwait City")}, "Q817": {normalise("Kuwait")}}
    cands = ["Q817", "Q90", "Q35178"]
    assert judge("Paris.", cands, ["Q90"], aliases, lenient=False) == (["Q90"], [5.0], True)
    assert judge("It is Paris", cands, ["Q90"], aliases, lenient=False)[2] is False
    assert judge("It is Paris", cands, ["Q90"], aliases, lenient=True)[2] is True
    # lenient: the most specific alias ranks first
    ranked, _, correct = judge("Kuwait City\nmore text", cands, ["Q35178"], aliases, lenient=True)
    assert ranked == ["Q35178", "Q817"] and correct
    assert judge("Parisian", cands, ["Q90"], aliases, lenient=True)[2] is False  # whole words only


def test_alias_index_spans_languages(capitals_rows):
    aliases = alias_index(prompts_of(capitals_rows))
    assert {"caire", "cairo"} <= aliases["Q85"]


@pytest.mark.parametrize("fixture", ["tiny_gpt2", "tiny_t5"])
def test_greedy_answers_trained_questions(request, capitals_rows, fixture):
    lm = request.getfixturevalue(fixture)
    rows = [r for r in capitals_rows if r["kind"] == "question"]
    rankings = answer_prompts(GreedyGenerator(lm, max_new_tokens=8), prompts_of(rows), alias_index(prompts_of(capitals_rows)),
                              lm.name, "generative")
    assert p_at_1(rankings, rows, "train") >= 0.5
    assert p_at_1(rankings, rows, "test") <= 3 * CHANCE
    correct = [r for r in rankings if r.correct_at_1]
    assert all(r.prediction for r in correct)
    lenient = answer_prompts(GreedyGenerator(lm, max_new_tokens=8), prompts_of(rows), alias_index(prompts_of(capitals_rows)),
                             lm.name, "generative-lenient")
    assert sum(r.correct_at_1 for r in lenient) >= len(correct)


def test_generator_refuses_masked_lms(tiny_bert):
    with pytest.raises(ValueError, match="xfactr"):
        GreedyGenerator(tiny_bert)


@pytest.mark.parametrize(("init", "refine"), [("independent", False), ("order", True), ("confidence", True)])
def test_xfactr_recovers_trained_multi_token_answers(tiny_bert, capitals_rows, init, refine):
    rows = cloze_rows(capitals_rows, "P36/1")
    decoder = XFactrDecoder(tiny_bert, max_masks=4, init=init, refine=refine, length="mean")
    rankings = answer_prompts(decoder, prompts_of(rows), alias_index(prompts_of(capitals_rows)), "tiny-bert", "xfactr")
    assert p_at_1(rankings, rows, "train") >= 4 * CHANCE  # no candidate list: the spelling must come out right
    assert p_at_1(rankings, rows, "test") <= 3 * CHANCE
    assert any(len(tiny_bert.tokenizer(r.prediction, add_special_tokens=False)["input_ids"]) > 1
               for r in rankings if r.correct_at_1)


def test_xfactr_independent_single_mask_is_the_argmax(tiny_bert):
    import torch

    from factatlas.probe.protocol import ClozeQuery
    from factatlas.probe.slots import special_wrap, tokenize_slots

    text = "The capital of France is [Y]."
    decoder = XFactrDecoder(tiny_bert, max_masks=1, init="independent", refine=False)
    best = decoder.decode([text])[0]
    tok = tiny_bert.tokenizer
    slot = tokenize_slots(tok, [ClozeQuery(text, ("x",))])[0]
    wrap = special_wrap(tok)
    ids = wrap.wrap([*slot.prefix, tok.mask_token_id, *slot.suffix])
    with torch.no_grad():
        lp = torch.log_softmax(tiny_bert.model(input_ids=torch.tensor([ids])).logits[0, len(wrap.head) + len(slot.prefix)], -1)
    lp[tok.all_special_ids] = float("-inf")
    assert best.tokens == (int(lp.argmax()),)
    assert best.logps[0] == pytest.approx(float(lp.max()), abs=1e-5)


@pytest.mark.parametrize("length", ["mean", "sum"])
def test_xfactr_picks_the_length_with_the_best_score(tiny_bert, capitals_rows, length):
    from factatlas.probe.protocol import ClozeQuery
    from factatlas.probe.slots import tokenize_slots

    texts = [r["text"] for r in cloze_rows(capitals_rows, "P36/1")[:6]]
    decoder = XFactrDecoder(tiny_bert, max_masks=3, init="confidence", refine=True, length=length)
    slots = tokenize_slots(tiny_bert.tokenizer, [ClozeQuery(t, ("x",)) for t in texts])
    per_length = [decoder.decode_length(slots, m) for m in (1, 2, 3)]
    for i, best in enumerate(decoder.decode(texts)):
        options = [per_length[m][i] for m in range(3)]
        assert len(best.tokens) == max(range(3), key=lambda m: (options[m].score(length), -m)) + 1
        assert best == options[len(best.tokens) - 1]
