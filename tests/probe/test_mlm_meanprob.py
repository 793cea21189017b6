"""mParaRel's multi-token scoring: the mean probability of a candidate's tokens, beside mean log-probability."""

from __future__ import annotations

import math

import pytest

from factatlas.probe.mlm import MaskedLMScorer
from factatlas.probe.protocol import ClozeQuery
from factatlas.probe.slots import special_wrap, tokenize_slots
from tests.probe.probe_capitals import cloze_rows


def _by_hand(lm, query: ClozeQuery) -> list[tuple[float, float]]:
    """(mean p, mean log p) per candidate: one pass with k masks for a k-token candidate (mLAMA)."""
    import torch

    tok = lm.tokenizer
    slot = tokenize_slots(tok, [query])[0]
    wrap = special_wrap(tok)
    out = []
    for cand in slot.candidates:
        k = len(cand)
        ids = wrap.wrap([*slot.prefix, *([tok.mask_token_id] * k), *slot.suffix])
        first = len(wrap.head) + len(slot.prefix)
        with torch.no_grad():
            lp = torch.log_softmax(lm.model(input_ids=torch.tensor([ids])).logits[0].double(), -1)
        logps = [float(lp[first + i, t]) for i, t in enumerate(cand)]
        out.append((sum(math.exp(x) for x in logps) / k, sum(logps) / k))
    return out


def test_mean_probability_by_hand(tiny_bert, capitals_rows):
    rows = cloze_rows(capitals_rows, "P36/1")[:6]
    queries = [ClozeQuery(r["text"], tuple(r["candidate_forms"])) for r in rows]
    prob = MaskedLMScorer(tiny_bert, "independent", average="prob")
    logp = MaskedLMScorer(tiny_bert, "independent")
    assert prob.scoring == "mlm-independent-meanprob"
    reorders = 0
    for q, p_scores, l_scores in zip(queries, prob.score(queries), logp.score(queries), strict=True):
        hand = _by_hand(tiny_bert, q)
        assert p_scores == pytest.approx([h[0] for h in hand], abs=1e-5)
        assert l_scores == pytest.approx([h[1] for h in hand], abs=1e-4)
        order = sorted(range(len(hand)), key=lambda i: -p_scores[i])
        reorders += order != sorted(range(len(hand)), key=lambda i: -l_scores[i])
    assert reorders >= 1  # the two averages rank some prompt's candidates differently


def test_unknown_average_is_refused(tiny_bert):
    with pytest.raises(ValueError, match="unknown token average 'median'"):
        MaskedLMScorer(tiny_bert, average="median")
