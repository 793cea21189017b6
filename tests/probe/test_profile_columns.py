"""The dataset profile and the answers' display labels, counted over columns a row group at a time (issue 41
item 3): exact values on a benchmark broken on purpose and written in row groups of three rows, so that every
check carries its state across row groups; the labels against the rule they document, applied to records."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from factatlas.benchmark import Benchmark
from factatlas.probe.profile import dataset_profile
from factatlas.tables import PROMPTS_SCHEMA
from tests.probe.test_report_fixtures import COUNTRIES, LEAKY, entities, prompt_rows, write_benchmark_dir

GROUP_ROWS = 3


def rewrite(folder, rows) -> None:
    path = folder / "prompts.parquet"
    table = pa.Table.from_pylist(sorted(rows, key=lambda r: r["prompt_id"]), schema=PROMPTS_SCHEMA)
    pq.write_table(table, path, row_group_size=GROUP_ROWS, compression="zstd", store_schema=True)
    assert pq.ParquetFile(path).num_row_groups > 20


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    rows = prompt_rows(COUNTRIES + LEAKY)
    folder = write_benchmark_dir(tmp_path_factory.mktemp("broken") / "build", rows, entities(COUNTRIES + LEAKY))
    out = []
    for r in rows:
        if r["fact_id"] == "arab:P36:Q79" and r["lang"] == "ar":
            continue  # Egypt's capital never asked in Arabic
        if r["prompt_id"] == "west:P36:Q142|en|P36/2":  # one of France's lists a candidate short
            r = dict(r, candidate_qids=r["candidate_qids"][1:], candidate_forms=r["candidate_forms"][1:])
        if r["fact_id"] == "west:P37:Q38" and r["lang"] == "en":  # a second gold, outside the candidates
            r = dict(r, gold_qids=[*r["gold_qids"], "Q999"], gold_forms=[*r["gold_forms"], ["Atlantis"]])
        if r["fact_id"] == "west:P37:Q29" and r["lang"] == "ar":  # no gold among the candidates; no label for it:
            r = dict(r, gold_qids=["Q998"], gold_forms=[["إسبانيا"]])  # its slot filler is the subject's label
        out.append(r)
    rewrite(folder, out)
    return folder, out


def test_the_profile_of_a_broken_benchmark_counts_each_problem_across_row_groups(broken):
    folder, rows = broken
    profile = dataset_profile(Benchmark.open(folder))
    assert (profile["n_prompts"], profile["n_facts"]) == (len(rows), 30)
    assert profile["templates"] == {"ar": ["P36/1", "P36/2", "P37/1"], "en": ["P36/1", "P36/2", "P37/1"]}
    assert profile["parallel"] == {
        "groups": 30, "missing_language": 1, "candidate_mismatch": 1, "gold_mismatch": 2,
        "examples": ["arab:P36:Q79: languages ['en'] instead of ['ar', 'en']",
                     "west:P36:Q142: candidate QIDs differ between languages",
                     "west:P37:Q29: gold QIDs differ between languages",
                     "west:P37:Q38: gold QIDs differ between languages"]}
    assert profile["gold_in_candidates"] == {
        "gold_outside": 2, "prompts_without_gold": 1,
        "examples": ["west:P37:Q29|ar|P37/1: Q998 not among the candidates",
                     "west:P37:Q38|en|P37/1: Q999 not among the candidates"]}
    leakage = profile["leakage"]
    # Tunisia and the three LEAKY capitals in both languages; Spain in Arabic through its gold's slot filler
    assert leakage["by_lang"] == {"ar": {"n": 5, "units": 29, "share": 5 / 29},
                                  "en": {"n": 4, "units": 30, "share": 4 / 30}}
    assert (leakage["n"], leakage["units"]) == (9, 59)
    assert leakage["examples"] == [  # the first five units to leak, in prompt_id order
        "ar: subject 'الكويت' contains the answer (الكويت)", "en: subject 'Kuwait' contains the answer (Kuwait)",
        "ar: subject 'تونس' contains the answer (تونس)", "en: subject 'Tunisia' contains the answer (Tunis)",
        "ar: subject 'جيبوتي' contains the answer (جيبوتي)"]
    p36 = profile["predicates"]["P36"]
    assert p36["mean_candidates"] == pytest.approx((15 * 15 * 4 - 15 * 2 - 1) / (15 * 4 - 2))


def reference_labels(bench: Benchmark) -> dict[tuple[str, str], str]:
    """The rule ``Benchmark.answer_labels`` documents, applied to every prompt as a record."""
    labels = dict(bench.labels)
    answers: set[str] = set()
    for batch in bench.iter_prompts():
        for p in batch:
            labels.setdefault((p.subject_qid, p.lang), p.subject_label)
            for qid, form in zip(p.candidate_qids, p.candidate_forms, strict=False):
                labels.setdefault((qid, p.lang), form)
            answers.update(p.candidate_qids, p.gold_qids)
    return {key: label for key, label in labels.items() if key[0] in answers}


def test_answer_labels_take_labels_parquet_then_the_first_prompt_s_subject_then_its_forms(broken, tmp_path):
    import shutil

    source, rows = broken
    folder = tmp_path / "build"
    shutil.copytree(source, folder)
    labels = pq.read_table(folder / "labels.parquet")
    gone = pc.and_(pc.is_in(labels.column("qid"), pa.array(["Q85", "Q90", "Q3551"])),
                   pc.equal(labels.column("lang"), "en"))
    pq.write_table(labels.filter(pc.invert(gone)), folder / "labels.parquet")
    first_en = min(i for i, r in enumerate(rows) if r["lang"] == "en")
    changed = list(rows)
    # the first English row: Cairo as its subject (before it is anyone's candidate), its last form missing
    changed[first_en] = dict(rows[first_en], subject_qid="Q85", subject_label="Cairo, the subject",
                             candidate_forms=rows[first_en]["candidate_forms"][:-1])
    changed[-1] = dict(rows[-1], candidate_forms=["Paris, late"] * len(rows[-1]["candidate_forms"]))
    rewrite(folder, changed)
    bench = Benchmark.open(folder)
    got = bench.answer_labels
    assert got == reference_labels(Benchmark.open(folder))
    assert got[("Q85", "en")] == "Cairo, the subject"  # a subject's label comes before the row's candidates
    assert got[("Q90", "en")] == "Paris"  # the first row that offers it, not a later one
    assert got[("Q3551", "en")] == "Rabat"
    assert got[("Q85", "ar")] == "القاهرة"  # labels.parquet first
    assert ("Q79", "en") not in got and ("Q998", "ar") not in got  # a subject only; a gold no one labels
    assert bench.label("Q998", ["ar"]) == "Q998" and bench.label("Q3551", ["ar"]) == "الرباط"


def test_the_profile_of_a_whole_benchmark_in_one_row_group_is_exact(tmp_path):
    """Every leaking (fact, language) named once, several in one row group; each predicate's majority baseline
    per culture, its imbalance and entropies (hand-checked: P37's majority is Arabic, every arab fact's answer)."""
    folder = write_benchmark_dir(tmp_path / "build", prompt_rows(COUNTRIES + LEAKY), entities(COUNTRIES + LEAKY))
    assert pq.ParquetFile(folder / "prompts.parquet").num_row_groups == 1
    profile = dataset_profile(Benchmark.open(folder), max_examples=10)
    assert [e.split(" contains")[0] for e in profile["leakage"]["examples"]] == [
        "ar: subject 'الكويت'", "en: subject 'Kuwait'", "ar: subject 'تونس'", "en: subject 'Tunisia'",
        "ar: subject 'جيبوتي'", "en: subject 'Djibouti'", "ar: subject 'لوكسمبورغ'", "en: subject 'Luxembourg'"]
    p37 = profile["predicates"]["P37"]
    assert p37 == {"facts": {"arab": 8, "west": 7}, "entropy": {"arab": 0.0, "west": pytest.approx(2.5216406363)},
                   "majority": {"qid": "Q13955", "label": "Arabic", "p@1": 8 / 15, "tied": 1,
                                "by_culture": {"arab": 1.0, "west": 0.0}},
                   "mean_candidates": 7.0, "imbalance": 8 / 7}
    p36 = profile["predicates"]["P36"]
    assert (p36["majority"]["by_culture"], p36["majority"]["tied"]) == ({"arab": 0.0, "west": 1 / 7}, 15)
    assert profile["balance"] == {"facts_per_culture": {"arab": 16, "west": 14}, "ratio": 16 / 14}
    # one west country: a culture with a single fact of a predicate still has an imbalance (3 / 1)
    few = [c for c in COUNTRIES if c[0] == "arab"][:3] + [c for c in COUNTRIES if c[0] == "west"][:1]
    small = write_benchmark_dir(tmp_path / "small", prompt_rows(few), entities(few))
    assert dataset_profile(Benchmark.open(small))["predicates"]["P36"]["imbalance"] == 3.0


def test_distinct_numbers_every_combination_of_codes_apart():
    """Rows are one combination only when every code agrees: (0, 1) and (1, 0) are two (``distinct_rows``: the
    leakage and gold checks run once per combination)."""
    import numpy as np

    from factatlas.prompt_tables import distinct_rows

    combo, first = distinct_rows(np.array([0, 1, 2, 0, 1]), np.array([2, 0, 1, 1, 0]))
    assert combo.tolist() == [0, 1, 2, 3, 1] and first.tolist() == [0, 1, 2, 3]


def test_column_codes_number_values_by_first_appearance_and_a_null_after_them():
    from factatlas.prompt_tables import column_codes

    for column in (pa.array(["b", None, "a", "b", None]), pa.chunked_array([["b", None], ["a", "b", None]])):
        codes, values = column_codes(column)
        assert codes.tolist() == [0, 2, 1, 0, 2] and values.to_pylist() == ["b", "a", None]
    codes, values = column_codes(pa.array(["x", "y", "x"]))
    assert codes.tolist() == [0, 1, 0] and values.to_pylist() == ["x", "y"]
