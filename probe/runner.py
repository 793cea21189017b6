"""Benchmark directory x model -> ``probe/<model-slug>/rankings.parquet`` (+ template-only, metrics.json).

```
<run>/probe/<slug>/rankings.parquet                 RANKINGS_SCHEMA, one row per scored prompt
<run>/probe/<slug>/rankings_template_only.parquet   the same prompts, subject -> neutral placeholder
<run>/probe/<slug>/metrics.json                     factatlas.probe.evaluate.compute_metrics
<run>/probe/<slug>/probe.json                       what was run, counts, skips with reasons
```
The model folder is written whole: staged beside it and swapped in with its manifest entry
(``write_model_folder``), by a process holding the run lock. With ``--shard i/n`` each process files
``rankings.shard-i-of-n.parquet`` (and the template-only twin, ``probe.shard-i-of-n.json``) under the lock;
the process that finds all n shards present merges them into a new whole folder, without shard files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from factatlas.atomic import write_json
from factatlas.benchmark import Benchmark
from factatlas.errors import ConfigError
from factatlas.probe.batching import greedy_batches
from factatlas.probe.protocol import (
    DEFAULT_SCORING,
    ClozeQuery,
    ScoringRule,
    check_scoring_for_family,
    rank_candidates,
)
from factatlas.probe.threads import torch_threads
from factatlas.records import ANSWER_MARKER, ProbeResult, Prompt
from factatlas.stopwatch import section
from factatlas.tables import (
    read_probe_results,
    write_probe_results,
)

# A word meaning "something" per language: the template-only baseline keeps the template and drops the
# subject. Languages not listed fall back to "X" (counted in probe.json as template_only/generic-placeholder).
PLACEHOLDERS = {
    "ar": "شيء", "ca": "alguna cosa", "de": "etwas", "en": "something", "es": "algo", "fa": "چیزی", "fr": "quelque chose",
    "he": "משהו", "hi": "कुछ", "id": "sesuatu", "it": "qualcosa", "ja": "何か", "ko": "무언가",
    "nl": "iets", "pl": "coś", "pt": "algo", "ru": "что-то", "sw": "kitu", "tr": "bir şey",
    "uk": "щось", "ur": "کچھ", "vi": "cái gì đó", "zh": "某物",
}
GENERIC_PLACEHOLDER = "X"


@dataclass(frozen=True)
class ProbeConfig:
    model: str  # local folder, Hub id, or "tiny" / "tiny-bert" / "tiny-gpt2" / "tiny-t5"
    scoring: str | None = None  # None: the family's default rule
    langs: tuple[str, ...] | None = None
    shard: tuple[int, int] | None = None  # (index, count), 0 <= index < count
    batch_tokens: int = 8192
    device: str = "auto"
    dtype: str = "auto"
    device_map: str | None = None  # "auto": one model spread over every GPU by accelerate (models.load_model)
    family: str | None = None  # override config-based detection
    template_only: bool = True
    include_remainder: bool = False  # causal rules: also score the template's remainder after the slot
    max_new_tokens: int = 16  # generative
    xfactr_init: str = "confidence"
    xfactr_refine: bool = True
    xfactr_length: str = "mean"
    xfactr_max_masks: int = 5
    xfactr_refine_order: str = "order"  # order | confidence (re-computed confidences, X-FACTR §4.2)
    xfactr_beam: int = 1  # beam size of the initial prediction (1: greedy)
    xfactr_masks: str = "search"  # search (1..M, length chosen by score) | oracle (the gold's token count)
    xfactr_max_masks_by_lang: tuple[tuple[str, int], ...] = ()  # per-language M, overriding xfactr_max_masks
    answer_langs: str = "any"  # open answers: any | single (prompt's language) | double (+ English), X-FACTR §3.4
    tiny_steps: int = 300
    out_name: str | None = None  # folder under probe/ (default: the model slug, + "--<rule>" if not default)
    system_prompt: str | None = None  # chat rules: the system message
    shots: int = 0  # chat rules: worked examples per prompt, from shot_split in the prompt's language
    shot_split: str = "dev"
    backend: str = "local"  # local (transformers in this process) | openai (an OpenAI-compatible server)
    api_base: str | None = None  # openai: e.g. http://127.0.0.1:8000/v1
    served_model: str | None = None  # openai: the model name the server expects (default: model)
    api_key_env: str | None = None  # openai: environment variable holding the key (never printed)
    tokenizer: str | None = None  # openai log-prob scoring: the served model's tokenizer (default: model)
    concurrency: int = 4
    max_retries: int = 5
    rate_limit: float | None = None  # requests per second
    timeout: float = 120.0  # openai: total deadline per request, body included (openai_backend.DEFAULT_TIMEOUT_S)
    max_retry_after: float = 60.0  # openai: longest Retry-After waited; longer stops the run with the time
    engine: str = "local"  # local | ray (probe.distributed: a Ray Data pipeline over an actor pool)
    ray_address: str | None = None  # ray: an existing cluster ("auto", "ray://host:10001"); None: a local one
    ray_actors: int = 2  # ray: model replicas
    ray_shards: int = 8  # ray: units of work (stable prompt-id shards)
    ray_cpus: int | None = None  # ray: CPUs of a local instance
    shard_dir: str | None = None  # ray actors: the folder their shard files go to (the driver's staging folder)


@dataclass
class ProbeOutcome:
    out_dir: Path
    rankings_path: Path
    template_only_path: Path | None
    metrics_path: Path | None
    counts: dict[str, Any] = field(default_factory=dict)
    merged: bool = True


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"1/4"`` -> (1, 4): shard index 1 of 4, counted from 0."""
    if not text:
        return None
    i, sep, n = text.partition("/")
    try:
        index, count = int(i), int(n)
    except ValueError:
        index, count = -1, 0
    if not sep or count < 1 or not 0 <= index < count:
        raise ConfigError(f"--shard {text!r}: expected i/n with 0 <= i < n, e.g. 0/4 ... 3/4")
    return index, count


