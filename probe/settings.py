"""The settings of one probe run: the model, the selection (languages, shard), the engine and the backend with
their options, and the scoring rule asked for. Rule, backend and engine options live in their own typed
classes (``factatlas.probe.rule``, ``backends``, ``engines``), each validated where it is declared.

``ProbeConfig.from_flags`` builds the settings from command-line values keyed by flag name, whichever
command or test passes them: an option of a backend, engine or rule that the run does not use is an error
naming the one that takes it, never silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from factatlas.errors import ConfigError
from factatlas.probe.backends import BACKENDS, BackendSpec
from factatlas.probe.engines import ENGINES, EngineSpec
from factatlas.probe.options import Option, options_from_flags
from factatlas.probe.rule import RuleRequest, RuleSpec
from factatlas.probe.selection import parse_langs, parse_out_name, parse_shard


# the run's own options (the rule's, the backend's and the engine's are declared by them)
def _scoring_help() -> str:
    from factatlas.probe.rule import RULES

    return f"Scoring rule (default: the family's; chat with --backend openai): {', '.join(RULES)}."


SCORING = Option("--scoring", None, _scoring_help, short="-s")
LANGS = Option("--langs", None, "Comma-separated languages (default: all).", parse=parse_langs)
SHARD = Option("--shard", None, "i/n: score shard i (0-based) of n; the last finished shard merges them.",
               parse=parse_shard)
TEMPLATE_ONLY = Option("--template-only/--no-template-only", True, "Also score the template-only baseline.",
                       cli_type=bool)
TINY_STEPS = Option("--tiny-steps", 300, "Fine-tuning steps of a tiny model.", cli_type=int, minimum=1)
OUT_NAME = Option("--out-name", None, "Folder name under probe/ (default: model slug, + '--<rule>' when the "
                  "rule is not the family's default).", parse=parse_out_name)
BACKEND = Option("--backend", "local", "local (transformers here) | openai (an OpenAI-compatible server: vLLM, "
                 "llama.cpp, TGI, ...).")
ENGINE = Option("--engine", "local", "local | ray (a pool of Ray actors, one model replica per actor/GPU; extra "
                "'ray').")
RUN_OPTIONS = (SCORING, LANGS, SHARD, TEMPLATE_ONLY, TINY_STEPS, OUT_NAME, BACKEND, ENGINE)


@dataclass(frozen=True)
class ProbeConfig:
    """What one probe runs. ``rule``: a ``RuleRequest`` (a name or None for the family's default, and the
    rule options given), or a rule name."""

    model: str  # local folder, Hub id, or "tiny" / "tiny-bert" / "tiny-gpt2" / "tiny-t5" / "tiny-chat"
    rule: RuleRequest = field(default_factory=RuleRequest)
    langs: tuple[str, ...] | None = None
    shard: tuple[int, int] | None = None  # (index, count), 0 <= index < count
    backend: BackendSpec = field(default_factory=BackendSpec)
    engine: EngineSpec = field(default_factory=EngineSpec)
    template_only: bool = True
    tiny_steps: int = 300
    out_name: str | None = None  # folder under probe/ (default: the model slug, + "--<rule>" if not default)
    shard_dir: str | None = None  # Ray actors: the folder their shard files go to (the driver's staging folder)

    def __post_init__(self) -> None:
        if isinstance(self.rule, str):
            object.__setattr__(self, "rule", RuleRequest(self.rule))
        elif isinstance(self.rule, RuleSpec):
            object.__setattr__(self, "rule", RuleRequest(self.rule.name, tuple(self.rule.options.given().items())))

    @classmethod
    def from_flags(cls, model: str, **flags: Any) -> ProbeConfig:
        """Settings from command-line values by flag name (``--xfactr-beam`` -> ``xfactr_beam``; None: not
        given). Each value is validated by the one declaration of its option."""
        run = {}
        for o in RUN_OPTIONS:
            value = flags.pop(o.name, None)
            run[o.name] = o.default if value is None else o.validate(value)
        backend, engine = BACKENDS.get_entry(run["backend"]), ENGINES.get_entry(run["engine"])
        rule_flags = _rule_flags(flags)
        _refuse_unused(flags, backend.name, engine.name)
        return cls(model, RuleRequest.from_flags(run["scoring"], rule_flags), run["langs"], run["shard"],
                   BackendSpec(backend.name, options_from_flags(backend.options, flags, f"--backend {backend.name}")),
                   EngineSpec(engine.name, options_from_flags(engine.options, flags, f"--engine {engine.name}")),
                   run["template_only"], run["tiny_steps"], run["out_name"])

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "scoring": self.rule.name, "langs": list(self.langs) if self.langs else None,
                "shard": list(self.shard) if self.shard else None, "backend": self.backend.to_json(),
                "engine": self.engine.to_json(), "template_only": self.template_only, "tiny_steps": self.tiny_steps,
                "out_name": self.out_name}


def _rule_flags(flags: dict[str, Any]) -> dict[str, Any]:
    """Take the rule options (of every registered rule) out of ``flags``."""
    from factatlas.probe.rule import rule_options_declared

    return {k: flags.pop(k) for k in list(flags) if k in rule_options_declared()}


def _refuse_unused(flags: Mapping[str, Any], backend: str, engine: str) -> None:
    """An option given for a backend or engine the run does not use is an error naming the one that takes it."""
    owners: dict[str, str] = {}
    for name, b in BACKENDS.items():
        for o in b.options.declared().values():
            owners.setdefault(o.name, f"--backend {name}")
    for name, e in ENGINES.items():
        for o in e.options.declared().values():
            owners.setdefault(o.name, f"--engine {name}")
    mine = {o.name for o in BACKENDS[backend].options.declared().values()} | \
        {o.name for o in ENGINES[engine].options.declared().values()}
    unknown = sorted(k for k in flags if k not in owners)
    if unknown:
        raise TypeError(f"ProbeConfig.from_flags: unknown option(s) {', '.join(unknown)}")
    unused = [k for k, v in flags.items() if v is not None and k not in mine]
    if unused:
        shown = {o.name: o.shown for b in BACKENDS.values() for o in b.options.declared().values()} | \
            {o.name: o.shown for e in ENGINES.values() for o in e.options.declared().values()}
        raise ConfigError("; ".join(f"{shown[k]}: an option of {owners[k]}, but this run uses --backend {backend} "
                                    f"and --engine {engine}" for k in unused))
