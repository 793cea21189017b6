"""One registry type for what a stage lets its users plug in (scoring rules, backends, engines, publish
targets): name -> entry, registered once, looked up with the "unknown X 'y'. Did you mean 'z'?" error.

Entries of a stage's own are registered by modules the registry imports on first use (``builtin``), so
that a command's ``--help`` lists them without importing what they need to run (torch, git, ...).
Entries of other packages register through the entry-point group ``group`` (a module imported on first
use, which calls ``register``), or by calling ``register`` themselves (a test module).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from factatlas.errors import ConfigError, unknown

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """Name -> entry. A read-only mapping once loaded; ``register`` is the one way in."""

    def __init__(self, kind: str, builtin: tuple[str, ...] = (), group: str | None = None):
        self.kind = kind  # "scoring rule", "backend", ...: the word of the error messages
        self._builtin = builtin
        self._group = group
        self._entries: dict[str, T] = {}
        self._loaded = not builtin and group is None

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True  # before the imports: a builtin module registering calls back into this registry
        for module in self._builtin:
            importlib.import_module(module)
        if self._group:
            from importlib.metadata import entry_points

            for point in entry_points(group=self._group):
                point.load()

    def register(self, name: str, entry: T) -> T:
        """Add ``entry`` under ``name``; a second entry under one name is an error (never a silent
        replacement)."""
        self._load()
        if name in self._entries:
            raise ValueError(f"{self.kind} '{name}' is registered twice")
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        """Remove an entry (a test that registered one cleans up after itself)."""
        self._entries.pop(name, None)

    def get_entry(self, name: str) -> T:
        """The entry of ``name``, or a ConfigError naming the closest names and every available one."""
        self._load()
        if name not in self._entries:
            raise ConfigError(unknown(self.kind, name, self._entries))
        return self._entries[name]

    def __getitem__(self, name: str) -> T:
        self._load()
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._load()
        return len(self._entries)


@dataclass(frozen=True)
class Spec:
    """One registry entry chosen by name, with its typed options: what a run records (probe.json) and reads
    back. A spec type names its registry (``registry``) and the entry taken when a record names none
    (``default``; None: the name is required). An entry has ``name`` and ``options`` (a type with
    ``from_json``); an options value has ``to_json``.

    ``RuleSpec`` (the scoring rule), ``BackendSpec`` and ``EngineSpec`` (probe/) are this shape."""

    registry: ClassVar[Registry[Any]]
    default: ClassVar[str | None] = None

    name: str
    options: Any

    @property
    def entry(self) -> Any:
        """The registered entry of ``name`` (a ConfigError naming the closest names when there is none)."""
        return self.registry.get_entry(self.name)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "options": self.options.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Spec:
        """The spec a record holds: the entry it names and its options, checked by the entry's options type."""
        name = data["name"] if cls.default is None else data.get("name", cls.default)
        entry = cls.registry.get_entry(str(name))
        return cls(entry.name, entry.options.from_json(data.get("options")))
