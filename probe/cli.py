"""Commands of this stage (registered on the root `factatlas` app): `probe`, `judge`, `xfakt-context`
(xfakt_cli.py), `compare` (analysis/cli.py) and `report` (report_cli.py).

`probe` and `judge` take every option of the scoring rules, backends and engines registered when the command
line is parsed, generated from their declarations (``cli_options.py``): an option is declared once, where
its owner's typed options are, and validated there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from factatlas.probe.cli_options import OptionCommand, backend_options, probe_options


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the root app."""
    from factatlas.probe import report_cli
    from factatlas.probe.analysis import cli as analysis_cli
    from factatlas.probe.xfakt_cli import XFAKT_OPTIONS, xfakt_context

    app.command("probe")(OptionCommand(probe, probe_options))
    app.command("judge")(OptionCommand(judge, backend_options, exclude=("family", "tokenizer")))
    app.command("xfakt-context")(OptionCommand(xfakt_context, lambda: XFAKT_OPTIONS))
    analysis_cli.register(app)
    report_cli.register(app)


def probe(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory (holding build/) or a benchmark directory."),
    model: str = typer.Option(..., "--model", "-m",
                              help="Local folder, Hub id, or tiny | tiny-bert | tiny-gpt2 | tiny-t5 | tiny-chat "
                                   "(built on the spot from the benchmark)."),
    **flags: Any,
) -> None:
    """Rank every prompt's candidates with a model -> probe/<model>/rankings.parquet + metrics.json.

    Example: factatlas probe runs/arab-west --model bert-base-multilingual-cased --scoring mlm-pll

    Quickstart: factatlas probe runs/arab-west --model tiny
    """
    from factatlas.console import out
    from factatlas.probe.runner import ProbeConfig, probe_benchmark
    from factatlas.validation import require_valid

    config = ProbeConfig.from_flags(model, **flags)  # every option checked before the benchmark is read
    require_valid(run)  # never score a benchmark that `validate-benchmark` rejects
    outcome = probe_benchmark(run, config)
    out.print(f"rankings: {outcome.rankings_path}")
    if outcome.template_only_path:
        out.print(f"template-only baseline: {outcome.template_only_path}")
    if outcome.metrics_path:
        out.print(f"metrics: {outcome.metrics_path}")
    for key, value in sorted(outcome.counts.items()):
        out.print(f"  {key}: {value}")


def judge(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory holding build/ and probe/<model>/rankings.parquet."),
    judge_model: str = typer.Option(..., "--judge", help="The judge: an instruction-tuned model (local folder or "
                                                         "Hub id), or the served model's name with --backend openai."),
    model: str | None = typer.Option(None, "--model", help="The probed model whose answers are judged: its folder "
                                                           "under probe/ or the --model it was probed with "
                                                           "(default: every open-answer probe)."),
    backend: str = typer.Option("local", "--backend", help="Where the judge runs: local (transformers here) | "
                                                           "openai (an OpenAI-compatible server)."),
    **flags: Any,
) -> None:
    """LLM-as-judge (X-FaKT protocol) on free answers -> probe/<model>/judgements.parquet + metrics.json 'judge'.

    Reported beside strict and lenient matching (accuracy of each, raw agreement and Cohen's kappa), never
    instead of them. Example: factatlas judge runs/arab-west --model my-llm--chat --judge path/to/judge-model
    """
    from factatlas.console import out
    from factatlas.probe.judge import JudgeConfig, judge_run

    config = JudgeConfig.from_flags(judge_model, backend, **flags)
    for outcome in judge_run(run, model, config):
        s = outcome.summary
        acc, agree = s["accuracy"], s["agreement"]
        out.print(f"judgements: {outcome.judgements_path}", highlight=False, soft_wrap=True)
        out.print(f"  accuracy  judge {_fmt(acc['judge'])}  strict {_fmt(acc['strict'])}  "
                  f"lenient {_fmt(acc['lenient'])}  ({s['rows']} answers)", highlight=False)
        for matcher in ("strict", "lenient"):
            a = agree[matcher]
            out.print(f"  agreement with {matcher}: raw {_fmt(a['raw'])}, kappa {_fmt(a['kappa'])} "
                      f"over {a['n']} parsed verdicts", highlight=False)
        out.print(f"  unparsable replies: {s['unparsable']}; empty answers (judged no, not asked): "
                  f"{s['empty_answers']}", highlight=False)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"
