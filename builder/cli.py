"""Commands of this stage (registered on the root `factatlas` app): build, validate-benchmark, import."""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer

from factatlas.balance import DEFAULT_MAX_SHARE
from factatlas.builder.splits import DEFAULT_SALT
from factatlas.errors import ConfigError, FactatlasError
from factatlas.options import existing, number, share


def _split_list(text: str | None) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def renamed_templates_option(value: str | None) -> None:
    """``--templates`` meant template ids in `build` and a folder elsewhere; it is refused with both names."""
    if value is not None:
        raise ConfigError(f"--templates {value}: the option was split in two; use --template-ids for template "
                          "ids (P19/1,P19/q1) or --templates-dir for a folder of <lang>.yaml files")


def build_command(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory holding curate/ (e.g. runs/arab-west)."),
    langs: str = typer.Option(..., "--langs", help="Comma-separated languages, e.g. ar,en."),
    template_ids: str = typer.Option("all", "--template-ids", help="Template ids (P19/1,P19/q1,...) or 'all'."),
    old_templates: str | None = typer.Option(None, "--templates", hidden=True,
                                             help="Renamed: --template-ids or --templates-dir."),
    candidates: str = typer.Option("predicate", "--candidates", help="predicate (all objects of the predicate) "
                                                                      "or sampled (gold + K-1 negatives)."),
    k: int = typer.Option(10, "--k", callback=number(at_least=2), help="Candidates per fact in sampled mode (gold + K-1 negatives)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sampled candidates (hashed with each fact id)."),
    splits: str = typer.Option("dev:0.1,test:0.9", "--splits", help="NAME:FRACTION,... (targets; the realised "
                                                                      "fractions per cell are printed)."),
    split_salt: str = typer.Option(DEFAULT_SALT, "--split-salt",
                                   help="Salt hashed with each fact id to pick its split (recorded in "
                                        "benchmark.json); keep it to keep every fact's split across versions."),
    templates_dir: Path | None = typer.Option(None, "--templates-dir", callback=existing("folder", "a folder of <lang>.yaml template files"), help="Folder of <lang>.yaml template files "
                                                                             "laid over the packaged ones (yours win per language)."),
    single_object: str = typer.Option("", "--single-object", help="mParaRel hygiene: drop facts with two or more "
                                                                   "direct objects for these predicates (P19,P20 "
                                                                   "or 'all')."),
    strip_final_punctuation: bool = typer.Option(False, "--strip-final-punctuation/--keep-final-punctuation",
                                                 help="mParaRel hygiene: remove sentence-final punctuation from "
                                                      "cloze prompts."),
    min_templates: int = typer.Option(1, "--min-templates", callback=number(at_least=1), help="mParaRel hygiene: drop facts with fewer cloze "
                                                                 "templates in every language."),
    max_culture_share: float = typer.Option(DEFAULT_MAX_SHARE, "--max-culture-share", callback=share(),
                                            help="Warn when one culture holds more than this share of the facts."),
    allow_shrink: bool = typer.Option(False, "--allow-shrink", help="Build even when a language added to the "
                                                                    "run's earlier build removes facts or "
                                                                    "candidates from the others (its missing "
                                                                    "templates never do)."),
    min_relation_share: float = typer.Option(0.0, "--min-relation-share", callback=share(),
                                             help="mParaRel: keep a language only when its cloze templates cover "
                                                  "this share of the reference language's relations (0.6)."),
    min_paraphrase_share: float = typer.Option(0.0, "--min-paraphrase-share", callback=share(),
                                               help="mParaRel: ... and this share of its cloze templates (0.2)."),
    coverage_reference: str = typer.Option("en", "--coverage-reference",
                                           help="The language the two shares are relative to."),
    mlama_paraphrases: Path | None = typer.Option(None, "--mlama-paraphrases", callback=existing("folder", "an mLAMA folder"),
                                                  help="mParaRel: an mLAMA folder (<lang>.jsonl or "
                                                       "<lang>/templates.jsonl) whose template of each relation "
                                                       "is added as the extra cloze template <P>/mlama."),
) -> None:
    """Build the multi-parallel benchmark RUN/build/ from RUN/curate/ (the old build/ stays until the new
    one is complete and valid).

    Example: factatlas build runs/arab-west --langs ar,en --candidates sampled --k 10
    """
    from factatlas.builder.hygiene import Hygiene
    from factatlas.builder.run import build_run
    from factatlas.builder.splits import parse_fractions

    renamed_templates_option(old_templates)
    lang_list = _split_list(langs)
    ids = None if template_ids.strip() == "all" else _split_list(template_ids)
    if min_relation_share > 0 or min_paraphrase_share > 0:
        lang_list = _languages_by_coverage(lang_list, ids, templates_dir, coverage_reference, min_relation_share,
                                           min_paraphrase_share, mlama_paraphrases)
    result = build_run(run, lang_list, template_ids=ids, candidate_mode=candidates,
                       k=k if candidates == "sampled" else None, seed=seed, fractions=parse_fractions(splits),
                       split_salt=split_salt, templates_root=str(templates_dir) if templates_dir else None,
                       hygiene=Hygiene(tuple(_split_list(single_object)), strip_final_punctuation, min_templates),
                       allow_shrink=allow_shrink, mlama_paraphrases=mlama_paraphrases)
    _print_build(result, run, lang_list, mlama_paraphrases is not None, max_culture_share)


