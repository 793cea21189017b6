"""Causal-LM ranking rules: the candidate's mean or summed log-probability after the prompt's prefix (in
this process, or from a server's prompt log-probabilities), and BMLAMA's whole-sentence legacy score."""

from __future__ import annotations

from dataclasses import dataclass

from factatlas.probe.options import Option, Options
from factatlas.probe.rule import Rule, register_rule

REMAINDER = Option("--remainder", False, "causal-mean, causal-sum: also score the template's text after the slot.",
                   cli_type=bool)


@dataclass(frozen=True)
class CausalOptions(Options):
    include_remainder: bool = REMAINDER.field()


def _local(reduce: str):
    def make(lm, options: CausalOptions, backend):
        from factatlas.probe.causal import CausalLMScorer

        return CausalLMScorer(lm, reduce, options.include_remainder, batch_tokens=backend.batch_tokens)
    return make


def _remote(reduce: str):
    def make(model, options: CausalOptions, client):
        from factatlas.probe.openai_backend import OpenAILogprobScorer

        return OpenAILogprobScorer(client, model.tokenizer, reduce, options.include_remainder)
    return make


def _sentence(lm, options, backend):
    from factatlas.probe.causal import SentenceLegacyScorer

    return SentenceLegacyScorer(lm, batch_tokens=backend.batch_tokens)


NEEDS = frozenset({"tokenizer", "log-probs"})  # a server must return prompt log-probs; ids made here
register_rule(Rule("causal-mean", "causal", "rank", "mean log p(candidate tokens | prompt prefix)",
                   options=CausalOptions, local=_local("mean"), remote=_remote("mean"), needs=NEEDS,
                   default_for=("causal",)))
register_rule(Rule("causal-sum", "causal", "rank", "sum of log p(candidate tokens | prompt prefix)",
                   options=CausalOptions, local=_local("sum"), remote=_remote("sum"), needs=NEEDS))
register_rule(Rule("causal-sentence-legacy", "causal", "rank",
                   "BMLAMA legacy: minus the mean NLL of the whole filled sentence (tokenizer's own specials)",
                   local=_sentence))
