"""The cultures as the rooms downstream of curate see them: names and ``Culture`` records.

curate owns the culture files (``curate/cultures/*.yaml``) and their parser. The build's importers
(``--cultures``) and ``audit-culture`` name cultures too, but a room never imports another room: the app
layer, which assembles the command, hands curate's catalogue in here (``provide``), and a room asks for it
(``catalog``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from factatlas.errors import ConfigError
from factatlas.records import Culture


@dataclass(frozen=True)
class CultureCatalog:
    """The known culture names and the loader of one culture (a name, or a path to a culture file)."""

    names: Callable[[], list[str]]
    load: Callable[[str], Culture]

    def chosen(self, names: Sequence[str] | str) -> list[Culture]:
        """``"all"`` -> every culture; a list of names -> those, in order."""
        return [self.load(n) for n in (self.names() if names == "all" else names)]


_provided: list[CultureCatalog] = []


def provide(catalog: CultureCatalog) -> None:
    """Make ``catalog`` the one every room reads (the app layer calls this once, at start-up)."""
    _provided[:] = [catalog]


def catalog() -> CultureCatalog:
    if not _provided:
        raise ConfigError("no culture catalogue was provided: run the command through `factatlas` (the app "
                          "layer provides curate's), or call factatlas.cultures.provide(...) first")
    return _provided[0]
