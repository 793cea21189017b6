"""Commands of this stage: `factatlas templates validate|coverage|translate|unimorph-fetch|show` and
`factatlas render RUN`."""

from __future__ import annotations

from pathlib import Path

import typer

from factatlas.options import existing, number, only_with

templates_app = typer.Typer(help="Prompt templates (templates/lang/*.yaml).\n\nExample: factatlas templates coverage",
                            no_args_is_help=True)


@templates_app.command("validate")
def validate_command(files: list[Path] = typer.Argument(None, help="Template files (default: templates/lang/*.yaml).")
                     ) -> None:
    """Check template files; prints every problem as file:line:col with a fix. Exit 2 on problems.

    Example: factatlas templates validate templates/lang/ru.yaml
    """
    from factatlas.errors import ConfigError
    from factatlas.templates.library import available_languages, templates_dir
    from factatlas.templates.validate import validate_paths

    paths = [str(f) for f in files] if files else [str(templates_dir() / f"{lang}.yaml")
                                                   for lang in available_languages()]
    issues = validate_paths(paths)
    if issues:
        raise ConfigError(f"{len(issues)} problem(s):\n" + "\n".join(str(i) for i in issues))
    typer.echo(f"ok: {len(paths)} file(s) valid")


@templates_app.command("coverage")
def coverage_command(langs: str | None = typer.Option(None, "--langs", help="Comma-separated (default: all)."),
                     minimum: int = typer.Option(2, "--min", help="Cloze paraphrases a cell needs to be 'ok'."),
                     root: Path | None = typer.Option(None, "--templates-dir", callback=existing("folder", "a folder of <lang>.yaml template files"), help="Folder of <lang>.yaml "
                                                      "template files laid over the packaged ones (yours win per language)."),
                     old_root: Path | None = typer.Option(None, "--templates", hidden=True,
                                                          help="Deprecated: --templates-dir.")) -> None:
    """Print the language x predicate matrix: cloze paraphrases + question (q), draft marks (*).

    Example: factatlas templates coverage --langs en,ru,ko
    """
    from factatlas.templates.coverage import coverage_table
    from factatlas.templates.library import load_library

    lib = load_library(_split(langs), root=root or old_root, validate=False)
    typer.echo(coverage_table(lib, minimum))


@templates_app.command("show")
def show_command(lang: str = typer.Argument(..., help="Language code."),
                 predicate: str | None = typer.Option(None, "--predicate", help="e.g. P19"),
                 root: Path | None = typer.Option(None, "--templates-dir", callback=existing("folder", "a folder of <lang>.yaml template files"), help="Folder of <lang>.yaml template "
                                                  "files laid over the packaged ones (yours win per language).")) -> None:
    """List a language's templates with their parsed slots.

    Example: factatlas templates show ru --predicate P19
    """
    from factatlas.templates.library import load_library
    from factatlas.templates.syntax import parse

    lib = load_library([lang], root=root)
    for t in lib.templates(lang, predicate):
        slots = " ".join(s.raw for s in parse(t.text).slots())
        typer.echo(f"{t.id:<10} {t.kind:<8} {t.status:<8} {t.text}    [{slots}]")


@templates_app.command("translate")
def translate_command(
    src: str = typer.Option("en", "--from", help="Source language of the templates."),
    dst: str = typer.Option(..., "--to", help="Target language code."),
    backends: list[str] = typer.Option(["googletrans"], "--backend",
                                       help="Repeatable: googletrans, deep-google, deep-mymemory, or module:Class."),
    out: Path | None = typer.Option(None, "--out", help="Write the draft file here (default: stdout)."),
    min_votes: int = typer.Option(2, "--min-votes", callback=number(at_least=1), help="Systems that must agree to keep a translation."),
    cache: Path | None = typer.Option(None, "--cache", help="Translation cache dir "
                                      "(default: $FACTATLAS_CACHE/translate or ~/.cache/factatlas/translate)."),
) -> None:
    """Bootstrap a draft template file by machine translation (kept when >= 2 systems agree).

    Example: factatlas templates translate --from en --to sw --backend googletrans --backend deep-google --out sw.yaml
    """
    import os

    from factatlas.atomic import write_text
    from factatlas.console import err
    from factatlas.templates.library import load_library
    from factatlas.templates.translate import (
        CachedTranslator,
        draft_document,
        dump_yaml,
        make_translator,
        translate_templates,
    )

    cache_dir = cache or Path(os.environ.get("FACTATLAS_CACHE") or Path.home() / ".cache" / "factatlas") / "translate"
    lib = load_library([src])
    translators = [CachedTranslator(make_translator(b), cache_dir) for b in backends]
    result = translate_templates(lib.templates(src), dst, translators, min_votes)
    for tid, reason in result.dropped:
        err.print(f"dropped {tid}: {reason}", highlight=False)
    err.print(" ".join(f"{k}={v}" for k, v in sorted(result.counts.items())), highlight=False)
    if not result.kept:
        err.print(f"error: no template of {src} was kept for {dst}; nothing written"
                  f"{f' (no {out})' if out else ''}. See the reasons above.", highlight=False)
        raise typer.Exit(1)
    text = dump_yaml(draft_document(result))
    if out:
        write_text(out, text)
        err.print(f"wrote {out}")
    else:
        typer.echo(text)


