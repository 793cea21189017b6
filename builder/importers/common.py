"""What every importer shares: write the benchmark directory and record the run's manifest."""

from __future__ import annotations

import functools
import gc
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from factatlas.builder.benchmark import BenchmarkContent, write_benchmark
from factatlas.errors import ConfigError
from factatlas.rundir import RunDir

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector paused, then restored as it was (also on error). An import holds 10^5-10^6
    acyclic records (rows, facts, prompts) and each full collection walks all of them again (measured on this
    machine, one run each in a fresh process: BMLAMA17's import 6.9 -> 5.6 CPU seconds, DLAMA arab-west's
    7.5 -> 6.3). Reference counting still frees every record."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def gc_paused(fn: F) -> F:
    """``fn`` run under ``paused_gc``."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with paused_gc():
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def jsonl_records(path: Path, what: str, convert: Callable[[dict[str, Any], int], T]) -> Iterator[T]:
    """``convert(record, line_number)`` for every non-empty line; a malformed line is a ConfigError that
    names ``path:line`` and what the line should have been."""
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = convert(json.loads(line), n)
            except (ValueError, KeyError, TypeError) as e:
                raise ConfigError(f"not {what}: {e}", str(path), n) from e
            yield value

IMPORT_FRACTIONS: Mapping[str, float] = {"test": 1.0}  # a published benchmark is imported whole


def default_out(name: str) -> Path:
    return Path("runs") / name


def write_import(out_run: str | os.PathLike, content: BenchmarkContent, *, config: dict[str, Any],
                 counts: Mapping[str, int], started: datetime | None = None) -> Path:
    """Write ``<out_run>/build/`` (the benchmark directory, swapped in whole) and the manifest's "build" entry."""
    run = RunDir.open(out_run)
    out = run.root / "build"
    with run.replace_stage("build") as staging:  # under the run lock; the entry moves in with the folder
        written = write_benchmark(staging, content)
        run.stage_entry(staging, "build", config=config, counts=dict(counts), outputs=written,
                        started=started or datetime.now(UTC), extra={"imported": content.meta["source"]["kind"]})
    return out
