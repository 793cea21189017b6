"""A language's written variant, declared once (``factatlas/locales.yaml``) and read by every stage.

Curate takes a language's labels (and aliases, gendered forms) from the Wikidata label tags
``label_tags(lang)`` in that order of preference (pt: ``pt-br`` before ``pt``); the templates of the
language are written in ``variant(lang)``; the population counter of mixed locale forms reads the same
declaration (``templates/data/locale_forms.yaml`` holds the other variant's forms)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from factatlas.errors import ConfigError

LOCALES_FILE = Path(__file__).resolve().parent / "locales.yaml"
_TAG = re.compile(r"[a-z]{2,3}(-[a-z0-9]{2,8})*")


@dataclass(frozen=True, slots=True)
class Locale:
    lang: str
    variant: str  # BCP 47, e.g. pt-BR
    label_tags: tuple[str, ...]  # Wikidata label tags, preferred first


@cache
def locales(path: str | None = None) -> Mapping[str, Locale]:
    from factatlas.yamlfile import load_located

    file = Path(path) if path else LOCALES_FILE
    raw = load_located(file).data or {}
    out: dict[str, Locale] = {}
    for lang, spec in raw.items():
        where = f"{file}: {lang}"
        if not isinstance(spec, dict) or set(spec) != {"variant", "label_tags"}:
            raise ConfigError(f"{where}: give exactly 'variant' and 'label_tags'")
        tags = tuple(str(t) for t in spec["label_tags"])
        if not tags or any(not _TAG.fullmatch(t) for t in tags) or lang not in tags:
            raise ConfigError(f"{where}: label_tags must be Wikidata language tags and include '{lang}' itself "
                              f"(its fallback), got {list(tags)}")
        out[str(lang)] = Locale(str(lang), str(spec["variant"]), tags)
    return out


def label_tags(lang: str) -> tuple[str, ...]:
    """The Wikidata label tags a language's labels come from, preferred first (``("pt-br", "pt")``)."""
    loc = locales().get(lang)
    return loc.label_tags if loc else (lang,)


def variant(lang: str) -> str:
    """The written variant of a language's benchmark text (``pt-BR``); the code itself when it has one."""
    loc = locales().get(lang)
    return loc.variant if loc else lang


def query_tags(langs: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Every label tag to ask an endpoint for, for these languages (each language's tags, in order)."""
    return tuple(dict.fromkeys(t for lang in langs for t in label_tags(lang)))
