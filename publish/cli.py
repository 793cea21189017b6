"""Commands of this stage (registered on the root `factatlas` app): `publish` and `diff`."""

from __future__ import annotations

from pathlib import Path

import typer

from factatlas.options import number


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def publish_command(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory (runs/<name>) or benchmark directory (RUN/build)."),
    repo: str = typer.Option(..., "--repo", help="Dataset repository id, 'org/name'."),
    version: str = typer.Option(..., "--version", help="Semantic version of this release, e.g. 1.0.0."),
    target: str = typer.Option(..., "--target", help="'hub' or 'git:PATH' (local path or git URL)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print files, sizes and the card diff; write nothing."),
    private: bool = typer.Option(False, "--private", help="Create the Hub repository as private."),
    previous: str | None = typer.Option(None, "--previous", help="Release to diff against for the CHANGELOG "
                                        "(git:PATH@vX.Y.Z, hub:org/name@vX.Y.Z or a release folder). "
                                        "Default: the highest existing version below --version at the target."),
    license: str | None = typer.Option(None, "--license", help="Licence id for the card (default: cc0-1.0 for "
                                       "curated Wikidata benchmarks, 'other' for imported ones)."),
    pretty_name: str | None = typer.Option(None, "--pretty-name", help="Human title of the dataset."),
    out: Path | None = typer.Option(None, "--out", help="Release folder (default: RUN/release)."),
    ignore_bump: bool = typer.Option(False, "--ignore-bump", help="Publish even if the version step is smaller "
                                     "than the changes need (e.g. a minor bump that removes facts)."),
) -> None:
    """Render a benchmark as a versioned dataset repository, commit it and tag it vX.Y.Z.

    Examples:

      factatlas publish runs/arab-west --repo my-org/dlama-arab-west --version 1.0.0 --target git:releases/arab-west.git

      factatlas publish runs/arab-west --repo my-org/dlama-arab-west --version 1.1.0 --target hub --dry-run
    """
    from factatlas.console import err
    from factatlas.console import out as stdout

    from .workflow import publish

    plan, result = publish(run, repo=repo, version=version, target=target, dry_run=dry_run, private=private,
                           previous_ref=previous, license=license, pretty_name=pretty_name, release_dir=out,
                           ignore_bump=ignore_bump)
    rel = plan.release
    if rel.diff is not None:
        err.print(f"changes since {plan.previous_ref}: suggested bump [bold]{rel.diff.suggested_bump.value}[/bold]")
    if dry_run:
        stdout.print(f"dry run: v{plan.version} to {plan.location} (nothing written)", highlight=False)
        for path, size in plan.file_listing():
            stdout.print(f"{size:>12,d}  {path}", highlight=False, markup=False)
        total = sum(size for _, size in plan.file_listing())
        stdout.print(f"{len(rel.files)} files, {_human(total)}", highlight=False)
        stdout.print("card diff:", highlight=False)
        stdout.print(plan.card_diff() or "(unchanged)", highlight=False, markup=False, soft_wrap=True)
        return
    assert result is not None
    stdout.print(f"published {result.tag} to {result.target}: commit {result.commit}"
                 + (f" {result.url}" if result.url else ""), highlight=False, soft_wrap=True)
    stdout.print(f"release folder: {plan.release_dir}", highlight=False, soft_wrap=True)
    if not result.branch_moved:
        stdout.print(f"note: {result.note}", highlight=False, markup=False, soft_wrap=True)
    if result.removed:
        err.print(f"removed {len(result.removed)} file(s) of the previous head that are not in this release: "
                  + ", ".join(result.removed), highlight=False, markup=False, soft_wrap=True)


def diff_command(
    old: str = typer.Argument(..., help="Old release: folder, git:PATH@vX.Y.Z, hub:org/name@vX.Y.Z, or a run."),
    new: str = typer.Argument(..., help="New release, same forms."),
    details: int = typer.Option(0, "--details", callback=number(at_least=0), help="Also list up to N added/removed/changed facts."),
) -> None:
    """Facts added, removed and changed between two releases, per predicate, culture and language.

    Examples:

      factatlas diff git:releases/arab-west.git@v1.0.0 git:releases/arab-west.git@v1.1.0

      factatlas diff hub:my-org/dlama-arab-west@v1.0.0 runs/arab-west --details 20
    """
    from factatlas.console import out as stdout

    from .diff import format_diff
    from .workflow import diff_refs

    d = diff_refs(old, new)
    stdout.print(f"{d.old_version} -> {d.new_version}", highlight=False, markup=False)
    stdout.print(format_diff(d, details=details), highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the root app."""
    app.command("publish")(publish_command)
    app.command("diff")(diff_command)
    export = typer.Typer(help="Export a benchmark for other tools.", no_args_is_help=True)
    export.command("lm-eval")(export_lmeval_command)
    app.add_typer(export, name="export")


def export_lmeval_command(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory (holding build/) or a benchmark directory."),
    out: Path = typer.Argument(..., metavar="OUT", help="Folder for the task YAMLs and JSONL data (lm_eval --include_path)."),
    splits: str | None = typer.Option(None, "--splits", help="Comma-separated splits to export (default: all)."),
    bos_text: str = typer.Option("", "--bos-text", help="Text put before every prompt, e.g. '<|endoftext|>' for "
                                                        "GPT-2-style tokenizers that add no BOS themselves."),
    prefix: str | None = typer.Option(None, "--prefix", help="Task-name prefix (default: factatlas_<name>)."),
    max_gen_toks: int = typer.Option(16, "--max-gen-toks", callback=number(at_least=1), help="Answer length limit of the generative tasks."),
) -> None:
    """Write lm-evaluation-harness tasks: multiple choice over the candidates and generative QA, per
    (pair, language), plus groups.

    Example: factatlas export lm-eval runs/arab-west harness/ && lm_eval --model hf
    --model_args pretrained=MODEL --include_path harness/ --tasks factatlas_arab_west
    """
    from factatlas.console import out as console
    from factatlas.publish.lmeval import export_lmeval

    result = export_lmeval(run, out, splits=[s.strip() for s in splits.split(",") if s.strip()] if splits else None,
                           bos_text=bos_text, prefix=prefix, max_gen_toks=max_gen_toks)
    console.print(f"lm-eval tasks in {result.out_dir}: {len(result.tasks)} tasks; groups {', '.join(result.groups)}")
    for key, value in result.counts.items():
        console.print(f"  {key}: {value}")
