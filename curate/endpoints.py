"""SPARQL endpoints behind one narrow protocol: ``select(query) -> bindings``.

- ``EmbeddedEndpoint``: pyoxigraph over the bundled Wikidata sample (the offline default).
- ``HttpSparqlEndpoint``: any SPARQL 1.1 protocol endpoint (WDQS, QLever, Oxigraph server, a mirror)
  over the project's one HTTP policy (``factatlas.http``), following Wikimedia's etiquette
  (WIKIDATA.md): a descriptive User-Agent (the public WDQS is refused without one), one query in
  flight, a total deadline per request above the 60 s server deadline, POST for long queries, HTTP 429
  waits ``Retry-After`` (60 s when absent, capped) and aborts after repeated 429s. Server errors, the
  deadline, resets, bodies cut short, garbage status lines and HTTP-200-with-truncated-JSON raise
  ``QueryTimeout``: the query runner (``factatlas.curate.cache``) backs off and halves the batch,
  because the same query would time out again.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qsl, quote, quote_plus, urlparse

from factatlas.curate.presets import EndpointPreset
from factatlas.curate.presets import resolve as resolve_preset
from factatlas.curate.results import MalformedAnswer, iter_bindings
from factatlas.errors import ConfigError, FactatlasError
from factatlas.http import (
    DEFAULT_TIMEOUT_S,
    READ_CHUNK,
    HttpPolicy,
    Throttled,
    Transient,
    Transport,
    Unreachable,
    parse_retry_after,
    redact,
    retrying,
)

log = logging.getLogger(__name__)

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
SAMPLE_PATH = SAMPLE_DIR / "wikidata-sample.nt.gz"
PUBLIC_WDQS_HOSTS = frozenset({"query.wikidata.org", "query-main.wikidata.org", "query-scholarly.wikidata.org"})
SERVER_DEADLINE_S = 60.0
DEFAULT_CLIENT_TIMEOUT_S = DEFAULT_TIMEOUT_S  # a little above the server's 60 s deadline
POST_THRESHOLD_CHARS = 2000  # URL-encoded; longer queries go by POST (GET -> HTTP 414 for long VALUES)

Bindings = list[dict[str, dict[str, str]]]


class QueryTimeout(Transient):
    """The endpoint could not answer this query in time (5xx, client timeout, truncated body)."""


class EndpointError(FactatlasError):
    """The endpoint rejected the query or cannot be reached (not retryable)."""


class SparqlEndpoint(Protocol):
    @property
    def id(self) -> str:
        """Stable identity for cache keys: URL, or the embedded sample's content hash."""

    def select(self, query: str) -> Bindings:
        """Run a SELECT query; return SPARQL-JSON bindings (var -> {type, value, xml:lang?})."""


# ---- embedded ---------------------------------------------------------------------------------


def load_store(path: str | Path = SAMPLE_PATH):
    """A pyoxigraph store holding an N-Triples file (gzip or plain)."""
    import pyoxigraph as ox

    path = Path(path)
    if not path.exists():
        raise ConfigError(f"embedded Wikidata sample not found at {path}; regenerate it with "
                          "`python3 scripts/build_wikidata_sample.py` or pass --endpoint URL")
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    store = ox.Store()
    fmt = ox.RdfFormat.TURTLE if path.name.endswith((".ttl", ".ttl.gz")) else ox.RdfFormat.N_TRIPLES
    store.load(input=data, format=fmt)
    return store


def run_on_store(store, query: str) -> Bindings:
    rows: Bindings = []
    stream_from_store(store, query, rows.append)
    return rows


def stream_from_store(store, query: str, sink: Callable[[dict], None]) -> int:
    """The answer of the embedded store, handed to ``sink`` one binding at a time; returns the count.

    pyoxigraph evaluates lazily and writes SPARQL JSON as it goes: written to a scratch file and read back
    with ``iter_bindings``, the rows are the JSON serializer's own (the same dicts ``json.loads`` gave),
    and no answer is held whole, as text or as rows."""
    import tempfile

    import pyoxigraph as ox

    try:
        result = store.query(query)
    except SyntaxError as e:
        raise EndpointError(f"embedded endpoint rejected the query: {e}") from e
    with tempfile.TemporaryFile() as scratch:
        result.serialize(scratch, format=ox.QueryResultsFormat.JSON)
        scratch.seek(0)
        return _drain(iter_bindings(iter(lambda: scratch.read(READ_CHUNK), b"")), sink)


