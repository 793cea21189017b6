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



@pytest.mark.slow  # child processes
def test_a_shell_runs_the_command_server_shim_as_the_command_with_its_output_in_order(tmp_path):
    import os
    import subprocess

    from tests.children import CommandServer

    script = ("set -u\necho one\nfactatlas --version\necho two\nfactatlas build runs/none --langs ar,en\n"
              "echo \"rc=$?\"\ncd sub && factatlas curate runs/r --pair arab-west --langs ar,en "
              "--predicates P36 > curate.out\necho \"rc=$?\"\n")
    (tmp_path / "sub").mkdir()
    with CommandServer(("factatlas.app.cli",)) as commands:
        env = {**os.environ, "PATH": f"{commands.bin}{os.pathsep}{os.environ['PATH']}", CRASH_ENV: "stage:complete"}
        done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
    lines = done.stdout.splitlines()
    # the commands wrote into the shell's own stdout, between its echos, in order
    assert lines[:3] == ["one", "factatlas 0.1.0", "two"] and lines[3] == "rc=2", done.stdout
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr
    # the shell's folder and environment: the crash point killed the curate for real (137 = 128 + SIGKILL)
    assert lines[4] == f"rc={128 + signal.SIGKILL}", done.stdout + done.stderr
    run = tmp_path / "sub" / "runs" / "r"
    assert [p.name for p in run.iterdir() if p.name.startswith(TMP_PREFIX)], "the kill left no staging folder"
