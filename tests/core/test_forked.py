"""``factatlas.forked.run_forked``: the work runs in a child whose memory ends with it, and the caller sees what
an in-process call would give: the result, the error, the output, the timed sections, and no orphan."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from factatlas import forked
from factatlas.errors import WriteFailed
from factatlas.stopwatch import Stopwatch, recording, section

pytestmark = pytest.mark.skipif(forked.fork_refused() is not None, reason="this platform does not fork the work")

REPO = Path(__file__).resolve().parents[2]


def test_the_result_comes_back_from_another_process():
    done = forked.run_forked(lambda: {"pid": os.getpid(), "values": (1, 2.5, "ü", None)}, "the test's work")
    assert done.where == forked.IN_CHILD
    assert done.value["pid"] != os.getpid()
    assert done.value["values"] == (1, 2.5, "ü", None)  # pickled, not JSON: a tuple stays a tuple


def test_turned_off_the_work_runs_here_and_says_so(monkeypatch):
    monkeypatch.setattr(forked, "FORK", False)
    done = forked.run_forked(os.getpid, "the test's work")
    assert done.value == os.getpid()
    assert done.where == "in this process: forking turned off (factatlas.forked.FORK)"


def peak_rss_reset() -> bool:
    """Reset this process's peak RSS (VmHWM) to its current RSS; False where the kernel does not let it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc/self/status")


def many_small_objects() -> int:
    """About 300 MB of small tuples (the small-object heap, as the metrics' records), freed before returning."""
    held = [(i, float(i), str(i)) for i in range(1_500_000)]
    return len(held)


def test_the_child_s_memory_is_not_the_parent_s():
    """The parent's peak does not see the child's 300 MB (seen red with FORK off: the peak rose by them)."""
    if not peak_rss_reset():
        pytest.skip("/proc/self/clear_refs cannot reset the peak here")
    before = peak_rss_mb()
    assert forked.run_forked(many_small_objects, "the test's work").value == 1_500_000
    assert peak_rss_mb() - before < 40


def test_an_error_raised_by_the_work_is_raised_here_with_its_type_and_message():
    def fails():
        raise KeyError("Q42")

    with pytest.raises(KeyError, match="Q42") as raised:
        forked.run_forked(fails, "the test's work")
    assert any("raised in the child process computing the test's work" in note for note in raised.value.__notes__)


def test_an_error_that_does_not_unpickle_keeps_its_message():
    """WriteFailed's __init__ takes other arguments than its args: it pickles but cannot be rebuilt."""
    def fails():
        raise WriteFailed("/out/metrics.json", "write the metrics", OSError(28, "No space left on device"))

    with pytest.raises(forked.ChildFailed) as raised:
        forked.run_forked(fails, "the test's work")
    assert str(raised.value).startswith("the test's work: /out/metrics.json: cannot write the metrics (No space left")


def test_a_result_that_does_not_pickle_is_an_error_naming_the_work():
    with pytest.raises(TypeError, match="the result could not be sent back"):
        forked.run_forked(lambda: (lambda: None), "the test's work")


def test_a_child_killed_before_its_result_is_an_error_naming_the_work_and_the_signal():
    with pytest.raises(forked.ChildFailed, match=r"^the test's work: the child process computing it was killed "
                       r"by signal 9 \(SIGKILL\) before sending a result; out of memory\?"):
        forked.run_forked(lambda: os.kill(os.getpid(), signal.SIGKILL), "the test's work")


def test_a_result_cut_short_is_an_error_naming_the_work_not_a_traceback():
    """A child killed while it wrote its result leaves a part of the pickle: the same error, not an
    UnpicklingError from deep in the report."""
    import pickle

    whole = pickle.dumps({"value": list(range(1000))})
    killed = signal.SIGKILL  # a wait status of a process killed by signal 9
    with pytest.raises(forked.ChildFailed, match="^the metrics: the child process computing it was killed by "
                                                 r"signal 9 \(SIGKILL\) before sending all of its result; out of"):
        forked.received(whole[: len(whole) // 2], killed, "the metrics")
    assert forked.received(whole, 0, "the metrics") == {"value": list(range(1000))}


def test_what_the_work_prints_to_a_captured_stream_is_printed_here(capsys):
    """pytest's capture has no file of its own, so the child's writes would be lost with its copy of it."""
    def prints() -> int:
        print("to stdout")
        print("to stderr", file=sys.stderr)
        return 3

    assert forked.run_forked(prints, "the test's work").value == 3
    out, err = capsys.readouterr()
    assert (out, err) == ("to stdout\n", "to stderr\n")


def burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_the_child_s_sections_and_cpu_are_counted_in_the_recording():
    """A section around the call counts the child's CPU (this process's clock does not), the child's own
    sections are merged in, and the process total includes it (seen red without the child's CPU added)."""
    def work() -> None:
        with section("stage/in the child"):
            burn(0.3)

    watch = Stopwatch()
    with recording(watch), section("stage"):
        forked.run_forked(work, "the test's work")
    wall, cpu = watch.sections["stage"]
    assert cpu >= 0.3 and wall >= 0.3
    assert watch.sections["stage/in the child"][1] >= 0.3
    assert watch.child_cpu >= 0.3
    assert list(watch.sections) == ["stage", "stage/in the child"]


CHILD_OF_A_KILLED_PARENT = textwrap.dedent("""
    import os, sys, time
    from factatlas import forked

    def work():
        with open(sys.argv[1], "w") as f:
            f.write(str(os.getpid()))
        time.sleep(60)

    forked.run_forked(work, "the test's work")
""")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("kill", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_no_child_outlives_its_killed_parent(tmp_path, kill):
    """A report killed (or interrupted) while its metrics run leaves no child computing them (seen red for
    SIGKILL and SIGTERM without the parent-death signal)."""
    pid_file = tmp_path / "child.pid"
    parent = subprocess.Popen([sys.executable, "-c", CHILD_OF_A_KILLED_PARENT, str(pid_file)], cwd=REPO,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text()):
            assert time.monotonic() < deadline and parent.poll() is None, "the child never started"
            time.sleep(0.02)
        child = int(pid_file.read_text())
        assert alive(child)
        parent.send_signal(kill)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 10
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not alive(child)
    finally:
        parent.kill()
        parent.wait()
