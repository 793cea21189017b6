"""Popularity sources for step 2: score Wikipedia articles; a subject's popularity is the max over its
articles in the editions of the culture's countries it was matched through.

- ``PageLengthTable``: article byte lengths from a TSV shipped with the embedded sample, indexed on disk
  (``IndexedTable``) and read back per batch of titles, never held whole.
- ``MediaWikiLengths`` / ``MediaWikiEdits``: the live MediaWiki API (``factatlas.curate.mediawiki``).
- sitelink counts come from SPARQL (``wikibase:sitelinks``) and need no source here.
"""

from __future__ import annotations

import csv
import errno
import itertools
import os
import sqlite3
import tempfile
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from factatlas.curate.mediawiki import MediaWikiClient
from factatlas.errors import ConfigError, WriteFailed

MODES = ("length", "edits", "sitelinks", "pageviews")  # pageviews: factatlas.curate.pageviews
SAMPLE_PAGE_LENGTHS = Path(__file__).resolve().parent / "sample" / "page_lengths.tsv"


class PopularitySource(Protocol):
    name: str

    def scores(self, site_titles: Mapping[str, Collection[str]]) -> dict[tuple[str, str], float]:
        """(site, title) -> score for every title it knows (unknown/missing pages are left out)."""


class IndexedTable:
    """A ``site<TAB>title<TAB><number>`` table and its redirects (``site<TAB>from<TAB>to``), streamed once into
    SQLite's private temporary database (a file SQLite removes when the table is closed or collected), indexed
    by (site, title); ``scores`` reads back only the titles it is asked for. So the client never holds the
    table: a table of every article of every edition costs a small page cache (``CACHE_KB``), not a dict of
    millions of titles (about 0.3 KB each). Every row is checked as it is indexed, so a bad number is refused
    when the table is opened (in the dry run too), with its line."""

    CACHE_KB = 4_000  # SQLite's page cache for the index; the rest stays in its temporary file
    INSERT_CHUNK = 2_000  # rows indexed per ``executemany``: what the reader holds at once
    LOOKUP_CHUNK = 500  # titles per lookup query (SQLite allows 32,766 parameters)

    def __init__(self, path: Path, columns: Sequence[str], header: str, redirects: str | Path | None):
        """``columns``: the accepted names of the number's column, the first present is read; ``header``: the
        header named when none is."""
        self.path = path
        self.rows_read = 0  # table rows read back by ``scores``: what a lookup costs, not the table's size
        self.db = sqlite3.connect("", isolation_level=None)
        self.db.executescript(
            f"PRAGMA cache_size=-{self.CACHE_KB}; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
            "CREATE TABLE value (site TEXT, title TEXT, v REAL, PRIMARY KEY (site, title)) WITHOUT ROWID;"
            "CREATE TABLE redirect (site TEXT, src TEXT, dst TEXT, PRIMARY KEY (site, src)) WITHOUT ROWID;")
        self.db.execute("BEGIN")
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            fields = set(reader.fieldnames or ())
            self.column = next((c for c in columns if c in fields), None)
            if not {"site", "title"} <= fields or self.column is None:
                raise ConfigError(f"{path}:1: expected the header '{header}'")
            self._index("INSERT OR REPLACE INTO value VALUES (?, ?, ?)", self._numbers(reader))
        redirects = Path(redirects or path.with_name("redirects.tsv"))
        self._index("INSERT OR REPLACE INTO redirect VALUES (?, ?, ?)", _redirect_rows(redirects))
        self.db.execute("COMMIT")

    def _numbers(self, reader: csv.DictReader) -> Iterator[tuple[str, str, float]]:
        for n, row in enumerate(reader, start=2):
            try:
                yield row["site"], row["title"], float(row[self.column])
            except (TypeError, ValueError) as e:
                raise ConfigError(f"{self.path}:{n}: {self.column} {row.get(self.column)!r} is not a number") from e

    def _index(self, statement: str, rows: Iterator[tuple]) -> None:
        for chunk in iter(lambda: list(itertools.islice(rows, self.INSERT_CHUNK)), []):
            try:
                self.db.executemany(statement, chunk)
            except sqlite3.OperationalError as e:  # the temporary folder is full or not writable
                code = errno.ENOSPC if "full" in str(e).lower() else errno.EACCES
                raise WriteFailed(tempfile.gettempdir(), f"index {self.path} (SQLite's temporary file there)",
                                  OSError(code, os.strerror(code))) from e

    def scores(self, site_titles: Mapping[str, Collection[str]]) -> dict[tuple[str, str], float]:
        """Each asked (site, title) with its value, redirects followed once (as the live API does)."""
        out = {}
        for site, titles in site_titles.items():
            titles = list(titles)
            for at in range(0, len(titles), self.LOOKUP_CHUNK):
                chunk = titles[at:at + self.LOOKUP_CHUNK]
                targets = dict(self._lookup("SELECT src, dst FROM redirect", "src", site, chunk))
                values = dict(self._lookup("SELECT title, v FROM value", "title", site,
                                           sorted({targets.get(t, t) for t in chunk})))
                self.rows_read += len(values)
                for title in chunk:
                    target = targets.get(title, title)
                    if target in values:
                        out[(site, title)] = values[target]
        return out

    def _lookup(self, select: str, column: str, site: str, keys: Sequence[str]) -> list[tuple]:
        marks = ", ".join("?" * len(keys))
        return self.db.execute(f"{select} WHERE site = ? AND {column} IN ({marks})", (site, *keys)).fetchall()

    def rows(self) -> Iterator[tuple[tuple[str, str], float]]:
        """Every ((site, title), value), in (site, title) order, read back a row at a time."""
        return (((site, title), v) for site, title, v in self.db.execute("SELECT site, title, v FROM value"))

    def redirects(self) -> Iterator[tuple[tuple[str, str], str]]:
        """Every ((site, from), to), read back a row at a time."""
        return (((site, src), dst) for site, src, dst in self.db.execute("SELECT site, src, dst FROM redirect"))

    def close(self) -> None:
        self.db.close()


class PageLengthTable(IndexedTable):
    """Article lengths from a ``site<TAB>title<TAB>length`` table. Redirects (``site<TAB>from<TAB>to``) are
    followed like the live API does, from ``redirects`` or a ``redirects.tsv`` beside the table."""

    name = "length:table"

    def __init__(self, path: str | Path = SAMPLE_PAGE_LENGTHS, redirects: str | Path | None = None):
        path = Path(path)
        if not path.exists():
            raise ConfigError(f"page-length table not found at {path}; it ships with the embedded "
                              "sample (curate/sample/page_lengths.tsv)")
        super().__init__(path, ("length",), "site<TAB>title<TAB>length", redirects)


def read_redirects(path: str | Path) -> dict[tuple[str, str], str]:
    """``site<TAB>from<TAB>to`` rows -> {(site, from): to}; a missing file means no redirects."""
    return {(site, src): dst for site, src, dst in _redirect_rows(Path(path))}


def _redirect_rows(path: Path) -> Iterator[tuple[str, str, str]]:
    """``site<TAB>from<TAB>to`` rows as (site, from, to), read a row at a time; a missing file has none."""
    if not path.exists():
        return
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        if reader.fieldnames is None or not {"site", "from", "to"} <= set(reader.fieldnames):
            raise ConfigError(f"{path}:1: expected the header 'site<TAB>from<TAB>to'")
        for r in reader:
            yield r["site"], r["from"], r["to"]


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
