"""Candidate sets: identical QIDs in every language, every gold among its candidates.

- predicate-wide (DLAMA, mLAMA): every distinct valid object of the predicate across the pair;
- sampled (BMLAMA): the fact's valid objects plus K-1 negatives drawn from the predicate's pool, with a
  random generator seeded by sha256(seed, fact id) — never Python's salted ``hash``.

Candidate order is deterministic and does not put the gold at a fixed position (a scorer that breaks
ties by candidate order must not gain from it): predicate-wide sets are ordered by QID number, sampled
sets by sha256(fact id, QID).

The subject of a fact is never its own candidate (``subject_candidate="excluded"``, the default): «Libya
shares a border with [Y]» offers no «Libya», a distractor logic rejects that measures nothing and punishes
a model for copying the subject. Predicate-wide sets are the pool minus the subject (one list per subject
among the pool's entities, shared by its prompts); sampled sets draw their negatives from the pool minus
the subject. Each removal is counted per predicate (``stats.json: candidates_removed``). A subject that
is a gold of its own fact stays (it is an answer) and is counted as ``subject-is-gold``. The importers
keep the published sets whole (``"kept"``), subject included, so that published numbers reproduce.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from factatlas.forms import normalise_form
from factatlas.records import Fact
from factatlas.templates.variants import has_gendered_labels

CANDIDATE_MODES = ("predicate", "sampled")
SUBJECT_CANDIDATE = ("excluded", "kept")  # the subject among its own candidates: removed / as published


def qid_sort_key(qid: str) -> tuple[int, int, str]:
    """Q42 < Q100 (numeric), then anything that is not a QID, by text."""
    if len(qid) > 1 and qid[0] == "Q" and qid[1:].isdigit():
        return (0, int(qid[1:]), "")
    return (1, 0, qid)


def seeded_rng(seed: int, key: str) -> random.Random:
    """A generator whose stream depends only on (seed, key): stable across runs, machines, Python builds."""
    digest = hashlib.sha256(f"{seed}\x1f{key}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def hash_order_key(fact_id: str, qid: str) -> str:
    return hashlib.sha256(f"{fact_id}\x1f{qid}".encode()).hexdigest()


def predicate_pools(facts: Iterable[Fact]) -> dict[str, tuple[str, ...]]:
    """predicate -> every distinct valid object of its facts, ordered by QID."""
    pools: dict[str, set[str]] = defaultdict(set)
    for f in facts:
        pools[f.predicate].update(f.object_qids)
    return {p: tuple(sorted(qs, key=qid_sort_key)) for p, qs in sorted(pools.items())}


def predicate_candidates(fact: Fact, pool: Sequence[str]) -> tuple[str, ...]:
    """Predicate-wide: the whole pool (already ordered); the fact's objects are in it by construction."""
    missing = [q for q in fact.object_qids if q not in set(pool)]
    if missing:
        raise ValueError(f"{fact.id}: objects {missing} are not in the {fact.predicate} pool")
    return tuple(pool)


