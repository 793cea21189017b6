"""Probe journeys that went wrong late or loudly (issue 42): each is refused with one `error:` line and exit 2
before any model loads or any work is done, and leaves nothing behind (no lock, no staging folder, no Ray
session folder); and `judge --model` takes the model a chat run was probed with, as docs/probe.md shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from factatlas.rundir import LOCK_NAME, RunDir
from tests.clirun import factatlas


def _left_behind(run: Path) -> list[str]:
    """What a refused command must not leave: the run lock, staging folders, model folders."""
    left = [LOCK_NAME] if (run / LOCK_NAME).exists() else []
    if (run / "probe").exists():
        left += sorted(str(p.relative_to(run)) for p in (run / "probe").rglob("*"))
    return left


def test_shots_from_a_split_the_benchmark_lacks_are_refused_before_the_model_is_built(run_dir):
    """The capitals benchmark has train and test: examples from dev cannot exist. The tiny chat model would be
    built and fine-tuned first (minutes); the refusal comes before it, from the benchmark alone."""
    done = factatlas("probe", run_dir, "--model", "tiny-chat", "--scoring", "chat", "--shots", "3",
                     "--tiny-steps", "5")  # were it built, a few steps only
    assert done.returncode == 2
    assert done.stderr.startswith("error: --shots 3: the benchmark has no 'dev' split to draw examples from "
                                  "(it has test, train)"), done.stderr
    assert done.stderr.count("\n") == 1
    assert _left_behind(run_dir) == []  # no tiny model built, no lock, no folder


@pytest.mark.parametrize(("args", "said"), [
    (["--trained-on", "dev"], "error: --trained-on dev: the benchmark has no such split (it has test, train)"),
    (["--bootstrap", "-5"], "error: --bootstrap -5: must be at least 0"),
    (["--rankc-weighting", "norm3"], "error: unknown RankC weighting 'norm3'."),
    (["--associate", "xx=arab"], "error: --associate xx=...: the benchmark has no language 'xx' (it has "),
    (["--associate", "fr=arab+arb"], "error: --associate fr=arab+arb: the benchmark has no culture 'arb' (it has "
                                     "arab, west)"),
])
def test_report_refuses_bad_values_before_any_work(run_dir, args, said):
    """On a run that reports fine (a model folder, display labels): the bad value alone is refused, with
    nothing written and no lock taken (before, `--trained-on dev` gave rc 0 and `--bootstrap -5` a traceback)."""
    import shutil

    meta_path = run_dir / "build" / "benchmark.json"
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "predicate_labels": {"P36": "capital"}}))
    shutil.copytree(Path(__file__).parent / "main_probe" / "xfactr", run_dir / "probe" / "m")
    before = _left_behind(run_dir)
    done = factatlas("report", run_dir, *args)
    assert done.returncode == 2 and done.stderr.startswith(said), done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert _left_behind(run_dir) == before and LOCK_NAME not in before


def test_an_option_of_a_backend_the_run_does_not_use_is_refused(run_dir):
    done = factatlas("probe", run_dir, "--model", "tiny", "--api-base", "http://127.0.0.1:9/v1")
    assert done.returncode == 2
    assert done.stderr == ("error: --api-base: an option of --backend openai, but this run uses --backend local and "
                           "--engine local\n")
    assert _left_behind(run_dir) == []


def test_judge_takes_the_model_a_chat_run_was_probed_with(tmp_path, capitals_rows):
    """`probe --model M --scoring chat` writes probe/M--chat (chat is no family's default); `judge --model M`
    finds it (and `judge --model M--chat` still does)."""
    from factatlas.probe.judge import JudgeConfig, judge_run
    from factatlas.tables import write_probe_results
    from tests.probe.probe_capitals import write_benchmark
    from tests.probe.test_judge import SubstringJudge, _answered

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    folder = run / "probe" / "my-chat-model--chat"
    folder.mkdir(parents=True)
    write_probe_results(folder / "rankings.parquet", _answered(capitals_rows)[1])
    (outcome,) = judge_run(run, "./my-chat-model", JudgeConfig("substr"), backend=SubstringJudge())
    assert outcome.folder == folder and outcome.summary["rows"] == 6
    (again,) = judge_run(run, "my-chat-model--chat", JudgeConfig("substr"), backend=SubstringJudge())
    assert again.folder == folder


@pytest.mark.servers
def test_ray_that_cannot_start_is_one_error_line_and_leaves_nothing(tmp_path, capitals_rows, tiny_gpt2_dir):
    """A real cause: a temp folder whose path leaves Ray's UNIX sockets over 107 bytes. The driver process
    prints one `error:` line, exits 2 and leaves no `fa-ray-*` folder, no lock and no staging folder."""
    pytest.importorskip("ray")
    from tests.probe.probe_capitals import write_benchmark

    run = tmp_path / "run"
    write_benchmark(run / "build", capitals_rows)
    # a folder of its own (two test runs on one machine once shared a fixed one), as long as before: Ray's
    # socket paths under it pass 107 bytes
    import tempfile

    deep = Path(tempfile.mkdtemp(prefix="fa-long-" + "d" * 80, dir="/tmp"))
    assert len(str(deep)) >= len("/tmp/fa-long-") + 88
    try:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "TMPDIR": str(deep)}
        done = subprocess.run([sys.executable, "-m", "factatlas", "probe", str(run), "--model", str(tiny_gpt2_dir),
                               "--scoring", "causal-sum", "--device", "cpu", "--engine", "ray", "--ray-cpus", "1",
                               "--out-name", "ray"], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 2, done.stderr[-3000:]
        assert done.stderr.startswith("error: --engine ray: the local Ray instance did not start (OSError: "), \
            done.stderr[-3000:]
        assert "AF_UNIX path length cannot exceed 107 bytes" in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert sorted(p.name for p in deep.iterdir()) == []  # no fa-ray-* session folder
        # no probe/ (nor Ray's HOME in it), no lock file (it goes with its holder), no staging folder
        assert _left_behind(run) == [] and not (run / "probe").exists()
        with RunDir(run).lock():
            pass
    finally:
        import shutil

        shutil.rmtree(deep, ignore_errors=True)
    assert json.loads((run / "build" / "benchmark.json").read_text())  # the benchmark untouched


@pytest.mark.slow  # two reports (about 5 s each here)
def test_a_report_into_a_folder_it_may_not_write_is_refused_before_it_changes_a_file(run_dir):
    """A read-only analyses/ was found after the plots had been replaced: the new xfakt.png stood beside the
    old report.html. Every folder of the model's is now tried first."""
    import hashlib
    import shutil

    from tests.filesystems import modes_enforced

    meta_path = run_dir / "build" / "benchmark.json"
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "predicate_labels": {"P36": "capital"}}))
    shutil.copytree(Path(__file__).parent / "main_probe" / "xfactr", run_dir / "probe" / "m")
    assert factatlas("report", run_dir, "--bootstrap", "0", "--no-plots").returncode == 0
    model = run_dir / "probe" / "m"
    assert (model / "analyses").is_dir()

    def files() -> dict[str, str]:
        return {str(p.relative_to(model)): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted(model.rglob("*")) if p.is_file()}

    before = files()
    os.chmod(model / "analyses", 0o555)
    try:
        with modes_enforced():
            done = factatlas("report", run_dir, "--bootstrap", "0", "--associate", "en=arab", "--no-plots")
    finally:
        os.chmod(model / "analyses", 0o755)
    assert done.returncode == 2 and done.stderr.startswith(f"error: {model / 'analyses'}: cannot write the "
                                                           "report's files into it (Permission denied)"), done.stderr
    assert files() == before and not (run_dir / LOCK_NAME).exists()


