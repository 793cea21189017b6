"""Errors that name the artifact, the place and the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class FactatlasError(Exception):
    """Base class: every message names what is wrong and how to fix it."""


class ConfigError(FactatlasError):
    """A configuration file or value is invalid. ``str(e)`` reads ``path:line:col: message``."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None, col: int | None = None):
        self.path, self.line, self.col, self.message = path, line, col, message
        where = ""
        if path:
            where = str(path)
            if line is not None:
                where += f":{line}"
                if col is not None:
                    where += f":{col}"
            where += ": "
        super().__init__(where + message)


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" Did you mean 'x'?"`` when a close match exists, else ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" Did you mean '{close[0]}'?" if close else ""


def unknown(kind: str, word: str, choices: Iterable[str]) -> str:
    """The registry error message: unknown X 'y'. Did you mean 'z'? Available: ..."""
    choices = sorted(choices)
    return f"unknown {kind} '{word}'.{did_you_mean(word, choices)} Available: {', '.join(choices)}"
