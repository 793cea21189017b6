"""The analyses' adapter: a run's rankings joined with its benchmark as ``ScoredPrompt`` records.

The records and the join are the core's and the aggregate module's (``factatlas.records.ScoredPrompt``,
``factatlas.probe.aggregate.join``); ``read_model_results`` is the only place here that knows the file
layout (rankings.parquet through the typed reader, the benchmark through ``Benchmark.open``, probe.json).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factatlas.errors import FactatlasError
from factatlas.probe.aggregate import PromptStream, Tokenize, join
from factatlas.records import Fact, ProbeResult, Prompt, ScoredPrompt

if TYPE_CHECKING:
    from factatlas.benchmark import Benchmark
    from factatlas.tables import FactTable


class AnalysisError(FactatlasError):
    """Rankings or a benchmark cannot be analysed (missing, or they do not belong together)."""


@dataclass(frozen=True)
class ModelResults:
    """All scored prompts of one model on one benchmark, with every row not used counted by reason."""

    model: str
    results: Sequence[ScoredPrompt]  # ScoredColumns from the join: records made on read
    skipped: Mapping[str, int] = field(default_factory=dict)
    tokenizer_note: str = ""  # why gold_subwords is missing, when it is
    # language -> the subword ids of its texts (prompts and answer forms) when the model's tokenizer is local
    # (empty with one language ranked: no pair has an overlap); None without the tokenizer
    vocabularies: Mapping[str, frozenset[int]] | None = None


# join() counts -> the reasons the analyses print
SKIP_REASONS = {"unknown_prompt": "prompt not in the benchmark", "duplicate_prompt": "prompt ranked twice",
                "foreign_candidates": "ranking does not order the prompt's candidates",
                "gold_not_in_facts": "gold missing from facts.parquet (kept as direct)"}


def join_results(model: str, rankings: Iterable[ProbeResult], prompts: Mapping[str, Prompt] | PromptStream,
                 facts: Mapping[str, Fact], tokenize: Tokenize | None = None,
                 kinds_in_benchmark: Mapping[str, int] | None = None) -> ModelResults:
    """The one join (``factatlas.probe.aggregate.join``) with the facts (gold provenance, countries) and
    the model's tokenizer; results in prompt_id order, skipped rows by reason."""
    joined = join(rankings, prompts, model=model, facts=facts, tokenize=tokenize,
                  kinds_in_benchmark=kinds_in_benchmark)
    skipped = {reason: joined.counts[key] for key, reason in SKIP_REASONS.items() if joined.counts.get(key)}
    # the probe writes its rankings in prompt_id order: sorting them again made every prompt id a string
    scored = joined.scored if joined.ascending else joined.scored.sorted_by("prompt_id")
    return ModelResults(model, scored, dict(sorted(skipped.items())))


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
    shown = f"probe/{model_dir.name}/probe.json"  # the pages are shared: the run's own path, not this machine's
    if not info_path.exists():
        return None, f"{shown}: missing, so the model's tokenizer is unknown"
    try:
        info = json.loads(info_path.read_text("utf-8"))
        source = (info.get("tiny_model") or {}).get("path") or info.get("model") or ""
    except (ValueError, AttributeError) as e:  # a cut or edited probe.json costs the subword counts only
        return None, f"{shown}: unreadable ({type(e).__name__}), so the model's tokenizer is unknown"
    if not isinstance(source, str) or not source or not Path(source).is_dir():
        return None, (f"tokenizer of '{source}' is not a local folder; subword counts need the tokenizer "
                      "on this machine (no download is attempted)")
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(source, local_files_only=True)
    except (OSError, ValueError) as e:
        return None, f"{source}: cannot load the tokenizer: {e}"
    from factatlas.probe.slots import _encode  # the Rust tokenizer directly: half the CPU, the same ids

    return CachedTokenizer(lambda texts: _encode(tok, texts)), ""


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

    def vocabulary(self, texts: Iterable[str], chunk: int = 4096) -> frozenset[int]:
        """The subword ids of ``texts``, tokenized a chunk at a time and not kept: a language's texts are
        every prompt's, which no later call asks for again."""
        texts = list(dict.fromkeys(texts))
        return frozenset(i for start in range(0, len(texts), chunk)
                         for ids in self._batch(texts[start:start + chunk]) for i in ids)


@dataclass(frozen=True)
class SubwordView:
    """What the analyses read of the model's tokenizer: the subword ids of every gold's first (in-prompt)
    form, as the join measures it (``aggregate._gold_subwords``), and each language's vocabulary."""

    gold_ids: Mapping[str, tuple[int, ...]]  # " " + form -> its ids
    vocabularies: Mapping[str, frozenset[int]]  # language -> subword ids of its texts (two or more languages)

    def __call__(self, text: str) -> tuple[int, ...]:
        """The join's ``tokenize``: every text it asks for was tokenized up front (``gold_texts``)."""
        try:
            return self.gold_ids[text]
        except KeyError:
            raise AnalysisError(f"gold form {text!r} was not among the gold forms tokenized before the join "
                                "(records.gold_texts): a bug; report it with the benchmark") from None