def _print_build(result, run: Path, lang_list: list[str], paraphrased: bool, max_culture_share: float) -> None:
    """What `factatlas build` tells: the stats, every skip and removal with its count, the balance."""
    from factatlas.balance import balance_report
    from factatlas.builder.losses import losses_lines, skipped_lines
    from factatlas.builder.stats import stats_table
    from factatlas.console import err, out

    out.print(stats_table(result.content.stats, lang_list))
    renamed = result.content.meta["source"].get("pair_renamed_from")
    if renamed:
        err.print(f"[bold yellow]warning:[/] the curate stage recorded the pair as '{renamed}', which cannot "
                  f"name a release config; the benchmark's pair is '{result.content.meta['pair']}' (its cultures). "
                  "Curate again to record the pair's own name.", highlight=False)
    if paraphrased:
        added = result.content.meta["source"]["mlama_paraphrases"]
        err.print("mLAMA templates added as <P>/mlama: " + ", ".join(
            f"{lang} {len(ps)}" for lang, ps in added["added"].items()) + "; not added: " + (", ".join(
                f"{k} x{n}" for k, n in added["skipped"].items()) or "none"), highlight=False)
    skips = skipped_lines(result.losses)
    if skips:
        err.print("[bold yellow]templates skipped per language[/] (the other languages keep them; reasons in "
                  "dropped.parquet):")
        for line in skips:
            err.print(f"  {line}", highlight=False)
    lines = losses_lines(result.losses)
    if lines:
        err.print("[bold yellow]multi-parallel removals[/] (one language lacked it, so every language lost it):")
        for line in lines:
            err.print(f"  {line}", highlight=False)
    balance, warning = balance_report(result.content.facts, sorted({f.culture for f in result.content.facts}),
                                      {e.qid: e for e in result.content.entities}, max_culture_share)
    out.print("\n".join(balance), highlight=False, soft_wrap=True)
    if warning:
        err.print(f"[bold yellow]warning:[/] {warning}", highlight=False)
    c = result.counts
    err.print(f"built {run}/build: {c['facts']} of {c['input_facts']} facts, {c['prompts']} prompts, "
              f"{c['dropped']} dropped (see {run}/build/dropped.parquet)", highlight=False)



def _languages_by_coverage(langs: list[str], ids: list[str] | None, templates_dir: Path | None, reference: str,
                           min_relations: float, min_paraphrases: float,
                           mlama_paraphrases: Path | None = None) -> list[str]:
    """mParaRel's inclusion rule on the template library (builder/pararel.py), the mLAMA paraphrases
    included when given; dropped languages printed."""
    from factatlas.builder.pararel import (
        cloze_counts,
        language_coverage,
        read_mlama_paraphrases,
        with_mlama_paraphrases,
    )
    from factatlas.console import err
    from factatlas.templates.library import load_library

    library = load_library(sorted({*langs, reference}), str(templates_dir) if templates_dir else None)
    if mlama_paraphrases is not None:
        library = with_mlama_paraphrases(library, read_mlama_paraphrases(mlama_paraphrases, library.languages)
                                         ).library
    chosen = set(ids) if ids is not None else None
    templates = [t for lang in library.languages for t in library.templates(lang)
                 if chosen is None or t.id in chosen]
    rows = language_coverage(cloze_counts(templates), langs, reference, min_relations, min_paraphrases)
    for r in rows:
        err.print(f"  coverage {r.lang}: relations {r.relations} ({r.relation_share:.0%}), cloze templates "
                  f"{r.paraphrases} ({r.paraphrase_share:.0%}) of {reference}'s -> "
                  + ("kept" if r.kept else f"dropped: {r.reason}"), highlight=False)
    kept = [r.lang for r in rows if r.kept]
    if not kept:
        raise ConfigError("no language passes --min-relation-share/--min-paraphrase-share; lower them")
    return kept


