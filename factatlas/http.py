"""One HTTP policy for every client of the project (SPARQL, MediaWiki, UniMorph downloads).

- ``HttpPolicy``: the total deadline per request (connect, headers *and* the whole body: a server that
  drips its answer in pieces cannot hold a request past it), the Retry-After cap, exponential back-off
  with jitter, and how many times a transient failure or a throttle answer is retried.
- ``Transport``: one request under that deadline (urllib3, no hidden retries, no redirects to another
  host's credentials). Network faults become ``Transient`` errors that name the real cause (a reset,
  a body cut short, a garbage status line, the deadline), never a generic "no answer".
- ``retrying``: *the* retry loop. ``Throttled`` (HTTP 429, MediaWiki maxlag) waits Retry-After (seconds
  or an HTTP date), capped; past the cap the run stops with the time to retry in the message.
  ``Transient`` waits the back-off. Batch halving is not here: it is the query runner's own step.
- ``redact``: credentials in URLs (``user:password@``), known key parameters and Authorization values
  become ``***``; ``RedactingFilter`` applies it to every log record (installed by the CLI).
"""

from __future__ import annotations

import base64
import logging
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit, urlunsplit

from factatlas.errors import FactatlasError

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 65.0  # a little above the 60 s deadline of the public WDQS
DEFAULT_MAX_RETRY_AFTER_S = 600.0
DEFAULT_RETRY_AFTER_S = 60.0  # Wikimedia's advice when a 429 carries no Retry-After
READ_CHUNK = 64 * 1024


# ---- errors -------------------------------------------------------------------------------------


class Transient(FactatlasError):
    """The request failed in a way that may pass on a later try (timeout, reset, broken answer, 5xx)."""


class Throttled(Transient):
    """The server asks us to slow down (HTTP 429, MediaWiki maxlag); ``retry_after_s`` from its header."""

    def __init__(self, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class RateLimited(FactatlasError):
    """The server kept throttling us; we stop instead of getting the agent banned."""


class RetryTooLate(FactatlasError):
    """The server asked us to come back later than the policy allows waiting."""


class Unreachable(FactatlasError):
    """Nothing answers at the address (refused, unknown host, TLS failure): not retryable."""


# ---- the policy ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class HttpPolicy:
    timeout_s: float = DEFAULT_TIMEOUT_S  # total deadline per request, body included
    max_retry_after_s: float = DEFAULT_MAX_RETRY_AFTER_S  # longer Retry-After: stop with the time to retry
    default_retry_after_s: float = DEFAULT_RETRY_AFTER_S
    backoff_base_s: float = 5.0  # waits 5, 15, 45 s (WIKIDATA.md)
    backoff_factor: float = 3.0
    backoff_max_s: float = 300.0
    jitter: float = 0.1  # each back-off is scaled by a factor drawn from [1 - jitter, 1 + jitter]
    retries: int = 3  # retries of a transient failure before giving up
    max_throttled: int = 3  # throttle answers in a row before giving up

    def __post_init__(self) -> None:
        from factatlas.options import number_problem

        for flag, value, low in (("--timeout", self.timeout_s, {"above": 0}),
                                 ("--max-retry-after", self.max_retry_after_s, {"at_least": 0})):
            problem = number_problem(value, **low)  # NaN passed `< 0`: no cap on Retry-After at all
            if problem:
                raise FactatlasError(f"{flag} {value}: {problem} (seconds)")
        if not 0 <= self.jitter < 1:
            raise FactatlasError(f"back-off jitter {self.jitter}: must be in [0, 1)")

    def backoff_s(self, attempt: int, rng: random.Random) -> float:
        """The wait before retry number ``attempt + 1`` of a transient failure."""
        base = min(self.backoff_max_s, self.backoff_base_s * self.backoff_factor ** attempt)
        if not self.jitter:
            return base
        return round(base * rng.uniform(1 - self.jitter, 1 + self.jitter), 3)

    def throttle_wait_s(self, retry_after_s: float | None, where: str, now: datetime | None = None) -> float:
        """The wait a throttle answer asks for, or ``RetryTooLate`` when it is past the cap."""
        wait = self.default_retry_after_s if retry_after_s is None else retry_after_s
        if wait > self.max_retry_after_s:
            at = (now or datetime.now(UTC)) + timedelta(seconds=wait)
            raise RetryTooLate(f"{where} asks to retry in {wait:.0f} s (at {at.isoformat(timespec='seconds')}), "
                               f"longer than --max-retry-after {self.max_retry_after_s:g} s; rerun after that "
                               "time (cached answers are kept) or raise --max-retry-after")
        return wait


def parse_retry_after(header: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a Retry-After value: delta-seconds or an HTTP date; None when absent or unreadable."""
    if header is None or not header.strip():
        return None
    value = header.strip()
    if value.isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        log.warning("unreadable Retry-After %r; using the default wait", value)
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def retrying(call: Callable[[], T], policy: HttpPolicy, *, sleeper: Callable[[float], None] = time.sleep,
             rng: random.Random | None = None, retries: int | None = None,
             on_wait: Callable[[float, Transient], None] | None = None) -> T:
    """Call ``call`` until it returns: throttle answers wait Retry-After (capped), transient failures
    wait the back-off; ``retries`` overrides the policy's count of transient retries (0: fail at once,
    for a caller that has a better next step, like halving a batch)."""
    rng = rng or random.Random()
    limit = policy.retries if retries is None else retries
    transient = throttled = 0
    while True:
        try:
            return call()
        except Throttled as e:
            throttled += 1
            if throttled >= policy.max_throttled:
                raise RateLimited(f"{e} {throttled} times in a row; stopping to respect the rate limit. "
                                  "Rerun later") from e
            wait, failure = policy.throttle_wait_s(e.retry_after_s, str(e)), e
        except Transient as e:
            if transient >= limit:
                raise
            wait, failure = policy.backoff_s(transient, rng), e
            transient += 1
        log.warning("%s; retrying in %.1f s", failure, wait)
        if on_wait:
            on_wait(wait, failure)
        sleeper(wait)


# ---- secrets ------------------------------------------------------------------------------------

SECRET_PARAMS = ("key", "api_key", "apikey", "token", "access_token", "auth", "password", "passwd", "secret",
                 "client_secret", "sig", "signature")
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@'\"<>]+@")
_PARAM = re.compile(r"(?P<name>(?:^|[?&;\s\"'{,])(?:" + "|".join(SECRET_PARAMS)
                    + r")[\"']?\s*[=:]\s*[\"']?)[^&;\s\"',}]+", re.IGNORECASE)
_AUTH_VALUE = re.compile(r"(?P<scheme>\b(?:Basic|Bearer|Token|Digest)\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
_HF_TOKEN = re.compile(r"\bhf_[A-Za-z0-9]{8,}")


def redact(text: str, secrets: Sequence[str | None] = ()) -> str:
    """``text`` with the given ``secrets`` (exact values: a token, an API key), URL credentials, key
    parameters, Authorization values and anything shaped like a Hub token masked as ``***``. The one
    redaction of the toolkit: HTTP logs, curation, the OpenAI backend and the publishers use it."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    text = _USERINFO.sub(r"\g<scheme>***@", text)
    text = _PARAM.sub(r"\g<name>***", text)
    text = _AUTH_VALUE.sub(r"\g<scheme>***", text)
    return _HF_TOKEN.sub("hf_***", text)


class RedactingFilter(logging.Filter):
    """Masks secrets in every record that passes a handler, whoever logged it (urllib3, our clients)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and record.exc_info[1] is not None:
            # tracebacks are formatted later from exc_info: keep the text, masked
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def split_credentials(url: str) -> tuple[str, dict[str, str]]:
    """``http://user:pw@host/x`` -> (``http://host/x``, {Authorization: Basic ...}); others unchanged."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, {}
    from urllib.parse import unquote

    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}