def gold_texts(bench: Benchmark, langs: Iterable[str]) -> list[str]:
    """The texts whose subwords the join counts: a space and the stripped first form of every gold of
    ``langs``' prompts, each once, sorted (one Arrow column read, no prompt record made)."""
    import pyarrow.compute as pc

    forms: set[str] = set()
    for lang in sorted(langs):
        for table in bench.prompt_tables(columns=["gold_forms"], lang=lang):
            golds = pc.list_flatten(table.column("gold_forms"))  # a gold's forms per row
            forms.update(pc.unique(pc.list_flatten(pc.list_slice(golds, 0, 1))).to_pylist())
    return sorted({" " + form.strip() for form in forms})


def subword_view(model_dir: Path, bench: Benchmark, langs: Collection[str]) -> tuple[SubwordView | None, str]:
    """The model's ``SubwordView`` for the prompts of ``langs``, or None and why not (``model_tokenizer``).

    Computed in a forked child (``factatlas.forked``): loading a tokenizer through transformers imports torch,
    about 240 MB resident, which stayed in the report's process under the join and every later section (the
    analyses of a million prompts peaked at 765 MB with it, 489 MB without); the child gives it back."""
    from functools import partial

    from factatlas.forked import run_forked

    return run_forked(partial(_subword_view_here, model_dir, bench, frozenset(langs)),
                      f"the subword counts of probe/{model_dir.name}").value


def _subword_view_here(model_dir: Path, bench: Benchmark, langs: frozenset[str]) -> tuple[SubwordView | None, str]:
    tokenize, note = model_tokenizer(model_dir)
    if tokenize is None:
        return None, note
    texts = gold_texts(bench, langs)
    vocabularies: dict[str, frozenset[int]] = {}
    if len(langs) > 1:  # a vocabulary is read for a language pair only
        by_lang = language_texts(p for batch in bench.iter_prompts(lambda _pid, lang: lang in langs) for p in batch)
        vocabularies = {lang: tokenize.vocabulary(ts) for lang, ts in by_lang.items()}
    return SubwordView(dict(zip(texts, tokenize.many(texts), strict=True)), vocabularies), ""


def open_benchmark(run: Path, bench: Benchmark | None = None) -> Benchmark:
    """The benchmark in ``run`` (a run, benchmark or release folder) through the core's one reader, its
    facts read now (they are shared by every model; each model's join reads the prompts it ranked).
    ``bench``: that benchmark already open (the report's)."""
    from factatlas.benchmark import Benchmark, BenchmarkError

    try:
        bench = bench if bench is not None else Benchmark.open(run)
        _ = (bench.prompt_count, benchmark_facts(bench))  # read once, here, where a damaged file is named
    except BenchmarkError as e:
        raise AnalysisError(str(e)) from e
    return bench


def benchmark_facts(bench: Benchmark) -> FactTable:
    """The benchmark's facts as columns (``tables.FactTable``: a ``Mapping`` fact_id -> ``Fact``, each record made
    when read), read once and kept on the benchmark as its cached properties are: every model's join and
    every section that reads the facts share it, and none holds a ``Fact`` per fact (``facts_by_id``)."""
    from factatlas.tables import FactTable

    facts = bench.__dict__.get("_analysis_facts")
    if facts is None:
        facts = bench.__dict__["_analysis_facts"] = bench._read(lambda: FactTable(bench.file("facts.parquet")),
                                                                "facts.parquet")
    return facts


def read_model_results(run: Path, model_dir: Path, bench: Benchmark | None = None, *,
                       with_tokenizer: bool = True) -> ModelResults:
    """The one adapter: ``model_dir/rankings.parquet`` (the typed reader) joined with the benchmark."""
    from factatlas.benchmark import BenchmarkError
    from factatlas.probe.aggregate import ranked_prompts
    from factatlas.tables import ProbeResultsFile

    path = model_dir / "rankings.parquet"
    if not path.is_file():
        raise AnalysisError(f"{path}: missing; probe the model first (`factatlas probe RUN --model ...`)")
    bench = bench or open_benchmark(run)
    # the rankings stream into the join a batch at a time (their scores are never all held), against the
    # ranked prompts a row group at a time (one language's run decodes that language's rows)
    rows = ProbeResultsFile(path)
    try:
        view, note = subword_view(model_dir, bench, rows.languages()) if with_tokenizer else \
            (None, "tokenizer not requested")
        joined = join_results(model_dir.name, rows, ranked_prompts(bench, rows), benchmark_facts(bench), view,
                              bench.kind_counts)
    except BenchmarkError as e:
        raise AnalysisError(str(e)) from e
    return ModelResults(joined.model, joined.results, joined.skipped, note,
                        view.vocabularies if view is not None else None)


def stream_prompts(bench: Benchmark, results: Sequence[ScoredPrompt]) -> PromptStream:
    """The prompts of ``results`` (in prompt_id order, as ``read_model_results`` gives them) read beside them
    a row group at a time: the wrong answers' texts and forms without holding the prompts."""
    from factatlas.probe.scored import ScoredColumns

    return PromptStream(bench, {lang for (lang,) in ScoredColumns.of(results).group_rows("lang")})


def language_texts(prompts: Iterable[Prompt]) -> dict[str, list[str]]:
    """lang -> the distinct texts of its prompts (answer marker removed) and slot forms, sorted: the text
    whose subwords make up the language's vocabulary in the overlap measure."""
    from factatlas.records import ANSWER_MARKER

    texts: dict[str, set[str]] = {}
    for p in prompts:
        bucket = texts.setdefault(p.lang, set())
        bucket.add(p.text.replace(ANSWER_MARKER, " "))
        bucket.update(f for f in p.candidate_forms if f)
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
