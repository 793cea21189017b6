"""Fixtures of the templates room: the embedded sample's three shipped pairs, curated and built with the
CLI once per session (the filler ledger reads a build)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SHIPPED_PAIRS = ("arab-west", "asia-west", "south-america-west")  # curate/pairs.yaml
SHIPPED_LANGS = ("en", "ar", "es", "ko", "zh", "ru", "fr", "de", "ja", "pt", "hi", "sw", "it")


def _cli(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "factatlas", *args], capture_output=True, text=True,
                          env=os.environ.copy())
    assert done.returncode == 0, f"factatlas {' '.join(args)} failed:\n{done.stderr[-3000:]}"


@pytest.fixture(scope="session")
def shipped_builds(tmp_path_factory) -> dict[str, Path]:
    """pair -> run directory with curate/ and build/ of the embedded sample in the 13 shipped languages."""
    root = tmp_path_factory.mktemp("shipped")
    langs = ",".join(SHIPPED_LANGS)
    runs = {}
    for pair in SHIPPED_PAIRS:
        run = root / pair
        _cli("curate", str(run), "--pair", pair, "--langs", langs)
        _cli("build", str(run), "--langs", langs)
        runs[pair] = run
    return runs
