"""Answers of a server, kept as they arrive: a killed or failed probe resumes without paying twice.

Every answer an OpenAI-compatible server gives (``probe --backend openai``, ``judge --backend openai``)
is appended, the moment it is parsed and checked, as one JSON line to
``<run>/probe/_answers/<served-model>.jsonl``::

    {"answer": {...the server's JSON...}, "key": "<sha256>", "server": "http://127.0.0.1:8000/v1/completions"}

The key is the SHA-256 of the request itself: the server's URL (credentials stripped) and the whole
JSON body, which holds the model name, the messages or token ids and every decoding option
(temperature, max_tokens, echo, logprobs). Any change of those is another key; the API key is no part
of it and is never written. Before a request is sent the store is asked; a kept answer is checked again
and reused, so a rerun with the same options sends nothing, and a probe killed after 250 of 256
requests sends the 6 missing ones.

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


def request_key(url: str, body: Mapping[str, Any]) -> str:
    """The request's identity: its URL without credentials and its canonical JSON body."""
    from factatlas.http import split_credentials

    clean, _ = split_credentials(url)
    text = json.dumps({"body": body, "url": clean}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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

    def put(self, key: str, answer: Any, server: str) -> None:
        """Append one answer (one write of one line, then fsync); the crash tests can kill right after."""
        from factatlas.rundir import crash_point

        line = json.dumps({"answer": answer, "key": key, "server": server}, ensure_ascii=False, sort_keys=True,
                          separators=(",", ":")) + "\n"
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
