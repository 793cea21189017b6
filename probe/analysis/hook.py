"""The report's hook: one model's analyses as a page beside report.html, and a link to it.

``factatlas report`` calls ``with_analyses`` once per model; the page holds DLAMA's diagnostics, BMLAMA's
cross-lingual consistency and X-FACTR's views for that model (``factatlas compare`` has them for several).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from factatlas.probe.analysis.records import AnalysisError

if TYPE_CHECKING:
    from factatlas.benchmark import Benchmark

FOLDER = "analyses"
RECORDED = object()  # the training splits probe.json records (the report passes its --trained-on instead)


def write_model_analyses(run: Path, model_dir: Path, rankc_weighting: str = "softmax",
                         trained: Sequence[str] | None | object = RECORDED, bench: Benchmark | None = None,
                         out_dir: Path | None = None, plots: bool = True) -> Path:
    """``model_dir/analyses/analyses.html`` (+ CSVs and, with ``plots``, PNGs) on the report's held-out split; returns the
    page's path. ``trained``: the splits the model was trained on (default: what probe.json records).
    ``bench``: the run's benchmark when the caller has it open already (the report), else it is read.
    ``out_dir``: where the page goes instead of ``model_dir/analyses`` (the report's staging folder)."""
    from factatlas.memory import give_back
    from factatlas.probe.analysis.dlama import object_cultures
    from factatlas.probe.analysis.errors import benchmark_context
    from factatlas.probe.analysis.page import write_page
    from factatlas.probe.analysis.records import (
        benchmark_facts,
        benchmark_meta,
        country_labels,
        open_benchmark,
        read_model_results,
        stream_prompts,
    )
    from factatlas.probe.analysis.sections import (
        crosslingual_sections,
        dlama_sections,
        error_sections,
        locality_sections,
        popularity_sections,
        xfactr_sections,
    )
    from factatlas.probe.analysis.splits import HELD_OUT, choose_splits, select, trained_on

    bench = open_benchmark(run, bench)
    give_back()  # what the joins of the metrics freed
    taught = trained_on(model_dir) if trained is RECORDED else trained
    choice = choose_splits(HELD_OUT, list(bench.splits), {model_dir.name: taught})  # the split column alone
    model = select(read_model_results(run, model_dir, bench), choice)
    give_back()  # what the join freed (its row groups' pages): the sections' peaks stack on what is kept
    meta = benchmark_meta(run)
    labels, _ = country_labels(meta)
    out_dir = model_dir / FOLDER if out_dir is None else out_dir
    scope = choice.label
    owners = object_cultures(benchmark_facts(bench).values())  # every fact, whatever split is analysed
    steps = (
        lambda: dlama_sections({model.model: model.results}, owners=owners, country_label=labels, scope=scope),
        lambda: crosslingual_sections([model], rankc_weighting, scope=scope),
        lambda: xfactr_sections([model], scope=scope),
        # a wrong answer's text and form, read beside the results (prompt_id order)
        lambda: error_sections({model.model: model.results}, benchmark_context(bench),
                               prompts=lambda results: stream_prompts(bench, results), scope=scope),
        lambda: locality_sections({model.model: model.results}, benchmark_facts(bench).values()),
        lambda: popularity_sections({model.model: model.results}, benchmark_facts(bench).values()),
    )
    sections = []
    for step in steps:  # one after another, what each freed given back before the next one's peak
        sections += step()
        give_back()
    subtitle = (f"run {run.name} · model {model.model} · {scope} ({choice.why}) · benchmark {meta.get('name')} "
                f"({meta.get('pair')})")
    return write_page(out_dir, "analyses", f"factatlas analyses — {model.model}", subtitle, sections, plots=plots)[1]


def with_analyses(page: str, run: Path, model_dir: Path, rankc_weighting: str = "softmax",
                  trained: Sequence[str] | None | object = RECORDED, bench: Benchmark | None = None,
                  out_dir: Path | None = None, plots: bool = True) -> str:
    """Write the model's analysis page and add a section linking to it at the end of ``page``; when the
    analyses cannot be computed, the section says why instead."""
    try:
        path = write_model_analyses(Path(run), Path(model_dir), rankc_weighting, trained, bench, out_dir, plots)
        body = (f'<p><a href="{FOLDER}/{html.escape(path.name)}">Analyses</a>: P@1 per country, before vs after '
                "augmentation, wrong answers from the other culture (DLAMA); RankC per language pair against "
                "family, script and subword overlap (BMLAMA); single- vs multi-token answers, facts recalled "
                "across languages and the kinds of wrong answers (X-FACTR). Several models side by side: <code>factatlas compare</code>.</p>")
    except AnalysisError as e:
        body = f"<p class=note>Analyses not written: {html.escape(str(e))}</p>"
    section = f"<section><h2>More analyses</h2>{body}</section>\n"
    marker = "</main>"
    if marker not in page:
        raise ValueError("the report page has no </main> to put the analyses link before")
    return page.replace(marker, section + marker, 1)