# ---- one request under the deadline -------------------------------------------------------------


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    headers: Mapping[str, str]  # lower-case names
    body: bytes
    url: str  # redacted

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


class Transport:
    """Requests under ``policy.timeout_s`` in total; network faults raise ``Transient`` with their cause."""

    def __init__(self, policy: HttpPolicy, user_agent: str, *, clock: Callable[[], float] = time.monotonic,
                 connections: int = 1):
        import urllib3

        self.policy = policy
        self.user_agent = user_agent
        self.clock = clock
        # ``connections``: kept-alive connections per host, one per concurrent caller
        self._pool = urllib3.PoolManager(retries=False, maxsize=connections)

    def get(self, url: str, params: Mapping[str, str] | None = None,
            headers: Mapping[str, str] | None = None) -> Response:
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params)
        return self.request("GET", url, headers=headers)

    def request(self, method: str, url: str, *, body: bytes | None = None,
                headers: Mapping[str, str] | None = None) -> Response:
        with self.stream(method, url, body=body, headers=headers) as answer:
            data = b"".join(answer.chunks())
            return Response(answer.status, answer.reason, answer.headers, data, answer.url)

    @contextmanager
    def stream(self, method: str, url: str, *, body: bytes | None = None,
               headers: Mapping[str, str] | None = None) -> Iterator[Streamed]:
        """``request`` with the body read by the caller, chunk by chunk (``Streamed.chunks``), so that a large
        answer need not be held whole; the same deadline over the whole exchange, the same errors."""
        import urllib3

        clean, auth = split_credentials(url)
        shown = redact(urlunsplit(urlsplit(url)[:3] + ("", "")))  # the query string can be a whole SPARQL query
        sent = {"User-Agent": self.user_agent, **auth, **(headers or {})}
        answer = Streamed(0, "", {}, shown, self.clock(), self.policy.timeout_s, self.clock)
        with answer.faults():
            response = self._pool.request(method, clean, body=body, headers=sent, preload_content=False,
                                          redirect=False, timeout=urllib3.Timeout(total=self.policy.timeout_s))
        answer.response = response
        answer.status, answer.reason = response.status, response.reason or ""
        answer.headers = {k.lower(): v for k, v in response.headers.items()}
        try:
            yield answer
        finally:
            response.release_conn()
        log.debug("%s %s -> HTTP %s, %d bytes in %.2f s; headers %s", method, shown, answer.status, answer.received,
                  self.clock() - answer.start, answer.headers)


