"""One probe in this process: the run's settings -> the rule spec and every check that needs only the
benchmark (before any model loads) -> the backend's model and the rule's scorer -> rankings (and the
template-only baseline) -> the model folder. The engines call it (``local`` directly, ``ray`` per actor)."""

from __future__ import annotations

import dataclasses
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factatlas.benchmark import Benchmark
from factatlas.probe.backends import Opened, OpenRequest
from factatlas.probe.model_folder import ProbeOutcome, file_shard, write_model_folder
from factatlas.probe.ranking import ranked_rows
from factatlas.probe.rule import AnswerJob, RuleSpec, default_rules, rule_for_family
from factatlas.probe.selection import open_benchmark, prompt_fields, select_prompts, take_prompts
from factatlas.probe.settings import ProbeConfig
from factatlas.probe.template_only import template_only_inputs
from factatlas.probe.threads import torch_threads
from factatlas.records import ProbeResult, Prompt
from factatlas.stopwatch import section


def probe_here(run: str | Path, config: ProbeConfig, lm=None, merge: bool = True,
               benchmark: Benchmark | None = None) -> ProbeOutcome:
    """Probe one model on a benchmark in this process and write the outputs. ``lm``: an already loaded
    model (tests, Ray actors). ``merge=False``: a shard leaves merging to its coordinator (the Ray driver).
    ``benchmark``: ``run``'s benchmark, already open (the quickstart's stages share one).

    The rule and every check that needs only the benchmark come first: a refused run takes no lock, builds
    and loads no model."""
    benchmark, run_dir = open_benchmark(run, benchmark)
    spec = checked_rule(config, benchmark, lm)
    if config.shard:  # shards run side by side: each takes the run lock only to file its result
        return _probe(config, spec, lm, merge, benchmark, run_dir)
    from factatlas.rundir import RunDir

    with RunDir(run_dir).lock():  # one writer: a second probe into this run is refused
        return _probe(config, spec, lm, merge, benchmark, run_dir)


def checked_rule(config: ProbeConfig, benchmark: Benchmark, lm=None) -> RuleSpec:
    """The rule spec for the model's family (told by the backend without loading it) and the rule's checks
    that need only the benchmark; nothing is loaded, built or locked yet."""
    family = lm.family if lm is not None else config.backend.backend.family(config.model, config.backend.options)
    spec = resolve_rule(config, family)
    if spec.rule.check is not None:
        spec.rule.check(spec.options, benchmark.splits)
    return spec


def resolve_rule(config: ProbeConfig, family: str) -> RuleSpec:
    """The rule spec of a run on a model of ``family``: the rule named, else the backend's default (chat
    behind a server), else the family's."""
    request = config.rule
    if request.name is None and config.backend.backend.default_rule:
        request = dataclasses.replace(request, name=config.backend.backend.default_rule)
    return request.resolve(family)


def model_out_name(slug: str, scoring: str, family: str) -> str:
    """The model folder's name: the model's slug, + ``--<rule>`` when the rule is not the family's default."""
    return slug if default_rules().get(family) == scoring else f"{slug}--{scoring}"


def _probe(config: ProbeConfig, spec: RuleSpec, lm, merge: bool, benchmark: Benchmark, run_dir: Path
           ) -> ProbeOutcome:
    # a ranking rule reads only the fields of ``SCORED_FIELDS``; an open-answer rule reads records
    selected = select_prompts(benchmark, config.langs, config.shard,
                              fields=None if spec.rule.open_answer else SCORED_FIELDS)
    counts: Counter = Counter({"prompts/benchmark": benchmark.prompt_count, "prompts/selected": len(selected)})
    rule = spec.rule
    work = select_work(selected, rule, counts)
    if rule.open_answer:
        counts[f"answers/accepted-languages:{spec.answer_langs}"] = len(work)
    opened = config.backend.backend.open(OpenRequest(config.model, config.backend.options, spec, run_dir,
                                      lambda: benchmark.prompts, config.tiny_steps, counts, lm))
    rule_for_family(spec.name, opened.lm.family)  # a model given to us, or a --family override
    slug = config.out_name or model_out_name(opened.slug, spec.name, opened.lm.family)
    job = ProbeJob(opened, spec, slug, config, benchmark, run_dir)
    threads = torch_threads(opened.lm.model, opened.lm.device) if opened.lm.model is not None else nullcontext()
    with threads:  # the one thread rule (factatlas.probe.threads), for a model in this process
        rankings, template_rows = score(job, work, counts)
    info = probe_info(job, counts)
    # the metrics decode the ranked prompts again: the selection's records are not kept beside them
    del selected, work
    if config.shard:
        return file_shard(run_dir, slug, config.shard, rankings, template_rows, info, benchmark, merge,
                          config.shard_dir)
    return write_model_folder(run_dir, slug, rankings, template_rows, info, benchmark)


# What a ranking rule's probe reads of its prompts (``select_work``, ``template_only_inputs``, ``score`` and
# ``ranking.ranked_rows``): the selection holds these columns only (``SelectedPrompts``), never a record.
SCORED_FIELDS = ("prompt_id", "fact_id", "lang", "template_id", "culture", "predicate", "kind", "text",
                 "subject_label", "gold_qids", "candidate_qids", "candidate_forms")


