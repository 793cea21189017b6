"""`factatlas compare RUN [--models A,B,...]` (registered by probe/cli.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from factatlas.options import bootstrap_option, existing, plots_option


def register(app: typer.Typer) -> None:
    app.command("compare")(compare)


def compare(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory holding build/ and probe/<model>/rankings.parquet.",
                               callback=existing("folder", "a run directory")),
    models: str | None = typer.Option(None, "--models", help="Comma-separated model slugs under probe/ or folders "
                                                             "holding rankings.parquet (default: every model)."),
    out: Path | None = typer.Option(None, "--out", help="Output folder (default: RUN/compare)."),
    western: str | None = typer.Option(None, "--western", help="The Western culture of the gap (default: the "
                                                               "build's, from stats.json)."),
    split: str = typer.Option("held-out", "--split", help="held-out (default: the splits the report's headline "
                                                          "uses, i.e. not trained on per probe.json, else test) | "
                                                          "all | split names joined by commas."),
    bootstrap: int = bootstrap_option("the gap's and the transfer scores' intervals"),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    mcnemar: str = typer.Option("exact", "--mcnemar", help="exact (binomial) | corrected (chi-square with "
                                                           "continuity correction)."),
    rankc_weighting: str = typer.Option("softmax", "--rankc-weighting", help="softmax | norm1 | norm2."),
    equivalences: Path | None = typer.Option(None, "--equivalences", help="YAML of QID groups counted as one "
                                                                           "answer (e.g. Islam / Muslim), reported "
                                                                           "beside the strict P@1.",
                                             callback=existing("file", "a YAML file of QID groups (see docs/metrics.md)")),
    plots: bool = plots_option(),
) -> None:
    """Compare models on the same benchmark: P@1 tables, the culture gap with a CI, McNemar's test.

    Reads the held-out split by default, so its P@1 is the report's headline; every table and figure names
    the split. Writes compare.md, compare.html, one CSV per table and PNG figures (none with --no-plots). Example:
    factatlas compare runs/arab-west --models tiny-bert,tiny-gpt2
    """
    from factatlas.errors import ConfigError, unknown
    from factatlas.probe.analysis import compare as C
    from factatlas.probe.metrics import RANKC_WEIGHTINGS

    if mcnemar not in C.MCNEMAR_METHODS:
        raise ConfigError("--mcnemar: " + unknown("McNemar method", mcnemar, C.MCNEMAR_METHODS))
    if rankc_weighting not in RANKC_WEIGHTINGS:
        raise ConfigError("--rankc-weighting: " + unknown("RankC weighting", rankc_weighting, RANKC_WEIGHTINGS))
    from factatlas.rundir import RunDir, check_own_output

    names = [m.strip() for m in models.split(",") if m.strip()] if models else None
    check_own_output(out or run / "compare", "compare.md", "--out")
    # one writer of the run: a probe swapping a model folder in, or another compare, waits for this one (the
    # page is written whole, into a staging folder that the lock holder's clean-up must not see half done)
    with RunDir(run).lock():
        write_comparison(run, names, out=out, western=western, split=split, bootstrap=bootstrap, seed=seed,
                         mcnemar=mcnemar, rankc_weighting=rankc_weighting, equivalences=equivalences, plots=plots)


def write_comparison(run: Path, names: list[str] | None, *, out: Path | None, western: str | None, split: str,
                     bootstrap: int, seed: int, mcnemar: str, rankc_weighting: str,
                     equivalences: Path | None, plots: bool = True) -> list[Path]:
    """``factatlas compare`` once its options are checked: the models' results on the chosen split, every
    analysis section, the page, its tables and (``plots``) its figures (the paths written, the pages first,
    then the CSVs)."""
    from factatlas.console import out as console
    from factatlas.probe.analysis.dlama import load_equivalences, object_cultures
    from factatlas.probe.analysis.errors import benchmark_context
    from factatlas.probe.analysis.page import write_page
    from factatlas.probe.analysis.records import (
        benchmark_facts,
        benchmark_meta,
        country_labels,
        open_benchmark,
        read_model_results,
        resolve_model_dirs,
        stream_prompts,
    )
    from factatlas.probe.analysis.sections import (
        CompareOptions,
        compare_sections,
        crosslingual_sections,
        dlama_sections,
        error_sections,
        locality_sections,
        popularity_sections,
        scale_sections,
        xfactr_sections,
    )
    from factatlas.probe.analysis.splits import choose_splits, select, trained_on
    from factatlas.rundir import replace_folder

    dirs = resolve_model_dirs(run, names)
    meta = benchmark_meta(run)
    bench = open_benchmark(run)
    choice = choose_splits(split, list(bench.splits), {d.name: trained_on(d) for d in dirs})  # the split column
    loaded = [select(read_model_results(run, d, bench), choice) for d in dirs]
    console.print(f"{choice.label}: {choice.why}", highlight=False, soft_wrap=True)
    for m in loaded:
        for reason, n in m.skipped.items():
            console.print(f"{m.model}: skipped {n} rankings rows: {reason}", highlight=False)
    by_model = {m.model: m.results for m in loaded}
    options = CompareOptions(western=western or meta["western_culture"], n_boot=bootstrap, seed=seed,
                             mcnemar=mcnemar)  # type: ignore[arg-type]
    out_dir = out or run / "compare"
    table = load_equivalences(equivalences) if equivalences else None
    labels, unlabeled = country_labels(meta)
    for name in unlabeled:
        console.print(f"{name}: benchmark.json records no country labels (an import?); countries show as QIDs",
                      highlight=False)
    scope = choice.label
    owners = object_cultures(benchmark_facts(bench).values())  # every fact, whatever split is analysed
    # the page, its tables and plots together, or the old ones as they were
    with replace_folder(out_dir) as staging:
        sections = [*compare_sections(by_model, options, scope=scope),
                    *dlama_sections(by_model, owners=owners, country_label=labels, equivalences=table,
                                    equivalences_source=str(equivalences or ""), scope=scope),
                    *crosslingual_sections(loaded, rankc_weighting, scope=scope),
                    *xfactr_sections(loaded, scope=scope),
                    *error_sections(by_model, benchmark_context(bench), prompts=lambda rs: stream_prompts(bench, rs),
                                    scope=scope),
                    *scale_sections(loaded, dirs, rankc_weighting),
                    *locality_sections(by_model, benchmark_facts(bench).values(), n_boot=bootstrap, seed=seed),
                    *popularity_sections(by_model, benchmark_facts(bench).values())]
        subtitle = (f"run {run.name} · {choice.label} ({choice.why}) · benchmark {meta.get('name')} ({meta.get('pair')}) · models "
                    f"{', '.join(by_model)} · languages {', '.join(meta.get('languages') or [])}")
        staged = write_page(staging, "compare", "factatlas model comparison", subtitle, sections, plots=plots)
    written = [out_dir / p.relative_to(staging) for p in staged]
    for path in written[:2]:
        console.print(str(path), highlight=False, soft_wrap=True)
    console.print(f"{len(written) - 2} CSV tables in {out_dir}", highlight=False)
    return written
