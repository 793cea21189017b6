"""Work whose memory should end with it: a function run in a forked child process, its result sent back.

Freed memory is not the system's again. A big computation leaves CPython's small-object heap fragmented (the
report's metrics at a million prompts left 115 arenas, 120 MB resident, holding 36 MB of live objects), and
every later step's peak stacks on what it left. A forked child takes its heap with it when it ends. The parent
shares the child's pages until either writes, gets the pickled result back over a pipe, and goes on from the
memory it had before the work. The sharing is partial: Python writes reference counts and fills the free slots
of its heaps, each page written is copied, and the parent keeps its original (the report's metrics child at a
million prompts: 56-61 MB of the parent's 210, with its freed pages given back before the fork). So a child
pays off for work that grows well beyond what the parent holds, or that loads what the parent should never
hold (torch, for a tokenizer).

The child is the parent's fork, not a fresh interpreter, so nothing is imported or read again, and a function
needs no pickling. What the parent expects of a call in-process holds across the fork:
- the result, or the error the function raised (the same type and message where it pickles, else a
  ``ChildFailed`` with its text);
- what the function wrote to ``sys.stdout``/``sys.stderr`` when those are not the process's own files (a test's
  capture, an in-process CLI runner): replayed in the parent;
- the sections it timed (``factatlas.stopwatch``): merged into the parent's recording, and its CPU counted in
  every section open around the call;
- no orphan: the child is killed if the parent dies (Linux's parent-death signal), and killed and reaped if the
  parent is interrupted.

Where there is no fork (Windows) or fork is unsafe for the system's libraries (macOS), or ``FORK`` is False
(the tests that count records made in-process), the function runs in this process; the caller is told which.
"""

from __future__ import annotations

import ctypes
import io
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Generic, TypeVar

from factatlas.errors import FactatlasError
from factatlas.memory import give_back

T = TypeVar("T")

FORK = True  # tests that count records made by the work (a monkeypatched reader) set it to False
IN_CHILD = "in a child process, whose memory ended with it"
PR_SET_PDEATHSIG = 1  # linux/prctl.h


class ChildFailed(FactatlasError):
    """The child doing the work died (killed, out of memory) or raised an error that could not be sent back."""


@dataclass(frozen=True)
class Done(Generic[T]):
    """The work's result and where it was computed (``IN_CHILD``, or why in this process)."""

    value: T
    where: str


def fork_refused() -> str | None:
    """Why this process does not fork for the work, or None when it does."""
    if not FORK:
        return "in this process: forking turned off (factatlas.forked.FORK)"
    if not hasattr(os, "fork"):
        return "in this process: no fork on this platform"
    if not sys.platform.startswith("linux"):
        # macOS's system frameworks are not fork-safe once threads ran (Python's own default there is spawn)
        return f"in this process: fork is not used on {sys.platform}"
    return None


def run_forked(work: Callable[[], T], what: str) -> Done[T]:
    """``work()`` run in a forked child process and its result returned (pickled), or run here where this
    process does not fork (``fork_refused``). ``what`` names the work in errors ("the metrics of probe/en")."""
    refused = fork_refused()
    if refused is not None:
        return Done(work(), refused)
    from factatlas import stopwatch

    watch = stopwatch.active()
    for stream in (sys.stdout, sys.stderr):  # a buffer not yet written would be written twice, here and there
        if stream is not None:
            stream.flush()
    parent = os.getpid()
    read_end, write_end = os.pipe()
    # the freed pages this process holds are given back first: the child's allocations would write into them,
    # and each page written is copied while this process keeps its own (the report's metrics child at a million
    # prompts: 100-107 MB of such copies, 56-61 MB after giving back)
    give_back()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        code = 1
        try:
            os.close(read_end)
            code = _child(work, write_end, parent, watch is not None)
        finally:
            os._exit(code)
    os.close(write_end)
    reaped = False
    try:
        with os.fdopen(read_end, "rb") as pipe:
            payload = pipe.read()
        _, status, usage = os.wait4(pid, 0)
        reaped = True
    finally:
        if not reaped:  # interrupted (Ctrl-C) or failed while the child works: it must not outlive the call
            _kill_and_reap(pid)
    child_cpu = usage.ru_utime + usage.ru_stime
    try:
        sent = received(payload, status, what)
    except ChildFailed:
        if watch is not None:
            watch.add_child(child_cpu)
        raise
    if watch is not None:
        watch.add_child(child_cpu, sent["sections"], sent["collections"], sent["collector_cpu"])
    for stream, text in (("stdout", sent["stdout"]), ("stderr", sent["stderr"])):
        if text:
            getattr(sys, stream).write(text)
    if "error" in sent:
        raise _error(sent, what)
    return Done(sent["value"], IN_CHILD)


