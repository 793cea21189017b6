"""The query runner: on-disk response cache, ``queries.jsonl`` log, batching with back-off and halving.

Retries and their waits follow the one HTTP policy (``factatlas.http.retrying``); halving a batch that
failed is this runner's own step, because the same query would fail again.

Every answer is stored atomically under ``cache/<sha256(endpoint id + query)>.json`` *before* the run
moves on, so a killed run resumes without asking again for finished work, and cannot lose or duplicate a
fact (outputs are written only at the end, from cached answers). A batch that timed out leaves a
``.split`` marker, so a resumed run goes straight to the halves instead of timing out again.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from factatlas.atomic import append_line, write_bytes
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
        """Answer from the cache, or ask the endpoint (retrying timeouts with back-off) and cache."""
        h = query_hash(self.endpoint.id, query)
        self.stats.hashes.append(h)
        cached, _ = self._paths(h)
        if cached.exists():
            rows = json.loads(cached.read_text("utf-8"))
            self.stats.cached += 1
            self.stats.fetched_at[h] = cached.stat().st_mtime
            self._log(hash=h, endpoint=self.endpoint.id, kind=kind, text=query, rows=len(rows), seconds=0.0,
                      status="cached")
            return rows

        def attempt() -> Bindings:
            start = self.clock()
            self.stats.sent += 1
            self.stats.by_kind[kind] = self.stats.by_kind.get(kind, 0) + 1
            try:
                rows = self.endpoint.select(query)
            except Transient as e:
                self.stats.failed += 1
                self._log(hash=h, endpoint=self.endpoint.id, kind=kind, text=query, rows=0,
                          seconds=round(self.clock() - start, 3), status=f"timeout: {redact(str(e))}")
                raise
            write_bytes(cached, json.dumps(rows, ensure_ascii=False, sort_keys=True).encode("utf-8"))
            self.stats.fetched_at[h] = time.time()
            self._log(hash=h, endpoint=self.endpoint.id, kind=kind, text=query, rows=len(rows),
                      seconds=round(self.clock() - start, 3), status="ok")
            return rows

        return retrying(attempt, self.policy, sleeper=self.sleep, rng=self.rng, retries=retries)

    # -- batched queries --------------------------------------------------------------------------

    def select_batched(self, kind: str, items: Sequence[str], build: Callable[[Sequence[str]], str],
                       batch_size: int = DEFAULT_BATCH) -> Bindings:
        """Run ``build(batch)`` over ``items`` in batches; a batch that times out is backed off and
        halved (recursively) — the same query would time out again."""
        items = list(dict.fromkeys(items))
        rows: Bindings = []
        for i in range(0, len(items), batch_size):
            rows.extend(self._run_batch(kind, items[i:i + batch_size], build))
        return rows

    def _run_batch(self, kind: str, batch: Sequence[str], build: Callable[[Sequence[str]], str]) -> Bindings:
        query = build(batch)
        h = query_hash(self.endpoint.id, query)
        cached, split = self._paths(h)
        if split.exists() and not cached.exists() and len(batch) > 1:
            self.stats.split += 1
            return self._halves(kind, batch, build)
        try:
            # A batch that can still be split gets one try before halving; a single item gets the
            # full back-off schedule.
            return self.select(kind, query, retries=0 if len(batch) > 1 else None)
        except Transient as e:
            if len(batch) <= 1:
                raise FactatlasError(f"{kind} query for {list(batch)} keeps failing at {self.endpoint.id}: {e}. "
                                     "Rerun later (cached answers are kept) or use another endpoint") from e
            write_bytes(split, b"")
            self.stats.split += 1
            self.sleep(self.policy.backoff_s(0, self.rng))
            return self._halves(kind, batch, build)

    def _halves(self, kind: str, batch: Sequence[str], build: Callable[[Sequence[str]], str]) -> Bindings:
        mid = len(batch) // 2
        return self._run_batch(kind, batch[:mid], build) + self._run_batch(kind, batch[mid:], build)
