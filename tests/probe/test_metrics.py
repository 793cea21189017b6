"""Every metric on hand-worked examples (the arithmetic is in the comments) and its invariants."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factatlas.probe.metrics import (
    bootstrap_ci,
    coverlap,
    gold_rank,
    macro_mean,
    majority_baseline,
    majority_ties,
    micro_mean,
    most_common_predictions,
    pararel_fact,
    pararel_scores,
    precision_at_k,
    predicate_entropy,
    prediction_distribution,
    rankc,
    rankc_matrix,
    rankc_per_query,
    rankc_weights,
    reciprocal_rank,
    xfakt_scores,
    xfakt_ttest,
)

E = math.e


def naive_rankc_query(ra, rb, weighting="softmax"):
    """The O(N^2) definition, written independently of the library: sum_j w_j |top_j ∩ top'_j| / j,
    with the released code's weights (order = N, N-1, ..., 1)."""
    n = len(ra)
    order = [n - j for j in range(n)]
    if weighting == "softmax":
        raw = [math.exp(o) for o in order]
    elif weighting == "norm1":
        raw = [float(o) for o in order]
    else:
        raw = [float(o * o) for o in order]
    total = sum(raw)
    return sum(raw[j] / total * len(set(ra[: j + 1]) & set(rb[: j + 1])) / (j + 1) for j in range(n))


# ---- P@k, MRR, ties, averages ---------------------------------------------------------------------

def test_gold_rank_precision_and_reciprocal_rank():
    assert gold_rank(["Q1", "Q2", "Q3"], {"Q2"}) == 2
    assert gold_rank(["Q1", "Q2", "Q3"], {"Q3", "Q2"}) == 2  # the best-placed valid object counts
    assert gold_rank(["Q1", "Q2"], {"Q9"}) is None
    # rank 2: P@1 = 0, P@2 = 1, reciprocal rank = 1/2
    assert (precision_at_k(2, 1), precision_at_k(2, 2), reciprocal_rank(2)) == (0.0, 1.0, 0.5)
    assert (precision_at_k(None, 10), reciprocal_rank(None)) == (0.0, 0.0)
    with pytest.raises(ValueError):
        precision_at_k(1, 0)


def test_tie_policies():
    # Q1 and Q2 tie at -1.0; the scorer put the gold Q1 first (candidate order): stable keeps rank 1,
    # pessimistic lets the gold lose the tie: one non-gold (Q2) scores >= -1.0 -> rank 2.
    ranked, scores = ["Q1", "Q2", "Q3"], [-1.0, -1.0, -2.0]
    assert gold_rank(ranked, {"Q1"}, scores, ties="stable") == 1
    assert gold_rank(ranked, {"Q1"}, scores, ties="pessimistic") == 2
    # no tie: both policies agree
    assert gold_rank(ranked, {"Q3"}, scores, ties="pessimistic") == 3
    with pytest.raises(ValueError, match="tie policy"):
        gold_rank(ranked, {"Q1"}, scores, ties="optimistic")
    with pytest.raises(ValueError, match="one score per"):
        gold_rank(ranked, {"Q1"}, [0.0], ties="pessimistic")


def test_macro_and_micro_means():
    values = {"P1": [1, 0, 0, 0], "P2": [1]}
    assert macro_mean(values) == pytest.approx((0.25 + 1.0) / 2)  # 0.625
    assert micro_mean(values) == pytest.approx(2 / 5)  # 0.4
    with pytest.raises(ValueError):
        macro_mean({"P1": []})


def test_bootstrap_ci_is_stratified_deterministic_and_brackets_the_mean():
    constant = {"P1": [1.0, 1.0, 1.0], "P2": [0.0, 0.0]}
    assert bootstrap_ci(constant, 200) == (0.5, 0.5)  # every resample keeps both predicates: (1 + 0) / 2
    values = {"P1": [1, 0, 1, 1, 0, 1, 0, 1], "P2": [0, 0, 1, 0, 0, 1]}
    lo, hi = bootstrap_ci(values, 500, seed=3)
    assert (lo, hi) == bootstrap_ci(values, 500, seed=3)
    assert lo < macro_mean(values) < hi
    assert lo >= 0.0 and hi <= 1.0