def shard_of(prompt_id: str, count: int) -> int:
    """Stable shard of a prompt: the same on every machine and Python version."""
    return int.from_bytes(hashlib.sha256(prompt_id.encode("utf-8")).digest()[:8], "big") % count


def open_benchmark(path: str | Path, bench: Benchmark | None = None) -> tuple[Benchmark, Path]:
    """The benchmark and the run directory that receives ``probe/``: the run around the benchmark, else
    the folder holding it (``<x>/build`` files under ``<x>``). ``bench``: ``path``'s benchmark, already open."""
    bench = Benchmark.open(path) if bench is None else bench
    if bench.run is not None:
        return bench, bench.run
    return bench, bench.path.parent if bench.path.name == "build" else bench.path


def select_rows(prompts: Sequence[Prompt], langs: Sequence[str] | None,
                shard: tuple[int, int] | None) -> list[Prompt]:
    """The benchmark's prompts this process scores (``--langs``, ``--shard``), in their order."""
    if langs:
        check_langs(langs, sorted({p.lang for p in prompts}))
    keep = row_filter(langs, shard)
    return [p for p in prompts if keep is None or keep(p.prompt_id, p.lang)]


def select_prompts(benchmark: Benchmark, langs: Sequence[str] | None,
                   shard: tuple[int, int] | None) -> list[Prompt]:
    """``select_rows`` on the benchmark's files, filtering while reading: a shard or a ``--langs`` run
    decodes only its own rows (``Benchmark.prompts_where``). Same rows, same order."""
    if langs:
        check_langs(langs, benchmark.languages or sorted({p.lang for p in benchmark.prompts}))
    keep = row_filter(langs, shard)
    return list(benchmark.prompts) if keep is None else benchmark.prompts_where(keep)


def check_langs(langs: Sequence[str], present: Sequence[str]) -> None:
    missing = [lang for lang in langs if lang not in present]
    if missing:
        raise ConfigError(f"--langs: {', '.join(missing)} not in the benchmark; it has {', '.join(sorted(present))}")


def row_filter(langs: Sequence[str] | None, shard: tuple[int, int] | None):
    """(prompt_id, lang) -> keep, or None when every row is kept."""
    if not langs and not shard:
        return None
    wanted = frozenset(langs or ())

    def keep(prompt_id: str, lang: str) -> bool:
        return (not wanted or lang in wanted) and (not shard or shard_of(prompt_id, shard[1]) == shard[0])
    return keep


def placeholder_for(lang: str) -> str:
    return PLACEHOLDERS.get(lang, PLACEHOLDERS.get(lang.split("-")[0], GENERIC_PLACEHOLDER))


def template_only_text(text: str, subject_label: str, lang: str) -> str | None:
    """The prompt with the subject label replaced by the language's placeholder; None if not found
    (e.g. the subject was inflected by the template), so the caller can count the skip."""
    if not subject_label or subject_label not in text:
        return None
    return text.replace(subject_label, placeholder_for(lang))


def model_out_name(slug: str, scoring: str, family: str) -> str:
    return slug if DEFAULT_SCORING.get(family) == scoring else f"{slug}--{scoring}"


# ---- scorer construction -----------------------------------------------------------------------

def make_scorer(lm, scoring: str, config: ProbeConfig):
    """The scorer object for a scoring rule (CandidateScorer or TextGenerator protocol)."""
    check_scoring_for_family(scoring, lm.family)
    try:
        return _make_scorer(lm, scoring, config)
    except ValueError as e:  # a bad option value (e.g. --xfactr-init) or a tokenizer the rule cannot use
        raise ConfigError(f"--scoring {scoring} with model {lm.name}: {e}") from e


# scoring rule -> factory(lm, scoring, config); each factory registers itself under its rules' names, and
# tests/probe/test_scorer_basics.py checks every rule of protocol.SCORING_RULES has one.
SCORER_FACTORIES: dict[str, Callable[..., Any]] = {}


