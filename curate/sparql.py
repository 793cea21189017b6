"""Pure SPARQL 1.1 builders: engine-neutral text for WDQS, QLever, Oxigraph or any Wikidata mirror.

No ``SERVICE wikibase:label``, no ``hint:``, no ``bd:``. Every property-path closure starts from
items bound by ``VALUES`` and ends in a variable joined with a triple pattern (class reach, superclass and
P131 chains): the one shape every engine tested accepts (docs/curate.md, "Engines").

Every value is validated against a strict pattern before it is written into a query string, so a config
value cannot smuggle SPARQL into a request (``UnsafeValue`` is raised before anything is sent).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence

from factatlas.errors import FactatlasError
from factatlas.records import LANG_RE, PID_RE, QID_RE, SITE_RE

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
PREFIXES = (
    "PREFIX wd: <http://www.wikidata.org/entity/>\n"
    "PREFIX wdt: <http://www.wikidata.org/prop/direct/>\n"
    "PREFIX wikibase: <http://wikiba.se/ontology#>\n"
    "PREFIX schema: <http://schema.org/>\n"
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>\n"
    "PREFIX skos: <http://www.w3.org/2004/02/skos/core#>\n"
)
# The entity properties fetched for every subject and object in the labels pass. P2521/P3321 are the
# female/male forms of an occupation's label (monolingual text), so that answers agree with the subject;
# P570 (date of death), P20 (place of death) and P569 (date of birth) decide a person's life status
# (curate/life.py), which templates agree with.
DESCRIBE_PREDICATES = ("rdfs:label", "skos:altLabel", "wdt:P31", "wdt:P21", "wdt:P2521", "wdt:P3321",
                       "wdt:P570", "wdt:P20", "wdt:P569", "wikibase:sitelinks")


class UnsafeValue(FactatlasError):
    """A value that is not a plain QID / PID / language code reached a query builder."""


def qid(value: str) -> str:
    if not isinstance(value, str) or not QID_RE.fullmatch(value):
        raise UnsafeValue(f"refusing to build a query with {value!r}: not a Wikidata item id like 'Q79'")
    return f"wd:{value}"


def pid(value: str) -> str:
    if not isinstance(value, str) or not PID_RE.fullmatch(value):
        raise UnsafeValue(f"refusing to build a query with {value!r}: not a Wikidata property id like 'P17'")
    return f"wdt:{value}"


def lang_literal(value: str) -> str:
    if not isinstance(value, str) or not LANG_RE.fullmatch(value):
        raise UnsafeValue(f"refusing to build a query with {value!r}: not a language code like 'ar'")
    return f'"{value}"'


def site_iri(site: str) -> str:
    """A Wikipedia edition code -> the IRI sitelinks use for schema:isPartOf."""
    if not isinstance(site, str) or not SITE_RE.fullmatch(site):
        raise UnsafeValue(f"refusing to build a query with {site!r}: not a Wikipedia edition code like 'en'")
    return f"<https://{site}.wikipedia.org/>"


def values(var: str, terms: Iterable[str]) -> str:
    return f"VALUES ?{var} {{ {' '.join(terms)} }}"


def qid_from_iri(iri: str) -> str | None:
    """``http://www.wikidata.org/entity/Q79`` -> ``Q79``; anything else (blank nodes, lexemes) -> None."""
    if iri.startswith(WD):
        q = iri[len(WD):]
        return q if QID_RE.fullmatch(q) else None
    return None


def site_from_iri(iri: str) -> str | None:
    m = re.fullmatch(r"https://([a-z0-9-]+)\.wikipedia\.org/", iri)
    return m.group(1) if m and SITE_RE.fullmatch(m.group(1)) else None


def query_hash(endpoint_id: str, query: str) -> str:
    return hashlib.sha256(f"{endpoint_id}\n{query}".encode()).hexdigest()


# ---- the queries ------------------------------------------------------------------------------


def membership_query(predicate: str, target: str) -> str:
    """Countries defined by a membership rule, e.g. members (P463) of the Arab League (Q7172)."""
    return PREFIXES + f"SELECT DISTINCT ?country WHERE {{\n  ?country {pid(predicate)} {qid(target)} .\n}}\n"


