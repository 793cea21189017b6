"""DLAMA's diagnostics (Keleg & Magdy 2023): P@1 per country, before vs after augmentation, wrong answers
from the other culture, and scoring with an equivalence table.

All functions take ScoredPrompts of one model; fact values average a fact's prompts (templates), and
every P@1 here is named micro (mean over facts) or macro (mean over predicates of the mean over facts).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from factatlas.errors import ConfigError
from factatlas.probe.aggregate import Accuracy, accuracy, group_index
from factatlas.probe.analysis.records import margin_last, predicate_order
from factatlas.probe.scored import ScoredColumns, grouped
from factatlas.records import Fact, GoldObject, Provenance, ScoredPrompt
from factatlas.yamlfile import Located, load_located

# ---- P@1 per country ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CountryAccuracy:
    culture: str
    country: str  # QID
    lang: str
    acc: Accuracy


def accuracy_by_country(results: Sequence[ScoredPrompt]) -> list[CountryAccuracy]:
    """P@1 over the facts of each (culture, country, language); a fact counts for every country it has.
    Facts without a country are not in any row (the caller counts them)."""
    groups = grouped(results, ("culture", "countries", "lang"),
                     lambda culture, countries, lang: [key for country in dict.fromkeys(countries)
                                                       for key in ((culture, country, lang), (culture, country, "all"))])
    out = []
    for (culture, country, lang), rs in sorted(groups.items(), key=lambda kv: (kv[0][:2], margin_last(kv[0][2]))):
        acc = accuracy(rs)
        if acc is not None:
            out.append(CountryAccuracy(culture, country, lang, acc))
    return out


# ---- before vs after augmentation ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class AugmentationEffect:
    predicate: str  # a predicate or "all" (then macro over predicates)
    n_facts: int
    n_augmented_facts: int  # facts with at least one valid object that is not direct
    direct_only: float  # P@1 when only direct objects count
    all_valid: float  # P@1 when every valid object counts (what the benchmark scores)


def augmentation_effect(results: Sequence[ScoredPrompt]) -> list[AugmentationEffect]:
    """P@1 (micro over facts per predicate, macro over predicates for "all") counting only the direct
    objects vs every valid object (superclass, containing area); DLAMA's appendix table."""
    cols = ScoredColumns.of(results)
    direct = cols.holds_each(("top", "golds"), lambda top, golds: top is not None and top in _direct_qids(golds))
    augmented = cols.holds("golds", lambda golds: len(_direct_qids(golds)) < len({g.qid for g in golds}))
    facts = cols.codes("fact_id")
    out = []
    for (pred,), idx in sorted(group_index(cols, "predicate").items(), key=lambda kv: predicate_order(kv[0][0])):
        rs = cols.take(idx)
        after, before = accuracy(rs), accuracy(rs, direct[idx])
        if after and before:
            out.append(AugmentationEffect(pred, after.n_facts, len(np.unique(facts[idx][augmented[idx]])),
                                          before.micro, after.micro))
    if out:  # macro over the predicates: the one aggregation over every result
        after, before = accuracy(cols), accuracy(cols, direct)
        out.append(AugmentationEffect("all", after.n_facts, sum(e.n_augmented_facts for e in out), before.macro,
                                      after.macro))
    return out


def _direct_qids(golds: Sequence[GoldObject]) -> frozenset[str]:
    """``ScoredPrompt.direct_qids`` of a prompt's golds."""
    return frozenset(g.qid for g in golds if g.provenance == Provenance.DIRECT.value)


# ---- wrong answers that belong to the other culture ---------------------------------------------

@dataclass(frozen=True, slots=True)
class CrossCultureErrors:
    predicate: str
    culture: str  # the culture of the facts asked
    lang: str
    n_prompts: int
    wrong: int
    other_culture: int  # a valid object of the other culture's facts only
    shared: int  # a valid object of facts of both cultures
    own_culture: int  # a valid object of the own culture's facts only (a wrong fact, right culture)
    neither: int  # valid for no fact of the predicate

    @property
    def other_share(self) -> float | None:
        return self.other_culture / self.wrong if self.wrong else None


def object_cultures(facts: Iterable[Fact]) -> dict[tuple[str, str], frozenset[str]]:
    """(predicate, object QID) -> the cultures whose facts of the predicate have it as a valid object, from
    every fact given: pass the benchmark's (all splits), so an answer owned by a fact outside the evaluated
    split is still known as owned."""
    owners: dict[tuple[str, str], set[str]] = defaultdict(set)
    for f in facts:
        for q in f.object_qids:
            owners[(f.predicate, q)].add(f.culture)
    return {k: frozenset(v) for k, v in owners.items()}


