"""mParaRel's data hygiene as build options (Fierro & Søgaard 2022, following ParaRel, Elazar et al. 2021).

- ``single_object``: ParaRel keeps only N-1 relations, so a subject has exactly one object and a
  paraphrase that picks another true object never counts as inconsistent; here, for the listed predicates
  (or ``all``), facts with two or more *direct* objects are dropped (augmented objects do not count: they
  are implied by the direct one).
- ``strip_final_punctuation``: mParaRel's patterns end with or without a period depending on the language
  and the translator; stripping sentence-final punctuation from every cloze prompt makes templates of one
  relation differ only in wording. Question prompts keep their question mark.
- ``min_templates``: a relation is useful for consistency only with several templates; facts of a
  predicate with fewer cloze templates shared by every language, and facts left with fewer renderable
  cloze templates, are dropped.
Every removal is a Drop with its reason, as everything else the builder removes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from factatlas.errors import ConfigError
from factatlas.records import PID_RE, Drop, Fact

STEP = "build"
ALL = "all"
# sentence-final marks of the registry's scripts: Latin/Greek/Cyrillic, CJK full-width, Devanagari danda,
# Arabic question mark and Urdu full stop, the ellipsis
FINAL_PUNCTUATION = ".!?。！？।॥؟۔…"


@dataclass(frozen=True)
class Hygiene:
    single_object: tuple[str, ...] = ()  # predicates (PIDs) or ("all",)
    strip_final_punctuation: bool = False
    min_templates: int = 1

    def validated(self) -> Hygiene:
        if self.min_templates < 1:
            raise ConfigError(f"build: --min-templates must be >= 1, got {self.min_templates}")
        bad = [p for p in self.single_object if p != ALL and not PID_RE.fullmatch(p)]
        if bad:
            raise ConfigError(f"build: --single-object: '{bad[0]}' is neither a predicate id such as P19 nor "
                              f"'{ALL}'")
        return self

    def single(self, predicate: str) -> bool:
        return ALL in self.single_object or predicate in self.single_object

    def to_json(self) -> dict[str, object]:
        return {"single_object": list(self.single_object), "strip_final_punctuation": self.strip_final_punctuation,
                "min_templates": self.min_templates}


def _drop(fact: Fact, reason: str, detail: str) -> Drop:
    return Drop(fact.id, STEP, reason, detail, fact.culture, fact.predicate, "")


def screen_facts(facts: Iterable[Fact], cloze_templates: Mapping[str, int], hygiene: Hygiene
                 ) -> tuple[list[Fact], list[Drop]]:
    """Facts kept and dropped by ``single_object`` and ``min_templates`` (predicate level).
    ``cloze_templates``: predicate -> number of cloze templates shared by every language."""
    kept, drops = [], []
    for f in facts:
        n_direct = len(f.direct_objects)
        if hygiene.single(f.predicate) and n_direct > 1:
            drops.append(_drop(f, "multi-object", f"{n_direct} direct objects: {', '.join(f.direct_objects)}"))
            continue
        n = cloze_templates.get(f.predicate, 0)
        if hygiene.min_templates > 1 and 0 < n < hygiene.min_templates:
            drops.append(_drop(f, "too-few-templates", f"{f.predicate} has {n} cloze template(s) in every "
                                                      f"language; --min-templates {hygiene.min_templates}"))
            continue
        kept.append(f)
    return kept, drops


def too_few_rendered(fact: Fact, kinds: Sequence[str], hygiene: Hygiene) -> Drop | None:
    """A Drop when the fact's renderable cloze templates (``kinds`` of its surviving templates) fall
    below ``min_templates``; None otherwise."""
    n = sum(1 for k in kinds if k == "cloze")
    if hygiene.min_templates > 1 and n < hygiene.min_templates:
        return _drop(fact, "too-few-templates", f"{n} cloze template(s) render in every language; "
                                                f"--min-templates {hygiene.min_templates}")
    return None


def final_text(text: str, kind: str, hygiene: Hygiene) -> str:
    """The prompt text with sentence-final punctuation (and the spaces before it) removed, for cloze
    prompts when ``strip_final_punctuation`` is on: 'Paris est la capitale de [Y] .' -> '... de [Y]'."""
    if not hygiene.strip_final_punctuation or kind != "cloze":
        return text
    return text.rstrip().rstrip(FINAL_PUNCTUATION + " \u00a0\u202f").rstrip()
