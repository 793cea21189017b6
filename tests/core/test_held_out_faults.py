"""Classes the held-out adversary run of issue 42 found (/work/worklist/s46/faults3_cases.md), one test each:
one `error:` line naming the artifact and the fix, exit 2, nothing written, no lock left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factatlas.errors import ConfigError
from factatlas.rundir import LOCK_NAME
from factatlas.yamlfile import load_located
from tests.clirun import factatlas
from tests.probe.test_report_fixtures import write_run


def error_lines(stderr: str) -> list[str]:
    assert "Traceback" not in stderr, stderr
    return [line for line in stderr.splitlines() if line.startswith("error: ")]


def test_a_yaml_key_given_twice_is_refused_where_the_second_one_is(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("name: a\nlabel: A\ncountries: [Q79]\nlabel: B\nnested:\n  x: 1\n  y: 2\n  x: 3\n", "utf-8")
    with pytest.raises(ConfigError) as e:
        load_located(path)
    assert str(e.value) == (f"{path}:4:1: duplicate key 'label' (first at line 2, column 1); YAML would keep only "
                            "the last one: remove or rename one of them")
    path.write_text("a: &x {k: 1}\nb: *x\nc: [*x, *x]\n", "utf-8")  # a node used twice by aliases is no duplicate
    assert load_located(path).data["c"] == [{"k": 1}, {"k": 1}]


def test_validate_refuses_a_culture_file_pasted_twice(tmp_path):
    culture = Path(__file__).resolve().parents[2] / "curate" / "cultures"
    text = sorted(culture.glob("*.yaml"))[0].read_text("utf-8")
    path = tmp_path / "twice.yaml"
    path.write_text(text + "\n" + text, "utf-8")
    res = factatlas("validate", path)
    assert res.returncode == 2
    (line,) = error_lines(res.stderr)
    assert line.startswith(f"error: {path}:") and "duplicate key" in line


@pytest.mark.parametrize("command", ["report", "compare"])
def test_a_probe_json_that_is_not_an_object_is_one_line_naming_it(tmp_path, command):
    run = write_run(tmp_path / "arab-west")
    (run / "probe" / "synth-model" / "probe.json").write_text("[1]", "utf-8")
    res = factatlas(command, run, "--bootstrap", "0")
    assert res.returncode == 2
    assert error_lines(res.stderr) == [
        f"error: {run}/probe/synth-model/probe.json: expected a JSON object, found list; probe the model again "
        "(`factatlas probe RUN --model ... --out-name synth-model`)"]
    assert not (run / LOCK_NAME).exists() and not (run / "compare").exists()


def test_a_manifest_whose_stage_entry_is_not_an_object_is_refused(tmp_path):
    run = write_run(tmp_path / "arab-west")
    (run / "manifest.json").write_text(json.dumps({"run": run.name, "stages": {"probe/synth-model": "x"}}), "utf-8")
    res = factatlas("report", run, "--bootstrap", "0", "--no-plots")
    assert res.returncode == 2
    assert error_lines(res.stderr) == [
        f"error: {run}/manifest.json: not a factatlas run manifest (an object with a 'stages' object of entries); "
        "move it away and run the run's stages again"]
    assert not (run / "probe" / "synth-model" / "report.html").exists()
