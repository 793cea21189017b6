"""The real lm-evaluation-harness on tasks from `factatlas export lm-eval`, with a tiny causal model, agrees
with our rules prompt by prompt: acc = causal-sum P@1, acc_norm = causal-sum divided by the choice's length
in characters, its generations = our greedy `generative` answers.

The harness runs in-process through its Python API, `simple_evaluate`, the function its CLI calls (lm_eval
0.4.13: `lm_eval --include_path DIR --tasks ...` builds a `TaskManager` and hands it over), with a task
manager that indexes the exported folder only: its CLI also indexes its ~14,000 built-in task files first
(31 of the child's 34 CPU-s were that index and the imports of torch, transformers and lm_eval, already
loaded in the worker); the tasks, the model class, the requests and the metrics are the harness's own."""

from __future__ import annotations

import json
import random

import pytest

from factatlas.publish.lmeval import export_lmeval
from tests.publish.test_lmeval_export import odd_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return odd_run(tmp_path_factory)


@pytest.mark.slow
@pytest.mark.servers
def test_real_harness_equals_our_rules_prompt_by_prompt(tmp_path, run_dir, tiny_gpt2_dir, monkeypatch):
    pytest.importorskip("lm_eval")
    from factatlas.probe.runner import ProbeConfig, probe_benchmark
    from factatlas.tables import RANKINGS_SCHEMA, read_rows

    harness = tmp_path / "harness"
    export_lmeval(run_dir, harness, bos_text="<|endoftext|>")  # GPT-2's tokenizer adds no BOS; our rules use it
    samples = {"mc": [], "gen": []}
    for task, rows in sorted(_harness_samples(harness, tiny_gpt2_dir, tmp_path, monkeypatch).items()):
        samples["mc" if task.endswith("_mc") else "gen"] += rows

    for scoring in ("causal-sum", "generative"):
        probe_benchmark(run_dir, ProbeConfig.from_flags(model=str(tiny_gpt2_dir), scoring=scoring, out_name=f"h-{scoring}",
                                             template_only=False, device="cpu"))
    ours = {s: {r["prompt_id"]: r for r in read_rows(run_dir / "probe" / f"h-{s}" / "rankings.parquet",
                                                     RANKINGS_SCHEMA)} for s in ("causal-sum", "generative")}
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


def _harness_samples(harness, model_dir, tmp_path, monkeypatch) -> dict[str, list[dict]]:
    """task -> its logged samples, as `lm_eval --model hf --model_args pretrained=MODEL,dtype=float32 --device cpu
    --batch_size 16 --include_path HARNESS --tasks factatlas_capitals --log_samples` writes them (each sample
    through JSON with the harness's own encoder, as its samples_*.jsonl files). The global random states that
    `simple_evaluate` seeds are given back to the worker afterwards."""
    import datasets.config
    import numpy as np
    import torch
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager
    from lm_eval.utils import handle_non_serializable

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-datasets")  # not the user's cache
    states = random.getstate(), np.random.get_state(), torch.get_rng_state()
    try:
        results = simple_evaluate(
            model="hf", model_args=f"pretrained={model_dir},dtype=float32", tasks=["factatlas_capitals"],
            batch_size=16, device="cpu", log_samples=True,
            task_manager=TaskManager(include_path=str(harness), include_defaults=False))
    finally:
        random.setstate(states[0]), np.random.set_state(states[1]), torch.set_rng_state(states[2])
    return {task: [json.loads(json.dumps(s, default=handle_non_serializable, ensure_ascii=False)) for s in rows]
            for task, rows in results["samples"].items()}