def cross_culture_errors(results: Sequence[ScoredPrompt], owners: Mapping[tuple[str, str], frozenset[str]]
                         ) -> list[CrossCultureErrors]:
    """Per predicate, culture and language: the wrong top-1 answers split by which culture's facts they
    are valid for (DLAMA's culture-bias signal: a Western answer to an Arab fact and the reverse).
    ``owners``: ``object_cultures`` of every fact of the benchmark, not only of the facts in ``results``."""
    counts: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for r in results:
        key = (r.predicate, r.culture, r.lang)
        counts[key]["n"] += 1
        if r.correct or r.top is None:
            continue
        counts[key]["wrong"] += 1
        cultures = owners.get((r.predicate, r.top), frozenset())
        others = cultures - {r.culture}
        kind = ("neither" if not cultures else "own" if not others else "shared" if r.culture in cultures
                else "other")
        counts[key][kind] += 1
    return [CrossCultureErrors(p, c, lang, k["n"], k["wrong"], k["other"], k["shared"], k["own"], k["neither"])
            for (p, c, lang), k in sorted(counts.items(), key=lambda kv: (predicate_order(kv[0][0]), kv[0][1:]))]


# ---- equivalent answers ------------------------------------------------------------------------

@dataclass(frozen=True)
class Equivalences:
    """Groups of QIDs that count as the same answer, for all predicates or for listed ones."""

    groups: tuple[tuple[frozenset[str], frozenset[str]], ...]  # (qids, predicates; empty = every predicate)

    def same(self, predicate: str, a: str, b: str) -> bool:
        return a == b or any(a in qids and b in qids and (not preds or predicate in preds)
                             for qids, preds in self.groups)


def parse_equivalences(data: object, source: str | Located) -> Equivalences:
    """``{"equivalences": [[Q432, Q47740], {"qids": [...], "predicates": [P140]}]}`` -> Equivalences.

    ``source`` names the file in errors; a ``Located`` document (``load_equivalences``) points them at
    ``file:line:col`` of the offending entry."""
    from factatlas.records import QID_RE

    def error(message: str, *keys: object) -> ConfigError:
        return source.error(message, *keys) if isinstance(source, Located) else ConfigError(f"{source}: {message}")

    entries = data.get("equivalences") if isinstance(data, Mapping) else None
    if not isinstance(entries, list):
        raise error("expected a mapping with a list 'equivalences' of QID groups, e.g. equivalences: [[Q432, Q47740]]",
                    "equivalences")
    groups = []
    for i, entry in enumerate(entries):
        qids, preds = (entry.get("qids"), entry.get("predicates") or []) if isinstance(entry, Mapping) else (entry, [])
        if not isinstance(qids, list) or len(qids) < 2 or not all(isinstance(q, str) and QID_RE.fullmatch(q)
                                                                   for q in qids):
            raise error(f"equivalences[{i}]: expected two or more QIDs such as [Q432, Q47740], got {qids!r}",
                        "equivalences", i)
        groups.append((frozenset(qids), frozenset(str(p) for p in preds)))
    return Equivalences(tuple(groups))


def load_equivalences(path: Path) -> Equivalences:
    """The equivalence table through the one YAML reader (UTF-8 and syntax errors at file:line:col, the
    alias-expansion bound)."""
    document = load_located(path)
    return parse_equivalences(document.data, document)


@dataclass(frozen=True, slots=True)
class EquivalenceEffect:
    predicate: str  # or "all" (macro over predicates)
    n_facts: int
    strict: float  # P@1 as the benchmark scores it
    with_equivalences: float
    rescued_prompts: int  # wrong strictly, right with the table


def equivalence_effect(results: Sequence[ScoredPrompt], table: Equivalences) -> list[EquivalenceEffect]:
    """P@1 (micro over facts per predicate, macro for "all") strictly and with the equivalence table."""
    cols = ScoredColumns.of(results)
    strictly = cols.correct()
    lenient = strictly | cols.holds_each(("top", "golds", "predicate"), lambda top, golds, predicate: (
        top is not None and any(table.same(predicate, top, g.qid) for g in golds)))
    rescued = lenient & ~strictly
    out = []
    for (pred,), idx in sorted(group_index(cols, "predicate").items(), key=lambda kv: predicate_order(kv[0][0])):
        rs = cols.take(idx)
        strict, eq = accuracy(rs), accuracy(rs, lenient[idx])
        if strict and eq:
            out.append(EquivalenceEffect(pred, strict.n_facts, strict.micro, eq.micro, int(rescued[idx].sum())))
    if out:  # macro over the predicates: the one aggregation over every result
        strict, eq = accuracy(cols), accuracy(cols, lenient)
        out.append(EquivalenceEffect("all", strict.n_facts, strict.macro, eq.macro, sum(e.rescued_prompts for e in out)))
    return out
