"""The curation steps that run on bounded sets (DLAMA's method, done properly), over any SPARQL endpoint.

Steps 1 and 2, which see every candidate of a culture's countries, are ``factatlas.curate.candidates``
(over an on-disk spill). Here, called in this order by ``curate()`` after them:

3. objects (``collect_objects``): every object of each kept subject, without culture filters.
4. labels (``label_and_type_check``): labels + aliases in every requested language, P31 classes, P21
   and sitelinks in one batched pass; objects not of the object type, facts whose subject lacks a
   label, and objects lacking one, are dropped with that reason.
5. augmentation (``augment_objects``): P279 superclasses and P131 containing areas for places (stopping
   before countries), their chains walked one hop at a time (one query per batch of each hop's new items);
   every object keeps its provenance.

and what every step shares: the checks before the steps, the cultures, ``Knowledge`` (entities and classes
learned by batched queries) and the facts' assembly.

Every dropped candidate is a ``Drop`` with its step and reason. Outputs are sorted and byte-stable.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from factatlas.curate import sparql
from factatlas.curate.augment import build_graph, closure_edges, containing_areas, superclasses
from factatlas.curate.cache import QueryRunner
from factatlas.curate.config import (
    CultureConfig,
    PredicateSpec,
    TypeSpec,
)
from factatlas.curate.life import DEFAULT_ALIVE_WITHIN_YEARS, life_status
from factatlas.curate.runtypes import Candidate, first_country
from factatlas.errors import ConfigError
from factatlas.locales import label_tags, query_tags
from factatlas.records import (
    CountryRef,
    Culture,
    Drop,
    Entity,
    Fact,
    Gender,
    ObjectRef,
    Provenance,
    fact_id,
    frozen_mapping,
    id_order,
)

if TYPE_CHECKING:
    from factatlas.curate.runtypes import CurationConfig

COUNTRY_CLASS = "Q6256"
GENDER_BY_P21 = {
    "Q6581097": Gender.MASCULINE,  # male
    "Q6581072": Gender.FEMININE,  # female
    "Q1052281": Gender.FEMININE,  # trans woman
    "Q2449503": Gender.MASCULINE,  # trans man
}

# ---- entity knowledge gathered along the way --------------------------------------------------


@dataclass
class EntityInfo:
    labels: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    aliases: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    classes: set[str] = field(default_factory=set)
    p21: set[str] = field(default_factory=set)
    female: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # P2521 per language
    male: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # P3321 per language
    sitelinks: int = 0
    described: bool = False
    # life status (curate/life.py): P570 dates of death (an unknown value too), P20 places, P569 dates of birth
    deaths: set[str] = field(default_factory=set)
    death_places: set[str] = field(default_factory=set)
    births: set[str] = field(default_factory=set)

    def label(self, lang: str) -> str | None:
        """The label in ``lang``, from its first label tag that has one (pt: ``pt-br``, then ``pt``;
        ``factatlas/locales.yaml``); several values under one tag (rare): the smallest, so reruns agree."""
        return _by_tag(self.labels, lang)

    def to_entity(self, qid: str, langs: Sequence[str], reference: date | None = None,
                  alive_within_years: int = DEFAULT_ALIVE_WITHIN_YEARS) -> Entity:
        labels = {x: self.label(x) for x in langs if self.label(x)}
        aliases = {}
        for x in langs:
            # the aliases under the tag the label came from (pt-br's, or pt's where pt-br has no label):
            # another variant's names are not answers in this one
            tag = next((t for t in label_tags(x) if self.labels.get(t)), x)
            found = self.aliases.get(tag, set()) - {labels.get(x)}
            if found:
                aliases[x] = tuple(sorted(found))
        gender, source = Gender.UNKNOWN, ""
        if self.p21:
            genders = {GENDER_BY_P21.get(v, Gender.NON_BINARY) for v in self.p21}
            gender, source = (genders.pop() if len(genders) == 1 else Gender.NON_BINARY), "P21"
        female = {x: f for x in langs if (f := _by_tag(self.female, x))}
        male = {x: m for x in langs if (m := _by_tag(self.male, x))}
        life, life_source = life_status(sorted(self.deaths), sorted(self.death_places), sorted(self.births),
                                        reference or date.today(), alive_within_years)
        return Entity(qid, frozen_mapping(labels), frozen_mapping(aliases), gender, source,
                      tuple(sorted(self.classes, key=id_order)), self.sitelinks, frozen_mapping(female),
                      frozen_mapping(male), life, life_source)


def _by_tag(values: Mapping[str, set[str]], lang: str) -> str | None:
    """The smallest value under the first of the language's label tags that has one."""
    return next((min(values[t]) for t in label_tags(lang) if values.get(t)), None)


