"""The inflection backend protocol, the feature inventory, and the per-language backend registry.

A backend turns an entity label plus the features a template slot asks for (case, number, article,
fused preposition, Korean particle) into the surface form that goes into the prompt:
``inflect(label, lang, features) -> InflectionResult | None``. ``None`` means "this backend cannot do
it"; the renderer turns that into a ``RenderFailure`` with a reason — never silently the base label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Protocol, runtime_checkable

import yaml

from factatlas.errors import ConfigError, unknown
from factatlas.records import Gender

CASES = ("nom", "gen", "dat", "acc", "ins", "loc")
NUMBERS = ("sg", "pl")
ARTICLES = ("def", "indef")
# Prepositions that fuse with the article or depend on the name (es de/a, fr de/a/en, pt de/em/a, ...;
# ru в/с: во/со before some clusters, and в or на by the place: «во Франции», «на Кубе», «со Швейцарией»;
# uk в/з: у or в, з, із or зі by the sounds around them, and в or на by the place: «в Італії», «у Франції»,
# «на Кубі», «зі Швейцарією»; he ב כ ל מ: glued to the name, ב/כ/ל absorbing its article: «במצרים»,
# «בממלכה המאוחדת», «מהממלכה המאוחדת»).
PREPOSITIONS = ("de", "a", "en", "em", "di", "in", "da", "su", "von", "zu", "an", "se", "в", "с", "з", "ב", "כ", "ל",
                "מ")
ALL_FEATURES = CASES + NUMBERS + ARTICLES + PREPOSITIONS

EXACT, GUESSED, NONE, FAILED = "exact", "guessed", "none", "failed"


@dataclass(frozen=True, slots=True)
class Features:
    """What a slot asks for. Empty = the base label."""

    case: str | None = None
    number: str | None = None
    article: str | None = None
    preposition: str | None = None
    particle: str | None = None  # Korean particle as written in the template, e.g. "은"

    @property
    def is_plain(self) -> bool:
        return not (self.case or self.number or self.article or self.preposition or self.particle)

    def describe(self) -> str:
        parts = [p for p in (self.case, self.number, self.article, self.preposition) if p]
        text = ".".join(parts)
        return text + (f"+{self.particle}" if self.particle else "")


@dataclass(frozen=True, slots=True)
class Agreement:
    """Gender and number of an entity's label in one language, and where the decision came from."""

    gender: Gender = Gender.UNKNOWN
    number: str = "sg"
    source: str = ""  # "P21", "lexicon:pymorphy3", "lexicon:table", "class-default:Q6256", "suffix:-e", ""


@dataclass(frozen=True, slots=True)
class InflectionResult:
    form: str
    status: str = EXACT  # exact | guessed | none (nothing to inflect) | failed (detail says why)
    backend: str = ""
    detail: str = ""
    # An answer-dependent word choice the backend made besides the form (ru в/на: ("lexicon", "на Кубе")),
    # recorded for the audit: (how, what)
    choice: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class InflectionRequest:
    """Everything a backend may need besides the label: the entity's agreement and semantic type."""

    agreement: Agreement = field(default_factory=Agreement)
    entity_type: str = ""  # "person", "country", "settlement", "language", "occupation", ... ("" unknown)
    sentence_initial: bool = False
    classes: tuple[str, ...] = ()  # the entity's P31 classes (ru: an island takes на)
    # the entity's lexicon entry (templates/lexicon.py: gender, article class, preposition class, forms),
    # consulted before any rule; None when the lexicon has no entry for it
    entry: Any = None
    # the text written right before the slot (uk «у»/«в» and «з»/«із»/«зі» depend on its last sound):
    # "" at the start of a sentence, None where it changes with the subject (an agreement group)
    before: str | None = ""


@runtime_checkable
class InflectionBackend(Protocol):
    name: str

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = ...) -> InflectionResult | None: ...


class IdentityBackend:
    """Languages whose templates never ask for a form (zh, ja, hi, sw ...): the label as is."""

    name = "identity"

    def inflect(self, label: str, lang: str, features: Features,
                request: InflectionRequest = InflectionRequest()) -> InflectionResult | None:
        if not features.is_plain:
            return None
        return InflectionResult(label, NONE, self.name)


# ---- the language registry (templates/data/languages.yaml) -------------------------------------

@dataclass(frozen=True, slots=True)
class LanguageSpec:
    code: str
    name: str
    backend: str  # identity | pymorphy3 | pymorphy3-uk | korean | rules | greek | hebrew | unimorph | turkish | hungarian
    features: frozenset[str]  # the slot features templates of this language may use
    unimorph: str = ""  # ISO 639-3 code of the UniMorph table when backend == unimorph (or as a fallback)
    head: str = "last"  # multiword names: which word inflects (UniMorph backend)
    options: Mapping[str, object] = field(default_factory=dict)


@cache
def language_registry() -> Mapping[str, LanguageSpec]:
    raw = yaml.safe_load(resources.files("factatlas.templates").joinpath("data/languages.yaml").read_text("utf-8"))
    out: dict[str, LanguageSpec] = {}
    for code, spec in raw["languages"].items():
        feats = frozenset(spec.get("features", ()))
        bad = feats - set(ALL_FEATURES)
        if bad:
            raise ConfigError(f"templates/data/languages.yaml: language '{code}' lists unknown features "
                              f"{sorted(bad)}; known: {', '.join(ALL_FEATURES)}")
        out[code] = LanguageSpec(code, spec["name"], spec["backend"], feats, spec.get("unimorph", ""),
                                 spec.get("head", "last"),
                                 {k: v for k, v in spec.items() if k not in
                                  ("name", "backend", "features", "unimorph", "head")})
    return out


def language_spec(lang: str) -> LanguageSpec:
    reg = language_registry()
    if lang not in reg:
        raise ConfigError(unknown("language", lang, reg) +
                          ". Add it to templates/data/languages.yaml (see docs/templates.md, 'Add a language').")
    return reg[lang]
