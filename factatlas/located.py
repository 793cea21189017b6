"""YAML with positions: every key path keeps its (line, col), so a config error names file:line:col.

Used for the core's predicate registry and curate's culture and pair files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from factatlas.errors import ConfigError, did_you_mean
from factatlas.records import LANG_RE, PID_RE, QID_RE


@dataclass(frozen=True)
class Located:
    """A parsed YAML document plus the (line, col) of every key path, for errors that point at it."""

    path: str
    data: Any
    marks: Mapping[tuple, tuple[int, int]]

    def where(self, *keys: Any) -> tuple[int | None, int | None]:
        for n in range(len(keys), -1, -1):
            if keys[:n] in self.marks:
                return self.marks[keys[:n]]
        return None, None

    def error(self, message: str, *keys: Any) -> ConfigError:
        """An error pointing at the value at ``keys`` (or its closest known parent)."""
        line, col = self.where(*keys)
        return ConfigError(message, self.path, line, col)

    def key_error(self, message: str, *keys: Any) -> ConfigError:
        """An error pointing at the key itself (unknown keys)."""
        line, col = self.marks.get(("key:", *keys), self.where(*keys))
        return ConfigError(message, self.path, line, col)


def _construct(node: yaml.Node, key: tuple, marks: dict) -> Any:
    marks[key] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for k_node, v_node in node.value:
            k = _scalar(k_node) if isinstance(k_node, yaml.ScalarNode) else str(k_node.value)
            out[k] = _construct(v_node, (*key, k), marks)  # marks the value's position
            marks[("key:", *key, k)] = (k_node.start_mark.line + 1, k_node.start_mark.column + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(v, (*key, i), marks) for i, v in enumerate(node.value)]
    return _scalar(node)


def _scalar(node: yaml.ScalarNode) -> Any:
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


def load_located(path: str | Path) -> Located:
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError as e:
        raise ConfigError("file not found; check the path", str(path)) from e
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ConfigError(f"not valid YAML: {getattr(e, 'problem', e)}", str(path),
                          mark.line + 1 if mark else None, mark.column + 1 if mark else None) from e
    marks: dict[tuple, tuple[int, int]] = {}
    data = _construct(node, (), marks) if node is not None else {}
    return Located(_display(path), data, marks)


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


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
    if not isinstance(value, str) or not QID_RE.match(value):
        raise doc.error(f"{_dotted(keys)}: {value!r} is not a Wikidata item id; write it like 'Q79' "
                        "(Q followed by digits)", *keys)
    return value


def check_pid(doc: Located, value: Any, *keys: Any) -> str:
    if not isinstance(value, str) or not PID_RE.match(value):
        raise doc.error(f"{_dotted(keys)}: {value!r} is not a Wikidata property id; write it like 'P17' "
                        "(P followed by digits)", *keys)
    return value


def check_lang(doc: Located, value: Any, *keys: Any) -> str:
    if not isinstance(value, str) or not LANG_RE.match(value):
        raise doc.error(f"{_dotted(keys)}: {value!r} is not a language / Wikipedia edition code; write it "
                        "like 'ar', 'en' or 'zh-hans' (lower case)", *keys)
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