def _record_or_none(directory: Path) -> dict | None:
    """The validation record of the files as they are; None when one is missing or unreadable (the check
    names it as a violation, and a benchmark with a missing file has nothing to record)."""
    from factatlas.validation import make_record

    try:
        return make_record(directory)
    except OSError:
        return None


def validate_command(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory holding build/, or a benchmark directory."),
) -> None:
    """Check the multi-parallel invariant of the benchmark in RUN; exit 1 listing every violation.

    Example: factatlas validate-benchmark runs/arab-west
    """
    from factatlas.benchmark import BenchmarkError, locate
    from factatlas.console import err, out
    from factatlas.invariants import format_violations
    from factatlas.rundir import LockHeld, RunDir
    from factatlas.validation import check_directory, write_record

    if not run.is_dir():
        raise ConfigError(f"{run}: no such benchmark or run directory")
    try:
        where = locate(run)
    except BenchmarkError:  # not recognisable as a benchmark: list what is missing
        where = None
    directory = where.benchmark if where is not None else run
    recordable = where is not None and where.release is None
    checked = _record_or_none(directory) if recordable else None  # the files as the check reads them
    violations = check_directory(run)  # found as Benchmark.open finds it (a release's prompts are its shards)
    if checked is not None and _record_or_none(directory) != checked:
        # a build swapped build/ in while the check read it: what it read may mix two benchmarks, so its
        # verdict (a violation as much as a pass) is about neither
        raise FactatlasError(f"{directory}: its files changed while they were checked (another process wrote the "
                             f"benchmark); run `factatlas validate-benchmark {run}` again once it has finished")
    if violations:
        err.print(f"[red]{directory}: {len(violations)} violation(s) of the benchmark invariant:[/red]")
        err.print(format_violations(violations, limit=200), highlight=False, markup=False)
        raise typer.Exit(1)
    out.print(f"{directory}: valid benchmark (every language has the same facts and candidates, each with its own "
              "templates)", soft_wrap=True)
    if recordable:
        # probe and report trust it while every checked file keeps its hash: written holding the run's lock
        # (no build swaps build/ meanwhile) and only for the files that were checked
        try:
            with RunDir(where.run).lock() if where.run is not None else contextlib.nullcontext():
                write_record(directory, checked)
        except LockHeld as e:
            err.print(f"note: {directory}: the validation record was not written: {e}", highlight=False,
                      markup=False, soft_wrap=True)
        except (OSError, FactatlasError) as e:
            err.print(f"note: {directory}: the validation record was not written ({e}); probe and "
                      "report will check every row again", highlight=False, markup=False, soft_wrap=True)


import_app = typer.Typer(help="Import a published benchmark (DLAMA-v1, BMLAMA, mLAMA) into the benchmark format.",
                         no_args_is_help=True)


@import_app.command("dlama-v1")
def import_dlama_command(
    path: Path = typer.Argument(..., callback=existing("folder", "the dlama-v1 folder"), help="The dlama-v1 folder (holding arab-west/, asia-west/, ...)."),
    run: Path | None = typer.Argument(None, metavar="RUN", help="Run directory to write (benchmark in "
                                                                   "RUN/build/); default runs/dlama-v1-<pair>."),
    pair: str = typer.Option("arab-west", "--pair", help="arab-west | asia-west | south-america-west."),
    old_out: Path | None = typer.Option(None, "--out", hidden=True, help="Deprecated: give RUN instead."),
    mlama_templates: Path | None = typer.Option(None, "--mlama-templates", callback=existing("folder", "an mLAMA folder"),
                                                help="Folder of mLAMA <lang>.jsonl templates (as DLAMA probed); "
                                                     "default: the factatlas template library."),
) -> None:
    """Import one DLAMA-v1 culture pair.

    Example: factatlas import dlama-v1 ../shared/reference/dlama/dlama-v1 runs/dlama-arab-west --pair arab-west
    --mlama-templates ../shared/reference/mlama/templates
    """
    from factatlas.builder.importers.dlama import import_dlama

    out = _run_or_out(run, old_out)
    result = import_dlama(path, pair, out=out, mlama_templates=mlama_templates)
    _report_import(result, out or Path("runs") / result.content.meta["name"])


