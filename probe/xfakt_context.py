"""X-FaKT's context tasks (seed 004, §3.2-3.3 and §4.3) as prompt variants built from the benchmark's facts.

- **In-context recall** (``recall``): the fact is stated in the context in language c (the fact's cloze
  prompt in c, same template, its slot filled with the direct gold's form in c), then asked in language l
  (the cloze prompt in l after the context). Right when the model ranks a valid object first.
- **Counterfactual context** (``counterfactual``): the context states a false object instead: a wrong
  candidate of the prompt picked by the fact id (``sha256(fact_id) mod #wrong candidates``, the same in
  every language), written in c. The model *follows the context* when it ranks that object first, *keeps
  its memory* when it ranks a valid object first, else neither. Adherence = share following the context.

Every (l, c) pair is built, c = l included (the monolingual diagonal). Variant prompts keep the base
prompt's fact, language, candidates and golds; their id is ``<prompt_id>|<mode>:<c>`` and their
template id ``<template_id>+<mode>:<c>``. The rankings are joined and aggregated by the one join and
aggregation (``factatlas.probe.aggregate``): micro = mean over facts, macro = mean over predicates.

Languages are grouped by resource level for the error rates (X-FaKT §3, Table 3). The default grouping
is X-FaKT's own (``metrics.XFAKT_RESOURCE``, 13 languages); a language it does not group takes ours, after
Joshi et al. (2020)'s classes (5: high; 3-4: medium; 0-2: low), and ``resource_levels`` says which table
each level came from; ``--resource-grouping ours`` uses ours only; ``--resource`` overrides per language.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from factatlas.probe import aggregate
from factatlas.probe.metrics import RESOURCE_LEVELS, XFAKT_RESOURCE
from factatlas.records import ANSWER_MARKER, ProbeResult, Prompt, ScoredPrompt

MODES = ("recall", "counterfactual")
# ours, after Joshi et al. (2020): the fallback for languages X-FaKT's table does not group
DEFAULT_RESOURCE = {
    "en": "high", "es": "high", "fr": "high", "de": "high", "ja": "high", "zh": "high", "ar": "high",
    "ru": "medium", "it": "medium", "pt": "medium", "nl": "medium", "ko": "medium", "hi": "medium",
    "pl": "medium", "tr": "medium", "fa": "medium", "vi": "medium", "he": "medium", "id": "medium",
    "uk": "medium", "sw": "low", "ur": "medium",
}


RESOURCE_GROUPINGS = ("xfakt", "ours")


def resource_levels(grouping: str, overrides: Mapping[str, str] | None = None
                    ) -> tuple[dict[str, str], dict[str, str]]:
    """(language -> level, language -> where the level comes from: ``xfakt``, ``ours`` or ``--resource``).
    ``xfakt``: X-FaKT's §3 table, ours for the languages it does not list; ``ours``: ours only."""
    if grouping not in RESOURCE_GROUPINGS:
        raise ValueError(f"unknown resource grouping '{grouping}'; expected one of {RESOURCE_GROUPINGS}")
    levels, sources = dict(DEFAULT_RESOURCE), dict.fromkeys(DEFAULT_RESOURCE, "ours")
    if grouping == "xfakt":
        levels.update(XFAKT_RESOURCE)
        sources.update(dict.fromkeys(XFAKT_RESOURCE, "xfakt"))
    for lang, level in (overrides or {}).items():
        levels[lang], sources[lang] = level, "--resource"
    return levels, sources


def counterfactual_object(prompt: Prompt) -> str | None:
    """The wrong candidate the counterfactual context states (the same for every language of a fact)."""
    wrong = [q for q in prompt.candidate_qids if q not in set(prompt.gold_qids)]
    if not wrong:
        return None
    return wrong[int.from_bytes(hashlib.sha256(prompt.fact_id.encode("utf-8")).digest()[:8], "big") % len(wrong)]


def stated(prompt: Prompt, qid: str) -> str | None:
    """The cloze prompt with its slot filled by ``qid``'s form in the prompt's language; None without one."""
    if ANSWER_MARKER not in prompt.text:
        return None
    form = ""
    if qid in prompt.gold_qids:
        forms = prompt.gold_forms[prompt.gold_qids.index(qid)]
        form = forms[0] if forms else ""
    if not form and qid in prompt.candidate_qids:
        form = prompt.candidate_forms[prompt.candidate_qids.index(qid)]
    return prompt.text.replace(ANSWER_MARKER, form) if form else None


