"""The held-out comparison the verdict reads: the model against the majority-class and template-only
baselines on the splits it was not trained on, with intervals. Moved out of ``evaluate.py`` unchanged.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from factatlas.probe import metrics as M
from factatlas.probe.aggregate import p_at_1_with_ci
from factatlas.probe.scored import ScoredColumns
from factatlas.records import ScoredPrompt

if TYPE_CHECKING:
    from factatlas.benchmark import Benchmark
    from factatlas.probe.metrics_config import MetricsConfig


# Resamples for the verdict's intervals when the caller asked for none (MetricsConfig.bootstrap == 0):
# the verdict compares intervals, so it always needs them.
VALIDATION_BOOTSTRAP = 1000


def held_out_splits(bench: Benchmark, trained_on: Sequence[str] | None) -> tuple[tuple[str, ...], str]:
    """The splits a verdict may use, and why: never a split the model was trained (or tuned) on."""
    return held_out_from(list(bench.splits), trained_on)  # the split column alone, no prompt decoded


def check_trained_on(trained_on: Sequence[str] | None, present: Sequence[str]) -> None:
    """``--trained-on`` names splits of the benchmark: a split it lacks would hold nothing out (the verdict
    would silently use every split), so it is refused before any work."""
    from factatlas.errors import ConfigError

    missing = [s for s in trained_on or () if s not in set(present)]
    if missing:
        raise ConfigError(f"--trained-on {', '.join(missing)}: the benchmark has no such split (it has "
                          f"{', '.join(sorted(present))}); name a split the model was trained or tuned on")


def held_out_from(present: Sequence[str], trained_on: Sequence[str] | None) -> tuple[tuple[str, ...], str]:
    """``held_out_splits`` on the split names a benchmark has (``factatlas compare`` reads the same rule)."""
    if trained_on is not None:
        held = tuple(s for s in present if s not in set(trained_on))
        taught = ", ".join(trained_on) if trained_on else "none"
        return held, f"the splits the model was not trained on (trained on {taught})"
    if "test" in present:
        return ("test",), "the test split (the probe metadata records no training split)"
    return tuple(present), ("every split: the benchmark has no test split and the probe metadata records "
                            "no training split")


def validation_section(outcomes: Sequence[ScoredPrompt], template_outcomes: Sequence[ScoredPrompt] | None,
                       bench: Benchmark, trained_on: Sequence[str] | None,
                       config: MetricsConfig) -> dict[str, Any]:
    """Model vs the majority-class and template-only baselines on the held-out split only, with intervals.

    The template-only comparison is paired: the model is scored on exactly the prompts the baseline
    ranked (the baseline skips prompts whose subject it cannot replace, e.g. inflected in the text), and
    the prompts left out are counted per language.
    """
    splits, source = held_out_splits(bench, trained_on)
    n_boot = config.bootstrap or VALIDATION_BOOTSTRAP
    ci = (n_boot, config.confidence, config.seed)
    cols = ScoredColumns.of(outcomes)
    split_rows = cols.group_rows("split")
    held = cols.where(np.isin(cols.codes("split"), [cols.table("split").index(s) for (s,) in split_rows
                                                    if s in splits]))
    out: dict[str, Any] = {"splits": list(splits), "split_source": source, "bootstrap": n_boot,
                           "ranked_splits": sorted(s for (s,) in split_rows),
                           "confidence": config.confidence, "model": p_at_1_with_ci(held, *ci)}
    # majority class: the object valid for most facts of the predicate (whole benchmark), scored on the
    # held-out facts the model was scored on
    objects: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for predicate, _culture, golds in bench.fact_keys.values():  # each fact once, in prompt_id order
        objects[predicate].append(golds)
    majority = {pred: M.majority_baseline(objs)[0] for pred, objs in objects.items()}
    hit = np.zeros(len(held), dtype=bool)
    for (pred, golds), rows in held.group_rows("predicate", "golds").items():
        hit[rows] = any(g.qid == majority[pred] for g in golds)
    out["majority"] = p_at_1_with_ci(held.with_rank(hit.astype(np.int32)), *ci)
    out["template_only"] = None
    if template_outcomes is not None:
        baseline_cols = ScoredColumns.of(template_outcomes)
        baseline = {pid: i for i, pid in enumerate(baseline_cols.prompt_ids())}
        at = np.array([baseline.get(pid, -1) for pid in held.prompt_ids()], dtype=np.int64)
        del baseline
        paired = held.where(at >= 0)
        missing: dict[str, int] = defaultdict(int)
        for (lang,), rows in held.where(at < 0).group_rows("lang").items():
            missing[lang] += len(rows)
        out["template_only"] = {
            "n_pairs": len(paired),
            "excluded": {"prompts": sum(missing.values()), "by_lang": dict(sorted(missing.items())),
                         "reason": "the template-only baseline has no ranking for them (its subject could "
                                   "not be replaced by the placeholder; probe.json counts why)"},
            "model": p_at_1_with_ci(paired, *ci),
            "baseline": p_at_1_with_ci(baseline_cols.take(at[at >= 0]), *ci),
        }
    return out
