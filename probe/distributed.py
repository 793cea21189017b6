"""``--engine ray``: a probe over a pool of Ray actors, one model replica per actor (per GPU when there are GPUs).

The prompts are split by today's stable ``shard_of`` into ``shards`` parts; the shard indices are handed to
a pool of plain Ray actors (``ray.util.ActorPool``), each index to the next actor that is free; each actor
loads the model once and runs the ordinary single-process probe on its shards with ``--shard i/n``, writing
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from factatlas.errors import ConfigError, FactatlasError
from factatlas.probe.model_folder import ProbeOutcome
from factatlas.probe.selection import open_benchmark

RAY_START_FIX = ("check that the temp folder (TMPDIR) is writable and has a short path (Ray's sockets live in it, "
                 "107 bytes at most), that the machine has free memory and ports, or join a running cluster "
                 "with --ray-address")


class RayStartError(FactatlasError):
    """Ray could not start; whatever it had made (processes, its session folder) is gone."""


BOOTSTRAP = "cluster_name: factatlas-local\nprovider:\n  type: local\n  head_ip: 127.0.0.1\n"


def local_ray_env(home: Path) -> dict[str, str]:
    """Environment for a loopback-only local Ray (set before ``ray.init`` starts its processes)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "ray_bootstrap_config.yaml").write_text(BOOTSTRAP, "utf-8")
    return {"RAY_USAGE_STATS_ENABLED": "0", "RAY_AUTH_MODE": "disabled", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
            "HOME": str(home)}

RAY_JOIN_FIX = ("check that the cluster is up and the address is its head's (ray://HOST:10001 needs "
                "pip install 'ray[client]'), or drop --ray-address to start a local instance")


def head_address(address: str) -> tuple[str, int] | None:
    """(host, port) of ``ray://HOST:PORT`` or ``HOST:PORT``; None for what only Ray can resolve ("auto", a
    ``local`` address, a bare host)."""
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def head_unreachable(address: str, timeout_s: float = 5.0) -> str | None:
    """Why nothing answers at the cluster head's address (a TCP connection refused or timed out), or None."""
    import socket

    where = head_address(address)
    if where is None:
        return None
    try:
        with socket.create_connection(where, timeout=timeout_s):
            return None
    except OSError as e:
        return f"nothing answers at {where[0]}:{where[1]}: {e.strerror or type(e).__name__}"


def start_ray(address: str | None, num_cpus: int | None, work: Path) -> str | None:
    """Join ``address``, or start a loopback-only local instance; returns the local instance's session folder
    (None when joining a cluster or when Ray was already running). The environment is set before Ray is
    imported: some of its constants (the node-IP rule) are read at import time."""
    if not address:
        os.environ.update(local_ray_env(work / "ray-home"))
    try:
        import ray
    except ImportError as e:
        raise ConfigError("--engine ray needs Ray: pip install 'factatlas[ray]'") from e
    if ray.is_initialized():
        return None
    if address:
        unreachable = head_unreachable(address)
        if unreachable:  # Ray itself waits minutes on a head that is not there before it says so
            raise RayStartError(f"--engine ray: cannot join the Ray cluster at {address} ({unreachable}); "
                                f"{RAY_JOIN_FIX}")
        try:
            ray.init(address=address, log_to_driver=False)
        except Exception as e:  # a cluster that cannot be joined (down, a wrong address, no ray[client]): one line
            first = (str(e).strip().splitlines() or [""])[0][:300]
            raise RayStartError(f"--engine ray: cannot join the Ray cluster at {address} ({type(e).__name__}: "
                                f"{first}); {RAY_JOIN_FIX}") from None
        return None
    import tempfile

    # Ray's session folder holds UNIX sockets (paths of at most 107 bytes): a short folder under the temp dir
    try:
        temp_dir = tempfile.mkdtemp(prefix="fa-ray-")
    except OSError as e:
        raise RayStartError(f"--engine ray: cannot make Ray's session folder in {tempfile.gettempdir()} "
                            f"({e.strerror}); {RAY_START_FIX}") from None
    try:
        ray.init(num_cpus=num_cpus, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                 _temp_dir=temp_dir)
    except Exception as e:  # whatever Ray raises on a failed start: one line, and nothing of it left behind
        stop_ray(temp_dir)
        first = (str(e).strip().splitlines() or [""])[0][:300]
        raise RayStartError(f"--engine ray: the local Ray instance did not start ({type(e).__name__}: {first}); "
                            f"{RAY_START_FIX}") from None
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
    import psutil  # ray vendors it (ray/thirdparty_files) and puts it on its path at import

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
        local = config.backend.options
        lm = load_model(path, family=local.family, device=local.device, dtype=local.dtype,
                        device_map=local.device_map)
        self.lm = replace(lm, name=model_name)

    def probe(self, index: int) -> tuple[int, int]:
        """Shard ``index``: its rankings written into the staging folder; (index, prompts scored)."""
        from factatlas.probe.probing import probe_here

        config = replace(self.config, shard=(index, self.shards))
        outcome = probe_here(self.run, config, lm=self.lm, merge=False)
        return index, int(outcome.counts.get("prompts/scored", 0))


def probe_with_ray(run: str | Path, config: Any):
    """The probe over Ray actors; returns the runner's ProbeOutcome for the merged result. Holds the run lock
    throughout; the actors write their shards into the staging folder of the model folder, which the driver
    merges there (shard files removed) and swaps in whole: the same folder a single process writes."""
    from factatlas.rundir import RunDir

    if config.shard:
        raise ConfigError("--engine ray shards by itself (--ray-shards); drop --shard")
    if config.backend.name != "local":
        raise ConfigError(f"--engine ray runs the model in its actors (--backend local), not --backend "
                          f"{config.backend.name}; drop one of them")
    from factatlas.probe.probing import checked_rule

    benchmark, run_dir = open_benchmark(run)
    spec = checked_rule(config, benchmark)  # before the lock, a model or Ray: a refused run leaves nothing
    with RunDir(run_dir).lock():
        return _probe_with_ray(run, config, spec, benchmark, run_dir)


