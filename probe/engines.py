"""How a probe is spread over processes, registered like the scoring rules: ``local`` (this process, or one
``--shard i/n`` of it; ``probe/probing.py``) and ``ray`` (a Ray Data pipeline over an actor pool,
``probe/distributed.py``). An engine owns its typed options and runs a whole probe of a run directory."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from factatlas.probe.options import NoOptions, Options
from factatlas.registry import Registry


@dataclass(frozen=True)
class Engine:
    name: str
    summary: str
    options: type[Options]
    run: Callable[[Any, Any, Any], Any]  # (run dir, ProbeConfig, open Benchmark | None) -> ProbeOutcome


# the engines register where they are implemented: local in ``probing`` (one probe in this process), ray in
# ``distributed``; loaded on first use, so that this module (and the settings) import neither
ENGINES: Registry[Engine] = Registry("engine", ("factatlas.probe.probing", "factatlas.probe.distributed"),
                                     group="factatlas.probe.engines")


def register_engine(engine: Engine) -> Engine:
    return ENGINES.register(engine.name, engine)


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
