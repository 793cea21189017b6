"""The shared vocabulary: frozen records that cross stage borders.

Every stage reads and writes these (or their parquet rows, see ``factatlas.tables``); no loose dicts
travel between curate, templates, build, probe and publish.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

# Anchored with \A and \Z, not ^ and $: "$" also matches before a final newline, so "Q262\n" passed
# and reached SPARQL. Use them with ``fullmatch`` (the anchors keep a stray ``match`` safe too).
QID_RE = re.compile(r"\AQ[1-9][0-9]*\Z")
PID_RE = re.compile(r"\AP[1-9][0-9]*\Z")
# BCP-47-ish codes as Wikidata uses them for labels and Wikipedia editions: en, zh-hans, be-tarask, pt-br.
LANG_RE = re.compile(r"\A[a-z]{2,3}(-[a-z0-9]{2,8})*\Z")
# Wikipedia edition codes (the subdomain of <code>.wikipedia.org): en, zh-min-nan, be-x-old.
SITE_RE = re.compile(r"\A[a-z]{2,3}(-[a-z0-9]{1,8})*\Z")

# A culture pair's name: it names the benchmark's release configs (``<pair>.<lang>``, folders data/<pair>.<lang>/),
# which `datasets` refuses with any of <>:/\|?* in them (InvalidConfigName) and skips inside hidden folders.
# Letters, digits, '-', '_' and inner '.', starting and ending with a letter or digit: arab-west, iberia_rhine.
PAIR_NAME_RE = re.compile(r"\A[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9])?\Z")


def pair_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a culture pair (and so a release config), or None when it can."""
    if PAIR_NAME_RE.fullmatch(name) and ".." not in name:
        return None
    return (f"'{name}' is not a pair name: a release config is named '<pair>.<lang>', so a pair name holds only "
            "letters, digits, '-', '_' and inner '.' (at most 64 characters), e.g. arab-west")

# The answer slot inside a rendered cloze prompt's text. It appears exactly once.
ANSWER_MARKER = "[Y]"


def id_order(wikidata_id: str) -> tuple[int, str]:
    """Numeric order for Wikidata ids (Q2 < Q10, P17 < P131); anything else after them, by its text."""
    return (int(wikidata_id[1:]), wikidata_id) if wikidata_id[1:].isdigit() else (1 << 62, wikidata_id)


def frozen_mapping(data: Mapping | None = None) -> Mapping:
    """A read-only view of a copy of ``data`` (records are frozen all the way down)."""
    return MappingProxyType(dict(data or {}))


class Provenance(StrEnum):
    """Why an object counts as a valid answer for a fact."""

    DIRECT = "direct"  # stated in Wikidata for the subject
    SUPERCLASS = "superclass"  # a P279 superclass of a direct object
    ADMIN_ANCESTOR = "admin_ancestor"  # a P131 containing area of a direct object (places)


class Gender(StrEnum):
    MASCULINE = "masc"
    FEMININE = "fem"
    NEUTER = "neut"
    NON_BINARY = "nonbinary"  # P21 values other than male/female; templates pick a neutral form
    UNKNOWN = "unknown"


class Life(StrEnum):
    """Whether a person is alive: grammar for templates that say something in the present tense
    («X is a citizen of Y» is true only while X lives). Wikidata has no "alive" statement: a death
    (P570 date of death, P20 place of death) makes a person dead; what makes one alive is decided by
    the curate stage and recorded in ``Entity.life_source``; anything else stays unknown."""

    ALIVE = "alive"
    DEAD = "dead"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class CountryRef:
    qid: str
    label: str
    wikipedia_sites: tuple[str, ...]  # Wikipedia edition codes used for popularity: ("ar", "en", "fr")
    # Other items that stand for this country in statements about people, places and works: Dutch
    # people are citizens (P27) of the Kingdom of the Netherlands Q29999, while the culture lists Q55.
    also_matches: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MembershipRule:
    """A culture defined by a Wikidata statement: ``?country wdt:<predicate> wd:<target>``."""

    predicate: str
    target: str
    wikipedia_sites: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Culture:
    name: str  # file stem, e.g. "arab"
    label: str  # human name, e.g. "Arab League"
    countries: tuple[CountryRef, ...]  # the checked list
    membership_rule: MembershipRule | None = None
    description: str = ""

    @property
    def country_qids(self) -> tuple[str, ...]:
        return tuple(c.qid for c in self.countries)


@dataclass(frozen=True, slots=True)
class CulturePair:
    name: str  # "arab-west"
    cultures: tuple[str, str]


