"""Real child processes of `python3 -m factatlas` without an interpreter start and imports for each one.

A kill test needs a real process that a real SIGKILL ends at a crash point (`FACTATLAS_CRASH_AT`): what
the killed command leaves on disk, with no `finally`, `with` or `atexit` run, is what the test reads. A
fresh `python3 -m factatlas probe` killed after its rankings costs 4.1 CPU-s, 3.6 of them the interpreter
start and the imports of torch and transformers; a forked one 0.5 (benchmarks/killed_children.py).
`ForkServer` pays the start once: a helper process (the zygote, started with the test's environment)
imports the modules named and nothing else (it runs no command and no torch operation; the threads that
pyarrow and torch start at import are not copied by fork); then, per command, it forks a child that runs
`factatlas/__main__.py` as `python3 -m factatlas` does, with the command's arguments, environment and
working directory, stdin from /dev/null and stdout/stderr to files. The zygote waits for the child and
reports its exit status the way `subprocess` does (-9: killed by SIGKILL).

What a fork does not redo: what the interpreter and the preloaded modules read at start-up (the hash seed,
`sys.flags`, variables a library reads at import such as `HF_HUB_OFFLINE`) comes from the zygote's start;
`OMP_NUM_THREADS`, read by the OpenMP runtime when it loads, is applied with `torch.set_num_threads`. A test
of start-up itself (imports, `-X` options, the entry point) runs a fresh `python3 -m factatlas`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def start_zygote(args: list[str], env: Mapping[str, str], what: str) -> subprocess.Popen:
    """``python3 -m tests.children ARGS`` (the zygote, this checkout on its path), once it says it is ready."""
    env = {**env, "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), env.get("PYTHONPATH"))))}
    zygote = subprocess.Popen([sys.executable, "-m", "tests.children", *args], cwd=REPO, env=env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = zygote.stdout.readline()
    if ready.strip() != "ready":
        raise RuntimeError(f"{what} did not start (exit {zygote.wait()}): {ready!r}")
    return zygote


def stop_zygote(zygote: subprocess.Popen | None) -> None:
    """End the zygote: its loop ends at the end of its input (killed if it does not within 30 s)."""
    if zygote is None:
        return
    zygote.stdin.close()
    try:
        zygote.wait(timeout=30)
    except subprocess.TimeoutExpired:
        zygote.kill()
        zygote.wait()
    zygote.stdout.close()


class ForkServer:
    """``with ForkServer(preload) as children: children.factatlas(*args, env=...)``: each call a new child
    process forked from a zygote that imported ``preload`` once."""

    def __init__(self, preload: Iterable[str] = ("factatlas.app.cli",)):
        self.preload = tuple(preload)
        self._zygote: subprocess.Popen | None = None
        self._files = tempfile.TemporaryDirectory(prefix="factatlas-children-")
        self._calls = 0

    def __enter__(self) -> ForkServer:
        self._zygote = start_zygote(list(self.preload), os.environ, "the fork server")
        return self

    def __exit__(self, *exc) -> None:
        stop_zygote(self._zygote)
        self._files.cleanup()

    def factatlas(self, *args: object, env: Mapping[str, str | None] | None = None, cwd: str | Path | None = None,
                  timeout: float = 300) -> subprocess.CompletedProcess:
        """`python3 -m factatlas ARGS` in a new child; ``env`` overrides os.environ (None removes a variable)."""
        if self._zygote is None or self._zygote.poll() is not None:
            raise RuntimeError("the fork server is not running: use it inside `with ForkServer(...)`")
        self._calls += 1
        out, err = (Path(self._files.name) / f"{self._calls}.{name}" for name in ("out", "err"))
        child_env = {**os.environ}
        for key, value in (env or {}).items():
            if value is None:
                child_env.pop(key, None)
            else:
                child_env[key] = value
        argv = [str(a) for a in args]
        request = {"args": argv, "env": child_env, "cwd": str(cwd or Path.cwd()), "stdout": str(out),
                   "stderr": str(err), "timeout": timeout}
        self._zygote.stdin.write(json.dumps(request) + "\n")
        self._zygote.stdin.flush()
        reply = self._zygote.stdout.readline()
        if not reply:
            raise RuntimeError(f"the fork server died (exit {self._zygote.wait()})")
        status = json.loads(reply)
        stdout, stderr = (p.read_text("utf-8", "backslashreplace") for p in (out, err))
        if status["timed_out"]:
            raise subprocess.TimeoutExpired(["factatlas", *argv], timeout, stdout, stderr)
        return subprocess.CompletedProcess(["factatlas", *argv], status["returncode"], stdout, stderr)


def _child(request: dict) -> None:
    """In the forked child: become `python3 -m factatlas ARGS`; never returns."""
    import atexit
    import runpy

    code = 1
    try:
        if "fds" in request:  # a command's own stdin, stdout and stderr, passed over the socket
            stdin, stdout, stderr = request["fds"]
        else:
            stdin = os.open(os.devnull, os.O_RDONLY)
            stdout = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            stderr = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
            if fd > 2:
                os.close(fd)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        if "torch" in sys.modules and os.environ.get("OMP_NUM_THREADS", "").isdigit():
            sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        sys.argv = ["-m", *request["args"]]  # run_module sets argv[0] to __main__.py's path, as -m does
        code = 0
        try:
            runpy.run_module("factatlas", run_name="__main__", alter_sys=True)
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - what an uncaught exception does: a traceback, exit 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed stream has nothing left to write
                stream.flush()
        os._exit(code)


def _wait(pid: int, timeout: float) -> dict:
    import signal
    import time

    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return {"returncode": os.waitstatus_to_exitcode(status), "timed_out": False}
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return {"returncode": -signal.SIGKILL, "timed_out": True}
        time.sleep(0.005)


def serve(preload: Sequence[str]) -> None:
    """The zygote: import ``preload``, then fork one child per request line on stdin, one reply line each."""
    import importlib

    replies = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # a module that prints while importing must not write into the replies
    os.close(devnull)
    for name in preload:
        importlib.import_module(name)
    print("ready", file=replies, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            replies.close()
            _child(request)
        print(json.dumps(_wait(pid, request["timeout"])), file=replies, flush=True)
    os._exit(0)  # nothing to finalise: skips the preloaded modules' teardown at exit


SHIM = """#!{python} -S
# `factatlas ARGS` for a page run as written: a real process, forked by the zygote listening at SOCKET with
# this process's stdin, stdout, stderr, environment and folder; exits with its status.
import json, os, socket, sys
body = json.dumps({{"args": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd()}}).encode()
with socket.socket(socket.AF_UNIX) as zygote:
    zygote.connect({socket!r})
    socket.send_fds(zygote, [len(body).to_bytes(8, "big")], [0, 1, 2])
    zygote.sendall(body)
    reply = b""
    while chunk := zygote.recv(64):
        reply += chunk