def test_a_cluster_head_address_is_parsed_and_probed():
    from factatlas.probe.distributed import head_address, head_unreachable

    assert head_address("ray://10.0.0.5:10001") == ("10.0.0.5", 10001)
    assert head_address("127.0.0.1:6379") == ("127.0.0.1", 6379)
    assert head_address("[::1]:6379") == ("::1", 6379)
    assert head_address("auto") is None and head_address("ray://head") is None
    assert head_unreachable("auto") is None
    assert head_unreachable("127.0.0.1:1").startswith("nothing answers at 127.0.0.1:1: ")


@pytest.mark.slow  # imports Ray (about 5 s)
@pytest.mark.parametrize("address", ["ray://127.0.0.1:1", "127.0.0.1:1"])
def test_a_ray_cluster_that_cannot_be_joined_is_one_error_line(run_dir, tiny_bert_dir, address):
    """`--ray-address ray://...` without ray[client] (or a cluster that is down) was a traceback from ray.init;
    a bare HOST:PORT where nothing listens waited minutes on Ray's own timeout."""
    pytest.importorskip("ray")
    started = time.monotonic()
    done = factatlas("probe", run_dir, "--model", tiny_bert_dir, "--device", "cpu", "--engine", "ray",
                     "--ray-address", address, "--out-name", "ray")
    assert done.returncode == 2, done.stderr[-2000:]
    assert time.monotonic() - started < 60, "the refusal waited on Ray's own timeout"
    assert done.stderr.startswith(f"error: --engine ray: cannot join the Ray cluster at {address} ("), done.stderr
    assert done.stderr.endswith("or drop --ray-address to start a local instance\n") and "Traceback" not in done.stderr
    assert not (run_dir / "probe" / "ray").exists()
