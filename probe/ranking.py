"""Closed-set ranking of cloze prompts: identical queries scored once, chunked for the scorer, every
query checked against the model's context before the first forward pass, the next chunk prepared while
this one runs, rows in the rankings schema."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import overload

from factatlas.probe.batching import greedy_batches
from factatlas.probe.pipeline import pipelined
from factatlas.probe.protocol import ClozeQuery, candidate_order
from factatlas.probe.selection import prompt_fields
from factatlas.records import ProbeResult, Prompt


def ranking_row(prompt: Prompt, model: str, scoring: str, ranked: Sequence[str],
                scores: Sequence[float], correct: bool, prediction: str = "") -> ProbeResult:
    return ProbeResult(model, scoring, prompt.prompt_id, prompt.fact_id, prompt.lang, prompt.template_id,
                       prompt.culture, prompt.predicate, tuple(ranked), tuple(float(s) for s in scores),
                       bool(correct), prediction)


# what a ranking row needs of its prompt (``RankedRows.add``): the six keys, the candidates and the golds
ROW_FIELDS = ("prompt_id", "fact_id", "lang", "template_id", "culture", "predicate", "candidate_qids", "gold_qids")


class RankedRows(Sequence[ProbeResult]):
    """A run's rankings held as columns, each row made a ``ProbeResult`` when read (equal to ``ranking_row``'s).

    A record with its ranked QIDs and its scores as a tuple of Python floats is about 1.6 KB at 35
    candidates; here a row is its six key strings (shared with the prompt), its candidate list (shared), its
    query, its ranking as candidate positions (1 byte each while the lists have under 256 candidates, widened
    when one needs more) and a flag, and each distinct query's scores
    are 8 bytes a candidate, once: the rows a probe holds until they are written cost a fraction of their
    records (``write_probe_results`` reads them a batch at a time)."""

    def __init__(self, model: str, scoring: str) -> None:
        self.model, self.scoring = model, scoring
        self._keys: tuple[list[str], ...] = tuple([] for _ in range(6))  # prompt, fact, lang, template, culture, predicate
        self._candidates: list[tuple[str, ...]] = []
        self._query = array("q")
        self._order = array("B")  # 1-byte positions until a candidate list needs more (then widened)
        self._start = array("q", [0])
        self._correct = bytearray()
        self._scores = array("d")  # every distinct query's scores, one after the other
        self._score_start = array("q", [0])

    @property
    def queries(self) -> int:
        return len(self._score_start) - 1

    def add_scores(self, scores: Sequence[float]) -> int:
        """One distinct query's scores (candidate order); returns its index."""
        self._scores.extend(float(s) for s in scores)
        self._score_start.append(len(self._scores))
        return self.queries - 1

    def query_scores(self, query: int) -> Sequence[float]:
        return self._scores[self._score_start[query]:self._score_start[query + 1]]

    def add(self, values: Sequence, query: int) -> None:
        """The row of a prompt (its ``ROW_FIELDS`` values) ranked by the scores of ``query``
        (``rank_candidates``'s tie policy)."""
        *keys, candidates, golds = values
        order = candidate_order(candidates, self.query_scores(query))
        for column, value in zip(self._keys, keys, strict=True):
            column.append(value)
        self._candidates.append(candidates)
        self._query.append(query)
        start = len(self._order)
        try:
            self._order.extend(order)
        except OverflowError:  # a longer candidate list: wider positions from now on
            del self._order[start:]
            self._order = array("h" if self._order.typecode == "B" and len(candidates) <= 2**15 else "i", self._order)
            self._order.extend(order)
        self._start.append(len(self._order))
        self._correct.append(bool(order) and candidates[order[0]] in set(golds))

    def __len__(self) -> int:
        return len(self._candidates)

    @overload
    def __getitem__(self, i: int) -> ProbeResult: ...

    @overload
    def __getitem__(self, i: slice) -> list[ProbeResult]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        candidates, base = self._candidates[i], self._score_start[self._query[i]]
        order = self._order[self._start[i]:self._start[i + 1]]
        return ProbeResult(self.model, self.scoring, *(column[i] for column in self._keys),
                           tuple(candidates[j] for j in order), tuple(self._scores[base + j] for j in order),
                           bool(self._correct[i]))

    def __iter__(self) -> Iterator[ProbeResult]:
        return (self[i] for i in range(len(self)))

    def prompt_ids(self) -> list[str]:
        return self._keys[0]

    def clear(self) -> None:
        self.__init__(self.model, self.scoring)  # type: ignore[misc]


def rank_prompts(scorer, prompts: Sequence[Prompt], texts: Sequence[str], model: str,
                 chunk: int = 2048, progress: Callable[[int], None] | None = None,
                 counts: Counter | None = None, chunk_candidates: int = 65536,
                 prefetch: bool | None = None) -> list[ProbeResult]:
    """``ranked_rows`` as a list of records."""
    return list(ranked_rows(scorer, prompts, texts, model, chunk, progress, counts, chunk_candidates, prefetch))