class Knowledge:
    """What the run learned about entities and classes, filled by batched queries."""

    def __init__(self, runner: QueryRunner, langs: Sequence[str], roots: Iterable[str], batch_size: int):
        self.runner, self.langs, self.batch = runner, tuple(langs), batch_size
        self.tags = query_tags(self.langs)  # the label tags asked for (pt: pt-br and pt)
        self.roots = tuple(sorted(set(roots), key=id_order))
        self.info: dict[str, EntityInfo] = defaultdict(EntityInfo)
        self.reach: dict[str, set[str]] = {}

    def describe(self, qids: Iterable[str]) -> None:
        todo = sorted({q for q in qids if not self.info[q].described}, key=id_order)
        if not todo:
            return
        rows = self.runner.select_batched("describe", todo, lambda b: sparql.describe_query(b, self.tags),
                                          self.batch)
        for q in todo:
            info = self.info[q]
            info.described = True
            info.classes.clear()  # the describe pass is authoritative for P31
        for row in rows:
            x, p = sparql.qid_of(row, "x"), sparql.iri(row, "p")
            if x is None or p is None:
                continue
            info = self.info[x]
            if p.endswith("#label") or p.endswith("/core#altLabel"):
                lit = sparql.literal(row, "v")
                if lit and lit[1] in self.tags:
                    (info.labels if p.endswith("#label") else info.aliases)[lit[1]].add(lit[0])
            elif p == sparql.WDT + "P31":
                v = sparql.qid_of(row, "v")
                if v:
                    info.classes.add(v)
            elif p == sparql.WDT + "P21":
                v = sparql.qid_of(row, "v")
                if v:
                    info.p21.add(v)
            elif p in (sparql.WDT + "P2521", sparql.WDT + "P3321"):
                lit = sparql.literal(row, "v")
                if lit and lit[1] in self.tags:
                    (info.female if p.endswith("P2521") else info.male)[lit[1]].add(lit[0])
            elif p == sparql.WDT + "P570":  # any value, an unknown one (a blank node) included
                info.deaths.add(row["v"].get("value", ""))
            elif p == sparql.WDT + "P20":
                info.death_places.add(row["v"].get("value", ""))
            elif p == sparql.WDT + "P569":
                lit = sparql.literal(row, "v")
                if lit:
                    info.births.add(lit[0])
            elif p.endswith("#sitelinks"):
                lit = sparql.literal(row, "v")
                if lit and lit[0].lstrip("-").isdigit():
                    info.sitelinks = int(lit[0])
        self.ensure_classes(c for q in todo for c in self.info[q].classes)

    def ensure_classes(self, classes: Iterable[str]) -> None:
        todo = sorted({c for c in classes if c not in self.reach}, key=id_order)
        if not todo:
            return
        rows = self.runner.select_batched("class-reach", todo,
                                          lambda b: sparql.class_reach_query(b, self.roots), self.batch)
        self.reach.update(sparql.class_reach(rows, todo, self.roots))

    def type_check(self, qid: str, spec: TypeSpec, classes: Iterable[str] | None = None) -> str | None:
        """None when ``qid`` has type ``spec``; otherwise why not. ``classes``: its P31 classes when the run
        holds them elsewhere (step 1's spill), else what ``describe`` learned."""
        if qid in spec.exclude_items:
            return f"{qid} is listed in exclude_items of type '{spec.name}'"
        classes = sorted(self.info[qid].classes if classes is None else set(classes), key=id_order)
        if not classes:
            return f"{qid} has no P31 class (type '{spec.name}' needs one)"
        for c in classes:
            bad = self.reach.get(c, set()) & set(spec.exclude)
            if bad:
                return f"{qid} is a {c}, under {min(bad, key=id_order)} which type '{spec.name}' excludes"
        if any(self.reach.get(c, set()) & set(spec.classes) for c in classes):
            return None
        return f"{qid} (P31 {', '.join(classes[:3])}) does not have type '{spec.name}'"

    def is_country(self, qid: str) -> bool:
        return any(COUNTRY_CLASS in self.reach.get(c, set()) for c in self.info[qid].classes)


# ---- before the steps: checks and cultures ----------------------------------------------------


