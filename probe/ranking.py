"""Closed-set ranking of cloze prompts: identical queries scored once, chunked for the scorer, every
query checked against the model's context before the first forward pass, rows in the rankings schema."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from factatlas.probe.batching import greedy_batches
from factatlas.probe.protocol import ClozeQuery, rank_candidates
from factatlas.records import ProbeResult, Prompt


def ranking_row(prompt: Prompt, model: str, scoring: str, ranked: Sequence[str],
                scores: Sequence[float], correct: bool, prediction: str = "") -> ProbeResult:
    return ProbeResult(model, scoring, prompt.prompt_id, prompt.fact_id, prompt.lang, prompt.template_id,
                       prompt.culture, prompt.predicate, tuple(ranked), tuple(float(s) for s in scores),
                       bool(correct), prediction)


def rank_prompts(scorer, prompts: Sequence[Prompt], texts: Sequence[str], model: str,
                 chunk: int = 2048, progress: Callable[[int], None] | None = None,
                 counts: Counter | None = None, chunk_candidates: int = 65536) -> list[ProbeResult]:
    """Closed-set ranking of cloze prompts (``texts[i]`` replaces ``prompts[i].text``).

    The scorer gets the queries in chunks of at most ``chunk`` queries and ``chunk_candidates`` candidates:
    large enough that the in-context tokenization and the pass planning share work across many prompts,
    small enough that a chunk's plan of passes stays a few hundred MB on benchmarks with thousands of
    candidates per prompt.

    Identical queries (same text, same candidate forms in the same order) are scored once and share their
    scores: the template-only baseline puts one placeholder in place of every subject, so its 8,049
    quickstart prompts are 179 distinct queries. ``counts["scored/queries-shared"]`` says how many rows
    reused another row's scores."""
    first_of: dict[tuple[str, tuple[str, ...]], int] = {}
    unique: list[ClozeQuery] = []
    query_of: list[int] = []
    for p, t in zip(prompts, texts, strict=True):
        key = (t, tuple(p.candidate_forms))
        index = first_of.get(key)
        if index is None:
            index = first_of[key] = len(unique)
            unique.append(ClozeQuery(t, p.candidate_forms))
        query_of.append(index)
    if counts is not None:
        counts["scored/queries-shared"] += len(prompts) - len(unique)
    sizes = [(1, len(q.forms)) for q in unique]
    parts = list(greedy_batches(range(len(unique)), sizes, (chunk, chunk_candidates)))
    slots = _slots_once(scorer, unique, parts)
    if slots is None and getattr(scorer, "context_needs", None) is not None:  # every query fits, before any forward
        from factatlas.probe.context import check_queries

        check_queries(scorer, unique)
    # progress counts prompts: a chunk of distinct queries stands for every prompt whose first copy is in it
    represented = Counter(query_of)
    scores: list[Sequence[float]] = []
    for part in parts:
        if slots is None:
            scores.extend(scorer.score([unique[i] for i in part]))
        else:
            scores.extend(scorer.score_slots([slots[i] for i in part]))
        if progress:
            progress(sum(represented[i] for i in part))
    out = []
    for p, index in zip(prompts, query_of, strict=True):
        ranked, ordered = rank_candidates(p.candidate_qids, scores[index])
        gold = set(p.gold_qids)
        out.append(ranking_row(p, model, scorer.scoring, ranked, ordered, bool(ranked) and ranked[0] in gold))
    return out


def _slots_once(scorer, unique: Sequence[ClozeQuery], parts: Sequence[Sequence[int]]) -> list | None:
    """Every query's in-context token ids, chunk by chunk as ``scorer.score`` would make them, checked against
    the model's context before any forward pass; None (the scorer's own ``score`` then tokenizes) for a
    scorer without ``score_slots`` or when no query's byte bound exceeds the context.

    A slot scorer's ``score`` is ``tokenize_slots`` + the context check + ``score_slots``, and the whole-run
    check tokenizes every query whose bound exceeds the context: with a short context (the quickstart's
    128-position tiny BERT: most of its prompts) each query was tokenized twice. Holding every query's
    slots costs about what that check held for its suspects."""
    if getattr(scorer, "score_slots", None) is None or getattr(scorer, "context_needs", None) is None:
        return None
    from factatlas.probe.context import CANDIDATE_FIX, cloze_bound, model_limit, refuse_overlong
    from factatlas.probe.slots import tokenize_slots

    limit = model_limit(scorer.lm)
    suspects = [] if limit is None else [i for i, q in enumerate(unique) if cloze_bound(q) > limit.positions]
    if not suspects:
        return None
    slots: list = [None] * len(unique)
    for part in parts:
        for i, slot in zip(part, tokenize_slots(scorer.lm.tokenizer, [unique[i] for i in part]), strict=True):
            slots[i] = slot
    # as context.check_before_scoring, with the suspects' ids already made
    refuse_overlong(scorer.context_needs([unique[i] for i in suspects], [slots[i] for i in suspects]), limit,
                    scorer.lm.name, CANDIDATE_FIX, total=len(unique))
    return slots
