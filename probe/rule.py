"""The scoring rule as one unit: one registry entry per rule owns its typed options, its scorer factories
(in this process and behind a server), its answer matcher and what it needs of the model.

A new rule is one module that calls ``register_rule(Rule(...))``; the runner, the command line (its options
are generated from the rule's ``Options``), probe.json (``RuleSpec``) and the judge and report (which read
the same ``RuleSpec`` back) need no edit. The built-in rules live in ``factatlas.probe.rules.*``; another
package registers its own through the entry-point group ``factatlas.probe.rules``.

``RuleRequest`` is what a user asked for (a rule name, or None for the model family's default, and the
options given); ``RuleRequest.resolve(family)`` makes the ``RuleSpec`` a run records: the rule's name and
its complete, validated options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from factatlas.errors import ConfigError
from factatlas.probe.options import NoOptions, Options
from factatlas.registry import Registry, Spec

BUILTIN_RULES = ("factatlas.probe.rules.masked", "factatlas.probe.rules.causal", "factatlas.probe.rules.seq2seq",
                 "factatlas.probe.rules.generative", "factatlas.probe.rules.chat", "factatlas.probe.rules.xfactr")


@dataclass(frozen=True)
class Rule:
    """One scoring rule. ``local(lm, options, backend_options)`` and ``remote(model, options, client)`` make
    its scorer (a ``CandidateScorer`` for ``kind="rank"``, a generator for ``kind="generate"``); a rule
    without ``remote`` is not served over HTTP. Open-answer rules give ``answer(scorer, prompts, job)`` (the
    rows, matched by ``lenient`` or exact alias matching). ``check(options, splits)`` runs before any model
    loads, with only the benchmark's split names."""

    name: str
    family: str  # "mlm" | "causal" | "seq2seq" | "any": the model family the rule needs
    kind: str  # "rank" (closed candidate set) | "generate" (open answers, matched afterwards)
    summary: str
    options: type[Options] = NoOptions
    local: Callable[[Any, Any, Any], Any] | None = None
    remote: Callable[[Any, Any, Any], Any] | None = None
    answer: Callable[[Any, Sequence[Any], Any], list[Any]] | None = None
    lenient: bool = False  # open answers: an alias occurring in the answer counts (else: equal to it)
    prompts: str = "cloze"  # "cloze" | "question" (cloze prompts cut at the slot when there are none)
    needs: frozenset[str] = field(default_factory=frozenset)  # of the model: "tokenizer", "log-probs", "chat-template"
    default_for: tuple[str, ...] = ()  # the families whose default rule this is
    check: Callable[[Any, Sequence[str]], None] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("rank", "generate"):
            raise ValueError(f"rule '{self.name}': kind must be rank or generate, not {self.kind!r}")
        if self.prompts not in ("cloze", "question"):
            raise ValueError(f"rule '{self.name}': prompts must be cloze or question, not {self.prompts!r}")
        if self.kind == "generate" and self.answer is None:
            raise ValueError(f"rule '{self.name}': an open-answer rule needs an answer function")
        if self.local is None and self.remote is None:
            raise ValueError(f"rule '{self.name}': no scorer factory (local or remote)")

    @property
    def open_answer(self) -> bool:
        return self.kind == "generate"


RULES: Registry[Rule] = Registry("scoring rule", BUILTIN_RULES, group="factatlas.probe.rules")


def register_rule(rule: Rule) -> Rule:
    """Register ``rule``; its options' flags must not clash with another rule's (one declaration per flag)."""
    mine = rule.options.declared()
    for other in RULES.values():
        for name, option in other.options.declared().items():
            for own_name, own in mine.items():
                if own.flag == option.flag and (own is not option or own_name != name):
                    raise ValueError(f"rule '{rule.name}' declares {own.flag} again; use the declaration of rule "
                                     f"'{other.name}' (one Option object, one field name)")
    return RULES.register(rule.name, rule)


def rule_named(name: str) -> Rule:
    return RULES.get_entry(name)


def default_rule(family: str) -> str:
    for rule in RULES.values():
        if family in rule.default_for:
            return rule.name
    raise ConfigError(f"no default scoring rule for a {family} model; pass --scoring")


def default_rules() -> dict[str, str]:
    """family -> its default rule (``protocol.DEFAULT_SCORING``)."""
    return {family: r.name for r in RULES.values() for family in r.default_for}


