"""scripts/compare_runs.py, the before/after check of the quickstart's outputs: a last-digit change in
metrics.json or one byte of a parquet file is a difference; the metrics code hash is not."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "compare_runs.py"


def _module():
    spec = importlib.util.spec_from_file_location("compare_runs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(root: Path, micro: float, code: str, data: bytes = b"PAR1") -> Path:
    folder = root / "probe" / "m"
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text(json.dumps({"inputs": {"code": code}, "validation": {"micro": micro}}))
    (folder / "verdict.json").write_text(json.dumps({"verdict": "FAIL"}))
    (root / "build").mkdir()
    (root / "build" / "prompts.parquet").write_bytes(data)
    models = root / "probe" / "_models" / "tiny"  # the tiny model's files record versions: not compared
    models.mkdir(parents=True)
    (models / "x.parquet").write_bytes(code.encode())
    return root


def test_differences_down_to_the_last_digit_and_nothing_recorded(tmp_path):
    compare = _module()
    old = _run(tmp_path / "old", 0.2178313921242374, "aaa")
    assert compare.main([str(old), str(_run(tmp_path / "same", 0.2178313921242374, "bbb"))]) == 0
    digit = _run(tmp_path / "digit", 0.21783139212423733, "aaa", b"PAR2")
    assert compare.differences(old, digit) == [
        "build/prompts.parquet: bytes differ",
        "probe/m/metrics.json: validation.micro: 0.2178313921242374 -> 0.21783139212423733",
    ]
    assert compare.main([str(old), str(tmp_path / "nowhere")]) == 2
