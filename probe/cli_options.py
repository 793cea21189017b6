"""Command-line options generated from their declarations (``factatlas.probe.options.Option``): a command
declares its own arguments and takes every declared option in ``**flags``, so an option exists once, with one
help and one validation, in every command that offers it, and a rule, backend or engine registered later
(another package, a test) brings its options to the command line without an edit here."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, Optional

import typer

from factatlas.probe.options import Option


def option_parameter(option: Option) -> inspect.Parameter:
    """A keyword parameter for typer: default None (so only what was typed counts as given), the declared
    default shown in the help."""
    shown = "" if option.default in (None, (), False) else f" (default: {_default(option.default)})"
    decls = [option.flag, *([option.short] if option.short else [])]
    text = option.help() if callable(option.help) else option.help  # a list of what is registered now
    info = typer.Option(None, *decls, help=text + shown, metavar=option.metavar, show_default=False)
    return inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=info,
                             annotation=Optional[option.cli_type])  # noqa: UP045 (typer reads the annotation)


def _default(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


class OptionCommand:
    """A command function whose ``**flags`` become the options ``sources()`` yields at the time the command
    line is parsed (typer reads the signature on every call)."""

    def __init__(self, fn: Callable[..., Any], sources: Callable[[], Iterable[Option]],
                 exclude: Iterable[str] = ()):
        self.fn, self.sources, self.exclude = fn, sources, frozenset(exclude)
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__

    def options(self) -> list[Option]:
        own = {p for p in inspect.signature(self.fn).parameters}
        seen: dict[str, Option] = {}
        for option in self.sources():
            if option.name in own or option.name in self.exclude:
                continue
            if seen.setdefault(option.name, option) is not option and seen[option.name].flag != option.flag:
                raise ValueError(f"{option.flag}: two declarations under one name")
        return list(seen.values())

    @property
    def __signature__(self) -> inspect.Signature:
        base = [p for p in inspect.signature(self.fn, eval_str=True).parameters.values() if p.kind != p.VAR_KEYWORD]
        return inspect.Signature([*base, *(option_parameter(o) for o in self.options())])

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        names = {o.name for o in self.options()}
        flags = {k: (None if v in ([], ()) else v) for k, v in kwargs.items() if k in names}  # a repeatable left out
        own = {k: v for k, v in kwargs.items() if k not in names}
        return self.fn(*args, **own, **flags)


def probe_options() -> list[Option]:
    """Every option of ``factatlas probe``: the run's, every rule's, every backend's and every engine's."""
    from factatlas.probe.backends import BACKENDS
    from factatlas.probe.engines import ENGINES
    from factatlas.probe.rule import rule_options_declared
    from factatlas.probe.settings import RUN_OPTIONS

    out = list(RUN_OPTIONS)
    out += rule_options_declared().values()
    for entries in (BACKENDS, ENGINES):
        for entry in entries.values():
            out += entry.options.declared().values()
    return out


def backend_options() -> list[Option]:
    """Every backend's options (the judge's command line: where the judge model runs)."""
    from factatlas.probe.backends import BACKENDS

    return [o for b in BACKENDS.values() for o in b.options.declared().values()]
