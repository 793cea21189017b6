"""A language added to a run may not silently shrink the others: the build names what each language
removed from every language, and refuses to shrink an earlier build unless --allow-shrink. The user's
--templates-dir is laid over the packaged templates (theirs win per language)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from factatlas.templates.library import templates_dir
from tests.clirun import factatlas

pytestmark = pytest.mark.slow  # curates the packaged sample and builds it four times


def cli(*args: str) -> subprocess.CompletedProcess:
    return factatlas(*args, env={"COLUMNS": "200"})


@pytest.fixture(scope="module")
def run_and_partial_ru(tmp_path_factory):
    """A curated run (arab-west, en+ru labels) and a user folder holding only a ru.yaml without P17/2, P17/3."""
    base = tmp_path_factory.mktemp("shrink")
    run = base / "run"
    done = cli("curate", str(run), "--pair", "arab-west", "--langs", "en,ru")
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load((templates_dir() / "ru.yaml").read_text("utf-8"))
    data["templates"]["P17"] = [t for t in data["templates"]["P17"] if t["id"] not in ("P17/2", "P17/3")]
    mine = base / "my-templates"
    mine.mkdir()
    (mine / "ru.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")
    return run, mine


def _meta(run: Path) -> dict:
    return json.loads((run / "build" / "benchmark.json").read_text("utf-8"))


def test_a_new_language_may_not_shrink_the_run_silently(run_and_partial_ru):
    run, mine = run_and_partial_ru
    first = cli("build", str(run), "--langs", "en")
    assert first.returncode == 0, first.stderr
    assert "P17/2" in _meta(run)["templates"]["en"]

    refused = cli("build", str(run), "--langs", "en,ru", "--templates-dir", str(mine))
    assert refused.returncode != 0
    assert f"{run}: adding ru to the run's languages (en) would remove from every language:" in refused.stderr
    assert "ru removed from every language, P17: templates P17/2, P17/3 (missing in ru)" in refused.stderr
    assert "pass --allow-shrink" in refused.stderr
    assert _meta(run)["languages"] == ["en"] and "P17/2" in _meta(run)["templates"]["en"]  # untouched

    allowed = cli("build", str(run), "--langs", "en,ru", "--templates-dir", str(mine), "--allow-shrink")
    assert allowed.returncode == 0, allowed.stderr
    assert "multi-parallel removals" in allowed.stderr
    assert "ru removed from every language, P17: templates P17/2, P17/3 (missing in ru)" in allowed.stderr
    meta = _meta(run)
    assert meta["languages"] == ["en", "ru"]
    assert "P17/2" not in meta["templates"]["en"] and "P17/1" in meta["templates"]["en"]
    # en came from the package (the user folder has no en.yaml): the folder is laid over, not instead
    again = cli("build", str(run), "--langs", "en,ru")  # the packaged ru has P17/2 again: nothing is lost
    assert again.returncode == 0, again.stderr
    assert "multi-parallel removals" not in again.stderr


def test_templates_show_reads_the_same_overlay(run_and_partial_ru):
    _, mine = run_and_partial_ru
    ru = cli("templates", "show", "ru", "--templates-dir", str(mine))
    assert ru.returncode == 0, ru.stderr
    assert "P17/1" in ru.stdout and "P17/2" not in ru.stdout
    en = cli("templates", "show", "en", "--templates-dir", str(mine))  # not in the folder: the packaged file
    assert en.returncode == 0, en.stderr
    assert "P17/2" in en.stdout
    nowhere = cli("templates", "show", "xx", "--templates-dir", str(mine))
    assert nowhere.returncode != 0
    assert f"(no {mine / 'xx.yaml'} nor {templates_dir() / 'xx.yaml'})" in nowhere.stderr
