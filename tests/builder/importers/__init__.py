"""Importer tests read the published benchmarks from the project's shared/reference folder (skipped when
absent). It is found by walking up from here, so a checkout in a nested worktree finds it too."""

from __future__ import annotations

from pathlib import Path


def reference(*parts: str) -> Path:
    """``shared/reference/<parts>`` next to the first ancestor folder that has one (a non-existent path when
    none has: the tests then skip)."""
    for folder in Path(__file__).resolve().parents:
        candidate = folder / "shared" / "reference"
        if candidate.is_dir():
            return candidate.joinpath(*parts)
    return Path("/nonexistent/shared/reference").joinpath(*parts)