@dataclass
class Streamed:
    """An answer whose body is still on the wire: status and headers now, the body from ``chunks()``."""

    status: int
    reason: str
    headers: dict[str, str]  # lower-case names
    url: str  # redacted
    start: float
    timeout_s: float
    clock: Callable[[], float]
    received: int = 0
    response: Any = None

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def chunks(self) -> Iterator[bytes]:
        """The body's pieces as they arrive, under what is left of the deadline."""
        deadline = self.start + self.timeout_s
        while True:
            with self.faults():
                remaining = deadline - self.clock()
                if remaining <= 0:
                    raise Transient(f"{self.url}: the answer did not complete within the {self.timeout_s:g} s "
                                    f"deadline ({self.received} bytes received); raise --timeout if the server is slow")
                _set_socket_timeout(self.response, remaining)
                chunk = self.response.read1(READ_CHUNK)
            if not chunk:
                return
            self.received += len(chunk)
            yield chunk

    @contextmanager
    def faults(self) -> Iterator[None]:
        """Network faults as ``Unreachable`` (cannot connect, TLS) or ``Transient`` naming the cause."""
        import http.client

        from urllib3.exceptions import HTTPError, NewConnectionError, ProtocolError, SSLError, TimeoutError

        try:
            yield
        except Transient:
            raise
        except NewConnectionError as e:  # before TimeoutError: urllib3 derives it from ConnectTimeoutError
            raise Unreachable(f"{self.url}: cannot connect ({_cause(e)}); check the URL") from e
        except SSLError as e:
            raise Unreachable(f"{self.url}: TLS failed ({_cause(e)})") from e
        except TimeoutError as e:
            raise Transient(f"{self.url}: the answer did not complete within the {self.timeout_s:g} s "
                            f"deadline ({self.received} bytes received); raise --timeout if the server is slow") from e
        except (ProtocolError, HTTPError, http.client.HTTPException, OSError) as e:
            elapsed = self.clock() - self.start
            cause = _cause(e)
            response = self.response
            if response is not None and cause.startswith("body cut short"):
                if "chunked" in (response.headers.get("Transfer-Encoding") or "").lower():
                    cause = "chunked body cut mid-stream (IncompleteRead)"
                elif response.headers.get("Content-Length"):
                    cause = (f"body cut short: {self.received} of {response.headers['Content-Length']} bytes "
                             "(IncompleteRead)")
            raise Transient(f"{self.url}: {cause} after {elapsed:.1f} s ({self.received} bytes received)") from e


def _set_socket_timeout(response, seconds: float) -> None:
    """Bound the next socket read by what is left of the deadline (urllib3 sets a per-read timeout only)."""
    # http.client drops the connection's socket once it knows the server will close, so reach the
    # socket through the response's file (urllib3 and http.client offer no public handle on it)
    raw = getattr(getattr(getattr(response, "_fp", None), "fp", None), "raw", None)
    sock = getattr(raw, "_sock", None) or getattr(getattr(response, "connection", None), "sock", None)
    if sock is not None:
        sock.settimeout(max(0.001, seconds))


def _cause(error: BaseException) -> str:
    """The real cause in words: a reset, a body cut short, a garbage status line, ..."""
    import http.client

    chain: list[BaseException] = []
    seen: BaseException | None = error
    while seen is not None and all(seen is not x for x in chain):
        chain.append(seen)
        inner = next((a for a in getattr(seen, "args", ()) if isinstance(a, BaseException)), None)
        seen = inner or seen.__cause__ or seen.__context__
    for e in chain:
        if isinstance(e, ConnectionResetError):
            return "connection reset by the server"
        if isinstance(e, http.client.RemoteDisconnected):
            return "the server closed the connection without answering"
        if type(e).__name__ == "InvalidChunkLength":
            return f"chunked body cut mid-stream ({type(e).__name__})"
        if isinstance(e, http.client.IncompleteRead):
            return f"body cut short (IncompleteRead: {e!r})"
        if isinstance(e, http.client.BadStatusLine):
            return f"garbage status line ({type(e).__name__}: {str(e)[:80]!r})"
    inner = chain[-1]
    return f"{type(inner).__name__}: {str(inner)[:200]}"
