"""The field's probing metrics as small pure functions (definitions: docs/metrics.md, PROBING.md).

Public, stable API (users call these from notebooks)::

    from factatlas.probe.metrics import rankc, coverlap, pararel_scores, xfakt_scores, predicate_entropy

Everything here works on plain Python values (QIDs, candidate indices, booleans, floats); grouping rows
of a rankings table into these inputs is ``factatlas.probe.evaluate``'s job.

Tie policy. A ranking is taken as given: the scorer sorts candidates by score, descending, and breaks
equal scores by the candidate's position in ``candidate_qids`` (stable sort). ``gold_rank`` can instead
apply the pessimistic policy (the gold loses every tie) when the scores are passed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import Literal

import numpy as np

# Entropy has one definition in the toolkit (factatlas.entropy): the build stage computes DLAMA entropy
# for stats.json, the report uses the same function.
from factatlas.entropy import entropy_bits, natural_key, predicate_entropy

__all__ = [
    "RANKC_WEIGHTINGS",
    "TIE_POLICIES",
    "bootstrap_ci",
    "coverlap",
    "gold_rank",
    "macro_mean",
    "macro_micro",
    "majority_baseline",
    "majority_ties",
    "micro_mean",
    "most_common_predictions",
    "pararel_fact",
    "pararel_scores",
    "precision_at_k",
    "predicate_entropy",
    "prediction_distribution",
    "rankc",
    "rankc_from_positions",
    "rankc_matrix",
    "rankc_per_query",
    "ranking_positions",
    "rankc_weights",
    "stratified_bootstrap",
    "reciprocal_rank",
    "xfakt_scores",
    "xfakt_ttest",
]

Weighting = Literal["softmax", "norm1", "norm2"]
RANKC_WEIGHTINGS: tuple[str, ...] = ("softmax", "norm1", "norm2")
TiePolicy = Literal["stable", "pessimistic"]
TIE_POLICIES: tuple[str, ...] = ("stable", "pessimistic")


# ---- ranks: P@k and MRR -------------------------------------------------------------------------

def gold_rank(ranked_qids: Sequence[str], gold_qids: Collection[str], scores: Sequence[float] | None = None,
              ties: TiePolicy = "stable") -> int | None:
    """1-based rank of the best-placed valid object in ``ranked_qids``; ``None`` if no gold was ranked.

    ``ties="stable"`` trusts the given order (the scorer broke ties by candidate position).
    ``ties="pessimistic"`` needs ``scores`` (parallel to ``ranked_qids``): the gold is placed after every
    non-gold candidate whose score equals or beats the best gold's score.
    """
    if ties not in TIE_POLICIES:
        raise ValueError(f"unknown tie policy {ties!r}; expected one of {', '.join(TIE_POLICIES)}")
    gold = set(gold_qids)
    best = next((i for i, q in enumerate(ranked_qids) if q in gold), None)
    if best is None or ties == "stable":
        return None if best is None else best + 1
    if scores is None or len(scores) != len(ranked_qids):
        raise ValueError("the pessimistic tie policy needs one score per ranked candidate")
    best_score = scores[best]
    beaten_by = sum(1 for q, s in zip(ranked_qids, scores, strict=True) if q not in gold and s >= best_score)
    return beaten_by + 1


def precision_at_k(rank: int | None, k: int) -> float:
    """1.0 when a valid object is among the top ``k`` (``rank`` from ``gold_rank``), else 0.0."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return 1.0 if rank is not None and rank <= k else 0.0


def reciprocal_rank(rank: int | None) -> float:
    """1/rank of the first valid object; 0.0 when none was ranked."""
    return 0.0 if rank is None else 1.0 / rank


