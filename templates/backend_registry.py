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


@inflection_backend("unimorph")
def _unimorph(**options) -> InflectionBackend:
    from factatlas.templates.backend_unimorph import UnimorphBackend

    return UnimorphBackend(**options)


# backend name -> (module of factatlas.templates, class): built without options (the options a language may
# give are the UniMorph backend's), the module imported when a language first uses the backend
LAZY_BACKENDS = {
    "pymorphy3": ("backend_ru", "RussianBackend"),
    "pymorphy3-uk": ("backend_uk", "UkrainianBackend"),
    "korean": ("backend_ko", "KoreanBackend"),
    "rules": ("backend_rules", "RulesBackend"),
    "greek": ("backend_el", "GreekBackend"),
    "hebrew": ("backend_he", "HebrewBackend"),
    "turkish": ("backend_tr", "TurkishBackend"),
    "hungarian": ("backend_hu", "HungarianBackend"),
}


def _lazy_factory(module: str, cls: str) -> Callable[..., InflectionBackend]:
    def make(**_options) -> InflectionBackend:
        import importlib

        return getattr(importlib.import_module(f"factatlas.templates.{module}"), cls)()
    return make


for _name, (_module, _cls) in LAZY_BACKENDS.items():
    inflection_backend(_name)(_lazy_factory(_module, _cls))


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
