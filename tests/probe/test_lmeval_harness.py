"""The real lm-evaluation-harness on tasks from `factatlas export lm-eval`, with a tiny causal model, agrees
with our rules prompt by prompt: acc = causal-sum P@1, acc_norm = causal-sum divided by the choice's length
in characters, its generations = our greedy `generative` answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from factatlas.publish.lmeval import export_lmeval
from tests.publish.test_lmeval_export import odd_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return odd_run(tmp_path_factory)


@pytest.mark.slow
@pytest.mark.servers
def test_real_harness_equals_our_rules_prompt_by_prompt(tmp_path, run_dir, tiny_gpt2_dir):
    pytest.importorskip("lm_eval")
    from factatlas.probe.runner import ProbeConfig, probe_benchmark
    from factatlas.tables import RANKINGS_SCHEMA, read_rows

    harness = tmp_path / "harness"
    export_lmeval(run_dir, harness, bos_text="<|endoftext|>")  # GPT-2's tokenizer adds no BOS; our rules use it
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
           "HF_HOME": str(tmp_path / "hf-home"), "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        [sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args", f"pretrained={tiny_gpt2_dir},dtype=float32",
         "--device", "cpu", "--batch_size", "16", "--include_path", str(harness), "--tasks", "factatlas_capitals",
         "--log_samples", "--output_path", str(tmp_path / "out")],
        env=env, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    for scoring in ("causal-sum", "generative"):
        probe_benchmark(run_dir, ProbeConfig.from_flags(model=str(tiny_gpt2_dir), scoring=scoring, out_name=f"h-{scoring}",
                                             template_only=False, device="cpu"))
    ours = {s: {r["prompt_id"]: r for r in read_rows(run_dir / "probe" / f"h-{s}" / "rankings.parquet",
                                                     RANKINGS_SCHEMA)} for s in ("causal-sum", "generative")}
    samples = {"mc": [], "gen": []}
    for path in sorted((tmp_path / "out").rglob("samples_*.jsonl")):
        kind = "mc" if "_mc_" in path.name else "gen"
        samples[kind] += [json.loads(line) for line in path.read_text().splitlines()]
    assert len(samples["mc"]) == 95 and len(samples["gen"]) == 48  # 96 cloze prompts less the counted one
    correct = 0
    for s in samples["mc"]:
        doc, o = s["doc"], ours["causal-sum"][s["doc"]["prompt_id"]]
        assert bool(s["acc"]) == o["correct_at_1"], doc["prompt_id"]
        score = dict(zip(o["ranked_qids"], o["scores"], strict=True))
        per_char = [score[q] / len(form) for q, form in zip(doc["choice_qids"], doc["choices"], strict=True)]
        pick = max(range(len(per_char)), key=lambda i: (per_char[i], -i))  # first of equal maxima, as np.argmax
        assert bool(s["acc_norm"]) == (pick in doc["gold"]), doc["prompt_id"]
        harness_lls = [float(r[0][0]) for r in s["resps"]]
        assert harness_lls == pytest.approx([score[q] for q in doc["choice_qids"]], abs=1e-4)
        correct += o["correct_at_1"]
    assert correct >= 24  # the model knows its training facts: agreement is not all-zeros
    for s in samples["gen"]:
        answer = s["resps"][0][0].strip().split("\n", 1)[0].strip()
        assert answer == ours["generative"][s["doc"]["prompt_id"]]["prediction"], s["doc"]["prompt_id"]
