#!/usr/bin/env python3
"""Regenerate the embedded Wikidata sample from its readable source tables.

    python3 scripts/build_wikidata_sample.py              # writes into curate/sample/
    python3 scripts/build_wikidata_sample.py --out DIR    # writes elsewhere (tests compare bytes)

Inputs: ``curate/sample/source/*.yaml`` (entities, their labels and truthy statements, written by the
project from well-known public facts) and ``curate/sample/source/editions.yaml`` (which Wikipedia
editions each country's subjects get sitelinks in).
Outputs (byte-identical for identical inputs: sorted lines, gzip mtime 0):
  wikidata-sample.nt.gz  N-Triples in Wikidata's RDF model (wd:/wdt:, rdfs:label, skos:altLabel,
                         schema:about sitelinks, wikibase:sitelinks)
  page_lengths.tsv       site, title, length (article bytes) for every sitelinked article
  page_views.tsv         site, title, synthetic_monthly_views (SYNTHETIC page views, not measured)
  redirects.tsv          site, from, to: sitelink names that are redirects to the real article

Source entity record (every key optional except ``label``)::

  Q85:
    label: {en: Cairo, ar: القاهرة, ...}     # rdfs:label per language
    alias: {en: [Cairo City]}                # skos:altLabel
    female: {es: actriz, de: Schauspielerin} # wdt:P2521 "female form of label" (monolingual text)
    male: {fr: homme politique}              # wdt:P3321 "male form of label"
    P31: [Q5119, Q1549591]                   # any PID: one QID or a list (P21 also takes male/female/...)
    P570: 1975                               # P569/P570 (dates of birth/death): a year or YYYY-MM-DD,
                                             # written as xsd:dateTime (a year as YYYY-01-01, as WDQS does)
    sitelinks: 250                           # wikibase:sitelinks; makes the entity a sitelinked subject
    sites: [ar]                              # exact editions to link (default: see sitelinks_of)
    wiki: {en: "Cairo"}                      # sitelink title override (default: the label in that language)
    redirect: {en: "Cairo, Egypt"}           # the sitelink name is this redirect to the real title
    length: {en: 123456}                     # article byte length override (default: derived, see below)

A file may give ``defaults`` (statements every entity of the file gets unless it sets them) and
``latin_defaults: true`` (missing es/fr/de/pt/sw/it/nl/... labels repeat the English one: names of
people and companies are written the same in those Wikipedias). ``edges`` adds statements to entities
of other files (``edges: {P530: {Q79: [Q30, ...]}}``). P47, P530 and P190 are made symmetric.
``labels`` adds labels in a language to entities of other files (``labels: {ca: {Q29: Espanya}}``), and
``aliases``, ``female`` and ``male`` add aliases and gendered forms of label the same way (``aliases: {ca:
{Q30: [EUA]}}``, ``female: {ca: {Q33999: actriu}}``): the way to give the sample a new language without
editing the shipped tables, one file per language (``source/labels_<lang>.yaml``), or a file of your own
passed with ``--add`` (docs/journeys.md, "A new language").
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import yaml

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DIR = REPO / "curate" / "sample"
SOURCE_DIR = SAMPLE_DIR / "source"

#: Languages every subject/object entity is labelled in (the template languages).
LABEL_LANGS = ("en", "ar", "es", "ko", "zh", "ru", "fr", "de", "ja", "pt", "hi", "sw", "it", "ca", "nl", "id", "tr", "hu", "vi", "th", "ne", "el", "he", "uk", "fa")
#: Editions a well-known subject (``ALL_EDITIONS_AT`` sitelinks or more) gets an article in. Fixed at the
#: first thirteen label languages: a new label language adds labels, not articles, so the sample's
#: popularity (article lengths and views), and with it every ranked subject, stays as it was.
SITELINK_LANGS = ("en", "ar", "es", "ko", "zh", "ru", "fr", "de", "ja", "pt", "hi", "sw", "it")
#: Latin-script editions whose labels may default to the English spelling (``latin_defaults``).
LATIN_LANGS = ("es", "fr", "de", "pt", "sw", "it", "nl", "ca", "ga", "lb", "rm", "mi")
#: Editions a well-known subject also has an article in, by sitelink count (popular -> more editions).
MAJOR_EDITIONS = ("en", "ar", "es", "fr", "de", "pt", "ru")
ALL_EDITIONS_AT = 60
MAJOR_EDITIONS_AT = 25
SYMMETRIC = ("P47", "P530", "P190")
GENDERS = {"male": "Q6581097", "female": "Q6581072", "non-binary": "Q48270"}

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
SCHEMA = "http://schema.org/"
SITELINKS = "http://wikiba.se/ontology#sitelinks"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"

QID = re.compile(r"Q[1-9][0-9]*")
PID = re.compile(r"P[1-9][0-9]*")
LANG = re.compile(r"[a-z]{2,3}(-[a-z]{2,8})?")  # pt, pt-br (Wikidata's label tags)
DATE = re.compile(r"[0-9]{4}(-[0-9]{2}-[0-9]{2})?")
#: Statements whose values are dates (a year or YYYY-MM-DD), not items: a person's life status reads them.
DATE_PIDS = ("P569", "P570")
XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
RECORD_KEYS = {"label", "alias", "female", "male", "sitelinks", "sites", "wiki", "redirect", "length"}
#: Record keys written as monolingual-text statements: the gendered forms of a label.
GENDERED_FORMS = {"female": "P2521", "male": "P3321"}


class SourceError(ValueError):
    """A source table is malformed; the message names the file, the entity and the fix."""


@dataclass
class Entity:
    qid: str
    origin: str
    labels: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    texts: dict[str, dict[str, str]] = field(default_factory=dict)  # PID -> lang -> monolingual text
    claims: dict[str, list[str]] = field(default_factory=dict)
    dates: dict[str, list[str]] = field(default_factory=dict)  # P569/P570 -> YYYY-MM-DD
    sitelinks: int | None = None
    sites: tuple[str, ...] = ()
    wiki: dict[str, str] = field(default_factory=dict)
    redirect: dict[str, str] = field(default_factory=dict)
    length: dict[str, int] = field(default_factory=dict)
    # languages whose label is the English one copied by ``latin_defaults``: a language file's label
    # replaces it (a default is not a label anyone wrote for that language)
    defaulted: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Sitelink:
    qid: str
    site: str
    title: str          # the sitelink's schema:name
    article: str        # the real article title (differs from ``title`` for redirects)
    length: int
    views: int = 0  # synthetic monthly page views (page_views.tsv)


def _as_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def _site_titles(raw: object, where: str) -> dict[str, str]:
    titles: dict[str, str] = {}
    for site, title in (raw or {}).items():
        if not LANG.fullmatch(str(site)) or not isinstance(title, str):
            raise SourceError(f"{where}: {site!r}: {title!r} is not a Wikipedia edition and a title; quote it")
        titles[str(site)] = title
    return titles


def _parse_entity(qid: str, raw: dict, defaults: dict, latin: bool, origin: str) -> Entity:
    where = f"{origin}: {qid}"
    if not QID.fullmatch(qid):
        raise SourceError(f"{where}: malformed QID; expected Q followed by digits")
    if not isinstance(raw, dict) or "label" not in raw:
        raise SourceError(f"{where}: every entity needs a `label` mapping (at least en)")
    unknown = [k for k in raw if k not in RECORD_KEYS and not PID.fullmatch(str(k))]
    if unknown:
        raise SourceError(f"{where}: unknown key(s) {unknown}; expected a PID or one of {sorted(RECORD_KEYS)}")
    labels = {}
    for lang, text in raw["label"].items():
        if not isinstance(text, str):
            raise SourceError(f"{where}: label {lang}: {text!r} is not text; quote it in the YAML")
        labels[str(lang)] = text
    if "en" not in labels:
        raise SourceError(f"{where}: missing English label (label: {{en: ...}})")
    defaulted = {lang for lang in LATIN_LANGS if latin and lang not in labels}
    for lang in defaulted:
        labels[lang] = labels["en"]
    for lang in labels:
        if not LANG.fullmatch(lang):
            raise SourceError(f"{where}: malformed language code {lang!r}")
    entity = Entity(qid=qid, origin=origin, labels=labels, defaulted=defaulted)
    entity.aliases = {str(k): _as_list(v) for k, v in (raw.get("alias") or {}).items()}
    for key, pid in GENDERED_FORMS.items():
        forms = {}
        for lang, text in (raw.get(key) or {}).items():
            if not LANG.fullmatch(str(lang)) or not isinstance(text, str) or not text.strip():
                raise SourceError(f"{where}: {key} {lang!r}: {text!r} is not a language code and a text; quote it")
            forms[str(lang)] = text
        if forms:
            entity.texts[pid] = forms
    for pid, value in {**defaults, **{k: v for k, v in raw.items() if PID.fullmatch(str(k))}}.items():
        if pid in DATE_PIDS:
            days = []
            for v in _as_list(value):
                if not DATE.fullmatch(v):
                    raise SourceError(f"{where}: {pid} value {v!r} is not a year or a date YYYY-MM-DD")
                days.append(v if "-" in v else f"{v}-01-01")
            entity.dates[pid] = days
            continue
        values = [GENDERS.get(v, v) if pid == "P21" else v for v in _as_list(value)]
        for v in values:
            if not QID.fullmatch(v):
                raise SourceError(f"{where}: {pid} value {v!r} is not a QID")
        entity.claims[pid] = values
    if raw.get("sitelinks") is not None:
        entity.sitelinks = int(raw["sitelinks"])
    entity.sites = tuple(_as_list(raw.get("sites")))
    entity.wiki = _site_titles(raw.get("wiki"), f"{where}: wiki")
    entity.redirect = _site_titles(raw.get("redirect"), f"{where}: redirect")
    entity.length = {str(k): int(v) for k, v in (raw.get("length") or {}).items()}
    return entity


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def load_sources(source_dir: Path, added: tuple[Path, ...] = ()) -> tuple[dict[str, Entity], dict[str, list[str]]]:
    """Read every source table (and the ``added`` ones after them); return the entities by QID and the
    editions per country."""
    entities: dict[str, Entity] = {}
    edges: list[tuple[str, str, str, str]] = []
    extra_labels: list[tuple[str, str, str, str]] = []
    extra_texts: list[tuple[str, str, str, object, str]] = []  # aliases / female / male of other files' entities
    editions_file = source_dir / "editions.yaml"
    editions = {str(k): _as_list(v) for k, v in yaml.safe_load(editions_file.read_text())["editions"].items()}
    for path in [*sorted(source_dir.glob("*.yaml")), *added]:
        if path.name == "editions.yaml" and path.parent == source_dir:
            continue
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        origin = _display(path)
        defaults = doc.get("defaults") or {}
        for qid, raw in (doc.get("entities") or {}).items():
            qid = str(qid)
            if qid in entities:
                raise SourceError(f"{origin}: {qid} already defined in {entities[qid].origin}; define it once")
            entities[qid] = _parse_entity(qid, raw, defaults, bool(doc.get("latin_defaults")), origin)
        for pid, table in (doc.get("edges") or {}).items():
            for subject, objects in table.items():
                edges.extend((str(subject), str(pid), obj, origin) for obj in _as_list(objects))
        for lang, table in (doc.get("labels") or {}).items():
            if not LANG.fullmatch(str(lang)):
                raise SourceError(f"{origin}: labels: malformed language code {lang!r}")
            extra_labels.extend((str(qid), str(lang), str(text), origin) for qid, text in (table or {}).items())
        for key in ("aliases", *GENDERED_FORMS):
            for lang, table in (doc.get(key) or {}).items():
                if not LANG.fullmatch(str(lang)):
                    raise SourceError(f"{origin}: {key}: malformed language code {lang!r}")
                for qid, value in (table or {}).items():
                    extra_texts.append((key, str(qid), str(lang), value, origin))
    for qid, lang, text, origin in extra_labels:
        if qid not in entities:
            raise SourceError(f"{origin}: labels {lang}: {qid} is not defined in any source table")
        known = entities[qid].labels.get(lang)
        if known is not None and known != text and lang not in entities[qid].defaulted:
            raise SourceError(f"{origin}: labels {lang}: {qid} already has the {lang} label {known!r} in "
                              f"{entities[qid].origin}; give it once")
        entities[qid].labels[lang] = text
        entities[qid].defaulted.discard(lang)
    for key, qid, lang, value, origin in extra_texts:
        if qid not in entities:
            raise SourceError(f"{origin}: {key} {lang}: {qid} is not defined in any source table")
        entity = entities[qid]
        if key == "aliases":
            names = value if isinstance(value, list) else [value]
            if not names or not all(isinstance(n, str) and n.strip() for n in names):
                raise SourceError(f"{origin}: aliases {lang}: {qid}: {value!r} is not a list of names; quote them")
            known = entity.aliases.setdefault(lang, [])
            known.extend(n for n in names if n not in known)
            continue
        pid = GENDERED_FORMS[key]
        if not isinstance(value, str) or not value.strip():
            raise SourceError(f"{origin}: {key} {lang}: {qid}: {value!r} is not a text; quote it")
        known = entity.texts.get(pid, {}).get(lang)
        if known is not None and known != value:
            raise SourceError(f"{origin}: {key} {lang}: {qid} already has the {lang} {key} form {known!r} in "
                              f"{entity.origin}; give it once")
        entity.texts.setdefault(pid, {})[lang] = value
    for subject, pid, obj, origin in edges:
        if not PID.fullmatch(pid) or not QID.fullmatch(obj):
            raise SourceError(f"{origin}: edges {pid}: {subject} -> {obj!r} is not a PID and a QID")
        if subject not in entities:
            raise SourceError(f"{origin}: edges {pid}: subject {subject} is not defined in any source table")
        entities[subject].claims.setdefault(pid, []).append(obj)
    for pid in SYMMETRIC:
        for entity in list(entities.values()):
            for obj in entity.claims.get(pid, []):
                if obj in entities:
                    back = entities[obj].claims.setdefault(pid, [])
                    if entity.qid not in back:
                        back.append(entity.qid)
    for entity in entities.values():
        for pid, values in entity.claims.items():
            entity.claims[pid] = sorted(set(values), key=lambda q: int(q[1:]))
            for value in values:
                if value not in entities:
                    raise SourceError(
                        f"{entity.origin}: {entity.qid} {pid} {value}: {value} is not defined in any source "
                        "table; add it (with labels) or remove the statement"
                    )
    return entities, editions


def home_countries(entity: Entity, editions: dict[str, list[str]]) -> list[str]:
    """The countries whose Wikipedia editions a subject is ranked in (itself, P27, P17 or P495)."""
    if entity.qid in editions:
        return [entity.qid]
    for pid in ("P27", "P17", "P495"):
        found = [c for c in entity.claims.get(pid, []) if c in editions]
        if found:
            return found
    return []


def _jitter(key: str) -> float:
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return 0.7 + 0.6 * int.from_bytes(digest[:4], "big") / 2**32


def article_length(sitelinks: int, site: str, home: bool, title: str) -> int:
    """A plausible article size in bytes: grows with the sitelink count, larger in home editions."""
    factor = {"en": 1.0, "ar": 0.8, "fr": 0.75, "de": 0.75}.get(site, 0.5)
    if home:
        factor *= 1.4
    return int(1200 * sitelinks**0.85 * factor * _jitter(f"{site}|{title}"))


def synthetic_monthly_views(sitelinks: int, site: str, home: bool, title: str) -> int:
    """SYNTHETIC page views for the sample (not measured): grow with the sitelink count, more in English
    and home editions; a jitter of its own (0.7-1.3), so views and lengths do not rank alike."""
    factor = {"en": 1.0, "ar": 0.35, "fr": 0.3, "de": 0.3}.get(site, 0.15)
    if home:
        factor *= 2.0
    return int(25 * sitelinks**1.6 * factor * _jitter(f"views|{site}|{title}"))


def sitelinks_of(entity: Entity, editions: dict[str, list[str]]) -> list[Sitelink]:
    if entity.sitelinks is None:
        return []
    home_sites: list[str] = []
    for country in home_countries(entity, editions):
        home_sites.extend(editions[country])
    sites = set(home_sites) | {"en"} | set(entity.wiki) | set(entity.redirect)
    if entity.sitelinks >= ALL_EDITIONS_AT:
        sites |= set(SITELINK_LANGS)
    elif entity.sitelinks >= MAJOR_EDITIONS_AT:
        sites |= set(MAJOR_EDITIONS)
    if entity.sites:
        sites = set(entity.sites)
    if len(sites) > entity.sitelinks:
        raise SourceError(
            f"{entity.origin}: {entity.qid}: sitelinks {entity.sitelinks} is below the {len(sites)} "
            f"editions it is linked in ({sorted(sites)}); raise the count"
        )
    links = []
    for site in sorted(sites):
        article = entity.wiki.get(site) or entity.labels.get(site) or entity.labels["en"]
        title = entity.redirect.get(site, article)
        length = entity.length.get(site) or article_length(entity.sitelinks, site, site in home_sites, article)
        views = synthetic_monthly_views(entity.sitelinks, site, site in home_sites, article)
        links.append(Sitelink(entity.qid, site, title, article, length, views))
    return links


def _literal(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def _article_iri(site: str, title: str) -> str:
    return f"https://{site}.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe="()',:!*$;@~")


def triples(entities: dict[str, Entity], editions: dict[str, list[str]]) -> tuple[list[str], list[Sitelink]]:
    lines: list[str] = []
    links: list[Sitelink] = []
    article_owner: dict[str, Entity] = {}
    for entity in entities.values():
        subject = f"<{WD}{entity.qid}>"
        for lang, text in entity.labels.items():
            lines.append(f"{subject} <{RDFS_LABEL}> {_literal(text)}@{lang} .")
        for lang, names in entity.aliases.items():
            lines.extend(f"{subject} <{SKOS_ALT}> {_literal(name)}@{lang} ." for name in names)
        for pid, values in entity.claims.items():
            lines.extend(f"{subject} <{WDT}{pid}> <{WD}{value}> ." for value in values)
        for pid, days in entity.dates.items():
            lines.extend(f'{subject} <{WDT}{pid}> "{day}T00:00:00Z"^^<{XSD_DATETIME}> .' for day in days)
        for pid, forms in entity.texts.items():
            lines.extend(f"{subject} <{WDT}{pid}> {_literal(text)}@{lang} ." for lang, text in forms.items())
        if entity.sitelinks is not None:
            lines.append(f'{subject} <{SITELINKS}> "{entity.sitelinks}"^^<{XSD_INTEGER}> .')
        for link in sitelinks_of(entity, editions):
            links.append(link)
            iri = f"<{_article_iri(link.site, link.title)}>"
            owner = article_owner.setdefault(iri, entity)
            if owner is not entity:
                raise SourceError(
                    f"{entity.origin}: {entity.qid}: the {link.site} article {link.title!r} is already the "
                    f"sitelink of {owner.qid} ({owner.origin}); give one of them a `wiki: {{{link.site}: ...}}` title"
                )
            lines.append(f"{iri} <{SCHEMA}about> {subject} .")
            lines.append(f"{iri} <{SCHEMA}isPartOf> <https://{link.site}.wikipedia.org/> .")
            lines.append(f'{iri} <{SCHEMA}inLanguage> "{link.site}" .')
            lines.append(f"{iri} <{SCHEMA}name> {_literal(link.title)}@{link.site} .")
    return sorted(set(lines)), links


def _tsv(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> bytes:
    for row in rows:
        if any("\t" in cell or "\n" in cell for cell in row):
            raise SourceError(f"a title contains a tab or newline: {row}")
    body = "".join("\t".join(row) + "\n" for row in sorted(set(rows)))
    return ("\t".join(header) + "\n" + body).encode("utf-8")


def render(source_dir: Path = SOURCE_DIR, added: tuple[Path, ...] = ()) -> dict[str, bytes]:
    """Build every output file's bytes from the source tables (pure: no writes)."""
    entities, editions = load_sources(source_dir, added)
    lines, links = triples(entities, editions)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as gz:
        gz.write(("\n".join(lines) + "\n").encode("utf-8"))
    lengths = [(link.site, link.article, str(link.length)) for link in links]
    redirects = [(link.site, link.title, link.article) for link in links if link.title != link.article]
    return {
        "wikidata-sample.nt.gz": buffer.getvalue(),
        "page_lengths.tsv": _tsv(lengths, ("site", "title", "length")),
        "redirects.tsv": _tsv(redirects, ("site", "from", "to")),
        # the column name says it: these are made up, not Wikimedia's numbers
        "page_views.tsv": _tsv([(link.site, link.article, str(link.views)) for link in links],
                               ("site", "title", "synthetic_monthly_views")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=SOURCE_DIR, help="folder of source tables")
    parser.add_argument("--out", type=Path, default=SAMPLE_DIR, help="folder to write the outputs into")
    parser.add_argument("--add", type=Path, action="append", default=[],
                        help="another source table read after the shipped ones (e.g. labels in a new language); "
                             "repeatable")
    args = parser.parse_args(argv)
    try:
        files = render(args.source, tuple(args.add))
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (args.out / name).write_bytes(data)
        print(f"wrote {args.out / name} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