@templates_app.command("unimorph-fetch")
def unimorph_fetch_command(iso: str = typer.Argument(..., help="ISO 639-3 code, e.g. hun."),
                           cache_dir: Path | None = typer.Option(None, "--cache-dir", help="Default: user cache."),
                           url: str = typer.Option("https://raw.githubusercontent.com/unimorph/{iso}/master/{iso}",
                                                   "--url", help="URL pattern of the table."),
                           timeout: float = typer.Option(60.0, "--timeout", callback=number(above=0, unit="seconds"), help="Total deadline per HTTP request "
                                                         "in seconds, body included."),
                           max_retry_after: float = typer.Option(600.0, "--max-retry-after", callback=number(at_least=0, unit="seconds"),
                                                                 help="Wait at most this many seconds for a server's "
                                                                      "Retry-After; a longer one stops with the time "
                                                                      "to retry.")) -> None:
    """Download a UniMorph table into the cache used by the unimorph backend.

    Example: factatlas templates unimorph-fetch hun
    """
    from factatlas.templates.backend_unimorph import download_table

    typer.echo(str(download_table(iso, cache_dir, url, timeout, max_retry_after)))


@templates_app.command("audit")
def audit_command(run: Path = typer.Argument(..., metavar="RUN", help="Run directory with curate/ outputs."),
                  langs: str | None = typer.Option(None, "--langs", help="Comma-separated (default: all)."),
                  limit: int = typer.Option(20, "--limit", callback=number(at_least=0), help="Guesses listed per language (0: all)."),
                  json_out: Path | None = typer.Option(None, "--json", help="Also write the audit as JSON."),
                  root: Path | None = typer.Option(None, "--templates-dir", callback=existing("folder", "a folder of <lang>.yaml template files"), help="Folder of <lang>.yaml files laid "
                                                   "over the packaged templates (yours win per language)."),
                  fillers: bool = typer.Option(False, "--fillers", help="The filler ledger of RUN/build: every "
                                               "distinct gold and candidate filler with its sources and review."),
                  against: Path | None = typer.Option(None, "--against", callback=existing("file", "a ledger written earlier by `templates audit --fillers RUN --out FILE`"), help="With --fillers: a ledger written "
                                                      "earlier with --out; list every filler that changed since."),
                  out: Path | None = typer.Option(None, "--out", help="With --fillers: write the ledger (TSV)."),
                  show_all: bool = typer.Option(False, "--all", help="With --fillers: list reviewed fillers too."),
                  check: bool = typer.Option(False, "--check", help="With --fillers: exit 2 when a filler is "
                                             "unreviewed or reviewed wrong."),
                  subjects: bool = typer.Option(False, "--subjects", help="With --fillers: the subject "
                                                "fillers too (the form of [X...] each subject takes; role "
                                                "subject)."),
                  review_dir: Path | None = typer.Option(None, "--review-dir", callback=existing("folder", "a folder of <lang>.tsv review files"), help="With --fillers: folder of "
                                                         "<lang>.tsv review files (default: templates/review/).")
                  ) -> None:
    """Per language, how every agreement, inflection, gendered label and clean-up was decided, and the
    guesses a native reviewer should check first. With --fillers: the filler ledger of a build.

    Example: factatlas templates audit runs/arab-west --langs ru,fr
    Example: factatlas templates audit --fillers runs/arab-west --out before.tsv
    """
    only_with("--fillers", fillers, {"--against": against, "--out": out, "--all": show_all, "--check": check,
                                     "--subjects": subjects, "--review-dir": review_dir})
    if fillers:
        _filler_ledger(run, _split(langs), root, against, out, show_all, check, review_dir, limit, subjects)
        return
    from factatlas.atomic import write_json
    from factatlas.tables import read_entities, read_facts
    from factatlas.templates.audit import audit_renderer, format_audit
    from factatlas.templates.batch import render_facts
    from factatlas.templates.library import load_library
    from factatlas.templates.render import Renderer

    wanted = _split(langs)
    library = load_library(wanted, root=root)
    entities = read_entities(run / "curate")
    renderer = Renderer(entities)
    render_facts(read_facts(run / "curate" / "facts.parquet"), entities, library, library.languages,
                 renderer=renderer)
    audits = audit_renderer(renderer, tuple(library.languages))
    review = {}
    for lang in library.languages:
        statuses = [t.status for t in library.templates(lang)]
        review[lang] = f"{statuses.count('reviewed')} reviewed, {statuses.count('draft')} draft"
    typer.echo(format_audit(audits, review, limit=limit or 10**9))
    if json_out:
        write_json(json_out, {lang: a.as_dict() for lang, a in audits.items()})