def check_label_languages(langs: Sequence[str], culture_configs: Sequence[CultureConfig], runner: QueryRunner,
                          endpoint_id: str) -> None:
    """Refuse a label language that none of the pair's listed countries has a label in (a typo such as
    ``xx``, or a language the endpoint does not hold), before any curation query: it would otherwise
    drop every fact one by one."""
    countries = sorted({q for cc in culture_configs for q in cc.culture.country_qids}, key=id_order)
    if not countries:
        return
    rows = runner.select("label-languages", sparql.label_languages_query(countries, langs))
    seen = {lit[1] for row in rows if (lit := sparql.literal(row, "label"))}
    missing = [x for x in langs if x not in seen]
    if missing:
        raise ConfigError(f"--langs: no label in {', '.join(repr(x) for x in missing)} for any of the pair's "
                          f"{len(countries)} countries at {endpoint_id}; check the language code (labels found "
                          f"in: {', '.join(sorted(seen)) or 'none of the requested languages'})")


def check_countries(cultures: Mapping[str, Culture], know: Knowledge) -> list[str]:
    """Each culture's countries as the endpoint knows them: a warning per item it does not hold at all (a
    typo in a QID) and per item that is not a country (Q90, Paris, listed as a country). Warnings, not
    errors: a culture may list a stand-in on purpose (a territory, a historical state)."""
    know.describe(c.qid for culture in cultures.values() for c in culture.countries)
    out = []
    for name, culture in sorted(cultures.items()):
        for country in culture.countries:
            issue = country_issue(country.qid, know)
            if issue:
                also = "; subjects are matched through it all the same" if know.info[country.qid].classes else ""
                out.append(f"culture {name}: {country.qid} ({country.label}) {issue}{also}")
    return out


def country_issue(qid: str, know: Knowledge) -> str | None:
    """Why a described item cannot stand for a country (unknown at the endpoint, or not under Q6256); None
    when it is a country."""
    info = know.info[qid]
    if not info.classes and not any(info.labels.values()):
        return "is unknown at this endpoint (no label, no P31); check the QID"
    if not know.is_country(qid):
        classes = ", ".join(sorted(info.classes, key=id_order)[:3]) or "none"
        return f"is not a country here (P31 {classes}, not under {COUNTRY_CLASS})"
    return None


def resolve_cultures(pair_name: str, culture_configs: Sequence[CultureConfig], runner: QueryRunner,
                     know: Knowledge) -> tuple[dict[str, Culture], dict[str, Any]]:
    """The pair's cultures with membership rules resolved (pinned for the manifest) and labelled."""
    cultures: dict[str, Culture] = {}
    membership: dict[str, Any] = {}
    for cc in culture_configs:
        culture, pinned = resolve_culture(cc, runner)
        cultures[culture.name] = culture
        if pinned:
            membership[culture.name] = pinned
    if len(cultures) != 2:
        raise ConfigError(f"pair {pair_name}: the two cultures must have different names")
    return _label_added_countries(cultures, know), membership


# ---- the five steps ---------------------------------------------------------------------------

def collect_objects(specs: Mapping[str, PredicateSpec], kept: Mapping[tuple[str, str], list[Candidate]],
                    runner: QueryRunner, batch_size: int, drops: list[Drop]) -> dict[tuple[str, str], dict[str, list[str]]]:
    """Step 3: every item object of each kept subject, without culture filters; literal objects are
    dropped (``objects/object-not-item``). The object type check needs P31, so it runs in step 4."""
    direct: dict[tuple[str, str], dict[str, list[str]]] = {}
    for pid_ in specs:
        subjects = sorted({c.qid for (_, p), cs in kept.items() if p == pid_ for c in cs}, key=id_order)
        rows = runner.select_batched(f"objects:{pid_}", subjects,
                                     lambda b, pid_=pid_: sparql.objects_query(pid_, b), batch_size)
        objects: dict[str, set[str]] = defaultdict(set)
        non_items: dict[str, set[str]] = defaultdict(set)
        for row in rows:
            s = sparql.qid_of(row, "s")
            o = sparql.qid_of(row, "o")
            if s and o:
                objects[s].add(o)
            elif s:
                non_items[s].add(row.get("o", {}).get("value", "?"))
        for (cname, p), cs in kept.items():
            if p != pid_:
                continue
            for c in cs:
                fid = fact_id(cname, pid_, c.qid)
                for v in sorted(non_items.get(c.qid, ())):
                    drops.append(Drop(fid, "objects", "object-not-item", f"object {v} is not a Wikidata item",
                                      cname, pid_, first_country(c)))
            direct[(cname, pid_)] = {c.qid: sorted(objects.get(c.qid, ()), key=id_order) for c in cs}
    return direct