def sampled_candidates(fact_id: str, golds: Sequence[str], pool: Sequence[str], k: int, seed: int,
                       exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """All golds plus min(K-1, available) negatives sampled from ``pool`` minus the golds (and minus
    ``exclude``: the fact's subject).

    Deterministic per (seed, fact id); the result is ordered by sha256(fact id, QID).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    gold_set = set(golds) | set(exclude)
    negatives = sorted((q for q in set(pool) if q not in gold_set), key=qid_sort_key)
    rng = seeded_rng(seed, fact_id)
    chosen = rng.sample(negatives, min(k - 1, len(negatives)))
    return tuple(sorted({*golds, *chosen}, key=lambda q: hash_order_key(fact_id, q)))


def without_subject(candidates: tuple[str, ...], subject: str, golds: Sequence[str]) -> tuple[tuple[str, ...], str]:
    """(candidates, what happened): the subject removed (``subject``), kept because it is a gold of the fact
    (``subject-is-gold``), or not among them (``""``). The order of the others is kept."""
    if subject not in candidates:
        return candidates, ""
    if subject in golds:
        return candidates, "subject-is-gold"
    return tuple(q for q in candidates if q != subject), "subject"


class SubjectExclusion:
    """Predicate-wide pools minus each fact's subject, one shared tuple per (predicate, subject), and the
    count of every removal per (reason, predicate) for stats.json."""

    def __init__(self, mode: str = "excluded"):
        if mode not in SUBJECT_CANDIDATE:
            raise ValueError(f"subject_candidate must be one of {SUBJECT_CANDIDATE}, got {mode!r}")
        self.mode = mode
        self._lists: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {}
        self.counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))

    def apply(self, fact: Fact, candidates: tuple[str, ...], golds: Sequence[str],
              shared: bool = True) -> tuple[str, ...]:
        """The fact's candidates without its subject (``shared``: predicate-wide lists, one per subject)."""
        if self.mode == "kept":
            return candidates
        key = (fact.predicate, fact.subject)
        if shared and key in self._lists:
            out, reason = self._lists[key]
        else:
            out, reason = without_subject(candidates, fact.subject, golds)
            if shared and reason != "subject-is-gold":
                self._lists[key] = (out, reason)
        if reason:
            self.counts[reason][fact.predicate] += 1
        return out

    def note(self, fact: Fact, pool: Sequence[str], golds: Sequence[str]) -> None:
        """Count, for a sampled set drawn from ``pool`` minus the subject, what that removal did."""
        if self.mode == "excluded":
            reason = without_subject(tuple(pool), fact.subject, golds)[1]
            if reason:
                self.counts[reason][fact.predicate] += 1

    def report(self) -> dict:
        """stats.json's ``candidates_removed``: the mode, and facts per reason and predicate."""
        return {"subject_candidate": self.mode,
                **{reason: dict(sorted(per_pred.items(), key=lambda kv: qid_sort_key(kv[0].replace("P", "Q", 1))))
                   for reason, per_pred in sorted(self.counts.items())}}


@dataclass(frozen=True, slots=True)
class SurfaceCollision:
    """One surface form shared by distinct QIDs in one language (within a predicate's pool or a record)."""

    lang: str
    scope: str  # predicate id, or the record/prompt id
    form: str
    qids: tuple[str, ...]


def surface_collisions(lang: str, scope: str, labelled: Iterable[tuple[str, str]]) -> list[SurfaceCollision]:
    """Forms (NFKC + casefold) given to more than one distinct QID among ``(qid, form)`` pairs."""
    by_form: dict[str, set[str]] = defaultdict(set)
    shown: dict[str, str] = {}
    for qid, form in labelled:
        key = normalise_form(form)
        by_form[key].add(qid)
        shown.setdefault(key, form)
    return [SurfaceCollision(lang, scope, shown[key], tuple(sorted(qs, key=qid_sort_key)))
            for key, qs in sorted(by_form.items()) if len(qs) > 1]


def pool_collisions(pools: Mapping[str, Sequence[str]], labels: Mapping[str, Mapping[str, str]],
                    langs: Sequence[str]) -> dict[str, list[SurfaceCollision]]:
    """lang -> collisions inside each predicate's candidate pool (``labels``: qid -> lang -> label)."""
    out: dict[str, list[SurfaceCollision]] = {}
    for lang in langs:
        found: list[SurfaceCollision] = []
        for pred, pool in sorted(pools.items()):
            found += surface_collisions(lang, pred, ((q, labels[q][lang]) for q in pool if lang in labels.get(q, {})))
        out[lang] = found
    return out


def collision_report(collisions: Mapping[str, Sequence[SurfaceCollision]], examples: int = 5) -> dict:
    """JSON-ready summary: per language the number of colliding forms and a few examples."""
    return {
        lang: {"forms": len(found), "qids": sum(len(c.qids) for c in found),
               "examples": [{"scope": c.scope, "form": c.form, "qids": list(c.qids)} for c in found[:examples]]}
        for lang, found in sorted(collisions.items())
    }


class CandidateForms:
    """One build's fillers of each prompt's golds and candidates, read from its answer forms
    (``forms[(lang, template id, qid, variant)]``: the filler first). A form depends on the subject only
    through the variant (``sources.answer_variant``): the subject's key for an object with gendered labels,
    "" for any other, so the objects with gendered labels are found once instead of per candidate.

    Predicate-wide lists share their fillers: the whole pool's once per (language, template, subject key),
    and a list less its subject takes that tuple less the subject's filler (one tuple per subject), so
    each filler is looked up once per pool rather than once per prompt."""

    def __init__(self, forms: Mapping[tuple[str, str, str, str], tuple[str, ...]], entities: Mapping[str, Any]):
        self.forms = forms
        self.gendered = frozenset(q for q, e in entities.items() if has_gendered_labels(e))  # answer_variant's rule
        self._pool_forms: dict[tuple[str, str, str, str], tuple[str, ...]] = {}
        self._shared: dict[tuple[str, str, str, str, str], tuple[str, ...]] = {}
        self._positions: dict[int, tuple[tuple[str, ...], dict[str, int]]] = {}

    def golds(self, lang: str, tid: str, golds: Sequence[str], subject_key: str) -> tuple[tuple[str, ...], ...]:
        forms, gendered = self.forms, self.gendered
        if len(golds) == 1:
            q = golds[0]
            return (tuple(forms[(lang, tid, q, subject_key if q in gendered else "")]),)
        return tuple(tuple(forms[(lang, tid, q, subject_key if q in gendered else "")]) for q in golds)

    def sampled(self, lang: str, tid: str, cands: Sequence[str], subject_key: str) -> tuple[str, ...]:
        forms, gendered = self.forms, self.gendered
        return tuple(forms[(lang, tid, q, subject_key if q in gendered else "")][0] for q in cands)

    def predicate_wide(self, lang: str, tid: str, predicate: str, pool: tuple[str, ...], cands: tuple[str, ...],
                       subject: str, subject_key: str) -> tuple[str, ...]:
        """The fillers of ``cands``: ``pool`` itself, or ``pool`` less ``subject``; one tuple per (language,
        template, subject key, removed subject)."""
        removed = subject if len(cands) < len(pool) else ""
        key = (lang, tid, predicate, subject_key, removed)
        found = self._shared.get(key)
        if found is not None:
            return found
        whole = self._pool_forms.get(key[:4])
        if whole is None:
            whole = self._pool_forms[key[:4]] = self.sampled(lang, tid, pool, subject_key)
        at = self._position(pool).get(removed, -1) if removed else -1
        if not removed:
            found = whole if cands == pool else self.sampled(lang, tid, cands, subject_key)
        elif at >= 0 and len(cands) == len(pool) - 1 and cands[at:] == pool[at + 1:] and cands[:at] == pool[:at]:
            found = whole[:at] + whole[at + 1:]
        else:  # not the pool less its subject: every filler looked up
            found = self.sampled(lang, tid, cands, subject_key)
        self._shared[key] = found
        return found

    def _position(self, pool: tuple[str, ...]) -> dict[str, int]:
        known = self._positions.get(id(pool))
        if known is None or known[0] is not pool:
            known = self._positions[id(pool)] = (pool, {q: i for i, q in enumerate(pool)})
        return known[1]
