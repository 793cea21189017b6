"""How a probe is spread over processes, registered like the scoring rules: ``local`` (this process, or one
``--shard i/n`` of it) and ``ray`` (a Ray Data pipeline over an actor pool, ``probe/distributed.py``). An
engine owns its typed options and runs a whole probe of a run directory."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factatlas.probe.options import NoOptions, Option, Options
from factatlas.registry import Registry


@dataclass(frozen=True)
class RayOptions(Options):
    """The options of ``--engine ray``."""

    ray_address: str | None = Option("--ray-address", None, "ray: join this cluster (auto, ray://head:10001); "
                                     "default: a local one.").field()
    ray_actors: int = Option("--ray-actors", 2, "ray: model replicas (one per GPU on GPU nodes).", cli_type=int,
                             minimum=1).field()
    ray_shards: int = Option("--ray-shards", 8, "ray: units of work (stable prompt-id shards).", cli_type=int,
                             minimum=1).field()
    ray_cpus: int | None = Option("--ray-cpus", None, "ray: CPUs of the local instance.", cli_type=int,
                                  minimum=1).field()


@dataclass(frozen=True)
class Engine:
    name: str
    summary: str
    options: type[Options]
    run: Callable[[Any, Any, Any], Any]  # (run dir, ProbeConfig, open Benchmark | None) -> ProbeOutcome


ENGINES: Registry[Engine] = Registry("engine")


def register_engine(engine: Engine) -> Engine:
    return ENGINES.register(engine.name, engine)


def _local(run: str | Path, config: Any, benchmark: Any) -> Any:
    from factatlas.probe.probing import probe_here

    return probe_here(run, config, benchmark=benchmark)


def _ray(run: str | Path, config: Any, benchmark: Any) -> Any:
    from factatlas.probe.distributed import probe_with_ray

    return probe_with_ray(run, config)


register_engine(Engine("local", "this process (or one --shard i/n of the run)", NoOptions, _local))
register_engine(Engine("ray", "a Ray Data pipeline, one model replica per actor/GPU (extra 'ray')", RayOptions, _ray))


@dataclass(frozen=True)
class EngineSpec:
    """An engine by name and its options (probe.json records both)."""

    name: str = "local"
    options: Options = NoOptions()

    @property
    def engine(self) -> Engine:
        return ENGINES.get_entry(self.name)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "options": self.options.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EngineSpec:
        engine = ENGINES.get_entry(str(data.get("name", "local")))
        return cls(engine.name, engine.options.from_json(data.get("options")))
