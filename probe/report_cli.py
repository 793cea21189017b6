"""`factatlas report RUN [--model SLUG]`: the validation report (registered by probe/cli.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from factatlas.errors import ConfigError
from factatlas.options import bootstrap_option, plots_option


def parse_associations(values: list[str] | None) -> dict[str, tuple[str, ...]]:
    """``["ar=arab", "es=south-america+west"]`` -> {"ar": ("arab",), "es": ("south-america", "west")}."""
    out: dict[str, tuple[str, ...]] = {}
    for value in values or []:
        lang, sep, cultures = value.partition("=")
        if not sep or not lang.strip() or not cultures.strip():
            raise ConfigError(f"--associate {value!r}: expected LANG=CULTURE (e.g. ar=arab; several cultures "
                              "joined by '+')")
        out[lang.strip()] = tuple(c.strip() for c in cultures.split("+") if c.strip())
    return out


def check_associations(associations: dict[str, tuple[str, ...]], langs: tuple[str, ...],
                       cultures: tuple[str, ...]) -> None:
    """Every ``--associate`` names a language and cultures of the benchmark: X-FaKT keeps only those, so a
    typo (``xx=arab``, ``ar=arb``) would leave the default association in place without a word."""
    for lang, named in associations.items():
        if lang not in langs:
            raise ConfigError(f"--associate {lang}=...: the benchmark has no language {lang!r} (it has "
                              f"{', '.join(langs)}); drop it or name one of those")
        unknown = [c for c in named if c not in cultures]
        if unknown:
            raise ConfigError(f"--associate {lang}={'+'.join(named)}: the benchmark has no culture "
                              f"{', '.join(map(repr, unknown))} (it has {', '.join(cultures)})")


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        run: Path = typer.Argument(..., metavar="RUN", help="Run directory holding build/ and probe/<model>/rankings.parquet."),
        model: str | None = typer.Option(None, "--model", help="Model slug under probe/ (default: every model)."),
        associate: list[str] | None = typer.Option(
            None, "--associate", help="Language=culture for X-FaKT (repeatable), overrides the default mapping."),
        bootstrap: int = bootstrap_option("the P@1 intervals"),
        rankc_weighting: str = typer.Option("softmax", "--rankc-weighting", help="softmax | norm1 | norm2."),
        strict: bool = typer.Option(False, "--strict", help="Exit with status 1 when a report's verdict is FAIL."),
        trained_on: list[str] | None = typer.Option(
            None, "--trained-on", help="A split the model was trained or tuned on (repeatable); the verdict uses "
            "the other splits. Default: what probe.json records, else the test split."),
        plots: bool = plots_option(),
    ) -> None:
        """Validate a probed benchmark: metrics, plots, PASS/FAIL verdict -> probe/<model>/report.html.

        Example: factatlas report runs/arab-west --model tiny-bert --associate ar=arab --associate en=west
        """
        from factatlas.benchmark import Benchmark
        from factatlas.console import out
        from factatlas.probe.evaluate import MetricsConfig
        from factatlas.probe.heldout import check_trained_on
        from factatlas.probe.report import write_report
        from factatlas.validation import require_valid

        # every value checked before any work: no lock taken, nothing written
        config = MetricsConfig(bootstrap=bootstrap, rankc_weighting=rankc_weighting,
                               association=parse_associations(associate))
        bench = Benchmark.open(run)
        check_associations(config.association or {}, bench.languages, bench.cultures)
        if trained_on:
            check_trained_on(trained_on, bench.splits)
        require_valid(run)  # never report on a benchmark that `validate-benchmark` rejects
        results = write_report(run, model, config, trained_on=trained_on or None, benchmark=bench, plots=plots)
        for r in results:
            status = "PASS" if r.verdict.passed else "FAIL"
            colour = "green" if r.verdict.passed else "red"
            out.print(f"[{colour}]{status}[/{colour}] {r.model}: {r.html}", highlight=False, soft_wrap=True)
            out.print(f"  metrics: {r.metrics_source}", highlight=False, soft_wrap=True)
            for reason in r.verdict.reasons:
                out.print(f"  - {reason}", highlight=False, soft_wrap=True)
        if strict and not all(r.verdict.passed for r in results):
            raise typer.Exit(1)