@import_app.command("bmlama")
def import_bmlama_command(
    path: Path = typer.Argument(..., callback=existing("folder", "a BMLAMA folder"), help="A BMLAMA17 or BMLAMA53 folder of <lang>.tsv files."),
    run: Path | None = typer.Argument(None, metavar="RUN",
                                      help="Run directory to write; default runs/<bmlama17|53>."),
    old_out: Path | None = typer.Option(None, "--out", hidden=True, help="Deprecated: give RUN instead."),
    mlama_templates: Path | None = typer.Option(None, "--mlama-templates", callback=existing("folder", "an mLAMA folder"),
                                                help="Folder with mLAMA's en.jsonl: name relations by PID."),
    as_published: bool = typer.Option(False, "--as-published",
                                      help="Keep every source row unchanged and flag the known defects in "
                                           "benchmark.json instead of dropping them (to reproduce published "
                                           "numbers); default out runs/<bmlama17|53>-as-published."),
    cultures: str | None = typer.Option(None, "--cultures", help="Give facts the culture of their subject's "
                                                                 "country when the English labels tell it "
                                                                 "(comma-separated culture names or 'all'; "
                                                                 "needs --mlama-templates); default: all global."),
) -> None:
    """Import BMLAMA-17 or BMLAMA-53 (defective rows are dropped and listed; --as-published keeps them, flagged).

    Example: factatlas import bmlama ../shared/reference/bmlama/BMLAMA17
    --mlama-templates ../shared/reference/mlama/templates
    """
    from factatlas.builder.importers.bmlama import import_bmlama

    out = _run_or_out(run, old_out)
    if cultures and mlama_templates is None:
        raise ConfigError(f"--cultures {cultures}: the countries are read from relations named by PID (P36, "
                          "P530, ...); give --mlama-templates (a folder with mLAMA's en.jsonl) too")
    result = import_bmlama(path, out=out, mlama_templates=mlama_templates, as_published=as_published,
                           cultures=_chosen_cultures(cultures))
    _report_import(result, out or Path("runs") / result.content.meta["name"])


def _chosen_cultures(cultures: str | None) -> list:
    """``--cultures`` of the importers: culture names (or 'all') -> Culture records; none -> []."""
    if not cultures:
        return []
    from factatlas.cultures import catalog

    return catalog().chosen("all" if cultures == "all" else _split_list(cultures))


@import_app.command("mlama")
def import_mlama_command(
    path: Path = typer.Argument(..., callback=existing("folder", "an mLAMA 1.1 folder"), help="mLAMA 1.1 folder: <lang>/templates.jsonl and <lang>/P*.jsonl."),
    run: Path | None = typer.Argument(None, metavar="RUN",
                                      help="Run directory to write; default runs/mlama-<langs>."),
    langs: str = typer.Option(..., "--langs", help="Comma-separated languages, e.g. en,fr,ar."),
    mlama_templates: Path | None = typer.Option(None, "--mlama-templates", callback=existing("folder", "an mLAMA folder"),
                                                help="Folder of mLAMA <lang>.jsonl templates if they are not in "
                                                     "PATH/<lang>/templates.jsonl."),
    old_out: Path | None = typer.Option(None, "--out", hidden=True, help="Deprecated: give RUN instead."),
    old_templates: Path | None = typer.Option(None, "--templates", hidden=True,
                                              help="Deprecated: --mlama-templates."),
    cultures: str | None = typer.Option(None, "--cultures", help="Give facts the culture of their subject's "
                                                                 "country when it is known (comma-separated "
                                                                 "culture names or 'all'); default: all global."),
) -> None:
    """Import mLAMA facts for several languages (facts labelled in all of them).

    Example: factatlas import mlama data/mlama1.1 runs/mlama-en-fr-ar --langs en,fr,ar
    """
    from factatlas.builder.importers.mlama import import_mlama

    out = _run_or_out(run, old_out)
    result = import_mlama(path, _split_list(langs), out=out, templates=mlama_templates or old_templates,
                          cultures=_chosen_cultures(cultures))
    _report_import(result, out or Path("runs") / result.content.meta["name"])


