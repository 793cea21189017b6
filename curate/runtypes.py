"""The records the curation modules share, in a module that imports none of them: the settings of one run
(``CurationConfig``) and a kept subject (``Candidate``). ``engine`` runs the steps of ``candidates`` and
``steps``, which take these types; holding them here keeps the import graph free of cycles (``engine`` and
``candidates`` still export them under their old names)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime

from factatlas.curate.cache import DEFAULT_BATCH
from factatlas.curate.config import parse_langs
from factatlas.curate.endpoints import DEFAULT_CLIENT_TIMEOUT_S
from factatlas.curate.life import DEFAULT_ALIVE_WITHIN_YEARS
from factatlas.curate.mediawiki import API_URL, REST_URL
from factatlas.curate.pageviews import DEFAULT_MONTHS, PAGEVIEWS_URL, MonthWindow
from factatlas.curate.popularity import MODES
from factatlas.errors import ConfigError, unknown
from factatlas.http import DEFAULT_MAX_RETRY_AFTER_S, HttpPolicy
from factatlas.options import number_problem
from factatlas.records import id_order


@dataclass(frozen=True)
class CurationConfig:
    pair: str
    langs: tuple[str, ...] = ("en",)
    endpoint: str | None = None  # None: the embedded sample; else a SPARQL endpoint URL
    user_agent: str | None = None
    sample: str | None = None  # another N-Triples file for the embedded endpoint
    max_subjects: int = 1000
    country_quota: int | None = None
    popularity: str = "length"  # length | edits | sitelinks | pageviews
    page_views: str | None = None  # TSV table of monthly views; default: the sample's (synthetic) when embedded
    pageviews_url: str = PAGEVIEWS_URL
    pageviews_months: str = DEFAULT_MONTHS  # FIRST:LAST, whole months (a fixed window: reruns agree)
    page_lengths: str | None = None  # TSV table; default: the sample's for the embedded endpoint
    mediawiki_api: str = API_URL
    mediawiki_rest: str = REST_URL
    predicates: tuple[str, ...] = ()  # empty: all of predicates.yaml
    predicates_file: str | None = None
    batch_size: int = DEFAULT_BATCH
    timeout_s: float = DEFAULT_CLIENT_TIMEOUT_S  # total deadline per HTTP request (--timeout)
    max_retry_after_s: float = DEFAULT_MAX_RETRY_AFTER_S  # longer Retry-After: stop (--max-retry-after)
    # life status (curate/life.py): a person born within `alive_within_years` of `reference_date` with no
    # death recorded is alive. "" = the day the run is curated (UTC), written into the resolved config.
    reference_date: str = ""
    alive_within_years: int = DEFAULT_ALIVE_WITHIN_YEARS

    def http_policy(self) -> HttpPolicy:
        return HttpPolicy(timeout_s=self.timeout_s, max_retry_after_s=self.max_retry_after_s)

    def validated(self) -> CurationConfig:
        langs = parse_langs(self.langs)
        if self.popularity not in MODES:
            raise ConfigError("--popularity: " + unknown("popularity mode", self.popularity, MODES))
        if self.popularity == "pageviews":
            MonthWindow.parse(self.pageviews_months)
        if self.max_subjects < 1:
            raise ConfigError(f"--max-subjects {self.max_subjects}: must be at least 1")
        if self.country_quota is not None and self.country_quota < 1:
            raise ConfigError(f"--country-quota {self.country_quota}: must be at least 1 (or omit it)")
        if self.batch_size < 1:
            raise ConfigError(f"batch size {self.batch_size}: must be at least 1")
        for flag, value, low in (("--timeout", self.timeout_s, {"above": 0}),
                                 ("--max-retry-after", self.max_retry_after_s, {"at_least": 0})):
            problem = number_problem(value, **low)  # NaN passed `< 0` and switched the Retry-After cap off
            if problem:
                raise ConfigError(f"{flag} {value}: {problem} (seconds)")
        if self.alive_within_years < 0:
            raise ConfigError(f"--alive-within-years {self.alive_within_years}: must be 0 or more")
        reference = self.reference_date or datetime.now(UTC).date().isoformat()
        try:
            date.fromisoformat(reference)
        except ValueError as e:
            raise ConfigError(f"--reference-date {reference!r}: expected a date YYYY-MM-DD") from e
        return CurationConfig(**{**asdict(self), "langs": langs, "predicates": tuple(self.predicates),
                                 "reference_date": reference})


@dataclass
class Candidate:
    qid: str
    countries: set[str] = field(default_factory=set)
    articles: set[tuple[str, str]] = field(default_factory=set)  # (site, title)
    popularity: float = 0.0


def first_country(c: Candidate) -> str:
    return min(c.countries, key=id_order) if c.countries else ""
