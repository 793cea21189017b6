"""Which label names an entity in a sentence, and how a language writes it: without a trailing Wikipedia
disambiguator (``clean_label``), the gendered form that agrees with the subject (``gendered_label``), a work's
title in the language's title marks and named by its kind (``title_quotes`` etc. in languages.yaml)."""

from __future__ import annotations

import re

from factatlas.records import Entity, Gender
from factatlas.templates.morphology import CASES, language_registry

# A Wikipedia disambiguator at the end of a label: «Australia (continente)», «Saint-Marin (ville)»,
# «도하 (자치체)». Labels keep it in the data; sentences and fillers never show it.
_DISAMBIGUATOR = re.compile(r"\s*[(（][^()（）]+[)）]$")


def clean_label(label: str) -> str:
    """``label`` as a speaker writes it: without a trailing Wikipedia disambiguator."""
    cleaned = _DISAMBIGUATOR.sub("", label)
    return cleaned if cleaned.strip() else label


# Why a gendered object fell back to its plain label (counted per language in build stats).
GENDER_FALLBACKS = ("no-female-form", "no-male-form", "subject-gender-unknown", "subject-nonbinary")


def gendered_label(obj: Entity, lang: str, subject: Entity | None) -> tuple[str | None, str]:
    """The label of ``obj`` that agrees with ``subject``'s gender, and where it came from.

    Only objects whose label varies with gender (Wikidata P2521/P3321 in some language, such as
    occupations) are concerned; for them a missing form is a counted fallback, never silent:
    («Shakira est chanteuse», «Beyoncé работает певицей»).
    """
    label = obj.labels.get(lang)
    if not (obj.female_labels or obj.male_labels):
        return label, "label"
    gender = subject.gender if subject is not None else Gender.UNKNOWN
    if gender is Gender.FEMININE:
        form = obj.female_labels.get(lang)
        return (form, "P2521") if form else (label, "label:no-female-form")
    if gender is Gender.MASCULINE:
        form = obj.male_labels.get(lang)
        # the plain label is the masculine form wherever P3321 is absent (Wikidata's convention)
        return (form, "P3321") if form else (label, "label")
    if gender is Gender.NON_BINARY:
        return label, "label:subject-nonbinary"
    return label, "label:subject-gender-unknown"


def disambiguator_as_head(lang: str) -> bool:
    spec = language_registry().get(lang)
    return bool(spec and spec.options.get("disambiguator_as_head"))


def title_quotes(lang: str) -> tuple[str, str] | None:
    spec = language_registry().get(lang)
    quotes = spec.options.get("title_quotes") if spec else None
    return (quotes[0], quotes[1]) if quotes else None


def title_quotes_before_particle(lang: str) -> bool:
    spec = language_registry().get(lang)
    return bool(spec and spec.options.get("title_quotes_before_particle"))


def title_noun_always(lang: str) -> bool:
    spec = language_registry().get(lang)
    return bool(spec and spec.options.get("title_noun_in_nominative"))


def title_noun(lang: str, classes: tuple[str, ...], case: str) -> str | None:
    """The noun naming a work's kind in ``case`` (ru `title_nouns`: Q11424 film -> «фильма» in gen)."""
    spec = language_registry().get(lang)
    nouns = spec.options.get("title_nouns", {}) if spec else {}
    for q in classes:
        forms = nouns.get(q)
        if isinstance(forms, str):  # a language without case names the kind in one form (vi «phim»)
            return forms
        if forms and case in CASES:
            return forms[CASES.index(case)]
    return None
