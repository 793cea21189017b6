"""What every importer shares: write the benchmark directory and record the run's manifest."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from factatlas.build.benchmark import BenchmarkContent, write_benchmark
from factatlas.rundir import RunDir

IMPORT_FRACTIONS: Mapping[str, float] = {"test": 1.0}  # a published benchmark is imported whole


def default_out(name: str) -> Path:
    return Path("runs") / name


def write_import(out_run: str | os.PathLike, content: BenchmarkContent, *, config: dict[str, Any],
                 counts: Mapping[str, int], started: datetime | None = None) -> Path:
    """Write ``<out_run>/build/`` (the benchmark directory) and the manifest's "build" entry."""
    run = RunDir.open(out_run)
    out = run.stage("build")
    outputs = write_benchmark(out, content)
    run.record_stage("build", config=config, counts=dict(counts), outputs=outputs,
                     started=started or datetime.now(UTC), extra={"imported": content.meta["source"]["kind"]})
    return out
