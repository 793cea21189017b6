"""Instruction-tuned QA through the model's chat template (in this process, or a server's
``/v1/chat/completions``): a system prompt, k worked examples, the question; answers matched as
``generative`` (strict) or ``generative-lenient``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from factatlas.probe.options import ANSWER_LANGS, MAX_NEW_TOKENS, Option, Options
from factatlas.probe.rule import Rule, register_rule

SYSTEM_PROMPT = Option("--system-prompt", None, "chat rules: the system message.")
SHOTS = Option("--shots", 0, "chat rules: worked examples per prompt (same language, never the fact asked).",
               cli_type=int, minimum=0)
SHOT_SPLIT = Option("--shot-split", "dev", "chat rules: the split examples come from.")


@dataclass(frozen=True)
class ChatOptions(Options):
    max_new_tokens: int = MAX_NEW_TOKENS.field()
    answer_langs: str = ANSWER_LANGS.field()
    system_prompt: str | None = SYSTEM_PROMPT.field()
    shots: int = SHOTS.field()
    shot_split: str = SHOT_SPLIT.field()

    def chat_config(self):
        from factatlas.probe.chat import ChatConfig

        return ChatConfig(self.system_prompt, self.shots, self.shot_split)


def _check(options: ChatOptions, splits: Sequence[str]) -> None:
    from factatlas.probe.chat import check_shot_split

    check_shot_split(options.chat_config(), splits)


def _local(lm, options: ChatOptions, backend):
    from factatlas.probe.chat import LocalChat

    return LocalChat(lm, max_new_tokens=options.max_new_tokens, batch_tokens=backend.batch_tokens)


def _remote(model, options: ChatOptions, client):
    from factatlas.probe.openai_backend import OpenAIChat

    return OpenAIChat(client, options.max_new_tokens)


def _answer(backend, prompts, job):
    from factatlas.probe.chat import answer_conversations

    return answer_conversations(backend, prompts, job.every_prompt, job.aliases, job.model, job.spec.name,
                                job.spec.options.chat_config(), job.counts, progress=job.progress)


for name, lenient, summary in (
        ("chat", False, "instruction-tuned QA through the model's chat template (system prompt, k dev-split "
                        "examples); strict alias match as 'generative'"),
        ("chat-lenient", True, "chat template QA; correct if a normalised alias occurs in the answer (substring)")):
    register_rule(Rule(name, "any", "generate", summary, options=ChatOptions, local=_local, remote=_remote,
                       answer=_answer, lenient=lenient, prompts="question", needs=frozenset({"chat-template"}),
                       check=_check))
