"""The inflection backends by name: each registers a factory that imports its module only when a language
uses it (pymorphy3 loads only for ru/uk), ``make_backend`` builds one, ``particle_inventory`` names the
affixes a backend's templates may write after '+'.

The backend modules import ``morphology`` (the protocol and the feature inventory); this module imports
them, and ``morphology`` imports none of them, so the templates' import graph has no cycle.
"""

from __future__ import annotations

from collections.abc import Callable

from factatlas.registry import Registry
from factatlas.templates.morphology import IdentityBackend, InflectionBackend

# backend name -> factory(**options), the registry shape every stage uses (factatlas.registry); each
# backend registers itself (``inflection_backend``), and languages.yaml may name only registered backends
# (tests/templates/test_templates_data.py).
BACKENDS: Registry[Callable[..., InflectionBackend]] = Registry("inflection backend")


def inflection_backend(name: str) -> Callable[[Callable[..., InflectionBackend]], Callable[..., InflectionBackend]]:
    """Register a backend factory under ``name`` (the factory imports its module lazily)."""
    def register(factory: Callable[..., InflectionBackend]) -> Callable[..., InflectionBackend]:
        return BACKENDS.register(name, factory)
    return register


def make_backend(name: str, **options) -> InflectionBackend:
    """Build a backend by its registry name (imports lazily: pymorphy3 loads only when used)."""
    return BACKENDS.get_entry(name)(**options)


@inflection_backend("identity")
def _identity(**_options) -> InflectionBackend:  # options are the UniMorph backend's
    return IdentityBackend()


@inflection_backend("pymorphy3")
def _russian(**_options) -> InflectionBackend:  # options are the UniMorph backend's
    from factatlas.templates.backend_ru import RussianBackend

    return RussianBackend()


@inflection_backend("pymorphy3-uk")
def _ukrainian(**_options) -> InflectionBackend:  # options are the UniMorph backend's
    from factatlas.templates.backend_uk import UkrainianBackend

    return UkrainianBackend()


@inflection_backend("korean")
def _korean(**_options) -> InflectionBackend:  # options are the UniMorph backend's
    from factatlas.templates.backend_ko import KoreanBackend

    return KoreanBackend()


@inflection_backend("rules")
def _rules(**_options) -> InflectionBackend:  # options are the UniMorph backend's
    from factatlas.templates.backend_rules import RulesBackend

    return RulesBackend()


@inflection_backend("greek")
def _greek(**_options) -> InflectionBackend:  # options are the UniMorph backend's
    from factatlas.templates.backend_el import GreekBackend

    return GreekBackend()


@inflection_backend("hebrew")
def _hebrew(**_options) -> InflectionBackend:  # options are the UniMorph backend's
    from factatlas.templates.backend_he import HebrewBackend

    return HebrewBackend()


@inflection_backend("unimorph")
def _unimorph(**options) -> InflectionBackend:
    from factatlas.templates.backend_unimorph import UnimorphBackend

    return UnimorphBackend(**options)


@inflection_backend("turkish")
def _turkish(**_options) -> InflectionBackend:  # options are the UniMorph backend's
    from factatlas.templates.backend_tr import TurkishBackend

    return TurkishBackend()


@inflection_backend("hungarian")
def _hungarian(**_options) -> InflectionBackend:  # options are the UniMorph backend's
    from factatlas.templates.backend_hu import HungarianBackend

    return HungarianBackend()


BACKEND_NAMES = tuple(BACKENDS)


def particle_inventory(backend: str) -> tuple[str, frozenset[str]] | None:
    """(language name, affixes) a backend's templates may write after '+' (ko particles «[X+은]», tr case
    suffixes «[Y+da]», hu case suffixes «[Y+ban]»); None for a backend that takes none."""
    if backend == "korean":
        from factatlas.templates.backend_ko import PARTICLES

        return "Korean", PARTICLES
    if backend == "turkish":
        from factatlas.templates.backend_tr import PARTICLES as TR_SUFFIXES

        return "Turkish", TR_SUFFIXES
    if backend == "hungarian":
        from factatlas.templates.backend_hu import PARTICLES as HU_SUFFIXES

        return "Hungarian", HU_SUFFIXES
    return None