# ---- RankC ---------------------------------------------------------------------------------------

def test_rankc_hand_worked():
    # N = 3, r = [0, 1, 2], r' = [1, 0, 2]. Overlaps: top1 {0}∩{1} = 0; top2 = 2 -> 2/2; top3 -> 3/3.
    # softmax weights e^2, e^1, e^0 over (e^2 + e + 1): consist = (e + 1) / (e^2 + e + 1) = 3.718282 / 11.107338 = 0.334759
    q = ([0, 1, 2], [1, 0, 2])
    assert rankc([q[0]], [q[1]]) == pytest.approx((E + 1) / (E**2 + E + 1))
    assert rankc([q[0]], [q[1]]) == pytest.approx(0.334759, abs=1e-6)
    # norm1 weights 3, 2, 1 over 6: (2 + 1) / 6; norm2 weights 9, 4, 1 over 14: (4 + 1) / 14
    assert rankc([q[0]], [q[1]], "norm1") == pytest.approx(0.5)
    assert rankc([q[0]], [q[1]], "norm2") == pytest.approx(5 / 14)
    # a second query ranked identically (consist 1) and a one-candidate query (consist 1): mean of three
    assert rankc([q[0], [0, 1], [0]], [q[1], [0, 1], [0]]) == pytest.approx(((E + 1) / (E**2 + E + 1) + 2) / 3)
    # reversed N = 3: top1 0, top2 {0,1}∩{2,1} = 1 -> 1/2, top3 1; softmax: (e/2 + 1) / (e^2 + e + 1)
    assert rankc([[0, 1, 2]], [[2, 1, 0]]) == pytest.approx((E / 2 + 1) / (E**2 + E + 1))


def test_rankc_matrix_equals_rankc_per_pair():
    # three languages, queries of 3 and 2 candidates, as indices and as QIDs (numbered by the first)
    idx = {"en": [[0, 1, 2], [0, 1]], "es": [[1, 0, 2], [1, 0]], "ar": [[2, 1, 0], [0, 1]]}
    m = rankc_matrix(idx)
    assert list(m) == [("en", "es"), ("en", "ar"), ("es", "ar")]
    assert m == {(a, b): rankc(idx[a], idx[b]) for a, b in m}
    assert m[("en", "es")] == pytest.approx(((E + 1) / (E**2 + E + 1) + 1 / (E + 1)) / 2)
    assert m[("en", "ar")] == pytest.approx(((E / 2 + 1) / (E**2 + E + 1) + 1.0) / 2)
    qids = {lang: [[f"Q{10 + c}" for c in r] for r in rs] for lang, rs in idx.items()}
    assert rankc_matrix(qids) == m
    assert rankc_matrix(idx, "norm2") == {(a, b): rankc(idx[a], idx[b], "norm2") for a, b in m}
    assert rankc_matrix({"en": [[0, 1, 2]], "de": [[0, 1, 2]]}) == {("en", "de"): 1.0}
    with pytest.raises(ValueError, match=r"^query 1: rankings differ in length \(2 in en vs 3 in es\)"):
        rankc_matrix({"en": [[0, 1, 2], [0, 1]], "ar": [[0, 1, 2], [0, 1]], "es": [[0, 1, 2], [0, 1, 2]]})
    with pytest.raises(ValueError, match="not a permutation"):
        rankc_matrix({"en": [[0, 1, 2]], "es": [[0, 0, 1]]})
    with pytest.raises(ValueError, match="ranked in es but not in en"):
        rankc_matrix({"en": [["Q1", "Q2"]], "es": [["Q1", "Q3"]]})
    with pytest.raises(ValueError, match="same queries"):
        rankc_matrix({"en": [[0]], "es": []})


def test_rankc_weights_match_the_released_code():
    # softmax over order = [N, ..., 1]: shifting by N does not change a softmax
    w = rankc_weights(4)
    assert w == pytest.approx([math.exp(k) / sum(math.exp(j) for j in (4, 3, 2, 1)) for k in (4, 3, 2, 1)])
    assert rankc_weights(4, "norm1") == pytest.approx([0.4, 0.3, 0.2, 0.1])
    assert rankc_weights(3, "norm2") == pytest.approx([9 / 14, 4 / 14, 1 / 14])
    assert rankc_weights(500).sum() == pytest.approx(1.0)  # no overflow for long candidate lists
    with pytest.raises(ValueError, match="unknown RankC weighting"):
        rankc_weights(3, "softmax2")


