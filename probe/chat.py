"""Instruction-tuned generative QA: questions asked through the model's own chat template.

A prompt becomes a conversation: an optional system message, ``k`` worked examples (user question,
assistant answer) and the question. Examples come deterministically from one split of the benchmark
(``dev`` by default), in the prompt's language, never from the fact being asked: the split's question
prompts of that language are ordered once by a seeded hash of their prompt id, one per fact, and each
prompt takes the first ``k`` whose fact differs from its own — so nearly every prompt of a language sees
the same examples, and a result never leaks its own answer. An example's answer is the gold form the
benchmark gives in that language.

Answers are cut and matched exactly as ``factatlas.probe.generative`` does (``chat`` strict,
``chat-lenient`` substring). Every rankings row records in ``conversation`` the messages and, where the
text fed to the model is known (in-process models), the exact rendered template, as canonical JSON, so a
result can be audited.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from factatlas.errors import ConfigError
from factatlas.probe.generative import LanguageAliases, first_line, judge, prompt_text_for_generation
from factatlas.records import ProbeResult, Prompt

Message = dict[str, str]


@dataclass(frozen=True, slots=True)
class ChatConfig:
    system: str | None = None  # the system message; None sends none
    shots: int = 0  # worked examples per prompt
    shot_split: str = "dev"
    seed: int = 0  # orders the example pool


@dataclass(frozen=True, slots=True)
class Shot:
    prompt_id: str
    fact_id: str
    question: str
    answer: str


@dataclass(frozen=True, slots=True)
class Reply:
    """One answer and what produced it: ``rendered`` is the exact model input, None when a server renders."""

    answer: str
    messages: tuple[Mapping[str, str], ...]
    rendered: str | None


class ChatBackend(Protocol):
    """Answers conversations greedily; one Reply per conversation, in order."""

    def chat(self, conversations: Sequence[Sequence[Message]]) -> list[Reply]: ...


def _pool_key(seed: int, prompt_id: str) -> str:
    return hashlib.sha256(f"{seed}\x1f{prompt_id}".encode()).hexdigest()


def check_shot_split(config: ChatConfig, splits: Iterable[str]) -> None:
    """Examples need their split in the benchmark (checked by the chat rules before any model loads)."""
    present = sorted(set(splits))
    if config.shots > 0 and config.shot_split not in present:
        raise ConfigError(f"--shots {config.shots}: the benchmark has no '{config.shot_split}' split to draw "
                          f"examples from (it has {', '.join(present)}); pass --shot-split one of those, "
                          "or --shots 0")


def shot_pools(prompts: Sequence[Prompt], config: ChatConfig) -> dict[str, list[Shot]]:
    """lang -> the example pool in its fixed order (one question per fact, seeded hash order)."""
    if config.shots <= 0:
        return {}
    check_shot_split(config, {p.split for p in prompts})
    by_lang: dict[str, list[Shot]] = {}
    candidates = sorted((p for p in prompts if p.split == config.shot_split and p.kind == "question"
                         and p.gold_forms and p.gold_forms[0]),
                        key=lambda p: _pool_key(config.seed, p.prompt_id))
    seen: set[tuple[str, str]] = set()
    for p in candidates:
        if (p.lang, p.fact_id) in seen:
            continue
        seen.add((p.lang, p.fact_id))
        by_lang.setdefault(p.lang, []).append(Shot(p.prompt_id, p.fact_id, p.text, p.gold_forms[0][0]))
    return by_lang


def shots_for(prompt: Prompt, pools: Mapping[str, Sequence[Shot]], k: int) -> list[Shot]:
    """The first ``k`` examples of the prompt's language that are not about its fact."""
    if k <= 0:
        return []
    return [s for s in pools.get(prompt.lang, ()) if s.fact_id != prompt.fact_id][:k]


def conversation(question: str, shots: Sequence[Shot], system: str | None) -> list[Message]:
    messages: list[Message] = [{"role": "system", "content": system}] if system else []
    for s in shots:
        messages += [{"role": "user", "content": s.question}, {"role": "assistant", "content": s.answer}]
    return [*messages, {"role": "user", "content": question}]


