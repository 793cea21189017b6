"""Steps 1 and 2 of curation: the candidates and their popularity, held in a spill rather than in memory.

On full Wikidata step 1 answers millions of rows (P17, P19, P27 for a large country), and every subject of
the culture's countries is a candidate until step 2 keeps the most popular ``max_subjects``. So the rows are
folded, one batch's answer at a time (``QueryRunner.iter_batched``), into a SQLite file in the run's
``curate/`` folder (``candidates.sqlite``): subject, country, article and class, one row each. The type check
of step 1 and the ranking of step 2 read it back in QID order; only the kept subjects become ``Candidate``
objects. The client's memory is bounded by one batch's answer, the distinct classes, one popularity chunk
(``SCORE_CHUNK`` subjects) and the kept subjects, not by the candidate rows. The spill is rebuilt from the
cached answers when a killed run resumes, and removed when step 2 is done.

Outputs are what the in-memory steps gave: the same drops, in the same order, the same kept subjects
with the same popularity (checked on the shipped pairs: whole runs' parquet files byte for byte).
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from factatlas.curate import sparql
from factatlas.curate.cache import QueryRunner
from factatlas.curate.config import PredicateSpec
from factatlas.curate.mediawiki import MediaWikiClient
from factatlas.curate.pageviews import MonthWindow, PageviewsClient, PageViewTable, WikimediaPageviews
from factatlas.curate.popularity import MediaWikiEdits, MediaWikiLengths, PageLengthTable, PopularitySource
from factatlas.curate.runtypes import Candidate, CurationConfig, first_country  # noqa: F401 (importable here)
from factatlas.errors import ConfigError, WriteFailed
from factatlas.http import HttpPolicy
from factatlas.records import Culture, Drop, fact_id, id_order

if TYPE_CHECKING:
    from factatlas.curate.steps import Knowledge

SPILL_NAME = "candidates.sqlite"
SPILL_CHUNK = 2_000  # answer rows folded into the spill per transaction (a batch's answer is read in these)
SCORE_CHUNK = 50_000  # subjects per popularity call: bounds the titles held at once (the sample is one call)

Key = tuple[str, str]  # (culture, predicate)


def _order(qid: str) -> int:
    """The integer part of ``id_order``: the spill sorts by (this, qid), which is ``id_order``."""
    return id_order(qid)[0]


# ---- the spill ---------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE cand (key INTEGER, o INTEGER, s TEXT, country TEXT, PRIMARY KEY (key, o, s, country)) WITHOUT ROWID;
CREATE TABLE article (key INTEGER, o INTEGER, s TEXT, site TEXT, title TEXT,
                      PRIMARY KEY (key, o, s, site, title)) WITHOUT ROWID;
CREATE TABLE klass (s TEXT, class TEXT, PRIMARY KEY (s, class)) WITHOUT ROWID;
CREATE TABLE gone (key INTEGER, o INTEGER, s TEXT, PRIMARY KEY (key, o, s)) WITHOUT ROWID;
CREATE TABLE sitelinks (s TEXT PRIMARY KEY, n REAL) WITHOUT ROWID;
CREATE TABLE score (key INTEGER, o INTEGER, s TEXT, popularity REAL, PRIMARY KEY (key, o, s)) WITHOUT ROWID;
"""


