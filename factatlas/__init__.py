"""factatlas: culture-diverse multilingual factual-knowledge benchmarks from Wikidata."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("factatlas")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+source"
