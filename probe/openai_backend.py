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

HTTP policy (the project has no shared client yet; this is a small one): a thread pool of
``concurrency`` requests, an optional request-rate limit, and the project's one HTTP policy
(``factatlas.http``): a total deadline per request, retries on 408/409/5xx, cut bodies and resets with
jittered exponential back-off, 429 waits ``Retry-After`` (capped by ``max_wait``); a refused connection
is not retried. Every retry is counted by reason. The API
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
from factatlas.probe.chat import Message, Reply
from factatlas.probe.protocol import ClozeQuery

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
REMOTE_RULES = ("chat", "chat-lenient", "causal-mean", "causal-sum")


class RemoteError(FactatlasError):
    """A request that failed for good; the message names the URL, status and fix, never the key."""


@dataclass(frozen=True)
class EndpointConfig:
    base_url: str  # e.g. http://127.0.0.1:8000/v1
    model: str  # the name the server knows the model by
    api_key: str | None = field(default=None, repr=False)
    concurrency: int = 4
    max_retries: int = 5
    rate_limit: float | None = None  # requests per second, None: unlimited
    timeout: float = 120.0
    backoff: float = 0.5  # first wait; doubles per retry (with jitter), capped by max_wait
    max_wait: float = 60.0

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"--api-base {self.base_url!r}: expected an http(s) URL such as "
                              "http://127.0.0.1:8000/v1")
        if self.concurrency < 1 or self.max_retries < 0:
            raise ConfigError(f"--concurrency {self.concurrency} / --max-retries {self.max_retries}: expected "
                              "concurrency >= 1 and retries >= 0")


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
                 stats: Counter | None = None, stats_prefix: str = ""):
        from factatlas import __version__
        from factatlas.http import HttpPolicy, Transport

        self.config = config
        self.stats: Counter = Counter() if stats is None else stats  # the runner passes its own counts
        self._prefix = stats_prefix
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

    def _count(self, key: str) -> None:
        with self._lock:
            self.stats[self._prefix + key] += 1

    def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        from factatlas.http import Throttled, Transient, Unreachable, parse_retry_after, retrying

        url = self.config.base_url.rstrip("/") + path
        shown = redact(url, self.config.api_key)
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        attempts = 0

        def once() -> dict[str, Any]:
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
                raise RemoteError(f"{shown}: HTTP {response.status} after {attempts} attempt(s): {detail};{hint}")
            return json.loads(response.body.decode("utf-8"))

        def waited(_seconds: float, failure: Transient) -> None:
            reason = "http-429" if isinstance(failure, Throttled) else str(failure).split(":", 1)[0]
            self._count(f"retries/{reason}")

        try:
            return retrying(once, self.policy, sleeper=self._sleep, rng=self._rng, on_wait=waited)
        except Transient as e:
            what = str(e).split(": ", 1)[1] if ": " in str(e) else str(e)
            raise RemoteError(f"{what} after {attempts} attempt(s); is the server running at --api-base, "
                              "and is it healthy?") from None

    def map(self, fn: Callable[[Any], Any], items: Sequence[Any]) -> list[Any]:
        """``fn`` over ``items`` on ``concurrency`` threads, results in input order."""
        if self.config.concurrency == 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(self.config.concurrency) as pool:
            return list(pool.map(fn, items))


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
        answer = self.client.post("/chat/completions", body)
        try:
            text = answer["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError) as e:
            raise RemoteError(f"{self.client.config.base_url}/chat/completions: unexpected answer "
                              f"({e!r}): {str(answer)[:300]}") from None
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
        answer = self.client.post("/completions", body)
        url = f"{self.client.config.base_url}/completions"
        choices = sorted(answer.get("choices") or [], key=lambda c: c.get("index", 0))
        if len(choices) != len(seqs):
            raise RemoteError(f"{url}: {len(seqs)} prompts sent, {len(choices)} choices returned; the server "
                              "must accept a batch of token-id prompts (vLLM does)")
        scores = []
        for (ids, n), choice in zip(seqs, choices, strict=True):
            logprobs = (choice.get("logprobs") or {}).get("token_logprobs")
            if not logprobs or len(logprobs) < len(ids):
                raise RemoteError(f"{url}: the server returned no prompt log-probabilities for echo=true, "
                                  "logprobs=1 (transformers serve ignores both); use a server that does, "
                                  "e.g. vllm serve, or --scoring chat")
            values = [float(x) for x in logprobs[len(ids) - n: len(ids)]]
            scores.append(sum(values) / (len(values) if self.reduce == "mean" else 1))
        return tuple(scores)

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


def make_remote_scorer(lm: RemoteModel, scoring: str, client: OpenAIClient, max_new_tokens: int,
                       include_remainder: bool):
    if scoring in ("chat", "chat-lenient"):
        return OpenAIChat(client, max_new_tokens)
    if scoring in ("causal-mean", "causal-sum"):
        return OpenAILogprobScorer(client, lm.tokenizer, scoring.removeprefix("causal-"), include_remainder)
    raise ConfigError(f"--backend openai: scoring rule '{scoring}' is not served over HTTP; use one of "
                      f"{', '.join(REMOTE_RULES)}")