def _drain(rows: Iterator[dict], sink: Callable[[dict], None]) -> int:
    n = 0
    for row in rows:
        sink(row)
        n += 1
    return n


class EmbeddedEndpoint:
    """pyoxigraph over an N-Triples file (default: the bundled sample)."""

    def __init__(self, path: str | Path = SAMPLE_PATH, store=None):
        self.path = Path(path)
        self._store = store if store is not None else load_store(self.path)
        digest = hashlib.sha256(self.path.read_bytes()).hexdigest()[:16] if self.path.exists() else "store"
        self._id = f"embedded:{self.path.name}:{digest}"
        self.requests = 0

    @property
    def id(self) -> str:
        return self._id

    def select(self, query: str) -> Bindings:
        rows: Bindings = []
        self.stream(query, rows.append)
        return rows

    def stream(self, query: str, sink: Callable[[dict], None]) -> int:
        """``select``, each binding handed to ``sink`` as it is read; returns the count."""
        self.requests += 1
        return stream_from_store(self._store, query, sink)


# ---- HTTP -------------------------------------------------------------------------------------


def is_public_wdqs(url: str) -> bool:
    return (urlparse(url).hostname or "") in PUBLIC_WDQS_HOSTS


def check_user_agent(url: str, user_agent: str | None) -> str:
    """Return the agent to use, refusing the public WDQS without a descriptive one (with contact)."""
    from factatlas import __version__

    if user_agent and user_agent.strip():
        ua = user_agent.strip()
        if is_public_wdqs(url) and not any(mark in ua for mark in ("@", "http://", "https://")):
            raise ConfigError(f"--user-agent {ua!r}: Wikimedia requires contact information in the agent; "
                              f"use e.g. 'factatlas/{__version__} (https://your.site; you@example.org)'")
        return ua
    if is_public_wdqs(url):
        raise ConfigError(f"refusing to query the public WDQS ({url}) without a User-Agent: pass "
                          f"--user-agent 'factatlas/{__version__} (https://your.site; you@example.org)' or "
                          "set FACTATLAS_USER_AGENT (Wikimedia blocks generic agents)")
    return f"factatlas/{__version__} (local endpoint)"


@dataclass
class HttpStats:
    requests: int = 0
    rate_limited: int = 0
    timeouts: int = 0
    waited_s: float = 0.0
    paced_s: float = 0.0  # waited to keep the preset's interval between requests
    capped: int = 0  # answers that reached the preset's row cap (treated as truncated)


