"""Helpers the curate tests share (imported as a module, never through conftest)."""

from __future__ import annotations

from pathlib import Path

from factatlas.http import HttpPolicy

# the default policy without jitter, so that tests can name the exact waits (5, 15, 45 s)
EXACT = HttpPolicy(jitter=0.0)

OUTPUT_FILES = ("facts.parquet", "entities.parquet", "labels.parquet", "dropped.parquet")


class Recorder:
    """An injectable sleeper: records the waits instead of sleeping."""

    def __init__(self):
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def output_bytes(run_dir: Path) -> dict[str, bytes]:
    return {name: (Path(run_dir) / "curate" / name).read_bytes() for name in OUTPUT_FILES}
