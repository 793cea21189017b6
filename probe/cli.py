"""Commands of this stage (registered on the root `factatlas` app): `probe`, `judge`, `compare`
(analysis/cli.py) and `report` (report_cli.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from factatlas.probe.protocol import SCORING_RULES


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the root app."""
    from factatlas.probe import report_cli
    from factatlas.probe.analysis import cli as analysis_cli

    app.command("probe")(probe)
    app.command("judge")(judge)
    app.command("xfakt-context")(xfakt_context)
    analysis_cli.register(app)
    report_cli.register(app)


def probe(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory (holding build/) or a benchmark directory."),
    model: str = typer.Option(..., "--model", "-m",
                              help="Local folder, Hub id, or tiny | tiny-bert | tiny-gpt2 | tiny-t5 | tiny-chat "
                                   "(built on the spot from the benchmark)."),
    scoring: str | None = typer.Option(None, "--scoring", "-s",
                                       help=f"Scoring rule (default: the family's): {', '.join(SCORING_RULES)}."),
    langs: str | None = typer.Option(None, "--langs", help="Comma-separated languages (default: all)."),
    shard: str | None = typer.Option(None, "--shard", help="i/n: score shard i (0-based) of n; the last "
                                                           "finished shard merges them."),
    batch_tokens: int = typer.Option(8192, "--batch-tokens", help="Token budget per forward pass."),
    device: str = typer.Option("auto", "--device", help="auto | cpu | cuda."),
    dtype: str = typer.Option("auto", "--dtype", help="auto (bf16/fp16 on GPU, fp32 on CPU) | fp32 | bf16 | fp16."),
    device_map: str | None = typer.Option(None, "--device-map", help="auto: spread one model larger than a GPU "
                                                                     "over every GPU (accelerate; extra 'gpu')."),
    family: str | None = typer.Option(None, "--family", help="Override detection: mlm | causal | seq2seq."),
    remainder: bool = typer.Option(False, "--remainder", help="causal-*: also score the template's text after "
                                                              "the slot."),
    max_new_tokens: int = typer.Option(16, "--max-new-tokens", help="generative: answer length limit."),
    xfactr_init: str = typer.Option("confidence", "--xfactr-init", help="independent | order | confidence."),
    xfactr_refine: bool = typer.Option(True, "--xfactr-refine/--no-xfactr-refine", help="X-FACTR refinement."),
    xfactr_length: str = typer.Option("mean", "--xfactr-length", help="Choose the answer length by mean | sum."),
    xfactr_max_masks: int = typer.Option(5, "--xfactr-max-masks", help="Largest mask count tried."),
    xfactr_max_masks_lang: list[str] = typer.Option([], "--xfactr-max-masks-lang", metavar="LANG=M",
                                                    help="Largest mask count for one language (repeatable), "
                                                         "e.g. ja=8."),
    xfactr_masks: str = typer.Option("search", "--xfactr-masks", help="search (try 1..M, keep the best score) | "
                                                                      "oracle (the gold answer's token count)."),
    xfactr_refine_order: str = typer.Option("order", "--xfactr-refine-order",
                                            help="order (left to right sweeps) | confidence (lowest re-computed "
                                                 "confidence first)."),
    xfactr_beam: int = typer.Option(1, "--xfactr-beam", help="Beam size of the initial prediction (1: greedy; "
                                                             "order or confidence init)."),
    answer_langs: str = typer.Option("any", "--answer-langs", help="open answers (generative, chat, xfactr): whose forms count as a "
                                                                   "right answer: any | single (the prompt's "
                                                                   "language) | double (it and English)."),
    template_only: bool = typer.Option(True, "--template-only/--no-template-only",
                                       help="Also score the template-only baseline."),
    tiny_steps: int = typer.Option(300, "--tiny-steps", help="Fine-tuning steps of a tiny model."),
    out_name: str | None = typer.Option(None, "--out-name", help="Folder name under probe/ (default: model slug)."),
    system_prompt: str | None = typer.Option(None, "--system-prompt", help="chat rules: the system message."),
    shots: int = typer.Option(0, "--shots", help="chat rules: worked examples per prompt (same language, "
                                                 "never the fact asked)."),
    shot_split: str = typer.Option("dev", "--shot-split", help="chat rules: the split examples come from."),
    backend: str = typer.Option("local", "--backend", help="local (transformers here) | openai (an "
                                                           "OpenAI-compatible server: vLLM, llama.cpp, TGI, ...)."),
    api_base: str | None = typer.Option(None, "--api-base", help="openai: the server's base URL, e.g. "
                                                                 "http://127.0.0.1:8000/v1."),
    served_model: str | None = typer.Option(None, "--served-model", help="openai: the model name the server "
                                                                         "expects (default: --model)."),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help="openai: environment variable holding "
                                                                       "the API key (the key is never printed)."),
    tokenizer: str | None = typer.Option(None, "--tokenizer", help="openai causal-*: the served model's "
                                                                   "tokenizer folder or Hub id (default: --model)."),
    concurrency: int = typer.Option(4, "--concurrency", help="openai: requests in flight."),
    max_retries: int = typer.Option(5, "--max-retries", help="openai: retries on 429/5xx/connection errors."),
    rate_limit: float | None = typer.Option(None, "--rate-limit", help="openai: at most this many requests "
                                                                       "per second."),
    timeout: float = typer.Option(120.0, "--timeout", help="openai: total deadline per HTTP request in seconds, "
                                                           "body included."),
    max_retry_after: float = typer.Option(60.0, "--max-retry-after",
                                          help="openai: wait at most this many seconds for a server's Retry-After; "
                                               "a longer one stops the run with the time to retry."),
    engine: str = typer.Option("local", "--engine", help="local | ray (a Ray Data pipeline, one model replica per "
                                                         "actor/GPU; extra 'ray')."),
    ray_address: str | None = typer.Option(None, "--ray-address", help="ray: join this cluster (auto, "
                                                                       "ray://head:10001); default: a local one."),
    ray_actors: int = typer.Option(2, "--ray-actors", help="ray: model replicas (one per GPU on GPU nodes)."),
    ray_shards: int = typer.Option(8, "--ray-shards", help="ray: units of work (stable prompt-id shards)."),
    ray_cpus: int | None = typer.Option(None, "--ray-cpus", help="ray: CPUs of the local instance."),
) -> None:
    """Rank every prompt's candidates with a model -> probe/<model>/rankings.parquet + metrics.json.

    Example: factatlas probe runs/arab-west --model bert-base-multilingual-cased --scoring mlm-pll

    Quickstart: factatlas probe runs/arab-west --model tiny
    """
    from factatlas.console import out
    from factatlas.probe.runner import ProbeConfig, parse_shard, probe_benchmark
    from factatlas.validation import require_valid

    require_valid(run)  # never score a benchmark that `validate-benchmark` rejects
    per_lang_masks = parse_lang_ints(xfactr_max_masks_lang, "--xfactr-max-masks-lang")
    check_choice(answer_langs, "--answer-langs", ("any", "single", "double"))
    check_choice(xfactr_masks, "--xfactr-masks", ("search", "oracle"))
    check_choice(xfactr_refine_order, "--xfactr-refine-order", ("order", "confidence"))
    config = ProbeConfig(
        model=model, scoring=scoring, langs=tuple(x.strip() for x in langs.split(",") if x.strip()) if langs else None,
        shard=parse_shard(shard), batch_tokens=batch_tokens, device=device, dtype=dtype, device_map=device_map, family=family,
        template_only=template_only, include_remainder=remainder, max_new_tokens=max_new_tokens,
        xfactr_init=xfactr_init, xfactr_refine=xfactr_refine, xfactr_length=xfactr_length,
        xfactr_max_masks=xfactr_max_masks, xfactr_refine_order=xfactr_refine_order, xfactr_beam=xfactr_beam,
        xfactr_masks=xfactr_masks, xfactr_max_masks_by_lang=per_lang_masks, answer_langs=answer_langs,
        tiny_steps=tiny_steps, out_name=out_name,
        system_prompt=system_prompt, shots=shots, shot_split=shot_split, backend=backend, api_base=api_base,
        served_model=served_model, api_key_env=api_key_env, tokenizer=tokenizer, concurrency=concurrency,
        max_retries=max_retries, rate_limit=rate_limit, timeout=timeout, max_retry_after=max_retry_after,
        engine=engine, ray_address=ray_address,
        ray_actors=ray_actors, ray_shards=ray_shards, ray_cpus=ray_cpus)
    outcome = probe_benchmark(run, config)
    out.print(f"rankings: {outcome.rankings_path}")
    if outcome.template_only_path:
        out.print(f"template-only baseline: {outcome.template_only_path}")
    if outcome.metrics_path:
        out.print(f"metrics: {outcome.metrics_path}")
    for key, value in sorted(outcome.counts.items()):
        out.print(f"  {key}: {value}")


