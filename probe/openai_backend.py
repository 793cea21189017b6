"""An OpenAI-compatible HTTP backend: models behind vLLM, llama.cpp, TGI, ``transformers serve`` or an API.

Two uses, both deterministic (temperature 0):
- ``chat`` / ``chat-lenient``: ``POST /v1/chat/completions`` with the conversation of ``probe.chat``; the
  server applies the model's chat template, so rankings record the messages (``rendered`` is null).
- ``causal-mean`` / ``causal-sum``: candidates scored by the log-probabilities the server reports for the
  *prompt* (``POST /v1/completions`` with ``echo: true, logprobs: 1``, as vLLM serves them). The prompt is
  sent as token ids, tokenized here exactly as the in-process causal scorer does (candidates in context,
  the model's BOS first), so the scores are the in-process scores up to floating-point noise. This needs
  the model's tokenizer (``--tokenizer``, default: the served model name) and a server that returns
  prompt log-probabilities (``transformers serve`` ignores ``echo``/``logprobs``: a clear error says so).

HTTP: a thread pool of ``concurrency`` requests, an optional request-rate limit, and the project's one
HTTP policy (``factatlas.http``): a total deadline per request (``--timeout``), retries on 408/409/5xx,
cut bodies, resets, bodies that are not JSON and JSON of the wrong shape, with jittered exponential
back-off; 429 waits ``Retry-After`` (capped by ``--max-retry-after``); a refused connection is not
retried. Every retry is counted by reason. Every answer is kept as it arrives
(``factatlas.probe.answer_store``), so a rerun sends only what was never answered. The API
key is read from an environment variable, sent only in the Authorization header, and replaced by
``***`` in every error message.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from factatlas.errors import ConfigError, FactatlasError
from factatlas.probe.answer_store import AnswerStore
from factatlas.probe.chat import Message, Reply
from factatlas.probe.options import Option, Options
from factatlas.probe.protocol import ClozeQuery

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
DEFAULT_TIMEOUT_S = 120.0  # a model's answer can take a while on a busy server
DEFAULT_MAX_RETRY_AFTER_S = 60.0


class RemoteError(FactatlasError):
    """A request that failed for good; the message names the URL, status and fix, never the key."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status  # the HTTP status of a refusal (None: no answer, or an answer of the wrong kind)


class _Stopped(Exception):
    """An item of ``OpenAIClient.map`` not sent because another failed first."""


class WrongShape(ValueError):
    """JSON that is not the answer the request expects (no ``choices``, no message, ...)."""


# the fix named after the last try, by the reason a try failed
FIXES = {
    "not-json": "the server at --api-base answers with something else than JSON (a cut body, or an HTML page "
                "from a proxy or a web server); check that --api-base is the OpenAI-compatible API's /v1 URL "
                "and that the server is healthy, then rerun (answers received so far are kept)",
    "wrong-shape": "the server at --api-base does not answer like an OpenAI-compatible API; check --api-base "
                   "(the /v1 URL of vLLM, llama.cpp, TGI, transformers serve, ...) and --served-model, then "
                   "rerun (answers received so far are kept)",
}


def _reason(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg}, byte {error.pos}"
    return f"{type(error).__name__}: {str(error)[:120]}"


def check_chat_answer(answer: Any) -> str:
    """The reply text of a chat completion answer; ``WrongShape`` if it has none."""
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as e:
        raise WrongShape(f"no choices[0].message.content: {type(e).__name__} {e}") from None
    if content is not None and not isinstance(content, str):
        raise WrongShape(f"choices[0].message.content is {type(content).__name__}, not text")
    return content or ""


def check_completion_answer(answer: Any) -> list[dict[str, Any]]:
    """The ``choices`` of a completion answer (objects with an ``index``); ``WrongShape`` otherwise."""
    choices = answer.get("choices") if isinstance(answer, dict) else None
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise WrongShape("no 'choices' list of objects")
    if not all(isinstance(c.get("index", 0), int) for c in choices):
        raise WrongShape("a choice's 'index' is not an integer")
    return choices


def kept_chat_answer(answer: Any) -> dict[str, Any]:
    """What the chat rules read of a chat completion: the reply text, in the answer's own shape."""
    return {"choices": [{"index": 0, "message": {"content": check_chat_answer(answer)}}]}