def test_rankc_accepts_qids_and_rejects_mismatched_rankings():
    assert rankc([["Q5", "Q7", "Q9"]], [["Q7", "Q5", "Q9"]]) == pytest.approx(rankc([[0, 1, 2]], [[1, 0, 2]]))
    with pytest.raises(ValueError, match="ranked in one language only"):
        rankc([["Q1", "Q2"]], [["Q1", "Q3"]])
    with pytest.raises(ValueError, match="differ in length"):
        rankc([[0, 1, 2]], [[0, 1]])
    with pytest.raises(ValueError, match="not a permutation"):
        rankc([[0, 0, 1]], [[0, 1, 2]])
    with pytest.raises(ValueError, match="same queries"):
        rankc([[0]], [])
    with pytest.raises(ValueError):
        rankc([], [])


def permutation_pairs(max_n: int = 12, max_q: int = 8):
    def pair(n):
        perm = st.permutations(list(range(n)))
        return st.tuples(perm, perm)

    return st.lists(st.integers(1, max_n).flatmap(pair), min_size=1, max_size=max_q)


@settings(max_examples=150, deadline=None)
@given(permutation_pairs(), st.sampled_from(["softmax", "norm1", "norm2"]))
def test_rankc_on_n_equals_naive_definition(pairs, weighting):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    fast = rankc_per_query(a, b, weighting)
    naive = [naive_rankc_query(x, y, weighting) for x, y in pairs]
    assert list(fast) == pytest.approx(naive, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(permutation_pairs(), st.sampled_from(["softmax", "norm1", "norm2"]))
def test_rankc_invariants(pairs, weighting):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    value = rankc(a, b, weighting)
    assert 0.0 <= value <= 1.0
    assert value == pytest.approx(rankc(b, a, weighting), abs=1e-12)  # symmetric
    assert rankc(a, a, weighting) == 1.0  # identical rankings: exactly 1
    # relabelling candidates (indices -> QIDs) changes nothing
    relabel = [[f"Q{100 + c}" for c in r] for r in a], [[f"Q{100 + c}" for c in r] for r in b]
    assert rankc(*relabel, weighting) == pytest.approx(value, abs=1e-12)


# ---- COverlap ------------------------------------------------------------------------------------

def test_coverlap_hand_worked():
    # both correct: query 0; correct in either: queries 0, 1, 2 -> 1/3
    assert coverlap([True, True, False, False], [True, False, True, False]) == pytest.approx(1 / 3)
    assert coverlap([True, False], [True, False]) == 1.0
    assert math.isnan(coverlap([False, False], [False, False]))  # undefined: nothing correct
    with pytest.raises(ValueError):
        coverlap([True], [True, False])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_coverlap_bounds(pairs):
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    value = coverlap(a, b)
    if not any(a) and not any(b):
        assert math.isnan(value)
        return
    assert 0.0 <= value <= 1.0
    assert value == coverlap(b, a)
    assert value <= min(sum(a), sum(b)) / max(sum(a), sum(b)) + 1e-12  # |A∩B| / |A∪B| <= min / max
    assert value == 1.0 or a != b


# ---- DLAMA entropy, majority class, predictions ---------------------------------------------------

def test_predicate_entropy_hand_worked():
    # freq A:3 B:1 C:1; facts map to A, A, B, A (the {A, C} fact takes its more frequent A)
    # H = -(3/4 log2 3/4 + 1/4 log2 1/4) = 0.311278 + 0.5 = 0.811278
    assert predicate_entropy([{"A"}, {"A"}, {"B"}, {"A", "C"}]) == pytest.approx(0.8112781, abs=1e-7)
    # a frequency tie goes to the smaller QID: X:2 Y:2, {X, Y} -> X; X, Y, X -> H(2/3, 1/3) = 0.918296
    assert predicate_entropy([["X"], ["Y"], ["Y", "X"]]) == pytest.approx(0.9182958, abs=1e-7)
    assert predicate_entropy([["Q1"], ["Q2"], ["Q3"], ["Q4"]]) == pytest.approx(2.0)  # uniform over 4
    assert predicate_entropy([["Q1"], ["Q1"]]) == 0.0
    assert predicate_entropy([]) == 0.0  # no facts: nothing to guess
    assert predicate_entropy([["Q1"], [], ["Q2"]]) == 1.0  # a fact without objects is ignored


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["Q1", "Q2", "Q3", "Q4", "Q5"]), min_size=1, max_size=3, unique=True),
                min_size=1, max_size=30))
