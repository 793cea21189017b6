"""X-FACTR's views (Jiang et al. 2020): results split by single- vs multi-token gold answers, and how many
languages each fact is recalled in (meaningful because every fact is asked in every language)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from factatlas.probe.aggregate import Accuracy, accuracy
from factatlas.probe.analysis.records import margin_last
from factatlas.probe.scored import ScoredColumns, grouped
from factatlas.records import ScoredPrompt

SINGLE, MULTI = "single-token", "multi-token"


@dataclass(frozen=True, slots=True)
class TokenSplit:
    lang: str  # a language or "all"
    gold: str  # single-token | multi-token
    acc: Accuracy


def by_gold_length(results: Sequence[ScoredPrompt]) -> tuple[list[TokenSplit], int]:
    """P@1 per language for prompts whose gold form is one subword vs several; also the number of prompts
    left out because their gold was not measured (no tokenizer, or no slot form)."""
    def kinds(lang: str, gold_subwords: int | None) -> tuple[tuple[str, str], ...]:
        if gold_subwords is None:
            return ()
        kind = SINGLE if gold_subwords == 1 else MULTI
        return (lang, kind), ("all", kind)

    groups = grouped(results, ("lang", "gold_subwords"), kinds)
    unmeasured = int((ScoredColumns.of(results).gold_subwords() < 0).sum())
    out = []
    for (lang, kind), rs in sorted(groups.items(), key=lambda kv: (margin_last(kv[0][0]), kv[0][1] != SINGLE)):
        acc = accuracy(rs)
        if acc is not None:
            out.append(TokenSplit(lang, kind, acc))
    return out, unmeasured


@dataclass(frozen=True, slots=True)
class RecallHistogram:
    languages: tuple[str, ...]
    counts: tuple[int, ...]  # counts[k]: facts recalled in exactly k languages, k = 0..len(languages)
    incomplete: int  # facts not asked in every language (left out)


def recall_histogram(results: Sequence[ScoredPrompt]) -> RecallHistogram:
    """A fact is recalled in a language when at least half of its prompts there are right at rank 1
    (X-FACTR asks one prompt per fact and language; with several templates, the majority decides and a
    tie counts as recalled)."""
    langs = tuple(sorted({r.lang for r in results}))
    hits: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        hits[r.fact_id][r.lang].append(r.correct)
    counts = [0] * (len(langs) + 1)
    incomplete = 0
    for by_lang in hits.values():
        if len(by_lang) != len(langs):
            incomplete += 1
            continue
        counts[sum(1 for v in by_lang.values() if 2 * sum(v) >= len(v))] += 1
    return RecallHistogram(langs, tuple(counts), incomplete)
