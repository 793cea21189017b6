"""How a probe is spread over processes, registered like the scoring rules: ``local`` (this process, or one
``--shard i/n`` of it; ``probe/probing.py``) and ``ray`` (a pool of Ray actors, one model replica each,
``probe/distributed.py``). An engine owns its typed options and runs a whole probe of a run directory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from factatlas.probe.options import NoOptions, Option, Options
from factatlas.registry import Registry, Spec


@dataclass(frozen=True)
class Engine:
    name: str
    summary: str
    options: type[Options]
    run: str | Callable[[Any, Any, Any], Any]  # (run dir, ProbeConfig, open Benchmark | None) -> ProbeOutcome;
    # "module:function" for one imported when a probe runs (the command line lists engines without them)

    def start(self, run: Any, config: Any, benchmark: Any) -> Any:
        fn = self.run
        if isinstance(fn, str):
            import importlib

            module, _, name = fn.partition(":")
            fn = getattr(importlib.import_module(module), name)
        return fn(run, config, benchmark)


ENGINES: Registry[Engine] = Registry("engine", group="factatlas.probe.engines")


def register_engine(engine: Engine) -> Engine:
    return ENGINES.register(engine.name, engine)


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


# the engines' code is named, not imported: a command line lists them without loading what they run
register_engine(Engine("local", "this process (or one --shard i/n of the run)", NoOptions,
                       "factatlas.probe.probing:run_local"))
register_engine(Engine("ray", "a pool of Ray actors, one model replica per actor/GPU (extra 'ray')", RayOptions,
                       "factatlas.probe.distributed:run_ray"))


@dataclass(frozen=True)
class EngineSpec(Spec):
    """An engine by name and its options (probe.json records both)."""

    registry: ClassVar[Registry[Engine]] = ENGINES
    default: ClassVar[str | None] = "local"

    name: str = "local"
    options: Options = NoOptions()

    @property
    def engine(self) -> Engine:
        return self.entry
