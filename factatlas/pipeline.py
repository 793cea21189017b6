"""The end-to-end job: curate -> build -> probe -> report -> publish on the embedded sample, offline."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Adds `factatlas quickstart`."""
