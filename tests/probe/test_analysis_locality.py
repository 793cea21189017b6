"""Knowledge locality and transfer (ECLeKTic) on a hand-checked case."""

from __future__ import annotations

import pytest

from factatlas.probe.analysis import locality as L
from factatlas.records import Fact, GoldObject, ObjectRef, ScoredPrompt

# fact -> (predicate, article editions, culture's editions among them)
FACTS = {
    "arab:P19:Q1": ("P19", ("ar", "en"), ("ar",)),
    "arab:P19:Q2": ("P19", ("ar",), ("ar",)),
    "arab:P36:Q3": ("P36", ("ar",), ("ar",)),
    "west:P36:Q4": ("P36", ("en", "sw"), ("en",)),
    "asia:P36:Q5": ("P36", ("en",), ()),  # no article in the culture's editions: local nowhere
}
# (fact, lang) -> correctness of templates 1 and 2
OUTCOMES = {
    ("arab:P19:Q1", "ar"): (True, True), ("arab:P19:Q1", "en"): (True, False), ("arab:P19:Q1", "sw"): (False, False),
    ("arab:P19:Q2", "ar"): (True, True), ("arab:P19:Q2", "en"): (True, False),
    ("arab:P36:Q3", "ar"): (True, False), ("arab:P36:Q3", "en"): (True, True),
    ("west:P36:Q4", "ar"): (True, True), ("west:P36:Q4", "en"): (True, True), ("west:P36:Q4", "sw"): (False, True),
    ("asia:P36:Q5", "ar"): (True, True), ("asia:P36:Q5", "en"): (False, False),
}


def facts() -> list[Fact]:
    return [Fact(fid, p, fid.split(":")[2], (ObjectRef("Q9"),), fid.split(":")[0], (), 1.0, 1, arts, home)
            for fid, (p, arts, home) in FACTS.items()]


def scored() -> list[ScoredPrompt]:
    out = []
    for (fid, lang), outcomes in OUTCOMES.items():
        for t, right in enumerate(outcomes, start=1):
            out.append(ScoredPrompt("m", f"{fid}|{lang}|t{t}", fid, lang, f"t{t}", fid.split(":")[0],
                                    FACTS[fid][0], (GoldObject("Q9"),), ("Q9", "Q8") if right else ("Q8", "Q9"),
                                    1 if right else 2))
    return out


def test_local_view_is_culture_article_without_the_probe_language_article():
    where = L.localities(facts())
    local = {(s.fact_id, s.lang) for s in L.local_view(scored(), where)}
    # Q2, Q3: article in ar only, asked in en; Q1: no sw article; Q4: home en, asked in ar
    assert local == {("arab:P19:Q2", "en"), ("arab:P36:Q3", "en"), ("arab:P19:Q1", "sw"), ("west:P36:Q4", "ar")}


def test_local_table_counts_and_p_at_1():
    cells = {c.lang: c for c in L.local_table({"m": scored()}, L.localities(facts()))}
    en = cells["en"]
    # local in en: Q2 (1/2) and Q3 (2/2) -> micro 0.75; with the article in en: Q1 (1/2), Q4 (2/2), Q5 (0/2)
    assert (en.local.n_facts, en.local.micro) == (2, 0.75)
    assert (en.with_article.n_facts, en.with_article.micro) == (3, 0.5)
    assert (cells["sw"].local.n_facts, cells["sw"].local.micro) == (1, 0.0)
    assert cells["ar"].local.micro == 1.0 and cells["ar"].with_article.n_facts == 3


