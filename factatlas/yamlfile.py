"""The one YAML reader for configuration files (curate's cultures/pairs/predicates, the templates).

- ``read_text``: UTF-8 only; any other encoding is a ``ConfigError`` naming the file, the line and
  column of the first bad byte, and the fix.
- ``compose``: PyYAML's node tree (every node keeps its line and column), with errors as
  ``path:line:col: not valid YAML: ...`` and a bound on alias expansion: a few hundred bytes of nested
  aliases (a "billion laughs" document) expand to billions of nodes in any reader that walks the tree,
  so a document whose expanded size passes ``MAX_EXPANDED_NODES`` is refused before anyone walks it.
- ``load_located``: the document as plain Python data plus the position of every key path
  (``Located``), for errors that point at the offending value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from factatlas.errors import ConfigError

# The largest bundled file (a template language file) has a few thousand nodes once expanded.
MAX_EXPANDED_NODES = 100_000


def display_path(path: str | os.PathLike) -> str:
    """``path`` relative to the working directory when it is inside it (shorter, clickable errors)."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_text(path: str | os.PathLike, shown: str | None = None) -> str:
    """The file's text, decoded as UTF-8; a clean ``ConfigError`` when missing or in another encoding."""
    path = Path(path)
    shown = shown or display_path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise ConfigError("file not found; check the path", shown) from e
    except IsADirectoryError as e:
        raise ConfigError("is a folder, not a file; pass the YAML file inside it", shown) from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[:e.start]
        line = before.count(b"\n") + 1
        col = e.start - (before.rfind(b"\n") + 1) + 1
        raise ConfigError(f"not UTF-8 (byte 0x{data[e.start]:02x} cannot be decoded); save the file as UTF-8, "
                          "e.g. `iconv -f latin1 -t utf-8`", shown, line, col) from e


# libyaml's parser builds the same node tree with the same marks (line, column; ``index`` where PyYAML's
# parser has ``pointer``: checked node for node on every bundled file) about 9x faster; its errors are
# located in bytes, so a document it refuses is parsed again by PyYAML's parser for the error.
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def compose(text: str, shown: str) -> yaml.Node | None:
    """The YAML node tree of ``text`` (None for an empty document), alias expansion bounded."""
    try:
        root = yaml.compose(text, Loader=_FAST_LOADER) if _FAST_LOADER else _compose_exact(text, shown)
    except yaml.YAMLError:
        root = _compose_exact(text, shown)
    if root is not None:
        check_expansion(root, shown)
        check_unique_keys(root, shown)
    return root


def check_unique_keys(root: yaml.Node, shown: str) -> None:
    """Refuse a mapping that names a key twice: YAML loaders keep the last value and drop the first without a
    word (a culture file pasted twice, a template id given twice), so the error points at the second."""
    seen_nodes: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:  # an alias: walked once
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[str, yaml.Node] = {}
            for k_node, v_node in node.value:
                if isinstance(k_node, yaml.ScalarNode) and k_node.tag != "tag:yaml.org,2002:merge":
                    if k_node.value in first:
                        line, col = position(first[k_node.value])
                        raise ConfigError(f"duplicate key {k_node.value!r} (first at line {line}, column {col}); "
                                          "YAML would keep only the last one: remove or rename one of them", shown,
                                          *position(k_node))
                    first[k_node.value] = k_node
                stack.append(v_node)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def source_of(node: yaml.Node, text: str) -> str:
    """The characters of ``text`` that ``node`` was parsed from (either parser's marks)."""
    start, end = node.start_mark, node.end_mark
    if getattr(start, "buffer", None) is not None:
        return start.buffer[start.pointer:end.pointer]
    return text[start.index:end.index]


def _compose_exact(text: str, shown: str) -> yaml.Node | None:
    """PyYAML's own parser: slower, its errors located in characters."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.reader.ReaderError as e:  # a character YAML does not allow (NUL, other controls)
        before = text[:e.position]
        line = before.count("\n") + 1
        col = e.position - (before.rfind("\n") + 1) + 1
        code = e.character if isinstance(e.character, int) else ord(e.character)
        raise ConfigError(f"not valid YAML: control character U+{code:04X} is not allowed; remove it",
                          shown, line, col) from e
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ConfigError(f"not valid YAML: {getattr(e, 'problem', None) or e}", shown,
                          mark.line + 1 if mark else None, mark.column + 1 if mark else None) from e


def check_expansion(root: yaml.Node, shown: str, limit: int = MAX_EXPANDED_NODES) -> int:
    """The number of nodes ``root`` expands to (aliases counted at every use); refuses more than ``limit``
    and recursive aliases. Linear in the *distinct* nodes: sizes are memoized per node."""
    sizes: dict[int, int] = {}
    walking: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in walking:
            raise ConfigError("not valid YAML: an alias refers to the node that contains it; remove the "
                              "recursive alias", shown, node.start_mark.line + 1, node.start_mark.column + 1)
        walking.add(key)
        total = 1
        if isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            total += sum(size(v) for v in node.value)
        walking.discard(key)
        if total > limit:
            raise ConfigError(f"YAML aliases expand this document to more than {limit:,} nodes; refusing to "
                              "read it (write the values out, or use fewer nested aliases)", shown,
                              node.start_mark.line + 1, node.start_mark.column + 1)
        sizes[key] = total
        return total

    return size(root)


def position(node: yaml.Node) -> tuple[int, int]:
    """1-based (line, column) of a node."""
    return node.start_mark.line + 1, node.start_mark.column + 1


# ---- plain data with positions --------------------------------------------------------------------


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


def load_located(path: str | os.PathLike) -> Located:
    """Read, compose and construct a YAML file, keeping the position of every key path."""
    shown = display_path(path)
    root = compose(read_text(path, shown), shown)
    marks: dict[tuple, tuple[int, int]] = {}
    data = _construct(root, (), marks) if root is not None else {}
    return Located(shown, data, marks)


def _construct(node: yaml.Node, key: tuple, marks: dict) -> Any:
    marks[key] = position(node)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for k_node, v_node in node.value:
            k = _scalar(k_node) if isinstance(k_node, yaml.ScalarNode) else str(k_node.value)
            out[k] = _construct(v_node, (*key, k), marks)  # marks the value's position
            marks[("key:", *key, k)] = position(k_node)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(v, (*key, i), marks) for i, v in enumerate(node.value)]
    return _scalar(node)


def _scalar(node: yaml.ScalarNode) -> Any:
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)
