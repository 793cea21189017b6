"""Checks of command-line option values, run while the command line is parsed (issue 42).

Each is a typer ``callback``: it sees the value as soon as the option is read, before the command's body
opens, locks or reads anything, and refuses a value the command could not honour with a ``ConfigError``
(`error: --max-retry-after nan: ...`, exit 2) instead of working with it: a NaN cap that switches the cap
off, a share above 1, a folder or file that is not there.

    max_retry_after: float = typer.Option(600.0, "--max-retry-after", callback=number(at_least=0))
    against: Path | None = typer.Option(None, "--against", callback=existing("file"))
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from factatlas.errors import ConfigError

Callback = Callable[..., Any]


def _name(param: typer.CallbackParam) -> str:
    """How the user wrote the option: its long name (``--k`` rather than ``k``); an argument's metavar."""
    longs = [o for o in param.opts if o.startswith("--")]
    return longs[0] if longs else (getattr(param, "metavar", None) or param.name or "?").upper()


def _range(at_least: float | None, above: float | None, at_most: float | None) -> str:
    low = f"at least {at_least:g}" if at_least is not None else f"above {above:g}" if above is not None else ""
    high = f"at most {at_most:g}" if at_most is not None else ""
    return " and ".join(x for x in (low, high) if x)


def number_problem(value: float, *, at_least: float | None = None, above: float | None = None,
                   at_most: float | None = None) -> str | None:
    """Why ``value`` is out of range (not finite, below or above it), or None."""
    wanted = _range(at_least, above, at_most)
    if isinstance(value, float) and not math.isfinite(value):
        return "not a finite number" + (f"; give one {wanted}" if wanted else "")
    if (at_least is not None and value < at_least) or (above is not None and value <= above) or (
            at_most is not None and value > at_most):
        return f"must be {wanted}"
    return None


def number(*, at_least: float | None = None, above: float | None = None, at_most: float | None = None,
           unit: str = "") -> Callback:
    """A finite number in range (None, an unset optional value, passes)."""

    def check(param: typer.CallbackParam, value: Any) -> Any:
        if value is None:
            return value
        problem = number_problem(value, at_least=at_least, above=above, at_most=at_most)
        if problem:
            raise ConfigError(f"{_name(param)} {value}: {problem}{f' ({unit})' if unit else ''}")
        return value

    return check


DEFAULT_BOOTSTRAP = 1000


def bootstrap_option(of: str) -> Any:
    """``--bootstrap N``, one rule for every command that draws intervals (report, compare): N resamples for
    ``of``, 0 for no intervals; a negative N refused while parsing."""
    return typer.Option(DEFAULT_BOOTSTRAP, "--bootstrap", help=f"Bootstrap resamples for {of} (0: no intervals).",
                        callback=number(at_least=0))


def plots_option() -> Any:
    """``--plots/--no-plots``, one rule for every command that draws figures (report, compare): with
    ``--no-plots`` the pages, tables and verdict are written as always, without PNG figures."""
    return typer.Option(True, "--plots/--no-plots", help="Draw the PNG figures (default). --no-plots: the same "
                        "pages, tables and verdict without figures (each figure costs 0.2-0.4 CPU-s; sweeps and "
                        "CI jobs read verdict.json and the tables).")


def share() -> Callback:
    """A share of a whole: a finite number from 0 to 1 (0.75, not 75)."""
    return number(at_least=0, at_most=1, unit="a share from 0 to 1, e.g. 0.75")


def existing(kind: str = "any", what: str = "") -> Callback:
    """A path that is there: ``kind`` "file", "folder" or "any"; ``what`` says what belongs there."""

    def check(param: typer.CallbackParam, value: Any) -> Any:
        for path in (value if isinstance(value, list | tuple) else [value]):
            if path is None:
                continue
            path = Path(path)
            problem = (f"no such {'folder' if kind == 'folder' else 'file'}" if not path.exists() else
                       "a folder, not a file" if kind == "file" and path.is_dir() else
                       "a file, not a folder" if kind == "folder" and not path.is_dir() else None)
            if problem:
                raise ConfigError(f"{_name(param)} {path}: {problem}" + (f"; give {what}" if what else ""))
        return value

    return check


def only_with(needed: str, present: bool, options: dict[str, Any]) -> None:
    """Refuse options given without the one they work with (`templates audit --out X` without
    ``--fillers``), which would otherwise be ignored without a word. ``options``: name -> value as parsed
    (None or False: not given)."""
    used = [name for name, value in options.items() if value is not None and value is not False]
    if used and not present:
        them = " and ".join(used)
        raise ConfigError(f"{them} {'works' if len(used) == 1 else 'work'} only with {needed}; add {needed}, "
                          f"or drop {them}")
