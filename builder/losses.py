"""What the multi-parallel rule removed from every language, and which language caused it.

A benchmark holds the same facts, templates and candidates in every language, so one language that
lacks a template, a label or a renderable form removes that item from all the others. The build's drop
records say so item by item; this module adds them up per (language, predicate) so the screen can say
"ru: P495 lost templates P495/2 from every language" instead of one total, and so a build that adds a
language can refuse to shrink what an earlier build of the run already had.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from factatlas.records import Drop, id_order

BUILD_STEP = "build"


@dataclass(frozen=True)
class LanguageLoss:
    """Removals from every language that one language caused, for one predicate."""

    lang: str
    predicate: str
    templates: tuple[str, ...] = ()  # template ids the language lacks: gone from every language
    facts: int = 0  # facts without a label in the language
    prompts: int = 0  # (fact, template) pairs that do not render in the language
    objects: int = 0  # answer objects that do not render in the language (they leave the candidate pool)
    reasons: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not (self.templates or self.facts or self.prompts or self.objects)

    def describe(self) -> str:
        parts = []
        if self.templates:
            parts.append(f"templates {', '.join(self.templates)} (missing in {self.lang})")
        if self.facts:
            parts.append(f"{self.facts} facts (no {self.lang} label)")
        if self.prompts:
            parts.append(f"{self.prompts} prompts (template does not render in {self.lang})")
        if self.objects:
            parts.append(f"{self.objects} answer objects (no {self.lang} form)")
        return "; ".join(parts)


def parallel_losses(drops: Iterable[Drop], langs: Sequence[str]) -> list[LanguageLoss]:
    """The build's drops attributed to the language named in their reason (``template-missing:ru``,
    ``no-label:ru``, ``<render failure>:ru``), per (language, predicate), in language then predicate order."""
    known = set(langs)
    acc: dict[tuple[str, str], dict] = {}
    for d in drops:
        if d.step != BUILD_STEP or ":" not in d.reason:
            continue
        base, lang = d.reason.rsplit(":", 1)
        if lang not in known:
            continue
        entry = acc.setdefault((lang, d.predicate), {"templates": set(), "facts": 0, "prompts": 0, "objects": 0,
                                                      "reasons": set()})
        entry["reasons"].add(base)
        if base == "template-missing":
            entry["templates"].add(d.item)
        elif base == "no-label":
            entry["facts"] += 1
        elif "|" in d.item:
            entry["prompts"] += 1
        else:
            entry["objects"] += 1
    order = {lang: i for i, lang in enumerate(langs)}
    return [LanguageLoss(lang, pred, tuple(sorted(e["templates"])), e["facts"], e["prompts"], e["objects"],
                         tuple(sorted(e["reasons"])))
            for (lang, pred), e in sorted(acc.items(), key=lambda kv: (order[kv[0][0]], id_order(kv[0][1])))]


def previous_languages(run: Path) -> tuple[str, ...]:
    """Languages of the run's current build (its benchmark.json), or () when it has none."""
    from factatlas.benchmark import Benchmark, BenchmarkError

    if not (run / "build").is_dir():
        return ()
    try:
        return Benchmark.open(run / "build", require=("benchmark.json",)).languages
    except (BenchmarkError, OSError):
        # no earlier build, or an unreadable one (replaced whole by this one): nothing left to shrink
        return ()


def shrinking_losses(losses: Sequence[LanguageLoss], previous: Sequence[str], langs: Sequence[str]
                     ) -> list[LanguageLoss]:
    """Losses caused by languages this build adds to an earlier build's: they shrink what the run had."""
    if not previous:
        return []
    added = set(langs) - set(previous)
    return [x for x in losses if x.lang in added and not x.empty]


def losses_lines(losses: Sequence[LanguageLoss]) -> list[str]:
    """One line per (language, predicate) for the screen."""
    return [f"{x.lang} removed from every language, {x.predicate}: {x.describe()}" for x in losses if not x.empty]