def label_languages_query(countries: Sequence[str], langs: Sequence[str]) -> str:
    """The labels of ``countries`` in ``langs``: a cheap check that every requested language has labels."""
    return PREFIXES + (
        "SELECT ?c ?label WHERE {\n"
        f"  {values('c', [qid(c) for c in countries])}\n"
        "  ?c rdfs:label ?label .\n"
        f"  FILTER(LANG(?label) IN ({', '.join(lang_literal(x) for x in langs)}))\n"
        "}\n"
    )


def candidates_query(predicate: str, side: str, via: str | None, countries: Sequence[str],
                     sites: Sequence[str]) -> str:
    """Step 1: subjects of ``predicate`` tied to one of ``countries``, with their P31 classes and their
    article titles in ``sites`` (a subject without an article in any of the culture's editions cannot be
    ranked by popularity, so it is not a candidate).

    Rows: ?s ?country ?class (optional) ?site ?title.

    The editions are a FILTER after the ``schema:about`` lookup, not a ``VALUES ?site`` block (the locality
    query's fix, ``factatlas.curate.locality``): the same rows for about a third of the CPU on the embedded
    store (0.52 s instead of 1.45 s at 3x the sample, 5.1 s instead of 13.7 s at 30x, one batch per culture
    and predicate), the engine no longer starting from the editions' articles.

    When the subject carries the country, its objects are only asked to exist (``FILTER EXISTS``): joined
    as ``?s wdt:P ?o`` they would multiply every row by the subject's objects before DISTINCT folds them.
    """
    p = pid(predicate)
    country_terms = [qid(c) for c in countries]
    if side == "subject" and via is None:
        link = f"  {values('s', country_terms)}\n  FILTER EXISTS {{ ?s {p} ?o }}\n  BIND(?s AS ?country)\n"
    elif side == "subject":
        link = f"  {values('country', country_terms)}\n  ?s {pid(via)} ?country .\n  FILTER EXISTS {{ ?s {p} ?o }}\n"
    elif via is None:
        link = f"  {values('country', country_terms)}\n  ?s {p} ?country .\n"
    elif side == "object":
        link = f"  {values('country', country_terms)}\n  ?o {pid(via)} ?country .\n  ?s {p} ?o .\n"
    else:
        raise UnsafeValue(f"culture filter side {side!r} is not 'subject' or 'object'")
    return PREFIXES + (
        "SELECT DISTINCT ?s ?country ?class ?site ?title WHERE {\n"
        + link
        + "  ?article schema:about ?s ;\n"
        "           schema:isPartOf ?site ;\n"
        "           schema:name ?title .\n"
        f"  FILTER(?site IN ({', '.join(site_iri(s) for s in sites)}))\n"
        "  OPTIONAL { ?s wdt:P31 ?class . }\n"
        "}\n"
    )


def class_reach_query(classes: Sequence[str], roots: Sequence[str]) -> str:
    """Which ``roots`` each class reaches through one or more P279 steps; read the answer with
    ``class_reach``, which adds the zero-step case (a root reaches itself).

    The closure is written ``?class wdt:P279* ?mid . ?mid wdt:P279 ?root``, the shape of the augmentation
    queries: Virtuoso 7 refuses a path whose ends are bound only by ``VALUES`` (``?class wdt:P279* ?root``
    with both lists: HTTP 500 "transitive start not given") and accepts a path whose end is joined with a
    triple pattern. Plain SPARQL 1.1, the same answer on every engine.
    """
    return PREFIXES + (
        "SELECT DISTINCT ?class ?root WHERE {\n"
        f"  {values('class', [qid(c) for c in classes])}\n"
        f"  {values('root', [qid(r) for r in roots])}\n"
        "  ?class wdt:P279* ?mid .\n"
        "  ?mid wdt:P279 ?root .\n"
        "}\n"
    )


def class_reach(rows: Iterable[Binding], classes: Iterable[str], roots: Iterable[str]) -> dict[str, set[str]]:
    """class -> the roots it reaches through P279* (zero steps included), from ``class_reach_query`` rows."""
    root_set = set(roots)
    reach: dict[str, set[str]] = {c: ({c} & root_set) for c in classes}
    for row in rows:
        c, r = qid_of(row, "class"), qid_of(row, "root")
        if c and r:
            reach.setdefault(c, set()).add(r)
    return reach


