"""A language added to a run carries the templates it has and never shrinks the others: templates it lacks
are skipped for it alone (named on screen, no --allow-shrink needed); what it would remove from every
language (facts, candidates) is refused unless --allow-shrink. The user's --templates-dir is laid over the
packaged templates (theirs win per language)."""

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
    """A curated run (arab-west, en+ru labels), a user folder holding only a ru.yaml without P17/2, P17/3,
    and one whose ru.yaml has no P17 template at all."""
    base = tmp_path_factory.mktemp("shrink")
    run = base / "run"
    done = cli("curate", str(run), "--pair", "arab-west", "--langs", "en,ru")
    assert done.returncode == 0, done.stderr
    data = yaml.safe_load((templates_dir() / "ru.yaml").read_text("utf-8"))
    data["templates"]["P17"] = [t for t in data["templates"]["P17"] if t["id"] not in ("P17/2", "P17/3")]
    mine = base / "my-templates"
    mine.mkdir()
    (mine / "ru.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")
    del data["templates"]["P17"]
    bare = base / "no-p17"
    bare.mkdir()
    (bare / "ru.yaml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), "utf-8")
    return run, mine, bare


def _meta(run: Path) -> dict:
    return json.loads((run / "build" / "benchmark.json").read_text("utf-8"))


def _rows(run: Path, lang: str) -> list[dict]:
    from factatlas.tables import PROMPTS_SCHEMA, read_rows

    return [r for r in read_rows(run / "build" / "prompts.parquet", PROMPTS_SCHEMA) if r["lang"] == lang]


def test_a_new_language_carries_its_templates_and_never_removes_others(run_and_partial_ru):
    run, mine, bare = run_and_partial_ru
    first = cli("build", str(run), "--langs", "en")
    assert first.returncode == 0, first.stderr
    assert "P17/2" in _meta(run)["templates"]["en"]
    english = _rows(run, "en")

    added = cli("build", str(run), "--langs", "en,ru", "--templates-dir", str(mine))
    assert added.returncode == 0, added.stderr
    assert "templates skipped per language" in added.stderr
    assert "ru skips, P17: templates P17/2, P17/3 (missing in ru" in added.stderr
    assert "multi-parallel removals" not in added.stderr
    meta = _meta(run)
    assert meta["languages"] == ["en", "ru"]
    assert "P17/2" in meta["templates"]["en"] and "P17/2" not in meta["templates"]["ru"]
    assert "P17/1" in meta["templates"]["ru"]
    # every English prompt as before: adding ru is a minor release (languages and prompts added only)
    assert _rows(run, "en") == english
    assert {r["fact_id"] for r in _rows(run, "ru")} == {r["fact_id"] for r in english}
    checked = cli("validate-benchmark", str(run))
    assert checked.returncode == 0, checked.stderr

    # what ru would remove from every language (its P17 facts: no P17 template in ru) is still refused
    cli("build", str(run), "--langs", "en")
    refused = cli("build", str(run), "--langs", "en,ru", "--templates-dir", str(bare))
    assert refused.returncode != 0
    assert f"{run}: adding ru to the run's languages (en) would remove from every language:" in refused.stderr
    assert "ru removed from every language, P17:" in refused.stderr and "(no ru label or template)" in refused.stderr
    assert "pass --allow-shrink" in refused.stderr
    assert _rows(run, "en") == english  # untouched
    allowed = cli("build", str(run), "--langs", "en,ru", "--templates-dir", str(bare), "--allow-shrink")
    assert allowed.returncode == 0, allowed.stderr
    assert "multi-parallel removals" in allowed.stderr
    assert not any(t.startswith("P17/") for t in _meta(run)["templates"]["en"])


def test_templates_show_reads_the_same_overlay(run_and_partial_ru):
    _, mine, _ = run_and_partial_ru
    ru = cli("templates", "show", "ru", "--templates-dir", str(mine))
    assert ru.returncode == 0, ru.stderr
    assert "P17/1" in ru.stdout and "P17/2" not in ru.stdout
    en = cli("templates", "show", "en", "--templates-dir", str(mine))  # not in the folder: the packaged file
    assert en.returncode == 0, en.stderr
    assert "P17/2" in en.stdout
    nowhere = cli("templates", "show", "xx", "--templates-dir", str(mine))
    assert nowhere.returncode != 0
    assert f"(no {mine / 'xx.yaml'} nor {templates_dir() / 'xx.yaml'})" in nowhere.stderr
