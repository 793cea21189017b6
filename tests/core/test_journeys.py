"""docs/journeys.md runs as written: its bash blocks, in order, in a fresh folder (issue 13)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "journeys.md"

pytestmark = pytest.mark.slow


def page_script() -> str:
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text("utf-8"), flags=re.S)
    assert len(blocks) == 5, "docs/journeys.md: expected five bash blocks (culture, labels, templates, two releases)"
    return "set -euo pipefail\n" + "\n".join(blocks)


def test_the_three_journeys_run_as_written(tmp_path):
    if shutil.which("factatlas") is None and not (Path(sys.executable).parent / "factatlas").exists():
        pytest.skip("the factatlas command is not installed (pip install -e .)")
    (tmp_path / "scripts").symlink_to(REPO / "scripts")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "200"}
    proc = subprocess.run(["bash", "-c", page_script()], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out, err = proc.stdout, proc.stderr
    # 1. the pair validates; curate prints the balance per country
    assert "my/pair.yaml: ok — pair iberia-rhine" in out
    assert "balance: iberia 2 (50.0%) · rhine 2 (50.0%)" in out
    # 2. the new language renders, and the build names what it removed from every language
    assert "ok: 1 file(s) valid" in out
    assert "ca skips, P36: templates P36/2, P36/3 (missing in ca" in err
    import pyarrow.parquet as pq

    rows = pq.read_table(tmp_path / "runs/iberia-rhine/build/prompts.parquet").to_pylist()
    texts = {(r["lang"], r["template_id"], r["text"]) for r in rows}
    assert ("ca", "P36/1", "La capital d'Espanya és [Y].") in texts
    assert ("ca", "P36/q1", "Quina és la capital de França?") in texts
    assert {r["lang"] for r in rows} == {"en", "ca"}
    # 3. two releases, the second a minor step with one fact added per language
    assert "published v1.0.0 to git:" in out and "published v1.1.0 to git:" in out
    assert "suggested bump minor" in out + err
    assert "| P36 | rhine | 1 | 0 | 0 | 0 | 0 |" in out
    assert "| ca | 1 | 0 | 0 | 2 | 0 | 0 |" in out
    tags = subprocess.run(["git", "--git-dir", str(tmp_path / "releases/iberia-rhine.git"), "tag"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert tags == ["v1.0.0", "v1.1.0"]
