"""`factatlas xfakt-context`: X-FaKT's in-context recall and counterfactual-context adherence (seed 004,
§3.2-3.3, §4.3) from the command line; the tasks themselves are ``factatlas.probe.xfakt_context``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import typer

from factatlas.probe.options import BATCH_TOKENS, DEVICE
from factatlas.probe.settings import LANGS


def xfakt_context(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory (holding build/) or a benchmark directory."),
    model: str = typer.Option(..., "--model", "-m", help="Local folder or Hub id of a ranking model, or a tiny model "
                                                         "that `factatlas probe` built in this run (tiny | tiny-bert "
                                                         "| tiny-gpt2 | tiny-t5 | tiny-chat)."),
    modes: str = typer.Option("recall,counterfactual", "--modes", help="recall and/or counterfactual."),
    scoring: str | None = typer.Option(None, "--scoring", "-s", help="A ranking rule (default: the family's)."),
    context_langs: str | None = typer.Option(None, "--context-langs", help="Context languages (default: all)."),
    resource: list[str] = typer.Option([], "--resource", metavar="LANG=LEVEL",
                                       help="Resource level (high|medium|low) of a language, repeatable."),
    resource_grouping: str = typer.Option("xfakt", "--resource-grouping",
                                          help="xfakt (X-FaKT's §3 table; ours for languages it lacks) | ours "
                                               "(after Joshi et al. 2020)."),
    out_dir: Path | None = typer.Option(None, "--out", help="Folder of the outputs (default RUN/xfakt_context/"
                                                            "<model folder name>)."),
    **flags: Any,
) -> None:
    """X-FaKT in-context recall and counterfactual-context adherence (seed 004, §3.2-3.3, §4.3): the
    benchmark's cloze prompts after a context sentence in every language -> cells.csv, summary.json.

    Example: factatlas xfakt-context runs/arab-west --model bert-base-multilingual-cased
    """
    from factatlas.errors import ConfigError
    from factatlas.probe import xfakt_context as X
    from factatlas.probe.selection import check_langs, open_benchmark
    from factatlas.rundir import RunDir, check_own_output, replace_folder
    from factatlas.validation import require_valid

    require_valid(run)
    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    for m in chosen:
        _check_choice(m, "--modes", X.MODES)
    _check_choice(resource_grouping, "--resource-grouping", X.RESOURCE_GROUPINGS)
    levels, level_sources = X.resource_levels(resource_grouping, _resource_overrides(resource, X.RESOURCE_LEVELS))
    bench, run_dir = open_benchmark(run)
    # every check that needs only the command line and the benchmark, before the model loads
    wanted = list(LANGS.validate(flags["langs"]) or ()) or None if flags.get("langs") else None  # questions
    contexts = [x.strip() for x in context_langs.split(",") if x.strip()] if context_langs else None
    if wanted:
        check_langs(wanted, bench.languages)
    missing = [lang for lang in contexts or () if lang not in bench.languages]
    if missing:
        raise ConfigError(f"--context-langs: {', '.join(missing)} not in the benchmark; it has "
                          f"{', '.join(sorted(bench.languages))}")
    folder = out_dir or run_dir / "xfakt_context" / Path(model.rstrip("/")).name
    check_own_output(folder, "summary.json", "--out")
    local = _built_tiny(model, run_dir)
    # a writer of the run from here on, as probe is: the lock (and a disk that refuses it) before the model
    # loads; cells.csv and summary.json then replace the old folder together, or it stays as it was
    with RunDir(run_dir).lock():
        _check_writable(folder)  # refused before the model loads, not after the work
        scorer, rule, model_name = _ranking_scorer(local, scoring, flags)
        cells, summary = _run_modes(bench, scorer, model_name, chosen, contexts, wanted, levels)
        summary = {"model": model, "scoring": rule, **summary}
        with replace_folder(folder) as staging:
            _write_outputs(staging, cells, summary, levels, level_sources, resource_grouping)
    _print_cells(folder, cells, summary)


def _built_tiny(model: str, run_dir: Path) -> str:
    """A tiny model's name (``tiny-bert``, ...) as the folder `factatlas probe` built it in, in this run; the
    context tasks never build one (nor ask the Hub for a model of that name)."""
    from factatlas.errors import ConfigError
    from factatlas.probe.backends import TINY_ALIASES, is_tiny

    if not is_tiny(model):
        return model
    if model not in TINY_ALIASES:
        raise ConfigError(f"--model {model}: unknown tiny model; available: {', '.join(sorted(TINY_ALIASES))}")
    name = "tiny-chat" if model == "tiny-chat" else f"tiny-{TINY_ALIASES[model]}"
    folder = run_dir / "probe" / "_models" / name
    if not (folder / "config.json").is_file():
        raise ConfigError(f"--model {model}: {folder} holds no tiny model; xfakt-context uses the one `factatlas "
                          f"probe` builds: run `factatlas probe {run_dir} --model {model}` first (or pass a local "
                          "folder or Hub id)")
    return str(folder)


def _check_writable(folder: Path) -> None:
    """What ``replace_folder(folder)`` needs, tried for real, leaving nothing: its nearest existing parent takes
    a new folder, and the old folder's files can be deleted."""
    import os
    import tempfile

    from factatlas.atomic import TMP_PREFIX
    from factatlas.errors import writing
    from factatlas.rundir import check_replaceable

    existing = next(p for p in folder.parents if p.is_dir())  # made only when the outputs are written
    with writing(existing, "make a folder in it"):
        fd, probe = tempfile.mkstemp(prefix=f"{TMP_PREFIX}probe-", dir=existing)
        os.close(fd)
        os.unlink(probe)
    check_replaceable(folder)


