"""X-FACTR views on hand-sized results: the single/multi-token split and the recall histogram."""

from __future__ import annotations

import pytest

from factatlas.probe.analysis import xfactr_views as V
from tests.probe.analysis_fixture import result


def test_split_by_gold_subwords():
    rs = [result("A", "f1", "en", "west", "P1", True, subwords=1),
          result("A", "f2", "en", "west", "P1", True, subwords=3),
          result("A", "f3", "en", "west", "P2", False, subwords=2),
          result("A", "f1", "fr", "west", "P1", False, subwords=1),
          result("A", "f2", "fr", "west", "P1", True, subwords=None)]
    splits, unmeasured = V.by_gold_length(rs)
    got = {(s.lang, s.gold): (s.acc.n_prompts, s.acc.micro, s.acc.macro) for s in splits}
    # en multi: f2 right (P1), f3 wrong (P2) -> micro 1/2, macro (1 + 0)/2; all single: f1 en right, fr wrong
    assert got[("en", V.MULTI)] == (2, 0.5, 0.5)
    assert got[("en", V.SINGLE)] == (1, 1.0, 1.0)
    assert got[("all", V.SINGLE)] == (2, 0.5, 0.5)
    assert got[("fr", V.SINGLE)] == (1, 0.0, 0.0)
    assert ("fr", V.MULTI) not in got and unmeasured == 1
    assert [s.lang for s in splits] == ["en", "en", "fr", "all", "all"]


def test_recall_histogram_by_hand():
    rs = [result("A", "f1", "en", "west", "P1", True), result("A", "f1", "fr", "west", "P1", True),
          # f2: en right under one of two templates (a tie counts as recalled), fr never -> 1 language
          result("A", "f2", "en", "west", "P1", True, template="T/1"),
          result("A", "f2", "en", "west", "P1", False, template="T/2"),
          result("A", "f2", "fr", "west", "P1", False),
          result("A", "f3", "en", "west", "P1", False), result("A", "f3", "fr", "west", "P1", False),
          result("A", "f4", "en", "west", "P1", True)]  # not asked in fr: left out
    h = V.recall_histogram(rs)
    assert h == V.RecallHistogram(("en", "fr"), (1, 1, 1), 1)
    assert sum(h.counts) == pytest.approx(3)