def _run_or_out(run: Path | None, old_out: Path | None) -> Path | None:
    """RUN, or the deprecated --out spelling of it (not both)."""
    if run is not None and old_out is not None and run != old_out:
        raise ConfigError(f"two run directories given: RUN {run} and --out {old_out}; give RUN only")
    return run or old_out


def _report_import(result, run: Path) -> None:
    from factatlas.builder.stats import stats_table
    from factatlas.console import err, out

    meta = result.content.meta
    out.print(stats_table(result.content.stats, meta["languages"]))
    err.print(f"imported {meta['source']['kind']} into {run}/build: {result.counts['facts']} facts, "
              f"{result.counts['prompts']} prompts, {result.counts['dropped']} dropped "
              f"(reasons in {run}/build/dropped.parquet and stats.json)", highlight=False)
    assigned = meta["source"].get("cultures_from_countries")
    if assigned is not None:
        err.print("cultures from subject countries: " + (", ".join(f"{k} {v}" for k, v in assigned.items())
                                                         or "none"), highlight=False)
    if "flagged" in result.counts:
        err.print(f"{result.counts['flagged']} queries kept unchanged but flagged as defective "
                  f"(source.defects.flagged_queries in {run}/build/benchmark.json)", highlight=False)


def audit_culture_command(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory or benchmark directory (built or imported)."),
    western: str = typer.Option("west", "--western", help="The Western culture (a curate/cultures name)."),
    cultures: str = typer.Option("all", "--cultures", help="Cultures whose country lists classify subjects "
                                                           "(comma-separated names or paths, or 'all')."),
    subject_countries: Path | None = typer.Option(None, "--subject-countries", callback=existing("file", "a TSV table of subject countries"),
                                                  help="TSV of SUBJECT_QID<TAB>COUNTRY_QID[,...] for subjects "
                                                       "whose facts carry no countries (e.g. an mLAMA import)."),
) -> None:
    """DLAMA's Western-share audit (Keleg & Magdy 2023, §3.1, Table A1): per predicate, the share of facts
    whose subject countries are Western -> RUN/audit/western_share.csv and .json.

    Example: factatlas audit-culture runs/mlama-en-fr --subject-countries subjects.tsv
    """
    import csv
    import io
    import json

    from factatlas.atomic import write_text
    from factatlas.benchmark import Benchmark
    from factatlas.builder.audit import read_subject_countries, western_share
    from factatlas.console import out
    from factatlas.cultures import catalog
    from factatlas.predicates import load_predicates

    bench = Benchmark.open(run)
    names = catalog().names() if cultures == "all" else _split_list(cultures)
    table = read_subject_countries(subject_countries) if subject_countries else {}
    rows = western_share(bench.facts_by_id.values(), load_predicates(), catalog().chosen(names), western, table)
    folder = (bench.run or bench.path) / "audit"
    header = ("predicate", "facts", "western", "non-western", "unknown", "western share", "countries from")
    lines = [(r.predicate, r.facts, r.western, r.non_western, r.unknown,
              "" if r.share is None else round(r.share, 4),
              " ".join(f"{k}:{v}" for k, v in r.sources.items())) for r in rows]
    table_text = io.StringIO(newline="")
    csv.writer(table_text).writerows([header, *lines])
    write_text(folder / "western_share.csv", table_text.getvalue())  # atomic, as every output
    write_text(folder / "western_share.json", json.dumps(
        {"western": western, "cultures": names, "subject_countries": str(subject_countries or ""),
         "predicates": [dict(zip(header, line, strict=True)) for line in lines]}, indent=1) + "\n")
    for line in [header, *lines]:
        out.print("  ".join(f"{x!s:>10}" for x in line), highlight=False, soft_wrap=True)
    out.print(f"written: {folder / 'western_share.csv'}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the root app."""
    app.command("audit-culture")(audit_culture_command)
    app.command("build")(build_command)
    app.command("validate-benchmark")(validate_command)
    app.add_typer(import_app, name="import")
