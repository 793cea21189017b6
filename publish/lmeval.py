"""A benchmark as lm-evaluation-harness tasks: ``factatlas export lm-eval RUN OUT``.

For every (pair, language) two tasks over local JSONL files:
- ``<prefix>_<pair>_<lang>_mc`` (``output_type: multiple_choice``): the cloze prompts cut at the answer
  slot (``context``), the candidate set in the benchmark's order (``doc_to_choice: choices``), and every
  valid object among the candidates (``doc_to_target: gold``, a list: correct if the pick is any of them).
  The harness scores ``log p(choice | context)`` summed over the choice's tokens, with the context's
  trailing space moved onto the choice — the tokenization of our causal rules. So ``acc`` is P@1 of
  ``causal-sum``; ``acc_norm`` is P@1 of the same sums divided by the choice's length in characters (a
  rule of the harness, not one of ours: ``causal-mean`` divides by tokens). Ties go to the first choice
  in both.
- ``<prefix>_<pair>_<lang>_gen`` (``output_type: generate_until``): the question prompts, greedy until a
  line break, ``exact_match`` (case and punctuation ignored) against the gold forms in that language.
  The harness's matching is simpler than ours (no cross-language aliases, articles kept), so compare its
  generations, not its score, with ``generative``.
Groups ``<prefix>_mc``, ``<prefix>_gen`` and ``<prefix>`` collect them.

``bos_text`` is put before every context and question: our causal rules condition on the model's BOS
token even when its tokenizer does not add one (GPT-2's ``<|endoftext|>``); the harness reads a text that
starts with the BOS token as "already has it", so ``--bos-text '<|endoftext|>'`` makes its inputs ours.
Tokenizers that add BOS themselves (Llama, Gemma, Mistral) need nothing.
Data paths in the YAML files are absolute (the harness resolves relative ones from its working folder):
export again after moving OUT.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factatlas.atomic import write_together
from factatlas.errors import ConfigError
from factatlas.records import ANSWER_MARKER, Prompt


@dataclass(frozen=True)
class LmEvalExport:
    out_dir: Path
    tasks: tuple[str, ...]
    groups: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)


def task_name(*parts: str) -> str:
    """Harness task names: lower-case letters, digits and underscores."""
    return re.sub(r"[^a-z0-9]+", "_", "_".join(parts).lower()).strip("_")


def mc_doc(row: Prompt, bos_text: str = "") -> dict[str, Any] | None:
    """A cloze prompt as a multiple-choice doc; None when no valid object is among the candidates."""
    text = row.text
    gold = set(row.gold_qids)
    indices = [i for i, q in enumerate(row.candidate_qids) if q in gold]
    if text.count(ANSWER_MARKER) != 1 or not indices:
        return None
    return {"prompt_id": row.prompt_id, "fact_id": row.fact_id, "template_id": row.template_id,
            "split": row.split, "context": bos_text + text[: text.index(ANSWER_MARKER)],
            "choices": list(row.candidate_forms), "choice_qids": list(row.candidate_qids), "gold": indices}


def gen_doc(row: Prompt, bos_text: str = "") -> dict[str, Any] | None:
    answers = sorted({f for forms in row.gold_forms for f in forms if f})
    if not answers:
        return None
    return {"prompt_id": row.prompt_id, "fact_id": row.fact_id, "template_id": row.template_id,
            "split": row.split, "question": bos_text + row.text, "answers": answers}


def _mc_yaml(name: str, data: Path) -> dict[str, Any]:
    return {"task": name, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(data)}},
            "test_split": "test", "output_type": "multiple_choice", "doc_to_text": "context",
            "doc_to_choice": "choices", "doc_to_target": "gold", "target_delimiter": "",
            "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True},
                            {"metric": "acc_norm", "aggregation": "mean", "higher_is_better": True}],
            "metadata": {"version": 1.0}}


def _gen_yaml(name: str, data: Path, max_gen_toks: int) -> dict[str, Any]:
    return {"task": name, "dataset_path": "json", "dataset_kwargs": {"data_files": {"test": str(data)}},
            "test_split": "test", "output_type": "generate_until", "doc_to_text": "question",
            "doc_to_target": "answers", "target_delimiter": " ",
            "generation_kwargs": {"until": ["\n"], "do_sample": False, "max_gen_toks": max_gen_toks},
            "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True,
                             "ignore_case": True, "ignore_punctuation": True}],
            "metadata": {"version": 1.0}}


def _group_yaml(name: str, tasks: Sequence[str], metrics: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"group": name, "task": list(tasks)}
    if metrics:
        out["aggregate_metric_list"] = [{"metric": m, "aggregation": "mean", "weight_by_size": True} for m in metrics]
    out["metadata"] = {"version": 1.0}
    return out


def _dump_yaml(obj: Mapping[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(dict(obj), sort_keys=False, allow_unicode=True, width=1000)


def _jsonl(docs: Sequence[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n" for d in docs)


def export_lmeval(run: str | Path, out: str | Path, *, splits: Sequence[str] | None = None, bos_text: str = "",
                  prefix: str | None = None, max_gen_toks: int = 16) -> LmEvalExport:
    """Write task YAMLs and JSONL data under ``out`` (``lm_eval --include_path out --tasks <prefix>``)."""
    from factatlas.benchmark import Benchmark

    existing = next(p for p in (Path(out), *Path(out).absolute().parents) if p.exists())
    if not existing.is_dir():
        raise ConfigError(f"{existing}: exists and is not a folder; OUT ({out}) is the folder that receives the task "
                          "YAMLs and data (created when missing): name a new or an existing folder")
    benchmark = Benchmark.open(run)
    bench = benchmark.path
    present = list(benchmark.splits)  # the split column alone
    if splits:
        missing = [s for s in splits if s not in present]
        if missing:
            raise ConfigError(f"--splits: {', '.join(missing)} not in {bench}; it has {', '.join(present)}")
    if prefix is None:
        prefix = task_name("factatlas", benchmark.meta.get("name") or bench.parent.name)
    out = Path(out).resolve()
    files: dict[Path, bytes] = {}  # written together at the end: a refused write leaves OUT as it was

    def write_text(path: Path, text: str) -> None:
        files[path] = text.encode("utf-8")

    counts: Counter = Counter()
    # the prompts a row group at a time, in prompt_id order: each becomes its JSON line at once, so what is
    # held is the task files' text (written together at the end), never every prompt as a record
    lines: dict[tuple[str, str], tuple[list[str], list[str]]] = {}  # (pair, language) -> (mc, gen) lines
    wanted = set(splits) if splits else None
    for batch in benchmark.iter_prompts():
        for r in batch:
            if wanted is not None and r.split not in wanted:
                continue
            mc, gen = lines.setdefault((r.pair, r.lang), ([], []))
            if r.kind == "cloze":
                doc = mc_doc(r, bos_text)
                if doc is None:
                    counts["mc/skipped:no-valid-object-among-candidates"] += 1
                else:
                    mc.append(_jsonl([doc]))
            elif r.kind == "question":
                doc = gen_doc(r, bos_text)
                if doc is None:
                    counts["gen/skipped:no-gold-form"] += 1
                else:
                    gen.append(_jsonl([doc]))
    mc_tasks: list[str] = []
    gen_tasks: list[str] = []
    for pair, lang in sorted(lines):
        mc, gen = lines.pop((pair, lang))
        folder = out / "data" / task_name(pair) / lang
        if mc:
            name = task_name(prefix, pair, lang, "mc")
            write_text(folder / "mc.jsonl", "".join(mc))
            write_text(out / f"{name}.yaml", _dump_yaml(_mc_yaml(name, folder / "mc.jsonl")))
            mc_tasks.append(name)
            counts["mc/docs"] += len(mc)
        if gen:
            name = task_name(prefix, pair, lang, "gen")
            write_text(folder / "gen.jsonl", "".join(gen))
            write_text(out / f"{name}.yaml", _dump_yaml(_gen_yaml(name, folder / "gen.jsonl", max_gen_toks)))
            gen_tasks.append(name)
            counts["gen/docs"] += len(gen)
    if not mc_tasks and not gen_tasks:
        raise ConfigError(f"{bench / 'prompts.parquet'}: no cloze or question prompt to export (splits "
                          f"{splits or present}); build the benchmark again (`factatlas build RUN`)")
    groups = []
    for suffix, tasks, metrics in (("mc", mc_tasks, ("acc", "acc_norm")), ("gen", gen_tasks, ("exact_match",))):
        if tasks:
            groups.append(task_name(prefix, suffix))
            write_text(out / f"{groups[-1]}.yaml", _dump_yaml(_group_yaml(groups[-1], tasks, metrics)))
    write_text(out / f"{prefix}.yaml", _dump_yaml(_group_yaml(prefix, groups, ())))
    write_together(files)
    return LmEvalExport(out, tuple(mc_tasks + gen_tasks), (*groups, prefix), dict(sorted(counts.items())))