code = int(reply or b"1")
sys.exit(code if code >= 0 else 128 - code)  # killed by a signal: the shell's 128 + N
"""


class CommandServer:
    """``with CommandServer(preload) as commands:`` a folder ``commands.bin`` holding a ``factatlas`` executable
    to put first on a shell's PATH: each ``factatlas ARGS`` the shell runs is a real process forked from a
    zygote that imported ``preload`` once (as `ForkServer`), with the shell's stdin, stdout, stderr (passed
    over a UNIX socket, so output interleaves with the shell's own as written), environment and folder.
    The commands run one at a time, in the order the shell asks; a command whose caller goes away is
    killed."""

    def __init__(self, preload: Iterable[str] = ("factatlas.app.cli",), env: Mapping[str, str] | None = None):
        self.preload = tuple(preload)
        self.env = dict(os.environ if env is None else env)
        self._folder = tempfile.TemporaryDirectory(prefix="fa-cmd-")  # short: a socket path has <= 107 bytes
        self.bin = Path(self._folder.name) / "bin"
        self._zygote: subprocess.Popen | None = None

    def __enter__(self) -> CommandServer:
        sock = str(Path(self._folder.name) / "zygote.sock")
        self.bin.mkdir()
        shim = self.bin / "factatlas"
        shim.write_text(SHIM.format(python=sys.executable, socket=sock), "utf-8")
        shim.chmod(0o755)
        self._zygote = start_zygote(["--socket", sock, *self.preload], self.env, "the command server")
        return self

    def __exit__(self, *exc) -> None:
        stop_zygote(self._zygote)
        self._folder.cleanup()


def _serve_one(listener, conn) -> None:
    """One shim's command: fork it with the shim's descriptors, wait, send back its exit status."""
    import select
    import signal
    import socket

    header, fds, _, _ = socket.recv_fds(conn, 8, 3)
    size = int.from_bytes(header, "big")
    body = b""
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            break
        body += chunk
    request = {**json.loads(body), "fds": fds}
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        listener.close()
        conn.close()
        _child(request)
    for fd in fds:
        os.close(fd)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            conn.sendall(str(os.waitstatus_to_exitcode(status)).encode())
            return
        readable, _, _ = select.select([conn], [], [], 0.01)
        if readable and not conn.recv(1):  # the shim is gone (its shell was stopped): so is its command
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return


def serve_socket(preload: Sequence[str], path: str) -> None:
    """The zygote of `CommandServer`: import ``preload``, then serve the shims' connections at ``path`` until
    stdin ends."""
    import importlib
    import select
    import socket

    replies = os.fdopen(os.dup(1), "w")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    for name in preload:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(8)
    print("ready", file=replies, flush=True)
    while True:
        readable, _, _ = select.select([sys.stdin, listener], [], [])
        if sys.stdin in readable and not sys.stdin.readline():
            break
        if listener in readable:
            conn, _ = listener.accept()
            with conn:
                _serve_one(listener, conn)
    os._exit(0)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--socket"]:
        serve_socket(sys.argv[3:], sys.argv[2])
    else:
        serve(sys.argv[1:])
