"""The `factatlas` command. Each stage registers its own commands from its own `cli.py`.

Stage CLI modules import heavy dependencies (torch, transformers, datasets) inside the command
functions, so `factatlas --help` stays fast.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any, TextIO

import typer

from factatlas.errors import FactatlasError, WriteFailed, is_write_failure, os_errno

app = typer.Typer(
    name="factatlas",
    help="Build, validate and release culture-diverse multilingual factual-knowledge benchmarks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_stages() -> None:
    from factatlas.app import pipeline
    from factatlas.builder import cli as build_cli
    from factatlas.cultures import CultureCatalog, provide
    from factatlas.curate import cli as curate_cli
    from factatlas.curate.config import list_cultures, load_culture
    from factatlas.probe import cli as probe_cli
    from factatlas.publish import cli as publish_cli
    from factatlas.templates import cli as templates_cli

    for module in (curate_cli, templates_cli, build_cli, probe_cli, publish_cli, pipeline):
        module.register(app)
    provide(CultureCatalog(list_cultures, load_culture))  # the build's importers and audit name cultures too


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (test runners swap it between commands)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def setup_logging(verbose: bool) -> logging.Handler:
    """One stderr handler on the root logger, with secrets masked at the logging layer: whoever logs
    (our clients, urllib3's request lines, a server's echoed headers), the record is redacted."""
    from factatlas.http import RedactingFilter

    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(old)
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    return handler


def _print_version(value: bool) -> None:
    if value:
        from factatlas import __version__

        typer.echo(f"factatlas {__version__}")
        raise typer.Exit()


@app.callback()
def _root(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging on stderr."),
          _version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                        help="Print the factatlas version and exit.")) -> None:
    setup_logging(verbose)


_register_stages()


# Output that is not a terminal (a pipe, a file, a CI log) has no width; rich and typer would cut it at 80
# columns (help panels end in "…", tables drop columns), so the command line gives it this many.
PIPED_WIDTH = 200


def widen_when_piped(environ: MutableMapping[str, str] = os.environ, stdout: TextIO | None = None,
                     modules: Mapping[str, Any] = sys.modules) -> bool:
    """Set COLUMNS to PIPED_WIDTH when stdout is not a terminal and COLUMNS is unset (a user's COLUMNS
    wins); True when it did. Rich consoles made later read COLUMNS; those already made are widened here."""
    stdout = stdout or sys.stdout
    if environ.get("COLUMNS") or (hasattr(stdout, "isatty") and stdout.isatty()):
        return False
    environ["COLUMNS"] = str(PIPED_WIDTH)
    console = modules.get("factatlas.console")
    if console is not None:
        console.out.width = console.err.width = PIPED_WIDTH
    return True


class Stopped(BaseException):
    """SIGINT (Ctrl-C) or SIGTERM: raised where the process is, so that every ``finally`` and ``with`` on the
    way out runs (a staging folder discarded, the run lock let go) before the one line below."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, frame: object) -> None:
    import signal

    signal.signal(signum, signal.SIG_DFL)  # a second Ctrl-C or SIGTERM while cleaning up ends it at once
    raise Stopped(signum)


def main() -> None:
    import signal

    from factatlas.collector import tune_for_pipeline

    widen_when_piped()
    tune_for_pipeline()
    previous = {signum: signal.signal(signum, _stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        run_command()
    except Stopped as e:
        from factatlas.console import err

        name = signal.Signals(e.signum).name
        err.print(f"[red]error:[/red] stopped by {name}{' (Ctrl-C)' if e.signum == signal.SIGINT else ''}: what this "
                  "command had not finished was discarded and its earlier outputs are as they were; run it again "
                  "to finish", highlight=False, soft_wrap=True)
        sys.exit(128 + e.signum)
    finally:
        # main() called inside another program (a notebook, a test worker) gives its Ctrl-C back: a later
        # SIGINT there must not raise our Stopped far from any command
        for signum, handler in previous.items():
            if handler is not None:  # None: a handler installed outside Python, which cannot be put back
                signal.signal(signum, handler)


def unrouted_failure(error: Exception) -> FactatlasError:
    """A refused file operation that reached the command line without passing the write layer: a full,
    over-quota or read-only file system is a write failure wherever it happened; a permission refusal may
    be a read, so it is named as such."""
    import errno
    import re

    quoted = re.search(r"'([^']+)'", str(error))  # Arrow: "Failed to open local file 'RUN/x.parquet'. ..."
    path = getattr(error, "filename", None) or (quoted.group(1) if quoted else "a file of this command")
    code = os_errno(error)
    if code in (errno.EACCES, errno.EPERM):
        return FactatlasError(f"{path}: cannot open it ({os.strerror(code)}); make it readable and writable for you "
                              f"(`ls -l {path}`, `chmod u+rw {path}`) or use another folder, then run the command again")
    return WriteFailed(path, "write it", error)


def check_environment(environ: Mapping[str, str] = os.environ) -> None:
    """Settings read from the environment deep inside a command, refused before any work: a bad
    FACTATLAS_TORCH_THREADS was found only when the first model had loaded (about 30 s in)."""
    from factatlas.probe.threads import ENV, decide_threads

    if environ.get(ENV, "").strip():
        decide_threads(0, "cpu", environ[ENV])


def run_command(args: list[str] | None = None) -> None:
    """The command line without `main`'s process-wide settings: errors become `error: ...`, exit 2. The
    tests run commands through it in their own process (tests/clirun.py)."""
    try:
        try:
            check_environment()
            app(args=args, prog_name="factatlas")
        except FactatlasError:
            raise
        except Exception as e:
            # the net under the write layer (factatlas.atomic, the run directory): a file operation it does
            # not route, refused by the file system, is still one line naming the path and the fix
            if not is_write_failure(e):
                raise
            raise unrouted_failure(e) from e
    except FactatlasError as e:
        from rich.markup import escape

        from factatlas.console import err
        from factatlas.http import redact

        # escaped: messages quote "[Y]" markers and "[rule]" codes, which rich would eat as markup tags;
        # messages name URLs; a credential must not reach the terminal even if a message forgot to mask it
        err.print(f"[red]error:[/red] {escape(redact(str(e)))}", highlight=False)
        sys.exit(2)
