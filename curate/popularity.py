"""Popularity sources for step 2: score Wikipedia articles; a subject's popularity is the max over its
articles in the editions of the culture's countries it was matched through.

- ``PageLengthTable``: article byte lengths from a TSV shipped with the embedded sample.
- ``MediaWikiLengths`` / ``MediaWikiEdits``: the live MediaWiki API (``factatlas.curate.mediawiki``).
- sitelink counts come from SPARQL (``wikibase:sitelinks``) and need no source here.
"""

from __future__ import annotations

import csv
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Protocol

from factatlas.curate.mediawiki import MediaWikiClient
from factatlas.errors import ConfigError

MODES = ("length", "edits", "sitelinks", "pageviews")  # pageviews: factatlas.curate.pageviews
SAMPLE_PAGE_LENGTHS = Path(__file__).resolve().parent / "sample" / "page_lengths.tsv"


class PopularitySource(Protocol):
    name: str

    def scores(self, site_titles: Mapping[str, Collection[str]]) -> dict[tuple[str, str], float]:
        """(site, title) -> score for every title it knows (unknown/missing pages are left out)."""


class PageLengthTable:
    """Article lengths from a ``site<TAB>title<TAB>length`` table. Redirects (``site<TAB>from<TAB>to``) are
    followed like the live API does, from ``redirects`` or a ``redirects.tsv`` beside the table."""

    name = "length:table"

    def __init__(self, path: str | Path = SAMPLE_PAGE_LENGTHS, redirects: str | Path | None = None):
        self.path = Path(path)
        self.redirects = read_redirects(redirects or self.path.with_name("redirects.tsv"))
        if not self.path.exists():
            raise ConfigError(f"page-length table not found at {self.path}; it ships with the embedded "
                              "sample (curate/sample/page_lengths.tsv)")
        self.table: dict[tuple[str, str], float] = {}
        with open(self.path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            if reader.fieldnames is None or not {"site", "title", "length"} <= set(reader.fieldnames):
                raise ConfigError(f"{self.path}:1: expected the header 'site<TAB>title<TAB>length'")
            for n, row in enumerate(reader, start=2):
                try:
                    self.table[(row["site"], row["title"])] = float(row["length"])
                except (TypeError, ValueError) as e:
                    raise ConfigError(f"{self.path}:{n}: length {row.get('length')!r} is not a number") from e

    def scores(self, site_titles: Mapping[str, Collection[str]]) -> dict[tuple[str, str], float]:
        return table_scores(self.table, self.redirects, site_titles)


def table_scores(table: Mapping[tuple[str, str], float], redirects: Mapping[tuple[str, str], str],
                 site_titles: Mapping[str, Collection[str]]) -> dict[tuple[str, str], float]:
    """Each asked (site, title) with its value in a (site, title) table, redirects followed once."""
    out = {}
    for site, titles in site_titles.items():
        for title in titles:
            target = redirects.get((site, title), title)
            if (site, target) in table:
                out[(site, title)] = table[(site, target)]
    return out


def read_redirects(path: str | Path) -> dict[tuple[str, str], str]:
    """``site<TAB>from<TAB>to`` rows -> {(site, from): to}; a missing file means no redirects."""
    path = Path(path)
    if not path.exists():
        return {}
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        if reader.fieldnames is None or not {"site", "from", "to"} <= set(reader.fieldnames):
            raise ConfigError(f"{path}:1: expected the header 'site<TAB>from<TAB>to'")
        return {(r["site"], r["from"]): r["to"] for r in reader}


class MediaWikiLengths:
    name = "length:mediawiki"

    def __init__(self, client: MediaWikiClient):
        self.client = client

    def scores(self, site_titles: Mapping[str, Collection[str]]) -> dict[tuple[str, str], float]:
        out = {}
        for site in sorted(site_titles):
            for title, length in self.client.page_lengths(site, sorted(site_titles[site])).items():
                if length is not None:
                    out[(site, title)] = float(length)
        return out


class MediaWikiEdits:
    name = "edits:mediawiki"

    def __init__(self, client: MediaWikiClient):
        self.client = client

    def scores(self, site_titles: Mapping[str, Collection[str]]) -> dict[tuple[str, str], float]:
        out = {}
        for site in sorted(site_titles):
            for title, count in self.client.edit_counts(site, sorted(site_titles[site])).items():
                if count is not None:
                    out[(site, title)] = float(count)
        return out
