"""DLAMA's Western-share audit of a benchmark (Keleg & Magdy 2023, §3.1 and Table A1), imports included.

Each fact's subject countries are classified by culture (the culture files' country lists, ``also_matches``
included); a fact is *Western* when one of its countries belongs to the Western culture, *non-Western*
when its countries are known and none does, *unknown* when no country is known. Per predicate the share
is Western / (Western + non-Western); ``all`` pools the facts (micro).

Where a fact's countries come from, first that applies (counted per source):
- ``fact``: the fact's own ``countries`` (a built benchmark; a DLAMA import);
- ``table``: a subject -> countries table given by the user (``--subject-countries``, TSV ``QID<TAB>Q1,Q2``);
- ``subject``: the predicate's subject is a country (``culture: {side: subject}`` without ``via`` in
  predicates.yaml: P30, P36, P37, P47, P530) and the subject is a country of one of the cultures;
- ``object``: the predicate's object is the subject's country (``culture: {side: object}`` without
  ``via``: P17, P27, P495, P1376), the fact's direct objects that are countries of one of the cultures.
The two derivations need the QID to be a listed country because an import's subjects are not typed (T-REx's
P30 subjects are mountains and rivers as well as countries): a country outside every culture file stays
*unknown* there (counted as ``unlisted``), while a country named by the fact or the table and outside the
Western list is non-Western.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from factatlas.errors import ConfigError
from factatlas.predicates import PredicateSpec
from factatlas.records import Culture, Fact, id_order

WESTERN, NON_WESTERN, UNKNOWN = "western", "non-western", "unknown"


def country_cultures(cultures: Iterable[Culture]) -> dict[str, frozenset[str]]:
    """Country QID (and every QID that stands for it) -> the cultures listing it."""
    out: dict[str, set[str]] = defaultdict(set)
    for c in cultures:
        for country in c.countries:
            for q in (country.qid, *country.also_matches):
                out[q].add(c.name)
    return {q: frozenset(v) for q, v in out.items()}


def subject_countries(fact: Fact, spec: PredicateSpec | None, table: Mapping[str, tuple[str, ...]],
                      listed: Container[str] = ()) -> tuple[tuple[str, ...], str]:
    """(countries, source) of a fact's subject; ((), "") when nothing tells, ((), "unlisted") when the
    predicate names a country side but its QIDs are no listed country."""
    if fact.countries:
        return tuple(fact.countries), "fact"
    if fact.subject in table:
        return table[fact.subject], "table"
    if spec is not None and spec.culture_filter.via is None:
        side = (fact.subject,) if spec.culture_filter.side == "subject" else fact.direct_objects
        found = tuple(q for q in side if q in listed)
        return (found, spec.culture_filter.side) if found else ((), "unlisted")
    return (), ""


def classify(countries: Iterable[str], cultures_of: Mapping[str, frozenset[str]], western: str) -> str:
    countries = tuple(countries)
    if not countries:
        return UNKNOWN
    return WESTERN if any(western in cultures_of.get(q, ()) for q in countries) else NON_WESTERN


@dataclass(frozen=True, slots=True)
class PredicateShare:
    predicate: str  # or "all"
    facts: int
    western: int
    non_western: int
    unknown: int
    sources: Mapping[str, int]  # where the countries came from: fact | table | subject | object

    @property
    def share(self) -> float | None:
        """Western / (Western + non-Western); None when no fact's countries are known."""
        known = self.western + self.non_western
        return self.western / known if known else None


def western_share(facts: Iterable[Fact], specs: Mapping[str, PredicateSpec], cultures: Iterable[Culture],
                  western: str, table: Mapping[str, tuple[str, ...]] | None = None) -> list[PredicateShare]:
    """Per predicate (natural PID order) and ``all`` (pooled facts): the audit's counts."""
    cultures = list(cultures)
    if western not in {c.name for c in cultures}:
        raise ConfigError(f"western culture '{western}' is not among the cultures {sorted(c.name for c in cultures)}")
    cultures_of = country_cultures(cultures)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for f in facts:
        countries, source = subject_countries(f, specs.get(f.predicate), table or {}, cultures_of)
        kind = classify(countries, cultures_of, western)
        for key in (f.predicate, "all"):
            counts[key][kind] += 1
            if source:
                counts[key][f"source:{source}"] += 1
    order = sorted(counts, key=lambda p: (p == "all", id_order(p)))
    return [PredicateShare(p, sum(counts[p][k] for k in (WESTERN, NON_WESTERN, UNKNOWN)), counts[p][WESTERN],
                           counts[p][NON_WESTERN], counts[p][UNKNOWN],
                           {k.split(":", 1)[1]: v for k, v in sorted(counts[p].items()) if k.startswith("source:")})
            for p in order]


