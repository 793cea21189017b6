"""The validation record (``validated.json``) and the gate that trusts it: a build or a clean
`validate-benchmark` records the hashes of every file the check reads and of the checker itself;
``require_valid`` skips the row-by-row check only while all of them still match, and a changed file, another
checker or a missing record send it back to the whole streaming check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import factatlas.validation as validation
from factatlas.benchmark import BenchmarkError
from factatlas.tables import PROMPTS_SCHEMA, read_rows, write_table
from tests import clirun
from tests.builder.builder_fixtures import build, write


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return write(build(), tmp_path_factory.mktemp("record") / "build")


@pytest.fixture
def bench(built, tmp_path) -> Path:
    import shutil

    return Path(shutil.copytree(built, tmp_path / "build"))


@pytest.fixture
def full_checks(monkeypatch) -> list[Path]:
    """Every whole check the gate runs, by folder."""
    seen: list[Path] = []
    real = validation.check_directory

    def counted(path):
        seen.append(Path(path))
        return real(path)

    monkeypatch.setattr(validation, "check_directory", counted)
    return seen


def gold_outside_candidates(folder: Path) -> None:
    rows = read_rows(folder / "prompts.parquet", PROMPTS_SCHEMA)
    for r in rows:
        if r["lang"] == "en" and r["predicate"] == "P36":
            r["gold_qids"] = ["Q79"]  # the country, not among the capitals
    write_table(folder / "prompts.parquet", rows, PROMPTS_SCHEMA)


def test_the_build_records_what_it_checked(bench):
    record = json.loads((bench / validation.RECORD_NAME).read_text("utf-8"))
    assert record["checker"] == validation.checker_hash()
    assert sorted(record["files"]) == sorted(validation.CHECKED_FILES)
    assert "prompts.parquet" in record["files"] and "stats.json" not in record["files"]
    assert record["files"]["prompts.parquet"] == validation.file_digest(bench / "prompts.parquet")


def test_the_gate_trusts_a_matching_record_without_reading_the_rows(bench, full_checks):
    assert validation.require_valid(bench) == bench
    assert full_checks == []


def test_a_changed_file_sends_the_gate_back_to_the_whole_check(bench, full_checks):
    gold_outside_candidates(bench)
    with pytest.raises(BenchmarkError, match=r"\[gold-not-in-candidates\] arab:P36:Q79\|en\|P36/1"):
        validation.require_valid(bench)
    assert full_checks == [bench]


def test_a_record_of_the_same_size_but_another_hash_is_not_trusted(bench, full_checks):
    record = json.loads((bench / validation.RECORD_NAME).read_text("utf-8"))
    record["files"]["facts.parquet"]["sha256"] = "0" * 64
    (bench / validation.RECORD_NAME).write_text(json.dumps(record), "utf-8")
    assert validation.require_valid(bench) == bench  # the files are fine: the whole check accepts them
    assert full_checks == [bench]


@pytest.mark.parametrize("change", ["checker", "format", "missing", "garbage"])
def test_a_record_of_another_checker_or_none_is_not_trusted(bench, full_checks, change):
    path = bench / validation.RECORD_NAME
    record = json.loads(path.read_text("utf-8"))
    if change == "missing":
        path.unlink()
    elif change == "garbage":
        path.write_text("{not json", "utf-8")
    else:
        record[change] = "another" if change == "checker" else 99
        path.write_text(json.dumps(record), "utf-8")
    assert validation.require_valid(bench) == bench
    assert full_checks == [bench]


def test_validate_benchmark_records_a_clean_benchmark_and_never_a_rejected_one(bench):
    (bench / validation.RECORD_NAME).unlink()
    res = clirun.factatlas("validate-benchmark", bench)
    assert res.returncode == 0, res.stdout + res.stderr
    assert validation.record_holds(bench)
    gold_outside_candidates(bench)
    (bench / validation.RECORD_NAME).unlink()
    res = clirun.factatlas("validate-benchmark", bench)
    assert res.returncode == 1 and "[gold-not-in-candidates]" in res.stderr
    assert not (bench / validation.RECORD_NAME).exists()


@pytest.mark.parametrize("name", sorted(validation.CHECKED_FILES))
def test_validate_benchmark_names_a_missing_file_and_records_nothing(bench, name):
    """A file the record hashes, missing: the check names it (exit 1); hashing it for the record was a
    FileNotFoundError traceback (found by the damaged-inputs property test)."""
    (bench / validation.RECORD_NAME).unlink()
    (bench / name).unlink()
    res = clirun.factatlas("validate-benchmark", bench)
    assert res.returncode == 1 and "[file-missing]" in res.stderr and name in res.stderr, res.stderr
    assert not (bench / validation.RECORD_NAME).exists()