@dataclass(frozen=True)
class ProbeJob:
    """What one probe run scores with, and where its results are filed."""

    opened: Opened
    spec: RuleSpec
    slug: str
    config: ProbeConfig
    benchmark: Benchmark
    run_dir: Path


def select_work(selected: Sequence[Prompt], rule, counts: Counter) -> Sequence[Prompt]:
    """The prompts a rule scores (cloze prompts, or questions — cloze prompts cut at the slot when there are
    none), counting everything left out. Read from the selection's columns; the work is a view of it."""
    cloze, question, without = array("q"), array("q"), set()
    for i, (kind, candidates) in enumerate(prompt_fields(selected, "kind", "candidate_qids")):
        if kind == "cloze":
            cloze.append(i)
        elif kind == "question":
            question.append(i)
        if not candidates:
            without.add(i)
    if rule.prompts == "cloze":
        work = cloze
    else:
        work = question
        if not work:
            work = cloze
            counts["generative/cloze-prefix-used"] = len(work)
    counts[f"skipped/kind-not-used-by-{rule.name}"] = len(selected) - len(work)
    skipped = sum(1 for i in work if i in without)
    if skipped:
        counts["skipped/no-candidates"] = skipped
    return take_prompts(selected, [i for i in work if i not in without])


def score(job: ProbeJob, work: Sequence[Prompt], counts: Counter
          ) -> tuple[Sequence[ProbeResult], Sequence[ProbeResult] | None]:
    """The rankings of ``work`` and, unless turned off, of the template-only (question-only) baseline."""
    from factatlas.console import progress

    rule = job.spec.rule
    with progress() as bar:
        task = bar.add_task(f"{job.slug}: {rule.name}", total=len(work))
        with section("probe/score"):
            texts = (text for (text,) in prompt_fields(work, "text"))  # read once, as the ranking goes
            rankings = _scored(job, work, texts, lambda n: bar.advance(task, n), counts)
    counts["prompts/scored"] = len(rankings)
    if not job.config.template_only:
        return rankings, None
    # ranking rules: the template-only baseline; open-answer rules: the same question (or cloze) with the
    # subject replaced, answered and matched the same way (the question-only baseline)
    kept, texts = template_only_inputs(work, counts)
    template_counts: Counter = Counter()
    with progress() as bar:
        task = bar.add_task(f"{job.slug}: template-only", total=len(kept))
        with section("probe/score template-only"):
            template_rows = _scored(job, kept, texts, lambda n: bar.advance(task, n), template_counts,
                                    baseline=True)
    if not rule.open_answer:
        counts["template_only/queries-shared"] = template_counts["scored/queries-shared"]
    counts["template_only/scored"] = len(template_rows)
    return rankings, template_rows


def _scored(job: ProbeJob, prompts: Sequence[Prompt], texts: Iterable[str], tick: Callable[[int], None],
            counts: Counter, baseline: bool = False) -> Sequence[ProbeResult]:
    """Rows of ``prompts`` read as ``texts``: ranked (closed-set rules) or answered and matched by the rule."""
    rule, scorer, name = job.spec.rule, job.opened.scorer, job.opened.model_name
    if not rule.open_answer:
        # a backend without the option (a server's) has no host step to run ahead
        prefetch = getattr(job.config.backend.options, "prefetch", None)
        return ranked_rows(scorer, prompts, texts, name, progress=tick, counts=counts, prefetch=prefetch)
    asked = [dataclasses.replace(r, text=t) for r, t in zip(prompts, texts, strict=True)] if baseline else prompts
    answer_job = AnswerJob(name, job.spec, _aliases(job), job.benchmark.prompts,
                           None if baseline else counts, tick)
    rows = rule.answer(scorer, asked, answer_job)
    if not baseline:
        counts.update(getattr(scorer, "counts", {}))
    return rows


def _aliases(job: ProbeJob):
    """The forms an open answer may match: every alias of the benchmark, seen through the rule's
    ``answer_langs`` (any | single | double)."""
    from factatlas.probe.generative import LanguageAliases, alias_index_by_lang

    by_lang = alias_index_by_lang(job.benchmark.prompts, job.benchmark)
    return LanguageAliases(by_lang, job.spec.answer_langs)


def probe_info(job: ProbeJob, counts: Counter) -> dict[str, Any]:
    """probe.json: what was run (the settings, the rule spec), with what, and every count."""
    lm, opened = job.opened.lm, job.opened
    return {"model": opened.model_name, "model_slug": job.slug, "family": lm.family, "scoring": opened.scorer.scoring,
            "rule": job.spec.to_json(), "device": lm.device, "dtype": lm.dtype, "config": job.config.to_json(),
            "counts": dict(sorted(counts.items())), "tie_policy": "score descending; ties keep candidate order",
            "tiny_model": opened.tiny_model, "benchmark": str(job.benchmark.path)}


def run_local(run: str | Path, config: ProbeConfig, benchmark: Benchmark | None = None) -> ProbeOutcome:
    """The ``local`` engine's entry (``factatlas.probe.engines``)."""
    return probe_here(run, config, benchmark=benchmark)
