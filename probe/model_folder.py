"""The model folder ``probe/<slug>/``: written whole (staged and swapped in with its manifest entry), or filed
shard by shard (``--shard i/n``) and merged by the process that files the last shard; metrics.json beside the
rankings; the training splits a probe.json records."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factatlas.atomic import write_json
from factatlas.benchmark import Benchmark
from factatlas.errors import FactatlasError
from factatlas.records import ProbeResult
from factatlas.stopwatch import section
from factatlas.tables import ProbeResultsFile, read_probe_results, write_probe_results


@dataclass
class ProbeOutcome:
    out_dir: Path
    rankings_path: Path
    template_only_path: Path | None
    metrics_path: Path | None
    counts: dict[str, Any] = field(default_factory=dict)
    merged: bool = True


def probed_folders(probe_dir: Path) -> list[Path]:
    """The model folders under ``<run>/probe/``: those holding rankings.parquet, never the staging folder
    (``.factatlas-tmp-*``) of a probe that is running or was killed."""
    from factatlas.atomic import TMP_PREFIX

    if not probe_dir.is_dir():
        return []
    return sorted(p for p in probe_dir.iterdir()
                  if not p.name.startswith(TMP_PREFIX) and (p / "rankings.parquet").exists())


class ModelFolderError(FactatlasError):
    """No model folder to read where one was asked for."""


def model_dirs(run: Path, model: str | None = None) -> list[Path]:
    """The model folders under ``<run>/probe/`` that ``--model`` names (``folders_of_model``), or all of them."""
    probe = run / "probe"
    found = probed_folders(probe)
    if model is None:
        if not found:
            raise ModelFolderError(f"{probe}: no model rankings; run `factatlas probe {run} --model PATH_OR_ID` first")
        return found
    chosen = folders_of_model(probe, model)
    if not chosen:
        from factatlas.errors import unknown

        raise ModelFolderError(f"{probe / model}/rankings.parquet: missing; "
                               + unknown("model", model, [p.name for p in found]))
    return chosen


def folders_of_model(probe_dir: Path, model: str) -> list[Path]:
    """The model folders ``--model`` names: the folder of that name; else every folder probed with that model
    (``--model`` as given to `factatlas probe`: its slug alone, or with ``--<rule>`` for a rule that is not
    the family's default, e.g. ``my-chat-model--chat``)."""
    from factatlas.probe.models import model_slug

    found = probed_folders(probe_dir)
    exact = [p for p in found if p.name == model]
    if exact:
        return exact
    slugs = {model_slug(model), model_slug(Path(model).name)}  # a local folder by its name, also once moved
    return [p for p in found if p.name in slugs or any(p.name.startswith(f"{s}--") for s in slugs)]


def write_model_folder(run_dir: Path, slug: str, rankings: Sequence[ProbeResult],
                       template_rows: Sequence[ProbeResult] | None, info: Mapping[str, Any],
                       benchmark: Benchmark) -> ProbeOutcome:
    """Write ``probe/<slug>/`` whole: rankings, template-only rankings, probe.json, metrics.json and the
    manifest entry are staged in a sibling folder and swapped in together (``RunDir.replace_stage``), so a
    failure or a kill leaves the old folder or the new one, never new rankings beside old metrics.
    The caller holds the run lock."""
    from factatlas.rundir import RunDir

    run = RunDir(run_dir)
    name = f"probe/{slug}"
    out_dir = run_dir / name
    with run.replace_stage(name) as staging:
        fill_model_folder(run, staging, name, rankings, template_rows, info, benchmark)
    return ProbeOutcome(out_dir, out_dir / "rankings.parquet",
                        out_dir / "rankings_template_only.parquet" if template_rows is not None else None,
                        out_dir / "metrics.json", dict(info["counts"]))


def fill_model_folder(run, staging: Path, name: str, rankings: Sequence[ProbeResult],
                      template_rows: Sequence[ProbeResult] | None, info: Mapping[str, Any],
                      benchmark: Benchmark) -> None:
    """The files of a model folder, written into its staging folder, and the folder's manifest entry.

    The rows are handed over: a list (or the probe's ``RankedRows``) given is emptied once written, and the
    metrics read the written files a batch at a time (``ProbeResultsFile``), so a probe holds the metrics'
    joined records without its rows beside them."""
    from factatlas.rundir import crash_point

    written = [write_probe_results(staging / "rankings.parquet", rankings)]
    crash_point("probe:rankings-written")
    has_template = template_rows is not None
    if has_template:
        written.append(write_probe_results(staging / "rankings_template_only.parquet", template_rows))
    for rows in (rankings, template_rows):
        clear = getattr(rows, "clear", None)  # a list, or the probe's RankedRows
        if callable(clear):
            clear()
    del rankings, template_rows
    write_json(staging / "probe.json", info)
    with section("probe/metrics"):
        written.append(write_metrics(staging, ProbeResultsFile(staging / "rankings.parquet"),
                                     ProbeResultsFile(staging / "rankings_template_only.parquet") if has_template
                                     else None, benchmark, recorded_training_splits(info)))
    crash_point("probe:metrics-written")
    run.stage_entry(staging, name, config=dict(info["config"]), counts=info["counts"],
                    outputs=written, extra={"model": info["model"], "scoring": info["scoring"]})


SHARD_LOCK_WAIT_S = 600.0  # a shard waits this long for another shard (or a probe) filing its result


def shard_suffix(index: int, count: int) -> str:
    return f".shard-{index}-of-{count}"


def write_shard(folder: Path, shard: tuple[int, int], rankings: Sequence[ProbeResult],
                template_rows: Sequence[ProbeResult] | None, info: Mapping[str, Any]) -> None:
    """One shard's files in ``folder``: rankings (+ template-only) and probe JSON, under shard names."""
    suffix = shard_suffix(*shard)
    write_probe_results(folder / f"rankings{suffix}.parquet", rankings)
    if template_rows is not None:
        write_probe_results(folder / f"rankings_template_only{suffix}.parquet", template_rows)
    write_json(folder / f"probe{suffix}.json", info)


def file_shard(run_dir: Path, slug: str, shard: tuple[int, int], rankings: Sequence[ProbeResult],
               template_rows: Sequence[ProbeResult] | None, info: Mapping[str, Any], benchmark: Benchmark,
               merge: bool = True, shard_dir: str | None = None) -> ProbeOutcome:
    """``--shard i/n``: file this shard's result; the process that files the last one merges them all into
    a whole new model folder (no shard files left). ``merge=False`` (a Ray actor): write into
    ``shard_dir``, the driver's staging folder; the driver holds the lock and merges."""
    from factatlas.console import err
    from factatlas.rundir import RunDir

    out_dir = run_dir / "probe" / slug
    index, count = shard
    suffix = shard_suffix(index, count)
    if not merge:
        folder = Path(shard_dir) if shard_dir else out_dir
        write_shard(folder, shard, rankings, template_rows, info)
        return ProbeOutcome(folder, folder / f"rankings{suffix}.parquet", None, None, dict(info["counts"]), merged=False)
    with RunDir(run_dir).lock(wait_s=SHARD_LOCK_WAIT_S):
        out_dir.mkdir(parents=True, exist_ok=True)
        write_shard(out_dir, shard, rankings, template_rows, info)
        merged = merge_shards(out_dir, count)
        if merged is None:
            err.print(f"shard {index}/{count} written; metrics once all shards are there")
            return ProbeOutcome(out_dir, out_dir / f"rankings{suffix}.parquet", None, None, dict(info["counts"]),
                                merged=False)
        all_rankings, all_template = merged
        return write_model_folder(run_dir, slug, all_rankings, all_template, merged_info(out_dir, count, info),
                                  benchmark)


def merged_info(folder: Path, count: int, last: Mapping[str, Any]) -> dict[str, Any]:
    """probe.json of a merged run: the shards' counts summed, the rest as the last shard recorded it."""
    counts: Counter = Counter()
    for i in range(count):
        path = folder / f"probe{shard_suffix(i, count)}.json"
        shard_counts = json.loads(path.read_text("utf-8")).get("counts", {}) if path.is_file() else {}
        counts.update({k: v for k, v in shard_counts.items() if isinstance(v, int)})
    for key in ("prompts/benchmark",):  # the same in every shard, not a part of it
        if key in last["counts"]:
            counts[key] = last["counts"][key]
    config = {**last["config"], "shard": None}
    return {**last, "config": config, "counts": dict(sorted(counts.items())), "shards": count}


def merge_shards(out_dir: Path, count: int) -> tuple[list[ProbeResult], list[ProbeResult] | None] | None:
    """The rows of ``rankings.shard-*-of-n`` (and the template-only twins) once all n are present; else None.
    Writes nothing: ``write_model_folder`` files the merged result whole."""
    paths = [out_dir / f"rankings{shard_suffix(i, count)}.parquet" for i in range(count)]
    if not all(p.exists() for p in paths):
        return None
    rankings = [r for p in paths for r in read_probe_results(p)]
    t_paths = [out_dir / f"rankings_template_only{shard_suffix(i, count)}.parquet" for i in range(count)]
    template_rows = None
    if all(p.exists() for p in t_paths):
        template_rows = [r for p in t_paths for r in read_probe_results(p)]
    return rankings, template_rows


def write_metrics(out_dir: Path, rankings: Iterable[ProbeResult], template_rows: Iterable[ProbeResult] | None,
                  bench: Benchmark, trained_on: Sequence[str] | None = None) -> Path:
    """metrics.json: the full metrics of factatlas.probe.evaluate (which reads RANKINGS_SCHEMA rows) with
    the report's configuration (intervals everywhere) and the model's training splits left out of the
    verdict, plus the hashes of its inputs (``metrics_inputs``), so ``factatlas report`` can reuse it.
    ``rankings.parquet`` (and the template-only file) must already be written in ``out_dir``."""
    from factatlas.probe.evaluate import VALIDATION_BOOTSTRAP, MetricsConfig, compute_metrics, metrics_inputs

    metrics = compute_metrics(rankings, bench, MetricsConfig(bootstrap=VALIDATION_BOOTSTRAP),
                              template_only_rows=template_rows, trained_on=trained_on)
    t_path = out_dir / "rankings_template_only.parquet" if template_rows is not None else None
    metrics["inputs"] = metrics_inputs(out_dir / "rankings.parquet", t_path, bench.path, trained_on)
    path = out_dir / "metrics.json"
    write_json(path, metrics)
    return path


def read_probe_info(folder: Path) -> dict[str, Any] | None:
    """``folder/probe.json`` as the object probe wrote, None when there is none; cut short, not JSON or not an
    object: an error naming it and the fix (every reader of probe.json comes here)."""
    from factatlas.atomic import read_json

    path = Path(folder) / "probe.json"
    if not path.is_file():
        return None
    fix = f"probe the model again (`factatlas probe RUN --model ... --out-name {Path(folder).name}`)"
    info = read_json(path, fix)
    if not isinstance(info, dict):
        raise ModelFolderError(f"{path}: expected a JSON object, found {type(info).__name__}; {fix}")
    return info


def recorded_training_splits(info: Mapping[str, Any]) -> list[str] | None:
    """The splits a probe.json says its model was trained on (the tiny model's recipe, or
    ``trained_on_splits`` written for any model); None when it records none."""
    recorded = info.get("trained_on_splits", (info.get("tiny_model") or {}).get("trained_on_splits"))
    return None if recorded is None else list(recorded)


def trained_splits(folder: Path) -> list[str] | None:
    """The splits the model of ``folder`` was trained on, as its probe.json records them (the tiny model's
    recipe, or ``trained_on_splits`` written for any model); None when nothing is recorded."""
    path = folder / "probe.json"
    info = read_probe_info(folder)
    if info is None:
        return None
    try:
        splits = recorded_training_splits(info)
        valid = splits is None or all(isinstance(s, str) for s in splits)
    except (AttributeError, TypeError):  # not a mapping, or not a list, where one belongs
        valid = False
    if not valid:
        raise FactatlasError(f"{path}: the training splits it records are not a list of split names; probe the "
                             "model again, or pass --trained-on SPLIT")
    return splits
