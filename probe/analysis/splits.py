"""Which split an analysis reads: by default the held-out split the report's verdict and headline use.

A model trained (or tuned) on the train split answers those facts from memory; mixing them into a P@1
makes ``compare`` disagree with the report on the same run. The rule is the report's own
(``factatlas.probe.heldout.held_out_from``): the splits the model's probe.json does not name as
trained on, else the test split, else every split.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factatlas.probe.analysis.records import AnalysisError, ModelResults

HELD_OUT = "held-out"
ALL_SPLITS = "all"


@dataclass(frozen=True)
class SplitChoice:
    splits: tuple[str, ...]  # the splits read, sorted
    why: str  # one line for the page: where the choice comes from

    @property
    def label(self) -> str:
        return f"split {'+'.join(self.splits)}"


def trained_on(model_dir: Path) -> list[str] | None:
    """The splits ``model_dir/probe.json`` records its model was trained on; None when it records none."""
    from factatlas.probe.model_folder import trained_splits

    return trained_splits(model_dir)


def choose_splits(option: str, present: Sequence[str], trained: Mapping[str, list[str] | None]) -> SplitChoice:
    """``--split``: ``held-out`` (the report's rule, applied to every model; the splits held out for all of
    them, so every model answers the same prompts), ``all``, or split names joined by commas."""
    from factatlas.errors import unknown
    from factatlas.probe.heldout import held_out_from

    present = sorted(set(present))
    value = option.strip()
    if value == ALL_SPLITS:
        return SplitChoice(tuple(present), "every split (--split all), training splits included")
    if value != HELD_OUT:
        names = sorted({s.strip() for s in value.split(",") if s.strip()})
        for name in names:
            if name not in present:
                raise AnalysisError(f"--split {option}: " + unknown("split", name, [*present, HELD_OUT, ALL_SPLITS]))
        if not names:
            raise AnalysisError(f"--split {option!r}: expected {HELD_OUT}, {ALL_SPLITS} or split names")
        return SplitChoice(tuple(names), "--split " + ",".join(names))
    held: set[str] | None = None
    by_source: dict[str, list[str]] = {}
    for model, splits in trained.items():
        mine, source = held_out_from(present, splits)
        held = set(mine) if held is None else held & set(mine)
        by_source.setdefault(source, []).append(model)
    if len(by_source) == 1:
        reasons = [f"{next(iter(by_source))}, for every model"]
    else:
        reasons = [f"{', '.join(models)}: {source}" for source, models in by_source.items()]
    chosen = tuple(sorted(held if held is not None else present))
    if not chosen:
        raise AnalysisError("--split held-out: no split is held out for every model ("
                            + "; ".join(reasons) + "); name one with --split, or --split all")
    return SplitChoice(chosen, "held-out, as in the report: " + "; ".join(reasons))


def select(model: ModelResults, choice: SplitChoice) -> ModelResults:
    """The model's results on the chosen splits only; the rest is counted by split (never silently)."""
    from factatlas.probe.scored import ScoredColumns

    keep = set(choice.splits)
    results = ScoredColumns.of(model.results)
    kept = np.zeros(len(results), dtype=bool)
    left: Counter[str] = Counter()
    for (split,), rows in results.group_rows("split").items():
        if split in keep:
            kept[rows] = True
        else:
            left[split] += len(rows)
    skipped = dict(model.skipped)
    for split, n in sorted(left.items()):
        skipped[f"split {split} not analysed ({choice.label} chosen)"] = n
    return ModelResults(model.model, results.where(kept), skipped, model.tokenizer_note, model.vocabularies)
