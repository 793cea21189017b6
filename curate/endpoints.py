"""SPARQL endpoints behind one narrow protocol: ``select(query) -> bindings``.

- ``EmbeddedEndpoint``: pyoxigraph over the bundled Wikidata sample (the offline default).
- ``HttpSparqlEndpoint``: any SPARQL 1.1 protocol endpoint (WDQS, QLever, Oxigraph server, a mirror)
  through SPARQLWrapper, following Wikimedia's etiquette (WIKIDATA.md): a descriptive User-Agent (the
  public WDQS is refused without one), one query in flight, a client timeout above the 60 s server
  deadline, POST for long queries, HTTP 429 waits ``Retry-After`` (60 s when absent) and aborts after
  repeated 429s. Server errors, client timeouts and HTTP-200-with-truncated-JSON raise ``QueryTimeout``:
  the query runner (``factatlas.curate.cache``) backs off and halves the batch, because the same query
  would time out again.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import threading
import time
import urllib.error
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import quote, urlparse

from factatlas.errors import ConfigError, FactatlasError

log = logging.getLogger(__name__)

SAMPLE_DIR = Path(__file__).resolve().parent / "sample"
SAMPLE_PATH = SAMPLE_DIR / "wikidata-sample.nt.gz"
PUBLIC_WDQS_HOSTS = frozenset({"query.wikidata.org", "query-main.wikidata.org", "query-scholarly.wikidata.org"})
SERVER_DEADLINE_S = 60.0
DEFAULT_CLIENT_TIMEOUT_S = 65.0  # a little above the server's 60 s deadline
POST_THRESHOLD_CHARS = 2000  # URL-encoded; longer queries go by POST (GET -> HTTP 414 for long VALUES)
DEFAULT_RETRY_AFTER_S = 60.0
MAX_CONSECUTIVE_429 = 3

Bindings = list[dict[str, dict[str, str]]]


class QueryTimeout(FactatlasError):
    """The endpoint could not answer this query in time (5xx, client timeout, truncated body)."""


class RateLimited(FactatlasError):
    """The endpoint kept answering HTTP 429; we stop instead of getting the agent banned."""


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
    import pyoxigraph as ox

    try:
        result = store.query(query)
    except SyntaxError as e:
        raise EndpointError(f"embedded endpoint rejected the query: {e}") from e
    return json.loads(result.serialize(format=ox.QueryResultsFormat.JSON))["results"]["bindings"]


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
        self.requests += 1
        return run_on_store(self._store, query)


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


class HttpSparqlEndpoint:
    """A SPARQL 1.1 protocol endpoint through SPARQLWrapper."""

    def __init__(self, url: str, user_agent: str | None = None, *, timeout_s: float = DEFAULT_CLIENT_TIMEOUT_S,
                 sleeper: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic,
                 max_consecutive_429: int = MAX_CONSECUTIVE_429, post_threshold: int = POST_THRESHOLD_CHARS):
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ConfigError(f"--endpoint {url!r}: expected an http(s) URL like https://query.wikidata.org/sparql")
        if is_public_wdqs(url) and timeout_s <= SERVER_DEADLINE_S:
            raise ConfigError(f"client timeout {timeout_s}s must exceed the WDQS deadline of 60 s")
        self.url = url
        self.user_agent = check_user_agent(url, user_agent)
        self.timeout_s = timeout_s
        self.sleep = sleeper
        self.clock = clock
        self.max_consecutive_429 = max_consecutive_429
        self.post_threshold = post_threshold
        self.stats = HttpStats()
        self._in_flight = threading.Lock()  # one query at a time, whatever the caller does

    @property
    def id(self) -> str:
        return self.url

    def select(self, query: str) -> Bindings:
        with self._in_flight:
            consecutive_429 = 0
            while True:
                try:
                    return self._once(query)
                except urllib.error.HTTPError as e:
                    if e.code != 429:
                        if e.code >= 500:
                            self.stats.timeouts += 1
                            raise QueryTimeout(f"{self.url}: HTTP {e.code}") from e
                        raise EndpointError(f"{self.url}: HTTP {e.code} {e.reason}") from e
                    consecutive_429 += 1
                    self.stats.rate_limited += 1
                    if consecutive_429 >= self.max_consecutive_429:
                        raise RateLimited(f"{self.url}: HTTP 429 {consecutive_429} times in a row; stopping to "
                                          "respect the rate limit. Rerun later: cached answers are kept") from e
                    wait = retry_after_seconds(e.headers.get("Retry-After") if e.headers else None)
                    log.warning("HTTP 429 from %s; waiting %.0f s (Retry-After)", self.url, wait)
                    self.stats.waited_s += wait
                    self.sleep(wait)

    def _once(self, query: str) -> Bindings:
        from SPARQLWrapper import GET, JSON, POST, SPARQLWrapper
        from SPARQLWrapper.SPARQLExceptions import (
            EndPointInternalError,
            EndPointNotFound,
            QueryBadFormed,
            Unauthorized,
            URITooLong,
        )

        client = SPARQLWrapper(self.url, agent=self.user_agent)
        client.setReturnFormat(JSON)
        client.setTimeout(max(1, int(self.timeout_s)))
        client.timeout = self.timeout_s  # setTimeout truncates to int; urlopen takes float seconds
        client.setMethod(POST if len(quote(query)) > self.post_threshold else GET)
        client.setQuery(query)
        self.stats.requests += 1
        try:
            result = client.query()
            body = result.response.read()
        except EndPointInternalError as e:
            self.stats.timeouts += 1
            raise QueryTimeout(f"{self.url}: HTTP 500 ({str(e).splitlines()[0]})") from e
        except (TimeoutError, ConnectionResetError) as e:
            self.stats.timeouts += 1
            raise QueryTimeout(f"{self.url}: no answer within {self.timeout_s} s") from e
        except urllib.error.HTTPError:
            raise
        except urllib.error.URLError as e:
            if isinstance(e.reason, TimeoutError):
                self.stats.timeouts += 1
                raise QueryTimeout(f"{self.url}: no answer within {self.timeout_s} s") from e
            raise EndpointError(f"{self.url}: cannot connect ({e.reason}); check --endpoint") from e
        except (QueryBadFormed, Unauthorized, EndPointNotFound, URITooLong) as e:
            raise EndpointError(f"{self.url}: {str(e).splitlines()[0]}") from e
        try:
            return json.loads(body)["results"]["bindings"]
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError) as e:
            # A query cancelled after streaming began: HTTP 200 with a truncated body. Same as a timeout.
            self.stats.timeouts += 1
            raise QueryTimeout(f"{self.url}: truncated or malformed JSON answer ({type(e).__name__})") from e


def retry_after_seconds(header: str | None) -> float:
    """Seconds to wait for a 429: the Retry-After header (seconds or HTTP date), 60 s when absent."""
    if not header:
        return DEFAULT_RETRY_AFTER_S
    try:
        return max(0.0, float(header))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(header)
        except (TypeError, ValueError):
            return DEFAULT_RETRY_AFTER_S
        from datetime import UTC, datetime

        return max(0.0, (when - datetime.now(UTC)).total_seconds())


def make_endpoint(url: str | None, user_agent: str | None = None, sample: str | Path | None = None,
                  timeout_s: float = DEFAULT_CLIENT_TIMEOUT_S) -> SparqlEndpoint:
    if url is None or url == "embedded":
        return EmbeddedEndpoint(sample or SAMPLE_PATH)
    return HttpSparqlEndpoint(url, user_agent, timeout_s=timeout_s)