@dataclass(frozen=True, slots=True)
class Entity:
    qid: str
    labels: Mapping[str, str] = field(default_factory=frozen_mapping)  # lang -> label
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=frozen_mapping)  # lang -> aliases
    gender: Gender = Gender.UNKNOWN
    gender_source: str = ""  # "P21", "class-default", "lexicon", "suffix", "" when unknown
    classes: tuple[str, ...] = ()  # P31 QIDs
    sitelinks: int = 0
    # Gendered forms of the label (Wikidata P2521 "female form of label", P3321 "male form of label"),
    # lang -> text: an occupation is «actriz» for a woman and «actor» for a man. Filled for objects
    # whose label varies with the gender of the subject they are said of.
    female_labels: Mapping[str, str] = field(default_factory=frozen_mapping)
    male_labels: Mapping[str, str] = field(default_factory=frozen_mapping)
    # Life status of a person (templates agree with it: {X: alive=is | dead=was | other=...}); where it
    # came from ("P570", "P20", ...; "" when unknown).
    life: Life = Life.UNKNOWN
    life_source: str = ""

    def label(self, lang: str) -> str | None:
        return self.labels.get(lang)

    def gendered_label(self, lang: str, gender: Gender) -> str | None:
        """The P2521/P3321 form for a subject of ``gender``; None when Wikidata has none for ``lang``."""
        if gender is Gender.FEMININE:
            return self.female_labels.get(lang)
        if gender is Gender.MASCULINE:
            return self.male_labels.get(lang)
        return None


@dataclass(frozen=True, slots=True)
class ObjectRef:
    qid: str
    provenance: Provenance = Provenance.DIRECT
    via: str | None = None  # the direct object an augmented object was derived from


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact per (culture, predicate, subject); every valid object kept."""

    id: str  # fact_id(culture, predicate, subject)
    predicate: str
    subject: str
    objects: tuple[ObjectRef, ...]
    culture: str
    countries: tuple[str, ...]  # the culture's countries the subject was matched through
    popularity: float
    rank: int  # 1-based rank of the subject within (culture, predicate)
    # Knowledge locality: the Wikipedia editions (codes, see ``wikipedia_site``) with an article on the
    # subject, among the probe languages' editions and the culture's; ``home_langs``: those of the culture's
    # editions (where the subject was found). () when not curated (imports, older runs).
    article_langs: tuple[str, ...] = ()
    home_langs: tuple[str, ...] = ()

    @property
    def direct_objects(self) -> tuple[str, ...]:
        return tuple(o.qid for o in self.objects if o.provenance is Provenance.DIRECT)

    @property
    def object_qids(self) -> tuple[str, ...]:
        return tuple(o.qid for o in self.objects)


def fact_id(culture: str, predicate: str, subject: str) -> str:
    return f"{culture}:{predicate}:{subject}"


# Language codes whose Wikipedia edition is not named by the code's first subtag.
_SITE_EXCEPTIONS = {"be-tarask": "be-tarask", "zh-yue": "zh-yue", "zh-min-nan": "zh-min-nan", "yue": "zh-yue",
                    "nan": "zh-min-nan"}


def wikipedia_site(lang: str) -> str:
    """The Wikipedia edition of a label language: ``en`` -> en, ``zh-hans`` -> zh, ``pt-br`` -> pt."""
    return _SITE_EXCEPTIONS.get(lang, lang.split("-", 1)[0])


@dataclass(frozen=True, slots=True)
class Drop:
    """Every removal, anywhere: what was dropped, at which step, and why."""

    item: str  # a fact id, QID, prompt id ...
    step: str  # "candidates", "popularity", "objects", "labels", "augment", "render", "build", ...
    reason: str  # a short stable code: "no-label:ar", "type-constraint", "quota", ...
    detail: str = ""
    culture: str = ""
    predicate: str = ""
    country: str = ""


@dataclass(frozen=True, slots=True)
class RenderFailure:
    """A prompt or answer that could not be rendered (templates' renderer, the build's prompt sources)."""

    reason: str  # stable code: "no-label", "inflection-failed", ... (templates.render.FAILURE_REASONS)
    detail: str = ""

    def __bool__(self) -> bool:  # `if result:` reads as "rendered"
        return False


@dataclass(frozen=True, slots=True)
class Prompt:
    """A rendered prompt for one (fact, language, template): one row of prompts.parquet.

    Fields follow ``factatlas.tables.PROMPTS_SCHEMA``. Candidate lists are shared: predicate-wide sets
    hold thousands of QIDs, so every prompt of a (predicate, language) points at one tuple (keep it so:
    ``tables.prompt_from_row`` never copies a tuple).
    """

    prompt_id: str  # f"{fact_id}|{lang}|{template_id}"
    fact_id: str
    lang: str
    template_id: str  # language-neutral id, identical across languages: "P19/1", questions "P19/q1"
    kind: str  # "cloze" | "question"
    text: str  # cloze: contains ANSWER_MARKER exactly once
    answer_start: int  # char offset of the marker; -1 for questions
    pair: str
    culture: str
    predicate: str
    split: str
    subject_qid: str
    subject_label: str
    gold_qids: tuple[str, ...]
    gold_forms: tuple[tuple[str, ...], ...]  # parallel to gold_qids: inflected form first, base, aliases
    candidate_qids: tuple[str, ...]  # identical per (fact, template) across languages
    candidate_forms: tuple[str, ...]  # parallel: the surface form that fills the slot in this prompt
    template_status: str  # draft | reviewed
    # the fact's ``Fact.article_langs`` and ``Fact.home_langs`` (knowledge locality), repeated per prompt so
    # the released parquet can be sliced without facts.parquet
    article_langs: tuple[str, ...] = ()
    home_langs: tuple[str, ...] = ()
    # the fact's popularity (``Fact.popularity``) and its buckets (``factatlas.popbuckets``): quantile within
    # the predicate (1 least popular .. 4; 0: not measured) and PopQA's log10 bin (-1 below 1)
    popularity: float = 0.0
    popularity_quantile: int = 0
    popularity_log10: int = -1


@dataclass(frozen=True, slots=True)
class CandidateSet:
    """The candidate pool of one predicate in one language (candidates.parquet, grouped)."""

    predicate: str
    lang: str
    qids: tuple[str, ...]
    labels: tuple[str, ...]  # parallel to qids


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One scored prompt of one model: one row of rankings.parquet (``tables.RANKINGS_SCHEMA``)."""

    model: str
    scoring: str
    prompt_id: str
    fact_id: str
    lang: str
    template_id: str
    culture: str
    predicate: str
    ranked_qids: tuple[str, ...]
    scores: tuple[float, ...]  # parallel to ranked_qids, best first
    correct_at_1: bool
    prediction: str = ""  # generative modes: the decoded text
    conversation: str | None = None  # chat rules: the exact rendered conversation (canonical JSON), for audits