def kept_completion_answer(answer: Any) -> dict[str, Any]:
    """What log-probability scoring reads of a completion: each choice's index and prompt log-probabilities."""
    kept = []
    for choice in check_completion_answer(answer):
        logprobs = choice.get("logprobs")
        if isinstance(logprobs, dict):
            logprobs = {"token_logprobs": logprobs.get("token_logprobs")}
        kept.append({"index": choice.get("index", 0), "logprobs": logprobs})
    return {"choices": kept}


def _http_url(value: str) -> str:
    if not str(value).startswith(("http://", "https://")):
        raise ValueError("expected an http(s) URL such as http://127.0.0.1:8000/v1")
    return str(value)


@dataclass(frozen=True)
class OpenAIOptions(Options):
    """The options of ``--backend openai`` (the probe's and the judge's), each validated by its declaration."""

    api_base: str | None = Option("--api-base", None, "openai: the server's base URL, e.g. http://127.0.0.1:8000/v1.",
                                  parse=_http_url).field()
    served_model: str | None = Option("--served-model", None, "openai: the model name the server expects "
                                      "(default: the model given).").field()
    api_key_env: str | None = Option("--api-key-env", None, "openai: environment variable holding the API key (the "
                                     "key is never printed or written).").field()
    tokenizer: str | None = Option("--tokenizer", None, "openai causal-*: the served model's tokenizer folder or Hub "
                                   "id (default: --model).").field()
    concurrency: int = Option("--concurrency", 4, "openai: requests in flight.", cli_type=int, minimum=1).field()
    max_retries: int = Option("--max-retries", 5, "openai: retries on 429/5xx/connection errors.", cli_type=int,
                              minimum=0).field()
    rate_limit: float | None = Option("--rate-limit", None, "openai: at most this many requests per second.",
                                      cli_type=float, positive=True).field()
    timeout: float = Option("--timeout", DEFAULT_TIMEOUT_S, "openai: total deadline per HTTP request in seconds, "
                            "body included.", cli_type=float, positive=True).field()
    max_retry_after: float = Option("--max-retry-after", DEFAULT_MAX_RETRY_AFTER_S, "openai: wait at most this many "
                                    "seconds for a server's Retry-After; a longer one stops the run with the time "
                                    "to retry.", cli_type=float, minimum=0).field()

    def check(self) -> None:
        if not self.api_base:
            raise ConfigError("--backend openai needs --api-base, e.g. http://127.0.0.1:8000/v1")

    def endpoint(self, model: str) -> EndpointConfig:
        """The client's configuration for ``model`` (the served name, when given, wins), key from the environment."""
        assert self.api_base is not None
        return EndpointConfig(self.api_base, self.served_model or model, api_key_from_env(self.api_key_env),
                              concurrency=self.concurrency, max_retries=self.max_retries, rate_limit=self.rate_limit,
                              timeout=self.timeout, max_wait=self.max_retry_after)


@dataclass(frozen=True)
class EndpointConfig:
    base_url: str  # e.g. http://127.0.0.1:8000/v1
    model: str  # the name the server knows the model by
    api_key: str | None = field(default=None, repr=False)
    concurrency: int = 4
    max_retries: int = 5
    rate_limit: float | None = None  # requests per second, None: unlimited
    timeout: float = DEFAULT_TIMEOUT_S  # total deadline per request, body included (--timeout)
    backoff: float = 0.5  # first wait; doubles per retry (with jitter), capped by max_wait
    max_wait: float = DEFAULT_MAX_RETRY_AFTER_S  # longer Retry-After: stop with the time to retry (--max-retry-after)

    def __post_init__(self) -> None:  # the values follow the declarations of the options they come from
        OpenAIOptions(api_base=self.base_url, concurrency=self.concurrency, max_retries=self.max_retries,
                      rate_limit=self.rate_limit, timeout=self.timeout, max_retry_after=self.max_wait)


def api_key_from_env(name: str | None) -> str | None:
    """The key from the variable ``name`` (None: no key); a named but empty variable is an error."""
    if not name:
        return None
    key = os.environ.get(name)
    if not key:
        raise ConfigError(f"--api-key-env {name}: the environment variable is not set; export it, or pass "
                          "--api-key-env '' for a server without authentication")
    return key


def redact(text: str, secret: str | None) -> str:
    """``factatlas.http.redact`` (URL credentials, key parameters, Authorization values) plus the exact key."""
    from factatlas.http import redact as redact_known

    text = redact_known(text)
    return text.replace(secret, "***") if secret else text