@dataclass(frozen=True, slots=True)
class Variant:
    prompt: Prompt  # the variant (context + question), as the prober scores it
    base_id: str
    mode: str
    context_lang: str
    context_object: str  # the QID the context states


def build_variants(prompts: Sequence[Prompt], mode: str, context_langs: Sequence[str] | None = None,
                   question_langs: Sequence[str] | None = None) -> tuple[list[Variant], Counter[str]]:
    """Variants of every cloze prompt (of ``question_langs``; default all) for every context language
    (default: every language of the prompts) (module docstring); skips counted by reason."""
    if mode not in MODES:
        raise ValueError(f"unknown X-FaKT context mode '{mode}'; expected one of {MODES}")
    cloze = [p for p in prompts if p.kind == "cloze"]
    by_key = {(p.fact_id, p.template_id, p.lang): p for p in cloze}
    langs = sorted({p.lang for p in cloze}) if context_langs is None else list(context_langs)
    out, skipped = [], Counter()
    for p in cloze:
        if question_langs is not None and p.lang not in question_langs:
            continue
        target = p.gold_qids[0] if mode == "recall" and p.gold_qids else (
            counterfactual_object(p) if mode == "counterfactual" else None)
        if target is None:
            skipped["no-gold" if mode == "recall" else "no-wrong-candidate"] += 1
            continue
        for c in langs:
            source = by_key.get((p.fact_id, p.template_id, c))
            context = stated(source, target) if source is not None else None
            if context is None:
                skipped[f"no-context-in:{c}"] += 1
                continue
            variant = replace(p, prompt_id=f"{p.prompt_id}|{mode}:{c}", template_id=f"{p.template_id}+{mode}:{c}",
                              text=f"{context} {p.text}", answer_start=len(context) + 1 + p.answer_start)
            out.append(Variant(variant, p.prompt_id, mode, c, target))
    return out, skipped


@dataclass(frozen=True, slots=True)
class ContextCell:
    mode: str
    lang: str  # the question's language (or "all")
    context_lang: str  # or "all"
    prompts: int
    facts: int
    correct_micro: float  # a valid object first (recall: accuracy; counterfactual: memory kept)
    correct_macro: float
    followed_micro: float | None  # counterfactual: the context's object first
    followed_macro: float | None


def context_cells(scored: Sequence[ScoredPrompt], variants: Sequence[Variant]) -> list[ContextCell]:
    """Per (question language, context language), with ``all`` margins."""
    info = {v.prompt.prompt_id: v for v in variants}
    groups: dict[tuple[str, str, str], list[ScoredPrompt]] = defaultdict(list)
    for s in scored:
        v = info[s.prompt_id]
        for lang in (s.lang, "all"):
            for ctx in (v.context_lang, "all"):
                groups[(v.mode, lang, ctx)].append(s)
    out = []
    for (mode, lang, ctx), rs in sorted(groups.items(), key=lambda kv: tuple((x == "all", x) for x in kv[0])):
        right = aggregate.accuracy(rs)
        followed = aggregate.accuracy(rs, np.array([r.top == info[r.prompt_id].context_object for r in rs],
                                                   dtype=bool)) if mode == "counterfactual" else None
        out.append(ContextCell(mode, lang, ctx, right.n_prompts, right.n_facts, right.micro, right.macro,
                               followed.micro if followed else None, followed.macro if followed else None))
    return out


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    level: str
    langs: tuple[str, ...]
    error_rate: float | None  # mean over the group's languages of 1 - micro accuracy (all contexts)


def resource_groups(cells: Sequence[ContextCell], mode: str, levels: Mapping[str, str]) -> list[ResourceGroup]:
    """Error rates (1 - micro P@1 over every context language) averaged over each level's languages; a
    language without a level is grouped under ``unknown``."""
    errors = {c.lang: 1.0 - c.correct_micro for c in cells
              if c.mode == mode and c.context_lang == "all" and c.lang != "all"}
    by_level: dict[str, list[str]] = defaultdict(list)
    for lang in sorted(errors):
        by_level[levels.get(lang, "unknown")].append(lang)
    return [ResourceGroup(level, tuple(by_level[level]),
                          sum(errors[x] for x in by_level[level]) / len(by_level[level]) if by_level[level] else None)
            for level in (*RESOURCE_LEVELS, "unknown") if level in by_level or level in RESOURCE_LEVELS]


def join_variants(rows: Sequence[ProbeResult], variants: Sequence[Variant]) -> aggregate.Joined:
    """The rankings of the variants joined with the variant prompts (the one join)."""
    return aggregate.join(rows, {v.prompt.prompt_id: v.prompt for v in variants})