class CandidateSpill:
    """Step 1's candidates of every (culture, predicate), on disk; ``keys`` in the order they were filled."""

    def __init__(self, path: Path):
        self.path = path
        self.keys: list[Key] = []
        with self.writing("create the candidate spill"):
            path.unlink(missing_ok=True)  # a killed run's spill: rebuilt from the cached answers
            self.db = sqlite3.connect(path, isolation_level=None)
            try:
                # a scratch file: no journal, no fsync; a small page cache, so the spill, not the heap, grows
                self.db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-16000;"
                                      "PRAGMA temp_store=FILE;" + _SCHEMA)
            except BaseException:
                self.discard()  # a disk too full for the empty tables leaves no file either
                raise

    @contextmanager
    def writing(self, action: str) -> Iterator[None]:
        """A full or read-only disk under the spill is a ``WriteFailed`` naming it, like every other write."""
        try:
            yield
        except sqlite3.OperationalError as e:
            text = str(e).lower()
            code = errno.ENOSPC if "full" in text else errno.EACCES if "readonly" in text or "open" in text else None
            if code is None:
                raise
            raise WriteFailed(self.path, action, OSError(code, os.strerror(code))) from e
        except OSError as e:
            raise WriteFailed(self.path, action, e) from e

    def close(self) -> None:
        self.db.close()
        self.path.unlink(missing_ok=True)

    def discard(self) -> None:
        """Close and remove the spill after a failure, whatever else fails while doing so."""
        with suppress(Exception):
            self.db.close()
        with suppress(OSError):
            self.path.unlink(missing_ok=True)

    def add_key(self, key: Key) -> int:
        self.keys.append(key)
        return len(self.keys) - 1

    def add_rows(self, k: int, cands: list, articles: list, classes: list) -> None:
        with self.writing("spill the candidate rows"):
            self.db.execute("BEGIN")
            self.db.executemany("INSERT OR IGNORE INTO cand VALUES (?, ?, ?, ?)", cands)
            self.db.executemany("INSERT OR IGNORE INTO article VALUES (?, ?, ?, ?, ?)", articles)
            self.db.executemany("INSERT OR IGNORE INTO klass VALUES (?, ?)", classes)
            self.db.execute("COMMIT")

    def subjects(self, k: int) -> Iterator[tuple[str, list[str], list[str]]]:
        """(subject, its countries, its classes) of one key, in QID order."""
        rows = self.db.execute(
            "SELECT s, group_concat(country, ' '), (SELECT group_concat(class, ' ') FROM klass WHERE klass.s = c.s) "
            "FROM cand c WHERE key = ? GROUP BY o, s ORDER BY o, s", (k,))
        for s, countries, classes in rows:
            yield s, countries.split(" "), classes.split(" ") if classes else []

    def classes(self) -> list[str]:
        return [c for (c,) in self.db.execute("SELECT DISTINCT class FROM klass")]

    def drop(self, k: int, s: str) -> None:
        with self.writing("spill the candidate rows"):
            self.db.execute("INSERT INTO gone VALUES (?, ?, ?)", (k, _order(s), s))

    def forget_gone(self) -> None:
        with self.writing("spill the candidate rows"):
            for table in ("cand", "article"):
                self.db.execute(f"DELETE FROM {table} WHERE EXISTS (SELECT 1 FROM gone g WHERE g.key = {table}.key "
                                f"AND g.o = {table}.o AND g.s = {table}.s)")

    def all_subjects(self) -> Iterator[str]:
        """Every candidate subject once, in QID order."""
        return (s for _, s in self.db.execute("SELECT DISTINCT o, s FROM cand ORDER BY o, s"))

    def entries(self) -> Iterator[tuple[int, str, list[str], list[tuple[str, str]]]]:
        """(key, subject, countries, articles) of every candidate, in QID order (then key)."""
        rows = self.db.execute(
            "SELECT key, s, group_concat(country, ' '), (SELECT json_group_array(json_array(site, title)) FROM article a "
            "WHERE a.key = c.key AND a.o = c.o AND a.s = c.s) FROM cand c GROUP BY o, s, key ORDER BY o, s, key")
        for k, s, countries, articles in rows:
            yield k, s, countries.split(" "), [tuple(a) for a in json.loads(articles)]

    def set_scores(self, scores: list[tuple[int, str, float]]) -> None:
        with self.writing("spill the candidate rows"):
            self.db.executemany("INSERT OR REPLACE INTO score VALUES (?, ?, ?, ?)",
                                [(k, _order(s), s, p) for k, s, p in scores])

    def ranked(self, k: int) -> Iterator[tuple[str, float, set[str]]]:
        """(subject, popularity, countries) of one key, most popular first (ties: lower QID)."""
        rows = self.db.execute(
            "SELECT s, popularity, (SELECT group_concat(country, ' ') FROM cand c WHERE c.key = sc.key AND c.o = sc.o "
            "AND c.s = sc.s) FROM score sc WHERE key = ? ORDER BY popularity DESC, o, s", (k,))
        for s, popularity, countries in rows:
            yield s, popularity, set(countries.split(" "))

    def articles(self, k: int, s: str) -> set[tuple[str, str]]:
        return {(site, title) for site, title in self.db.execute(
            "SELECT site, title FROM article WHERE key = ? AND o = ? AND s = ?", (k, _order(s), s))}


# ---- step 1 -------------------------------------------------------------------------------------


def _fill_spill(spill: CandidateSpill, cultures: Mapping[str, Culture], specs: Mapping[str, PredicateSpec],
                runner: QueryRunner, know: Knowledge, batch_size: int) -> None:
    for cname, culture in cultures.items():
        canonical = _canonical_countries(culture)
        for pid_, spec in specs.items():
            k = spill.add_key((cname, pid_))
            for rows in runner.iter_batched(f"candidates:{pid_}", *candidate_request(culture, spec), batch_size):
                _spill_batch(spill, k, rows, canonical, know)


