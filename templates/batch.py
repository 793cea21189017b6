"""Render curated facts into prompts for every language and template, counting every failure by reason.

`factatlas render RUN --langs ar,en` reads ``<run>/curate/{facts,entities,labels}.parquet`` and writes
``<run>/render/prompts.parquet`` (factatlas.tables.PROMPTS_SCHEMA; split and candidate columns are left
empty — the build stage fills them) and ``<run>/render/dropped.parquet`` (DROPS_SCHEMA, step "render").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from factatlas.records import ANSWER_MARKER, Drop, Entity, Fact
from factatlas.templates.library import Library, Template
from factatlas.templates.render import RenderedAnswer, Renderer, RenderFailure


@dataclass
class RenderReport:
    rows: list[dict] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)
    counts: Counter = field(default_factory=Counter)  # "rendered", "dropped/<reason>", "gold-dropped/<reason>"

    def table(self) -> str:
        width = max((len(k) for k in self.counts), default=10)
        return "\n".join(f"{k:<{width}}  {v}" for k, v in sorted(self.counts.items()))


def render_facts(facts: Iterable[Fact], entities: Mapping[str, Entity], library: Library,
                 langs: Sequence[str], kinds: Sequence[str] = ("cloze", "question"),
                 renderer: Renderer | None = None) -> RenderReport:
    """One row per (fact, language, template) that renders; a Drop for each that does not."""
    renderer = renderer or Renderer(entities)
    report = RenderReport()
    for fact in facts:
        for lang in langs:
            for template in library.templates(lang, fact.predicate):
                if template.kind not in kinds:
                    continue
                _render_one(fact, template, renderer, report)
    report.rows.sort(key=lambda r: r["prompt_id"])
    return report


def _drop(report: RenderReport, item: str, fact: Fact, failure: RenderFailure, prefix: str = "dropped") -> None:
    report.counts[f"{prefix}/{failure.reason}"] += 1
    report.drops.append(Drop(item, "render", failure.reason, failure.detail, fact.culture, fact.predicate))


def _render_one(fact: Fact, template: Template, renderer: Renderer, report: RenderReport) -> None:
    prompt_id = f"{fact.id}|{template.lang}|{template.id}"
    prompt = renderer.render_prompt(template, fact.subject)
    if isinstance(prompt, RenderFailure):
        _drop(report, prompt_id, fact, prompt)
        return
    golds: list[RenderedAnswer] = []
    for qid in fact.object_qids:
        answer = renderer.render_answer(template, qid, fact.subject)
        if isinstance(answer, RenderFailure):
            _drop(report, f"{prompt_id}|{qid}", fact, answer, prefix="gold-dropped")
        else:
            golds.append(answer)
    if not golds:
        _drop(report, prompt_id, fact, RenderFailure("no-gold", "no object of the fact could be rendered"))
        return
    report.counts["rendered"] += 1
    subject = renderer.entities[fact.subject]
    report.rows.append({
        "prompt_id": prompt_id, "fact_id": fact.id, "lang": template.lang, "template_id": template.id,
        "kind": template.kind, "text": prompt.text,
        "answer_start": prompt.text.find(ANSWER_MARKER) if template.kind == "cloze" else -1,
        "pair": "", "culture": fact.culture, "predicate": fact.predicate, "split": "",
        "subject_qid": fact.subject, "subject_label": subject.labels.get(template.lang, ""),
        "gold_qids": [g.qid for g in golds], "gold_forms": [list(g.forms) for g in golds],
        "candidate_qids": [], "candidate_forms": [], "template_status": template.status,
        "article_langs": list(fact.article_langs), "home_langs": list(fact.home_langs),
        "popularity": fact.popularity,
    })


def render_run(run: str | Path, langs: Sequence[str] | None = None, library: Library | None = None,
               kinds: Sequence[str] = ("cloze", "question")) -> RenderReport:
    """Render ``<run>/curate/`` into ``<run>/render/`` and record the stage in the manifest."""
    from datetime import UTC, datetime

    from factatlas.errors import ConfigError
    from factatlas.rundir import RunDir
    from factatlas.tables import PROMPTS_SCHEMA, read_entities, read_facts, write_drops, write_table
    from factatlas.templates.library import load_library

    started = datetime.now(UTC)
    run_dir = RunDir.open(run)
    curate = run_dir.root / "curate"
    if not (curate / "facts.parquet").is_file():
        raise ConfigError(f"{curate / 'facts.parquet'} not found; run `factatlas curate` for this run first")
    facts = read_facts(curate / "facts.parquet")
    entities = read_entities(curate)
    library = library or load_library(langs)
    langs = tuple(langs or library.languages)
    report = render_facts(facts, entities, library, langs, kinds)
    out = run_dir.stage("render")
    write_table(out / "prompts.parquet", report.rows, PROMPTS_SCHEMA, sort_by=("prompt_id",))
    write_drops(out / "dropped.parquet", report.drops)
    run_dir.record_stage("render", config={"langs": list(langs), "kinds": list(kinds)},
                         counts=dict(sorted(report.counts.items())),
                         outputs=[out / "prompts.parquet", out / "dropped.parquet"], started=started)
    return report