def label_and_type_check(langs: Sequence[str], specs: Mapping[str, PredicateSpec],
                         kept: Mapping[tuple[str, str], list[Candidate]],
                         direct: Mapping[tuple[str, str], Mapping[str, list[str]]], know: Knowledge,
                         drops: list[Drop]) -> dict[tuple[str, str], dict[str, list[str]]]:
    """Step 4: one batched pass for labels, aliases, P31, P21 and sitelinks of every subject and object;
    then objects not of the object type (``objects/object-type``, ``objects/no-valid-object``) and
    anything without a label in a requested language (``labels/no-label:<lang>``) are dropped."""
    know.describe({q for d in direct.values() for s, os_ in d.items() for q in (s, *os_)})
    valid: dict[tuple[str, str], dict[str, list[str]]] = {}
    cand_by_key = {key: {c.qid: c for c in cs} for key, cs in kept.items()}
    for key, per_subject in direct.items():
        cname, pid_ = key
        spec = specs[pid_]
        valid[key] = {}
        for s, objs in per_subject.items():
            cand = cand_by_key[key][s]
            fid, country = fact_id(cname, pid_, s), first_country(cand)
            if not objs:
                drops.append(Drop(fid, "objects", "no-object", f"{s} has no item object for {pid_}", cname, pid_,
                                  country))
                continue
            typed = []
            for o in objs:
                why = know.type_check(o, spec.object_type)
                if why:
                    drops.append(Drop(fid, "objects", "object-type", why, cname, pid_, country))
                else:
                    typed.append(o)
            if not typed:
                drops.append(Drop(fid, "objects", "no-valid-object",
                                  f"none of {', '.join(objs)} has type '{spec.object_type.name}'", cname, pid_, country))
                continue
            missing = [x for x in langs if not know.info[s].label(x)]
            if missing:
                drops.append(Drop(fid, "labels", f"no-label:{missing[0]}",
                                  f"subject {s} has no label in {', '.join(missing)}", cname, pid_, country))
                continue
            labelled = []
            for o in typed:
                lacking = [x for x in langs if not know.info[o].label(x)]
                if lacking:
                    drops.append(Drop(fid, "labels", f"no-label:{lacking[0]}",
                                      f"object {o} has no label in {', '.join(lacking)}", cname, pid_, country))
                else:
                    labelled.append(o)
            if not labelled:
                drops.append(Drop(fid, "labels", "no-labelled-object",
                                  "every valid object lacks a label in some requested language", cname, pid_,
                                  country))
                continue
            valid[key][s] = labelled
    return valid


def assemble_facts(kept: Mapping[tuple[str, str], list[Candidate]],
                   valid: Mapping[tuple[str, str], Mapping[str, list[str]]],
                   augmented: Mapping[tuple[str, str], Mapping[str, list[tuple[str, Provenance, str]]]],
                   articles: Mapping[str, Sequence[str]] | None = None) -> list[Fact]:
    """One fact per surviving (culture, predicate, subject): direct objects, then augmented ones; with
    ``articles`` (subject -> editions with an article) the fact's knowledge locality: ``home_langs`` are the
    culture's editions the subject was found in (step 1), ``article_langs`` those plus ``articles``."""
    facts: list[Fact] = []
    cand_by_key = {key: {c.qid: c for c in cs} for key, cs in kept.items()}
    for key, per_subject in valid.items():
        cname, pid_ = key
        rank = {c.qid: i for i, c in enumerate(kept[key], start=1)}
        for s, objs in per_subject.items():
            cand = cand_by_key[key][s]
            refs = [ObjectRef(o, Provenance.DIRECT) for o in objs]
            for extra, prov, via in augmented.get(key, {}).get(s, []):
                refs.append(ObjectRef(extra, prov, via))
            home = tuple(sorted({site for site, _ in cand.articles})) if articles is not None else ()
            found = tuple(sorted({*home, *articles.get(s, ())})) if articles is not None else ()
            facts.append(Fact(fact_id(cname, pid_, s), pid_, s, tuple(refs), cname,
                              tuple(sorted(cand.countries, key=id_order)), cand.popularity, rank[s], found, home))
    facts.sort(key=lambda f: f.id)
    return facts


# ---- helpers ----------------------------------------------------------------------------------


