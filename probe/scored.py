"""Scored prompts as columns: what the one join (``aggregate.join``) returns, in flat memory.

A run's scored prompts used to be one ``ScoredPrompt`` record each (about 1 KB with its ranked and order
tuples), all held by the metrics and the analyses: a million-prompt benchmark held a gigabyte of them.
``ScoredColumns`` keeps one small integer code per prompt and field (fact, language, template, culture,
predicate, split, golds, candidate list, countries, subject, label, prediction, model), the rank, the
chance, the gold's subword count, and the ranking as positions in the candidate list (one flat array with
offsets): about 0.1 KB a prompt. Each distinct value is stored once in a table per field.

It is a ``Sequence[ScoredPrompt]``: a record is made when it is read (``scored[i]``, iteration, a chunk of
rows at a time) and is the record the join made before, field for field, so every section reads the same
values; what reads many rows reads the columns instead (``codes``, ``table``, ``rank``, ``take``,
``group_rows``), and no reader holds every record. Subsets (``take``) share the store and hold only their
row numbers.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, overload

import numpy as np

from factatlas.records import GoldObject, ScoredPrompt

# the coded fields: a table of distinct values each, one code per prompt
CODED = ("model", "fact_id", "lang", "template_id", "culture", "predicate", "split", "golds", "candidates",
         "countries", "subject", "subject_label", "prediction", "pid_tail", "ranked_from")
CHUNK = 4096  # rows turned into Python values at a time while iterating


class ScoredBuilder:
    """Appends scored prompts as codes (the join's one writer of the columns); ``finish`` -> ``ScoredColumns``."""

    def __init__(self) -> None:
        self._codes: dict[str, dict[Any, int]] = {name: {} for name in CODED}
        self._cols: dict[str, array] = {name: array("i") for name in CODED}
        self._rank, self._subwords = array("i"), array("i")
        self._chance = array("d")
        self._pos, self._starts = array("B"), array("q", [0])  # 1-byte positions until a list needs more
        self._has_order, self._pid_whole = array("b"), array("b")

    def __len__(self) -> int:
        return len(self._rank)

    def _code(self, name: str, value: Any) -> None:
        codes = self._codes[name]
        code = codes.get(value)
        if code is None:
            code = codes[value] = len(codes)
        self._cols[name].append(code)

    def add(self, *, model: str, prompt_id: str, fact_id: str, lang: str, template_id: str, culture: str,
            predicate: str, golds: tuple[GoldObject, ...], positions: Sequence[int], has_order: bool,
            rank: int | None, split: str, chance: float, candidates: tuple[str, ...], countries: tuple[str, ...],
            gold_subwords: int | None, subject: str, subject_label: str, prediction: str,
            ranked_from: tuple[str, ...] | None = None) -> None:
        """One scored prompt; ``positions``: the ranked candidates as positions in ``candidates`` (the order
        itself when ``has_order``; an open answer's matched candidates otherwise), or in ``ranked_from``
        when given (a record whose ranking names QIDs outside its candidates)."""
        whole = not prompt_id.startswith(fact_id)
        values = (model, fact_id, lang, template_id, culture, predicate, split, golds, candidates, countries,
                  subject, subject_label, prediction, prompt_id if whole else prompt_id[len(fact_id):],
                  candidates if ranked_from is None else ranked_from)
        for name, value in zip(CODED, values, strict=True):
            self._code(name, value)
        self._pid_whole.append(whole)
        self._rank.append(0 if rank is None else rank)
        self._subwords.append(-1 if gold_subwords is None else gold_subwords)
        self._chance.append(chance)
        start = len(self._pos)
        try:
            self._pos.extend(positions)
        except OverflowError:  # a longer candidate list: wider positions from now on
            del self._pos[start:]
            wider = "h" if self._pos.typecode == "B" and max(positions) < 2**15 else "i"
            self._pos = array(wider, self._pos)
            self._pos.extend(positions)
        self._starts.append(len(self._pos))
        self._has_order.append(has_order)

    def prompt_ids(self) -> list[str]:
        """The prompt ids added so far."""
        facts, tails = tuple(self._codes["fact_id"]), tuple(self._codes["pid_tail"])
        return [tails[t] if whole else facts[f] + tails[t]
                for f, t, whole in zip(self._cols["fact_id"], self._cols["pid_tail"], self._pid_whole, strict=True)]

    def finish(self) -> ScoredColumns:
        tables = {name: tuple(codes) for name, codes in self._codes.items()}
        cols = {name: np.frombuffer(col, dtype=np.int32) if len(col) else np.zeros(0, np.int32)
                for name, col in self._cols.items()}
        kind = {"B": np.uint8, "h": np.int16, "i": np.int32}[self._pos.typecode]
        pos = np.frombuffer(self._pos, dtype=kind) if len(self._pos) else np.zeros(0, kind)
        store = _Store(tables, cols, _ints(self._rank), _ints(self._subwords),
                       np.frombuffer(self._chance, dtype=np.float64) if len(self._chance) else np.zeros(0),
                       pos,
                       np.frombuffer(self._starts, dtype=np.int64),
                       np.frombuffer(self._has_order, dtype=np.int8).astype(bool),
                       np.frombuffer(self._pid_whole, dtype=np.int8).astype(bool))
        return ScoredColumns(store, None)


def _ints(col: array) -> np.ndarray:
    return np.frombuffer(col, dtype=np.int32) if len(col) else np.zeros(0, np.int32)


class _Store:
    """The columns of every scored prompt of one join; views (``ScoredColumns``) pick rows of it."""

    __slots__ = ("tables", "cols", "rank", "subwords", "chance", "pos", "starts", "has_order", "pid_whole")

    def __init__(self, tables: dict[str, tuple], cols: dict[str, np.ndarray], rank: np.ndarray,
                 subwords: np.ndarray, chance: np.ndarray, pos: np.ndarray, starts: np.ndarray,
                 has_order: np.ndarray, pid_whole: np.ndarray) -> None:
        self.tables, self.cols, self.rank, self.subwords, self.chance = tables, cols, rank, subwords, chance
        self.pos, self.starts, self.has_order, self.pid_whole = pos, starts, has_order, pid_whole

    def records(self, rows: np.ndarray) -> list[ScoredPrompt]:
        """The records of ``rows`` (store row numbers), made from Python values of whole columns at once."""
        t = self.tables
        c = {name: self.cols[name][rows].tolist() for name in CODED}
        ranks, subwords = self.rank[rows].tolist(), self.subwords[rows].tolist()
        chances, ordered, whole = self.chance[rows].tolist(), self.has_order[rows].tolist(), self.pid_whole[rows].tolist()
        starts, ends = self.starts[rows].tolist(), self.starts[rows + 1].tolist()
        pos = self.pos
        out = []
        for j in range(len(ranks)):
            fact = t["fact_id"][c["fact_id"][j]]
            tail = t["pid_tail"][c["pid_tail"][j]]
            cands = t["candidates"][c["candidates"][j]]
            named = t["ranked_from"][c["ranked_from"][j]]
            places = pos[starts[j]:ends[j]].tolist()
            rank, sub = ranks[j], subwords[j]
            out.append(ScoredPrompt(
                t["model"][c["model"][j]], tail if whole[j] else fact + tail, fact, t["lang"][c["lang"][j]],
                t["template_id"][c["template_id"][j]], t["culture"][c["culture"][j]],
                t["predicate"][c["predicate"][j]], t["golds"][c["golds"][j]], tuple([named[p] for p in places]),
                rank or None, t["split"][c["split"][j]], chances[j], cands, tuple(places) if ordered[j] else (),
                t["countries"][c["countries"][j]], None if sub < 0 else sub, t["subject"][c["subject"][j]],
                t["subject_label"][c["subject_label"][j]], t["prediction"][c["prediction"][j]]))
        return out


class ScoredColumns(Sequence[ScoredPrompt]):
    """Scored prompts in columns (rows of a shared store); a ``Sequence`` of ``ScoredPrompt`` made on read."""

    __slots__ = ("_store", "_rows")

    def __init__(self, store: _Store, rows: np.ndarray | None) -> None:
        self._store = store
        self._rows = np.arange(len(store.rank), dtype=np.int64) if rows is None else rows

    @classmethod
    def of(cls, records: Sequence[ScoredPrompt] | ScoredColumns) -> ScoredColumns:
        """Records as columns (a ``ScoredColumns`` is returned as it is)."""
        if isinstance(records, ScoredColumns):
            return records
        built = ScoredBuilder()
        for r in records:
            named = r.candidates
            if not set(r.ranked) <= set(named):
                named = (*named, *dict.fromkeys(q for q in r.ranked if q not in set(named)))
            place = {q: i for i, q in reversed(list(enumerate(named)))}  # a QID's first place
            ranked_from = None if named is r.candidates else named
            built.add(model=r.model, prompt_id=r.prompt_id, fact_id=r.fact_id, lang=r.lang,
                      template_id=r.template_id, culture=r.culture, predicate=r.predicate, golds=r.golds,
                      positions=r.order if r.order else [place[q] for q in r.ranked], has_order=bool(r.order),
                      ranked_from=ranked_from,
                      rank=r.rank, split=r.split, chance=r.chance, candidates=r.candidates,
                      countries=r.countries, gold_subwords=r.gold_subwords, subject=r.subject,
                      subject_label=r.subject_label, prediction=r.prediction)
        return built.finish()

    # ---- the Sequence ------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> ScoredPrompt: ...
    @overload
    def __getitem__(self, i: slice) -> ScoredColumns: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ScoredColumns(self._store, self._rows[i])
        return self._store.records(self._rows[[i]])[0]

    def __iter__(self) -> Iterator[ScoredPrompt]:
        for start in range(0, len(self._rows), CHUNK):
            yield from self._store.records(self._rows[start:start + CHUNK])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (ScoredColumns, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ScoredColumns({len(self)} scored prompts)"

    # ---- the columns -------------------------------------------------------------------------------

    def take(self, idx: np.ndarray | Sequence[int]) -> ScoredColumns:
        """The scored prompts at positions ``idx`` (a view sharing the store)."""
        return ScoredColumns(self._store, self._rows[np.asarray(idx, dtype=np.int64)])

    def where(self, mask: np.ndarray) -> ScoredColumns:
        return ScoredColumns(self._store, self._rows[np.asarray(mask, dtype=bool)])

    def codes(self, name: str) -> np.ndarray:
        """The code of field ``name`` per prompt (an index into ``table(name)``)."""
        return self._store.cols[name][self._rows]

    def table(self, name: str) -> tuple:
        """The distinct values of field ``name`` (codes index it); values no row of a view holds included."""
        return self._store.tables[name]

    def holds(self, name: str, keep: Callable[[Any], bool]) -> np.ndarray:
        """Per prompt: ``keep`` of its value of field ``name``, called once per distinct value."""
        table = self._store.tables[name]
        return np.fromiter(map(keep, table), dtype=bool, count=len(table))[self.codes(name)]

    def holds_each(self, names: Sequence[str], keep: Callable[..., bool]) -> np.ndarray:
        """Per prompt: ``keep`` of its values of the fields ``names`` (``FIELDS``), called once per distinct
        combination: the analyses' per-prompt rules (direct-only, equivalence-lenient, local) as arrays."""
        values, inverse = self.distinct(names)
        return np.fromiter((bool(keep(*v)) for v in values), dtype=bool, count=len(values))[inverse]

    def distinct(self, names: Sequence[str]) -> tuple[list[tuple], np.ndarray]:
        """The distinct combinations of the fields ``names`` among the prompts, as values (in no particular
        order), and each prompt's index into them. A field is a coded one, ``top`` (the first ranked QID, None
        when none) or ``gold_subwords`` (None when not measured), as the record holds it."""
        if not len(self):
            return [], np.zeros(0, dtype=np.int64)
        parts = []
        for name in names:
            if name == "top":
                parts += [self.codes("ranked_from"), self.top_positions()]
            elif name == "gold_subwords":
                parts.append(self.gold_subwords())
            else:
                parts.append(self.codes(name))
        found, inverse = np.unique(np.stack([np.asarray(x, dtype=np.int64) for x in parts], axis=1), axis=0,
                                   return_inverse=True)
        tables = self._store.tables
        values = []
        for row in found.tolist():
            at, combination = iter(row), []
            for name in names:
                if name == "top":
                    code, place = next(at), next(at)
                    combination.append(tables["ranked_from"][code][place] if place >= 0 else None)
                elif name == "gold_subwords":
                    count = next(at)
                    combination.append(None if count < 0 else count)
                else:
                    combination.append(tables[name][next(at)])
            values.append(tuple(combination))
        return values, inverse.reshape(-1)

    def split_by(self, name: str, key: Callable[[Any], Hashable]) -> dict[Hashable, ScoredColumns]:
        """``key`` of field ``name``'s value (called once per distinct value) -> the prompts with that key, in
        their order (a view each; keys in no particular order)."""
        table = self._store.tables[name]
        keys = [key(v) for v in table]
        number = {k: i for i, k in enumerate(dict.fromkeys(keys))}
        per_prompt = np.array([number[k] for k in keys], dtype=np.int64)[self.codes(name)] if keys else \
            np.zeros(0, dtype=np.int64)
        return {k: self.where(per_prompt == i) for k, i in number.items() if (per_prompt == i).any()}

    def values(self, name: str) -> list:
        """Field ``name`` per prompt, as Python values (shared objects from the table)."""
        table = self._store.tables[name]
        return [table[c] for c in self.codes(name).tolist()]

    def rank(self) -> np.ndarray:
        """The 1-based rank of the first valid object per prompt; 0 where none (``ScoredPrompt.rank`` None)."""
        return self._store.rank[self._rows]

    def correct(self) -> np.ndarray:
        return self.rank() == 1

    def gold_subwords(self) -> np.ndarray:
        """The direct gold's subword count per prompt; -1 where not measured (``ScoredPrompt.gold_subwords`` None)."""
        return self._store.subwords[self._rows]

    def chance(self) -> np.ndarray:
        return self._store.chance[self._rows]

    def ranked_any(self) -> np.ndarray:
        """Whether each prompt ranked (or matched) any candidate (``bool(ScoredPrompt.ranked)``)."""
        starts = self._store.starts
        return starts[self._rows + 1] > starts[self._rows]

    def has_order(self) -> np.ndarray:
        """Whether each prompt is a full ranking (``bool(ScoredPrompt.order)``)."""
        return self._store.has_order[self._rows]

    def lengths(self) -> np.ndarray:
        """How many candidates each prompt ranked (``len(ScoredPrompt.ranked)``)."""
        starts = self._store.starts
        return starts[self._rows + 1] - starts[self._rows]

    def positions(self, idx: np.ndarray, n: int) -> np.ndarray:
        """The ranked positions of the prompts at ``idx``, each ranking ``n`` candidates: (len(idx), n)."""
        starts = self._store.starts[self._rows[idx]]
        return self._store.pos[starts[:, None] + np.arange(n)]

    def ranked_positions(self, idx: np.ndarray) -> list[list[int]]:
        """The ranked candidates of the prompts at ``idx`` as positions in their lists, best first."""
        starts, pos = self._store.starts, self._store.pos
        return [pos[starts[r]:starts[r + 1]].tolist() for r in self._rows[idx].tolist()]

    def top_positions(self) -> np.ndarray:
        """The first ranked candidate's position in its list per prompt; -1 where none ranked."""
        starts = self._store.starts[self._rows]
        ok = self._store.starts[self._rows + 1] > starts
        out = np.full(len(self._rows), -1, dtype=np.int64)
        out[ok] = self._store.pos[starts[ok]]
        return out

    def tops(self) -> list[str | None]:
        """``ScoredPrompt.top`` per prompt."""
        lists = self._store.tables["ranked_from"]
        return [lists[c][p] if p >= 0 else None
                for c, p in zip(self.codes("ranked_from").tolist(), self.top_positions().tolist(), strict=True)]

    def prompt_ids(self) -> list[str]:
        store, t = self._store, self._store.tables
        return [tail if whole else t["fact_id"][f] + tail for f, tail, whole in
                zip(self.codes("fact_id").tolist(), (t["pid_tail"][c] for c in self.codes("pid_tail").tolist()),
                    store.pid_whole[self._rows].tolist(), strict=True)]

    def sorted_by(self, name: str) -> ScoredColumns:
        """The view ordered by field ``name``'s value (a stable sort: ties keep their order), like
        ``sorted(records, key=lambda r: getattr(r, name))``; ``prompt_id`` sorts the ids themselves."""
        if name == "prompt_id":
            ids = self.prompt_ids()
            if all(a < b for a, b in zip(ids, ids[1:], strict=False)):
                return self
            return self.take(sorted(range(len(ids)), key=ids.__getitem__))
        return self.take(np.argsort(sort_ranks(self._store.tables[name])[self.codes(name)], kind="stable"))

    def group_rows(self, *names: str) -> dict[tuple, np.ndarray]:
        """(values of ``names``) -> positions of the prompts holding them, keys in first-seen order,
        positions ascending within a group."""
        if not len(self._rows):
            return {}
        codes = np.stack([self.codes(n).astype(np.int64) for n in names], axis=1)
        keys, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        parts = np.split(np.argsort(inverse, kind="stable"), np.cumsum(np.bincount(inverse))[:-1])
        tables = [self._store.tables[n] for n in names]
        return {tuple(t[c] for t, c in zip(tables, keys[g].tolist(), strict=True)): parts[g]
                for g in np.argsort(first, kind="stable").tolist()}

    def with_rank(self, rank: np.ndarray) -> ScoredColumns:
        """The same prompts with ``rank`` (0: none) in place of their own (a new store; tables shared)."""
        s = self._store
        full = s.rank.copy()
        full[self._rows] = rank
        return ScoredColumns(_Store(s.tables, s.cols, full, s.subwords, s.chance, s.pos, s.starts, s.has_order,
                                    s.pid_whole), self._rows)


def grouped(scored: Sequence[ScoredPrompt], names: Sequence[str], keys: Callable[..., Iterable[Hashable]]
            ) -> dict[Hashable, ScoredColumns]:
    """key -> the scored prompts ``keys`` files under it (a prompt may go under several keys, or none), in
    their order; keys in first-seen order. ``keys`` gets a prompt's values of the fields ``names``
    (``ScoredColumns.distinct``) and is called once per distinct combination; no record is made."""
    cols = ScoredColumns.of(scored)
    values, inverse = cols.distinct(names)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(values) + 1))
    at: dict[Hashable, list[np.ndarray]] = {}
    for d, combination in enumerate(values):
        for key in keys(*combination):
            at.setdefault(key, []).append(order[bounds[d]:bounds[d + 1]])
    rows = {key: np.sort(np.concatenate(parts)) for key, parts in at.items()}
    return {key: cols.take(idx) for key, idx in sorted(rows.items(), key=lambda kv: int(kv[1][0]))}


def sort_ranks(table: Sequence[str]) -> np.ndarray:
    """Each value's place among the table's values sorted (codes -> sort keys)."""
    ranks = np.empty(len(table), dtype=np.int64)
    ranks[sorted(range(len(table)), key=table.__getitem__)] = np.arange(len(table))
    return ranks


def last_of(keys: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Positions of the last entry of each key among the positions where ``mask`` holds."""
    at = np.flatnonzero(mask)
    if not len(at):
        return at
    _, first_from_end = np.unique(keys[at][::-1], return_index=True)
    return at[len(at) - 1 - first_from_end]
