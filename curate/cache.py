"""The query runner: on-disk response cache, ``queries.jsonl`` log, batching with back-off and halving.

Retries and their waits follow the one HTTP policy (``factatlas.http.retrying``); halving a batch that
failed is this runner's own step, because the same query would fail again.

Every answer is stored atomically under ``cache/<sha256(endpoint id + query)>.json`` *before* the run
moves on, so a killed run resumes without asking again for finished work, and cannot lose or duplicate a
fact (outputs are written only at the end, from cached answers). A batch that timed out leaves a
``.split`` marker, so a resumed run goes straight to the halves instead of timing out again.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from factatlas.atomic import append_line, atomic_path, write_bytes
from factatlas.curate.endpoints import Bindings, SparqlEndpoint
from factatlas.curate.sparql import query_hash
from factatlas.errors import FactatlasError, writing
from factatlas.http import HttpPolicy, Transient, redact, retrying

log = logging.getLogger(__name__)

DEFAULT_BATCH = 200  # QIDs per VALUES list (WIKIDATA.md: start near 200, halve on timeout)


@dataclass
class RunnerStats:
    sent: int = 0
    cached: int = 0
    failed: int = 0
    split: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    hashes: list[str] = field(default_factory=list)
    # when each answer was fetched from the endpoint (epoch seconds; a cached answer keeps its file's time)
    fetched_at: dict[str, float] = field(default_factory=dict)

    def retrieval_window(self) -> tuple[float, float] | None:
        times = self.fetched_at.values()
        return (min(times), max(times)) if times else None


class QueryRunner:
    def __init__(self, endpoint: SparqlEndpoint, cache_dir: str | Path, log_path: str | Path, *,
                 sleeper: Callable[[float], None] = time.sleep, policy: HttpPolicy | None = None,
                 rng: random.Random | None = None, clock: Callable[[], float] = time.monotonic):
        self.endpoint = endpoint
        self.cache_dir = Path(cache_dir)
        with writing(self.cache_dir, "create the query cache folder"):
            self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = Path(log_path)
        self.sleep = sleeper
        self.clock = clock
        self.policy = policy or HttpPolicy()
        self.rng = rng or random.Random()
        self.stats = RunnerStats()

    # -- single queries ---------------------------------------------------------------------------

    def _paths(self, h: str) -> tuple[Path, Path]:
        return self.cache_dir / f"{h}.json", self.cache_dir / f"{h}.split"

    def _log(self, **row) -> None:
        append_line(self.log_path, json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")  # whole or not at all

    def select(self, kind: str, query: str, *, retries: int | None = None) -> Bindings:
        """Answer from the cache, or ask the endpoint (retrying timeouts with back-off) and cache. The rows
        of a fresh answer are kept as they are written (the caller wants them whole), not read back."""
        kept: Bindings = []
        rows = self.select_stream(kind, query, retries=retries, keep=kept)
        return kept if rows is None else list(rows)

    def select_stream(self, kind: str, query: str, *, retries: int | None = None,
                      keep: list | None = None) -> Iterator[dict] | None:
        """``select``, its rows read back one at a time from the cache file: the answer is fetched (and
        cached, whole or not at all) before this returns, so a failure raises here, not while reading.
        With ``keep``, a fresh answer's rows are appended to it as they are written, and None is returned."""
        h = query_hash(self.endpoint.id, query)
        self.stats.hashes.append(h)
        cached, _ = self._paths(h)
        if cached.exists():
            rows = count_rows(cached)
            self.stats.cached += 1
            self.stats.fetched_at[h] = cached.stat().st_mtime
            self._log(hash=h, endpoint=self.endpoint.id, kind=kind, text=query, rows=rows, seconds=0.0,
                      status="cached")
            return read_rows(cached)

        def attempt() -> None:
            start = self.clock()
            self.stats.sent += 1
            self.stats.by_kind[kind] = self.stats.by_kind.get(kind, 0) + 1
            if keep is not None:
                keep.clear()  # a retry starts the answer again
            try:
                rows = write_rows(cached, self.endpoint, query, keep)
            except Transient as e:
                self.stats.failed += 1
                self._log(hash=h, endpoint=self.endpoint.id, kind=kind, text=query, rows=0,
                          seconds=round(self.clock() - start, 3), status=f"timeout: {redact(str(e))}")
                raise
            self.stats.fetched_at[h] = time.time()
            self._log(hash=h, endpoint=self.endpoint.id, kind=kind, text=query, rows=rows,
                      seconds=round(self.clock() - start, 3), status="ok")

        retrying(attempt, self.policy, sleeper=self.sleep, rng=self.rng, retries=retries)
        return None if keep is not None else read_rows(cached)

    # -- batched queries --------------------------------------------------------------------------

    def select_batched(self, kind: str, items: Sequence[str], build: Callable[[Sequence[str]], str],
                       batch_size: int = DEFAULT_BATCH) -> Bindings:
        """Run ``build(batch)`` over ``items`` in batches; a batch that times out is backed off and
        halved (recursively) — the same query would time out again."""
        return [row for rows in self.iter_batched(kind, dict.fromkeys(items), build, batch_size) for row in rows]

    def iter_batched(self, kind: str, items: Iterable[str], build: Callable[[Sequence[str]], str],
                     batch_size: int = DEFAULT_BATCH) -> Iterator[Iterator[dict]]:
        """``select_batched`` one batch's answer at a time, each read row by row from its cache file, for a
        caller that folds the rows as they come (step 1 spills them): no batch's rows are held whole.
        ``items`` must be distinct; they are read lazily, ``batch_size`` at a time."""
        batch: list[str] = []
        for item in items:
            batch.append(item)
            if len(batch) == batch_size:
                yield self._run_batch(kind, batch, build)
                batch = []
        if batch:
            yield self._run_batch(kind, batch, build)

    def _run_batch(self, kind: str, batch: Sequence[str], build: Callable[[Sequence[str]], str]
                   ) -> Iterator[dict]:
        query = build(batch)
        h = query_hash(self.endpoint.id, query)
        cached, split = self._paths(h)
        if split.exists() and not cached.exists() and len(batch) > 1:
            self.stats.split += 1
            return self._halves(kind, batch, build)
        try:
            # A batch that can still be split gets one try before halving; a single item gets the
            # full back-off schedule.
            return self.select_stream(kind, query, retries=0 if len(batch) > 1 else None)
        except Transient as e:
            if len(batch) <= 1:
                raise FactatlasError(f"{kind} query for {list(batch)} keeps failing at {self.endpoint.id}: {e}. "
                                     "Rerun later (cached answers are kept) or use another endpoint") from e
            write_bytes(split, b"")
            self.stats.split += 1
            self.sleep(self.policy.backoff_s(0, self.rng))
            return self._halves(kind, batch, build)

    def _halves(self, kind: str, batch: Sequence[str], build: Callable[[Sequence[str]], str]) -> Iterator[dict]:
        mid = len(batch) // 2
        first = self._run_batch(kind, batch[:mid], build)  # both fetched (and cached) before any row is read
        return itertools.chain(first, self._run_batch(kind, batch[mid:], build))