class HttpSparqlEndpoint:
    """A SPARQL 1.1 protocol endpoint over ``factatlas.http`` (one policy: deadline, Retry-After, redaction)."""

    def __init__(self, url: str, user_agent: str | None = None, *, timeout_s: float | None = None,
                 policy: HttpPolicy | None = None, sleeper: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, max_consecutive_429: int | None = None,
                 post_threshold: int = POST_THRESHOLD_CHARS, rng: random.Random | None = None,
                 preset: EndpointPreset | None = None, min_interval_s: float | None = None,
                 result_cap: int | None = None):
        policy = policy or HttpPolicy()
        if timeout_s is not None:
            policy = replace(policy, timeout_s=timeout_s)
        if max_consecutive_429 is not None:
            policy = replace(policy, max_throttled=max_consecutive_429)
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ConfigError(f"--endpoint {redact(url)!r}: expected an http(s) URL like "
                              "https://query.wikidata.org/sparql")
        server_deadline = preset.server_timeout_s if preset else SERVER_DEADLINE_S if is_public_wdqs(url) else None
        if server_deadline is not None and policy.timeout_s <= server_deadline:
            where = f"the {preset.name} preset's" if preset else "the WDQS"
            raise ConfigError(f"client timeout {policy.timeout_s:g} s must exceed {where} deadline of "
                              f"{server_deadline:g} s (the client would give up on queries the server still runs)")
        self.preset = preset
        self.min_interval_s = min_interval_s if min_interval_s is not None else preset.min_interval_s if preset else 0.0
        self.result_cap = result_cap if result_cap is not None else preset.result_cap if preset else None
        self._last_start: float | None = None
        self.url = url
        self.shown = redact(url)  # what messages, logs, the manifest and queries.jsonl may show
        self.user_agent = check_user_agent(url, user_agent)
        sparql_protocol_request(url, "ASK {}", self.user_agent, post=False)  # the URL's own parameters, checked now
        self.policy = policy
        self.timeout_s = policy.timeout_s
        self.sleep = sleeper
        self.rng = rng
        self.post_threshold = post_threshold
        self.stats = HttpStats()
        self._transport = Transport(policy, self.user_agent, clock=clock)
        self.clock = clock
        self._in_flight = threading.Lock()  # one query at a time, whatever the caller does

    @property
    def id(self) -> str:
        return self.shown

    def select(self, query: str) -> Bindings:
        """One query; throttle answers wait Retry-After here, timeouts go up to the runner (which halves)."""
        rows: Bindings = []
        self.stream(query, rows.append)
        return rows

    def stream(self, query: str, sink: Callable[[dict], None]) -> int:
        """``select``, each binding handed to ``sink`` as it is parsed from the body on the wire (the answer is
        never held whole); returns the count. A throttle answer waits and asks again before any row is
        handed over; an answer that fails half-way raises ``QueryTimeout`` after handing over some rows, so
        the sink must be one that is discarded then (the runner's cache file is)."""

        def waited(seconds: float, _why: Exception) -> None:
            self.stats.rate_limited += 1
            self.stats.waited_s += seconds

        with self._in_flight:
            return retrying(lambda: self._once(query, sink), self.policy, sleeper=self.sleep, rng=self.rng,
                            retries=0, on_wait=waited)

    def _pace(self) -> None:
        if self.min_interval_s > 0 and self._last_start is not None:
            wait = self._last_start + self.min_interval_s - self.clock()
            if wait > 0:
                self.stats.paced_s += wait
                self.sleep(wait)
        self._last_start = self.clock()

    def _once(self, query: str, sink: Callable[[dict], None]) -> int:
        self._pace()
        self.stats.requests += 1
        method, url, body, headers = sparql_protocol_request(self.url, query, self.user_agent,
                                                             post=len(quote(query)) > self.post_threshold)
        try:
            with self._transport.stream(method, url, body=body, headers=headers) as answer:
                if answer.status != 200:
                    self._refuse(answer.status, answer.reason, answer.header("Retry-After"),
                                 answer.header("Location"), _head(answer.chunks()))
                try:
                    rows = _drain(iter_bindings(answer.chunks()), sink)
                except MalformedAnswer as e:
                    # A query cancelled after streaming began: HTTP 200 with a truncated body. Same as a timeout.
                    self.stats.timeouts += 1
                    raise QueryTimeout(f"{self.shown}: truncated or malformed JSON answer ({e})") from e
        except Unreachable as e:
            raise EndpointError(f"{e}; check --endpoint") from e
        except QueryTimeout:
            raise
        except Throttled:
            raise
        except Transient as e:
            self.stats.timeouts += 1
            raise QueryTimeout(str(e)) from e
        if self.result_cap is not None and rows >= self.result_cap:
            # an endpoint with a row cap answers HTTP 200 with the first rows only: halve the batch
            self.stats.capped += 1
            raise QueryTimeout(f"{self.shown}: the answer has {rows} rows, the endpoint's cap; it may be cut")
        return rows

    def _refuse(self, status: int, reason: str, retry_after: str | None, location: str | None, body: bytes) -> None:
        """Raise what an answer other than HTTP 200 means (``body``: its first bytes, for the message)."""
        if status == 429:
            raise Throttled(f"{self.shown}: HTTP 429", parse_retry_after(retry_after))
        if status >= 500:
            self.stats.timeouts += 1
            # some engines answer a query they reject with 500 (Virtuoso: "transitive start not given"); the
            # message carries the server's first line so that the final error names the cause
            raise QueryTimeout(redact(f"{self.shown}: HTTP {status}{_first_line(body)}"))
        if 300 <= status < 400:  # not followed: credentials must not travel to another address
            target = redact(location or "?")
            raise EndpointError(f"{self.shown}: HTTP {status} redirects to {target}; pass that URL as "
                                "--endpoint")
        raise EndpointError(redact(f"{self.shown}: HTTP {status} {reason}{_first_line(body)}"))