def test_predicate_entropy_bounds(facts):
    h = predicate_entropy(facts)
    assert 0.0 <= h <= math.log2(len(facts)) + 1e-12
    assert h <= math.log2(len(set().union(*facts))) + 1e-12


def test_majority_baseline_hand_worked():
    assert majority_baseline([{"A"}, {"A"}, {"B"}, {"A", "C"}]) == ("A", 0.75)  # A valid for 3 of 4 facts
    assert majority_baseline([["Q2"], ["Q1"]]) == ("Q1", 0.5)  # tie -> smaller QID
    assert majority_ties([["Q2"], ["Q1"]]) == 2
    assert majority_ties([{"A"}, {"A"}, {"B"}, {"A", "C"}]) == 1


def test_most_common_predictions_and_distribution():
    preds = [("A", True), ("B", False), ("B", False), ("C", False), ("A", True)]
    assert most_common_predictions(preds) == {"correct": [["A", 2]], "wrong": [["B", 2], ["C", 1]], "n": 5}
    assert most_common_predictions(preds, top=1)["wrong"] == [["B", 2]]
    # A, A, B, C: top A with 2/4; H = 1/2*1 + 1/4*2 + 1/4*2 = 1.5 bits
    d = prediction_distribution(["A", "A", "B", "C"])
    assert d == {"n": 4, "n_distinct": 3, "top": "A", "top_share": 0.5, "entropy_bits": pytest.approx(1.5)}
    assert prediction_distribution([])["top"] is None


# ---- mParaRel ------------------------------------------------------------------------------------

def test_pararel_hand_worked():
    # fact 1: predictions A, A, B with gold A: accuracy 2/3; of the 3 pairs only (1, 2) agree -> 1/3,
    # and that pair is correct -> consistency-accuracy 1/3.
    assert pararel_fact(["A", "A", "B"], {"A"}) == pytest.approx((2 / 3, 1 / 3, 1 / 3))
    # fact 2: B, B, B with gold A: accuracy 0, consistency 3/3, consistency-accuracy 0
    assert pararel_fact(["B", "B", "B"], {"A"}) == pytest.approx((0.0, 1.0, 0.0))
    scores = pararel_scores([["A", "A", "B"], ["B", "B", "B"]], [{"A"}, {"A"}])
    assert scores == pytest.approx({"accuracy": 1 / 3, "consistency": 2 / 3, "consistency_accuracy": 1 / 6})
    with pytest.raises(ValueError, match=">= 2 templates"):
        pararel_scores([["A"]], [{"A"}])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from("ABCD"), min_size=2, max_size=8), st.sets(st.sampled_from("ABCD"), min_size=1))
def test_pararel_matches_pairwise_definition(predictions, gold):
    n = len(predictions)
    pairs = list(itertools.combinations(range(n), 2))
    acc, cons, cons_acc = pararel_fact(predictions, gold)
    assert acc == pytest.approx(sum(p in gold for p in predictions) / n)
    assert cons == pytest.approx(sum(predictions[s] == predictions[t] for s, t in pairs) / len(pairs))
    assert cons_acc == pytest.approx(
        sum(predictions[s] == predictions[t] and predictions[s] in gold for s, t in pairs) / len(pairs))
    assert cons_acc <= cons


# ---- X-FaKT --------------------------------------------------------------------------------------

def test_xfakt_hand_worked():
    # mu_a = 0.2, mu_n = 0.4: FRS = 3/2 (1/1.6 - 1/3) = 0.4375; KTS = 2 (1/1.2 - 1/2) = 0.666667;
    # X-FaKT = 2 * 0.4375 * 0.666667 / (0.4375 + 0.666667) = 0.528302
    s = xfakt_scores(0.2, 0.4)
    assert s == pytest.approx({"frs": 0.4375, "kts": 2 / 3, "xfakt": 0.5283019}, abs=1e-6)


