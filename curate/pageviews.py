"""Popularity by page views (PopQA, Mallen et al. 2023): mean monthly views of a subject's articles.

- ``WikimediaPageviews``: the Wikimedia pageviews REST API, per article, monthly, ``all-access``, ``user``
  agent, over a fixed window of months (reruns give the same numbers), through the one HTTP policy
  (``factatlas.http``: deadlines, Retry-After on 429, back-off on faults, serial requests).
- ``PageViewTable``: a ``site<TAB>title<TAB>monthly_views`` table. The embedded sample ships
  ``curate/sample/page_views.tsv`` whose column is ``synthetic_monthly_views``: made-up values derived
  from sitelink counts, not measurements; the source is then named ``pageviews:sample-synthetic``.

Maintained clients exist (``pageviewapi``, ``mwviews``), but both call ``requests.get`` themselves with
no deadline and no hook for a transport (``mwviews`` in a pool of 10 threads; ``pageviewapi`` with its
own User-Agent and no Retry-After), so neither can go through ``factatlas.http``: this small client can.
"""

from __future__ import annotations

import calendar
import json
import random
import re
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from factatlas.curate.popularity import IndexedTable
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

PAGEVIEWS_URL = ("https://wikimedia.org/api/rest_v1/metrics/pageviews/per-article/{project}/all-access/user/"
                 "{article}/monthly/{start}/{end}")
DEFAULT_MONTHS = "2024-01:2024-12"
SAMPLE_PAGE_VIEWS = Path(__file__).resolve().parent / "sample" / "page_views.tsv"
SYNTHETIC_COLUMN = "synthetic_monthly_views"
_MONTH = re.compile(r"\A(\d{4})-(0[1-9]|1[0-2])\Z")


class PageviewsError(FactatlasError):
    pass


@dataclass(frozen=True)
class MonthWindow:
    """Whole months, first to last inclusive."""

    first: tuple[int, int]
    last: tuple[int, int]

    @classmethod
    def parse(cls, text: str) -> MonthWindow:
        """``2024-01:2024-12`` (or one month, ``2024-06``)."""
        parts = text.split(":")
        matches = [_MONTH.fullmatch(p.strip()) for p in parts]
        if len(parts) > 2 or not all(matches):
            raise ConfigError(f"--pageviews-months {text!r}: expected FIRST:LAST as YYYY-MM:YYYY-MM, e.g. "
                              f"{DEFAULT_MONTHS}")
        first, last = ((int(m.group(1)), int(m.group(2))) for m in (matches[0], matches[-1]))
        if last < first:
            raise ConfigError(f"--pageviews-months {text!r}: the last month is before the first")
        return cls(first, last)

    @property
    def months(self) -> int:
        return (self.last[0] - self.first[0]) * 12 + self.last[1] - self.first[1] + 1

    @property
    def start(self) -> str:
        return f"{self.first[0]}{self.first[1]:02d}0100"

    @property
    def end(self) -> str:
        y, m = self.last
        return f"{y}{m:02d}{calendar.monthrange(y, m)[1]:02d}00"


def article_path(title: str) -> str:
    """A title as the REST API wants it in the path: spaces as underscores, everything else escaped
    (a ``/`` in a title too)."""
    return quote(title.replace(" ", "_"), safe="")


class PageviewsClient:
    def __init__(self, user_agent: str, *, url: str = PAGEVIEWS_URL, policy: HttpPolicy | None = None,
                 sleeper: Callable[[float], None] = time.sleep, rng: random.Random | None = None):
        if not user_agent or not user_agent.strip():
            raise ConfigError("the Wikimedia pageviews API needs a User-Agent with contact information: pass "
                              "--user-agent 'factatlas/0.1 (https://your.site; you@example.org)'")
        if "{project}" not in url or "{article}" not in url:
            raise ConfigError(f"--pageviews-url {redact(url)!r}: needs {{project}} and {{article}} placeholders "
                              f"(and {{start}}, {{end}}), like {PAGEVIEWS_URL}")
        self.policy = policy or HttpPolicy(timeout_s=30.0)
        self.transport = Transport(self.policy, user_agent)
        self.url, self.sleep, self.rng = url, sleeper, rng
        self.requests = 0

    def monthly_views(self, site: str, title: str, window: MonthWindow) -> dict[str, int] | None:
        """timestamp (``YYYYMM0100``) -> views for the months of ``window`` the API has; None: no data (404)."""
        url = self.url.format(project=f"{site}.wikipedia", article=article_path(title), start=window.start,
                              end=window.end)
        try:
            return retrying(lambda: self._once(url), self.policy, sleeper=self.sleep, rng=self.rng)
        except (RateLimited, Transient, Unreachable) as e:
            raise PageviewsError(f"{e} (or use --popularity length, edits or sitelinks)") from e

    def _once(self, url: str) -> dict[str, int] | None:
        self.requests += 1
        response = self.transport.get(url)
        if response.status == 404:
            return None
        if response.status == 429:
            raise Throttled(f"pageviews API {redact(url)} asks to wait (HTTP 429)",
                            parse_retry_after(response.header("Retry-After")))
        if response.status >= 500:
            raise Transient(f"{redact(url)}: HTTP {response.status}")
        if response.status != 200:
            raise PageviewsError(f"{redact(url)}: HTTP {response.status}; check --pageviews-url and the title")
        try:
            items = json.loads(response.body)["items"]
            return {str(i["timestamp"]): int(i["views"]) for i in items}
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError) as e:
            raise Transient(f"{redact(url)}: malformed pageviews answer ({type(e).__name__})") from e


def mean_monthly(views: Mapping[str, int], window: MonthWindow) -> float:
    """Views per month over the whole window: a month the API does not list had no views."""
    return sum(views.values()) / window.months


class WikimediaPageviews:
    name = "pageviews:wikimedia"

    def __init__(self, client: PageviewsClient, window: MonthWindow):
        self.client, self.window = client, window
        self.missing = 0  # articles the API has no data for (left out, so scored 0 by the engine)

    def scores(self, site_titles: Mapping[str, Collection[str]]) -> dict[tuple[str, str], float]:
        out = {}
        for site in sorted(site_titles):
            for title in sorted(site_titles[site]):
                views = self.client.monthly_views(site, title, self.window)
                if views is None:
                    self.missing += 1
                    continue
                out[(site, title)] = mean_monthly(views, self.window)
        return out


class PageViewTable(IndexedTable):
    """Mean monthly views from a ``site<TAB>title<TAB>monthly_views`` table (or the sample's
    ``synthetic_monthly_views``), indexed and redirects followed as in ``PageLengthTable``."""

    def __init__(self, path: str | Path = SAMPLE_PAGE_VIEWS, redirects: str | Path | None = None):
        path = Path(path)
        if not path.exists():
            raise ConfigError(f"page-view table not found at {path}; it ships with the embedded sample "
                              "(curate/sample/page_views.tsv)")
        super().__init__(path, ("monthly_views", SYNTHETIC_COLUMN), "site<TAB>title<TAB>monthly_views", redirects)
        self.synthetic = self.column == SYNTHETIC_COLUMN
        self.name = "pageviews:sample-synthetic" if self.synthetic else "pageviews:table"