def xfakt_context(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory (holding build/) or a benchmark directory."),
    model: str = typer.Option(..., "--model", "-m", help="Local folder or Hub id of a ranking model."),
    modes: str = typer.Option("recall,counterfactual", "--modes", help="recall and/or counterfactual."),
    scoring: str | None = typer.Option(None, "--scoring", "-s", help="A ranking rule (default: the family's)."),
    langs: str | None = typer.Option(None, "--langs", help="Question languages (default: all)."),
    context_langs: str | None = typer.Option(None, "--context-langs", help="Context languages (default: all)."),
    resource: list[str] = typer.Option([], "--resource", metavar="LANG=LEVEL",
                                       help="Resource level (high|medium|low) of a language, repeatable."),
    resource_grouping: str = typer.Option("xfakt", "--resource-grouping",
                                          help="xfakt (X-FaKT's §3 table; ours for languages it lacks) | ours "
                                               "(after Joshi et al. 2020)."),
    device: str = typer.Option("auto", "--device", help="auto | cpu | cuda."),
    batch_tokens: int = typer.Option(8192, "--batch-tokens", help="Token budget per forward pass."),
    out_dir: Path | None = typer.Option(None, "--out", help="Folder of the outputs (default RUN/xfakt_context/"
                                                            "<model folder name>)."),
) -> None:
    """X-FaKT in-context recall and counterfactual-context adherence (seed 004, §3.2-3.3, §4.3): the
    benchmark's cloze prompts after a context sentence in every language -> cells.csv, summary.json.

    Example: factatlas xfakt-context runs/arab-west --model bert-base-multilingual-cased
    """
    import csv
    import json
    from dataclasses import asdict

    from factatlas.console import err, out
    from factatlas.errors import ConfigError
    from factatlas.probe import xfakt_context as X
    from factatlas.probe.models import load_model
    from factatlas.probe.protocol import DEFAULT_SCORING, scoring_rule
    from factatlas.probe.runner import ProbeConfig, make_scorer, open_benchmark, rank_prompts
    from factatlas.validation import require_valid

    require_valid(run)
    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    for m in chosen:
        check_choice(m, "--modes", X.MODES)
    check_choice(resource_grouping, "--resource-grouping", X.RESOURCE_GROUPINGS)
    overrides = {}
    for item in resource:
        lang, _, level = item.partition("=")
        check_choice(level, f"--resource {item}", X.RESOURCE_LEVELS)
        overrides[lang.strip()] = level
    levels, level_sources = X.resource_levels(resource_grouping, overrides)
    bench, run_dir = open_benchmark(run)
    wanted = [x.strip() for x in langs.split(",")] if langs else None
    contexts = [x.strip() for x in context_langs.split(",")] if context_langs else None
    lm = load_model(model, device=device)
    rule = scoring or DEFAULT_SCORING[lm.family]
    if scoring_rule(rule).kind != "rank":
        raise ConfigError(f"--scoring {rule}: the context tasks rank the candidates; give a ranking rule")
    scorer = make_scorer(lm, rule, ProbeConfig(model=model, scoring=rule, batch_tokens=batch_tokens))
    folder = out_dir or run_dir / "xfakt_context" / Path(model.rstrip("/")).name
    folder.mkdir(parents=True, exist_ok=True)
    cells, summary = [], {"model": model, "scoring": rule, "modes": {}}
    for mode in chosen:
        variants, skipped = X.build_variants(bench.prompts, mode, contexts, wanted)
        err.print(f"{mode}: {len(variants)} prompts with a context; skipped {dict(skipped)}", highlight=False)
        rows = rank_prompts(scorer, [v.prompt for v in variants], [v.prompt.text for v in variants], lm.name)
        joined = X.join_variants(rows, variants)
        mode_cells = X.context_cells(joined.scored, variants)
        cells += mode_cells
        summary["modes"][mode] = {"prompts": len(variants), "skipped": dict(skipped),
                                  "resource_groups": [asdict(g) for g in X.resource_groups(mode_cells, mode, levels)]}
    header = ("mode", "language", "context language", "prompts", "facts", "right micro", "right macro",
              "followed context micro", "followed context macro")
    lines = [(c.mode, c.lang, c.context_lang, c.prompts, c.facts, c.correct_micro, c.correct_macro,
              c.followed_micro, c.followed_macro) for c in cells]
    with (folder / "cells.csv").open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([header, *lines])
    probed = sorted({c.lang for c in cells} - {"all"})
    summary["resource_levels"] = {lang: levels[lang] for lang in probed if lang in levels}
    summary["resource_level_sources"] = {lang: level_sources[lang] for lang in probed if lang in levels}
    summary["resource_grouping"] = resource_grouping
    by_source: dict[str, list[str]] = {}
    for lang, source in summary["resource_level_sources"].items():
        by_source.setdefault(source, []).append(lang)
    names = {"xfakt": "X-FaKT §3", "ours": "ours (Joshi et al. 2020)", "--resource": "--resource"}
    err.print("resource levels: " + "; ".join(f"{names[k]} for {','.join(v)}" for k, v in by_source.items())
              + (f"; none for {','.join(x for x in probed if x not in levels)}" if set(probed) - set(levels) else ""),
              highlight=False)
    (folder / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n", "utf-8")
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


def check_choice(value: str, option: str, choices: tuple[str, ...]) -> None:
    from factatlas.errors import ConfigError

    if value not in choices:
        raise ConfigError(f"{option} {value!r}: expected one of {', '.join(choices)}")


def parse_lang_ints(items: list[str], option: str) -> tuple[tuple[str, int], ...]:
    """``["ja=8", "zh=6"]`` -> (("ja", 8), ("zh", 6)); a repeated language keeps its last value."""
    from factatlas.errors import ConfigError

    out: dict[str, int] = {}
    for item in items:
        lang, sep, value = item.partition("=")
        if not sep or not lang.strip() or not value.strip().isdigit() or int(value) < 1:
            raise ConfigError(f"{option} {item!r}: expected LANG=M with M a whole number >= 1, e.g. ja=8")
        out[lang.strip()] = int(value)
    return tuple(sorted(out.items()))


def judge(
    run: Path = typer.Argument(..., metavar="RUN", help="Run directory holding build/ and probe/<model>/rankings.parquet."),
    judge_model: str = typer.Option(..., "--judge", help="The judge: an instruction-tuned model (local folder or "
                                                         "Hub id), or the served model's name with --backend openai."),
    model: str | None = typer.Option(None, "--model", help="Model slug under probe/ whose answers are judged "
                                                           "(default: every open-answer probe)."),
    backend: str = typer.Option("local", "--backend", help="Where the judge runs: local (transformers here) | "
                                                           "openai (an OpenAI-compatible server)."),
    api_base: str | None = typer.Option(None, "--api-base", help="openai: the server's base URL."),
    served_model: str | None = typer.Option(None, "--served-model", help="openai: the model name the server "
                                                                         "expects (default: --judge)."),
    api_key_env: str | None = typer.Option(None, "--api-key-env", help="openai: environment variable holding "
                                                                       "the API key (never printed)."),
    concurrency: int = typer.Option(4, "--concurrency", help="openai: requests in flight."),
    max_retries: int = typer.Option(5, "--max-retries", help="openai: retries on 429/5xx/connection errors."),
    rate_limit: float | None = typer.Option(None, "--rate-limit", help="openai: requests per second at most."),
    timeout: float = typer.Option(120.0, "--timeout", help="openai: total deadline per HTTP request in seconds, "
                                                           "body included."),
    max_retry_after: float = typer.Option(60.0, "--max-retry-after",
                                          help="openai: wait at most this many seconds for a server's Retry-After; "
                                               "a longer one stops the run with the time to retry."),
    device: str = typer.Option("auto", "--device", help="local: auto | cpu | cuda."),
    dtype: str = typer.Option("auto", "--dtype", help="local: auto | fp32 | bf16 | fp16."),
    device_map: str | None = typer.Option(None, "--device-map", help="local: auto spreads a judge larger than a "
                                                                     "GPU over every GPU (extra 'gpu')."),
    batch_tokens: int = typer.Option(8192, "--batch-tokens", help="local: token budget per forward pass."),
) -> None:
    """LLM-as-judge (X-FaKT protocol) on free answers -> probe/<model>/judgements.parquet + metrics.json 'judge'.

    Reported beside strict and lenient matching (accuracy of each, raw agreement and Cohen's kappa), never
    instead of them. Example: factatlas judge runs/arab-west --model my-llm--chat --judge path/to/judge-model
    """
    from factatlas.console import out
    from factatlas.probe.judge import JudgeConfig, judge_run

    config = JudgeConfig(judge_model, backend=backend, api_base=api_base, served_model=served_model,
                         api_key_env=api_key_env, concurrency=concurrency, max_retries=max_retries,
                         rate_limit=rate_limit, timeout=timeout, max_retry_after=max_retry_after, device=device,
                         dtype=dtype, device_map=device_map, batch_tokens=batch_tokens)
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