def test_transfer_scores_hand_checked():
    got = {(t.source, t.target): t for t in L.transfer_scores("m", scored(), L.localities(facts()), n_boot=200)}
    # ar -> en: Q2, Q3 have the article in ar only; Q2 is known in ar (both right), Q3 is not (one wrong);
    # Q2 in en: 1 of 2 templates right
    t = got[("ar", "en")]
    assert (t.n_facts, t.n_known, t.transfer) == (2, 1, 0.5)
    assert t.ci_low == t.ci_high == 0.5  # one fact: every resample is that fact
    # en -> ar: Q4 and Q5 (en, no ar); Q4 known in en and right in ar on both templates, Q5 not known
    assert (got[("en", "ar")].n_facts, got[("en", "ar")].n_known, got[("en", "ar")].transfer) == (2, 1, 1.0)
    # ar -> sw: Q1 (ar, no sw; Q2 and Q3 are not asked in sw), known in ar, wrong in sw
    assert (got[("ar", "sw")].n_facts, got[("ar", "sw")].transfer) == (1, 0.0)
    # en -> sw: Q1 has an en article and none in sw; Q1 is not known in en (one template wrong)
    assert (got[("en", "sw")].n_facts, got[("en", "sw")].n_known, got[("en", "sw")].transfer) == (1, 0, None)
    # sw -> *: Q4 has sw and en, not ar; not known in sw
    assert (got[("sw", "ar")].n_facts, got[("sw", "ar")].n_known) == (1, 0)
    assert (got[("sw", "en")].n_facts) == 0


def test_transfer_interval_brackets_the_value_and_is_seeded():
    where = L.localities(facts())
    many = [s for s in scored()]
    a = L.transfer_scores("m", many, where, n_boot=300, seed=1)
    b = L.transfer_scores("m", many, where, n_boot=300, seed=1)
    assert a == b
    for t in a:
        if t.transfer is not None:
            assert t.ci_low <= t.transfer <= t.ci_high


def test_transfer_matrix_rows_are_sources():
    langs, matrix = L.transfer_matrix(L.transfer_scores("m", scored(), L.localities(facts()), n_boot=50))
    assert langs == ["ar", "en", "sw"]
    assert matrix[0] == [None, 0.5, 0.0]  # ar -> ar (none), ar -> en, ar -> sw
    assert matrix[1][0] == 1.0


def test_no_curated_locality_makes_the_section_say_why(tmp_path):
    from factatlas.probe.analysis.sections import locality_sections

    bare = [Fact(f.id, f.predicate, f.subject, f.objects, f.culture, (), 1.0, 1) for f in facts()]
    (section,) = locality_sections({"m": scored()}, bare, n_boot=10)
    assert section.unavailable and "article_langs" in section.unavailable[0]


@pytest.mark.parametrize("lang,site", [("en", "en"), ("zh-hans", "zh"), ("pt-br", "pt"), ("be-tarask", "be-tarask")])
def test_wikipedia_site(lang, site):
    from factatlas.records import wikipedia_site

    assert wikipedia_site(lang) == site


def test_transfer_is_micro_over_the_known_facts():
    """Three facts with their article in ar alone, all known in ar; in en P19's two facts give 1 and 0, P36's one
    gives 1: transfer ar -> en is the micro P@1 2/3 (the macro would be (1/2 + 1) / 2)."""
    table = {"arab:P19:Q1": ("P19", True), "arab:P19:Q2": ("P19", False), "arab:P36:Q3": ("P36", True)}
    facts = [Fact(fid, p, fid.split(":")[2], (ObjectRef("Q9"),), "arab", (), 1.0, 1, ("ar",), ("ar",))
             for fid, (p, _) in table.items()]
    scored = []
    for fid, (p, right_in_en) in table.items():
        for lang, right in (("ar", True), ("en", right_in_en)):
            scored.append(ScoredPrompt("m", f"{fid}|{lang}|t1", fid, lang, "t1", "arab", p, (GoldObject("Q9"),),
                                       ("Q9", "Q8") if right else ("Q8", "Q9"), 1 if right else 2))
    (t,) = [t for t in L.transfer_scores("m", scored, L.localities(facts), n_boot=50) if (t.source, t.target) == ("ar", "en")]
    assert (t.n_facts, t.n_known) == (3, 3)
    assert t.transfer == pytest.approx(2 / 3)
