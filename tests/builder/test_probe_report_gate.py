"""`probe` and `report` refuse a benchmark that the invariant checker rejects: exit non-zero, rule named,
nothing scored or reported (they used to exit 0 and compute numbers on it)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from factatlas.tables import PROMPTS_SCHEMA, read_rows, write_table
from tests import clirun
from tests.builder.builder_fixtures import build, write
from tests.probe.test_report_fixtures import write_run

REPO = Path(__file__).resolve().parents[2]


def factatlas(*args: object) -> subprocess.CompletedProcess:
    return clirun.factatlas(*args, env={"COLUMNS": "200"}, cwd=REPO)


def gold_outside_candidates_in(folder: Path, lang: str) -> None:
    rows = read_rows(folder / "prompts.parquet", PROMPTS_SCHEMA)
    for r in rows:
        if r["lang"] == lang and r["predicate"] == "P36":
            r["gold_qids"] = ["Q79"]  # the country, not among the capitals
    write_table(folder / "prompts.parquet", rows, PROMPTS_SCHEMA)


@pytest.mark.slow
def test_probe_exits_non_zero_on_a_rejected_benchmark(tmp_path):
    run = tmp_path / "run"
    write(build(), run / "build")
    gold_outside_candidates_in(run / "build", "en")
    res = factatlas("probe", run, "--model", "tiny-bert", "--tiny-steps", "1")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "violates the multi-parallel invariant" in res.stderr
    assert "[gold-not-in-candidates] arab:P36:Q79|en|P36/1" in res.stderr
    assert "[differs:gold_qids]" in res.stderr
    assert not (run / "probe").exists()  # refused before any model was built or scored


@pytest.mark.slow
def test_report_exits_non_zero_on_a_rejected_benchmark(tmp_path):
    run = write_run(tmp_path / "run")
    rows = read_rows(run / "build" / "prompts.parquet", PROMPTS_SCHEMA)
    write_table(run / "build" / "prompts.parquet", rows + [rows[0]], PROMPTS_SCHEMA)  # a duplicated row
    res = factatlas("report", run, "--bootstrap", "0", "--no-plots")
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"[duplicate-prompt] {rows[0]['prompt_id']}: prompt id appears more than once" in res.stderr
    assert not list((run / "probe").glob("*/report.html"))


@pytest.mark.slow
def test_report_passes_the_gate_on_a_valid_benchmark(tmp_path):
    run = write_run(tmp_path / "run")
    res = factatlas("report", run, "--bootstrap", "0", "--no-plots")
    assert res.returncode == 0, res.stdout + res.stderr
    assert list((run / "probe").glob("*/report.html"))


def test_a_folder_without_a_benchmark_is_a_config_error(tmp_path):
    from factatlas.errors import ConfigError
    from factatlas.validation import require_valid

    with pytest.raises(ConfigError, match="not a run directory"):
        require_valid(tmp_path)
    assert require_valid(write(build(), tmp_path / "run" / "build").parent) == tmp_path / "run" / "build"
