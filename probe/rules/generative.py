"""Generative QA: a greedy answer to each question, matched against every alias of the valid objects
(exactly, or as a whole-word substring in the lenient rule)."""

from __future__ import annotations

from dataclasses import dataclass

from factatlas.probe.options import ANSWER_LANGS, MAX_NEW_TOKENS, Options
from factatlas.probe.rule import Rule, register_rule


@dataclass(frozen=True)
class GenerativeOptions(Options):
    max_new_tokens: int = MAX_NEW_TOKENS.field()
    answer_langs: str = ANSWER_LANGS.field()


def _local(lm, options: GenerativeOptions, backend):
    from factatlas.probe.generative import GreedyGenerator

    return GreedyGenerator(lm, max_new_tokens=options.max_new_tokens, batch_tokens=backend.batch_tokens)


def _answer(generator, prompts, job):
    from factatlas.probe.generative import answer_prompts

    return answer_prompts(generator, prompts, job.aliases, job.model, job.spec.name, progress=job.progress)


for name, lenient, summary in (
        ("generative", False, "greedy answer; correct if it equals a normalised alias of a valid object"),
        ("generative-lenient", True, "greedy answer; correct if a normalised alias occurs in it (substring)")):
    register_rule(Rule(name, "any", "generate", summary, options=GenerativeOptions, local=_local, answer=_answer,
                       lenient=lenient, prompts="question"))
