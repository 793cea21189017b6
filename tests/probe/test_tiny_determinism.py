"""The tiny models are reproducible to the byte: the same text and seed give the same tokenizer and weights
in every process (tokenizers' WordPieceTrainer did not: huggingface/tokenizers#1794)."""

from __future__ import annotations

import subprocess
import sys

BUILD = """
import hashlib, sys, torch
torch.set_num_threads(1)
from pathlib import Path
from tests.probe.probe_capitals import capital_prompt_rows
from factatlas.probe.tiny import make_tiny_model, tokenizer_texts, true_fact_examples
rows = capital_prompt_rows()
out = make_tiny_model(Path(sys.argv[1]), "bert", tokenizer_texts(rows) * 3,
                      examples=true_fact_examples(rows, splits=("train",)), steps=5, vocab_size=120)
for name in ("tokenizer.json", "model.safetensors"):
    print(name, hashlib.sha256((out / name).read_bytes()).hexdigest())
"""


def test_tiny_bert_is_byte_identical_across_processes(tmp_path):
    digests = []
    for i in range(3):  # hash-map order differs per process; three draws make a lucky pass unlikely
        done = subprocess.run([sys.executable, "-c", BUILD, str(tmp_path / f"m{i}")], capture_output=True, text=True,
                              check=True)
        digests.append(done.stdout)
    assert "tokenizer.json" in digests[0] and "model.safetensors" in digests[0]
    assert digests[1] == digests[0] and digests[2] == digests[0]
