"""The one join of rankings with prompts, and the one aggregation of scored prompts.

``join`` turns a model's rankings (``ProbeResult``, read with ``factatlas.tables.read_probe_results``)
and the benchmark's prompts (``Prompt``) into ``ScoredPrompt`` records, counting every row it cannot use.
``aggregate`` turns scored prompts into the numbers of PROBING.md "Metrics"; every report, analysis,
export and the pipeline call it, so micro and macro P@1 are defined here and nowhere else:

- a prompt's value is its P@k (1 when a valid object is among the first k), its reciprocal rank, and its
  chance P@1 (golds among the candidates / candidates);
- a fact's value within a selection (one language, one culture, ...) is the mean over its prompts there
  (templates, then languages, weigh alike because the benchmark is multi-parallel);
- a predicate's value is the mean over its facts;
- **macro** is the mean over predicates (DLAMA), **micro** the mean over facts (BMLAMA).

Facts and predicates are numbered in the order they first appear among the scored prompts given; the
bootstrap resamples facts within each predicate (``factatlas.probe.metrics.bootstrap_ci``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import repeat
from typing import Any

import numpy as np

from factatlas.memory import give_back
from factatlas.probe import metrics as M
from factatlas.probe.protocol import SCORING_RULES
from factatlas.probe.scored import ScoredBuilder, ScoredColumns
from factatlas.records import Fact, GoldObject, ProbeResult, Prompt, Provenance, ScoredPrompt

Tokenize = Callable[[str], Sequence[int]]

# What join() counts, in this order (metrics.json "coverage" shows them).
JOIN_COUNTS = ("rows", "unknown_prompt", "duplicate_prompt", "foreign_candidates", "generative",
               "correct_at_1_mismatch", "top_ties")


# ---- the join -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Joined:
    """Scored prompts in the order of the rankings, and every row not used counted by reason."""

    scored: ScoredColumns  # a Sequence[ScoredPrompt], records made on read
    counts: Mapping[str, Any]
    ascending: bool = False  # every ranking's prompt_id above the one before: ``scored`` is in prompt_id order


def judged_by_prober(row: ProbeResult) -> bool:
    """Rows of an open-answer rule (generative, generative-lenient, xfactr): judged, not ranked."""
    rule = SCORING_RULES.get(row.scoring or "")
    return rule is not None and rule.kind == "generate"


def join(rankings: Iterable[ProbeResult], prompts: Mapping[str, Prompt] | PromptStream, *, model: str | None = None,
         facts: Mapping[str, Fact] | None = None, tokenize: Tokenize | None = None,
         kinds_in_benchmark: Mapping[str, int] | None = None) -> Joined:
    """Rankings ⋈ prompts (by prompt_id) -> scored prompts as columns (``ScoredColumns``, a sequence of
    ``ScoredPrompt`` records made on read); every row not used is counted.

    A ranking must order exactly the prompt's candidates (else ``foreign_candidates``). Open-answer rows
    (generative QA, X-FACTR) carry the candidates their answer matched, not a ranking: the prober judged
    the answer against every alias of the valid objects, so ``correct_at_1`` is their outcome (rank 1 or
    none). ``model`` names the records (default: the rankings' own model field). With ``facts`` the golds
    get their provenance and the fact its countries (a gold the fact does not list is counted in
    ``gold_not_in_facts`` and kept as direct); with ``tokenize`` the direct gold's slot form is measured.
    ``kinds_in_benchmark`` (prompt kind -> rows, ``Benchmark.kind_counts``): the benchmark's prompts that the
    coverage counts, when ``prompts`` holds only the ranked ones (always with a ``PromptStream``); default:
    ``prompts`` is the benchmark.
    """
    counts: dict[str, Any] = dict.fromkeys(JOIN_COUNTS, 0)
    if facts is not None:
        counts["gold_not_in_facts"] = 0
    out = ScoredBuilder()
    seen = _SeenIds(out)
    interned: dict[tuple[str, ...], tuple[str, ...]] = {}  # one tuple per candidate list: less memory
    golds_of: dict[tuple[str, tuple[str, ...]], FactGolds] = {}  # the fact's prompts share theirs (_shared_golds)
    places: dict[tuple[str, ...], dict[str, int]] = {}  # candidate -> index, once per candidate list
    kinds: set[str] = set()  # prompt kinds the scoring rule used (cloze rules skip question prompts)
    for row in rankings:
        counts["rows"] += 1
        pid = row.prompt_id
        prompt = prompts.get(pid)
        if prompt is None:
            counts["unknown_prompt"] += 1
            continue
        if seen.repeated(pid):
            counts["duplicate_prompt"] += 1
            continue
        kinds.add(prompt.kind)
        golds = frozenset(prompt.gold_qids)
        candidates = interned.setdefault(prompt.candidate_qids, prompt.candidate_qids)
        ranked = tuple(row.ranked_qids)
        place = places.get(candidates)
        if place is None:
            place = places[candidates] = {q: i for i, q in enumerate(candidates)}
        order = tuple(map(place.get, ranked, repeat(-1)))
        full = not (judged_by_prober(row) or not ranked)
        if not full:
            counts["generative"] += 1
            if ranked and -1 in order:
                counts["foreign_candidates"] += 1
                seen.refused.append(pid)
                continue
            rank = 1 if row.correct_at_1 else None
        else:
            if len(ranked) != len(candidates) or len(set(order)) != len(order) or -1 in order:
                counts["foreign_candidates"] += 1
                seen.refused.append(pid)
                continue
            rank = M.gold_rank(ranked, golds)
            if len(row.scores) > 1 and row.scores[0] == row.scores[1]:
                counts["top_ties"] += 1
        if bool(row.correct_at_1) != (rank == 1):
            counts["correct_at_1_mismatch"] += 1
        gold_objects, countries, missing = _shared_golds(golds_of, prompt, facts)
        if missing:  # only with facts
            counts["gold_not_in_facts"] += missing
        n_gold = sum(map(golds.__contains__, candidates))
        out.add(model=model if model is not None else row.model, prompt_id=pid, fact_id=prompt.fact_id,
                lang=prompt.lang, template_id=prompt.template_id, culture=prompt.culture,
                predicate=prompt.predicate, golds=gold_objects, positions=order, has_order=full, rank=rank,
                split=prompt.split, chance=n_gold / len(candidates) if candidates else 0.0,
                candidates=candidates, countries=countries,
                gold_subwords=_gold_subwords(prompt, gold_objects, tokenize), subject=prompt.subject_qid,
                subject_label=prompt.subject_label, prediction=row.prediction or "")
    _coverage(counts, len(out), prompts, kinds, kinds_in_benchmark)
    return Joined(out.finish(), counts, seen.ascending)


class _SeenIds:
    """The prompt ids joined so far: while they ascend (as the probe writes them) the last one is enough; the
    first id out of order makes the set, from the ids in the columns so far and those refused."""

    def __init__(self, out: ScoredBuilder) -> None:
        self._out = out
        self._ids: set[str] | None = None
        self._last: str | None = None
        self.refused: list[str] = []  # ids seen but not joined (foreign candidates)

    @property
    def ascending(self) -> bool:
        """Every id so far above the one before it."""
        return self._ids is None

    def repeated(self, pid: str) -> bool:
        if self._ids is None and self._last is not None and pid <= self._last:
            self._ids = {*self._out.prompt_ids(), *self.refused}
        self._last = pid
        if self._ids is None:
            return False
        if pid in self._ids:
            return True
        self._ids.add(pid)
        return False


def _coverage(counts: dict[str, Any], used: int, prompts: Any, kinds: set[str],
              kinds_in_benchmark: Mapping[str, int] | None) -> None:
    """The join's coverage counts: rows used, the benchmark's prompts and those of the kinds the rule used."""
    counts["used"] = used
    if kinds_in_benchmark is None:
        counts["benchmark_prompts"] = len(prompts)
        counts["eligible_prompts"] = sum(1 for p in prompts.values() if p.kind in kinds)
    else:
        counts["benchmark_prompts"] = sum(kinds_in_benchmark.values())
        counts["eligible_prompts"] = sum(n for kind, n in kinds_in_benchmark.items() if kind in kinds)
    counts["other_kind_prompts"] = counts["benchmark_prompts"] - counts["eligible_prompts"]
    counts["coverage"] = used / counts["eligible_prompts"] if counts["eligible_prompts"] else 0.0


FactGolds = tuple[tuple[GoldObject, ...], tuple[str, ...], int]  # golds, the fact's countries, golds it lacks


def _shared_golds(cache: dict[tuple[str, tuple[str, ...]], FactGolds], prompt: Prompt,
                  facts: Mapping[str, Fact] | None) -> FactGolds:
    """``_gold_objects`` once per fact and gold list (one tuple of golds shared by the fact's prompts). The
    cache keeps the last fact's only: the rankings come in prompt_id order, which keeps a fact's prompts
    together, and a cache of every fact held 126,336 entries to the end of the analyses' join at a million
    prompts (its peak 455 -> 418 MB without the tokenizer, and 35 MB of the heap's arenas kept after it)."""
    key = (prompt.fact_id, prompt.gold_qids)
    made = cache.get(key)
    if made is None:
        if cache and next(iter(cache))[0] != prompt.fact_id:
            cache.clear()
        made = cache[key] = _gold_objects(prompt, facts)
    return made


def _gold_objects(prompt: Prompt, facts: Mapping[str, Fact] | None) -> FactGolds:
    """The prompt's golds with their provenance, the fact's countries, and how many golds the fact lacks."""
    if facts is None:
        return tuple(GoldObject(q) for q in prompt.gold_qids), (), 0
    fact = facts.get(prompt.fact_id)
    provenance = {o.qid: o.provenance.value for o in fact.objects} if fact is not None else {}
    golds = tuple(GoldObject(q, provenance.get(q, Provenance.DIRECT.value)) for q in prompt.gold_qids)
    missing = sum(q not in provenance for q in prompt.gold_qids)
    return golds, (fact.countries if fact is not None else ()), missing


# The row groups a join decodes leave their pages with the allocators (Arrow's pool, the C heap), and the
# join's peak stacked on them: given back every 4 groups, the analyses' join at a million prompts (with the
# tokenizer loaded) peaked at 665 MB instead of 701, its CPU unchanged (33.5 against 34.9 s, one run each)
GIVE_BACK_EVERY = 4


class PromptStream:
    """The prompts a join reads, for rankings in ascending prompt_id order (as the probe writes them): decoded
    a row group at a time (``Benchmark.iter_prompts``, the rankings' languages only) as ``get`` asks for
    ascending ids, each group let go when the join passes it, so no prompt of the run is held for the join."""

    def __init__(self, bench: Any, langs: Collection[str]) -> None:
        wanted = frozenset(langs)
        self._batches = bench.iter_prompts(lambda _pid, lang: lang in wanted)
        self._read = 0  # row groups decoded
        self._batch: dict[str, Prompt] = {}
        self._last = ""  # the batch's last id: an id at or below it is in this batch or not in the benchmark
        self._done = False
        self._asked = ""

    def get(self, pid: str, default: Prompt | None = None) -> Prompt | None:
        if pid < self._asked:  # a forward-only read: an earlier id would read as missing
            raise ValueError(f"prompt {pid!r} asked after {self._asked!r}: a PromptStream reads ids in ascending "
                             "order only; sort the rows by prompt_id first")
        self._asked = pid
        while pid not in self._batch and pid > self._last and not self._done:
            batch = next(self._batches, None)
            while batch is not None and not batch:  # a row group of other languages
                batch = next(self._batches, None)
            if batch is None:
                self._done, self._batch = True, {}
            else:
                self._batch, self._last = {p.prompt_id: p for p in batch}, batch[-1].prompt_id
                self._read += 1
                if self._read % GIVE_BACK_EVERY == 0:
                    give_back()
        return self._batch.get(pid, default)


def ranked_prompts(bench: Any, rankings: Any) -> Mapping[str, Prompt] | PromptStream:
    """What ``join`` reads the prompts of a rankings file (``ProbeResultsFile``) from: a ``PromptStream`` when
    its ids ascend (the probe writes them so), else the ranked prompts held by id (``join_prompts``)."""
    if rankings.in_prompt_order():
        return PromptStream(bench, rankings.languages())
    return join_prompts(bench, rankings.prompt_ids())


def join_prompts(bench: Any, ids: Collection[str]) -> dict[str, Prompt]:
    """prompt_id -> the ranked prompt (``ids``) as ``join`` reads it, decoded a row group at a time
    (``Benchmark.iter_prompts``): what the join never reads (the text, the candidate forms, every gold form but
    the inflected one the subword count measures) is left out and candidate lists are shared across row
    groups, so a run's prompts cost a fraction of their records while the join holds them (the report's
    analyses and metrics, the probe's metrics). A benchmark read whole already lends its records."""
    if "prompts" in vars(bench):
        return bench.prompts_with_ids(ids)
    wanted = ids if isinstance(ids, (set, frozenset, dict)) else set(ids)
    lists: dict[tuple[str, ...], tuple[str, ...]] = {}
    out: dict[str, Prompt] = {}
    for batch in bench.iter_prompts(lambda pid, _lang: pid in wanted):
        for p in batch:
            out[p.prompt_id] = replace(p, text="", candidate_forms=(),
                                       candidate_qids=lists.setdefault(p.candidate_qids, p.candidate_qids),
                                       gold_forms=tuple(f[:1] for f in p.gold_forms))
    return out


def _gold_subwords(prompt: Prompt, golds: Sequence[GoldObject], tokenize: Tokenize | None) -> int | None:
    if tokenize is None:
        return None
    # the first direct gold (the curated answer), else the first gold; its in-prompt (inflected) form
    index = next((i for i, g in enumerate(golds) if g.provenance == Provenance.DIRECT.value), 0)
    if index >= len(prompt.gold_forms) or not prompt.gold_forms[index]:
        return None
    return len(tokenize(" " + prompt.gold_forms[index][0].strip()))


# ---- the aggregation ----------------------------------------------------------------------------

def metric_names(ks: Sequence[int]) -> tuple[str, ...]:
    return (*(f"p@{k}" for k in ks), "mrr", "chance@1")


@dataclass(frozen=True)
class ScoreTable:
    """Scored prompts as arrays: one row per prompt, one column per metric; facts and predicates coded."""

    names: tuple[str, ...]
    values: np.ndarray  # (prompts, metrics)
    fact: np.ndarray  # fact code per prompt
    fact_predicate: np.ndarray  # predicate code per fact code
    predicates: tuple[str, ...]

    @classmethod
    def of(cls, scored: Sequence[ScoredPrompt], ks: Sequence[int] = (1,),
           correct: np.ndarray | None = None) -> ScoreTable:
        """The metrics of ``metric_names(ks)``; with ``correct`` (one bool per prompt) only "p@1", read from
        that array instead (the analyses' direct-only and equivalence-lenient P@1: ``ScoredColumns.holds_each``).
        Reads the columns (``ScoredColumns``; records are put in columns first), facts and predicates numbered
        in first-seen order."""
        cols_of = ScoredColumns.of(scored)
        if correct is not None:
            names: tuple[str, ...] = ("p@1",)
            cols = [np.asarray(correct, dtype=np.float64)]
        else:
            names = metric_names(ks)
            ranks = cols_of.rank().astype(np.int64)
            ranked = ranks > 0
            cols = [(ranked & (ranks <= k)).astype(np.float64) for k in ks]
            cols.append(np.where(ranked, 1.0 / np.maximum(ranks, 1), 0.0))
            cols.append(cols_of.chance())
        fact, _ = first_seen(cols_of.codes("fact_id"))
        pred, pred_codes = first_seen(cols_of.codes("predicate"))
        fact_predicate = np.zeros(int(fact.max()) + 1 if len(fact) else 0, dtype=np.int64)
        fact_predicate[fact] = pred
        values = np.stack(cols, axis=1) if len(cols_of) else np.zeros((0, len(names)))
        table = cols_of.table("predicate")
        return cls(names, values, fact, fact_predicate, tuple(table[c] for c in pred_codes.tolist()))

    def fact_means(self, idx: np.ndarray | None = None, metric: str = "p@1") -> tuple[np.ndarray, np.ndarray]:
        """(fact codes, the mean of ``metric`` over each fact's prompts) among the prompts ``idx`` (default:
        all), facts in code (first-seen) order: a fact's value in every aggregate."""
        idx = np.arange(len(self.fact)) if idx is None else idx
        facts, inv, n = self._facts(idx)
        return facts, _fact_means(inv, n, self.values[idx, self.names.index(metric)])

    def _facts(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fact codes among the prompts idx, each prompt's index into them, prompts per fact)."""
        facts, inv = np.unique(self.fact[idx], return_inverse=True)
        return facts, inv, np.bincount(inv)

    def fact_values(self, idx: np.ndarray | None = None, metric: str = "p@1") -> dict[str, list[float]]:
        """predicate -> the values of its facts among the prompts ``idx`` (default: all), facts in their
        first-seen order (what a stratified bootstrap resamples)."""
        facts, per_fact = self.fact_means(idx, metric)
        preds, pinv = np.unique(self.fact_predicate[facts], return_inverse=True)
        return {self.predicates[p]: per_fact[pinv == i].tolist() for i, p in enumerate(preds)}

    def summarize(self, idx: np.ndarray | None = None, *, bootstrap: int = 0, confidence: float = 0.95,
                  seed: int = 0, averages: Sequence[str] = ("macro",)) -> dict[str, Any]:
        """Macro (over predicates, under the metric's name) and micro (``<name>_micro``) means of every
        metric over the prompts ``idx`` (default: all), with counts (``metrics.macro_micro``, the one
        definition); with ``bootstrap`` resamples, the intervals of the ``averages`` asked for (``ci[name]``
        for macro, ``ci[name_micro]`` for micro; ``metrics.bootstrap_ci``, the one interval)."""
        idx = np.arange(len(self.fact)) if idx is None else idx
        if len(idx) == 0:
            return {"n_prompts": 0, "n_facts": 0, "n_predicates": 0}
        facts, inv, per_fact_n = self._facts(idx)
        preds, pinv = np.unique(self.fact_predicate[facts], return_inverse=True)
        out: dict[str, Any] = {"n_prompts": int(len(idx)), "n_facts": int(len(facts)), "n_predicates": int(len(preds))}
        ci: dict[str, list[float]] = {}
        for m, name in enumerate(self.names):
            fact_values = _fact_means(inv, per_fact_n, self.values[idx, m])
            out[name], out[f"{name}_micro"] = M.macro_micro(fact_values, pinv)
            if bootstrap and name != "chance@1":
                by_pred = {self.predicates[p]: fact_values[pinv == i] for i, p in enumerate(preds)}
                for avg in averages:
                    key = name if avg == "macro" else f"{name}_{avg}"
                    ci[key] = list(M.bootstrap_ci(by_pred, bootstrap, confidence, seed, average=avg))
        if ci:
            out["ci"] = ci
        return out


def _fact_means(fact_of_prompt: np.ndarray, prompts_per_fact: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A fact's value: the mean over its prompts (templates, languages weigh alike)."""
    return np.bincount(fact_of_prompt, weights=values) / prompts_per_fact


def aggregate(scored: Sequence[ScoredPrompt], ks: Sequence[int] = (1,), *, bootstrap: int = 0,
              confidence: float = 0.95, seed: int = 0, averages: Sequence[str] = ("macro",)) -> dict[str, Any]:
    """Macro and micro P@k, MRR and chance P@1 of the scored prompts (``ScoreTable.summarize``)."""
    return ScoreTable.of(scored, ks).summarize(bootstrap=bootstrap, confidence=confidence, seed=seed,
                                               averages=averages)


def first_seen(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``codes`` renumbered 0, 1, ... in the order each first appears, and the original code of each number."""
    if not len(codes):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    uniq, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    renumber = np.empty(len(uniq), dtype=np.int64)
    renumber[order] = np.arange(len(uniq))
    return renumber[inverse.reshape(-1)], uniq[order]


def group_index(scored: Sequence[ScoredPrompt], *keys: str) -> dict[tuple, np.ndarray]:
    """(values of ``keys``) -> positions of the scored prompts holding them, keys sorted."""
    return dict(sorted(ScoredColumns.of(scored).group_rows(*keys).items()))


def group(scored: Sequence[ScoredPrompt], *keys: str) -> dict[tuple, ScoredColumns]:
    """(values of ``keys``) -> the scored prompts holding them (views of the columns), in their order (keys in
    first-seen order)."""
    cols = ScoredColumns.of(scored)
    return {key: cols.take(idx) for key, idx in cols.group_rows(*keys).items()}


# ---- P@1 as a record (analyses, verdict) --------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Accuracy:
    n_prompts: int
    n_facts: int
    n_predicates: int
    micro: float  # mean over facts
    macro: float  # mean over predicates of the mean over their facts


def accuracy(scored: Sequence[ScoredPrompt], correct: np.ndarray | None = None) -> Accuracy | None:
    """Micro and macro P@1 of the scored prompts (by ``correct``, one bool per prompt, when given); None when
    there are none."""
    if not scored:
        return None
    s = ScoreTable.of(scored, correct=correct).summarize()
    return Accuracy(s["n_prompts"], s["n_facts"], s["n_predicates"], s["p@1_micro"], s["p@1"])


def p_at_1_with_ci(scored: Sequence[ScoredPrompt], n_boot: int, confidence: float, seed: int) -> dict[str, Any]:
    """P@1 macro (over predicates; DLAMA) and micro (over facts; BMLAMA) with bootstrap intervals, facts
    taken in fact_id order (the intervals do not depend on the order of the rankings)."""
    if not scored:
        return {"n_prompts": 0, "n_facts": 0, "n_predicates": 0, "macro": None, "micro": None,
                "ci": {"macro": None, "micro": None}}
    ordered = ScoredColumns.of(scored).sorted_by("fact_id")
    s = ScoreTable.of(ordered, correct=ordered.correct()).summarize(
        bootstrap=n_boot, confidence=confidence, seed=seed, averages=("macro", "micro"))
    return {"n_prompts": s["n_prompts"], "n_facts": s["n_facts"], "n_predicates": s["n_predicates"],
            "macro": s["p@1"], "micro": s["p@1_micro"],
            "ci": {"macro": s.get("ci", {}).get("p@1"), "micro": s.get("ci", {}).get("p@1_micro")}}
