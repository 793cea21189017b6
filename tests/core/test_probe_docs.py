"""docs/probe.md's offline blocks (```bash; the others are ```shell) run as written, in order, from the root
of the clone, writing only into the folder they name (issue 29)."""

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
PAGE = REPO / "docs" / "probe.md"

pytestmark = [pytest.mark.slow, pytest.mark.extended]

PRELOAD = ("factatlas.app.cli", "torch", "transformers", "factatlas.probe.runner", "matplotlib.pyplot")


def test_the_offline_blocks_of_the_probe_page_run_as_written(tmp_path):
    if shutil.which("factatlas") is None and not (Path(sys.executable).parent / "factatlas").exists():
        pytest.skip("the factatlas command is not installed (pip install -e .)")
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text("utf-8"), flags=re.S)
    assert len(blocks) == 3, "docs/probe.md: expected three offline blocks (benchmark, probes, report)"
    work = tmp_path / "work"
    work.mkdir()
    before = sorted(p.name for p in REPO.iterdir())
    env = {**os.environ, "PROBE_DOCS_DIR": str(work), "HF_HUB_OFFLINE": "1"}
    # each `factatlas` of the page is a real process, forked from one that imported torch once (nine commands
    # would import it nine times: 4-5 CPU-s each)
    with CommandServer(PRELOAD, env=env) as commands:
        env["PATH"] = os.pathsep.join((str(commands.bin), str(Path(sys.executable).parent), env.get("PATH", "")))
        proc = subprocess.run(["bash", "-c", "set -euo pipefail\n" + "\n".join(blocks)], cwd=REPO,
                              capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in REPO.iterdir()) == before  # nothing written into the clone
    probe = work / "runs/capitals/probe"
    scorings = {d.name: json.loads((d / "probe.json").read_text("utf-8"))["scoring"]
                for d in probe.iterdir() if (d / "probe.json").is_file()}
    assert scorings == {"tiny-bert": "mlm-independent", "tiny-gpt2": "causal-mean",
                        "tiny-gpt2--generative": "generative", "tiny-chat--chat": "chat"}
    assert (probe / "tiny-bert/report.html").is_file()
    assert re.search(r"^(PASS|FAIL) tiny-bert: ", proc.stdout, flags=re.M)
    assert "split test" in (work / "runs/capitals/compare/compare.md").read_text("utf-8")
