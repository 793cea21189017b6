"""The seq2seq ranking rule (mT5's sentinel span, teacher-forced)."""

from __future__ import annotations

from factatlas.probe.rule import Rule, register_rule


def _local(lm, options, backend):
    from factatlas.probe.seq2seq import Seq2SeqScorer

    return Seq2SeqScorer(lm, batch_tokens=backend.batch_tokens)


register_rule(Rule("seq2seq", "seq2seq", "rank",
                   "mT5 sentinel: mean log p of '<extra_id_0> candidate <extra_id_1>' by teacher forcing",
                   local=_local, default_for=("seq2seq",)))
