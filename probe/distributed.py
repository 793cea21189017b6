"""``--engine ray``: a probe as a Ray Data pipeline, one model replica per actor (per GPU when there are GPUs).

The prompts are split by today's stable ``shard_of`` into ``shards`` parts; a dataset of shard indices is
mapped (``map_batches``, batch size 1) over an actor pool; each actor loads the model once and runs the
ordinary single-process probe on its shards with ``--shard i/n``, writing
``rankings.shard-i-of-n.parquet`` next to where the result belongs. The driver then merges them with the
same ``merge_shards`` as manual sharding and writes metrics.json: the rankings are those of a
single-process run.

Network hygiene for a local instance (the quickstart and the tests): Ray's own processes are not covered
by the test suite's socket guard, so ``local_ray_env`` sets ``RAY_USAGE_STATS_ENABLED=0``,
``RAY_AUTH_MODE=disabled`` (else a token is written under the home folder),
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (node IP = loopback, no probe of a public DNS server) and a HOME
holding a local-provider ``ray_bootstrap_config.yaml`` (else the dashboard probes cloud metadata
addresses), and ``ray.init`` gets ``_node_ip_address="127.0.0.1"`` and no dashboard.
With ``--ray-address`` the probe joins an existing cluster instead (see docs/probe.md); the run folder
must then be on storage every node sees.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from factatlas.errors import ConfigError

BOOTSTRAP = "cluster_name: factatlas-local\nprovider:\n  type: local\n  head_ip: 127.0.0.1\n"


def local_ray_env(home: Path) -> dict[str, str]:
    """Environment for a loopback-only local Ray (set before ``ray.init`` starts its processes)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "ray_bootstrap_config.yaml").write_text(BOOTSTRAP, "utf-8")
    return {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
            "HOME": str(home)}


def start_ray(address: str | None, num_cpus: int | None, work: Path) -> None:
    """Join ``address``, or start a loopback-only local instance. The environment is set before Ray is
    imported: some of its constants (the node-IP rule) are read at import time."""
    if not address:
        os.environ.update(local_ray_env(work / "ray-home"))
    try:
        import ray
    except ImportError as e:
        raise ConfigError("--engine ray needs Ray Data: pip install 'factatlas[ray]' (ray[data])") from e
    if ray.is_initialized():
        return
    if address:
        ray.init(address=address, log_to_driver=False)
        return
    import tempfile

    # Ray's session folder holds UNIX sockets (paths of at most 107 bytes): a short folder under the temp dir
    ray.init(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
             _temp_dir=tempfile.mkdtemp(prefix="fa-ray-"))


class ShardWorker:
    """One actor: one model replica; probes the shards it is given with the single-process code."""

    def __init__(self, run: str, config: Any, path: str, model_name: str, shards: int):
        from factatlas.probe.models import load_model

        self.run, self.config, self.shards = run, config, shards
        lm = load_model(path, family=config.family, device=config.device, dtype=config.dtype,
                        device_map=config.device_map)
        self.lm = replace(lm, name=model_name)

    def __call__(self, batch: dict) -> dict:
        from factatlas.probe.runner import probe_benchmark

        done = []
        for index in batch["shard"]:
            config = replace(self.config, shard=(int(index), self.shards), engine="local")
            outcome = probe_benchmark(self.run, config, lm=self.lm, merge=False)
            done.append(int(outcome.counts.get("prompts/scored", 0)))
        return {"shard": list(batch["shard"]), "scored": done}


def probe_with_ray(run: str | Path, config: Any):
    """The Ray Data pipeline; returns the runner's ProbeOutcome for the merged result."""
    from transformers import AutoConfig

    from factatlas.probe.models import detect_family, model_slug
    from factatlas.probe.protocol import DEFAULT_SCORING
    from factatlas.probe.runner import (
        ProbeOutcome,
        _build_tiny,
        merge_shards,
        model_out_name,
        open_benchmark,
        recorded_training_splits,
        write_metrics,
    )

    if config.shard:
        raise ConfigError("--engine ray shards by itself (--ray-shards); drop --shard")
    benchmark, run_dir = open_benchmark(run)
    rows = benchmark.prompts
    path, model_name, slug, tiny_info = config.model, config.model, None, {}
    if config.model.startswith("tiny") and not Path(config.model).exists():
        path, tiny_info = _build_tiny(run_dir, rows, config)  # built once, on the driver
        slug = tiny_info["slug"]
    family = config.family or detect_family(AutoConfig.from_pretrained(path))
    scoring = config.scoring or DEFAULT_SCORING[family]
    if slug is None:
        slug = model_slug(path)
        model_name = path
    out_name = config.out_name or model_out_name(slug, scoring, family)
    shards = config.ray_shards
    start_ray(config.ray_address, config.ray_cpus, run_dir / "probe" / "_ray")
    import ray.data
    import torch

    gpus = 1 if (config.device in ("auto", "cuda") and torch.cuda.is_available()) else 0
    worker_config = replace(config, scoring=scoring, out_name=out_name)
    ds = ray.data.from_items([{"shard": i} for i in range(shards)], override_num_blocks=shards)
    ds = ds.map_batches(ShardWorker, batch_size=1, num_gpus=gpus, num_cpus=0 if gpus else 0.5,
                        compute=ray.data.ActorPoolStrategy(size=config.ray_actors),
                        fn_constructor_kwargs={"run": str(run), "config": worker_config, "path": path,
                                               "model_name": model_name, "shards": shards})
    done = ds.take_all()
    out_dir = run_dir / "probe" / out_name
    merged = merge_shards(out_dir, shards)
    if merged is None:
        raise ConfigError(f"{out_dir}: {len(done)} of {shards} shards came back; rerun, or look for failed actors")
    rankings, template_rows = merged
    counts = {"prompts/scored": len(rankings), "ray/shards": shards, "ray/actors": config.ray_actors}
    outcome = ProbeOutcome(out_dir, out_dir / "rankings.parquet",
                           out_dir / "rankings_template_only.parquet" if template_rows is not None else None,
                           None, counts)
    outcome.metrics_path = write_metrics(out_dir, rankings, template_rows, benchmark,
                                         recorded_training_splits(tiny_info))
    from factatlas.rundir import RunDir

    outputs = [p for p in (outcome.rankings_path, outcome.template_only_path, outcome.metrics_path) if p]
    RunDir.open(run_dir).record_stage(f"probe/{out_name}", config={"engine": "ray", "shards": shards},
                                      counts=counts, outputs=outputs, extra={"model": model_name, "scoring": scoring})
    return outcome
