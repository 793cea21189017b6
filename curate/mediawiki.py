"""A polite MediaWiki API client: article lengths (``prop=info``) and edit counts (REST).

Etiquette (WIKIDATA.md): descriptive User-Agent, serial requests, 50 titles per ``prop=info`` request,
``maxlag=5`` (on a ``maxlag`` error wait ``Retry-After`` and retry), redirects and normalized titles
followed, ``continue`` handled. Deadlines, waits and retries follow the one HTTP policy (``factatlas.http``).
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from urllib.parse import quote

from factatlas.errors import ConfigError, FactatlasError
from factatlas.http import (
    HttpPolicy,
    RateLimited,
    Throttled,
    Transient,
    Transport,
    Unreachable,
    parse_retry_after,
    redact,
    retrying,
)

log = logging.getLogger(__name__)

API_URL = "https://{site}.wikipedia.org/w/api.php"
REST_URL = "https://{site}.wikipedia.org/w/rest.php"
TITLES_PER_REQUEST = 50
MAX_LAG_S = 5


class MediaWikiError(FactatlasError):
    pass


@dataclass
class MediaWikiStats:
    requests: int = 0
    maxlag_waits: int = 0
    waited_s: float = 0.0


class MediaWikiClient:
    def __init__(self, user_agent: str, *, api_url: str = API_URL, rest_url: str = REST_URL,
                 sleeper: Callable[[float], None] = time.sleep, max_retries: int = 5,
                 timeout_s: float | None = None, policy: HttpPolicy | None = None, rng: random.Random | None = None):
        if not user_agent or not user_agent.strip():
            raise ConfigError("the MediaWiki API needs a User-Agent with contact information: pass "
                              "--user-agent 'factatlas/0.1 (https://your.site; you@example.org)'")
        if "{site}" not in api_url or "{site}" not in rest_url:
            raise ConfigError(f"MediaWiki URL templates need a {{site}} placeholder: {redact(api_url)!r}, "
                              f"{redact(rest_url)!r}")
        # a maxlag answer is a throttle: ``max_retries`` waits, then the run stops
        policy = replace(policy or HttpPolicy(timeout_s=30.0), max_throttled=max_retries + 1)
        if timeout_s is not None:
            policy = replace(policy, timeout_s=timeout_s)
        self.policy = policy
        self.transport = Transport(policy, user_agent)
        self.api_url, self.rest_url = api_url, rest_url
        self.sleep = sleeper
        self.rng = rng
        self.stats = MediaWikiStats()

    def _get(self, url: str, params: dict | None = None) -> tuple[int, dict]:
        """One serial GET under the HTTP policy: maxlag / 429 / 503 wait Retry-After, faults back off."""

        def waited(seconds: float, _why: Exception) -> None:
            self.stats.maxlag_waits += 1
            self.stats.waited_s += seconds

        try:
            return retrying(lambda: self._once(url, params), self.policy, sleeper=self.sleep, rng=self.rng,
                            on_wait=waited)
        except (RateLimited, Transient, Unreachable) as e:
            raise MediaWikiError(f"{e} (or use --popularity sitelinks)") from e

    def _once(self, url: str, params: dict | None) -> tuple[int, dict]:
        self.stats.requests += 1
        response = self.transport.get(url, params)
        data: dict = {}
        if (response.header("Content-Type") or "").startswith("application/json"):
            try:
                data = json.loads(response.body)
            except (json.JSONDecodeError, UnicodeDecodeError) as e:
                raise Transient(f"{response.url}: malformed JSON answer ({type(e).__name__})") from e
        lagged = isinstance(data.get("error"), dict) and data["error"].get("code") == "maxlag"
        if lagged or response.status in (429, 503):
            why = "maxlag" if lagged else f"HTTP {response.status}"
            wait = parse_retry_after(response.header("Retry-After"))
            raise Throttled(f"MediaWiki {redact(url)} asks to wait ({why})",
                            float(MAX_LAG_S) if wait is None else wait)
        if response.status >= 500:
            raise Transient(f"{response.url}: HTTP {response.status}")
        if "error" in data:
            raise MediaWikiError(redact(f"{response.url}: {data['error']}"))
        return response.status, data

    def page_lengths(self, site: str, titles: Iterable[str]) -> dict[str, int | None]:
        """Article byte length per requested title (None when the page is missing)."""
        titles = list(dict.fromkeys(titles))
        out: dict[str, int | None] = {}
        for i in range(0, len(titles), TITLES_PER_REQUEST):
            chunk = titles[i:i + TITLES_PER_REQUEST]
            out.update(self._lengths_chunk(site, chunk))
        return out

    def _lengths_chunk(self, site: str, titles: list[str]) -> dict[str, int | None]:
        params = {"action": "query", "prop": "info", "titles": "|".join(titles), "format": "json",
                  "formatversion": "2", "redirects": "1", "maxlag": str(MAX_LAG_S)}
        normalized: dict[str, str] = {}
        redirects: dict[str, str] = {}
        lengths: dict[str, int | None] = {}
        cont: dict = {}
        while True:
            _, data = self._get(self.api_url.format(site=site), {**params, **cont})
            query = data.get("query", {})
            normalized.update({n["from"]: n["to"] for n in query.get("normalized", [])})
            redirects.update({r["from"]: r["to"] for r in query.get("redirects", [])})
            for page in query.get("pages", []):
                lengths[page["title"]] = None if page.get("missing") or page.get("invalid") else page.get("length")
            if "continue" not in data:
                break
            cont = data["continue"]
        out = {}
        for t in titles:
            title = normalized.get(t, t)
            seen = set()
            while title in redirects and title not in seen:
                seen.add(title)
                title = redirects[title]
            out[t] = lengths.get(title)
        return out

    def edit_counts(self, site: str, titles: Iterable[str]) -> dict[str, int | None]:
        """Edit count per title (REST ``history/counts/edits``; one page per request, capped upstream)."""
        out: dict[str, int | None] = {}
        for t in dict.fromkeys(titles):
            url = self.rest_url.format(site=site) + f"/v1/page/{quote(t.replace(' ', '_'), safe='')}" \
                "/history/counts/edits"
            status, data = self._get(url)
            out[t] = int(data["count"]) if status == 200 and "count" in data else None
        return out