def _head(chunks: Iterator[bytes], limit: int = 64 * 1024) -> bytes:
    """The first bytes of an error answer's body (its message), not the whole of a long one."""
    out = b""
    for chunk in chunks:
        out += chunk
        if len(out) >= limit:
            break
    return out[:limit]


def _first_line(body: bytes, limit: int = 300) -> str:
    lines = body.decode("utf-8", "replace").strip().splitlines()[:1]
    return f": {lines[0][:limit]}" if lines and lines[0].strip() else ""


# The SPARQL 1.1 Protocol's query operation (https://www.w3.org/TR/sparql11-protocol/#query-operation) as
# SPARQLWrapper 2.0 sends it: the result format also named in the format/output/results parameters, because
# engines differ in which they read (Virtuoso: format) and ignore the others.
JSON_ACCEPT = "application/sparql-results+json,application/json,text/javascript,application/javascript"
FORMAT_PARAMETERS = ("format", "output", "results")


def sparql_protocol_request(url: str, query: str, user_agent: str, *, post: bool
                            ) -> tuple[str, str, bytes | None, dict[str, str]]:
    """The SPARQL-protocol request for ``query`` (method, URL with its query string, body, headers: JSON
    results, URL-encoded POST for long queries); sending it is ``factatlas.http``'s job, because
    SPARQLWrapper's own urllib call has no total deadline, retries nothing and cannot tell a reset from a
    timeout.

    SPARQLWrapper is used through its public API only: its setters check the parts (the query form, the
    endpoint's own parameters, which may not set ``query``) and its public attributes hold them; this
    function writes them out as the protocol says (its request builder is private)."""
    from SPARQLWrapper import ASK, JSON, SELECT, SPARQLWrapper

    base, _, own = url.partition("?")
    wrapper = SPARQLWrapper(base, agent=user_agent, returnFormat=JSON)
    for name, value in parse_qsl(own, keep_blank_values=True):
        if not wrapper.addParameter(name, value):
            raise ConfigError(f"--endpoint {redact(url)!r}: the URL's own parameter {name!r} is the query "
                              "itself; remove it from the URL")
    wrapper.setQuery(query)
    if wrapper.queryType not in (SELECT, ASK):
        raise EndpointError(f"refusing to send a {wrapper.queryType} request to {redact(url)}: the curation only "
                            "reads (SELECT or ASK)")
    pairs = [(name, value) for name, values in wrapper.parameters.items() for value in values]
    pairs += [("query", wrapper.queryString)] + [(name, wrapper.returnFormat) for name in FORMAT_PARAMETERS]
    encoded = "&".join(f"{quote_plus(name, safe='/')}={quote_plus(value, safe='/')}" for name, value in pairs)
    headers = {"Accept": JSON_ACCEPT}
    if post:
        headers = {"Content-Type": "application/x-www-form-urlencoded", **headers}
        return "POST", wrapper.endpoint, encoded.encode("ascii"), headers
    return "GET", f"{wrapper.endpoint}?{encoded}", None, headers


def make_endpoint(endpoint: str | None, user_agent: str | None = None, sample: str | Path | None = None,
                  policy: HttpPolicy | None = None, sleeper: Callable[[float], None] = time.sleep) -> SparqlEndpoint:
    """``--endpoint``: None or ``embedded`` (the bundled sample), a preset name (``wdqs``,
    ``qlever-wikidata``: its URL and known limits) or a URL."""
    url, preset = resolve_preset(endpoint)
    if url is None:
        return EmbeddedEndpoint(sample or SAMPLE_PATH)
    return HttpSparqlEndpoint(url, user_agent, policy=policy, sleeper=sleeper, preset=preset)
