"""One registry shape: an entry chosen by name with its typed options (factatlas.registry.Spec), which the
scoring rule, the backend and the engine of a probe share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

from factatlas.errors import ConfigError
from factatlas.registry import Registry, Spec


@dataclass(frozen=True)
class _Width:
    cm: int = 1

    def to_json(self) -> dict:
        return {"cm": self.cm}

    @classmethod
    def from_json(cls, data) -> _Width:
        return cls(int((data or {}).get("cm", 1)))


@dataclass(frozen=True)
class _Tool:
    name: str
    options: type = _Width


TOOLS: Registry[_Tool] = Registry("tool")
TOOLS.register("saw", _Tool("saw"))
TOOLS.register("plane", _Tool("plane"))


@dataclass(frozen=True)
class _ToolSpec(Spec):
    registry: ClassVar[Registry[_Tool]] = TOOLS
    default: ClassVar[str | None] = "saw"

    name: str = "saw"
    options: _Width = _Width()


@dataclass(frozen=True)
class _RequiredSpec(_ToolSpec):
    default: ClassVar[str | None] = None


def test_a_spec_round_trips_its_record_and_reads_the_options_through_its_entry():
    spec = _ToolSpec("plane", _Width(3))
    assert spec.to_json() == {"name": "plane", "options": {"cm": 3}}
    assert _ToolSpec.from_json(spec.to_json()) == spec and spec.entry is TOOLS["plane"]
    assert _ToolSpec.from_json({}) == _ToolSpec("saw", _Width(1))  # no name: the default entry
    with pytest.raises(KeyError):
        _RequiredSpec.from_json({"options": {"cm": 2}})  # a spec without a default needs the name
    with pytest.raises(ConfigError, match="unknown tool 'plan'. Did you mean 'plane'"):
        _ToolSpec.from_json({"name": "plan"})


def test_the_rule_the_backend_and_the_engine_are_specs_of_their_registries():
    from factatlas.probe.backends import BACKENDS, BackendSpec, LocalOptions
    from factatlas.probe.engines import ENGINES, EngineSpec, RayOptions
    from factatlas.probe.rule import RULES, RuleSpec

    assert (BackendSpec.registry, EngineSpec.registry, RuleSpec.registry) == (BACKENDS, ENGINES, RULES)
    local = BackendSpec("local", LocalOptions(device="cpu"))
    assert BackendSpec.from_json(local.to_json()) == local and local.backend is BACKENDS["local"]
    ray = EngineSpec("ray", RayOptions(ray_actors=3))
    assert EngineSpec.from_json(ray.to_json()) == ray and ray.engine is ENGINES["ray"]
    assert BackendSpec.from_json({}) == BackendSpec() and EngineSpec.from_json({}) == EngineSpec()
    rule = RuleSpec.from_json({"name": "mlm-independent"})
    assert rule.rule is RULES["mlm-independent"]
    assert rule.to_json()["family"] == RULES["mlm-independent"].family  # the rule's record says more
    assert RuleSpec.from_json(rule.to_json()) == rule