class RateLimiter:
    """At most ``per_second`` request starts per second across threads (evenly spaced)."""

    def __init__(self, per_second: float | None):
        self.interval = 1.0 / per_second if per_second else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)


class OpenAIClient:
    """JSON POSTs under the project's one HTTP policy (``factatlas.http``: total deadline, Retry-After
    with a cap, jittered back-off), plus a concurrency pool and a rate limit; ``stats`` counts requests
    and retries by reason."""

    def __init__(self, config: EndpointConfig, sleep: Callable[[float], None] = time.sleep,
                 stats: Counter | None = None, stats_prefix: str = "", store: AnswerStore | None = None):
        from factatlas import __version__
        from factatlas.http import HttpPolicy, Transport

        self.config = config
        self.stats: Counter = Counter() if stats is None else stats  # the runner passes its own counts
        self._prefix = stats_prefix
        self.store = store  # answers kept as they arrive (probe.answer_store); None: nothing kept
        self._in_flight: dict[str, threading.Lock] = {}
        self._limiter = RateLimiter(config.rate_limit)
        self._sleep = sleep
        self._lock = threading.Lock()
        self._rng = random.Random(0)
        # waits: backoff, 2x backoff, 4x ... (+-20 %), capped by max_wait; a Retry-After past max_wait stops
        self.policy = HttpPolicy(timeout_s=config.timeout, max_retry_after_s=config.max_wait,
                                 default_retry_after_s=config.backoff, backoff_base_s=config.backoff,
                                 backoff_factor=2.0, backoff_max_s=config.max_wait, jitter=0.2,
                                 retries=config.max_retries, max_throttled=config.max_retries + 1)
        self._transport = Transport(self.policy, f"factatlas/{__version__}", connections=config.concurrency)
        from factatlas.probe.answer_store import request_secrets

        self.secrets = request_secrets(config.base_url, config.api_key)  # scrubbed from every kept answer

    def _count(self, key: str) -> None:
        with self._lock:
            self.stats[self._prefix + key] += 1

    def post(self, path: str, body: Mapping[str, Any], check: Callable[[Any], object] = lambda answer: None,
             keep: Callable[[Any], Any] = lambda answer: answer) -> Any:
        """What ``keep`` takes of the server's JSON answer to ``body`` at ``path`` (parsed and ``check``-ed
        inside the retry loop), scrubbed of the request's credentials.

        ``check`` raises ``WrongShape`` (a ValueError) for JSON that is not what the request expects. A body
        that is not JSON (cut, an HTML page) or JSON of the wrong shape is a transient fault like a 503:
        retried, and named with the fix after the last try. ``keep`` returns the part of a checked answer
        the caller reads (in the answer's own shape, so ``check`` accepts it too): that, never the whole
        answer with whatever a server echoed, is what is returned and kept. With a store, a kept answer
        is reused without sending, and each new answer is kept the moment it passed ``check``."""
        from factatlas.probe.answer_store import request_key, scrub

        url = self.config.base_url.rstrip("/") + path
        shown = redact(url, self.config.api_key)
        if self.store is None:
            return scrub(keep(self._send(url, shown, body, check)), self.secrets)
        key = request_key(path, body)
        with self._lock:  # one request per key in flight: a twin waits and reuses its answer
            flight = self._in_flight.setdefault(key, threading.Lock())
        with flight:
            kept = self.store.get(key, check)
            if kept is not None:
                return kept
            answer = scrub(keep(self._send(url, shown, body, check)), self.secrets)
            self.store.put(key, answer, shown, self.secrets)
            return answer

    def _send(self, url: str, shown: str, body: Mapping[str, Any], check: Callable[[Any], object]) -> Any:
        from factatlas.http import Throttled, Transient, Unreachable, parse_retry_after, retrying

        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        attempts = 0

        def once() -> Any:
            nonlocal attempts
            self._limiter.wait()
            self._count("requests")
            attempts += 1
            try:
                response = self._transport.request("POST", url, body=data, headers=headers)
            except Unreachable as e:
                raise RemoteError(f"{redact(str(e), self.config.api_key)}; is the server running at "
                                  "--api-base?") from None
            except Transient as e:
                raise Transient(f"connection: {redact(str(e), self.config.api_key)}") from None
            if response.status == 429:
                raise Throttled(f"{shown}: HTTP 429", parse_retry_after(response.header("Retry-After")))
            if response.status in RETRY_STATUS:
                raise Transient(f"http-{response.status}: {shown}: HTTP {response.status}")
            if response.status != 200:
                detail = redact(response.body.decode("utf-8", "replace")[:500], self.config.api_key)
                hint = (" check the API key (--api-key-env)" if response.status in (401, 403) else
                        " check --api-base, --served-model and what the server supports")
                raise RemoteError(f"{shown}: HTTP {response.status} after {attempts} attempt(s): {detail};{hint}",
                                  response.status)
            try:
                answer = json.loads(response.body.decode("utf-8"))
            except ValueError as e:  # JSONDecodeError and UnicodeDecodeError both
                raise Transient(f"not-json: {shown}: HTTP 200 but the body is not JSON ({_reason(e)}; "
                                f"{self._preview(response)})") from None
            try:
                check(answer)
            except ValueError as e:
                raise Transient(f"wrong-shape: {shown}: HTTP 200 but the JSON is not an OpenAI answer ({e}; "
                                f"{self._preview(response)})") from None
            return answer

        def waited(_seconds: float, failure: Transient) -> None:
            reason = "http-429" if isinstance(failure, Throttled) else str(failure).split(":", 1)[0]
            self._count(f"retries/{reason}")

        try:
            return retrying(once, self.policy, sleeper=self._sleep, rng=self._rng, on_wait=waited)
        except Transient as e:
            reason, _, what = str(e).partition(": ")
            fix = FIXES.get(reason, "is the server running at --api-base, and is it healthy?")
            raise RemoteError(f"{what or reason} after {attempts} attempt(s); {fix}") from None

    def _preview(self, response) -> str:
        """What came instead: content type, size and the first characters, key redacted."""
        text = response.body[:120].decode("utf-8", "replace").replace("\n", " ")
        kind = response.header("Content-Type") or "no Content-Type"
        return f"{kind}, {len(response.body)} bytes: {redact(text, self.config.api_key)!r}"

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        """``fn`` over ``items`` on ``concurrency`` threads, results in input order. The first failure
        cancels what has not started: no request is sent after the run is known to stop."""
        if self.config.concurrency == 1 or len(items) <= 1:
            return [fn(x) for x in items]
        failed = threading.Event()

        def guarded(item: Any) -> Any:
            if failed.is_set():  # a request that would start after the first failure is never sent
                raise _Stopped()
            try:
                return fn(item)
            except BaseException:
                failed.set()
                raise

        pool = ThreadPoolExecutor(self.config.concurrency)
        try:
            futures = [pool.submit(guarded, x) for x in items]
            errors = [f.exception() for f in futures]  # waits for every item (stopped ones end at once)
            first = next((e for e in errors if e is not None and not isinstance(e, _Stopped)), None)
            if first is not None:
                raise first
            return [f.result() for f in futures]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True)