def macro_micro(fact_values: np.ndarray, predicate_of_fact: np.ndarray) -> tuple[float, float]:
    """The one definition of the two averages over facts: **macro** = mean over predicates of the mean of
    their facts (DLAMA), **micro** = mean over facts (BMLAMA). ``predicate_of_fact``: a small non-negative
    code per fact (codes without a fact are ignored). Every macro and micro P@1 of the toolkit (metrics.json,
    the verdict's held-out numbers, the analyses) is this function over ``aggregate.ScoreTable``'s facts."""
    counts = np.bincount(predicate_of_fact)
    present = counts > 0
    pred_means = np.bincount(predicate_of_fact, weights=fact_values)[present] / counts[present]
    return float(pred_means.mean()), float(fact_values.mean())


def _grouped(values_by_group: Mapping[str, Sequence[float]], what: str) -> tuple[np.ndarray, np.ndarray]:
    groups = [v for v in values_by_group.values() if len(v)]
    if not groups:
        raise ValueError(f"{what} of no values")
    values = np.concatenate([np.asarray(v, dtype=np.float64) for v in groups])
    codes = np.repeat(np.arange(len(groups)), [len(v) for v in groups])
    return values, codes


def macro_mean(values_by_group: Mapping[str, Sequence[float]]) -> float:
    """Mean over groups (predicates) of the mean within each group; empty groups are ignored (``macro_micro``)."""
    return macro_micro(*_grouped(values_by_group, "macro_mean"))[0]


def micro_mean(values_by_group: Mapping[str, Sequence[float]]) -> float:
    """Mean over all values pooled (a predicate with more facts weighs more; ``macro_micro``)."""
    return macro_micro(*_grouped(values_by_group, "micro_mean"))[1]


# A bootstrap statistic: (per-stratum sums of a resample (strata, n_boot), stratum sizes (strata, 1)) ->
# the statistic of every resample (n_boot,).
Statistic = Callable[[np.ndarray, np.ndarray], np.ndarray]


