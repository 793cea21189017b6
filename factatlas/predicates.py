"""The predicate registry: the one list of predicates and the one vocabulary of entity types, read from
``factatlas/predicates.yaml``. Curate queries and type-checks with it, templates take their slot types
from it, the build records its labels in benchmark.json.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

from factatlas.errors import ConfigError, did_you_mean, unknown
from factatlas.located import Located, check_keys, check_list, check_pid, check_qid, load_located

PREDICATES_FILE = Path(__file__).resolve().parent / "predicates.yaml"
CULTURE_SIDES = ("subject", "object")
AUGMENT_MODES = ("none", "superclass", "admin")

TYPE_KEYS = ("label", "classes", "exclude", "exclude_items", "kind_of")
PREDICATE_KEYS = ("label", "subject", "object", "culture", "augment")
CULTURE_FILTER_KEYS = ("side", "via")


@dataclass(frozen=True)
class TypeSpec:
    name: str
    label: str
    classes: tuple[str, ...]  # roots: an entity's P31 class must reach one through P279*
    exclude: tuple[str, ...] = ()  # roots: no P31 class may reach one
    exclude_items: tuple[str, ...] = ()  # these QIDs never have this type
    kind_of: str = ""  # a broader type of the registry whose grammar this one shares (templates)

    @property
    def grammar_type(self) -> str:
        """The type templates inflect and choose articles by: a film is a work."""
        return self.kind_of or self.name

    @property
    def roots(self) -> tuple[str, ...]:
        return self.classes + self.exclude


@dataclass(frozen=True)
class CultureFilter:
    side: str  # "subject" | "object"
    via: str | None = None  # None: that end is a culture country; "P27": that end wdt:P27 a country


@dataclass(frozen=True)
class PredicateSpec:
    pid: str
    label: str
    subject_type: TypeSpec
    object_type: TypeSpec
    culture_filter: CultureFilter
    augment: str  # "none" | "superclass" | "admin"

    def describe_filter(self) -> str:
        end = self.culture_filter.side
        return f"{end} is a culture country" if not self.culture_filter.via else \
            f"{end} {self.culture_filter.via} a culture country"


def load_predicates(path: str | Path | None = None) -> dict[str, PredicateSpec]:
    """The registry (factatlas/predicates.yaml), or another predicates file in its format."""
    if path is None:
        return dict(_bundled())
    return parse_predicates(load_located(path))


@cache
def _bundled() -> Mapping[str, PredicateSpec]:
    return MappingProxyType(parse_predicates(load_located(PREDICATES_FILE)))


def parse_predicates(doc: Located) -> dict[str, PredicateSpec]:
    d = check_keys(doc, doc.data, ("types", "predicates"), required=("types", "predicates"))
    types: dict[str, TypeSpec] = {}
    if not isinstance(d["types"], dict):
        raise doc.error("types: expected a mapping type-name -> {classes: [...]}", "types")
    for name, t in d["types"].items():
        t = check_keys(doc, t, TYPE_KEYS, "types", name, required=("classes",))

        def qids(key: str, t=t, name=name) -> tuple[str, ...]:
            return tuple(check_qid(doc, q, "types", name, key, i)
                         for i, q in enumerate(check_list(doc, t.get(key, []), "types", name, key)))

        classes = qids("classes")
        if not classes:
            raise doc.error(f"types.{name}.classes: list at least one root class QID", "types", name, "classes")
        kind_of = t.get("kind_of", "")
        if kind_of and kind_of not in d["types"]:
            raise doc.error(f"types.{name}.kind_of: " + unknown("type", str(kind_of), d["types"]),
                            "types", name, "kind_of")
        types[str(name)] = TypeSpec(str(name), str(t.get("label", name)), classes, qids("exclude"),
                                    qids("exclude_items"), str(kind_of))
    out: dict[str, PredicateSpec] = {}
    if not isinstance(d["predicates"], dict):
        raise doc.error("predicates: expected a mapping PID -> {subject: .., object: ..}", "predicates")
    for pid, p in d["predicates"].items():
        check_pid(doc, pid, "predicates", pid)
        p = check_keys(doc, p, PREDICATE_KEYS, "predicates", pid, required=("subject", "object", "culture"))
        for end in ("subject", "object"):
            if p[end] not in types:
                raise doc.error(f"predicates.{pid}.{end}: " + unknown("type", str(p[end]), types),
                                "predicates", pid, end)
        cf = check_keys(doc, p["culture"], CULTURE_FILTER_KEYS, "predicates", pid, "culture", required=("side",))
        if cf["side"] not in CULTURE_SIDES:
            raise doc.error(f"predicates.{pid}.culture.side: {cf['side']!r} is not one of subject, object"
                            f".{did_you_mean(str(cf['side']), CULTURE_SIDES)}", "predicates", pid, "culture", "side")
        via = cf.get("via")
        if via is not None:
            check_pid(doc, via, "predicates", pid, "culture", "via")
        augment = p.get("augment", "none")
        if augment not in AUGMENT_MODES:
            raise doc.error(f"predicates.{pid}.augment: " + unknown("augment mode", str(augment), AUGMENT_MODES),
                            "predicates", pid, "augment")
        out[pid] = PredicateSpec(pid, str(p.get("label", pid)), types[p["subject"]], types[p["object"]],
                                 CultureFilter(cf["side"], via), augment)
    return out


def select_predicates(specs: Mapping[str, PredicateSpec], wanted: Iterable[str] | None) -> dict[str, PredicateSpec]:
    if not wanted:
        return dict(specs)
    out = {}
    for pid in wanted:
        if pid not in specs:
            raise ConfigError(unknown("predicate", pid, specs) + ". Add it to factatlas/predicates.yaml")
        out[pid] = specs[pid]
    return out
