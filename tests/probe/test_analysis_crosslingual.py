"""RankC per language pair, COverlap, vocabulary overlap and the Pearson correlations, worked by hand."""

from __future__ import annotations

import pytest

from factatlas.probe.analysis import crosslingual as X
from tests.probe.analysis_fixture import result

Q1, Q2 = ("Qa", "Qb", "Qc"), ("Qd", "Qe", "Qf")
RANKED = {  # (query, lang) -> ranking; golds Qa and Qd
    ("f1", "en"): ("Qa", "Qb", "Qc"), ("f1", "fr"): ("Qa", "Qc", "Qb"), ("f1", "ar"): ("Qc", "Qb", "Qa"),
    ("f2", "en"): ("Qd", "Qe", "Qf"), ("f2", "fr"): ("Qe", "Qd", "Qf"), ("f2", "ar"): ("Qd", "Qe", "Qf"),
}
RESULTS = [result("A", f, lang, "west", "P1", ranked[0] in ("Qa", "Qd"), gold="Qa" if f == "f1" else "Qd",
                  candidates=Q1 if f == "f1" else Q2, ranked=ranked) for (f, lang), ranked in RANKED.items()]


def test_rankc_and_coverlap_per_pair_by_hand():
    pairs = {(p.lang_a, p.lang_b): p for p in X.pair_consistency(RESULTS, "norm1")}
    # norm1 weights for N = 3: 3/6, 2/6, 1/6. en-fr: f1 top-1 agree, top-2 share one -> .5 + 1/3 * 1/2 + 1/6
    # = 5/6; f2 top-1 differ, top-2 the same set -> 0 + 1/3 + 1/6 = 1/2; RankC = 2/3
    assert pairs[("en", "fr")].rankc == pytest.approx(2 / 3)
    # ar-en: f1 -> 1/3 * 1/2 + 1/6 = 1/3, f2 identical -> 1; ar-fr: f1 1/3, f2 1/2 -> 5/12
    assert pairs[("ar", "en")].rankc == pytest.approx(2 / 3)
    assert pairs[("ar", "fr")].rankc == pytest.approx(5 / 12)
    # correct: en [T, T], fr [T, F], ar [F, T]
    assert pairs[("en", "fr")].coverlap == 0.5
    assert pairs[("ar", "fr")].coverlap == 0.0
    assert {p.n_queries for p in pairs.values()} == {2}


def test_pearson_against_script_by_hand():
    pairs = X.pair_consistency(RESULTS, "norm1")
    traits, missing = X.language_traits(["en", "fr", "ar", "xx"])
    assert missing == ["xx"]
    assert traits["fr"] == X.LanguageTraits("fr", "Indo-European", "Romance", "Latn")
    corr = {c.feature: c for c in X.rankc_correlations(pairs, traits, None)}
    # same script: ar-en 0, ar-fr 0, en-fr 1 against RankC 2/3, 5/12, 2/3 -> r = (1/12) / sqrt(2/3 * 1/24) = .5;
    # with 1 degree of freedom t = .5 / sqrt(.75) and p = 1 - (2/pi) atan(t) = 1 - 1/3
    assert corr["same script"].r == pytest.approx(0.5)
    assert corr["same script"].p == pytest.approx(2 / 3)
    assert corr["same family"].r == pytest.approx(0.5)  # en, fr Indo-European; ar Afro-Asiatic
    assert corr["same genus"].reason == "constant over the language pairs"  # no pair shares a genus
    assert corr["COverlap"].n_pairs == 3


def test_vocabulary_overlap_is_jaccard_of_subword_ids():
    overlap = X.vocabulary_overlap({"en": ["ab"], "fr": ["bc", "b"], "ar": ["cd"]}, lambda t: [ord(c) for c in t])
    assert overlap == {("ar", "en"): 0.0, ("ar", "fr"): pytest.approx(1 / 3), ("en", "fr"): pytest.approx(1 / 3)}


def test_cached_tokenizer_batches_each_distinct_text_once():
    from factatlas.probe.analysis.records import CachedTokenizer

    batches = []

    def tokenize_batch(texts):
        batches.append(list(texts))
        return [[ord(c) for c in t] for t in texts]

    tokenize = CachedTokenizer(tokenize_batch)
    assert tokenize("ab") == (97, 98)
    texts = {"en": ["ab", "ab", "b"], "fr": ["bc", "b"], "ar": ["cd"]}
    overlap = X.vocabulary_overlap(texts, tokenize)
    assert overlap == X.vocabulary_overlap(texts, lambda t: [ord(c) for c in t])
    assert batches == [["ab"], ["b"], ["bc"], ["cd"]]  # one batch per language, texts already seen left out
    assert tokenize.many(["cd", "ab"]) == [(99, 100), (97, 98)] and len(batches) == 4


