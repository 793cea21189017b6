"""Value checks for config files read with positions (`factatlas.yamlfile`): each names file:line:col
and says how to write the value. Full-match patterns only: a value that reaches SPARQL or a URL is
checked whole ("Q262\\n" is not a QID)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from factatlas.errors import did_you_mean
from factatlas.records import LANG_RE, PID_RE, QID_RE, SITE_RE
from factatlas.yamlfile import Located, load_located

__all__ = ["Located", "check_keys", "check_lang", "check_list", "check_pid", "check_qid", "check_site",
           "check_str", "load_located"]


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
