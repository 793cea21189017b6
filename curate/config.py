"""Cultures, pairs and predicates as data: loading, validation and the typed objects the engine uses.

Every error names the file, the line, the key and the fix (``factatlas.errors.ConfigError``). Values
that end up inside SPARQL (QIDs, PIDs, language codes) are validated here, before any query exists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factatlas.errors import ConfigError, did_you_mean, unknown
from factatlas.records import (
    LANG_RE,
    PID_RE,
    QID_RE,
    SITE_RE,
    CountryRef,
    Culture,
    CulturePair,
    MembershipRule,
)
from factatlas.yamlfile import Located, load_located

DATA_DIR = Path(__file__).resolve().parent
CULTURES_DIR = DATA_DIR / "cultures"
PAIRS_FILE = DATA_DIR / "pairs.yaml"
PREDICATES_FILE = DATA_DIR / "predicates.yaml"

CULTURE_SIDES = ("subject", "object")
AUGMENT_MODES = ("none", "superclass", "admin")
MEMBERSHIP_USES = ("rule", "list")


# ---- value checks (shared with the SPARQL builders) ---------------------------------------------


def check_keys(doc: Located, mapping: Any, allowed: Iterable[str], *keys: Any, required: Iterable[str] = ()) -> dict:
    allowed = tuple(allowed)
    where = ".".join(str(k) for k in keys) or "top level"
    if not isinstance(mapping, dict):
        raise doc.error(f"{where}: expected a mapping with keys {', '.join(allowed)}", *keys)
    for k in mapping:
        if k not in allowed:
            raise doc.key_error(f"{where}: unknown key '{k}'.{did_you_mean(str(k), allowed)} "
                                f"Allowed keys: {', '.join(allowed)}", *keys, k)
    for k in required:
        if k not in mapping:
            raise doc.error(f"{where}: missing required key '{k}'", *keys)
    return mapping


def check_qid(doc: Located, value: Any, *keys: Any) -> str:
    if not isinstance(value, str) or not QID_RE.fullmatch(value):
        raise doc.error(f"{_dotted(keys)}: {value!r} is not a Wikidata item id; write it like 'Q79' "
                        "(Q followed by digits)", *keys)
    return value


def check_pid(doc: Located, value: Any, *keys: Any) -> str:
    if not isinstance(value, str) or not PID_RE.fullmatch(value):
        raise doc.error(f"{_dotted(keys)}: {value!r} is not a Wikidata property id; write it like 'P17' "
                        "(P followed by digits)", *keys)
    return value


def check_lang(doc: Located, value: Any, *keys: Any) -> str:
    if not isinstance(value, str) or not LANG_RE.fullmatch(value):
        raise doc.error(f"{_dotted(keys)}: {value!r} is not a language code; write it like 'ar', 'en' or "
                        "'zh-hans' (lower case)", *keys)
    return value


def check_site(doc: Located, value: Any, *keys: Any) -> str:
    if not isinstance(value, str) or not SITE_RE.fullmatch(value):
        raise doc.error(f"{_dotted(keys)}: {value!r} is not a Wikipedia edition code; write it like 'ar', 'en' "
                        "or 'zh-min-nan' (lower case, the subdomain of <code>.wikipedia.org)", *keys)
    return value


def check_list(doc: Located, value: Any, *keys: Any) -> list:
    if not isinstance(value, list):
        raise doc.error(f"{_dotted(keys)}: expected a list, e.g. [ar, en]", *keys)
    return value


def check_str(doc: Located, value: Any, *keys: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise doc.error(f"{_dotted(keys)}: expected a non-empty string", *keys)
    return value


def _dotted(keys: tuple) -> str:
    return ".".join(str(k) for k in keys)


def parse_langs(langs: str | Iterable[str]) -> tuple[str, ...]:
    """``"ar,en"`` or ``["ar", "en"]`` -> ``("ar", "en")``; malformed codes are a ConfigError."""
    items = [x.strip() for x in langs.split(",")] if isinstance(langs, str) else [str(x) for x in langs]
    items = [x for x in items if x]
    if not items:
        raise ConfigError("--langs: give at least one language code, e.g. --langs ar,en")
    for x in items:
        if not LANG_RE.fullmatch(x):
            raise ConfigError(f"--langs: {x!r} is not a language code; write codes like 'ar', 'en', 'zh-hans'")
    return tuple(dict.fromkeys(items))


# ---- cultures ---------------------------------------------------------------------------------

CULTURE_KEYS = ("name", "label", "description", "membership", "countries")
MEMBERSHIP_KEYS = ("predicate", "target", "wikipedia_sites", "use")
COUNTRY_KEYS = ("qid", "label", "wikipedia_sites", "also_matches")


@dataclass(frozen=True)
class CultureConfig:
    """A culture plus what the records type does not hold: how the membership rule is used."""

    culture: Culture
    membership_use: str  # "rule" | "list"
    path: str


def list_cultures() -> list[str]:
    return sorted(p.stem for p in CULTURES_DIR.glob("*.yaml"))


def _culture_path(name_or_path: str | Path) -> Path:
    s = str(name_or_path)
    if s.endswith((".yaml", ".yml")) or "/" in s:
        return Path(s)
    path = CULTURES_DIR / f"{s}.yaml"
    if not path.exists():
        raise ConfigError(unknown("culture", s, list_cultures()) +
                          f". Add curate/cultures/{s}.yaml or pass a path to a culture file")
    return path


def load_culture_config(name_or_path: str | Path) -> CultureConfig:
    path = _culture_path(name_or_path)
    doc = load_located(path)
    return parse_culture(doc, path.stem)


def load_culture(name_or_path: str | Path) -> Culture:
    return load_culture_config(name_or_path).culture


def parse_culture(doc: Located, default_name: str) -> CultureConfig:
    d = check_keys(doc, doc.data, CULTURE_KEYS, required=("label", "countries"))
    name = check_str(doc, d.get("name", default_name), "name")
    label = check_str(doc, d["label"], "label")
    rule, use = None, "list"
    if "membership" in d:
        m = check_keys(doc, d["membership"], MEMBERSHIP_KEYS, "membership", required=("predicate", "target"))
        sites = tuple(check_site(doc, s, "membership", "wikipedia_sites", i)
                      for i, s in enumerate(check_list(doc, m.get("wikipedia_sites", ["en"]),
                                                       "membership", "wikipedia_sites")))
        rule = MembershipRule(check_pid(doc, m["predicate"], "membership", "predicate"),
                              check_qid(doc, m["target"], "membership", "target"), sites)
        use = m.get("use", "rule")
        if use not in MEMBERSHIP_USES:
            raise doc.error(f"membership.use: {use!r} is not one of {', '.join(MEMBERSHIP_USES)}"
                            f".{did_you_mean(str(use), MEMBERSHIP_USES)}", "membership", "use")
    countries = []
    seen: set[str] = set()
    for i, c in enumerate(check_list(doc, d["countries"], "countries")):
        c = check_keys(doc, c, COUNTRY_KEYS, "countries", i, required=("qid", "label", "wikipedia_sites"))
        qid = check_qid(doc, c["qid"], "countries", i, "qid")
        if qid in seen:
            raise doc.error(f"countries[{i}].qid: {qid} is listed twice; remove one entry", "countries", i, "qid")
        seen.add(qid)
        sites = check_list(doc, c["wikipedia_sites"], "countries", i, "wikipedia_sites")
        if not sites:
            raise doc.error(f"countries[{i}].wikipedia_sites: list at least one edition, e.g. [en]",
                            "countries", i, "wikipedia_sites")
        also = tuple(check_qid(doc, q, "countries", i, "also_matches", j)
                     for j, q in enumerate(check_list(doc, c.get("also_matches", []), "countries", i, "also_matches")))
        countries.append(CountryRef(
            qid, check_str(doc, c["label"], "countries", i, "label"),
            tuple(check_site(doc, s, "countries", i, "wikipedia_sites", j) for j, s in enumerate(sites)), also))
    if not countries and rule is None:
        raise doc.error("countries: a culture needs at least one country (or a membership rule)", "countries")
    culture = Culture(name=name, label=label, countries=tuple(countries), membership_rule=rule,
                      description=str(d.get("description", "")))
    return CultureConfig(culture, use if rule else "list", doc.path)


# ---- pairs ------------------------------------------------------------------------------------


def _pairs_doc() -> Located:
    return load_located(PAIRS_FILE)


def _parse_pairs(doc: Located) -> dict[str, tuple[str, str]]:
    d = check_keys(doc, doc.data, ("pairs",), required=("pairs",))
    out = {}
    pairs = d["pairs"] or {}
    if not isinstance(pairs, dict):
        raise doc.error("pairs: expected a mapping name -> [culture, culture]", "pairs")
    for name, cultures in pairs.items():
        if not isinstance(cultures, list) or len(cultures) != 2 or not all(isinstance(c, str) for c in cultures):
            raise doc.error(f"pairs.{name}: expected exactly two culture names, e.g. [arab, west]", "pairs", name)
        out[str(name)] = (cultures[0], cultures[1])
    return out


def list_pairs() -> list[str]:
    return sorted(_parse_pairs(_pairs_doc()))


def load_pair(name_or_path: str | Path) -> CulturePair:
    s = str(name_or_path)
    if s.endswith((".yaml", ".yml")) or "/" in s:
        doc = load_located(s)
        d = check_keys(doc, doc.data, ("name", "cultures"), required=("cultures",))
        cultures = check_list(doc, d["cultures"], "cultures")
        if len(cultures) != 2:
            raise doc.error("cultures: a pair has exactly two cultures, e.g. [arab, west]", "cultures")
        pair = CulturePair(str(d.get("name", Path(s).stem)), (str(cultures[0]), str(cultures[1])))
        base = Path(s).parent
        resolved = tuple(str(base / c) if str(c).endswith((".yaml", ".yml")) and not Path(c).is_absolute()
                         and (base / c).exists() else str(c) for c in pair.cultures)
        pair = CulturePair(pair.name, (resolved[0], resolved[1]))
    else:
        pairs = _parse_pairs(_pairs_doc())
        if s not in pairs:
            raise ConfigError(unknown("pair", s, pairs) + ". Add it to curate/pairs.yaml or pass a pair file")
        pair = CulturePair(s, pairs[s])
    names = [load_culture(c).name for c in pair.cultures]  # fail early, naming the culture
    if names[0] == names[1]:
        raise ConfigError(f"pair {pair.name}: both sides are the culture '{names[0]}'; a pair compares two "
                          "different cultures, e.g. arab-west")
    return pair


# ---- predicates -------------------------------------------------------------------------------

TYPE_KEYS = ("label", "classes", "exclude", "exclude_items")
PREDICATE_KEYS = ("label", "subject", "object", "culture", "augment")
CULTURE_FILTER_KEYS = ("side", "via")


@dataclass(frozen=True)
class TypeSpec:
    name: str
    label: str
    classes: tuple[str, ...]  # roots: an entity's P31 class must reach one through P279*
    exclude: tuple[str, ...] = ()  # roots: no P31 class may reach one
    exclude_items: tuple[str, ...] = ()  # these QIDs never have this type

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
    doc = load_located(path or PREDICATES_FILE)
    return parse_predicates(doc)


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
        types[str(name)] = TypeSpec(str(name), str(t.get("label", name)), classes, qids("exclude"),
                                    qids("exclude_items"))
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
            raise ConfigError(unknown("predicate", pid, specs) + ". Add it to curate/predicates.yaml")
        out[pid] = specs[pid]
    return out


# ---- validate any curate config file ----------------------------------------------------------


def validate_file(path: str | Path) -> str:
    """Validate a culture, pair, pair list or predicates file; returns a one-line summary."""
    doc = load_located(path)
    data = doc.data if isinstance(doc.data, dict) else {}
    if "predicates" in data or "types" in data:
        specs = parse_predicates(doc)
        return f"{doc.path}: ok — {len(specs)} predicates"
    if "pairs" in data:
        pairs = _parse_pairs(doc)
        for name, cultures in pairs.items():
            for c in cultures:
                try:
                    load_culture(c)
                except ConfigError as e:
                    raise doc.error(f"pairs.{name}: {e}", "pairs", name) from e
        return f"{doc.path}: ok — {len(pairs)} pairs"
    if "cultures" in data and "countries" not in data:
        pair = load_pair(path)
        return f"{doc.path}: ok — pair {pair.name} = {' + '.join(pair.cultures)}"
    if "countries" in data or "membership" in data:
        cc = parse_culture(doc, Path(path).stem)
        return f"{doc.path}: ok — culture {cc.culture.name}: {len(cc.culture.countries)} countries"
    raise ConfigError("not a curate config: expected a culture (countries:), a pair (cultures:), a pair "
                      "list (pairs:) or predicates (types:, predicates:)", doc.path, 1, 1)