@dataclass(frozen=True, slots=True)
class GoldObject:
    """One valid object of a prompt and how it became valid (``Provenance``: direct | superclass | admin_ancestor)."""

    qid: str
    provenance: str = Provenance.DIRECT.value


@dataclass(frozen=True, slots=True)
class ScoredPrompt:
    """One model's answer to one prompt joined with the prompt: what every aggregate, report, analysis and
    export reads. Built only by ``factatlas.probe.aggregate.join`` (rankings ⋈ prompts); the aggregates
    of PROBING.md "Metrics" are ``factatlas.probe.aggregate.aggregate``."""

    model: str
    prompt_id: str
    fact_id: str
    lang: str
    template_id: str
    culture: str
    predicate: str
    golds: tuple[GoldObject, ...]  # the prompt's gold_qids, in order, with their provenance
    ranked: tuple[str, ...]  # candidate QIDs best first; open answers: the candidates the answer matched
    rank: int | None  # 1-based rank of the first valid object; None: none ranked (or an open answer judged wrong)
    split: str = ""
    chance: float = 0.0  # expected P@1 of a uniformly random ranking of the candidates
    candidates: tuple[str, ...] = ()  # the prompt's candidate_qids, in benchmark order (aligned across languages)
    order: tuple[int, ...] = ()  # the ranking as positions in ``candidates``, best first; () for open answers
    countries: tuple[str, ...] = ()  # the fact's countries (QIDs), as curated; () when facts were not joined
    gold_subwords: int | None = None  # subword tokens of the direct gold's slot form; None: not measured
    subject: str = ""  # the prompt's subject QID (the error taxonomy: an answer repeating the subject)
    subject_label: str = ""  # the subject as the prompt writes it
    prediction: str = ""  # open answers: the decoded text ("" for rankings)

    @property
    def top(self) -> str | None:
        return self.ranked[0] if self.ranked else None

    @property
    def correct(self) -> bool:
        return self.rank == 1

    @property
    def gold_qids(self) -> frozenset[str]:
        return frozenset(g.qid for g in self.golds)

    @property
    def direct_qids(self) -> frozenset[str]:
        return frozenset(g.qid for g in self.golds if g.provenance == Provenance.DIRECT.value)
