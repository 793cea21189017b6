"""Popularity buckets and accuracy vs popularity (PopQA) on a hand-checked case."""

from __future__ import annotations

import pytest

from factatlas.popbuckets import log_bin, log_bin_label, popularity_buckets, quantile_of
from factatlas.probe.analysis import popularity as Pop
from factatlas.records import Fact, GoldObject, ObjectRef, ScoredPrompt


def fact(fid: str, predicate: str, popularity: float) -> Fact:
    return Fact(fid, predicate, fid.split(":")[2], (ObjectRef("Q9"),), fid.split(":")[0], (), popularity, 1)


def test_log_bins_follow_powers_of_ten():
    assert [log_bin(x) for x in (0, 0.5, 1, 9.99, 10, 999, 1000, 123456)] == [-1, -1, 0, 0, 1, 2, 3, 5]
    assert (log_bin_label(-1), log_bin_label(0), log_bin_label(3)) == ("<1", "10^0–10^1", "10^3–10^4")


def test_quantiles_within_the_predicate_ties_share_a_bucket():
    ordered = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    assert [quantile_of(v, ordered) for v in ordered] == [1, 1, 2, 2, 3, 3, 4, 4]
    assert [quantile_of(v, [5.0, 5.0, 5.0, 9.0]) for v in (5.0, 9.0)] == [1, 4]
    facts = [fact("a:P1:Q1", "P1", 10), fact("a:P1:Q2", "P1", 20), fact("b:P1:Q3", "P1", 30),
             fact("b:P1:Q4", "P1", 40), fact("a:P2:Q5", "P2", 5000)]
    b = popularity_buckets(facts)
    assert [b[f.id].quantile for f in facts] == [1, 2, 3, 4, 1]  # P2 alone: its own bottom
    assert [b[f.id].log10 for f in facts] == [1, 1, 1, 1, 3]


# fact -> popularity; (fact, lang) -> correctness of its two templates
FACTS = [fact("a:P1:Q1", "P1", 10), fact("a:P1:Q2", "P1", 200), fact("b:P1:Q3", "P1", 3000),
         fact("b:P1:Q4", "P1", 40000)]
OUTCOMES = {("a:P1:Q1", "en"): (False, False), ("a:P1:Q2", "en"): (True, False),
            ("b:P1:Q3", "en"): (False, True), ("b:P1:Q4", "en"): (True, True),
            ("a:P1:Q1", "ar"): (True, True), ("a:P1:Q2", "ar"): (False, False),
            ("b:P1:Q3", "ar"): (True, False), ("b:P1:Q4", "ar"): (False, False)}


def scored() -> list[ScoredPrompt]:
    return [ScoredPrompt("m", f"{fid}|{lang}|t{t}", fid, lang, f"t{t}", fid.split(":")[0], "P1", (GoldObject("Q9"),),
                         ("Q9", "Q8") if right else ("Q8", "Q9"), 1 if right else 2)
            for (fid, lang), outcomes in OUTCOMES.items() for t, right in enumerate(outcomes, start=1)]


def test_fact_values_are_the_mean_over_templates():
    assert Pop.fact_values([s for s in scored() if s.lang == "en"]) == {
        "a:P1:Q1": 0.0, "a:P1:Q2": 0.5, "b:P1:Q3": 0.5, "b:P1:Q4": 1.0}


def test_spearman_hand_checked():
    got = {(c.culture, c.lang): c for c in Pop.correlations({"m": scored()}, {f.id: f.popularity for f in FACTS})}
    # en: popularity ranks 1 2 3 4, P@1 0, .5, .5, 1 (ranks 1, 2.5, 2.5, 4): rho = 0.9486832980505138
    assert got[("all", "en")].rho == pytest.approx(0.9486832980505138)
    assert got[("all", "en")].n_facts == 4
    # ar: P@1 1, 0, .5, 0 (ranks 4, 1.5, 3, 1.5): rho = -0.6324555320336759
    assert got[("all", "ar")].rho == pytest.approx(-0.6324555320336759)
    # culture a alone has two facts: undefined
    assert (got[("a", "en")].rho, got[("a", "en")].p) == (None, None)


def test_bucket_table_hand_checked():
    buckets = popularity_buckets(FACTS)
    cells = {(c.culture, c.lang, c.kind, c.bucket): c.acc for c in Pop.bucket_table({"m": scored()}, buckets)}
    assert cells[("all", "en", "quantile", 1)].micro == 0.0  # Q1 (10 views)
    assert cells[("all", "en", "quantile", 4)].micro == 1.0  # Q4
    assert cells[("all", "all", "quantile", 2)].micro == 0.25  # Q2: en .5, ar 0
    assert cells[("all", "all", "log10", 4)].n_facts == 1 and cells[("all", "all", "log10", 4)].micro == 0.5
    assert {k[3] for k in cells if k[2] == "log10"} == {1, 2, 3, 4}


def test_section_writes_a_plot_and_tables(tmp_path):
    from factatlas.probe.analysis.page import write_page
    from factatlas.probe.analysis.sections import popularity_sections

    (section,) = popularity_sections({"m": scored()}, FACTS)
    assert [t.name for t in section.tables] == ["popularity_buckets", "popularity_spearman"]
    assert [f.name for f in section.plots] == ["popularity_m.png"] and list(tmp_path.iterdir()) == []
    write_page(tmp_path, "p", "t", "s", [section])
    assert (tmp_path / "popularity_m.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("xs, ys", [
    ([10, 200, 3000, 40000], [0.0, 0.5, 0.5, 1.0]),
    ([1, 1, 2, 3, 3, 3, 7], [0.2, 0.1, 0.1, 0.9, 0.0, 0.4, 0.4]),
    ([5, 4, 3, 2, 1], [1, 2, 3, 4, 5]),  # rho = -1: p = 0
    ([3.5, 1.0, 2.0, 2.0, 9.0, 0.5, 4.0, 4.0, 4.0, 8.0], [1, 0, 0, 1, 1, 0, 0.5, 0.5, 0, 1]),
])
def test_spearman_is_scipys(xs, ys):
    stats = pytest.importorskip("scipy.stats")
    expected = stats.spearmanr(xs, ys)
    rho, p = Pop.spearman(xs, ys)
    assert rho == float(expected.statistic)  # the same arithmetic: equal to the last digit
    assert p == pytest.approx(float(expected.pvalue), rel=1e-9, abs=1e-15)


def test_average_ranks_share_ties():
    assert Pop.average_ranks([30, 10, 20, 10, 30, 30]).tolist() == [5.0, 1.5, 3.0, 1.5, 5.0, 5.0]