def resolve_culture(cc: CultureConfig, runner: QueryRunner) -> tuple[Culture, dict[str, Any]]:
    """Resolve a membership rule (pinned in the manifest) and compare it with the checked list."""
    culture, rule = cc.culture, cc.culture.membership_rule
    if rule is None:
        return culture, {}
    rows = runner.select("membership", sparql.membership_query(rule.predicate, rule.target))
    resolved = sorted({q for r in rows if (q := sparql.qid_of(r, "country"))}, key=id_order)
    listed = list(culture.country_qids)
    pinned: dict[str, Any] = {
        "rule": f"?country wdt:{rule.predicate} wd:{rule.target}",
        "use": cc.membership_use,
        "resolved": resolved,
        "checked_list": listed,
        "only_in_rule": [q for q in resolved if q not in listed],
        "only_in_list": [q for q in listed if q not in resolved],
    }
    if cc.membership_use == "list":
        return culture, pinned
    if not resolved:
        pinned["fallback"] = "the rule resolved to no country at this endpoint; curated the checked list"
        return culture, pinned
    by_qid = {c.qid: c for c in culture.countries}
    countries = tuple(by_qid.get(q) or CountryRef(q, q, rule.wikipedia_sites or ("en",)) for q in resolved)
    return Culture(culture.name, culture.label, countries, rule, culture.description), pinned


def _label_added_countries(cultures: dict[str, Culture], know: Knowledge) -> dict[str, Culture]:
    """Countries a membership rule added beyond the checked list carry only a QID: label them."""
    unlabelled = [c.qid for cul in cultures.values() for c in cul.countries if c.label == c.qid]
    if not unlabelled:
        return cultures
    know.describe(unlabelled)
    out = {}
    for name, cul in cultures.items():
        countries = tuple(
            CountryRef(c.qid, next((lb for x in know.langs if (lb := know.info[c.qid].label(x))), c.qid),
                       c.wikipedia_sites) if c.label == c.qid else c
            for c in cul.countries)
        out[name] = Culture(cul.name, cul.label, countries, cul.membership_rule, cul.description)
    return out


def augment_objects(specs: Mapping[str, PredicateSpec], valid: Mapping[tuple[str, str], Mapping[str, list[str]]],
             cultures: Mapping[str, Culture], runner: QueryRunner, know: Knowledge, config: CurationConfig,
             drops: list[Drop]) -> dict[tuple[str, str], dict[str, list[tuple[str, Provenance, str]]]]:
    """Step 5: (culture, predicate) -> subject -> [(object, provenance, via)] for augmented objects:
    P279 superclasses of the object type, P131 containing areas stopping before any country."""
    pools: dict[str, set[str]] = {"superclass": set(), "admin": set()}
    for (_, pid_), per_subject in valid.items():
        mode = specs[pid_].augment
        if mode in pools:
            pools[mode].update(o for objs in per_subject.values() for o in objs)
    graphs = {}
    for mode, build in (("superclass", sparql.superclass_edges_query), ("admin", sparql.admin_edges_query)):
        def parent_edges(items: Sequence[str], mode=mode, build=build) -> list[tuple[str, str]]:
            rows = runner.select_batched(f"augment:{mode}", items, build, config.batch_size)
            return [(a, b) for r in rows if (a := sparql.qid_of(r, "sub")) and (b := sparql.qid_of(r, "super"))]

        graphs[mode] = build_graph(closure_edges(sorted(pools[mode], key=id_order), parent_edges))
    know.describe(n for g in graphs.values() for n in g.nodes)

    culture_countries = {q for c in cultures.values() for q in c.country_qids}

    def is_country(q: str) -> bool:
        return q in culture_countries or know.is_country(q)

    out: dict[tuple[str, str], dict[str, list[tuple[str, Provenance, str]]]] = {}
    rejected: set[tuple[str, str, str]] = set()
    for key, per_subject in valid.items():
        cname, pid_ = key
        spec = specs[pid_]
        if spec.augment not in pools:
            continue
        out[key] = {}
        for s, objs in per_subject.items():
            extra: dict[str, str] = {}
            for o in objs:
                if spec.augment == "superclass":
                    ups, prov = superclasses(graphs["superclass"], o), Provenance.SUPERCLASS
                else:
                    ups, prov = containing_areas(graphs["admin"], o, is_country), Provenance.ADMIN_ANCESTOR
                for up in ups:
                    if up in objs or up in extra:
                        continue
                    why = know.type_check(up, spec.object_type) if spec.augment == "superclass" else None
                    lacking = [x for x in config.langs if not know.info[up].label(x)]
                    if why or lacking:
                        reason = "superclass-type" if why else f"no-label:{lacking[0]}"
                        if (cname, pid_, up + reason) not in rejected:
                            rejected.add((cname, pid_, up + reason))
                            drops.append(Drop(up, "augment", reason,
                                              why or f"{up} has no label in {', '.join(lacking)}", cname, pid_))
                        continue
                    extra[up] = o
            out[key][s] = [(q, prov, extra[q]) for q in sorted(extra, key=id_order)]
    return out
