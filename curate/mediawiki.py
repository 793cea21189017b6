"""A polite MediaWiki API client: article lengths (``prop=info``) and edit counts (REST).

Etiquette (WIKIDATA.md): descriptive User-Agent, serial requests, 50 titles per ``prop=info`` request,
``maxlag=5`` (on a ``maxlag`` error wait ``Retry-After`` and retry), redirects and normalized titles
followed, ``continue`` handled.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import quote

from factatlas.errors import ConfigError, FactatlasError

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
    def __init__(self, user_agent: str, *, api_url: str = API_URL, rest_url: str = REST_URL, session=None,
                 sleeper: Callable[[float], None] = time.sleep, max_retries: int = 5, timeout_s: float = 30.0):
        if not user_agent or not user_agent.strip():
            raise ConfigError("the MediaWiki API needs a User-Agent with contact information: pass "
                              "--user-agent 'factatlas/0.1 (https://your.site; you@example.org)'")
        if "{site}" not in api_url or "{site}" not in rest_url:
            raise ConfigError(f"MediaWiki URL templates need a {{site}} placeholder: {api_url!r}, {rest_url!r}")
        import requests

        self.session = session or requests.Session()
        self.session.headers["User-Agent"] = user_agent
        self.api_url, self.rest_url = api_url, rest_url
        self.sleep = sleeper
        self.max_retries = max_retries
        self.timeout_s = timeout_s
        self.stats = MediaWikiStats()

    def _get(self, url: str, params: dict | None = None) -> tuple[int, dict]:
        """One serial GET; waits and retries on maxlag / 429 / 503 with Retry-After."""
        for _attempt in range(self.max_retries + 1):
            self.stats.requests += 1
            response = self.session.get(url, params=params, timeout=self.timeout_s)
            retry_after = response.headers.get("Retry-After")
            data: dict = {}
            if response.headers.get("Content-Type", "").startswith("application/json"):
                data = response.json()
            lagged = isinstance(data.get("error"), dict) and data["error"].get("code") == "maxlag"
            if lagged or response.status_code in (429, 503):
                wait = float(retry_after) if retry_after and retry_after.strip().isdigit() else float(MAX_LAG_S)
                self.stats.maxlag_waits += 1
                self.stats.waited_s += wait
                log.warning("MediaWiki %s asks to wait %.0f s (%s)", url, wait,
                            "maxlag" if lagged else response.status_code)
                self.sleep(wait)
                continue
            if "error" in data:
                raise MediaWikiError(f"{url}: {data['error']}")
            return response.status_code, data
        raise MediaWikiError(f"{url}: still lagged/throttled after {self.max_retries} retries; rerun later")

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