def find_candidates(cultures: Mapping[str, Culture], specs: Mapping[str, PredicateSpec], runner: QueryRunner,
                    know: Knowledge, batch_size: int, drops: list[Drop], spill_path: Path) -> CandidateSpill:
    """Step 1: subjects tied to each culture's countries, with classes and article titles, spilled to
    ``spill_path``; subjects not of the predicate's subject type are dropped (``candidates/subject-type``)."""
    spill = CandidateSpill(spill_path)
    try:
        _fill_spill(spill, cultures, specs, runner, know, batch_size)
        # the classes of subjects the run knew before (the culture's countries, described) stay in ``know`` too
        know.ensure_classes([*spill.classes(), *(c for q in know.info for c in know.info[q].classes)])
        for k, (cname, pid_) in enumerate(spill.keys):
            spec = specs[pid_]
            for s, countries, classes in spill.subjects(k):
                why = know.type_check(s, spec.subject_type, None if s in know.info else classes)
                if why:
                    drops.append(Drop(fact_id(cname, pid_, s), "candidates", "subject-type", why, cname, pid_,
                                      min(countries, key=id_order)))
                    spill.drop(k, s)
        spill.forget_gone()
    except BaseException:
        spill.discard()  # a failed step (a full disk, a refused query) leaves no spill behind it
        raise
    return spill


def _spill_batch(spill: CandidateSpill, k: int, rows: Iterable[dict], canonical: Mapping[str, str],
                 know: Knowledge) -> None:
    """Fold one batch's answer (read row by row from its cache file) into the spill, ``SPILL_CHUNK`` rows at
    a time: a batch of millions of rows is never in memory whole."""
    for chunk in iter(lambda: list(itertools.islice(rows, SPILL_CHUNK)), []):
        _spill_rows(spill, k, chunk, canonical, know)


def _spill_rows(spill: CandidateSpill, k: int, rows: list[dict], canonical: Mapping[str, str],
                know: Knowledge) -> None:
    cands, articles, classes = [], [], []
    for row in rows:
        s, country = sparql.qid_of(row, "s"), canonical.get(sparql.qid_of(row, "country") or "")
        if not s or not country:
            continue
        o = _order(s)
        cands.append((k, o, s, country))
        site = sparql.site_from_iri(sparql.iri(row, "site") or "")
        title = sparql.literal(row, "title")
        if site and title:
            articles.append((k, o, s, site, title[0]))
        klass = sparql.qid_of(row, "class")
        if klass:
            classes.append((s, klass))
            if s in know.info:  # a described item (a culture's country as a subject) keeps what it was told
                know.info[s].classes.add(klass)
    spill.add_rows(k, cands, articles, classes)


def _canonical_countries(culture: Culture) -> dict[str, str]:
    """Statements may name another item for a country (the Kingdom Q29999 for the Netherlands Q55); they
    count for the listed country, except where the subject is the country itself."""
    canonical = {c.qid: c.qid for c in culture.countries}
    canonical.update({alt: c.qid for c in culture.countries for alt in c.also_matches})
    return canonical


def candidate_request(culture: Culture, spec: PredicateSpec) -> tuple[list[str], Callable[[Sequence[str]], str]]:
    """Step 1's query for one (culture, predicate): the countries to batch and the builder of a batch."""
    sites = sorted({s for c in culture.countries for s in c.wikipedia_sites})
    itself = spec.culture_filter.side == "subject" and spec.culture_filter.via is None
    items = list(culture.country_qids) if itself else sorted(_canonical_countries(culture), key=id_order)

    def build(batch: Sequence[str]) -> str:
        return sparql.candidates_query(spec.pid, spec.culture_filter.side, spec.culture_filter.via, batch, sites)

    return items, build


# ---- step 2 -------------------------------------------------------------------------------------


def rank_by_popularity(config: CurationConfig, cultures: Mapping[str, Culture], spill: CandidateSpill,
                       runner: QueryRunner, source: PopularitySource | None,
                       drops: list[Drop]) -> tuple[dict[Key, list[Candidate]], str]:
    """Step 2: score every candidate, keep the most popular per (culture, predicate) under the quota
    and the cap (``popularity/country-quota``, ``popularity/max-subjects``); returns the popularity
    source's name for the manifest. The spill is removed."""
    site_by_country = {c.qid: c.wikipedia_sites for cul in cultures.values() for c in cul.countries}
    try:
        if config.popularity == "sitelinks":
            source_name = _score_by_sitelinks(spill, runner, config.batch_size)
        else:
            assert source is not None
            _score_by_articles(spill, site_by_country, source)
            source_name = source.name
        kept = {key: _select(spill, k, config.max_subjects, config.country_quota, drops)
                for k, key in enumerate(spill.keys)}
    finally:
        spill.close()
    return kept, source_name


