"""Commands of this stage (registered on the root `factatlas` app)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the root app."""
