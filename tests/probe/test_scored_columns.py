"""The scored prompts as columns (``factatlas.probe.scored``): the records made on read are those put in,
field for field, and the views (take, where, group_rows, sorted_by, tops) give what the records give."""

from __future__ import annotations

import numpy as np

from factatlas.probe import scored as S
from factatlas.probe.scored import ScoredColumns, grouped
from factatlas.records import GoldObject, ScoredPrompt


def records() -> list[ScoredPrompt]:
    short, wide, widest = (tuple(f"Q{i}" for i in range(n)) for n in (3, 300, 40_000))
    out = []
    for k, (cands, lang, template) in enumerate([(short, "en", "t2"), (wide, "ar", "t1"), (short, "en", "t1"),
                                                 (widest, "fr", "t1"), (wide, "en", "t3")]):
        order = tuple(reversed(range(len(cands))))
        out.append(ScoredPrompt("m", f"F{k % 3}:{lang}:{template}", f"F{k % 3}", lang, template, "west" if k % 2 else "arab",
                                "P36" if k < 3 else "P17", (GoldObject("Q1"), GoldObject("Q2", "superclass")),
                                tuple(cands[i] for i in order), len(cands) - 1, "test" if k % 2 else "dev",
                                2 / len(cands), cands, order, ("Q30",), k if k % 2 else None, "Q5", "S", ""))
    # an open answer (no order), a record whose ranking names QIDs outside its candidates, a prompt id
    # that does not start with its fact, no rank
    out.append(ScoredPrompt("m", "F9:en:t1", "F9", "en", "t1", "west", "P36", (GoldObject("Q1"),), ("Q1",), 1,
                            candidates=short, prediction="Q one"))
    out.append(ScoredPrompt("m", "odd-id", "F8", "en", "t1", "west", "P36", (GoldObject("Q1"),), ("Q9", "Qx"), None,
                            chance=0.5))
    return out


def test_records_round_trip_through_the_columns_field_for_field():
    rs = records()
    cols = ScoredColumns.of(rs)
    assert list(cols) == rs and cols == rs and len(cols) == len(rs)
    assert [cols[i] for i in range(len(rs))] == rs
    assert cols._store.pos.dtype == np.int32  # 1-byte positions widened by the 300 and then the 40,000 list
    assert cols.tops() == [r.top for r in rs]
    assert cols.prompt_ids() == [r.prompt_id for r in rs]
    assert cols.rank().tolist() == [r.rank or 0 for r in rs]
    assert cols.has_order().tolist() == [bool(r.order) for r in rs]
    assert cols.ranked_any().tolist() == [bool(r.ranked) for r in rs]
    assert cols.lengths().tolist() == [len(r.ranked) for r in rs]


def test_positions_stay_one_byte_while_the_lists_fit(monkeypatch):
    short = records()[0]
    cols = ScoredColumns.of([short, short])
    assert cols._store.pos.dtype == np.uint8 and list(cols) == [short, short]


def test_views_give_what_the_records_give(monkeypatch):
    monkeypatch.setattr(S, "CHUNK", 2)  # iteration a chunk at a time
    rs = records()
    cols = ScoredColumns.of(rs)
    idx = np.array([4, 0, 2])
    assert list(cols.take(idx)) == [rs[i] for i in idx]
    assert list(cols[1:4]) == rs[1:4]
    assert list(cols.where(cols.correct())) == [r for r in rs if r.correct]
    assert list(cols.sorted_by("fact_id")) == sorted(rs, key=lambda r: r.fact_id)
    assert list(cols.sorted_by("prompt_id")) == sorted(rs, key=lambda r: r.prompt_id)
    expected: dict[tuple, list[int]] = {}
    for i, r in enumerate(rs):
        expected.setdefault((r.lang, r.culture), []).append(i)
    got = cols.group_rows("lang", "culture")
    assert list(got) == list(expected)  # keys in first-seen order
    assert {k: v.tolist() for k, v in got.items()} == expected
    # the per-prompt rules over the columns, called once per distinct combination, give the records' values
    calls: list[tuple] = []
    rule = ("lang", "top", "golds", "gold_subwords", "predicate")
    got_rule = cols.holds_each(rule, lambda *v: calls.append(v) or (v[1] is not None and v[1] in {g.qid for g in v[2]}))
    assert got_rule.tolist() == [r.top is not None and r.top in r.gold_qids for r in rs]
    assert sorted(calls, key=repr) == sorted({tuple(getattr(r, n) for n in rule) for r in rs}, key=repr)
    assert list(cols.where(cols.holds_each(("lang",), lambda lang: lang == "en"))) == [r for r in rs if r.lang == "en"]
    by_country = grouped(rs, ("countries",), lambda countries: countries)
    assert {k: list(v) for k, v in by_country.items()} == {"Q30": [r for r in rs if r.countries]}
    by_lang_kind = grouped(cols, ("lang", "gold_subwords"), lambda lang, n: [] if n is None else [(lang, n > 1), "any"])
    expected_kinds: dict = {}
    for r in rs:
        for key in ([] if r.gold_subwords is None else [(r.lang, r.gold_subwords > 1), "any"]):
            expected_kinds.setdefault(key, []).append(r)
    assert {k: list(v) for k, v in by_lang_kind.items()} == expected_kinds
    assert list(by_lang_kind) == list(expected_kinds)  # keys in first-seen order
    sub = cols.take(idx)
    assert list(sub.with_rank(np.array([1, 0, 1], dtype=np.int32)).rank()) == [1, 0, 1]
    assert list(cols.take(idx)) == [rs[i] for i in idx]  # the view it came from is unchanged