def read_subject_countries(path: Path) -> dict[str, tuple[str, ...]]:
    """``QID<TAB>Q1,Q2`` per line (``#`` comments and blank lines skipped); errors name ``path:line``."""
    from factatlas.records import QID_RE

    out: dict[str, tuple[str, ...]] = {}
    try:
        lines = path.read_text("utf-8").splitlines()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the subject countries table ({e.strerror})") from e
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        subject, _, rest = line.partition("\t")
        countries = tuple(x.strip() for x in rest.split(",") if x.strip())
        if not QID_RE.fullmatch(subject.strip()) or not countries or not all(QID_RE.fullmatch(q) for q in countries):
            raise ConfigError(f"{path}:{n}:1: expected SUBJECT_QID<TAB>COUNTRY_QID[,COUNTRY_QID...], got {line!r}")
        out[subject.strip()] = countries
    return out


GLOBAL = "global"


def cultures_from_countries(facts: Iterable[Fact], specs: Mapping[str, PredicateSpec], cultures: Iterable[Culture],
                            table: Mapping[str, tuple[str, ...]] | None = None) -> tuple[list[Fact], Counter[str]]:
    """An import's ``global`` facts moved to the culture of their subject's countries (``subject_countries``)
    when those countries belong to exactly one of ``cultures``; the fact id follows its culture. Counted
    by outcome: ``assigned:<culture>``, ``kept-global:no-country``, ``kept-global:several-cultures``."""
    from factatlas.records import fact_id

    cultures_of = country_cultures(cultures)
    out, counts = [], Counter()
    for f in facts:
        if f.culture != GLOBAL:
            out.append(f)
            continue
        countries, _ = subject_countries(f, specs.get(f.predicate), table or {}, cultures_of)
        owners = frozenset().union(*(cultures_of.get(q, frozenset()) for q in countries))
        if len(owners) != 1:
            counts["kept-global:" + ("no-country" if not owners else "several-cultures")] += 1
            out.append(f)
            continue
        (culture,) = owners
        counts[f"assigned:{culture}"] += 1
        out.append(Fact(fact_id(culture, f.predicate, f.subject), f.predicate, f.subject, f.objects, culture,
                        tuple(q for q in countries if culture in cultures_of.get(q, ())), f.popularity, f.rank))
    return out, counts


def countries_by_label(cultures: Iterable[Culture]) -> dict[str, str]:
    """Casefolded English label of every listed country (the culture files' ``label``) -> its QID."""
    return {c.label.casefold(): c.qid for culture in cultures for c in culture.countries}


def cultures_from_country_labels(facts: Iterable[Fact], english_labels: Mapping[str, str],
                                 specs: Mapping[str, PredicateSpec], cultures: Iterable[Culture]
                                 ) -> tuple[list[Fact], Counter[str]]:
    """For imports whose entities are no Wikidata items (BMLAMA's are hashes of their labels): an entity is
    a listed country when its English label is a culture file's label of that country (casefolded, nothing
    fuzzier). A subject's countries are those its facts name on a country side (predicates.yaml ``culture``
    without ``via``: the subject itself for P30, P36, P37, P47, P530; the objects for P17, P27, P495,
    P1376), pooled over every fact of the subject, so a city that is some country's capital (P1376) has
    that country in its twin-city (P190) facts too. A ``global`` fact whose subject's countries belong to
    exactly one of ``cultures`` takes that culture and those countries; its id is kept (an import's ids
    name its rows). Counted as ``cultures_from_countries`` counts."""
    cultures = tuple(cultures)
    by_label = countries_by_label(cultures)
    cultures_of = country_cultures(cultures)
    facts = list(facts)

    def listed(qids: Iterable[str]) -> tuple[str, ...]:
        return tuple(q for q in (by_label.get(english_labels.get(e, "").casefold()) for e in qids) if q)

    known: dict[str, set[str]] = defaultdict(set)
    for f in facts:
        spec = specs.get(f.predicate)
        if spec is None or spec.culture_filter.via is not None:
            continue
        side = (f.subject,) if spec.culture_filter.side == "subject" else f.direct_objects
        known[f.subject].update(listed(side))
    out, counts = [], Counter()
    for f in facts:
        countries = tuple(sorted(known.get(f.subject, ()), key=id_order))
        owners = frozenset().union(*(cultures_of.get(q, frozenset()) for q in countries))
        if f.culture != GLOBAL or len(owners) != 1:
            if f.culture == GLOBAL:
                counts["kept-global:" + ("no-country" if not owners else "several-cultures")] += 1
            out.append(f)
            continue
        (culture,) = owners
        counts[f"assigned:{culture}"] += 1
        out.append(dataclasses.replace(f, culture=culture, countries=countries))
    return out, counts
