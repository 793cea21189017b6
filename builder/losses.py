"""What one language cost the benchmark, per predicate: what it skipped for itself, and what it removed
from every language.

A benchmark holds the same facts and candidates in every language, so a language that lacks a label or an
answer form for them removes those facts or objects from all the others. Templates are different: each
language carries the paraphrases it has, so a template a language lacks or cannot render is skipped for
that language only. The build's drop records say so item by item; this module adds them up per
(language, predicate) so the screen can say "ru skips P30/2 (…)" and "ru removed from every language, P17:
3 facts (no ru label)", and so a build that adds a language can refuse to shrink what an earlier build of
the run already had (facts and candidates, never another language's templates).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from factatlas.records import Drop, id_order

BUILD_STEP = "build"


# reasons that remove a fact from every language (other reasons on a fact's (fact|template) item skip a prompt)
FACT_REASONS = ("no-label", "no-template", "no-renderable-template")


@dataclass(frozen=True)
class LanguageLoss:
    """What one language caused, for one predicate."""

    lang: str
    predicate: str
    templates: tuple[str, ...] = ()  # template ids the language lacks or cannot render: skipped in it only
    facts: int = 0  # facts removed from every language (no label, no template in the language)
    prompts: int = 0  # (fact, template) prompts that do not render in the language: skipped in it only
    objects: int = 0  # answer objects with no form in the language: they leave every language's candidates
    reasons: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        """Nothing removed from the other languages (skipping its own templates does not count)."""
        return not (self.facts or self.objects)

    def describe(self) -> str:
        parts = []
        if self.facts:
            parts.append(f"{self.facts} facts (no {self.lang} label or template)")
        if self.objects:
            parts.append(f"{self.objects} answer objects (no {self.lang} form)")
        return "; ".join(parts)

    def describe_skipped(self) -> str:
        parts = []
        if self.templates:
            parts.append(f"templates {', '.join(self.templates)} (missing in {self.lang} or no {self.lang} "
                         "answer form for some candidate)")
        if self.prompts:
            parts.append(f"{self.prompts} prompts (template does not render in {self.lang})")
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
        if base == "template-missing" or (d.item.startswith("P") and "/" in d.item):
            entry["templates"].add(d.item)  # a template skipped for the language
        elif base in FACT_REASONS and not d.item.startswith("Q"):
            entry["facts"] += 1
        elif "|" in d.item:
            entry["prompts"] += 1
        else:
            entry["objects"] += 1
    order = {lang: i for i, lang in enumerate(langs)}
    return [LanguageLoss(lang, pred, tuple(sorted(e["templates"], key=id_order)), e["facts"], e["prompts"],
                         e["objects"], tuple(sorted(e["reasons"])))
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
    """One line per (language, predicate) that removed something from every language, for the screen."""
    return [f"{x.lang} removed from every language, {x.predicate}: {x.describe()}" for x in losses if not x.empty]


def skipped_lines(losses: Sequence[LanguageLoss]) -> list[str]:
    """One line per (language, predicate) whose language skipped templates or prompts of its own."""
    return [f"{x.lang} skips, {x.predicate}: {x.describe_skipped()}" for x in losses if x.describe_skipped()]
