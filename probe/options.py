"""Typed options, declared once: a flag, its default, its help and its validation in one ``Option``.

An ``Options`` dataclass (a scoring rule's, a backend's, an engine's) declares its fields with
``Option.field()``; constructing it validates every value through its ``Option`` (the one place an option
is validated), then the class's own cross-field ``check``. The command line is generated from the same
declarations (``probe/cli_options.py``), probe.json stores ``to_json()`` and reads it back with
``from_json``. Several option classes share a declaration (``--answer-langs`` is one ``Option`` used by
every open-answer rule) by using the same ``Option`` object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from factatlas.errors import ConfigError
from factatlas.probe.models import DEVICES, DTYPES, FAMILIES


@dataclass(frozen=True, eq=False)
class Option:
    """One command-line option: ``flag`` (a boolean's as ``--x/--no-x``), the default, the help, and the
    rule its values follow. ``cli_type`` is what the command line hands over (``list[str]`` for a repeatable
    option); ``parse`` turns that into the field's value (it raises ValueError with what was expected)."""

    flag: str
    default: Any
    help: str | Callable[[], str]  # a callable: text made when the help is shown (e.g. the rules registered)
    cli_type: Any = str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    positive: bool = False  # > 0 (a minimum of 0 excluded)
    parse: Callable[[Any], Any] | None = None
    metavar: str | None = None
    short: str | None = None  # e.g. "-s"

    @property
    def name(self) -> str:
        """The first flag's words: ``--xfactr-max-masks-lang`` -> ``xfactr_max_masks_lang``."""
        return self.flag.split("/")[0].lstrip("-").replace("-", "_")

    @property
    def shown(self) -> str:
        return self.flag.split("/")[0]

    def validate(self, value: Any) -> Any:
        """The field's value of ``value`` (parsed), or a ConfigError naming the flag and what it expects."""
        if value is None and self.default is None:  # an optional value left unset
            return None
        if self.parse is not None:
            try:
                value = self.parse(value)
            except ValueError as e:
                raise ConfigError(f"{self.shown} {_show(value)}: {e}") from None
        if self.choices and value not in self.choices:
            raise ConfigError(f"{self.shown} {value!r}: expected one of {', '.join(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise ConfigError(f"{self.shown} {value}: must be at least {_num(self.minimum)}")
        if self.positive and not value > 0:
            raise ConfigError(f"{self.shown} {value}: must be more than 0")
        return value

    def field(self) -> Any:
        """A dataclass field declared by this option (its default, the option in its metadata)."""
        default = self.default
        if isinstance(default, list | dict):
            raise TypeError(f"{self.flag}: a mutable default; use a tuple")
        return dataclasses.field(default=default, metadata={"option": self})


def _show(value: Any) -> str:
    if isinstance(value, list | tuple) and len(value) == 1:
        return repr(value[0])
    return repr(value)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True)
class Options:
    """Base of every options class: each field declared by an ``Option`` is validated on construction."""

    summary: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            option = f.metadata.get("option")
            if option is not None:
                object.__setattr__(self, f.name, option.validate(getattr(self, f.name)))
        self.check()

    def check(self) -> None:
        """Rules between fields (e.g. a beam needs an ordered initial prediction); raise ConfigError."""

    @classmethod
    def declared(cls) -> dict[str, Option]:
        """field name -> its Option, in declaration order."""
        return {f.name: f.metadata["option"] for f in dataclasses.fields(cls) if "option" in f.metadata}

    def to_json(self) -> dict[str, Any]:
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Options:
        """The options recorded in ``data`` (probe.json), by field name; keys of other options ignored (an old
        probe.json recorded every option of every rule in one flat ``config``); missing fields default."""
        data = data or {}
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: _tupled(v) for k, v in data.items() if k in names})

    def given(self) -> dict[str, Any]:
        """The fields whose value differs from the declared default."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != f.default}


@dataclass(frozen=True)
class NoOptions(Options):
    """A rule, backend or engine without options."""


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    return value


def _tupled(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tupled(v) for v in value)
    return value


def parse_lang_ints(items: Any) -> tuple[tuple[str, int], ...]:
    """``["ja=8", "zh=6"]`` -> (("ja", 8), ("zh", 6)); a repeated language keeps its last value. Pairs
    already parsed (read back from probe.json) pass through."""
    out: dict[str, int] = {}
    for item in [items] if isinstance(items, str) else items or ():
        if isinstance(item, list | tuple) and len(item) == 2:
            item = f"{item[0]}={item[1]}"
        lang, sep, value = str(item).partition("=")
        if not sep or not lang.strip() or not value.strip().isdigit() or int(value) < 1:
            raise ValueError(f"expected LANG=M with M a whole number >= 1, e.g. ja=8 (got {item!r})")
        out[lang.strip()] = int(value)
    return tuple(sorted(out.items()))


def options_from_flags(cls: type[Options], flags: Mapping[str, Any], owner: str) -> Options:
    """``cls`` built from command-line values keyed by flag name (``Option.name``); None means not given."""
    declared = cls.declared()
    by_flag = {o.name: name for name, o in declared.items()}
    values = {by_flag[k]: v for k, v in flags.items() if k in by_flag and v is not None}
    try:
        return cls(**values)
    except TypeError as e:  # a field without an Option and without a default: a programming error
        raise TypeError(f"{owner}: {e}") from e


# ---- declarations shared by several owners (each flag is declared here once) -----------------------

ANSWER_LANGS = Option("--answer-langs", "any", "open answers (generative, chat, xfactr): whose forms count as a "
                      "right answer: any | single (the prompt's language) | double (it and English).",
                      choices=("any", "single", "double"))
MAX_NEW_TOKENS = Option("--max-new-tokens", 16, "generative, chat: answer length limit in tokens.", cli_type=int,
                        minimum=1)
BATCH_TOKENS = Option("--batch-tokens", 8192, "Token budget per forward pass.", cli_type=int, minimum=1)
PREFETCH = Option("--prefetch/--no-prefetch", None, "Ranking rules: tokenize and plan the next chunk of prompts "
                  "on a second thread while the model scores this one; the scores are the same either way "
                  "(default: on for a model on an accelerator, off on CPU, where benchmarks/prefetch_speed.py "
                  "measured no gain).", cli_type=bool)
DEVICE = Option("--device", "auto", "auto | cpu | cuda.", choices=DEVICES)
DTYPE = Option("--dtype", "auto", "auto (bf16/fp16 on GPU, fp32 on CPU) | fp32 | bf16 | fp16.", choices=DTYPES)
FAMILY = Option("--family", None, "Override detection: mlm | causal | seq2seq.", choices=FAMILIES)
DEVICE_MAP = Option("--device-map", None, "auto: spread one model larger than a GPU over every GPU (accelerate; "
                    "extra 'gpu'); also balanced | sequential.")