def macro_statistic(sums: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per resample: the mean over strata of the stratum means (macro)."""
    return (sums / sizes).mean(axis=0)


def micro_statistic(sums: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per resample: the mean over every resampled value (micro)."""
    return sums.sum(axis=0) / sizes.sum()


BOOTSTRAP_BLOCK = 1 << 20  # resampled values gathered at a time per stratum (8 MB)


def stratified_bootstrap(strata: Sequence[Sequence[float]], statistic: Statistic, n_boot: int = 1000,
                         confidence: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """The one bootstrap interval of the toolkit: each stratum's values resampled with replacement, the
    strata in the order given (so the draws are reproducible), ``statistic`` of every resample, and the
    percentile interval at ``confidence``. ``bootstrap_ci`` (macro or micro within predicates) and the
    analyses' culture gap (``analysis.compare.culture_gap``) are this function with their statistic."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    groups = [np.asarray(v, dtype=np.float64) for v in strata]
    if not groups or any(len(v) == 0 for v in groups):
        raise ValueError("a bootstrap needs values in every stratum")
    rng = np.random.default_rng(seed)
    sums = np.zeros((len(groups), n_boot))
    for g, values in enumerate(groups):
        # 4-byte indexes (the generator draws the same numbers as for 8-byte ones), drawn and gathered a
        # block of resamples at a time: the generator keeps its place between calls (PCG64 keeps the spare
        # half of a 64-bit draw in its state), so the blocks are the rows of one draw of every resample
        # (tests/probe/test_metrics.py), and a stratum of n facts holds 4 * BOOTSTRAP_BLOCK bytes of
        # draws, not 4 n_boot n (a predicate of 20,000 facts held 80 MB)
        kind = np.int32 if len(values) < 2**31 else np.int64
        step = max(1, BOOTSTRAP_BLOCK // len(values))
        for start in range(0, n_boot, step):
            draws = rng.integers(0, len(values), size=(min(step, n_boot - start), len(values)), dtype=kind)
            sums[g, start:start + step] = values[draws].sum(axis=1)
    sizes = np.array([len(v) for v in groups], dtype=np.float64)[:, None]
    stats = statistic(sums, sizes)
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(stats, [tail, 100 - tail])
    return float(lo), float(hi)


def bootstrap_ci(values_by_predicate: Mapping[str, Sequence[float]], n_boot: int = 1000,
                 confidence: float = 0.95, seed: int = 0,
                 average: Literal["macro", "micro"] = "macro") -> tuple[float, float]:
    """Percentile bootstrap interval of the macro (or micro) mean, resampling facts within each predicate.

    Stratifying by predicate keeps every predicate in every resample, so the macro mean stays defined
    and the interval reflects the uncertainty over facts, not over which predicates were drawn.
    """
    groups = [v for _, v in sorted(values_by_predicate.items()) if len(v)]
    if not groups:
        raise ValueError("bootstrap_ci of no values")
    if average not in ("macro", "micro"):
        raise ValueError(f"average must be 'macro' or 'micro', got {average!r}")
    return stratified_bootstrap(groups, macro_statistic if average == "macro" else micro_statistic, n_boot,
                                confidence, seed)


# ---- RankC (BMLAMA) -----------------------------------------------------------------------------

def _raw_rankc_weights(n: int, weighting: Weighting) -> np.ndarray:
    if n < 1:
        raise ValueError(f"a query needs at least one candidate, got {n}")
    descending = np.arange(n, 0, -1, dtype=np.float64)  # n-j+1 for j = 1..n
    if weighting == "softmax":
        # e^(n-j) / sum_k e^(n-k) == e^-(j-1) / sum_k e^-(k-1): shifted so a large n cannot overflow.
        return np.exp(descending - n)
    if weighting == "norm1":
        return descending
    if weighting == "norm2":
        return descending**2
    raise ValueError(f"unknown RankC weighting {weighting!r}; expected one of {', '.join(RANKC_WEIGHTINGS)}")


def rankc_weights(n: int, weighting: Weighting = "softmax") -> np.ndarray:
    """w_1..w_n: softmax ∝ e^(n-j), norm1 ∝ n-j+1, norm2 ∝ (n-j+1)^2 (the released code's variant)."""
    raw = _raw_rankc_weights(n, weighting)
    return raw / raw.sum()


def rankc_per_query(rankings_a: Sequence[Sequence[Hashable]], rankings_b: Sequence[Sequence[Hashable]],
                    weighting: Weighting = "softmax") -> np.ndarray:
    """consist_i for every query i, in O(N_i) each.

    |top_j(r) ∩ top_j(r')| = #{c : max(pos(c), pos'(c)) < j}: count each candidate once at the depth where
    it has entered both rankings, then a running sum gives every overlap. Queries are batched by
    candidate count so the arithmetic runs in numpy.
    """
    if len(rankings_a) != len(rankings_b):
        raise ValueError(f"RankC needs the same queries in both languages: {len(rankings_a)} vs {len(rankings_b)}")
    out = np.empty(len(rankings_a), dtype=np.float64)
    by_size: dict[int, list[int]] = {}
    for i, (ra, rb) in enumerate(zip(rankings_a, rankings_b, strict=True)):
        if len(ra) != len(rb):
            raise ValueError(f"query {i}: rankings differ in length ({len(ra)} vs {len(rb)}); "
                             "RankC compares rankings of the same candidates")
        if len(ra) == 0:
            raise ValueError(f"query {i}: empty ranking")
        by_size.setdefault(len(ra), []).append(i)
    for n, idx in by_size.items():
        out[idx] = rankc_from_positions(*_positions(rankings_a, rankings_b, idx, n), weighting)
    return out


def rankc_from_positions(pos_a: np.ndarray, pos_b: np.ndarray, weighting: Weighting = "softmax") -> np.ndarray:
    """consist per query from position arrays of shape (queries, N): ``pos[q, c]`` is the 0-based rank
    of candidate c (numbered 0..N-1 identically in both languages). The vectorised core of RankC for
    callers that keep rankings as arrays (see ``ranking_positions``)."""
    q, n = pos_a.shape
    if pos_b.shape != (q, n):
        raise ValueError(f"position arrays differ in shape: {pos_a.shape} vs {pos_b.shape}")
    raw = _raw_rankc_weights(n, weighting)
    if q == 0:
        return np.empty(0)
    # sum_j w_j |top_j ∩ top'_j| / j = sum_c sum_{j >= depth(c)} w_j / j: each candidate adds the tail sum
    # of w_j / j from the depth (0-based) at which it is in both top lists; one gather, no cumsum.
    tail = np.cumsum((raw / np.arange(1, n + 1))[::-1])[::-1]
    consist = tail[np.maximum(pos_a, pos_b)].sum(axis=1) / raw.sum()
    consist[(pos_a == pos_b).all(axis=1)] = 1.0  # identical rankings: exactly 1, not 1 - an ulp
    return np.minimum(consist, 1.0)


def ranking_positions(order: np.ndarray) -> np.ndarray:
    """Inverse permutations: ``order[q]`` lists candidate numbers best first -> ``pos[q, c]``."""
    order = np.asarray(order)
    return _inverse(order if order.dtype.kind in "iu" else order.astype(np.int64), list(range(len(order))),
                    "the ranking")


def _positions(rankings_a, rankings_b, idx: list[int], n: int) -> tuple[np.ndarray, np.ndarray]:
    """pos_a[q, c], pos_b[q, c]: position of candidate c (numbered 0..n-1) in each ranking of query q."""
    a = _as_index_array([rankings_a[i] for i in idx], n)
    b = _as_index_array([rankings_b[i] for i in idx], n)
    if a is None or b is None:  # arbitrary hashables: number candidates by their place in ranking a
        a = np.tile(np.arange(n), (len(idx), 1))
        b = np.empty((len(idx), n), dtype=np.int64)
        for row, i in enumerate(idx):
            place = {c: j for j, c in enumerate(rankings_a[i])}
            if len(place) != n:
                raise ValueError(f"query {i}: ranking holds a candidate twice")
            try:
                b[row] = [place[c] for c in rankings_b[i]]
            except KeyError as e:
                raise ValueError(f"query {i}: candidate {e.args[0]!r} is ranked in one language only") from e
    return _inverse(a, idx, "ranking a"), _inverse(b, idx, "ranking b")


def _as_index_array(rankings: list[Sequence[Hashable]], n: int) -> np.ndarray | None:
    """The rankings as an int array when they already are candidate indices 0..n-1, else None."""
    try:
        arr = np.asarray(rankings)
    except ValueError:
        return None
    if arr.dtype.kind not in "iu" or arr.ndim != 2:
        return None
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        return None
    return arr.astype(np.int64, copy=False)


def _inverse(order: np.ndarray, idx: list[int], what: str) -> np.ndarray:
    """Inverse permutations row by row; a row that is no permutation (a repeated index) is an error."""
    q, n = order.shape
    inv = np.full((q, n), -1, dtype=np.int16 if n < 2**15 else np.int64)  # positions: 2 bytes while they fit
    inv[np.arange(q)[:, None], order] = np.arange(n)
    bad = np.flatnonzero((inv < 0).any(axis=1))
    if bad.size:
        raise ValueError(f"query {idx[bad[0]]}: {what} is not a permutation of its candidates "
                         f"(a candidate appears twice)")
    return inv


def rankc(rankings_a: Sequence[Sequence[Hashable]], rankings_b: Sequence[Sequence[Hashable]],
          weighting: Weighting = "softmax") -> float:
    """RankC between two languages: mean over queries of sum_j w_j |top_j(r) ∩ top_j(r')| / j, in [0, 1].

    ``rankings_a[i]`` and ``rankings_b[i]`` rank the same candidates of query i, best first: candidate
    indices (candidate j in one language is the translation of candidate j in the other) or QIDs.
    """
    if len(rankings_a) == 0:
        raise ValueError("RankC of no queries")
    return float(rankc_per_query(rankings_a, rankings_b, weighting).mean())


def rankc_matrix(rankings: Mapping[str, Sequence[Sequence[Hashable]]], weighting: Weighting = "softmax"
                 ) -> dict[tuple[str, str], float]:
    """RankC of every language pair ``(a, b)``, a before b in ``rankings``' order, equal to ``rankc(a, b)``.

    Each language's rankings become position arrays once (the pairwise ``rankc`` converts both lists
    for every pair, which was 90 % of a 17-language matrix's time); pairs then share them.
    """
    langs = list(rankings)
    if not langs:
        return {}
    first = rankings[langs[0]]
    for lang in langs[1:]:
        if len(rankings[lang]) != len(first):
            raise ValueError(f"RankC needs the same queries in every language: {langs[0]} has {len(first)}, "
                             f"{lang} has {len(rankings[lang])}")
    if len(first) == 0:
        raise ValueError("RankC of no queries")
    sizes = np.fromiter(map(len, first), dtype=np.int64, count=len(first))
    if (sizes == 0).any():
        raise ValueError(f"query {int(np.flatnonzero(sizes == 0)[0])}: empty ranking")
    for lang in langs[1:]:
        other = np.fromiter(map(len, rankings[lang]), dtype=np.int64, count=len(first))
        if (other != sizes).any():
            bad = int(np.flatnonzero(other != sizes)[0])
            raise ValueError(f"query {bad}: rankings differ in length ({sizes[bad]} in {langs[0]} vs {other[bad]} "
                             f"in {lang}); RankC compares rankings of the same candidates")
    by_size = {int(n): np.flatnonzero(sizes == n) for n in np.unique(sizes)}
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    flat = {lang: _flat_indices(rankings[lang], int(sizes.sum())) for lang in langs}
    positions: dict[str, dict[int, np.ndarray]] = {lang: {} for lang in langs}
    for n, idx in by_size.items():
        gather = starts[idx][:, None] + np.arange(n)
        arrays = {lang: None if flat[lang] is None else flat[lang][gather] for lang in langs}
        if any(a is None or (a.size and (a.min() < 0 or a.max() >= n)) for a in arrays.values()):
            arrays = _numbered_by_first(rankings, langs, idx.tolist(), n)  # QIDs or other hashables
        for lang in langs:
            positions[lang][n] = _inverse(arrays[lang], idx.tolist(), f"the {lang} ranking")
    total = len(first)
    out: dict[tuple[str, str], float] = {}
    for ai, a in enumerate(langs):
        for b in langs[ai + 1:]:
            consist = np.empty(total, dtype=np.float64)
            for n, idx in by_size.items():
                consist[idx] = rankc_from_positions(positions[a][n], positions[b][n], weighting)
            out[(a, b)] = float(consist.mean())
    return out


def _flat_indices(rankings: Sequence[Sequence[Hashable]], total: int) -> np.ndarray | None:
    """All rankings of one language concatenated as int64, or None when they are not integers."""
    import itertools

    head = next((r[0] for r in rankings if len(r)), None)
    if isinstance(head, bool) or not isinstance(head, int | np.integer):
        return None
    try:
        return np.fromiter(itertools.chain.from_iterable(rankings), dtype=np.int64, count=total)
    except (TypeError, ValueError):
        return None


def _numbered_by_first(rankings: Mapping[str, Sequence[Sequence[Hashable]]], langs: list[str], idx: list[int],
                       n: int) -> dict[str, np.ndarray]:
    """Candidates of arbitrary hashables numbered by their place in the first language's ranking."""
    first = rankings[langs[0]]
    places = []
    for i in idx:
        place = {c: j for j, c in enumerate(first[i])}
        if len(place) != n:
            raise ValueError(f"query {i}: ranking holds a candidate twice")
        places.append(place)
    arrays = {}
    for lang in langs:
        arr = np.empty((len(idx), n), dtype=np.int64)
        for row, (i, place) in enumerate(zip(idx, places, strict=True)):
            try:
                arr[row] = [place[c] for c in rankings[lang][i]]
            except KeyError as e:
                raise ValueError(f"query {i}: candidate {e.args[0]!r} is ranked in {lang} but not in "
                                 f"{langs[0]}") from e
        arrays[lang] = arr
    return arrays


# ---- COverlap (X-FACTR) -------------------------------------------------------------------------

def coverlap(correct_a: Sequence[bool], correct_b: Sequence[bool]) -> float:
    """(# queries correct in both) / (# correct in either); NaN when no query is correct in either."""
    if len(correct_a) != len(correct_b):
        raise ValueError(f"COverlap needs the same queries in both languages: {len(correct_a)} vs {len(correct_b)}")
    both = sum(1 for a, b in zip(correct_a, correct_b, strict=True) if a and b)
    either = sum(1 for a, b in zip(correct_a, correct_b, strict=True) if a or b)
    return both / either if either else math.nan


# ---- DLAMA: entropy, majority class, most common predictions --------------------------------------

def _fact_objects(valid_objects_per_fact: Iterable[Collection[str]]) -> list[tuple[str, ...]]:
    facts = [tuple(dict.fromkeys(objs)) for objs in valid_objects_per_fact]
    if not facts:
        raise ValueError("no facts given")
    for i, objs in enumerate(facts):
        if not objs:
            raise ValueError(f"fact {i} has no valid object")
    return facts


def majority_baseline(valid_objects_per_fact: Iterable[Collection[str]]) -> tuple[str, float]:
    """The object valid for the most facts (tie: the naturally smallest QID, Q29 before Q142) and the P@1 of always predicting it."""
    facts = _fact_objects(valid_objects_per_fact)
    freq = Counter(o for objs in facts for o in objs)
    best = min(freq, key=lambda o: (-freq[o], natural_key(o)))  # ties: natural QID order, as entropy
    return best, freq[best] / len(facts)


def majority_ties(valid_objects_per_fact: Iterable[Collection[str]]) -> int:
    """How many objects share the majority object's frequency (1 = a clear majority)."""
    facts = _fact_objects(valid_objects_per_fact)
    freq = Counter(o for objs in facts for o in objs)
    top = max(freq.values())
    return sum(1 for v in freq.values() if v == top)


def most_common_predictions(predictions: Iterable[tuple[str, bool]], top: int = 5) -> dict[str, list]:
    """DLAMA's "educated guess" tables: the most frequent top-1 predictions, split by correctness.

    ``predictions``: (predicted QID, correct?) per query. Returns {"correct": [[qid, count], ...],
    "wrong": [...], "n": queries}; ties in count are ordered by QID.
    """
    counts: dict[bool, Counter] = {True: Counter(), False: Counter()}
    n = 0
    for qid, correct in predictions:
        counts[bool(correct)][qid] += 1
        n += 1

    def head(c: Counter) -> list[list]:
        return [[q, k] for q, k in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]

    return {"correct": head(counts[True]), "wrong": head(counts[False]), "n": n}


def prediction_distribution(predictions: Iterable[str]) -> dict[str, float | int | str | None]:
    """How concentrated a language's top-1 predictions are (language bias): share of the most frequent
    prediction, entropy in bits and number of distinct predictions."""
    c = Counter(predictions)
    n = sum(c.values())
    if n == 0:
        return {"n": 0, "n_distinct": 0, "top": None, "top_share": None, "entropy_bits": None}
    top, top_count = min(c.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"n": n, "n_distinct": len(c), "top": top, "top_share": top_count / n,
            "entropy_bits": entropy_bits(c.values())}


# ---- mParaRel -----------------------------------------------------------------------------------

def pararel_fact(predictions: Sequence[Hashable], golds: Collection[Hashable]) -> tuple[float, float, float]:
    """(accuracy, consistency, consistency-accuracy) of one fact asked with n >= 2 templates."""
    n = len(predictions)
    if n < 2:
        raise ValueError(f"paraphrase consistency needs >= 2 templates per fact, got {n}")
    gold = set(golds)
    correct = [p in gold for p in predictions]
    pairs = n * (n - 1) // 2
    same = Counter(predictions)
    agreeing = sum(k * (k - 1) // 2 for k in same.values())
    agreeing_correct = sum(k * (k - 1) // 2 for p, k in same.items() if p in gold)
    return sum(correct) / n, agreeing / pairs, agreeing_correct / pairs


def pararel_scores(predictions: Sequence[Sequence[Hashable]],
                   golds: Sequence[Collection[Hashable]]) -> dict[str, float]:
    """mParaRel metrics for one relation in one language, averaged over its facts.

    ``predictions[i]``: fact i's top-1 prediction under each template; ``golds[i]``: its valid objects.
    Returns {"accuracy", "consistency", "consistency_accuracy"}.
    """
    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} prediction lists but {len(golds)} gold sets")
    if not predictions:
        raise ValueError("pararel_scores of no facts")
    per_fact = [pararel_fact(p, g) for p, g in zip(predictions, golds, strict=True)]
    n = len(per_fact)
    return {
        "accuracy": sum(f[0] for f in per_fact) / n,
        "consistency": sum(f[1] for f in per_fact) / n,
        "consistency_accuracy": sum(f[2] for f in per_fact) / n,
    }


# ---- X-FaKT ------------------------------------------------------------------------------------

def xfakt_scores(mu_assoc: float, mu_non: float) -> dict[str, float]:
    """FRS, KTS and their harmonic mean X-FaKT from the associative / non-associative error rates."""
    for name, mu in (("mu_assoc", mu_assoc), ("mu_non", mu_non)):
        if not 0.0 <= mu <= 1.0:
            raise ValueError(f"{name} is an error rate in [0, 1], got {mu}")
    frs = 1.5 * (1.0 / (mu_assoc + mu_non + 1.0) - 1.0 / 3.0)
    kts = 2.0 * (1.0 / (abs(mu_assoc - mu_non) + 1.0) - 0.5)
    xfakt = 2.0 * frs * kts / (frs + kts) if frs + kts > 0 else 0.0
    return {"frs": frs, "kts": kts, "xfakt": xfakt}


def xfakt_ttest(errors_assoc: Sequence[float], errors_non: Sequence[float]) -> dict[str, float | int | str | None]:
    """Welch's two-sample t-test between associative and non-associative errors: what
    ``scipy.stats.ttest_ind(equal_var=False)`` computes (tested against it), with the t distribution from
    scipy.special: importing scipy.stats costs about a second, a third of the metrics' time on the
    quickstart's benchmark.

    t and p are None (with a reason) when a group has fewer than two values or both have zero variance.
    """
    from scipy.special import stdtr

    out: dict[str, float | int | str | None] = {
        "test": "welch", "n_assoc": len(errors_assoc), "n_non": len(errors_non), "t": None, "p": None,
        "reason": ""}
    if len(errors_assoc) < 2 or len(errors_non) < 2:
        out["reason"] = "fewer than two queries in a group"
        return out
    a, b = np.asarray(errors_assoc, dtype=float), np.asarray(errors_non, dtype=float)
    if np.var(a) == 0 and np.var(b) == 0:
        out["reason"] = "no variance in either group"
        return out
    # one constant group has variance exactly 0 and Welch's statistic is still well defined
    share_a, share_b = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    spread = share_a + share_b
    t = (a.mean() - b.mean()) / math.sqrt(spread)
    df = spread**2 / (share_a**2 / (len(a) - 1) + share_b**2 / (len(b) - 1))  # Welch-Satterthwaite
    out["t"], out["p"] = float(t), float(2.0 * stdtr(df, -abs(t)))
    return out


# X-FaKT's resource groups (Aggarwal et al. 2025, "Language Models' Factuality Depends on the Language of
# Inquiry", arXiv:2502.17955v1, §3 "Dataset"; Table 3 reports error rates per group "as defined in
# Section 3"). Its released metric script puts Turkish under medium; the paper's text, followed here,
# puts it under low.
RESOURCE_LEVELS = ("high", "medium", "low")
XFAKT_RESOURCE_SOURCE = "X-FaKT (Aggarwal et al. 2025, arXiv:2502.17955v1), §3 and Table 3"
XFAKT_RESOURCE = {
    "en": "high", "zh": "high", "fr": "high", "ja": "high",
    "hi": "medium", "ru": "medium", "ar": "medium", "el": "medium",
    "ne": "low", "uk": "low", "tr": "low", "sw": "low", "th": "low",
}