@dataclass(frozen=True)
class RayJob:
    """What the driver settles before Ray starts: the model's folder and name, the rule and the folder name."""

    path: str
    model_name: str
    out_name: str
    worker_config: Any


def _plan(config: Any, spec, benchmark, run_dir: Path) -> RayJob:
    """The model's folder and name (a tiny model built once, on the driver) and the folder name."""
    from factatlas.probe.backends import build_tiny, is_tiny
    from factatlas.probe.models import model_slug
    from factatlas.probe.probing import model_out_name
    from factatlas.probe.rule import RuleRequest

    family = config.backend.backend.family(config.model, config.backend.options)
    path, model_name = config.model, config.model
    if is_tiny(config.model):
        system = getattr(spec.options, "system_prompt", None)
        path, tiny_info = build_tiny(run_dir, benchmark.prompts, config.model, config.tiny_steps, system)
        slug = tiny_info["slug"]
    else:
        slug = model_slug(path)
    out_name = config.out_name or model_out_name(slug, spec.name, family)
    request = RuleRequest(spec.name, tuple(spec.options.given().items()))
    worker = replace(config, rule=request, out_name=out_name, engine=type(config.engine)())
    return RayJob(path, model_name, out_name, worker)


def _probe_with_ray(run: str | Path, config: Any, spec, benchmark, run_dir: Path):
    from factatlas.probe.model_folder import fill_model_folder
    from factatlas.rundir import RunDir

    job = _plan(config, spec, benchmark, run_dir)
    options = config.engine.options
    name = f"probe/{job.out_name}"
    run_folder = RunDir(run_dir)
    made = [f for f in (run_dir / "probe", run_dir / "probe" / "_ray") if not f.exists()]
    try:
        with run_folder.replace_stage(name) as staging:
            done = _run_actors(run, config, job, staging, run_dir)
            rankings, template_rows, info = _merge(staging, options.ray_shards, len(done), run_dir / name)
            info["counts"] = {**info["counts"], "ray/shards": options.ray_shards, "ray/actors": options.ray_actors}
            info["config"] = {**info["config"], "engine": config.engine.to_json()}
            fill_model_folder(run_folder, staging, name, rankings, template_rows, info, benchmark)
    except BaseException:
        _remove_made(made)
        raise
    return ProbeOutcome(run_dir / name, run_dir / name / "rankings.parquet",
                        run_dir / name / "rankings_template_only.parquet" if template_rows is not None else None,
                        run_dir / name / "metrics.json", dict(info["counts"]))


def _remove_made(made: list[Path]) -> None:
    """After a failed Ray probe: Ray's HOME folder when this run made it, then probe/ when this run made it
    and nothing else is in it (a refused start-up leaves the run as it was)."""
    import shutil

    for folder in reversed(made):
        if folder.name == "_ray":
            shutil.rmtree(folder, ignore_errors=True)
        elif folder.is_dir() and not any(folder.iterdir()):
            with contextlib.suppress(OSError):
                folder.rmdir()


def _run_actors(run: str | Path, config: Any, job: RayJob, staging: Path, run_dir: Path) -> list:
    """Start (or join) Ray, hand the shards to a pool of actors as they free up, and end a local instance
    whatever happens. Plain actors (``ray.util.ActorPool``), not a Ray Data pipeline: the same one model
    load per actor, without Ray Data's executor and its start-up (a minute of a two-core machine)."""
    options = config.engine.options
    temp_dir = start_ray(options.ray_address, options.ray_cpus, run_dir / "probe" / "_ray")
    try:
        import ray
        import torch
        from ray.util import ActorPool

        device = config.backend.options.device
        gpus = 1 if (device in ("auto", "cuda") and torch.cuda.is_available()) else 0
        worker_config = replace(job.worker_config, shard_dir=str(staging))
        shards = options.ray_shards
        actor = ray.remote(num_gpus=gpus, num_cpus=0 if gpus else 0.5)(ShardWorker)
        actors = [actor.remote(run=str(run), config=worker_config, path=job.path, model_name=job.model_name,
                               shards=shards) for _ in range(min(options.ray_actors, shards))]
        pool = ActorPool(actors)
        return list(pool.map_unordered(lambda worker, index: worker.probe.remote(index), range(shards)))
    finally:
        stop_ray(temp_dir)


def _merge(staging: Path, shards: int, returned: int, folder: Path):
    """The merged rows and probe.json of the shard files in ``staging`` (then removed)."""
    import json

    from factatlas.probe.model_folder import merge_shards, merged_info, shard_suffix

    merged = merge_shards(staging, shards)
    if merged is None:
        raise ConfigError(f"{folder}: {returned} of {shards} shards came back; rerun, or look for failed actors")
    rankings, template_rows = merged
    last = json.loads((staging / f"probe{shard_suffix(shards - 1, shards)}.json").read_text("utf-8"))
    info = merged_info(staging, shards, last)
    for shard_file in staging.glob("*.shard-*-of-*"):
        shard_file.unlink()
    return rankings, template_rows, info


def run_ray(run: str | Path, config: Any, benchmark: Any = None):
    """The ``ray`` engine's entry (``factatlas.probe.engines``)."""
    return probe_with_ray(run, config)
