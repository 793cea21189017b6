"""tests/children.py: a forked child is `python3 -m factatlas` with the call's arguments, environment and
folder, and a crash point kills it for real (what it staged stays behind, as after a fresh process's kill)."""

from __future__ import annotations

import signal

import pytest

from factatlas.atomic import TMP_PREFIX
from factatlas.rundir import CRASH_ENV
from tests.children import ForkServer

CURATE = ("curate", "runs/r", "--pair", "arab-west", "--langs", "ar,en", "--predicates", "P36")


@pytest.mark.slow  # child processes
def test_a_forked_child_runs_the_command_with_its_own_environment_and_folder_and_dies_for_real(tmp_path,
                                                                                             monkeypatch):
    monkeypatch.setenv(CRASH_ENV, "stage:complete")  # the test's environment; each call says what it changes
    with ForkServer(("factatlas.app.cli", "factatlas.curate.engine")) as children:
        killed = children.factatlas(*CURATE, cwd=tmp_path)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        run = tmp_path / "runs" / "r"  # relative to the call's folder
        left = [p.name for p in run.iterdir() if p.name.startswith(TMP_PREFIX)]
        assert len(left) == 1 and left[0].startswith(f"{TMP_PREFIX}curate-"), left  # no `finally` ran
        assert not (run / "curate" / "facts.parquet").exists()

        done = children.factatlas(*CURATE, cwd=tmp_path, env={CRASH_ENV: None})
        assert done.returncode == 0, done.stderr
        assert (run / "curate" / "facts.parquet").exists() and "queries sent" in done.stdout

        missing = children.factatlas("build", "runs/none", "--langs", "ar,en", cwd=tmp_path)
        assert missing.returncode == 2 and "error: " in missing.stderr and "Traceback" not in missing.stderr
        assert not (tmp_path / "runs" / "none").exists()