def rule_for_family(name: str, family: str) -> Rule:
    rule = rule_named(name)
    if rule.family not in ("any", family):
        fits = sorted(r.name for r in RULES.values() if r.family in ("any", family))
        raise ConfigError(f"scoring rule '{name}' needs a {rule.family} model, but the model is {family}; "
                          f"use one of: {', '.join(fits)}")
    return rule


@dataclass(frozen=True)
class AnswerJob:
    """What an open-answer rule's ``answer`` gets besides its scorer and prompts."""

    model: str  # the model name the rows record
    spec: RuleSpec
    aliases: Any  # generative.LanguageAliases: the forms that count, seen from each prompt's language
    every_prompt: Sequence[Any]  # the benchmark's prompts (chat examples come from every split)
    counts: Any = None  # a Counter for the rule's own counts (None: not counted, e.g. the baseline)
    progress: Callable[[int], None] | None = None


@dataclass(frozen=True)
class RuleSpec(Spec):
    """The rule a run used and its complete options: what probe.json records and judge and report read."""

    registry: ClassVar[Registry[Rule]] = RULES

    name: str
    options: Options = field(default_factory=NoOptions)

    @property
    def rule(self) -> Rule:
        return self.entry

    @property
    def answer_langs(self) -> str:
        """Whose forms an open answer may match (``--answer-langs``): the rule's option, "any" for a rule
        without one."""
        return str(getattr(self.options, "answer_langs", "any"))

    def to_json(self) -> dict[str, Any]:
        rule = self.rule
        return {**super().to_json(), "family": rule.family, "kind": rule.kind, "summary": rule.summary}


def recorded_rule(info: Mapping[str, Any], where: str = "probe.json") -> RuleSpec:
    """The RuleSpec a probe.json records: ``rule`` with its ``options`` (this version); from older files, the
    rule's name and its options picked by field name from the flat ``config`` they recorded every option in."""
    rule = info.get("rule")
    if isinstance(rule, Mapping) and "options" in rule:
        return RuleSpec.from_json(rule)
    config = info.get("config") if isinstance(info.get("config"), Mapping) else {}
    name = rule.get("name") if isinstance(rule, Mapping) else None
    name = name or config.get("scoring") or str(info.get("scoring") or "").split("+")[0]
    if not name:
        raise ConfigError(f"{where}: records no scoring rule; probe the model again")
    entry = rule_named(name)
    return RuleSpec(entry.name, entry.options.from_json(config))


@dataclass(frozen=True)
class RuleRequest:
    """What was asked: a rule name (None: the model family's default) and the rule options given on the
    command line, already validated by their declarations (``given``: field name -> value)."""

    name: str | None = None
    given: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def from_flags(cls, name: str | None, flags: Mapping[str, Any]) -> RuleRequest:
        """The rule options among command-line ``flags`` (keyed by ``Option.name``; None: not given), each
        validated by the one Option that declares it, whichever rule it belongs to."""
        declared = {o.name: (f, o) for r in RULES.values() for f, o in r.options.declared().items()}
        given = []
        for key, value in flags.items():
            if value is None or key not in declared:
                continue
            field_name, option = declared[key]
            given.append((field_name, option.validate(value)))
        if name is not None:
            rule_named(name)
        return cls(name, tuple(given))

    def resolve(self, family: str) -> RuleSpec:
        """The spec for a model of ``family``: the rule (named or the family's default), checked against the
        family, with its options; an option given that the rule does not take is an error."""
        rule = rule_for_family(self.name or default_rule(family), family)
        declared = rule.options.declared()
        foreign = [name for name, _ in self.given if name not in declared]
        if foreign:
            flags = ", ".join(_flag_of(name) for name in foreign)
            own = ", ".join(o.shown for o in declared.values()) or "none"
            raise ConfigError(f"{flags}: not an option of scoring rule '{rule.name}' (its options: {own}); drop "
                              f"{'it' if len(foreign) == 1 else 'them'} or choose the rule that takes "
                              f"{'it' if len(foreign) == 1 else 'them'} with --scoring")
        return RuleSpec(rule.name, rule.options(**dict(self.given)))


def _flag_of(field_name: str) -> str:
    for rule in RULES.values():
        option = rule.options.declared().get(field_name)
        if option is not None:
            return option.shown
    return field_name


def rule_options_declared() -> dict[str, Any]:
    """Every rule option once, by flag name (``Option.name`` -> Option): what the command line offers."""
    out: dict[str, Any] = {}
    for rule in RULES.values():
        for option in rule.options.declared().values():
            out.setdefault(option.name, option)
    return out