def _check_choice(value: str, option: str, choices: Sequence[str]) -> None:
    from factatlas.errors import ConfigError

    if value not in choices:
        raise ConfigError(f"{option} {value!r}: expected one of {', '.join(choices)}")


def _resource_overrides(items: Sequence[str], levels: Sequence[str]) -> dict[str, str]:
    overrides = {}
    for item in items:
        lang, _, level = item.partition("=")
        _check_choice(level, f"--resource {item}", levels)
        overrides[lang.strip()] = level
    return overrides


def _ranking_scorer(model: str, scoring: str | None, flags: Mapping[str, Any]):
    """(scorer, rule name, model name): a ranking rule's scorer for the model, loaded here."""
    from factatlas.errors import ConfigError
    from factatlas.probe.backends import LocalOptions, make_scorer
    from factatlas.probe.models import load_model
    from factatlas.probe.options import options_from_flags
    from factatlas.probe.rule import RuleRequest

    options = options_from_flags(LocalOptions, flags, "xfakt-context")
    lm = load_model(model, device=options.device)
    spec = RuleRequest(scoring).resolve(lm.family)
    if spec.rule.open_answer:
        raise ConfigError(f"--scoring {spec.name}: the context tasks rank the candidates; give a ranking rule")
    return make_scorer(lm, spec, options), spec.name, lm.name


def _run_modes(bench, scorer, model_name: str, chosen, contexts, wanted, levels) -> tuple[list, dict[str, Any]]:
    from dataclasses import asdict

    from factatlas.console import err
    from factatlas.probe import xfakt_context as X
    from factatlas.probe.ranking import rank_prompts

    cells: list = []
    summary: dict[str, Any] = {"modes": {}}
    for mode in chosen:
        variants, skipped = X.build_variants(bench.prompts, mode, contexts, wanted)
        err.print(f"{mode}: {len(variants)} prompts with a context; skipped {dict(skipped)}", highlight=False)
        rows = rank_prompts(scorer, [v.prompt for v in variants], [v.prompt.text for v in variants], model_name)
        joined = X.join_variants(rows, variants)
        mode_cells = X.context_cells(joined.scored, variants)
        cells += mode_cells
        summary["modes"][mode] = {"prompts": len(variants), "skipped": dict(skipped),
                                  "resource_groups": [asdict(g) for g in X.resource_groups(mode_cells, mode, levels)]}
    return cells, summary


def _write_outputs(folder: Path, cells, summary: dict[str, Any], levels, level_sources, grouping: str) -> None:
    import csv
    import json

    from factatlas.console import err

    header = ("mode", "language", "context language", "prompts", "facts", "right micro", "right macro",
              "followed context micro", "followed context macro")
    lines = [(c.mode, c.lang, c.context_lang, c.prompts, c.facts, c.correct_micro, c.correct_macro,
              c.followed_micro, c.followed_macro) for c in cells]
    with (folder / "cells.csv").open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([header, *lines])
    probed = sorted({c.lang for c in cells} - {"all"})
    summary["resource_levels"] = {lang: levels[lang] for lang in probed if lang in levels}
    summary["resource_level_sources"] = {lang: level_sources[lang] for lang in probed if lang in levels}
    summary["resource_grouping"] = grouping
    by_source: dict[str, list[str]] = {}
    for lang, source in summary["resource_level_sources"].items():
        by_source.setdefault(source, []).append(lang)
    names = {"xfakt": "X-FaKT §3", "ours": "ours (Joshi et al. 2020)", "--resource": "--resource"}
    err.print("resource levels: " + "; ".join(f"{names[k]} for {','.join(v)}" for k, v in by_source.items())
              + (f"; none for {','.join(x for x in probed if x not in levels)}" if set(probed) - set(levels) else ""),
              highlight=False)
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n", "utf-8")


def _print_cells(folder: Path, cells, summary: Mapping[str, Any]) -> None:
    from factatlas.console import out

    for c in cells:
        if c.context_lang == "all" or c.lang == "all":
            follow = "" if c.followed_micro is None else f"  followed context {c.followed_micro:.3f}"
            out.print(f"{c.mode:>14} {c.lang:>4} <- {c.context_lang:>4}: right {c.correct_micro:.3f} (micro), "
                      f"{c.correct_macro:.3f} (macro){follow}", highlight=False, soft_wrap=True)
    for mode, data in summary["modes"].items():
        for g in data["resource_groups"]:
            rate = "n/a" if g["error_rate"] is None else f"{g['error_rate']:.3f}"
            out.print(f"{mode} {g['level']}-resource {','.join(g['langs']) or '-'}: error rate {rate}",
                      highlight=False)
    out.print(f"written: {folder / 'cells.csv'}", highlight=False, soft_wrap=True)


XFAKT_OPTIONS = (LANGS, DEVICE, BATCH_TOKENS)
