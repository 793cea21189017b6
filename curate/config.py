"""Cultures and pairs as data: loading, validation and the typed objects the engine uses (the predicate
registry is the core's, ``factatlas.predicates``; re-exported here for the engine).

Every error names the file, the line, the key and the fix (``factatlas.errors.ConfigError``). Values
that end up inside SPARQL (QIDs, PIDs, language codes) are validated here, before any query exists.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from factatlas.errors import ConfigError, did_you_mean, unknown
from factatlas.located import (
    Located,
    check_keys,
    check_lang,
    check_list,
    check_pid,
    check_qid,
    check_site,
    check_str,
    load_located,
)
from factatlas.predicates import (
    PredicateSpec,
    TypeSpec,
    load_predicates,
    parse_predicates,
    select_predicates,
)
from factatlas.records import LANG_RE, CountryRef, Culture, CulturePair, MembershipRule, pair_name_problem

DATA_DIR = Path(__file__).resolve().parent
CULTURES_DIR = DATA_DIR / "cultures"
PAIRS_FILE = DATA_DIR / "pairs.yaml"

MEMBERSHIP_USES = ("rule", "list")


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
        problem = pair_name_problem(str(name))
        if problem:
            raise doc.key_error(f"pairs: {problem}", "pairs", name)
        out[str(name)] = (cultures[0], cultures[1])
    return out


def list_pairs() -> list[str]:
    return sorted(_parse_pairs(_pairs_doc()))


def load_pair(name_or_path: str | Path) -> CulturePair:
    s = str(name_or_path)
    if s.endswith((".yaml", ".yml")) or "/" in s:
        doc = load_located(s)
        if isinstance(doc.data, dict) and "countries" in doc.data and "cultures" not in doc.data:
            raise doc.error(f"this is a culture file (it lists countries), but a pair was expected: give a pair "
                            f"name ({', '.join(list_pairs())}) or a pair file that names two cultures, e.g. "
                            f"`cultures: [{Path(s).name}, west]` in a file beside it", "countries")
        d = check_keys(doc, doc.data, ("name", "cultures"), required=("cultures",))
        cultures = check_list(doc, d["cultures"], "cultures")
        if len(cultures) != 2:
            raise doc.error("cultures: a pair has exactly two cultures, e.g. [arab, west]", "cultures")
        pair = CulturePair(str(d.get("name", Path(s).stem)), (str(cultures[0]), str(cultures[1])))
        problem = pair_name_problem(pair.name)
        if problem and "name" in d:
            raise doc.error(f"name: {problem}", "name")
        if problem:
            raise doc.error(f"{problem} (a pair file without `name:` is named after the file); add a line "
                            "`name: <pair>`, e.g. `name: arab-west`", "cultures")
        base = Path(s).parent
        resolved = tuple(str(base / c) if str(c).endswith((".yaml", ".yml")) and not Path(c).is_absolute()
                         and (base / c).exists() else str(c) for c in pair.cultures)
        pair = CulturePair(pair.name, (resolved[0], resolved[1]))
        for i, culture in enumerate(pair.cultures):
            try:
                load_culture(culture)
            except ConfigError as e:
                raise doc.error(f"cultures[{i}]: {e}", "cultures", i) from e
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
    known = (*CULTURE_KEYS, "cultures", "pairs", "types", "predicates")
    for key in data:
        hint = "" if key in known else did_you_mean(str(key), known)
        if hint:  # a typo of a key that decides the file's kind (countrys:, culture:)
            raise doc.key_error(f"top level: unknown key '{key}'.{hint} A curate config is a culture (countries:), "
                                "a pair (cultures:), a pair list (pairs:) or predicates (types:, predicates:)", key)
    raise ConfigError("not a curate config: expected a culture (countries:), a pair (cultures:), a pair "
                      "list (pairs:) or predicates (types:, predicates:)", doc.path, 1, 1)


__all__ = ["Located", "PredicateSpec", "TypeSpec", "check_keys", "check_lang", "check_list", "check_pid",
           "check_qid", "check_str", "load_located", "load_predicates", "parse_predicates", "select_predicates"]