def _filler_ledger(run: Path, langs: tuple[str, ...] | None, root: Path | None, against: Path | None,
                   out: Path | None, show_all: bool, check: bool, review_dir: Path | None, limit: int,
                   subjects: bool = False) -> None:
    from factatlas.atomic import write_text
    from factatlas.errors import ConfigError
    from factatlas.templates.ledger import (
        UNREVIEWED,
        as_mapping,
        check_failures,
        filler_diff,
        format_diff,
        format_ledger,
        ledger_for_run,
        ledger_tsv,
        read_ledger,
    )
    from factatlas.templates.library import load_library

    before = read_ledger(against) if against else None  # read first: a bad file fails before the render
    ledger = ledger_for_run(run, load_library(langs, root=root), str(review_dir) if review_dir else None,
                            langs, subjects=subjects)
    if out:
        write_text(out, ledger_tsv(ledger))
    if before is not None:
        after = as_mapping(ledger)
        if langs:
            before = {k: v for k, v in before.items() if k[0] in langs}
        typer.echo(format_diff(filler_diff(before, after)))
        return
    typer.echo(format_ledger(ledger, limit=limit or 10**9, show_all=show_all))
    if out:
        typer.echo(f"wrote {out} ({len(ledger.lines)} lines)")
    if check:
        bad = check_failures(ledger)
        if bad:
            raise ConfigError("fillers not reviewed ok: " + ", ".join(
                f"{lang} {s['wrong']} wrong, {s[UNREVIEWED]} unreviewed" for lang, s in bad.items())
                + f"; review them in templates/review/<lang>.tsv (see `factatlas templates audit --fillers {run}`)")


def render_command(run: Path = typer.Argument(..., metavar="RUN", help="Run directory with curate/ outputs."),
                   langs: str | None = typer.Option(None, "--langs", help="Comma-separated (default: all)."),
                   root: Path | None = typer.Option(None, "--templates-dir", callback=existing("folder", "a folder of <lang>.yaml template files"), help="Folder of <lang>.yaml template "
                                                    "files laid over the packaged ones (yours win per language)."),
                   old_root: Path | None = typer.Option(None, "--templates", hidden=True,
                                                        help="Deprecated: --templates-dir.")) -> None:
    """Render curated facts into prompts per language and template (RUN/render/).

    Example: factatlas render runs/arab-west --langs ar,en
    """
    from factatlas.templates.batch import render_run
    from factatlas.templates.library import load_library

    wanted = _split(langs)
    report = render_run(run, wanted, load_library(wanted, root=root or old_root))
    typer.echo(report.table())
    typer.echo(f"wrote {run / 'render' / 'prompts.parquet'} ({len(report.rows)} prompts, {len(report.drops)} drops)")


def _split(value: str | None) -> tuple[str, ...] | None:
    return tuple(x.strip() for x in value.split(",") if x.strip()) if value else None


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the root app."""
    app.add_typer(templates_app, name="templates")
    app.command("render")(render_command)
