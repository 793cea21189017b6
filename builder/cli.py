"""Commands of this stage (registered on the root `factatlas` app): build, validate-benchmark, import."""

from __future__ import annotations

from pathlib import Path

import typer

from factatlas.builder.splits import DEFAULT_SALT
from factatlas.errors import ConfigError


def _split_list(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def build_command(
    run: Path = typer.Argument(..., help="Run directory holding curate/ (e.g. runs/arab-west)."),
    langs: str = typer.Option(..., "--langs", help="Comma-separated languages, e.g. ar,en."),
    templates: str = typer.Option("all", "--templates", help="Template ids (P19/1,P19/q1,...) or 'all'."),
    candidates: str = typer.Option("predicate", "--candidates", help="predicate (all objects of the predicate) "
                                                                      "or sampled (gold + K-1 negatives)."),
    k: int = typer.Option(10, "--k", help="Candidates per fact in sampled mode (gold + K-1 negatives)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sampled candidates (hashed with each fact id)."),
    splits: str = typer.Option("dev:0.1,test:0.9", "--splits", help="NAME:FRACTION,... (targets; the realised "
                                                                      "fractions per cell are printed)."),
    split_salt: str = typer.Option(DEFAULT_SALT, "--split-salt",
                                   help="Salt hashed with each fact id to pick its split (recorded in "
                                        "benchmark.json); keep it to keep every fact's split across versions."),
    templates_dir: Path | None = typer.Option(None, "--templates-dir", help="Folder of <lang>.yaml template files "
                                                                             "(default: the packaged ones)."),
) -> None:
    """Build the multi-parallel benchmark <RUN>/build/ from <RUN>/curate/.

    Example: factatlas build runs/arab-west --langs ar,en --candidates sampled --k 10
    """
    from factatlas.builder.build import build_run
    from factatlas.builder.splits import parse_fractions
    from factatlas.builder.stats import stats_table
    from factatlas.console import err, out

    lang_list = _split_list(langs)
    template_ids = None if templates.strip() == "all" else _split_list(templates)
    result = build_run(run, lang_list, template_ids=template_ids, candidate_mode=candidates,
                       k=k if candidates == "sampled" else None, seed=seed, fractions=parse_fractions(splits),
                       split_salt=split_salt, templates_root=str(templates_dir) if templates_dir else None)
    out.print(stats_table(result.content.stats, lang_list))
    c = result.counts
    err.print(f"built {run}/build: {c['facts']} of {c['input_facts']} facts, {c['prompts']} prompts, "
              f"{c['dropped']} dropped (see {run}/build/dropped.parquet)", highlight=False)
    if not c["facts"]:
        top = ", ".join(f"{k} x{n}" for k, n in sorted(result.content.stats["dropped"].items(),
                                                        key=lambda kv: -kv[1])[:5])
        err.print(f"[red]error:[/red] no fact survived the build (top reasons: {top}); the benchmark is empty",
                  highlight=False)
        raise typer.Exit(1)


def validate_command(
    directory: Path = typer.Argument(..., help="A benchmark directory (or a run directory holding build/)."),
) -> None:
    """Check the multi-parallel invariant of a benchmark; exit 1 listing every violation.

    Example: factatlas validate-benchmark runs/arab-west/build
    """
    from factatlas.builder.invariants import check_directory, format_violations
    from factatlas.console import err, out

    if not (directory / "benchmark.json").exists() and (directory / "build" / "benchmark.json").exists():
        directory = directory / "build"
    if not directory.is_dir():
        raise ConfigError(f"{directory}: no such benchmark directory")
    violations = check_directory(directory)
    if violations:
        err.print(f"[red]{directory}: {len(violations)} violation(s) of the benchmark invariant:[/red]")
        err.print(format_violations(violations, limit=200), highlight=False, markup=False)
        raise typer.Exit(1)
    out.print(f"{directory}: valid benchmark (every language has the same facts, templates and candidates)")


import_app = typer.Typer(help="Import a published benchmark (DLAMA-v1, BMLAMA, mLAMA) into the benchmark format.",
                         no_args_is_help=True)


@import_app.command("dlama-v1")
def import_dlama_command(
    path: Path = typer.Argument(..., help="The dlama-v1 folder (holding arab-west/, asia-west/, ...)."),
    pair: str = typer.Option("arab-west", "--pair", help="arab-west | asia-west | south-america-west."),
    out: Path | None = typer.Option(None, "--out", help="Run directory to write (benchmark in OUT/build/); "
                                                         "default runs/dlama-v1-<pair>."),
    mlama_templates: Path | None = typer.Option(None, "--mlama-templates",
                                                help="Folder of mLAMA <lang>.jsonl templates (as DLAMA probed); "
                                                     "default: the factatlas template library."),
) -> None:
    """Import one DLAMA-v1 culture pair.

    Example: factatlas import dlama-v1 ../shared/reference/dlama/dlama-v1 --pair arab-west
    --mlama-templates ../shared/reference/mlama/templates
    """
    from factatlas.builder.importers.dlama import import_dlama

    result = import_dlama(path, pair, out=out, mlama_templates=mlama_templates)
    _report_import(result, out or Path("runs") / result.content.meta["name"])


@import_app.command("bmlama")
def import_bmlama_command(
    path: Path = typer.Argument(..., help="A BMLAMA17 or BMLAMA53 folder of <lang>.tsv files."),
    out: Path | None = typer.Option(None, "--out", help="Run directory to write; default runs/<bmlama17|53>."),
    mlama_templates: Path | None = typer.Option(None, "--mlama-templates",
                                                help="Folder with mLAMA's en.jsonl: name relations by PID."),
    as_published: bool = typer.Option(False, "--as-published",
                                      help="Keep every source row unchanged and flag the known defects in "
                                           "benchmark.json instead of dropping them (to reproduce published "
                                           "numbers); default out runs/<bmlama17|53>-as-published."),
) -> None:
    """Import BMLAMA-17 or BMLAMA-53 (defective rows are dropped and listed; --as-published keeps them, flagged).

    Example: factatlas import bmlama ../shared/reference/bmlama/BMLAMA17
    --mlama-templates ../shared/reference/mlama/templates
    """
    from factatlas.builder.importers.bmlama import import_bmlama

    result = import_bmlama(path, out=out, mlama_templates=mlama_templates, as_published=as_published)
    _report_import(result, out or Path("runs") / result.content.meta["name"])


@import_app.command("mlama")
def import_mlama_command(
    path: Path = typer.Argument(..., help="mLAMA 1.1 folder: <lang>/templates.jsonl and <lang>/P*.jsonl."),
    langs: str = typer.Option(..., "--langs", help="Comma-separated languages, e.g. en,fr,ar."),
    out: Path | None = typer.Option(None, "--out", help="Run directory to write; default runs/mlama-<langs>."),
    templates: Path | None = typer.Option(None, "--templates", help="Folder of <lang>.jsonl templates if they "
                                                                     "are not in PATH/<lang>/templates.jsonl."),
) -> None:
    """Import mLAMA facts for several languages (facts labelled in all of them).

    Example: factatlas import mlama data/mlama1.1 --langs en,fr,ar
    """
    from factatlas.builder.importers.mlama import import_mlama

    result = import_mlama(path, _split_list(langs), out=out, templates=templates)
    _report_import(result, out or Path("runs") / result.content.meta["name"])


def _report_import(result, run: Path) -> None:
    from factatlas.builder.stats import stats_table
    from factatlas.console import err, out

    meta = result.content.meta
    out.print(stats_table(result.content.stats, meta["languages"]))
    err.print(f"imported {meta['source']['kind']} into {run}/build: {result.counts['facts']} facts, "
              f"{result.counts['prompts']} prompts, {result.counts['dropped']} dropped "
              f"(reasons in {run}/build/dropped.parquet and stats.json)", highlight=False)
    if "flagged" in result.counts:
        err.print(f"{result.counts['flagged']} queries kept unchanged but flagged as defective "
                  f"(source.defects.flagged_queries in {run}/build/benchmark.json)", highlight=False)


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the root app."""
    app.command("build")(build_command)
    app.command("validate-benchmark")(validate_command)
    app.add_typer(import_app, name="import")
