"""factatlas: culture-diverse multilingual factual-knowledge benchmarks from Wikidata.

The stage rooms stand at the top of the repository (the design card fixes ``curate/ templates/
probe/ publish/``; ``builder/`` is the build stage) and import as ``factatlas.<stage>``. An installed
wheel copies them under ``factatlas/``; in a source checkout ``__path__`` below also points at the
checkout itself, so ``factatlas.curate`` always comes from the same tree as ``factatlas`` — never from
another clone that an editable install happens to point at.
"""

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

STAGES = ("builder", "curate", "templates", "probe", "publish")

try:
    __version__ = version("factatlas")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+source"


def _source_checkout() -> Path | None:
    root = Path(__file__).resolve().parent.parent
    if (root / "pyproject.toml").is_file() and all((root / s / "__init__.py").is_file() for s in STAGES):
        return root
    return None


_checkout = _source_checkout()
if _checkout is not None and str(_checkout) not in __path__:
    # searched after factatlas/ itself, before any import hook, so a checkout imports only itself
    __path__.append(str(_checkout))


def require_namespaced(module_name: str, stage: str) -> None:
    """Refuse a stage imported under its bare folder name (``import curate``): that would load every
    module twice, with two sets of classes that never compare equal."""
    if module_name != f"factatlas.{stage}":
        raise ImportError(f"the {stage}/ folder is the package 'factatlas.{stage}'; "
                          f"import it as `import factatlas.{stage}`, not `import {module_name}`")