def _score_by_sitelinks(spill: CandidateSpill, runner: QueryRunner, batch_size: int) -> str:
    for rows in runner.iter_batched("sitelinks", spill.all_subjects(), sitelinks_query, batch_size):
        counts = [(q, float(lit[0])) for row in rows
                  if (q := sparql.qid_of(row, "s")) and (lit := sparql.literal(row, "n")) and lit[0].isdigit()]
        with spill.writing("spill the candidate rows"):
            spill.db.executemany("INSERT OR REPLACE INTO sitelinks VALUES (?, ?)", counts)
    with spill.writing("spill the candidate rows"):
        spill.db.execute("INSERT INTO score SELECT DISTINCT c.key, c.o, c.s, coalesce(n.n, 0.0) FROM cand c "
                         "LEFT JOIN sitelinks n ON n.s = c.s")
    return "sitelinks:sparql"


def _score_by_articles(spill: CandidateSpill, site_by_country: Mapping[str, Sequence[str]],
                       source: PopularitySource) -> None:
    """A subject's popularity: the max over its articles in its countries' editions, scored by ``source``
    ``SCORE_CHUNK`` subjects at a time."""
    chunk: list[tuple[int, str, list[tuple[str, str]]]] = []
    subjects, last = 0, None
    for k, s, countries, articles in spill.entries():
        if s != last:
            if subjects >= SCORE_CHUNK:
                _score_chunk(spill, chunk, source)
                chunk, subjects = [], 0
            subjects, last = subjects + 1, s
        sites = {site for country in countries for site in site_by_country.get(country, ())}
        chunk.append((k, s, sorted(a for a in articles if a[0] in sites)))
    if chunk:
        _score_chunk(spill, chunk, source)


def _score_chunk(spill: CandidateSpill, chunk: list[tuple[int, str, list[tuple[str, str]]]],
                 source: PopularitySource) -> None:
    wanted: dict[str, set[str]] = defaultdict(set)
    for _, _, usable in chunk:
        for site, title in usable:
            wanted[site].add(title)
    scores = source.scores(wanted)
    spill.set_scores([(k, s, max((scores.get(a, 0.0) for a in usable), default=0.0)) for k, s, usable in chunk])


def sitelinks_query(subjects: Sequence[str]) -> str:
    return sparql.PREFIXES + (
        "SELECT ?s ?n WHERE {\n"
        f"  {sparql.values('s', [sparql.qid(s) for s in subjects])}\n"
        "  ?s wikibase:sitelinks ?n .\n"
        "}\n"
    )


def _select(spill: CandidateSpill, k: int, max_subjects: int, quota: int | None, drops: list[Drop]) -> list[Candidate]:
    """Most popular first (ties: lower QID); a subject passes the quota while one of its countries has room."""
    cname, pid_ = spill.keys[k]
    per_country: Counter[str] = Counter()
    kept: list[Candidate] = []
    for s, popularity, countries in spill.ranked(k):
        fid, first = fact_id(cname, pid_, s), min(countries, key=id_order)
        if quota is not None and all(per_country[q] >= quota for q in countries):
            drops.append(Drop(fid, "popularity", "country-quota",
                              f"all of {', '.join(sorted(countries, key=id_order))} already have {quota} subjects",
                              cname, pid_, first))
            continue
        if len(kept) >= max_subjects:
            drops.append(Drop(fid, "popularity", "max-subjects",
                              f"popularity {popularity:g} below the top {max_subjects}", cname, pid_, first))
            continue
        kept.append(Candidate(s, countries, spill.articles(k, s), popularity))
        per_country.update(countries)
    return kept


def default_popularity_source(config: CurationConfig, policy: HttpPolicy | None = None,
                              sleeper: Callable[[float], None] = time.sleep) -> PopularitySource:
    if config.popularity == "pageviews":
        return _pageviews_source(config, policy, sleeper)
    if config.page_lengths or (config.endpoint is None and config.popularity == "length"):
        return PageLengthTable(config.page_lengths) if config.page_lengths else PageLengthTable()
    if config.endpoint is None:
        raise ConfigError(f"--popularity {config.popularity}: the embedded sample ships article lengths only; "
                          "use --popularity length or sitelinks")
    ua = config.user_agent or os.environ.get("FACTATLAS_USER_AGENT") or ""
    client = MediaWikiClient(ua, api_url=config.mediawiki_api, rest_url=config.mediawiki_rest,
                             policy=policy or config.http_policy(), sleeper=sleeper)
    return MediaWikiEdits(client) if config.popularity == "edits" else MediaWikiLengths(client)


def _pageviews_source(config: CurationConfig, policy: HttpPolicy | None,
                      sleeper: Callable[[float], None]) -> PopularitySource:
    """A table (``--page-views``; the embedded sample's synthetic one by default), else the Wikimedia API."""
    if config.page_views or config.endpoint is None:
        return PageViewTable(config.page_views) if config.page_views else PageViewTable()
    ua = config.user_agent or os.environ.get("FACTATLAS_USER_AGENT") or ""
    client = PageviewsClient(ua, url=config.pageviews_url, policy=policy or config.http_policy(), sleeper=sleeper)
    return WikimediaPageviews(client, MonthWindow.parse(config.pageviews_months))
