"""Why installing `[test]` (through `[llm]`) moves python-dateutil back to 2.x: the chain the README names,
read from the installed packages' metadata, so the README is corrected when the chain goes away."""

from __future__ import annotations

import importlib.metadata as md
import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement


def requirements(dist: str) -> list[Requirement]:
    try:
        return [Requirement(r) for r in md.requires(dist) or ()]
    except md.PackageNotFoundError:
        pytest.skip(f"{dist} is not installed (the llm extra is not)")


def needs(dist: str, name: str) -> Requirement:
    found = [r for r in requirements(dist) if r.name.lower().replace("_", "-") == name]
    assert found, f"{dist} no longer requires {name}: update the README's note on python-dateutil"
    return found[0]


def test_lm_eval_pulls_a_python_dateutil_below_3():
    toml = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text("utf-8")
    assert re.search(r'llm = \[.*"lm-eval\[hf\]==0\.4\.13"', toml)
    assert needs("lm_eval", "pytablewriter")
    typepy = needs("pytablewriter", "typepy")
    assert "datetime" in typepy.extras
    dateutil = [r for r in requirements("typepy") if r.name == "python-dateutil" and r.marker is not None
                and r.marker.evaluate({"extra": "datetime"})]
    assert dateutil and not dateutil[0].specifier.contains("3.0.0") and dateutil[0].specifier.contains("2.9.0")
