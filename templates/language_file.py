"""One template file (``templates/lang/<lang>.yaml``) read with line/column positions: the ``Template``
record, the ``Issue`` a file can have, ``LanguageFile`` and ``read_language_file``. The validator reads these;
the ``Library`` (factatlas.templates.library) loads and validates whole sets of them.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from factatlas.errors import did_you_mean
from factatlas.yamlfile import compose, position, read_text, source_of
from factatlas.yamlfile import display_path as shown_path

FILE_KEYS = ("lang", "name", "scripts", "genders", "templates", "notes")
TEMPLATE_KEYS = ("id", "kind", "text", "status", "source", "notes", "timeless")
KINDS = ("cloze", "question")
STATUSES = ("reviewed", "draft")


@dataclass(frozen=True, slots=True)
class TextAnchor:
    """Where a template's text scalar sits in its file, to turn text offsets into file line:col."""

    line: int = 0  # 1-based line of the scalar's first character (the quote for quoted styles)
    col: int = 0  # 1-based column of that character
    style: str = ""  # "" plain, '"', "'", "|", ">"
    raw: str = ""  # the scalar as written in the file (quoted and block styles)

    def locate(self, offset: int) -> tuple[int, int]:
        """1-based (line, col) in the file of character ``offset`` of the parsed text."""
        if not self.line:
            return 0, 0
        if self.style in ('"', "'") and self.raw:
            return _locate_quoted(self.raw, self.style, offset, self.line, self.col)
        if self.style in ("|", ">") and self.raw:
            return _locate_block(self.raw, offset, self.line)
        return self.line, self.col + offset


def _locate_block(raw: str, offset: int, line: int) -> tuple[int, int]:
    """Block scalars (| and >): content starts on the next line; each content line adds its length + 1."""
    lines = raw.split("\n")[1:]
    indent = next((len(x) - len(x.lstrip(" ")) for x in lines if x.strip()), 0)
    consumed = 0
    for i, text in enumerate(lines):
        content = text[indent:]
        if offset <= consumed + len(content):
            return line + 1 + i, indent + 1 + offset - consumed
        consumed += len(content) + 1
    return line + 1, indent + 1 + offset


def _locate_quoted(raw: str, quote: str, offset: int, line: int, col: int) -> tuple[int, int]:
    """Walk the raw quoted scalar, decoding escapes, until ``offset`` decoded characters are consumed."""
    i, decoded, ln, c = 1, 0, line, col + 1  # skip the opening quote
    widths = {"x": 4, "u": 6, "U": 10}
    while i < len(raw) - 1 and decoded < offset:
        ch = raw[i]
        if quote == '"' and ch == "\\" and i + 1 < len(raw):
            step = widths.get(raw[i + 1], 2)
        elif quote == "'" and raw[i:i + 2] == "''":
            step = 2
        else:
            step = 1
        if ch == "\n":
            ln, c = ln + 1, 1
            i += 1
            while i < len(raw) and raw[i] == " ":
                i, c = i + 1, c + 1
            decoded += 1
            continue
        i, c, decoded = i + step, c + step, decoded + 1
    return ln, c


@dataclass(frozen=True, slots=True)
class Template:
    id: str  # language-neutral: "P19/1", questions "P19/q1"
    lang: str
    predicate: str
    kind: str  # cloze | question
    text: str
    status: str  # reviewed | draft
    source: str  # human | mt:<system>+<system>
    path: str = ""
    line: int = 0  # line of the template's entry in its file
    anchor: TextAnchor = field(default=TextAnchor(), compare=False)
    # why a template about a person holds of the dead as of the living without agreeing with life status
    # ("a completed event"); "" when it agrees ({X: alive=… | other=…}) or is not about a person
    timeless: str = ""

    def where(self, offset: int | None = None) -> str:
        """``path:line:col`` of the template (or of character ``offset`` of its text)."""
        if offset is not None and self.anchor.line:
            ln, col = self.anchor.locate(offset)
            return f"{self.path}:{ln}:{col}"
        return f"{self.path}:{self.line}"


@dataclass(frozen=True, slots=True)
class Issue:
    """One validation problem, with its place and a fix."""

    path: str
    line: int
    col: int
    message: str
    hint: str = ""
    code: str = ""  # stable category: syntax, unknown-key, unknown-feature, coverage, mixed-script, ...

    def __str__(self) -> str:
        where = self.path + (f":{self.line}" if self.line else "") + (f":{self.col}" if self.col else "")
        message = self.message.rstrip(".") if self.hint else self.message
        return f"{where}: {message}" + (f"; fix: {self.hint}" if self.hint else "")


@dataclass(frozen=True, slots=True)
class LanguageFile:
    lang: str
    name: str
    scripts: tuple[str, ...]
    genders: tuple[str, ...]
    templates: tuple[Template, ...]
    path: str
    stem: str
    positions: dict = field(default_factory=dict, compare=False)  # key -> (line, col) of top-level keys
    issues: tuple[Issue, ...] = ()  # structural problems found while reading


# ---- YAML with marks ---------------------------------------------------------------------------

_pos = position


def _scalar(node: yaml.Node) -> str | None:
    return node.value if isinstance(node, yaml.ScalarNode) else None


