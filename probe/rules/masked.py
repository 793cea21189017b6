"""Masked-LM ranking rules: mLAMA's independent masks and BMLAMA's pseudo-log-likelihood, each with the mean
log-probability or (mParaRel's variant) the mean probability of the candidate's tokens."""

from __future__ import annotations

from factatlas.probe.rule import Rule, register_rule


def _masked(mode: str, average: str):
    def make(lm, options, backend):
        from factatlas.probe.mlm import MaskedLMScorer

        return MaskedLMScorer(lm, mode, batch_tokens=backend.batch_tokens, average=average)
    return make


register_rule(Rule("mlm-independent", "mlm", "rank",
                   "mLAMA: one pass per needed mask count; mean log p of each candidate token at its mask",
                   local=_masked("independent", "logprob"), default_for=("mlm",)))
register_rule(Rule("mlm-pll", "mlm", "rank",
                   "BMLAMA: masks filled left to right with the candidate's own prefix; mean log p",
                   local=_masked("pll", "logprob")))
register_rule(Rule("mlm-independent-meanprob", "mlm", "rank",
                   "mParaRel's variant of mlm-independent: mean p (not log p) of the candidate's tokens",
                   local=_masked("independent", "prob")))
register_rule(Rule("mlm-pll-meanprob", "mlm", "rank", "mlm-pll with the mean p (not log p) of the candidate's tokens",
                   local=_masked("pll", "prob")))
