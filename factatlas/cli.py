"""The `factatlas` command. Each stage registers its own commands from its own `cli.py`.

Stage CLI modules import heavy dependencies (torch, transformers, datasets) inside the command
functions, so `factatlas --help` stays fast.
"""

from __future__ import annotations

import logging
import sys

import typer

from factatlas.errors import FactatlasError

app = typer.Typer(
    name="factatlas",
    help="Build, validate and release culture-diverse multilingual factual-knowledge benchmarks.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_stages() -> None:
    from factatlas import pipeline
    from factatlas.builder import cli as build_cli
    from factatlas.curate import cli as curate_cli
    from factatlas.probe import cli as probe_cli
    from factatlas.publish import cli as publish_cli
    from factatlas.templates import cli as templates_cli

    for module in (curate_cli, templates_cli, build_cli, probe_cli, publish_cli, pipeline):
        module.register(app)


@app.callback()
def _root(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging on stderr.")) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")


_register_stages()


def main() -> None:
    try:
        app()
    except FactatlasError as e:
        from rich.markup import escape

        from factatlas.console import err

        # escaped: messages quote "[Y]" markers and "[rule]" codes, which rich would eat as markup tags
        err.print(f"[red]error:[/red] {escape(str(e))}", highlight=False)
        sys.exit(2)