def conversation_record(reply: Reply) -> str:
    """The rankings' ``conversation`` column: canonical JSON, byte-stable."""
    return json.dumps({"messages": [dict(m) for m in reply.messages], "rendered": reply.rendered},
                      ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def build_conversations(prompts: Sequence[Prompt], all_prompts: Sequence[Prompt],
                        config: ChatConfig, counts: Counter | None = None,
                        fits: Callable[[Sequence[Message]], bool] | None = None) -> list[list[Message]]:
    """One conversation per prompt. ``fits`` (a backend that knows its model's context): a conversation
    that does not fit drops its last examples until it does, counted as ``chat/shots-cut-to-fit:<lang>``
    (the rankings' ``conversation`` column records the examples each prompt got)."""
    pools = shot_pools(all_prompts, config)
    out = []
    for p in prompts:
        shots = shots_for(p, pools, config.shots)
        if counts is not None and len(shots) < config.shots:
            counts[f"chat/fewer-shots-than-asked:{p.lang}"] += 1
        question = prompt_text_for_generation(p)
        messages = conversation(question, shots, config.system)
        if fits is not None and shots and not fits(messages):
            while shots and not fits(messages):
                shots = shots[:-1]
                messages = conversation(question, shots, config.system)
            if counts is not None:
                counts[f"chat/shots-cut-to-fit:{p.lang}"] += 1
        out.append(messages)
    return out


def answer_conversations(backend: ChatBackend, prompts: Sequence[Prompt],
                         all_prompts: Sequence[Prompt], aliases: Mapping[str, set[str]] | LanguageAliases,
                         model: str,
                         scoring: str, config: ChatConfig, counts: Counter | None = None, chunk: int = 256,
                         progress: Callable[[int], None] | None = None) -> list[ProbeResult]:
    """Rankings rows of the chat rules (same columns and matching as ``generative``, plus ``conversation``).
    ``aliases``: one index for every prompt, or a ``LanguageAliases`` that restricts the accepted forms by
    the prompt's language (X-FACTR §3.4 single / double evaluation); ``scoring``: a registered open-answer
    rule, whose matcher (exact or lenient) judges the answers."""
    from factatlas.probe.ranking import ranking_row
    from factatlas.probe.rule import rule_named

    lenient = rule_named(scoring).lenient
    view = LanguageAliases.of(aliases)
    conversations = build_conversations(prompts, all_prompts, config, counts, getattr(backend, "fits", None))
    check = getattr(backend, "check_context", None)
    if check is not None:  # every conversation, before the first is answered
        check(conversations)
    rows = []
    for start in range(0, len(prompts), chunk):
        part = prompts[start: start + chunk]
        replies = backend.chat(conversations[start: start + chunk])
        for r, reply in zip(part, replies, strict=True):
            ranked, scores, correct = judge(reply.answer, r.candidate_qids, r.gold_qids, view.for_lang(r.lang),
                                            lenient)
            row = ranking_row(r, model, scoring, ranked, scores, correct, first_line(reply.answer))
            rows.append(replace(row, conversation=conversation_record(reply)))
        if progress:
            progress(len(part))
    return rows


def render(tokenizer, messages: Sequence[Message]) -> str:
    """The model's own template, with the assistant turn opened; a clear error when there is none."""
    if not getattr(tokenizer, "chat_template", None):
        raise ConfigError(f"--scoring chat: the tokenizer of {getattr(tokenizer, 'name_or_path', 'the model')!r} "
                          "has no chat template (tokenizer_config.json / chat_template.jinja); use an "
                          "instruction-tuned model, or --scoring generative for a base model")
    return tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)


class LocalChat:
    """In-process chat: the rendered template, greedy decoding by ``GreedyGenerator``'s batched loop.

    The rendered text already holds what the template puts first (BOS), so it is tokenized without the
    tokenizer's own specials, exactly as ``apply_chat_template(..., tokenize=True)`` would.
    """

    def __init__(self, lm, max_new_tokens: int = 16, batch_tokens: int = 8192, context_fix: str | None = None):
        from factatlas.probe.generative import GreedyGenerator

        self.generator = GreedyGenerator(lm, max_new_tokens=max_new_tokens, batch_tokens=batch_tokens)
        self.lm = lm
        self.context_fix = context_fix  # what a refusal for the context advises (None: the probe's options)
        self.scoring = "chat"

    @property
    def counts(self) -> dict[str, int]:
        return self.generator.counts

    def _encode(self, conversations: Sequence[Sequence[Message]]) -> tuple[list[str], list[list[int]]]:
        rendered = [render(self.lm.tokenizer, c) for c in conversations]
        return rendered, [self.lm.tokenizer(t, add_special_tokens=False)["input_ids"] for t in rendered]

    def _bound(self, messages: Sequence[Message]) -> int:
        from factatlas.probe.context import text_bound

        return text_bound(render(self.lm.tokenizer, messages)) + self.generator.max_new_tokens

    def fits(self, messages: Sequence[Message]) -> bool:
        """Whether the rendered conversation and its answer fit the model's positions (tokenized only when
        a cheap bound on its tokens says it might not)."""
        from factatlas.probe.context import model_limit

        limit = model_limit(self.lm)
        if limit is None or self._bound(messages) <= limit.positions:
            return True
        _, (encoded,) = self._encode([messages])
        return self.generator.needs([encoded])[0].positions <= limit.positions

    def check_context(self, conversations: Sequence[Sequence[Message]]) -> None:
        """Refuse, before any forward, conversations whose answer could run past the model's positions."""
        from factatlas.probe.context import GENERATION_FIX, check_before_scoring

        def needs(suspects: Sequence[Sequence[Message]]):
            return self.generator.needs(self._encode(suspects)[1], lambda i: _describe(suspects[i]))

        check_before_scoring(conversations, self._bound, needs, self.lm, self.context_fix or GENERATION_FIX)

    def chat(self, conversations: Sequence[Sequence[Message]]) -> list[Reply]:
        rendered, encoded = self._encode(conversations)
        self.generator.check_context(encoded, lambda i: _describe(conversations[i]), self.context_fix)
        answers = self.generator.generate_encoded(encoded)
        return [Reply(a, tuple(c), t) for a, c, t in zip(answers, conversations, rendered, strict=True)]


def _describe(messages: Sequence[Message]) -> str:
    from factatlas.probe.context import short

    shots = sum(1 for m in messages if m["role"] == "assistant")
    return f"the conversation of {short(messages[-1]['content'])} ({shots} examples, rendered with the chat template)"
