"""Typed per-prompt results the analyses consume, and the one adapter that reads them from a run.

The adapter (``read_model_results``) is the only place that knows the file layout (rankings.parquet,
prompts.parquet, facts.parquet, probe.json); swap it for another reader and every analysis still works.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factatlas.errors import FactatlasError

DIRECT = "direct"


class AnalysisError(FactatlasError):
    """Rankings or a benchmark cannot be analysed (missing, or they do not belong together)."""


@dataclass(frozen=True, slots=True)
class GoldObject:
    """One valid object of a fact and how it became valid (direct | superclass | admin_ancestor)."""

    qid: str
    provenance: str = DIRECT


@dataclass(frozen=True, slots=True)
class PromptResult:
    """One model's answer to one prompt, joined with what the benchmark knows about the prompt."""

    model: str
    prompt_id: str
    fact_id: str
    lang: str
    template_id: str
    culture: str
    predicate: str
    golds: tuple[GoldObject, ...]
    ranked: tuple[str, ...]  # candidate QIDs best first; empty for generative rows
    correct: bool  # top-1 is a valid object (any provenance)
    countries: tuple[str, ...] = ()  # the fact's countries (QIDs), as curated
    candidates: tuple[str, ...] = ()  # benchmark order; translation-aligned across languages
    gold_subwords: int | None = None  # subword tokens of the direct gold's slot form; None: not measured

    @property
    def top(self) -> str | None:
        return self.ranked[0] if self.ranked else None

    @property
    def gold_qids(self) -> frozenset[str]:
        return frozenset(g.qid for g in self.golds)

    @property
    def direct_qids(self) -> frozenset[str]:
        return frozenset(g.qid for g in self.golds if g.provenance == DIRECT)


@dataclass(frozen=True)
class ModelResults:
    """All results of one model on one benchmark, with every row not used counted by reason."""

    model: str
    results: tuple[PromptResult, ...]
    skipped: Mapping[str, int] = field(default_factory=dict)
    tokenizer_note: str = ""  # why gold_subwords is missing, when it is
    tokenize: Callable[[str], Sequence[int]] | None = None  # the model's tokenizer, when it is local


Tokenize = Callable[[str], Sequence[int]]


def join_results(model: str, rankings: Iterable[Mapping[str, Any]], prompts: Mapping[str, Mapping[str, Any]],
                 facts: Mapping[str, Mapping[str, Any]], tokenize: Tokenize | None = None) -> ModelResults:
    """RANKINGS_SCHEMA rows + PROMPTS_SCHEMA rows (by prompt_id) + FACTS_SCHEMA rows (by fact_id) -> records.

    Golds are the prompt's ``gold_qids``; their provenance comes from the fact (a gold the fact does not
    list is counted and kept as direct). ``tokenize`` (text -> subword ids) measures the direct gold's
    slot form; without it ``gold_subwords`` stays None.
    """
    skipped: Counter[str] = Counter()
    out: list[PromptResult] = []
    seen: set[str] = set()
    for row in rankings:
        pid = row["prompt_id"]
        prompt = prompts.get(pid)
        if prompt is None:
            skipped["prompt not in the benchmark"] += 1
            continue
        if pid in seen:
            skipped["prompt ranked twice"] += 1
            continue
        seen.add(pid)
        fact = facts.get(prompt["fact_id"], {})
        provenance = dict(zip(fact.get("object_qids") or (), fact.get("object_provenance") or (), strict=True))
        golds = []
        for q in prompt["gold_qids"]:
            if q not in provenance:
                skipped["gold missing from facts.parquet (kept as direct)"] += 1
            golds.append(GoldObject(q, provenance.get(q, DIRECT)))
        ranked = tuple(row["ranked_qids"] or ())
        gold_set = set(prompt["gold_qids"])
        correct = (ranked[0] in gold_set) if ranked else bool(row.get("correct_at_1"))
        out.append(PromptResult(
            model, pid, prompt["fact_id"], prompt["lang"], prompt["template_id"], prompt["culture"],
            prompt["predicate"], tuple(golds), ranked, correct, tuple(fact.get("countries") or ()),
            tuple(prompt["candidate_qids"]), _gold_subwords(prompt, golds, tokenize)))
    out.sort(key=lambda r: r.prompt_id)
    return ModelResults(model, tuple(out), dict(sorted(skipped.items())))


