"""compare, xfakt-context and validate-benchmark as writers of a run (issue 42, B3.2-4): one writer at a time
(the run lock), outputs written whole, a folder of other files never replaced, one --bootstrap rule, and
xfakt-context's cheap checks (tiny model names, languages) before any model loads.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.clirun import factatlas
from tests.filesystems import leftovers
from tests.probe.test_analysis_cli import _csv, scripted_run  # noqa: F401  (the module fixture)
from tests.probe.test_report_fixtures import write_run

HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from factatlas.rundir import RunDir
    with RunDir(Path(sys.argv[1])).lock():
        print("locked", flush=True)
        time.sleep(120)
""")


def error_lines(stderr: str) -> list[str]:
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if line.startswith("error: ")]


@pytest.mark.slow  # a whole compare (~3 s)
def test_bootstrap_is_one_rule_for_report_and_compare(scripted_run, tmp_path):  # noqa: F811
    report_run = write_run(tmp_path / "r" / "arab-west")
    refused = [factatlas("report", report_run, "--bootstrap", "-5"),
               factatlas("compare", scripted_run, "--bootstrap", "-5", "--out", tmp_path / "x")]
    assert [r.returncode for r in refused] == [2, 2]
    assert [error_lines(r.stderr) for r in refused] == [["error: --bootstrap -5: must be at least 0"]] * 2
    assert not (tmp_path / "x").exists() and leftovers(report_run) == []
    res = factatlas("compare", scripted_run, "--bootstrap", "0", "--split", "all", "--out", tmp_path / "c", "--no-plots")
    assert res.returncode == 0, res.stderr
    gaps = {r["model"]: r for r in _csv(tmp_path / "c" / "culture_gap.csv")}
    assert (gaps["west-expert"]["gap"], gaps["west-expert"]["CI low"], gaps["west-expert"]["resamples"]) == ("1.0", "", "0")
    assert "No interval (--bootstrap 0)." in (tmp_path / "c" / "compare.md").read_text("utf-8")


@pytest.mark.slow  # two whole compares (~5 s)
def test_compare_replaces_its_folder_whole_and_never_a_folder_of_other_files(scripted_run, tmp_path):  # noqa: F811
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "thesis.tex").write_text("mine\n")
    res = factatlas("compare", scripted_run, "--bootstrap", "10", "--out", mine)
    assert res.returncode == 2 and error_lines(res.stderr) == [
        f"error: {mine}: holds files this command did not write (it has no compare.md), and the command "
        "replaces its output folder whole; give --out a new or empty folder"]
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]
    out = tmp_path / "cmp"
    assert factatlas("compare", scripted_run, "--bootstrap", "10", "--out", out, "--no-plots").returncode == 0
    (out / "a-table-of-an-older-version.csv").write_text("stale\n")
    assert factatlas("compare", scripted_run, "--bootstrap", "10", "--out", out, "--no-plots").returncode == 0
    assert not (out / "a-table-of-an-older-version.csv").exists()  # the old page's files went with it
    assert leftovers(scripted_run) == [] and leftovers(out) == []


