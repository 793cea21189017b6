"""docs/journeys.md runs as written: its bash blocks, in order, from the root of the clone, writing only
into the folder it names (issues 13 and 29)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.children import CommandServer

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "journeys.md"

pytestmark = [pytest.mark.slow, pytest.mark.extended]

PRELOAD = ("factatlas.app.cli", "torch", "transformers", "factatlas.probe.runner", "matplotlib.pyplot")


def page_script() -> str:
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text("utf-8"), flags=re.S)
    assert len(blocks) == 6, ("docs/journeys.md: expected six bash blocks (culture, labels, templates, two "
                              "releases, probe)")
    return "set -euo pipefail\n" + "\n".join(blocks)


def test_the_journeys_run_as_written(tmp_path):
    if shutil.which("factatlas") is None and not (Path(sys.executable).parent / "factatlas").exists():
        pytest.skip("the factatlas command is not installed (pip install -e .)")
    work = tmp_path / "work"
    work.mkdir()
    before = sorted(p.name for p in REPO.iterdir())
    env = {**os.environ, "JOURNEYS_DIR": str(work)}
    env.pop("COLUMNS", None)  # piped output is not cut at 80 columns without it
    # each `factatlas` of the page is a real process, forked from one that imported the CLI (and torch, for
    # the probe and report) once
    with CommandServer(PRELOAD, env=env) as commands:
        env["PATH"] = os.pathsep.join((str(commands.bin), str(Path(sys.executable).parent), env.get("PATH", "")))
        proc = subprocess.run(["bash", "-c", page_script()], cwd=REPO, capture_output=True, text=True, env=env,
                              timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in REPO.iterdir()) == before  # nothing written into the clone
    out, err = proc.stdout, proc.stderr
    # 1. the pair validates; curate prints the balance per country
    assert "my/pair.yaml: ok — pair iberia-rhine" in out
    assert "balance: iberia 3 (33.3%) · rhine 6 (66.7%)" in out
    # 2. the new language renders; the build names what it skips; no culture is Western
    assert "ok: 1 file(s) valid" in out
    assert "ca skips, P36: templates P36/2, P36/3 (missing in ca" in err
    assert "western share n/a (no 'west' culture)" in out
    import pyarrow.parquet as pq

    rows = pq.read_table(work / "runs/iberia-rhine/build/prompts.parquet").to_pylist()
    texts = {(r["lang"], r["template_id"], r["text"]) for r in rows}
    assert ("ca", "P36/1", "La capital d'Espanya és [Y].") in texts
    assert ("ca", "P36/1", "La capital d'Àustria és [Y].") in texts
    assert ("ca", "P36/q1", "Quina és la capital de França?") in texts
    assert {r["lang"] for r in rows} == {"en", "ca"}
    assert {r["split"] for r in rows} == {"train", "test"}
    # 3. two releases, the second a minor step with one fact added per language
    assert "published v1.0.0 to git:" in out and "published v1.1.0 to git:" in out
    assert "suggested bump minor" in out + err
    assert "| P36 | rhine | 1 | 0 | 0 | 0 | 0 |" in out
    assert "| ca | 1 | 0 | 0 | 2 | 0 | 0 |" in out
    tags = subprocess.run(["git", "--git-dir", str(work / "releases/iberia-rhine.git"), "tag"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert tags == ["v1.0.0", "v1.1.0"]
    assert_every_config_loads(work / "releases/iberia-rhine.git", tags, tmp_path)
    # 4. the tiny model, trained on train only, reported on the held-out test split
    folder = work / "runs/iberia-rhine/probe/tiny-bert"
    assert (folder / "report.html").exists() and re.search(r"^(PASS|FAIL) tiny-bert: ", out, flags=re.M)
    validation = json.loads((folder / "metrics.json").read_text("utf-8"))["validation"]
    assert validation["splits"] == ["test"] and "trained on train" in validation["split_source"]


def assert_every_config_loads(bare: Path, tags: list[str], tmp_path: Path) -> None:
    """Each tagged release, checked out, loads with `datasets.load_dataset` in every config it names, with the
    rows its manifest counts (issue 42: a pair given as a file once named the configs 'my/pair.yaml.en',
    which datasets refuses)."""
    datasets = pytest.importorskip("datasets")
    for tag in tags:
        folder = tmp_path / "checkout" / tag
        subprocess.run(["git", "clone", "-q", "--branch", tag, str(bare), str(folder)], check=True,
                       capture_output=True)
        manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
        assert set(manifest["configs"]) == {"iberia-rhine.en", "iberia-rhine.ca", "all"}
        for name, config in manifest["configs"].items():
            ds = datasets.load_dataset(str(folder), name, cache_dir=str(tmp_path / "hf-cache"))
            assert {split: ds[split].num_rows for split in ds} == {
                split: s["rows"] for split, s in config["splits"].items()}, (tag, name)