def _gold_subwords(prompt: Mapping[str, Any], golds: Sequence[GoldObject], tokenize: Tokenize | None) -> int | None:
    if tokenize is None:
        return None
    forms = prompt.get("gold_forms") or []
    # the first direct gold (the curated answer), else the first gold; its in-prompt (inflected) form
    index = next((i for i, g in enumerate(golds) if g.provenance == DIRECT), 0)
    if index >= len(forms) or not forms[index]:
        return None
    return len(tokenize(" " + forms[index][0].strip()))


# ---- the adapter: a run's files -> ModelResults --------------------------------------------------

def resolve_model_dirs(run: Path, models: Sequence[str] | None) -> list[Path]:
    """Model folders: slugs under ``run/probe/`` or paths to folders holding rankings.parquet."""
    probe = run / "probe"
    from factatlas.probe.runner import probed_folders

    found = probed_folders(probe)
    if not models:
        if not found:
            raise AnalysisError(f"{probe}: no model rankings; run `factatlas probe {run} --model PATH_OR_ID` first")
        return found
    out = []
    for m in models:
        for candidate in (probe / m, Path(m)):
            if (candidate / "rankings.parquet").exists():
                out.append(candidate)
                break
        else:
            from factatlas.errors import unknown

            raise AnalysisError(f"{probe / m}/rankings.parquet: missing; "
                                + unknown("model", m, [p.name for p in found]))
    if len({p.resolve() for p in out}) != len(out):
        raise AnalysisError(f"--models lists a model twice: {', '.join(models)}")
    return out


def model_tokenizer(model_dir: Path) -> tuple[Tokenize | None, str]:
    """The model's tokenizer when it is on this machine (probe.json names it); else None and why."""
    info_path = model_dir / "probe.json"
    if not info_path.exists():
        return None, f"{info_path}: missing, so the model's tokenizer is unknown"
    try:
        info = json.loads(info_path.read_text("utf-8"))
        source = (info.get("tiny_model") or {}).get("path") or info.get("model") or ""
    except (ValueError, AttributeError) as e:  # a cut or edited probe.json costs the subword counts only
        return None, f"{info_path}: unreadable ({type(e).__name__}), so the model's tokenizer is unknown"
    if not isinstance(source, str) or not source or not Path(source).is_dir():
        return None, (f"tokenizer of '{source}' is not a local folder; subword counts need the tokenizer "
                      "on this machine (no download is attempted)")
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(source, local_files_only=True)
    except (OSError, ValueError) as e:
        return None, f"{source}: cannot load the tokenizer: {e}"
    return CachedTokenizer(lambda texts: tok(list(texts), add_special_tokens=False)["input_ids"]), ""


class CachedTokenizer:
    """text -> subword ids, each distinct text tokenized once. The same answer forms and prompts are counted
    for every ranking row and again for the vocabulary overlap; ``many`` sends every text not seen yet to the
    tokenizer in one batch (half the cost of one call per text with a fast tokenizer)."""

    def __init__(self, tokenize_batch: Callable[[Sequence[str]], Sequence[Sequence[int]]]):
        self._batch = tokenize_batch
        self._seen: dict[str, tuple[int, ...]] = {}

    def __call__(self, text: str) -> tuple[int, ...]:
        ids = self._seen.get(text)
        if ids is None:
            ids = self._seen[text] = tuple(self._batch([text])[0])
        return ids

    def many(self, texts: Iterable[str]) -> list[tuple[int, ...]]:
        texts = list(texts)
        new = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if new:
            self._seen.update(zip(new, map(tuple, self._batch(new)), strict=True))
        return [self._seen[t] for t in texts]


