"""Fine-tuning a tiny model shows where the time goes, also when stderr is redirected (issue 13)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("torch")

SCRIPT = """
import tempfile
from factatlas.probe.tiny import ClozeExample, make_tiny_model
texts = ["Paris is the capital of France.", "Cairo is the capital of Egypt."] * 20
examples = [ClozeExample("Paris is the capital of [Y].", "France"), ClozeExample("Cairo is the capital of [Y].", "Egypt")]
make_tiny_model(tempfile.mkdtemp(), "bert", texts, examples=examples, steps=20, vocab_size=200)
"""


def test_fine_tuning_prints_a_line_per_quarter_when_redirected():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("fine-tuning tiny-bert:")]
    assert [line.split(",")[0] for line in lines] == [f"fine-tuning tiny-bert: step {n}/20" for n in (5, 10, 15, 20)]
    assert proc.stdout == ""  # progress is not a result
