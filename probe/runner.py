"""Benchmark directory x model -> ``probe/<model-slug>/rankings.parquet`` (+ template-only, metrics.json).

```
<run>/probe/<slug>/rankings.parquet                 RANKINGS_SCHEMA, one row per scored prompt
<run>/probe/<slug>/rankings_template_only.parquet   the same prompts, subject -> neutral placeholder
<run>/probe/<slug>/metrics.json                     factatlas.probe.evaluate.compute_metrics
<run>/probe/<slug>/probe.json                       what was run (settings, rule spec), counts, skips with reasons
```
``probe_benchmark`` hands a run to its engine (``factatlas.probe.engines``: local or ray). The pieces, by job:
``settings`` (what a run is), ``rule`` and ``rules/`` (the scoring rules), ``backends`` (where the model
runs), ``selection`` (which prompts), ``probing`` (one probe in this process), ``ranking`` (closed-set
ranking), ``template_only`` (the baseline), ``model_folder`` (the files, shards and merging). The names
below stay importable from here.
"""

from __future__ import annotations

from pathlib import Path

from factatlas.benchmark import Benchmark
from factatlas.probe.backends import TINY_ALIASES, build_tiny, make_scorer
from factatlas.probe.model_folder import (
    ProbeOutcome,
    fill_model_folder,
    merge_shards,
    merged_info,
    probed_folders,
    recorded_training_splits,
    shard_suffix,
    write_metrics,
    write_model_folder,
)
from factatlas.probe.probing import model_out_name, probe_here
from factatlas.probe.ranking import rank_prompts, ranking_row
from factatlas.probe.selection import open_benchmark, parse_shard, select_prompts, select_rows, shard_of
from factatlas.probe.settings import ProbeConfig
from factatlas.probe.template_only import (
    GENERIC_PLACEHOLDER,
    PLACEHOLDERS,
    placeholder_for,
    template_only_text,
)

__all__ = ["GENERIC_PLACEHOLDER", "PLACEHOLDERS", "TINY_ALIASES", "ProbeConfig", "ProbeOutcome", "build_tiny",
           "fill_model_folder", "make_scorer", "merge_shards", "merged_info", "model_out_name", "open_benchmark",
           "parse_shard", "placeholder_for", "probe_benchmark", "probed_folders", "rank_prompts", "ranking_row",
           "recorded_training_splits", "select_prompts", "select_rows", "shard_of", "shard_suffix",
           "template_only_text", "write_metrics", "write_model_folder"]


def probe_benchmark(run: str | Path, config: ProbeConfig, lm=None, merge: bool = True,
                    benchmark: Benchmark | None = None) -> ProbeOutcome:
    """Probe one model on a benchmark and write the outputs, through the engine the settings name. ``lm``:
    an already loaded model, probed in this process (tests). ``merge=False``: a shard leaves merging to its
    coordinator. ``benchmark``: ``run``'s benchmark, already open (the quickstart's stages share one)."""
    if lm is not None or not merge:
        return probe_here(run, config, lm, merge, benchmark)
    return config.engine.engine.start(run, config, benchmark)