def test_xfakt_edges():
    assert xfakt_scores(0.0, 0.0) == pytest.approx({"frs": 1.0, "kts": 1.0, "xfakt": 1.0})  # perfect
    assert xfakt_scores(1.0, 1.0) == pytest.approx({"frs": 0.0, "kts": 1.0, "xfakt": 0.0})  # knows nothing
    # all associative right, all non-associative wrong: FRS = 3/2 (1/2 - 1/3) = 1/4, KTS = 0 -> X-FaKT 0
    assert xfakt_scores(0.0, 1.0) == pytest.approx({"frs": 0.25, "kts": 0.0, "xfakt": 0.0})
    with pytest.raises(ValueError, match="error rate"):
        xfakt_scores(1.2, 0.0)


@settings(max_examples=100, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1))
def test_xfakt_bounds_and_symmetry(a, n):
    s = xfakt_scores(a, n)
    for v in s.values():
        assert -1e-12 <= v <= 1 + 1e-12
    assert s == pytest.approx(xfakt_scores(n, a))
    assert min(s["frs"], s["kts"]) - 1e-12 <= s["xfakt"] <= max(s["frs"], s["kts"]) + 1e-12  # harmonic mean


def test_xfakt_ttest_welch():
    # means 0.25 vs 0.75, sample variances 0.25 each, n = 4: t = -0.5 / sqrt(0.25/4 + 0.25/4) = -sqrt(2);
    # Welch df = 6 here; two-sided p = 0.2070
    t = xfakt_ttest([0, 0, 1, 0], [1, 1, 0, 1])
    assert t["t"] == pytest.approx(-math.sqrt(2))
    assert t["p"] == pytest.approx(0.2070, abs=5e-4)
    assert (t["n_assoc"], t["n_non"], t["test"]) == (4, 4, "welch")
    assert xfakt_ttest([0], [1, 0])["t"] is None
    assert xfakt_ttest([1, 1], [0, 0])["reason"] == "no variance in either group"


@pytest.mark.parametrize("seed", range(6))
def test_xfakt_ttest_is_scipys_welch_test(seed):
    import warnings

    from scipy import stats

    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, rng.integers(2, 40)).astype(float)  # X-FaKT errors are 0/1 per query
    b = rng.random(rng.integers(2, 400)) if seed % 2 else rng.integers(0, 2, rng.integers(2, 40)).astype(float)
    if seed == 4:
        a = np.zeros(5)  # one constant group: variance 0, the statistic still defined
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = stats.ttest_ind(a, b, equal_var=False)
    got = xfakt_ttest(list(a), list(b))
    assert got["t"] == pytest.approx(float(expected.statistic), rel=1e-9)
    assert got["p"] == pytest.approx(float(expected.pvalue), rel=1e-9, abs=1e-15)


def test_the_bootstrap_in_blocks_of_4_byte_draws_gives_the_whole_matrix_interval(monkeypatch):
    """``stratified_bootstrap`` draws 4-byte indexes and draws and sums them a block of resamples at a time
    (its memory is a block, not the whole int64 draw matrix and its gather): the interval is that of the
    whole matrix, bit for bit, odd strata included (seen red with each block drawn from a generator of its
    own)."""
    def whole(strata, statistic, n_boot, seed):
        rng = np.random.default_rng(seed)
        sums = np.array([v[rng.integers(0, len(v), size=(n_boot, len(v)))].sum(axis=1) for v in strata])
        stats = statistic(sums, np.array([len(v) for v in strata], dtype=np.float64)[:, None])
        return tuple(float(x) for x in np.percentile(stats, [2.5, 97.5]))

    from factatlas.probe import metrics as M

    rng = np.random.default_rng(1)
    strata = [rng.random(n) for n in (5, 301, 17, 1200)]
    monkeypatch.setattr(M, "BOOTSTRAP_BLOCK", 7)  # blocks of one to a few resamples
    for statistic in (M.macro_statistic, M.micro_statistic):
        for seed in (0, 3):
            assert M.stratified_bootstrap(strata, statistic, 300, 0.95, seed) == whole(strata, statistic, 300, seed)