@dataclass(frozen=True)
class BenchmarkTables:
    """What the analyses need of a benchmark directory, read once for all models."""

    prompts: Mapping[str, Mapping[str, Any]]  # prompt_id -> PROMPTS_SCHEMA row
    facts: Mapping[str, Mapping[str, Any]]  # fact_id -> FACTS_SCHEMA row


def read_benchmark_tables(run: Path) -> BenchmarkTables:
    """Prompts and facts of the benchmark in ``run`` (a run, benchmark or release folder), read through
    the core's one reader."""
    from factatlas.benchmark import Benchmark, BenchmarkError
    from factatlas.tables import FACTS_SCHEMA, read_rows

    try:
        bench = Benchmark.open(run)
        prompts = {p["prompt_id"]: p for p in bench.prompts}
        facts = {f["fact_id"]: f for f in read_rows(bench.file("facts.parquet"), FACTS_SCHEMA)}
    except BenchmarkError as e:
        raise AnalysisError(str(e)) from e
    return BenchmarkTables(prompts, facts)


def read_model_results(run: Path, model_dir: Path, tables: BenchmarkTables | None = None, *,
                       with_tokenizer: bool = True) -> ModelResults:
    """The one adapter: ``model_dir/rankings.parquet`` joined with ``run/build`` (prompts, facts)."""
    from factatlas.tables import RANKINGS_SCHEMA, read_rows

    path = model_dir / "rankings.parquet"
    if not path.is_file():
        raise AnalysisError(f"{path}: missing; probe the model first (`factatlas probe RUN --model ...`)")
    tables = tables or read_benchmark_tables(run)
    rankings = read_rows(path, RANKINGS_SCHEMA)  # a cut or foreign file: an error naming it, not a KeyError
    tokenize, note = model_tokenizer(model_dir) if with_tokenizer else (None, "tokenizer not requested")
    joined = join_results(model_dir.name, rankings, tables.prompts, tables.facts, tokenize)
    return ModelResults(joined.model, joined.results, joined.skipped, note, tokenize)


def language_texts(prompts: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """lang -> the distinct texts of its prompts (answer marker removed) and slot forms, sorted: the text
    whose subwords make up the language's vocabulary in the overlap measure."""
    from factatlas.records import ANSWER_MARKER

    texts: dict[str, set[str]] = {}
    for p in prompts:
        bucket = texts.setdefault(p["lang"], set())
        bucket.add(p["text"].replace(ANSWER_MARKER, " "))
        bucket.update(f for f in p.get("candidate_forms") or () if f)
    return {lang: sorted(ts) for lang, ts in sorted(texts.items())}


def benchmark_meta(run: Path) -> dict[str, Any]:
    """benchmark.json and the Western culture named in stats.json (for the gap)."""
    from factatlas.benchmark import Benchmark, BenchmarkError

    try:
        bench = Benchmark.open(run, require=("benchmark.json",))
        meta = dict(bench.meta)
        stats = bench.stats if bench.file("stats.json").exists() else {}
    except BenchmarkError as e:
        raise AnalysisError(str(e)) from e
    meta["western_culture"] = stats.get("western_culture", "west")
    return meta


def country_labels(meta: Mapping[str, Any]) -> tuple[dict[str, str], list[str]]:
    """Country QID -> label as the build recorded it in benchmark.json (the benchmark's own data, never
    curate's config); a benchmark without them (an import) is named, and its countries show as QIDs."""
    labels = dict(meta.get("country_labels") or {})
    return labels, ([] if labels else [str(meta.get("name", "benchmark"))])


def predicate_order(pid: str) -> tuple[int, str]:
    """Natural order of PIDs (P17 before P103); anything else after them, by name."""
    return (int(pid[1:]), pid) if pid[1:].isdigit() else (1 << 62, pid)


def margin_last(value: str) -> tuple[bool, str]:
    """Sort key putting the "all" margin after the languages / cultures."""
    return (value == "all", value)
