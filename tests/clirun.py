"""`factatlas ARGS` run inside the test process, returned as a child process's result would be.

A child `python3 -m factatlas` pays the interpreter start and its imports on every call (0.5 s for the
light commands, 3-5 s for those that load torch or datasets); here they are paid once per session. The
command goes through `factatlas.app.cli.run_command`, the same code as `main` (errors as `error: ...`, exit
2), and an exception that `main` would let through as a traceback is raised into the test. Keep a real
child process where the process is what is tested: kills (`FACTATLAS_CRASH_AT`), locks held by another
process, imports at start-up, the garbage collector's settings, a real file descriptor.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from typer.testing import CliRunner


def factatlas(*args: object, env: Mapping[str, str | None] | None = None,
              cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """Run the command in-process; `env` holds overrides of os.environ for the call (None removes a
    variable), `cwd` the working directory for the call."""
    from factatlas.app.cli import run_command
    from factatlas.rundir import CRASH_ENV

    env = {**(env or {})}
    if env.setdefault(CRASH_ENV, None):  # unset for the call: a crash point must never kill the test session
        raise ValueError(f"{CRASH_ENV} kills the process that reaches the point: run that command in a child")
    argv = [str(a) for a in args]
    code: int | str | None = 0
    before = Path.cwd()
    with CliRunner().isolation(env=env) as (out, err, _):
        try:
            if cwd is not None:
                os.chdir(cwd)
            run_command(argv)
        except SystemExit as e:
            code = e.code
        finally:
            os.chdir(before)
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode("utf-8", "backslashreplace")
    if not isinstance(code, int):
        stderr, code = stderr + (f"{code}\n" if code is not None else ""), 0 if code is None else 1
    return subprocess.CompletedProcess(["factatlas", *argv], code, stdout, stderr)