def ranked_rows(scorer, prompts: Sequence[Prompt], texts: Iterable[str], model: str,
                chunk: int = 2048, progress: Callable[[int], None] | None = None,
                counts: Counter | None = None, chunk_candidates: int = 65536,
                prefetch: bool | None = None) -> RankedRows:
    """Closed-set ranking of cloze prompts (the i-th of ``texts``, read once, replaces ``prompts[i].text``),
    held as ``RankedRows``.

    The scorer gets the queries in chunks of at most ``chunk`` queries and ``chunk_candidates`` candidates:
    large enough that the in-context tokenization and the pass planning share work across many prompts,
    small enough that a chunk's plan of passes stays a few hundred MB on benchmarks with thousands of
    candidates per prompt. With ``prefetch`` (None: ``prefetching``'s default) and a scorer split into a
    host step and a model step (``prepare``/``prepare_slots`` and ``run``), chunk k+1 is tokenized and
    planned on a second thread while chunk k runs (``pipeline.pipelined``); the scores are the same either
    way.

    Identical queries (same text, same candidate forms in the same order) are scored once and share their
    scores: the template-only baseline puts one placeholder in place of every subject, so its 8,049
    quickstart prompts are 179 distinct queries. ``counts["scored/queries-shared"]`` says how many rows
    reused another row's scores."""
    first_of: dict[tuple[str, tuple[str, ...]], int] = {}
    unique: list[ClozeQuery] = []
    query_of: list[int] = []
    # the prompts' columns, not their records: a selection (``SelectedPrompts``) makes none
    for (forms,), t in zip(prompt_fields(prompts, "candidate_forms"), texts, strict=True):
        key = (t, tuple(forms))
        index = first_of.get(key)
        if index is None:
            index = first_of[key] = len(unique)
            unique.append(ClozeQuery(t, forms))
        query_of.append(index)
    del first_of  # the texts are held by their distinct queries alone from here
    if counts is not None:
        counts["scored/queries-shared"] += len(prompts) - len(unique)
    sizes = [(1, len(q.forms)) for q in unique]
    parts = list(greedy_batches(range(len(unique)), sizes, (chunk, chunk_candidates)))
    slots = _slots_once(scorer, unique, parts)
    if slots is None and getattr(scorer, "context_needs", None) is not None:  # every query fits, before any forward
        from factatlas.probe.context import check_queries

        check_queries(scorer, unique)
    prepare, run, split = _steps(scorer, unique, slots)
    # progress counts prompts: a chunk of distinct queries stands for every prompt whose first copy is in it
    represented = Counter(query_of)
    out = RankedRows(model, scorer.scoring)
    # each chunk's scores are stored compactly as they come (``parts`` cut the queries in order)
    for part, scored in pipelined(parts, prepare, run, split and prefetching(scorer, prefetch)):
        for scores in scored:
            out.add_scores(scores)
        if progress:
            progress(sum(represented[i] for i in part))
    if out.queries != len(unique):
        raise ValueError(f"the scorer returned scores for {out.queries} of {len(unique)} queries")
    del unique, slots, parts, prepare, run  # the queries and their texts, let go before the rows are made
    for values, index in zip(prompt_fields(prompts, *ROW_FIELDS), query_of, strict=True):
        out.add(values, index)
    return out


def prefetching(scorer, prefetch: bool | None = None) -> bool:
    """Whether the ranking prepares the next chunk while this one runs: ``prefetch`` when given, else on for
    a model on an accelerator, where the device waits while the host plans (issue 41: the scorers reached
    0.29-0.73 of their limit on a GPU), and off on CPU, where ``benchmarks/prefetch_speed.py`` measured no
    gain: the host step is 1.6 % of a small masked model's ranking, and at the tiny model's shape the
    pipeline's thread and torch's contend for the GIL (docs/benchmarks.md)."""
    if prefetch is not None:
        return prefetch
    device = str(getattr(getattr(scorer, "lm", None), "device", "cpu"))
    return not device.startswith("cpu")


def _steps(scorer, unique: Sequence[ClozeQuery], slots: Sequence | None) -> tuple[Callable, Callable, bool]:
    """(prepare, run, split) of a chunk (its query indices) for this scorer: its own host and model steps
    when it has them (split True), else its ``score``/``score_slots`` as the model step after a host step
    that only gathers the chunk's queries (split False: nothing to run ahead)."""
    if slots is not None:
        if hasattr(scorer, "prepare_slots") and hasattr(scorer, "run"):
            return (lambda part: scorer.prepare_slots([slots[i] for i in part])), scorer.run, True
        return (lambda part: [slots[i] for i in part]), scorer.score_slots, False
    if hasattr(scorer, "prepare") and hasattr(scorer, "run"):
        return (lambda part: scorer.prepare([unique[i] for i in part])), scorer.run, True
    return (lambda part: [unique[i] for i in part]), scorer.score, False


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
