"""Console helpers: results go to stdout, progress and diagnostics to stderr."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

T = TypeVar("T")

out = Console()  # results
# soft_wrap: a diagnostic is one line however narrow the terminal, and unbroken when stderr is a file
# (rich would wrap at 80 columns there), so paths and `grep` keep working on logs
err = Console(stderr=True, soft_wrap=True)  # progress, warnings


def progress() -> Progress:
    """A rich progress bar on stderr (disabled automatically when stderr is not a terminal)."""
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=err, transient=True)


def track(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    with progress() as p:
        task = p.add_task(description, total=total if total is not None else _len(items))
        for item in items:
            yield item
            p.advance(task)


def _len(items: Iterable) -> int | None:
    try:
        return len(items)  # type: ignore[arg-type]
    except TypeError:
        return None