def objects_query(predicate: str, subjects: Sequence[str]) -> str:
    """Step 3: every object of ``predicate`` for the kept subjects, without culture filters."""
    return PREFIXES + (
        "SELECT DISTINCT ?s ?o WHERE {\n"
        f"  {values('s', [qid(s) for s in subjects])}\n"
        f"  ?s {pid(predicate)} ?o .\n"
        "}\n"
    )


def describe_query(entities: Sequence[str], langs: Sequence[str]) -> str:
    """Step 4 in one pass: labels, aliases and gendered label forms (P2521, P3321) in ``langs`` (label
    tags: ``pt-br`` as well as ``pt``), P31 classes, P21, the life statements (P570, P20, P569) and the
    sitelink count.

    One UNION branch per property, each a ``(subject, predicate)`` index lookup for the ``VALUES``
    entities, so the cost follows the entities' own triples, not the store: the former ``?x ?p ?v`` with
    ``?p`` also bound by VALUES made pyoxigraph 0.5 scan every triple of those predicates (1.8 s on a
    2.9M-triple store for 200 entities, 0.03 s on the 39k-triple sample).
    """
    lang_list = ", ".join(lang_literal(x) for x in langs)
    branches = " UNION\n".join(f"  {{ ?x {p} ?v . BIND({p} AS ?p) }}" for p in DESCRIBE_PREDICATES)
    return PREFIXES + (
        "SELECT DISTINCT ?x ?p ?v WHERE {\n"
        f"  {values('x', [qid(e) for e in entities])}\n"
        f"{branches}\n"
        f"  FILTER(!isLiteral(?v) || LANG(?v) = \"\" || LANG(?v) IN ({lang_list}))\n"
        "}\n"
    )


def superclass_edges_query(items: Sequence[str]) -> str:
    """Step 5: the P279 edges out of a batch of items, one hop; the client walks the chains
    (``curate.augment.closure_edges``)."""
    return _parent_edges_query("P279", items)


def admin_edges_query(places: Sequence[str]) -> str:
    """Step 5: the P131 edges out of a batch of places, one hop; the client walks the chains."""
    return _parent_edges_query("P131", places)


def _parent_edges_query(prop: str, items: Sequence[str]) -> str:
    # One hop, not ``?start wdt:P279* ?sub . ?sub wdt:P279 ?super``: Virtuoso's closure from a VALUES-bound
    # start grew with exponent 1.12-1.26 against its rows from 1x to 30x (the hops: 0.80), and QLever before
    # 2026-08-20 checked a bound start of a zero-length path against the whole graph (docs/curate.md).
    return PREFIXES + (
        "SELECT DISTINCT ?sub ?super WHERE {\n"
        f"  {values('sub', [qid(x) for x in items])}\n"
        f"  ?sub wdt:{prop} ?super .\n"
        "}\n"
    )


# ---- reading result rows ----------------------------------------------------------------------

Binding = Mapping[str, Mapping[str, str]]


def iri(row: Binding, var: str) -> str | None:
    term = row.get(var)
    return term["value"] if term and term.get("type") == "uri" else None


def qid_of(row: Binding, var: str) -> str | None:
    value = iri(row, var)
    return qid_from_iri(value) if value else None


def literal(row: Binding, var: str) -> tuple[str, str] | None:
    """(text, language tag) of a literal binding, or None."""
    term = row.get(var)
    if not term or term.get("type") not in ("literal", "typed-literal"):
        return None
    return term["value"], term.get("xml:lang", "")


def countries_query() -> str:
    """Every item under Q6256 (country) at the endpoint, with its English label when it has one: what
    `factatlas cultures countries` lists (the embedded sample holds a few dozen; Wikidata some 200)."""
    return (PREFIXES + "SELECT DISTINCT ?country ?label WHERE {\n"
            "  ?country wdt:P31/wdt:P279* wd:Q6256 .\n"
            '  OPTIONAL { ?country rdfs:label ?label . FILTER(LANG(?label) = "en") }\n'
            "}")