def read_language_file(path: str | os.PathLike, display_path: str | None = None) -> LanguageFile:
    """Parse one template file into a LanguageFile; structural problems become Issues (not raised)."""
    path = Path(path)
    shown = display_path or shown_path(path)
    text = read_text(path, shown)
    issues: list[Issue] = []

    def issue(node_or_pos, message: str, hint: str = "", code: str = "structure") -> None:
        ln, col = _pos(node_or_pos) if isinstance(node_or_pos, yaml.Node) else node_or_pos
        issues.append(Issue(shown, ln, col, message, hint, code))

    root = compose(text, shown)
    stem = path.name.removesuffix(".yaml")
    if not isinstance(root, yaml.MappingNode):
        return LanguageFile("", "", (), (), (), shown, stem, {},
                            (Issue(shown, 1, 1, "a template file is a mapping with keys " + ", ".join(FILE_KEYS),
                                   "start from docs/templates.md's example", "structure"),))
    top: dict[str, yaml.Node] = {}
    positions: dict[str, tuple[int, int]] = {}
    for knode, vnode in root.value:
        key = _scalar(knode) or ""
        if key not in FILE_KEYS:
            issue(knode, f"unknown key '{key}'.{did_you_mean(key, FILE_KEYS)}", "keys: " + ", ".join(FILE_KEYS),
                  "unknown-key")
            continue
        top[key] = vnode
        positions[key] = _pos(knode)
    for required in ("lang", "scripts", "templates"):
        if required not in top:
            issue((1, 1), f"missing key '{required}'", f"add '{required}:' (see docs/templates.md)", "structure")

    lang = _scalar(top["lang"]) if "lang" in top else ""
    name = (_scalar(top["name"]) or "") if "name" in top else ""
    scripts = _string_list(top.get("scripts"), "scripts", issue)
    genders = _string_list(top.get("genders"), "genders", issue)
    templates: list[Template] = []
    tnode = top.get("templates")
    if tnode is not None:
        if not isinstance(tnode, yaml.MappingNode):
            issue(tnode, "'templates' must map predicate ids to lists of templates", "e.g. templates: {P19: [...]}")
        else:
            for pnode, lnode in tnode.value:
                predicate = _scalar(pnode) or ""
                if not isinstance(lnode, yaml.SequenceNode):
                    issue(lnode, f"templates of {predicate} must be a list", "write '- id: ...' entries")
                    continue
                for entry in lnode.value:
                    t = _read_template(entry, predicate, lang or stem, shown, issue, text)
                    if t is not None:
                        templates.append(t)
    return LanguageFile(lang or "", name, scripts, genders, tuple(templates), shown, stem, positions,
                        tuple(issues))


def _string_list(node: yaml.Node | None, key: str, issue) -> tuple[str, ...]:
    if node is None:
        return ()
    if not isinstance(node, yaml.SequenceNode) or not all(isinstance(n, yaml.ScalarNode) for n in node.value):
        issue(node, f"'{key}' must be a list of names", f"e.g. {key}: [a, b]")
        return ()
    return tuple(n.value for n in node.value)


def _read_template(node: yaml.Node, predicate: str, lang: str, shown: str, issue, text: str) -> Template | None:
    if not isinstance(node, yaml.MappingNode):
        issue(node, "a template entry must be a mapping", "write '- id: P19/1' with text, status, source")
        return None
    values: dict[str, str] = {}
    value_nodes: dict[str, yaml.Node] = {}  # a bad value is reported where it is written
    anchor = TextAnchor()
    for knode, vnode in node.value:
        key = _scalar(knode) or ""
        if key not in TEMPLATE_KEYS:
            issue(knode, f"unknown key '{key}'.{did_you_mean(key, TEMPLATE_KEYS)}",
                  "template keys: " + ", ".join(TEMPLATE_KEYS), "unknown-key")
            continue
        value = _scalar(vnode)
        if value is None:
            issue(vnode, f"'{key}' must be a string", f"write {key}: \"...\"")
            continue
        values[key] = value
        value_nodes[key] = vnode
        if key == "text":
            ln, col = _pos(vnode)
            raw = ""
            style = vnode.style or ""
            if style in ('"', "'", "|", ">"):
                raw = source_of(vnode, text)
            anchor = TextAnchor(ln, col, style, raw)
            for offset, ch in enumerate(value):
                if unicodedata.category(ch) == "Cc":  # NUL, tab, newline, ESC...: never part of a prompt
                    issue(anchor.locate(offset), f"control character U+{ord(ch):04X} in template text",
                          "remove it (write the text on one line, without escapes such as \\0 or \\t)",
                          "control-character")
                    break
    line = _pos(node)[0]
    for required in ("id", "text"):
        if required not in values:
            issue(node, f"template entry without '{required}'", f"add '{required}:'")
            return None
    kind = values.get("kind", "cloze")
    if kind not in KINDS:
        issue(value_nodes.get("kind", node), f"unknown kind '{kind}'.{did_you_mean(kind, KINDS)}",
              "kind: cloze | question", "unknown-key")
    status = values.get("status", "draft")
    if status not in STATUSES:
        issue(value_nodes.get("status", node), f"unknown status '{status}'.{did_you_mean(status, STATUSES)}",
              "status: reviewed | draft", "unknown-key")
    return Template(values["id"], lang, predicate, kind, values["text"], status, values.get("source", ""),
                    shown, line, anchor, values.get("timeless", "").strip())