def received(payload: bytes, status: int, what: str) -> dict:
    """What the child sent, or ChildFailed naming the work and how the child ended when nothing or only a part
    of it came (killed while writing)."""
    if payload:
        try:
            return pickle.loads(payload)
        except (pickle.UnpicklingError, EOFError, ValueError):
            pass
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    raise ChildFailed(f"{what}: the child process computing it {_ended(status)} before sending "
                      + ("all of its result" if payload else "a result")
                      + ("; out of memory? Free memory, or set factatlas.forked.FORK = False to compute it in "
                         "this process" if killed else ""))


def _child(work: Callable[[], object], write_end: int, parent: int, timed: bool) -> int:
    """The child's side: run, pickle what the parent needs, write it whole; the exit code."""
    _die_with(parent)
    from factatlas import stopwatch

    captured = {name: _capture(name) for name in ("stdout", "stderr")}
    watch = stopwatch.Stopwatch()
    sent: dict[str, object] = {}
    try:
        if timed:
            with stopwatch.recording(watch):
                sent["value"] = work()
        else:
            sent["value"] = work()
    except BaseException as e:  # noqa: BLE001  (every error goes back to the parent, which raises it)
        sent["error"] = _pickled_error(e)
    sent.update(sections=watch.sections, collections=watch.collections, collector_cpu=watch.collector_cpu)
    for name, buffer in captured.items():
        getattr(sys, name).flush()
        sent[name] = buffer.getvalue() if buffer is not None else ""
    try:
        data = pickle.dumps(sent, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # noqa: BLE001  (a result that does not pickle: the parent is told which)
        sent.pop("value", None)
        sent["error"] = _pickled_error(TypeError(f"the result could not be sent back: {e}"))
        data = pickle.dumps(sent, protocol=pickle.HIGHEST_PROTOCOL)
    with os.fdopen(write_end, "wb") as pipe:
        pipe.write(data)
    return 0


def _die_with(parent: int) -> None:
    """Ask Linux to kill this child when its parent dies (a killed report leaves no metrics running), and exit
    at once if the parent already died between the fork and the request."""
    with suppress(OSError, AttributeError):  # no prctl: the parent still kills and reaps the child when interrupted
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def _capture(name: str) -> io.StringIO | None:
    """Replace ``sys.<name>`` with a buffer when it is not the process's own file (a test's capture, whose
    writes in the child would be lost); None when the child may write to the file itself."""
    stream = getattr(sys, name)
    try:
        stream.fileno()
        return None
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError and a ValueError
        buffer = io.StringIO()
        setattr(sys, name, buffer)
        return buffer


def _pickled_error(e: BaseException) -> dict[str, object]:
    try:
        pickled: bytes | None = pickle.dumps(e, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(pickled)  # an exception whose __init__ takes other arguments than its args pickles but fails here
    except Exception:  # noqa: BLE001
        pickled = None
    return {"pickled": pickled, "type": type(e).__name__, "text": str(e),
            "traceback": "".join(traceback.format_exception(e))}


def _error(sent: dict, what: str) -> BaseException:
    error = sent["error"]
    raised = pickle.loads(error["pickled"]) if error["pickled"] is not None else None
    if raised is None:
        raised = ChildFailed(f"{what}: {error['text']}" if isinstance(error["text"], str) and error["text"]
                             else f"{what}: {error['type']} in the child process")
    raised.add_note(f"raised in the child process computing {what}:\n{error['traceback']}")
    return raised


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        return f"was killed by signal {number} ({signal.Signals(number).name})"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"


def _kill_and_reap(pid: int) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with suppress(ChildProcessError):
        os.waitpid(pid, 0)