def scorer_factory(*rules: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a scorer factory for the scoring rules ``rules`` (its module imports lazily inside it)."""
    def register(factory: Callable[..., Any]) -> Callable[..., Any]:
        for rule in rules:
            if rule in SCORER_FACTORIES:
                raise ValueError(f"scoring rule '{rule}' has two scorer factories")
            SCORER_FACTORIES[rule] = factory
        return factory
    return register


def _make_scorer(lm, scoring: str, config: ProbeConfig):
    factory = SCORER_FACTORIES.get(scoring)
    if factory is None:
        from factatlas.errors import unknown

        raise ConfigError(unknown("scoring rule", scoring, SCORER_FACTORIES))
    return factory(lm, scoring, config)


@scorer_factory("mlm-independent", "mlm-pll", "mlm-independent-meanprob", "mlm-pll-meanprob")
def _masked_lm(lm, scoring: str, config: ProbeConfig):
    from factatlas.probe.mlm import MaskedLMScorer

    return MaskedLMScorer(lm, "independent" if scoring.startswith("mlm-independent") else "pll",
                          batch_tokens=config.batch_tokens,
                          average="prob" if scoring.endswith("-meanprob") else "logprob")


@scorer_factory("causal-mean", "causal-sum")
def _causal_lm(lm, scoring: str, config: ProbeConfig):
    from factatlas.probe.causal import CausalLMScorer

    return CausalLMScorer(lm, scoring.removeprefix("causal-"), config.include_remainder,
                          batch_tokens=config.batch_tokens)


@scorer_factory("causal-sentence-legacy")
def _causal_sentence(lm, scoring: str, config: ProbeConfig):
    from factatlas.probe.causal import SentenceLegacyScorer

    return SentenceLegacyScorer(lm, batch_tokens=config.batch_tokens)


@scorer_factory("seq2seq")
def _seq2seq(lm, scoring: str, config: ProbeConfig):
    from factatlas.probe.seq2seq import Seq2SeqScorer

    return Seq2SeqScorer(lm, batch_tokens=config.batch_tokens)


@scorer_factory("generative", "generative-lenient")
def _greedy(lm, scoring: str, config: ProbeConfig):
    from factatlas.probe.generative import GreedyGenerator

    return GreedyGenerator(lm, max_new_tokens=config.max_new_tokens, batch_tokens=config.batch_tokens)


@scorer_factory("chat", "chat-lenient")
def _chat(lm, scoring: str, config: ProbeConfig):
    from factatlas.probe.chat import LocalChat

    return LocalChat(lm, max_new_tokens=config.max_new_tokens, batch_tokens=config.batch_tokens)


@scorer_factory("xfactr")
def _xfactr(lm, scoring: str, config: ProbeConfig):
    from factatlas.probe.xfactr import XFactrDecoder

    return XFactrDecoder(lm, max_masks=config.xfactr_max_masks, init=config.xfactr_init,
                         refine=config.xfactr_refine, length=config.xfactr_length, batch_tokens=config.batch_tokens,
                         refine_order=config.xfactr_refine_order, beam=config.xfactr_beam, masks=config.xfactr_masks,
                         max_masks_by_lang=dict(config.xfactr_max_masks_by_lang))


# ---- ranking rows ------------------------------------------------------------------------------

def ranking_row(prompt: Prompt, model: str, scoring: str, ranked: Sequence[str],
                scores: Sequence[float], correct: bool, prediction: str = "") -> ProbeResult:
    return ProbeResult(model, scoring, prompt.prompt_id, prompt.fact_id, prompt.lang, prompt.template_id,
                       prompt.culture, prompt.predicate, tuple(ranked), tuple(float(s) for s in scores),
                       bool(correct), prediction)


def rank_prompts(scorer, prompts: Sequence[Prompt], texts: Sequence[str], model: str,
                 chunk: int = 2048, progress: Callable[[int], None] | None = None,
                 counts: Counter | None = None, chunk_candidates: int = 65536) -> list[ProbeResult]:
    """Closed-set ranking of cloze prompts (``texts[i]`` replaces ``prompts[i].text``).

    The scorer gets the queries in chunks of at most ``chunk`` queries and ``chunk_candidates`` candidates:
    large enough that the in-context tokenization and the pass planning share work across many prompts,
    small enough that a chunk's plan of passes stays a few hundred MB on benchmarks with thousands of
    candidates per prompt.

    Identical queries (same text, same candidate forms in the same order) are scored once and share their
    scores: the template-only baseline puts one placeholder in place of every subject, so its 8,049
    quickstart prompts are 179 distinct queries. ``counts["scored/queries-shared"]`` says how many rows
    reused another row's scores."""
    first_of: dict[tuple[str, tuple[str, ...]], int] = {}
    unique: list[ClozeQuery] = []
    query_of: list[int] = []
    for p, t in zip(prompts, texts, strict=True):
        key = (t, tuple(p.candidate_forms))
        index = first_of.get(key)
        if index is None:
            index = first_of[key] = len(unique)
            unique.append(ClozeQuery(t, p.candidate_forms))
        query_of.append(index)
    if counts is not None:
        counts["scored/queries-shared"] += len(prompts) - len(unique)
    sizes = [(1, len(q.forms)) for q in unique]
    parts = list(greedy_batches(range(len(unique)), sizes, (chunk, chunk_candidates)))
    slots = _slots_once(scorer, unique, parts)
    if slots is None and getattr(scorer, "context_needs", None) is not None:  # every query fits, before any forward
        from factatlas.probe.context import check_queries

        check_queries(scorer, unique)
    # progress counts prompts: a chunk of distinct queries stands for every prompt whose first copy is in it
    represented = Counter(query_of)
    scores: list[Sequence[float]] = []
    for part in parts:
        if slots is None:
            scores.extend(scorer.score([unique[i] for i in part]))
        else:
            scores.extend(scorer.score_slots([slots[i] for i in part]))
        if progress:
            progress(sum(represented[i] for i in part))
    out = []
    for p, index in zip(prompts, query_of, strict=True):
        ranked, ordered = rank_candidates(p.candidate_qids, scores[index])
        gold = set(p.gold_qids)
        out.append(ranking_row(p, model, scorer.scoring, ranked, ordered, bool(ranked) and ranked[0] in gold))
    return out


def _slots_once(scorer, unique: Sequence[ClozeQuery], parts: Sequence[Sequence[int]]) -> list | None:
    """Every query's in-context token ids, chunk by chunk as ``scorer.score`` would make them, checked against
    the model's context before any forward pass; None (the scorer's own ``score`` then tokenizes) for a
    scorer without ``score_slots`` or when no query's byte bound exceeds the context.

    A slot scorer's ``score`` is ``tokenize_slots`` + the context check + ``score_slots``, and the whole-run
    check tokenizes every query whose bound exceeds the context: with a short context (the quickstart's
    128-position tiny BERT: most of its prompts) each query was tokenized twice. Holding every query's
    slots costs about what that check held for its suspects."""
    if getattr(scorer, "score_slots", None) is None or getattr(scorer, "context_needs", None) is None:
        return None
    from factatlas.probe.context import CANDIDATE_FIX, cloze_bound, model_limit, refuse_overlong
    from factatlas.probe.slots import tokenize_slots

    limit = model_limit(scorer.lm)
    suspects = [] if limit is None else [i for i, q in enumerate(unique) if cloze_bound(q) > limit.positions]
    if not suspects:
        return None
    slots: list = [None] * len(unique)
    for part in parts:
        for i, slot in zip(part, tokenize_slots(scorer.lm.tokenizer, [unique[i] for i in part]), strict=True):
            slots[i] = slot
    # as context.check_before_scoring, with the suspects' ids already made
    refuse_overlong(scorer.context_needs([unique[i] for i in suspects], [slots[i] for i in suspects]), limit,
                    scorer.lm.name, CANDIDATE_FIX, total=len(unique))
    return slots


# ---- the run -----------------------------------------------------------------------------------

def probe_benchmark(run: str | Path, config: ProbeConfig, lm=None, merge: bool = True,
                    benchmark: Benchmark | None = None) -> ProbeOutcome:
    """Probe one model on a benchmark and write the outputs. ``lm``: an already loaded model (tests).
    ``merge=False``: a shard leaves merging to its coordinator (the Ray engine's driver). ``benchmark``:
    ``run``'s benchmark, already open (the quickstart's stages share one, so its tables are read once)."""
    if config.engine == "ray" and lm is None:
        from factatlas.probe.distributed import probe_with_ray

        return probe_with_ray(run, config)
    if config.engine not in ("local", "ray"):
        raise ConfigError(f"--engine {config.engine!r}: expected local or ray")
    if config.shard:  # shards run side by side: each takes the run lock only to file its result (_file_shard)
        return _probe(run, config, lm, merge, benchmark)
    from factatlas.rundir import RunDir

    with RunDir(open_benchmark(run, benchmark)[1]).lock():  # one writer: a second probe into this run is refused
        return _probe(run, config, lm, merge, benchmark)


def _probe(run: str | Path, config: ProbeConfig, lm, merge: bool, benchmark: Benchmark | None = None) -> ProbeOutcome:
    benchmark, run_dir = open_benchmark(run, benchmark)
    selected = select_prompts(benchmark, config.langs, config.shard)
    counts: Counter = Counter()
    counts["prompts/benchmark"] = benchmark.prompt_count
    counts["prompts/selected"] = len(selected)

    tiny_info: dict[str, Any] = {}
    if lm is None and config.backend == "openai":
        lm, scorer, scoring = _remote(config, counts, run_dir)
        rule = check_scoring_for_family(scoring, lm.family)
        slug = config.out_name or model_out_name(lm.slug, scoring, lm.family)
        job = ProbeJob(lm, scorer, rule, slug, config.model, None)
        return _run(job, selected, counts, benchmark, run_dir, config, merge)
    if config.backend != "local":
        raise ConfigError(f"--backend {config.backend!r}: expected local or openai")
    if lm is None:
        from factatlas.probe.models import load_model

        name = config.model
        if name.startswith("tiny") and not Path(name).exists():
            name, tiny_info = _build_tiny(run_dir, benchmark.prompts, config)
        lm = load_model(name, family=config.family, device=config.device, dtype=config.dtype,
                        device_map=config.device_map)
        model_name = config.model if tiny_info else lm.name
    else:
        model_name = lm.name
    scoring = config.scoring or DEFAULT_SCORING[lm.family]
    rule = check_scoring_for_family(scoring, lm.family)
    slug = config.out_name or model_out_name(_slug_for(config.model, lm, tiny_info), scoring, lm.family)
    job = ProbeJob(lm, make_scorer(lm, scoring, config), rule, slug, model_name, tiny_info or None)
    with torch_threads(lm.model, lm.device):  # the one thread rule (factatlas.probe.threads)
        return _run(job, selected, counts, benchmark, run_dir, config, merge)


def _remote(config: ProbeConfig, counts: Counter, run_dir: Path):
    """(model, scorer, rule name) of an OpenAI-compatible server; HTTP retries land in ``counts``, answers
    are kept under ``<run>/probe/_answers/`` as they arrive (a rerun sends only what was never answered)."""
    from factatlas.probe.answer_store import AnswerStore, store_path
    from factatlas.probe.openai_backend import (
        EndpointConfig,
        OpenAIClient,
        api_key_from_env,
        make_remote_scorer,
        remote_model,
    )

    if not config.api_base:
        raise ConfigError("--backend openai needs --api-base, e.g. http://127.0.0.1:8000/v1")
    scoring = config.scoring or "chat"
    endpoint = EndpointConfig(config.api_base, config.served_model or config.model, api_key_from_env(config.api_key_env),
                              concurrency=config.concurrency, max_retries=config.max_retries,
                              rate_limit=config.rate_limit, timeout=config.timeout, max_wait=config.max_retry_after)
    lm = remote_model(config.model, endpoint, config.tokenizer, needs_tokenizer=scoring.startswith("causal-"))
    store = AnswerStore(store_path(run_dir, endpoint.model), stats=counts, stats_prefix="http/")
    client = OpenAIClient(endpoint, stats=counts, stats_prefix="http/", store=store)
    return lm, make_remote_scorer(lm, scoring, client, config.max_new_tokens, config.include_remainder), scoring


@dataclass(frozen=True)
class ProbeJob:
    """What one probe run scores with: the model, its scorer and rule, and where results are filed."""

    lm: Any
    scorer: Any  # CandidateScorer | TextGenerator
    rule: ScoringRule
    slug: str
    model_name: str
    tiny_model: dict[str, Any] | None


def select_work(selected: Sequence[Prompt], rule: ScoringRule, counts: Counter) -> list[Prompt]:
    """The prompts a rule scores (cloze for ranking rules and X-FACTR, questions for generation — cloze
    prompts cut at the slot when there are none), counting everything left out."""
    if rule.kind == "rank" or rule.name == "xfactr":
        work = [r for r in selected if r.kind == "cloze"]
    else:
        work = [r for r in selected if r.kind == "question"]
        if not work:
            work = [r for r in selected if r.kind == "cloze"]
            counts["generative/cloze-prefix-used"] = len(work)
    counts[f"skipped/kind-not-used-by-{rule.name}"] = len(selected) - len(work)
    without = sum(1 for r in work if not r.candidate_qids)
    if without:
        counts["skipped/no-candidates"] = without
    return [r for r in work if r.candidate_qids]


def template_only_inputs(work: Sequence[Prompt], counts: Counter) -> tuple[list[Prompt], list[str]]:
    """(prompts, texts with the subject replaced) for the template-only baseline; skips are counted."""
    kept, texts = [], []
    for r in work:
        text = template_only_text(r.text, r.subject_label, r.lang)
        if text is None:
            counts["template_only/skipped:subject-not-in-text"] += 1
            continue
        if text.count(ANSWER_MARKER) != r.text.count(ANSWER_MARKER) or r.text.count(ANSWER_MARKER) > 1:
            counts["template_only/skipped:marker-lost"] += 1
            continue
        if placeholder_for(r.lang) == GENERIC_PLACEHOLDER:
            counts["template_only/generic-placeholder"] += 1
        kept.append(r)
        texts.append(text)
    return kept, texts


def _run(job: ProbeJob, selected, counts: Counter, benchmark: Benchmark, run_dir: Path,
         config: ProbeConfig, merge: bool = True) -> ProbeOutcome:
    from factatlas.console import progress

    lm, scorer, rule, slug, model_name = job.lm, job.scorer, job.rule, job.slug, job.model_name
    work = select_work(selected, rule, counts)
    if config.answer_langs != "any" and rule.kind != "generate":
        raise ConfigError(f"--answer-langs {config.answer_langs}: only the open-answer rules (generative, chat, "
                          f"xfactr) match answers by language; {rule.name} ranks candidates (use --answer-langs any)")
    if rule.kind == "generate":
        counts[f"answers/accepted-languages:{config.answer_langs}"] = len(work)

    def answer(prompts: Sequence[Prompt], tick: Callable[[int], None], tally: Counter | None) -> list[ProbeResult]:
        """The open-answer rules: the model's answers to ``prompts``, matched against the aliases of the
        languages ``--answer-langs`` accepts."""
        from factatlas.probe.generative import (
            LanguageAliases,
            alias_index_by_lang,
            aliases_in,
            answer_prompts,
        )

        by_lang = alias_index_by_lang(benchmark.prompts, benchmark)
        aliases = aliases_in(by_lang, None) if config.answer_langs == "any" else LanguageAliases(
            by_lang, config.answer_langs)
        if rule.name in ("chat", "chat-lenient"):
            from factatlas.probe.chat import ChatConfig, answer_conversations

            chat = ChatConfig(config.system_prompt, config.shots, config.shot_split)
            every = benchmark.prompts  # shots come from every language and split
            answered = answer_conversations(scorer, prompts, every, aliases, model_name, rule.name, chat, tally,
                                            progress=tick)
        else:
            answered = answer_prompts(scorer, prompts, aliases, model_name, rule.name, progress=tick)
        if tally is not None:
            tally.update(getattr(scorer, "counts", {}))
        return answered

    with progress() as bar:
        task = bar.add_task(f"{slug}: {rule.name}", total=len(work))
        if rule.kind == "rank":
            with section("probe/score"):
                rankings = rank_prompts(scorer, work, [r.text for r in work], model_name,
                                        progress=lambda n: bar.advance(task, n), counts=counts)
        else:
            rankings = answer(work, lambda n: bar.advance(task, n), counts)
    counts["prompts/scored"] = len(rankings)

    template_rows: list[ProbeResult] | None = None
    if config.template_only:
        # ranking rules: the template-only baseline; open-answer rules: the same question (or cloze)
        # with the subject replaced, answered and matched the same way (the question-only baseline)
        kept, texts = template_only_inputs(work, counts)
        template_counts: Counter = Counter()
        with progress() as bar:
            task = bar.add_task(f"{slug}: template-only", total=len(kept))
            with section("probe/score template-only"):
                if rule.kind == "rank":
                    template_rows = rank_prompts(scorer, kept, texts, model_name,
                                                 progress=lambda n: bar.advance(task, n), counts=template_counts)
                else:
                    template_rows = answer([dataclasses.replace(r, text=t) for r, t in zip(kept, texts, strict=True)],
                                           lambda n: bar.advance(task, n), None)
        if rule.kind == "rank":
            counts["template_only/queries-shared"] = template_counts["scored/queries-shared"]
        counts["template_only/scored"] = len(template_rows)

    info = {"model": model_name, "model_slug": slug, "family": lm.family, "scoring": scorer.scoring,
            "rule": asdict(rule), "device": lm.device, "dtype": lm.dtype, "config": _jsonable(asdict(config)),
            "counts": dict(sorted(counts.items())), "tie_policy": "score descending; ties keep candidate order",
            "tiny_model": job.tiny_model, "benchmark": str(benchmark.path)}
    if config.shard:
        return _file_shard(run_dir, slug, config, rankings, template_rows, info, benchmark, merge)
    return write_model_folder(run_dir, slug, rankings, template_rows, info, benchmark)


def probed_folders(probe_dir: Path) -> list[Path]:
    """The model folders under ``<run>/probe/``: those holding rankings.parquet, never the staging folder
    (``.factatlas-tmp-*``) of a probe that is running or was killed."""
    from factatlas.atomic import TMP_PREFIX

    if not probe_dir.is_dir():
        return []
    return sorted(p for p in probe_dir.iterdir()
                  if not p.name.startswith(TMP_PREFIX) and (p / "rankings.parquet").exists())


def write_model_folder(run_dir: Path, slug: str, rankings: Sequence[ProbeResult],
                       template_rows: Sequence[ProbeResult] | None, info: Mapping[str, Any],
                       benchmark: Benchmark) -> ProbeOutcome:
    """Write ``probe/<slug>/`` whole: rankings, template-only rankings, probe.json, metrics.json and the
    manifest entry are staged in a sibling folder and swapped in together (``RunDir.replace_stage``), so a
    failure or a kill leaves the old folder or the new one, never new rankings beside old metrics.
    The caller holds the run lock."""
    from factatlas.rundir import RunDir

    run = RunDir(run_dir)
    name = f"probe/{slug}"
    out_dir = run_dir / name
    with run.replace_stage(name) as staging:
        fill_model_folder(run, staging, name, rankings, template_rows, info, benchmark)
    return ProbeOutcome(out_dir, out_dir / "rankings.parquet",
                        out_dir / "rankings_template_only.parquet" if template_rows is not None else None,
                        out_dir / "metrics.json", dict(info["counts"]))


def fill_model_folder(run, staging: Path, name: str, rankings: Sequence[ProbeResult],
                      template_rows: Sequence[ProbeResult] | None, info: Mapping[str, Any],
                      benchmark: Benchmark) -> None:
    """The files of a model folder, written into its staging folder, and the folder's manifest entry."""
    from factatlas.rundir import crash_point

    written = [write_probe_results(staging / "rankings.parquet", rankings)]
    crash_point("probe:rankings-written")
    if template_rows is not None:
        written.append(write_probe_results(staging / "rankings_template_only.parquet", template_rows))
    write_json(staging / "probe.json", info)
    with section("probe/metrics"):
        written.append(write_metrics(staging, rankings, template_rows, benchmark, recorded_training_splits(info)))
    crash_point("probe:metrics-written")
    run.stage_entry(staging, name, config=dict(info["config"]), counts=info["counts"],
                    outputs=written, extra={"model": info["model"], "scoring": info["scoring"]})


SHARD_LOCK_WAIT_S = 600.0  # a shard waits this long for another shard (or a probe) filing its result


def shard_suffix(index: int, count: int) -> str:
    return f".shard-{index}-of-{count}"


def write_shard(folder: Path, shard: tuple[int, int], rankings: Sequence[ProbeResult],
                template_rows: Sequence[ProbeResult] | None, info: Mapping[str, Any]) -> None:
    """One shard's files in ``folder``: rankings (+ template-only) and probe JSON, under shard names."""
    suffix = shard_suffix(*shard)
    write_probe_results(folder / f"rankings{suffix}.parquet", rankings)
    if template_rows is not None:
        write_probe_results(folder / f"rankings_template_only{suffix}.parquet", template_rows)
    write_json(folder / f"probe{suffix}.json", info)


def _file_shard(run_dir: Path, slug: str, config: ProbeConfig, rankings, template_rows, info,
                benchmark: Benchmark, merge: bool) -> ProbeOutcome:
    """``--shard i/n``: file this shard's result; the process that files the last one merges them all into
    a whole new model folder (no shard files left). ``merge=False`` (a Ray actor): write into
    ``config.shard_dir``, the driver's staging folder; the driver holds the lock and merges."""
    from factatlas.console import err
    from factatlas.rundir import RunDir

    assert config.shard is not None
    out_dir = run_dir / "probe" / slug
    if not merge:
        folder = Path(config.shard_dir) if config.shard_dir else out_dir
        write_shard(folder, config.shard, rankings, template_rows, info)
        suffix = shard_suffix(*config.shard)
        return ProbeOutcome(folder, folder / f"rankings{suffix}.parquet", None, None, dict(info["counts"]), merged=False)
    index, count = config.shard
    with RunDir(run_dir).lock(wait_s=SHARD_LOCK_WAIT_S):
        out_dir.mkdir(parents=True, exist_ok=True)
        write_shard(out_dir, config.shard, rankings, template_rows, info)
        merged = merge_shards(out_dir, count)
        if merged is None:
            err.print(f"shard {index}/{count} written; metrics once all shards are there")
            suffix = shard_suffix(index, count)
            return ProbeOutcome(out_dir, out_dir / f"rankings{suffix}.parquet", None, None, dict(info["counts"]),
                                merged=False)
        all_rankings, all_template = merged
        return write_model_folder(run_dir, slug, all_rankings, all_template, merged_info(out_dir, count, info),
                                  benchmark)


def merged_info(folder: Path, count: int, last: Mapping[str, Any]) -> dict[str, Any]:
    """probe.json of a merged run: the shards' counts summed, the rest as the last shard recorded it."""
    counts: Counter = Counter()
    for i in range(count):
        path = folder / f"probe{shard_suffix(i, count)}.json"
        shard_counts = json.loads(path.read_text("utf-8")).get("counts", {}) if path.is_file() else {}
        counts.update({k: v for k, v in shard_counts.items() if isinstance(v, int)})
    for key in ("prompts/benchmark",):  # the same in every shard, not a part of it
        if key in last["counts"]:
            counts[key] = last["counts"][key]
    config = {**last["config"], "shard": None}
    return {**last, "config": config, "counts": dict(sorted(counts.items())), "shards": count}


def merge_shards(out_dir: Path, count: int) -> tuple[list[ProbeResult], list[ProbeResult] | None] | None:
    """The rows of ``rankings.shard-*-of-n`` (and the template-only twins) once all n are present; else None.
    Writes nothing: ``write_model_folder`` files the merged result whole."""
    paths = [out_dir / f"rankings{shard_suffix(i, count)}.parquet" for i in range(count)]
    if not all(p.exists() for p in paths):
        return None
    rankings = [r for p in paths for r in read_probe_results(p)]
    t_paths = [out_dir / f"rankings_template_only{shard_suffix(i, count)}.parquet" for i in range(count)]
    template_rows = None
    if all(p.exists() for p in t_paths):
        template_rows = [r for p in t_paths for r in read_probe_results(p)]
    return rankings, template_rows


def write_metrics(out_dir: Path, rankings: Sequence[ProbeResult], template_rows: Sequence[ProbeResult] | None,
                  bench: Benchmark, trained_on: Sequence[str] | None = None) -> Path:
    """metrics.json: the full metrics of factatlas.probe.evaluate (which reads RANKINGS_SCHEMA rows) with
    the report's configuration (intervals everywhere) and the model's training splits left out of the
    verdict, plus the hashes of its inputs (``metrics_inputs``), so ``factatlas report`` can reuse it.
    ``rankings.parquet`` (and the template-only file) must already be written in ``out_dir``."""
    from factatlas.probe.evaluate import VALIDATION_BOOTSTRAP, MetricsConfig, compute_metrics, metrics_inputs

    metrics = compute_metrics(rankings, bench, MetricsConfig(bootstrap=VALIDATION_BOOTSTRAP),
                              template_only_rows=template_rows, trained_on=trained_on)
    t_path = out_dir / "rankings_template_only.parquet" if template_rows is not None else None
    metrics["inputs"] = metrics_inputs(out_dir / "rankings.parquet", t_path, bench.path, trained_on)
    path = out_dir / "metrics.json"
    write_json(path, metrics)
    return path


def recorded_training_splits(info: Mapping[str, Any]) -> list[str] | None:
    """The splits a probe.json says its model was trained on (the tiny model's recipe, or
    ``trained_on_splits`` written for any model); None when it records none."""
    recorded = info.get("trained_on_splits", (info.get("tiny_model") or {}).get("trained_on_splits"))
    return None if recorded is None else list(recorded)


def _slug_for(model: str, lm, tiny_info: Mapping[str, Any]) -> str:
    if tiny_info:
        return tiny_info["slug"]
    return lm.slug


def _jsonable(obj: Any) -> Any:
    return json.loads(json.dumps(obj, default=str))


TINY_ALIASES = {"tiny": "bert", "tiny-bert": "bert", "tiny-gpt2": "gpt2", "tiny-t5": "t5", "tiny-chat": "gpt2"}


def _build_tiny(run_dir: Path, prompts: Sequence[Prompt], config: ProbeConfig) -> tuple[str, dict[str, Any]]:
    """Build (or reuse) a tiny model trained on the benchmark's train split (else its dev split)."""
    from factatlas.console import err
    from factatlas.probe.tiny import (
        TINY_CHAT_TEMPLATE,
        chat_examples,
        make_tiny_model,
        tokenizer_texts,
        true_fact_examples,
    )

    if config.model not in TINY_ALIASES:
        raise ConfigError(f"unknown tiny model '{config.model}'. Available: {', '.join(sorted(TINY_ALIASES))}")
    arch = TINY_ALIASES[config.model]
    splits_present = sorted({p.split for p in prompts})
    train_splits = [s for s in ("train", "dev") if s in splits_present][:1]
    examples = true_fact_examples(prompts, splits=train_splits) if train_splits else []
    chat = config.model == "tiny-chat"  # a GPT-2 with a chat template, also trained on chat-format questions
    name = "tiny-chat" if chat else f"tiny-{arch}"
    folder = run_dir / "probe" / "_models" / name
    texts = tokenizer_texts(prompts)
    if chat:
        asked = chat_examples(prompts, train_splits, config.system_prompt)
        examples += asked
        texts += [e.text for e in asked]
    recipe = {"arch": arch, "steps": config.tiny_steps, "train_splits": train_splits,
              "text_sha256": hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()}
    stamp = folder / "factatlas-tiny.json"
    if not stamp.exists() or json.loads(stamp.read_text("utf-8")) != recipe:  # reuse only an identical build
        err.print(f"building {name}: tokenizer on the benchmark text, {config.tiny_steps} fine-tuning "
                  f"steps on {len(examples)} true facts of split {train_splits or 'none'}")
        make_tiny_model(folder, arch, texts, examples=examples, steps=config.tiny_steps,
                        vocab_size=2000 if arch != "t5" else 1000,
                        chat_template=TINY_CHAT_TEMPLATE if chat else None)
        write_json(stamp, recipe)
    info = {"arch": arch, "path": str(folder), "trained_on_splits": train_splits,
            "train_examples": len(examples), "steps": config.tiny_steps, "slug": name}
    return str(folder), info
