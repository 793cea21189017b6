"""Answers of a server, kept as they arrive: a killed or failed probe resumes without paying twice.

Every answer an OpenAI-compatible server gives (``probe --backend openai``, ``judge --backend openai``)
is appended, the moment it is parsed and checked, as one JSON line to
``<run>/probe/_answers/<served-model>.jsonl``::

    {"answer": {...what the rule reads of the server's JSON...}, "key": "<sha256>",
     "server": "http://127.0.0.1:8000/v1/completions"}

The key is the SHA-256 of the request itself: the API path below ``--api-base`` (``/completions``,
``/chat/completions``) and the whole JSON body, which holds the model name, the messages or token ids and
every decoding option (temperature, max_tokens, echo, logprobs). Any change of those is another key. The
scheme, host and port are no part of it (a probe resumed against the same model on another port or host
reuses every answer), nor is any credential. Before a request is sent the store is asked; a kept answer
is checked again and reused, so a rerun with the same options sends nothing, and a probe killed after
250 of 256 requests sends the 6 missing ones.

Secrets never reach the file (the run folder is meant to be shared): the client keeps only what a rule
reads of an answer (a chat reply's text; a completion's prompt log-probabilities), never the server's
whole JSON, and ``put`` scrubs every string of the record, at any depth, of each credential the request
carried (``request_secrets``: the API key, its ``Authorization`` value, URL user and password, their
Basic value, key parameters of the URL), whether a server echoed it in the kept fields or elsewhere.

Crash safety: one ``write`` of a whole line to a file opened ``O_APPEND`` (lines of concurrent shard
processes never interleave), then ``fsync``. A kill can leave at most a torn last line: it does not
parse, is counted (``answers/unreadable-lines``) and skipped, and the next append starts on a fresh
line. Delete the folder to ask the server again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ANSWERS_FOLDER = "_answers"  # under <run>/probe/, beside _models (not a model folder: no rankings.parquet)


def request_key(path: str, body: Mapping[str, Any]) -> str:
    """The request's identity: its API path below ``--api-base`` (``/completions``) and its canonical JSON
    body; no scheme, host, port or credential (a server on another port answers the same)."""
    text = json.dumps({"body": body, "path": path}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_secrets(url: str, api_key: str | None) -> tuple[str, ...]:
    """Every credential a request to ``url`` with ``api_key`` carries, as the exact strings a server could
    echo: the key and its ``Bearer`` value, the URL's password (raw and percent-encoded) and the ``Basic``
    value of its user and password, and the values of key parameters in the query. Longest first, so that ``Bearer k`` is
    masked whole before ``k``."""
    import base64
    from urllib.parse import parse_qsl, quote, unquote, urlsplit

    from factatlas.http import SECRET_PARAMS

    found: set[str] = set()
    if api_key:
        found |= {api_key, f"Bearer {api_key}", quote(api_key, safe="")}
    parts = urlsplit(url)
    if parts.username is not None:
        user, password = unquote(parts.username), unquote(parts.password or "")
        pair = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        found |= {pair, f"Basic {pair}"}  # the user name alone is no secret (and may be a common word)
        if password:
            found |= {password, parts.password or ""}
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if value and any(name.lower() == p.lower() for p in SECRET_PARAMS):
            found |= {value, quote(value, safe="")}
    return tuple(sorted((s for s in found if s), key=lambda s: (-len(s), s)))


def scrub(value: Any, secrets: tuple[str, ...]) -> Any:
    """``value`` (JSON data) with every occurrence of each secret, in any string or key at any depth,
    replaced by ``***``."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "***")
        return value
    if isinstance(value, dict):
        return {scrub(k, secrets): scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v, secrets) for v in value]
    return value


def store_path(run_dir: str | os.PathLike, served_model: str) -> Path:
    from factatlas.probe.models import model_slug

    return Path(run_dir) / "probe" / ANSWERS_FOLDER / f"{model_slug(served_model)}.jsonl"


class AnswerStore:
    """Append-only answers by request key (one JSONL file); thread-safe, shared safely by processes."""

    def __init__(self, path: str | os.PathLike, stats: Counter | None = None, stats_prefix: str = ""):
        self.path = Path(path)
        self.stats: Counter = Counter() if stats is None else stats
        self._prefix = stats_prefix
        self._lock = threading.Lock()
        self._answers: dict[str, Any] | None = None  # loaded on first use
        self._fresh_line = False  # the file ends in a torn line: start the next append with a newline
        self.stored = 0  # answers appended by this process

    def _load(self) -> dict[str, Any]:
        if self._answers is not None:
            return self._answers
        answers: dict[str, Any] = {}
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                answers[record["key"]] = record["answer"]
            except (ValueError, KeyError, TypeError):  # a line torn by a kill, or not ours
                self.stats[self._prefix + "answers/unreadable-lines"] += 1
        self._fresh_line = bool(data) and not data.endswith(b"\n")
        self._answers = answers
        return answers

    def get(self, key: str, check: Callable[[Any], object] | None = None) -> Any | None:
        """The kept answer of ``key`` (None if none); ``check`` raising ValueError discards a kept answer."""
        with self._lock:
            answer = self._load().get(key)
        if answer is None:
            return None
        if check is not None:
            try:
                check(answer)
            except ValueError:
                with self._lock:
                    self.stats[self._prefix + "answers/kept-but-rejected"] += 1
                return None
        with self._lock:
            self.stats[self._prefix + "answers/reused"] += 1
        return answer

    def put(self, key: str, answer: Any, server: str, secrets: tuple[str, ...] = ()) -> None:
        """Append one answer (one write of one line, then fsync), scrubbed of ``secrets`` (the request's
        credentials, ``request_secrets``) wherever they occur; the crash tests can kill right after."""
        from factatlas.rundir import crash_point

        record = scrub({"answer": answer, "key": key, "server": server}, secrets)
        answer = record["answer"]
        line = json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
        with self._lock:
            self._load()
            data = (("\n" if self._fresh_line else "") + line).encode("utf-8")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            self._fresh_line = False
            assert self._answers is not None
            self._answers[key] = answer
            self.stored += 1
            self.stats[self._prefix + "answers/stored"] += 1
            crash_point(f"answers:stored-{self.stored}")