@pytest.mark.slow  # a child process holding the lock (~1 s)
def test_compare_and_validate_benchmark_wait_for_the_runs_writer(tmp_path):
    run = write_run(tmp_path / "arab-west")
    (run / "manifest.json").write_text(json.dumps({"run": run.name, "stages": {}}))  # a run, not a bare folder
    (run / "build" / "validated.json").unlink(missing_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        res = factatlas("compare", run, "--bootstrap", "10")
        assert res.returncode == 2
        assert f"another factatlas process (pid {holder.pid}) holds run directory {run}" in " ".join(res.stderr.split())
        assert not (run / "compare").exists()
        res = factatlas("validate-benchmark", run)
        assert res.returncode == 0, res.stderr  # the check is a reader; only its record waits for the writer
        assert "the validation record was not written: another factatlas process" in " ".join(res.stderr.split())
        assert not (run / "build" / "validated.json").exists()
    finally:
        holder.kill()
        holder.wait()
    res = factatlas("validate-benchmark", run)
    assert res.returncode == 0 and (run / "build" / "validated.json").is_file(), res.stderr


def test_a_validation_record_is_written_only_for_the_files_that_were_checked(tmp_path):
    from factatlas.errors import FactatlasError
    from factatlas.validation import RECORD_NAME, make_record, record_holds, write_record

    build = write_run(tmp_path / "arab-west") / "build"
    (build / RECORD_NAME).unlink(missing_ok=True)
    checked = make_record(build)
    shutil.copy(build / "entities.parquet", tmp_path / "e")
    (build / "entities.parquet").write_bytes((build / "entities.parquet").read_bytes() + b"\0")  # a writer, meanwhile
    with pytest.raises(FactatlasError, match="its files changed while they were checked"):
        write_record(build, checked)
    assert not (build / RECORD_NAME).exists()
    shutil.copy(tmp_path / "e", build / "entities.parquet")
    write_record(build, checked)
    assert record_holds(build)


def test_xfakt_context_checks_names_and_languages_before_any_model_loads(run_dir):
    res = factatlas("xfakt-context", run_dir, "--model", "tiny-bert", "--langs", "xx")
    assert res.returncode == 2 and error_lines(res.stderr) == [
        "error: --langs: xx not in the benchmark; it has en, fr"], res.stderr
    res = factatlas("xfakt-context", run_dir, "--model", "tiny-bert", "--context-langs", "en,xx")
    assert error_lines(res.stderr) == ["error: --context-langs: xx not in the benchmark; it has en, fr"]
    res = factatlas("xfakt-context", run_dir, "--model", "tiny-bret")
    assert res.returncode == 2 and error_lines(res.stderr) == [
        "error: --model tiny-bret: unknown tiny model; available: tiny, tiny-bert, tiny-chat, tiny-gpt2, tiny-t5"]
    res = factatlas("xfakt-context", run_dir, "--model", "tiny")
    assert res.returncode == 2 and error_lines(res.stderr) == [
        f"error: --model tiny: {run_dir}/probe/_models/tiny-bert holds no tiny model; xfakt-context uses the one "
        f"`factatlas probe` builds: run `factatlas probe {run_dir} --model tiny` first (or pass a local folder or "
        "Hub id)"]
    assert leftovers(run_dir) == [] and not (run_dir / "xfakt_context").exists()


def test_xfakt_context_finds_the_tiny_model_probe_built(run_dir, tiny_bert_dir):
    shutil.copytree(tiny_bert_dir, run_dir / "probe" / "_models" / "tiny-bert")
    res = factatlas("xfakt-context", run_dir, "--model", "tiny", "--modes", "recall", "--device", "cpu")
    assert res.returncode == 0, res.stderr
    summary = json.loads((run_dir / "xfakt_context" / "tiny" / "summary.json").read_text("utf-8"))
    assert summary["model"] == "tiny" and summary["modes"]["recall"]["prompts"] > 0
    assert leftovers(run_dir) == []


def test_validate_benchmark_says_so_when_a_writer_changed_the_files_it_read(tmp_path, monkeypatch):
    """A build swapping build/ in while validate-benchmark read it gave a false violation (the old benchmark.json
    with the new candidates); a check that read two benchmarks has no verdict."""
    import factatlas.validation as V

    build = write_run(tmp_path / "arab-west") / "build"
    real = V.check_directory

    def check_while_a_writer_writes(path):
        found = real(path)
        meta = json.loads((build / "benchmark.json").read_text("utf-8"))
        (build / "benchmark.json").write_text(json.dumps({**meta, "seed": 7}), "utf-8")  # the other process
        return found

    monkeypatch.setattr(V, "check_directory", check_while_a_writer_writes)
    (build / V.RECORD_NAME).unlink(missing_ok=True)
    res = factatlas("validate-benchmark", build)
    assert res.returncode == 2 and error_lines(res.stderr) == [
        f"error: {build}: its files changed while they were checked (another process wrote the benchmark); run "
        f"`factatlas validate-benchmark {build}` again once it has finished"]
    assert not (build / V.RECORD_NAME).exists()