class RemoteModel:
    """What the runner needs of a served model: a name, a family and (for log-prob scoring) a tokenizer."""

    name: str
    endpoint: EndpointConfig
    tokenizer: Any = None
    family: str = "causal"
    device: str = "remote"
    dtype: str = "remote"
    model: Any = None

    @property
    def slug(self) -> str:
        from factatlas.probe.models import model_slug

        return model_slug(self.name)


class OpenAIChat:
    """The ChatBackend of a server: one chat completion per conversation, greedy."""

    scoring = "chat"

    def __init__(self, client: OpenAIClient, max_new_tokens: int = 16):
        self.client, self.max_new_tokens = client, max_new_tokens

    def _one(self, messages: Sequence[Message]) -> Reply:
        body = {"model": self.client.config.model, "messages": list(messages), "temperature": 0,
                "max_tokens": self.max_new_tokens}
        text = check_chat_answer(self.client.post("/chat/completions", body, check_chat_answer, kept_chat_answer))
        return Reply(text, tuple(messages), None)

    def chat(self, conversations: Sequence[Sequence[Message]]) -> list[Reply]:
        return self.client.map(self._one, list(conversations))


class OpenAILogprobScorer:
    """CandidateScorer over a server's prompt log-probabilities (``echo`` + ``logprobs``).

    One request per query carries every candidate as its own token-id prompt; each candidate's score is
    the mean (or sum) of the log-probabilities the server reports at its tokens.
    """

    def __init__(self, client: OpenAIClient, tokenizer, reduce: str = "mean", include_remainder: bool = False):
        if reduce not in ("mean", "sum"):
            raise ValueError(f"unknown reduction '{reduce}'; expected mean or sum")
        if tokenizer is None:
            raise ConfigError("log-probability scoring over HTTP needs the model's tokenizer: pass --tokenizer "
                              "(a local folder or Hub id) matching the served model")
        self.client, self.tokenizer, self.reduce, self.include_remainder = client, tokenizer, reduce, include_remainder
        self.scoring = f"causal-{reduce}" + ("+remainder" if include_remainder else "")

    def _sequences(self, query_slots) -> list[tuple[list[int], int]]:
        from factatlas.probe.causal import context_start

        context = context_start(self.tokenizer, query_slots.prefix)
        out = []
        for cand in query_slots.candidates:
            cont = [*cand, *(query_slots.suffix if self.include_remainder else ())]
            out.append(([*context, *cont], len(cont)))
        return out

    def _score_one(self, seqs: list[tuple[list[int], int]]) -> tuple[float, ...]:
        body = {"model": self.client.config.model, "prompt": [ids for ids, _ in seqs], "max_tokens": 1,
                "temperature": 0, "echo": True, "logprobs": 1}
        try:
            answer = self.client.post("/completions", body, lambda a: self._scores(a, seqs), kept_completion_answer)
        except RemoteError as e:
            if e.status in (400, 404, 422):  # a server without token-id prompts or prompt log-probs says so here
                raise RemoteError(f"{self.client.config.base_url}/completions refused a token-id prompt with "
                                  f"echo=true, logprobs=1 ({e}): the server cannot give prompt log-probabilities, "
                                  f"which --scoring {self.scoring.split('+')[0]} needs (transformers serve cannot); "
                                  "use a server that does, e.g. vllm serve, or --scoring chat", e.status) from None
            raise
        return self._scores(answer, seqs)

    def _scores(self, answer: Any, seqs: list[tuple[list[int], int]]) -> tuple[float, ...]:
        """Each candidate's score from a completion answer. ``WrongShape`` (retried) for a malformed
        answer; ``RemoteError`` (final) for a well-formed one from a server that cannot do this."""
        url = f"{self.client.config.base_url}/completions"
        choices = sorted(check_completion_answer(answer), key=lambda c: c.get("index", 0))
        if len(choices) != len(seqs):
            raise RemoteError(f"{url}: {len(seqs)} prompts sent, {len(choices)} choices returned; the server "
                              "must accept a batch of token-id prompts (vLLM does)")
        scores = []
        for (ids, n), choice in zip(seqs, choices, strict=True):
            logprobs = choice.get("logprobs")
            if logprobs is not None and not isinstance(logprobs, dict):
                raise WrongShape(f"choices[{choice.get('index', 0)}].logprobs is {type(logprobs).__name__}")
            values = (logprobs or {}).get("token_logprobs")
            if not values or len(values) < len(ids):
                raise RemoteError(f"{url}: the server returned no prompt log-probabilities for echo=true, "
                                  "logprobs=1 (transformers serve ignores both); use a server that does, "
                                  "e.g. vllm serve, or --scoring chat")
            picked = values[len(ids) - n: len(ids)]
            if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in picked):
                raise WrongShape(f"choices[{choice.get('index', 0)}].logprobs.token_logprobs holds non-numbers")
            scores.append(sum(picked) / (len(picked) if self.reduce == "mean" else 1))
        return tuple(float(x) for x in scores)

    def score(self, queries: Sequence[ClozeQuery]) -> list[tuple[float, ...]]:
        from factatlas.probe.slots import tokenize_slots

        seqs = [self._sequences(s) for s in tokenize_slots(self.tokenizer, queries)]
        return self.client.map(self._score_one, seqs)


def remote_model(name: str, endpoint: EndpointConfig, tokenizer_name: str | None, needs_tokenizer: bool
                 ) -> RemoteModel:
    tokenizer = None
    if needs_tokenizer:
        from transformers import AutoTokenizer

        source = tokenizer_name or name
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
        except (OSError, ValueError) as e:
            raise ConfigError(f"--tokenizer {source}: cannot load it ({e}); pass the served model's tokenizer "
                              "as a local folder or a cached Hub id") from e
    return RemoteModel(name, endpoint, tokenizer)