def test_the_model_tokenizer_gives_the_tokenizers_own_ids(tiny_bert_dir, tmp_path):
    """The analyses count subwords with the Rust tokenizer directly: the ids the tokenizer's own call gives."""
    import json

    from transformers import AutoTokenizer

    from factatlas.probe.analysis.records import model_tokenizer

    folder = tmp_path / "tiny-bert"
    folder.mkdir()
    (folder / "probe.json").write_text(json.dumps({"model": str(tiny_bert_dir)}), "utf-8")
    tokenize, reason = model_tokenizer(folder)
    texts = ["The capital of Morocco is [MASK].", " Rabat", "  Saint-Louis ", "عاصمة المغرب هي الرباط", ""]
    own = AutoTokenizer.from_pretrained(str(tiny_bert_dir))(texts, add_special_tokens=False)["input_ids"]
    assert reason == "" and tokenize.many(texts) == [tuple(ids) for ids in own]
    assert any(len(ids) > 1 for ids in own)


def test_correlation_needs_three_pairs():
    c = X.pearson("x", [0.0, 1.0], [0.2, 0.4])
    assert (c.r, c.reason) == (None, "2 language pairs; a correlation needs 3 or more")


def test_why_the_tokenizer_is_unknown_names_the_run_relative_file(tmp_path):
    """analyses.md and analyses.html are shared pages: they name probe/<model>/probe.json, never this machine's
    path to the run (two copies of a run gave different bytes)."""
    from factatlas.probe.analysis.records import model_tokenizer

    folder = tmp_path / "run" / "probe" / "m"
    folder.mkdir(parents=True)
    assert model_tokenizer(folder) == (None, "probe/m/probe.json: missing, so the model's tokenizer is unknown")
    (folder / "probe.json").write_text("[1]", "utf-8")
    assert model_tokenizer(folder) == (None, "probe/m/probe.json: unreadable (AttributeError), so the model's "
                                             "tokenizer is unknown")


def test_a_pair_with_no_comparable_query_counts_none_and_names_them_foreign():
    """fr ranks f1 over other candidates than en's: no query of the pair is comparable, so RankC and COverlap
    are None over 0 queries, and the query counts as foreign."""
    other = ("Qa", "Qx", "Qy")
    rows = [result("A", "f1", "en", "west", "P1", True, gold="Qa", candidates=Q1, ranked=("Qa", "Qb", "Qc")),
            result("A", "f1", "fr", "west", "P1", True, gold="Qa", candidates=other, ranked=other)]
    (pair,) = X.pair_consistency(rows, "norm1")
    assert (pair.lang_a, pair.lang_b, pair.n_queries, pair.rankc, pair.coverlap) == ("en", "fr", 0, None, None)


def test_pearson_needs_two_values_on_each_side_not_three():
    got = X.pearson("f", [0.0, 0.0, 1.0], [0.1, 0.2, 0.9])
    # deviations x (-1/3, -1/3, 2/3), y (-.3, -.2, .5): r = .5 / sqrt(2/3 * .38)
    assert not got.reason and got.r == pytest.approx(0.5 / (2 / 3 * 0.38) ** 0.5)
    assert X.pearson("f", [0.1, 0.2, 0.9], [0.0, 0.0, 1.0]).r == pytest.approx(got.r)  # symmetric
    assert X.pearson("f", [1.0, 1.0, 1.0], [0.1, 0.2, 0.9]).reason == "constant over the language pairs"


def test_the_subword_view_made_in_a_child_counts_what_the_tokenizer_counts_here(tiny_bert_dir, tmp_path):
    """The analyses' subword counts and vocabularies come from a forked child (torch stays out of the report's
    process): the join's gold subwords and every pair's overlap are those of the tokenizer loaded here (seen
    red with the second form tokenized instead of the first, and with the candidate forms left out)."""
    import json

    from factatlas.benchmark import Benchmark
    from factatlas.probe.aggregate import join
    from factatlas.probe.analysis import records as R
    from tests.builder.builder_fixtures import build, write
    from tests.core.test_read_in_proportion import cloze_rankings

    write(build(), tmp_path / "run" / "build")
    bench = Benchmark.open(tmp_path / "run" / "build")
    folder = tmp_path / "run" / "probe" / "m"
    folder.mkdir(parents=True)
    (folder / "probe.json").write_text(json.dumps({"model": str(tiny_bert_dir)}), "utf-8")
    langs = {p.lang for p in bench.prompts}
    view, note = R.subword_view(folder, bench, langs)
    tokenize, _ = R.model_tokenizer(folder)
    assert note == "" and len(langs) >= 2 and view is not None and tokenize is not None
    rows = cloze_rankings(bench)
    here = join(rows, bench.prompts_by_id, model="m", facts=bench.facts_by_id, tokenize=tokenize)
    from_child = join(rows, bench.prompts_by_id, model="m", facts=bench.facts_by_id, tokenize=view)
    assert list(from_child.scored) == list(here.scored)
    assert len({s.gold_subwords for s in here.scored}) >= 2 and None not in {s.gold_subwords for s in here.scored}
    texts = R.language_texts(bench.prompts)
    assert view.vocabularies.keys() == texts.keys() == langs
    assert X.vocabulary_overlap_of(view.vocabularies) == X.vocabulary_overlap(texts, tokenize)
    with pytest.raises(R.AnalysisError, match="' no such form' was not among the gold forms tokenized"):
        view(" no such form")
