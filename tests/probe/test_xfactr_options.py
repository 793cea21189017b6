"""X-FACTR's evaluation and decoder options (Jiang et al. 2020, §3.4 and §4.1-4.2), checked against slow
reference loops written out here and against answers whose languages are known."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from factatlas.errors import ConfigError
from factatlas.probe.generative import (
    LanguageAliases,
    alias_index_by_lang,
    answer_prompts,
)
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import special_wrap, tokenize_slots
from factatlas.probe.xfactr import XFactrDecoder
from factatlas.tables import RANKINGS_SCHEMA, read_rows
from tests.probe.probe_capitals import CAPITALS, cloze_rows, prompts_of
from tests.probe.test_runner_cli import _probe


class FixedAnswer:
    """Answers every prompt of language ``lang`` with ``answer_of[lang](prompt index)``."""

    scoring = "generative"

    def __init__(self, answers: Sequence[str]):
        self.answers = list(answers)

    def generate(self, prompts: Sequence[str]) -> list[str]:
        out, self.answers = self.answers[: len(prompts)], self.answers[len(prompts):]
        return out


def _english_gold(row) -> str:
    return next(c[5] for c in CAPITALS if c[4] == row["gold_qids"][0])


def _french_gold(row) -> str:
    return next(c[6] for c in CAPITALS if c[4] == row["gold_qids"][0])


@pytest.mark.parametrize(("mode", "fr_right", "en_right"), [
    ("any", 24, 24),      # every language's form counts
    ("single", 12, 12),   # only the prompt's own language: the 12 capitals spelt alike in both
    ("double", 24, 12),   # the prompt's language and English: French prompts answered in English pass
])
def test_answer_languages_single_double_any(capitals_rows, mode, fr_right, en_right):
    # French prompts answered with the English name, English prompts with the French one.
    rows = cloze_rows(capitals_rows, "P36/1")
    answers = [_english_gold(r) if r["lang"] == "fr" else _french_gold(r) for r in rows]
    same = sum(1 for c in CAPITALS if c[5] == c[6])
    assert same == 12  # Rabat, Amman, Tunis, Doha, Sanaa; Paris, Berlin, Rome, Madrid, Amsterdam, Stockholm, Dublin
    aliases = LanguageAliases(alias_index_by_lang(prompts_of(capitals_rows)), mode)
    results = answer_prompts(FixedAnswer(answers), prompts_of(rows), aliases, "m", "generative")
    right = {lang: sum(r.correct_at_1 for r in results if r.lang == lang) for lang in ("en", "fr")}
    assert right == {"fr": fr_right, "en": en_right}


class FixedChat:
    """A chat backend replying to the i-th conversation with ``answers[i]``."""

    def __init__(self, answers: Sequence[str]):
        self.answers = list(answers)

    def chat(self, conversations):
        from factatlas.probe.chat import Reply

        out, self.answers = self.answers[: len(conversations)], self.answers[len(conversations):]
        return [Reply(a, tuple(c), None) for a, c in zip(out, conversations, strict=True)]


@pytest.mark.parametrize("rule", ["chat", "chat-lenient"])
@pytest.mark.parametrize(("mode", "fr_right", "en_right"), [
    ("any", 24, 24), ("single", 12, 12), ("double", 24, 12)])
def test_chat_answer_languages_single_double_any(capitals_rows, rule, mode, fr_right, en_right):
    # The same hand count as above through the chat rules: French questions answered with the English
    # name, English ones with the French name (the lenient rule inside a sentence).
    from factatlas.probe.chat import ChatConfig, answer_conversations

    rows = [r for r in capitals_rows if r["kind"] == "question"]
    assert len(rows) == 48
    answers = [_english_gold(r) if r["lang"] == "fr" else _french_gold(r) for r in rows]
    if rule == "chat-lenient":
        answers = [f"I think it is {a}." for a in answers]
    every = prompts_of(capitals_rows)
    aliases = LanguageAliases(alias_index_by_lang(every), mode)
    results = answer_conversations(FixedChat(answers), prompts_of(rows), every, aliases, "m", rule,
                                   ChatConfig())
    right = {lang: sum(r.correct_at_1 for r in results if r.lang == lang) for lang in ("en", "fr")}
    assert right == {"fr": fr_right, "en": en_right}


def test_answer_languages_reject_an_unknown_mode(capitals_rows):
    with pytest.raises(ValueError, match="unknown answer languages 'both'"):
        LanguageAliases(alias_index_by_lang(prompts_of(capitals_rows)), "both")


def _pass(lm, ids: list[int], position: int):
    import torch

    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0, position]
    lp = torch.log_softmax(logits.float(), -1)
    lp[lm.tokenizer.all_special_ids] = float("-inf")
    return lp


def _layout(lm, text: str, m: int) -> tuple[list[int], int]:
    tok = lm.tokenizer
    slot = tokenize_slots(tok, [ClozeQuery(text, ("x",))])[0]
    wrap = special_wrap(tok)
    return wrap.wrap([*slot.prefix, *([tok.mask_token_id] * m), *slot.suffix]), len(wrap.head) + len(slot.prefix)


def _texts(capitals_rows, n=8):
    return [r["text"] for r in cloze_rows(capitals_rows, "P36/1")[:n]] + \
           [r["text"] for r in cloze_rows(capitals_rows, "P36/2")[:n]]


def test_confidence_refinement_recomputes_confidences(tiny_bert, capitals_rows):
    """Reference loop, one prompt and one pass at a time: every step masks each position in turn, the
    confidence of a position is the log-prob of its current token there, the least confident position
    takes its best token; stop when it keeps its token, or after 2m steps."""
    m, mask = 3, tiny_bert.tokenizer.mask_token_id
    texts = _texts(capitals_rows)
    initial = XFactrDecoder(tiny_bert, max_masks=m, init="confidence", refine=False)
    refined = XFactrDecoder(tiny_bert, max_masks=m, init="confidence", refine=True, refine_order="confidence")
    slots = tokenize_slots(tiny_bert.tokenizer, [ClozeQuery(t, ("x",)) for t in texts])
    starts = initial.decode_length(slots, m)
    got = refined.decode_length(slots, m)
    differs = 0
    for text, start, result in zip(texts, starts, got, strict=True):
        ids, first = _layout(tiny_bert, text, m)
        ids[first: first + m] = start.tokens
        for _ in range(2 * m):
            dists = []
            for j in range(m):
                masked = list(ids)
                masked[first + j] = mask
                dists.append(_pass(tiny_bert, masked, first + j))
            confidence = [float(dists[j][ids[first + j]]) for j in range(m)]
            col = min(range(m), key=lambda j: confidence[j])
            best = int(dists[col].argmax())
            if best == ids[first + col]:
                break
            ids[first + col] = best
        assert result.tokens == tuple(ids[first: first + m]), text
        differs += result.tokens != start.tokens
    assert differs >= 1  # the refinement changed something on these prompts, so the comparison has teeth


def test_beam_search_keeps_the_best_pair(tiny_bert, capitals_rows):
    """Order-based, two masks, beam 3, by hand: the first token among its 3 best, the second the best
    after it; the beam's answer is the pair with the highest summed log-prob, never below greedy's."""
    m, k = 2, 3
    texts = _texts(capitals_rows)
    beam = XFactrDecoder(tiny_bert, max_masks=m, init="order", refine=False, beam=k, length="sum")
    greedy = XFactrDecoder(tiny_bert, max_masks=m, init="order", refine=False, length="sum")
    slots = tokenize_slots(tiny_bert.tokenizer, [ClozeQuery(t, ("x",)) for t in texts])
    got, plain = beam.decode_length(slots, m), greedy.decode_length(slots, m)
    better = 0
    for text, result, g in zip(texts, got, plain, strict=True):
        ids, first = _layout(tiny_bert, text, m)
        lp1 = _pass(tiny_bert, ids, first)
        options = []
        for a in lp1.topk(k).indices.tolist():
            filled = list(ids)
            filled[first] = a
            lp2 = _pass(tiny_bert, filled, first + 1)
            options.append((float(lp1[a]) + float(lp2.max()), a, int(lp2.argmax())))
        score, a, b = max(options, key=lambda o: o[0])
        assert result.tokens == (a, b), text
        assert result.score("sum") == pytest.approx(score, abs=1e-4)
        assert result.score("sum") >= g.score("sum") - 1e-6
        better += result.score("sum") > g.score("sum") + 1e-6
    assert better >= 1  # the beam found a better pair than greedy somewhere


def test_oracle_and_per_language_mask_counts(tiny_bert, capitals_rows):
    rows = cloze_rows(capitals_rows, "P36/1")
    prompts = prompts_of(rows)
    tok = tiny_bert.tokenizer
    oracle = XFactrDecoder(tiny_bert, max_masks=2, masks="oracle", refine=False)
    counts = oracle.mask_counts_for(prompts)
    # by hand: the gold's ids are what the prompt + gold adds to the prompt's text before the slot
    for p, c in zip(prompts, counts, strict=True):
        left = p.text[: p.text.index("[Y]")]
        full = tok(left + p.gold_forms[0][0], add_special_tokens=False)["input_ids"]
        assert c == (len(full) - len(tok(left, add_special_tokens=False)["input_ids"]),)
    assert max(c[0] for c in counts) > 2  # the oracle goes beyond --xfactr-max-masks
    decoded = oracle.decode([p.text for p in prompts], counts)
    assert [len(d.tokens) for d in decoded] == [c[0] for c in counts]

    per_lang = XFactrDecoder(tiny_bert, max_masks=3, max_masks_by_lang={"fr": 1}, refine=False)
    counts = per_lang.mask_counts_for(prompts)
    assert {p.lang: c for p, c in zip(prompts, counts, strict=True)} == {"fr": (1,), "en": (1, 2, 3)}
    decoded = per_lang.decode([p.text for p in prompts], counts)
    assert all(len(d.tokens) == 1 for p, d in zip(prompts, decoded, strict=True) if p.lang == "fr")
    assert any(len(d.tokens) > 1 for p, d in zip(prompts, decoded, strict=True) if p.lang == "en")


def test_cli_decoder_and_answer_language_options(run_dir, tiny_bert_dir):
    _probe(run_dir, "--model", tiny_bert_dir, "--scoring", "xfactr", "--out-name", "x", "--no-template-only",
           "--xfactr-max-masks", "2", "--xfactr-max-masks-lang", "fr=1", "--xfactr-refine-order", "confidence",
           "--xfactr-beam", "2", "--answer-langs", "single", "--langs", "fr")
    out = run_dir / "probe" / "x"
    info = json.loads((out / "probe.json").read_text("utf-8"))
    config = info["rule"]["options"]
    assert (config["xfactr_beam"], config["xfactr_refine_order"], config["answer_langs"]) == (2, "confidence", "single")
    assert [list(x) for x in config["xfactr_max_masks_by_lang"]] == [["fr", 1]]
    rankings = read_rows(out / "rankings.parquet", RANKINGS_SCHEMA)
    assert rankings and all(len(tiny_bert_dir.name) and r["lang"] == "fr" for r in rankings)
    assert "answers/accepted-languages:single" in json.dumps(info)

    _probe(run_dir, "--model", tiny_bert_dir, "--scoring", "xfactr", "--out-name", "o", "--no-template-only",
           "--xfactr-masks", "oracle", "--no-xfactr-refine", "--langs", "en")
    info = json.loads((run_dir / "probe" / "o" / "probe.json").read_text("utf-8"))
    assert any(k.startswith("xfactr/oracle-masks:") for k in json.dumps(info).split('"'))


def test_cli_option_errors(run_dir, tiny_bert_dir):
    for args, message in [(["--xfactr-max-masks-lang", "fr"], "expected LANG=M"),
                          (["--answer-langs", "both"], "--answer-langs 'both'"),
                          (["--xfactr-masks", "gold"], "--xfactr-masks 'gold'"),
                          (["--xfactr-beam", "2", "--xfactr-init", "independent"], "beam search needs")]:
        with pytest.raises(ConfigError, match=message):
            _probe(run_dir, "--model", tiny_bert_dir, "--scoring", "xfactr", *args)
    with pytest.raises(ConfigError, match=r"--answer-langs: not an option of scoring rule 'mlm-independent'"):
        _probe(run_dir, "--model", tiny_bert_dir, "--answer-langs", "double")


def test_cli_chat_answer_languages(run_dir, tiny_chat_dir):
    _probe(run_dir, "--model", tiny_chat_dir, "--scoring", "chat", "--out-name", "c", "--no-template-only",
           "--answer-langs", "double", "--langs", "fr")
    info = json.loads((run_dir / "probe" / "c" / "probe.json").read_text("utf-8"))
    assert info["rule"]["options"]["answer_langs"] == "double"
    assert info["counts"]["answers/accepted-languages:double"] == 24
    rankings = read_rows(run_dir / "probe" / "c" / "rankings.parquet", RANKINGS_SCHEMA)
    assert len(rankings) == 24 and {r["lang"] for r in rankings} == {"fr"}
