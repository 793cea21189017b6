"""``--engine ray``: a probe as a Ray Data pipeline, one model replica per actor (per GPU when there are GPUs).

The prompts are split by today's stable ``shard_of`` into ``shards`` parts; a dataset of shard indices is
mapped (``map_batches``, batch size 1) over an actor pool; each actor loads the model once and runs the
ordinary single-process probe on its shards with ``--shard i/n``, writing
``rankings.shard-i-of-n.parquet`` into the staging folder of the model folder (the driver holds the run
lock). The driver then merges them with the same ``merge_shards`` as manual sharding, removes the shard
files, writes probe.json and metrics.json and swaps the folder in whole: the rankings and the folder's shape
are those of a single-process run. A local Ray instance ends with the run (``stop_ray``): no worker outlives
it and its session folder is deleted.

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

import contextlib
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from factatlas.errors import ConfigError
from factatlas.probe.runner import ProbeOutcome, open_benchmark

BOOTSTRAP = "cluster_name: factatlas-local\nprovider:\n  type: local\n  head_ip: 127.0.0.1\n"


def local_ray_env(home: Path) -> dict[str, str]:
    """Environment for a loopback-only local Ray (set before ``ray.init`` starts its processes)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "ray_bootstrap_config.yaml").write_text(BOOTSTRAP, "utf-8")
    return {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
            "HOME": str(home)}


def start_ray(address: str | None, num_cpus: int | None, work: Path) -> str | None:
    """Join ``address``, or start a loopback-only local instance; returns the local instance's session folder
    (None when joining a cluster or when Ray was already running). The environment is set before Ray is
    imported: some of its constants (the node-IP rule) are read at import time."""
    if not address:
        os.environ.update(local_ray_env(work / "ray-home"))
    try:
        import ray
    except ImportError as e:
        raise ConfigError("--engine ray needs Ray Data: pip install 'factatlas[ray]' (ray[data])") from e
    if ray.is_initialized():
        return None
    if address:
        ray.init(address=address, log_to_driver=False)
        return None
    import tempfile

    # Ray's session folder holds UNIX sockets (paths of at most 107 bytes): a short folder under the temp dir
    temp_dir = tempfile.mkdtemp(prefix="fa-ray-")
    ray.init(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
             _temp_dir=temp_dir)
    return temp_dir


def stop_ray(temp_dir: str | None) -> list[int]:
    """End a local instance started by ``start_ray`` with the run: shut Ray down, stop whatever of its
    processes outlive the shutdown (actor workers linger for about a minute, re-parented to pid 1), and
    delete its session folder. Returns the pids that had to be killed. A joined cluster is left running."""
    import shutil

    import ray

    if temp_dir is None:
        if ray.is_initialized():
            ray.shutdown()
        return []
    import psutil  # a dependency of ray

    ours = psutil.Process().children(recursive=True)  # gcs, raylet, workers: all started by this driver
    ray.shutdown()
    # the workers of this session, wherever they were re-parented: their command lines name its folder
    for proc in psutil.process_iter(["pid", "cmdline"]):
        if proc.pid != os.getpid() and proc not in ours and any(temp_dir in a for a in proc.info["cmdline"] or ()):
            ours.append(proc)
    _, alive = psutil.wait_procs(ours, timeout=5)
    for proc in alive:
        with contextlib.suppress(psutil.NoSuchProcess):  # it ended meanwhile
            proc.kill()
    psutil.wait_procs(alive, timeout=5)
    shutil.rmtree(temp_dir, ignore_errors=True)
    return sorted(p.pid for p in alive)


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
    """The Ray Data pipeline; returns the runner's ProbeOutcome for the merged result. Holds the run lock
    throughout; the actors write their shards into the staging folder of the model folder, which the driver
    merges there (shard files removed) and swaps in whole: the same folder a single process writes."""
    from factatlas.rundir import RunDir

    if config.shard:
        raise ConfigError("--engine ray shards by itself (--ray-shards); drop --shard")
    _, run_dir = open_benchmark(run)
    with RunDir(run_dir).lock():
        return _probe_with_ray(run, config)


def _probe_with_ray(run: str | Path, config: Any):
    import json

    from transformers import AutoConfig

    from factatlas.probe.models import detect_family, model_slug
    from factatlas.probe.protocol import DEFAULT_SCORING
    from factatlas.probe.runner import (
        _build_tiny,
        fill_model_folder,
        merge_shards,
        merged_info,
        model_out_name,
        shard_suffix,
    )
    from factatlas.rundir import RunDir

    benchmark, run_dir = open_benchmark(run)
    path, model_name, slug, tiny_info = config.model, config.model, None, {}
    if config.model.startswith("tiny") and not Path(config.model).exists():
        path, tiny_info = _build_tiny(run_dir, benchmark.prompts, config)  # built once, on the driver
        slug = tiny_info["slug"]
    family = config.family or detect_family(AutoConfig.from_pretrained(path))
    scoring = config.scoring or DEFAULT_SCORING[family]
    if slug is None:
        slug = model_slug(path)
        model_name = path
    out_name = config.out_name or model_out_name(slug, scoring, family)
    shards = config.ray_shards
    name = f"probe/{out_name}"
    run_folder = RunDir(run_dir)
    with run_folder.replace_stage(name) as staging:
        temp_dir = start_ray(config.ray_address, config.ray_cpus, run_dir / "probe" / "_ray")
        try:
            import ray.data
            import torch

            gpus = 1 if (config.device in ("auto", "cuda") and torch.cuda.is_available()) else 0
            worker_config = replace(config, scoring=scoring, out_name=out_name, shard_dir=str(staging))
            ds = ray.data.from_items([{"shard": i} for i in range(shards)], override_num_blocks=shards)
            ds = ds.map_batches(ShardWorker, batch_size=1, num_gpus=gpus, num_cpus=0 if gpus else 0.5,
                                compute=ray.data.ActorPoolStrategy(size=config.ray_actors),
                                fn_constructor_kwargs={"run": str(run), "config": worker_config, "path": path,
                                                       "model_name": model_name, "shards": shards})
            done = ds.take_all()
        finally:
            stop_ray(temp_dir)
        merged = merge_shards(staging, shards)
        if merged is None:
            raise ConfigError(f"{run_dir / name}: {len(done)} of {shards} shards came back; rerun, or look for "
                              "failed actors")
        rankings, template_rows = merged
        last = json.loads((staging / f"probe{shard_suffix(shards - 1, shards)}.json").read_text("utf-8"))
        info = merged_info(staging, shards, last)
        info["counts"] = {**info["counts"], "ray/shards": shards, "ray/actors": config.ray_actors}
        info["config"] = {**info["config"], "engine": "ray", "shard_dir": None}
        for shard_file in staging.glob("*.shard-*-of-*"):
            shard_file.unlink()
        fill_model_folder(run_folder, staging, name, rankings, template_rows, info, benchmark)
    return ProbeOutcome(run_dir / name, run_dir / name / "rankings.parquet",
                        run_dir / name / "rankings_template_only.parquet" if template_rows is not None else None,
                        run_dir / name / "metrics.json", dict(info["counts"]))