# ---- the cache files ------------------------------------------------------------------------------
# One answer per file: a JSON array with one row per line ("[", then each row and a comma, then "]"), so
# that it is written as the rows arrive and read back a row at a time, and is still one JSON document. A
# file of an older version (the array on one line) is read whole.


def write_rows(target: Path, endpoint: SparqlEndpoint, query: str, keep: list | None = None) -> int:
    """Ask ``endpoint`` and write its answer to ``target`` atomically as the rows pass (an endpoint with
    ``stream`` hands them over one by one, its answer never whole in memory); returns the row count. An
    answer that fails half-way leaves no file."""
    rows = 0
    with atomic_path(target) as tmp, open(tmp, "wb") as f:
        f.write(b"[")

        def put(row: dict) -> None:
            nonlocal rows
            f.write(b"\n" if not rows else b",\n")
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=True).encode("utf-8"))
            rows += 1
            if keep is not None:
                keep.append(row)

        stream = getattr(endpoint, "stream", None)
        if stream is not None:
            stream(query, put)
        else:  # an endpoint that only answers whole (a test double, a plug-in)
            for row in endpoint.select(query):
                put(row)
        f.write(b"\n]\n" if rows else b"]\n")
    return rows


def read_rows(path: Path) -> Iterator[dict]:
    """The rows of a cache file, one at a time."""
    with open(path, "rb") as f:
        first = f.readline()
        if first.strip() != b"[":  # an older cache file: the whole array on one line
            yield from json.loads(first + f.read())
            return
        for line in f:
            line = line.rstrip(b"\n")
            if line.endswith(b","):
                line = line[:-1]
            if line and line != b"]":
                yield json.loads(line)


def count_rows(path: Path) -> int:
    """How many rows a cache file holds (for the query log), without parsing them."""
    with open(path, "rb") as f:
        first = f.readline()
        if first.strip() != b"[":
            return len(json.loads(first + f.read()))
        return sum(1 for line in f if line.strip() not in (b"", b"]"))
