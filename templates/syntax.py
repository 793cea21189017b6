"""Tokenizer and parser of the template language (docs/templates.md, TEMPLATE_SYNTAX).

```
template := (TEXT | slot | group)*
slot     := "[" NAME ("." FEATURE)* ("+" PARTICLE)? "]"          [X]  [Y.loc]  [Y.def.de]  [X+은]
group    := "{" NAME ":" option ("|" option)* "}"                 {X: masc=né | fem=née | other=né(e)}
option   := VALUE ("+" VALUE)* "=" FORM                           FORM may be empty: {X: masc= | fem=ت}
```
A VALUE is a gender (masc fem neut), a number (sg pl), a life status (alive dead) or ``other``; values
joined by ``+`` hold together (``fem+dead=была``): the renderer picks the most specific option that holds
for the entity (``render.choose_option``), ``other`` when none does.
Every node keeps its character offsets inside the template text, so errors can point at
``file:line:col`` once the library adds where the text sits in its YAML file.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from factatlas.templates.morphology import ARTICLES, CASES, NUMBERS, PREPOSITIONS, Features

SLOT_NAMES = ("X", "Y")
GENDER_VALUES = ("masc", "fem", "neut")
NUMBER_VALUES = ("sg", "pl")
LIFE_VALUES = ("alive", "dead")  # the subject's life status (records.Life); unknown takes the other forms
OPTION_VALUES = (*GENDER_VALUES, *NUMBER_VALUES, *LIFE_VALUES, "other")
_VALUE_KIND = {**{v: "gender" for v in GENDER_VALUES}, **{v: "number" for v in NUMBER_VALUES},
               **{v: "life" for v in LIFE_VALUES}}

# Letters that look like X / Y in other scripts: a template written with them would never render.
LOOKALIKES = {
    "Х": "X", "х": "X", "Χ": "X", "χ": "X", "Ｘ": "X", "x": "X",
    "У": "Y", "у": "Y", "Υ": "Y", "Ｙ": "Y", "y": "Y", "Ү": "Y",
}


class TemplateSyntaxError(ValueError):
    """A parse error at ``offset`` (0-based, in the template text) with a fix hint."""

    def __init__(self, message: str, offset: int, hint: str = ""):
        self.message, self.offset, self.hint = message, offset, hint
        super().__init__(f"{message} (at offset {offset})" + (f"; {hint}" if hint else ""))


@dataclass(frozen=True, slots=True)
class Text:
    value: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Slot:
    name: str  # "X" | "Y"
    features: Features
    raw: str  # the slot as written, e.g. "[Y.def.de]"
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Option:
    value: str  # masc | fem | neut | sg | pl | alive | dead | other, or values joined by "+": fem+dead
    form: str
    start: int  # offset of the value
    form_start: int = 0  # offset of the form's first character

    @property
    def values(self) -> tuple[str, ...]:
        """The values that must all hold for this form (``("fem", "dead")`` for ``fem+dead``)."""
        return tuple(self.value.split("+"))


@dataclass(frozen=True, slots=True)
class Group:
    slot: str
    options: tuple[Option, ...]
    start: int
    end: int

    def form(self, value: str) -> str | None:
        for o in self.options:
            if o.value == value:
                return o.form
        return None

    @property
    def values(self) -> tuple[str, ...]:
        """The options' values as written (``fem+dead`` stays one value)."""
        return tuple(o.value for o in self.options)

    @property
    def atoms(self) -> frozenset[str]:
        """Every single value any option names (``fem+dead`` gives ``fem`` and ``dead``)."""
        return frozenset(v for o in self.options for v in o.values)


Node = Text | Slot | Group


@dataclass(frozen=True, slots=True)
class ParsedTemplate:
    text: str
    nodes: tuple[Node, ...]

    def slots(self, name: str | None = None) -> tuple[Slot, ...]:
        return tuple(n for n in self.nodes if isinstance(n, Slot) and (name is None or n.name == name))

    @property
    def groups(self) -> tuple[Group, ...]:
        return tuple(n for n in self.nodes if isinstance(n, Group))

    def answer_span(self) -> tuple[int, int] | None:
        """Node indexes (first, last) of the answer: the [Y] slot and the {Y: ...} groups joined to it by
        spaces only. Words that agree with the answer («{Y: sg=ist | pl=sind} [Y.def.nom]») belong to it:
        they are rendered per candidate, inside the filler, so the text outside stays the same for all.
        None without a [Y] slot."""
        at = next((i for i, n in enumerate(self.nodes) if isinstance(n, Slot) and n.name == "Y"), None)
        if at is None:
            return None

        def joins(i: int) -> bool:
            node = self.nodes[i]
            return isinstance(node, Text) and not node.value.strip()

        def absorbs(i: int) -> bool:
            node = self.nodes[i]
            return isinstance(node, Group) and node.slot == "Y"

        first = last = at
        while True:
            if first >= 1 and absorbs(first - 1):
                first -= 1
            elif first >= 2 and joins(first - 1) and absorbs(first - 2):
                first -= 2
            else:
                break
        while True:
            if last + 1 < len(self.nodes) and absorbs(last + 1):
                last += 1
            elif last + 2 < len(self.nodes) and joins(last + 1) and absorbs(last + 2):
                last += 2
            else:
                break
        return first, last


# ---- tokenizer ---------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # TEXT LBRACK RBRACK LBRACE RBRACE NAME DOT PLUS COLON EQ PIPE FORM END
    value: str
    start: int


def _char_name(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, '?')}"


def tokenize(text: str) -> list[Token]:
    """Split a template into tokens. Modal: text, inside ``[...]``, inside ``{...}``."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "[":
            i = _lex_slot(text, i, tokens)
        elif ch == "{":
            i = _lex_group(text, i, tokens)
        elif ch in "]}":
            opener = "[" if ch == "]" else "{"
            raise TemplateSyntaxError(f"unmatched '{ch}'", i, f"remove it or add the opening '{opener}'")
        else:
            j = i
            while j < n and text[j] not in "[]{}":
                j += 1
            tokens.append(Token("TEXT", text[i:j], i))
            i = j
    tokens.append(Token("END", "", n))
    return tokens


def _lex_slot(text: str, i: int, tokens: list[Token]) -> int:
    start = i
    tokens.append(Token("LBRACK", "[", i))
    i += 1
    n = len(text)
    while True:
        if i >= n:
            raise TemplateSyntaxError("unclosed slot '['", start, "close it with ']', e.g. [X] or [Y.loc]")
        ch = text[i]
        if ch == "]":
            tokens.append(Token("RBRACK", "]", i))
            return i + 1
        if ch.isspace():
            raise TemplateSyntaxError("space inside a slot", i, "write slots without spaces: [X], [Y.loc]")
        if ch in "[{}":
            raise TemplateSyntaxError(f"'{ch}' inside a slot", i, "close the slot with ']' first")
        if ch == ".":
            tokens.append(Token("DOT", ".", i))
            i += 1
        elif ch == "+":
            tokens.append(Token("PLUS", "+", i))
            j = i + 1
            while j < n and text[j] not in "]" and not text[j].isspace() and text[j] not in "[{}.+":
                j += 1
            tokens.append(Token("NAME", text[i + 1:j], i + 1))
            i = j
        else:
            j = i
            while j < n and text[j] not in ".+][{}" and not text[j].isspace():
                j += 1
            tokens.append(Token("NAME", text[i:j], i))
            i = j


def _lex_group(text: str, i: int, tokens: list[Token]) -> int:
    start = i
    n = len(text)
    tokens.append(Token("LBRACE", "{", i))
    i += 1
    # slot name up to ':'
    colon = i
    while colon < n and text[colon] not in ":}|=[{":
        colon += 1
    if colon >= n or text[colon] != ":":
        raise TemplateSyntaxError("agreement group without ':'", start,
                                  "write {X: masc=form | fem=form | other=form}")
    name = text[i:colon]
    tokens.append(Token("NAME", name.strip(), i + (len(name) - len(name.lstrip()))))
    tokens.append(Token("COLON", ":", colon))
    i = colon + 1
    while True:
        # VALUE '=' FORM ('|' | '}')
        eq = i
        while eq < n and text[eq] not in "=|}[{":
            eq += 1
        if eq >= n:
            raise TemplateSyntaxError("unclosed agreement group '{'", start, "close it with '}'")
        if text[eq] != "=":
            while i < eq and text[i].isspace():
                i += 1
            raise TemplateSyntaxError("agreement option without '='", i,
                                      "write value=form, e.g. masc=né (an empty form is 'masc=')")
        value = text[i:eq]
        tokens.append(Token("NAME", value.strip(), i + (len(value) - len(value.lstrip()))))
        tokens.append(Token("EQ", "=", eq))
        j = eq + 1
        while j < n and text[j] not in "|}":
            if text[j] in "[{]":
                raise TemplateSyntaxError(f"'{text[j]}' inside an agreement option", j,
                                          "options hold plain words; put slots outside the {...} group")
            j += 1
        if j >= n:
            raise TemplateSyntaxError("unclosed agreement group '{'", start, "close it with '}'")
        tokens.append(Token("FORM", text[eq + 1:j], eq + 1))
        if text[j] == "}":
            tokens.append(Token("RBRACE", "}", j))
            return j + 1
        tokens.append(Token("PIPE", "|", j))
        i = j + 1


# ---- parser ------------------------------------------------------------------------------------

_FEATURE_KIND = {**{c: "case" for c in CASES}, **{n: "number" for n in NUMBERS},
                 **{a: "article" for a in ARTICLES}, **{p: "preposition" for p in PREPOSITIONS}}


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0

    def peek(self) -> Token:
        return self.tokens[self.pos]

    def take(self, kind: str) -> Token:
        tok = self.tokens[self.pos]
        if tok.kind != kind:
            raise TemplateSyntaxError(f"expected {kind.lower()}, found '{tok.value or 'end of text'}'", tok.start)
        self.pos += 1
        return tok

    def parse(self) -> ParsedTemplate:
        nodes: list[Node] = []
        while self.peek().kind != "END":
            tok = self.peek()
            if tok.kind == "TEXT":
                self.pos += 1
                nodes.append(Text(tok.value, tok.start, tok.start + len(tok.value)))
            elif tok.kind == "LBRACK":
                nodes.append(self.slot())
            elif tok.kind == "LBRACE":
                nodes.append(self.group())
            else:  # pragma: no cover - the tokenizer never yields other kinds at top level
                raise TemplateSyntaxError(f"unexpected '{tok.value}'", tok.start)
        return ParsedTemplate(self.text, tuple(nodes))

    def slot_name(self, tok: Token) -> str:
        name = tok.value
        if name in SLOT_NAMES:
            return name
        if name in LOOKALIKES:
            raise TemplateSyntaxError(
                f"unknown slot '{name}' ({_char_name(name)})", tok.start,
                f"it looks like '{LOOKALIKES[name]}'; type the Latin capital letter: [{LOOKALIKES[name]}]")
        raise TemplateSyntaxError(f"unknown slot '{name}'", tok.start,
                                  "slots are [X] (subject) and [Y] (object, the answer)")

    def slot(self) -> Slot:
        open_tok = self.take("LBRACK")
        name_tok = self.peek()
        if name_tok.kind != "NAME" or not name_tok.value:
            raise TemplateSyntaxError("empty slot", open_tok.start, "write [X] or [Y]")
        self.pos += 1
        name = self.slot_name(name_tok)
        kinds: dict[str, str] = {}
        particle = None
        while self.peek().kind == "DOT":
            self.pos += 1
            ftok = self.peek()
            if ftok.kind != "NAME" or not ftok.value:
                raise TemplateSyntaxError("empty feature after '.'", ftok.start, "remove the '.' or name a feature")
            self.pos += 1
            kind = _FEATURE_KIND.get(ftok.value)
            if kind is None:
                from factatlas.errors import did_you_mean

                raise TemplateSyntaxError(
                    f"unknown feature '{ftok.value}'.{did_you_mean(ftok.value, _FEATURE_KIND)}", ftok.start,
                    "features: case " + " ".join(CASES) + ", number " + " ".join(NUMBERS) + ", article "
                    + " ".join(ARTICLES) + ", prepositions " + " ".join(PREPOSITIONS))
            if kind in kinds:
                raise TemplateSyntaxError(f"two {kind} features ('{kinds[kind]}' and '{ftok.value}')", ftok.start,
                                          f"keep one {kind}")
            kinds[kind] = ftok.value
        if self.peek().kind == "PLUS":
            self.pos += 1
            ptok = self.take("NAME")
            if not ptok.value:
                raise TemplateSyntaxError("empty particle after '+'", ptok.start, "write e.g. [X+은]")
            particle = ptok.value
        close = self.peek()
        if close.kind != "RBRACK":
            raise TemplateSyntaxError(f"unexpected '{close.value}' in slot", close.start,
                                      "features follow '.', a Korean particle follows '+': [Y.loc], [X+은]")
        self.pos += 1
        feats = Features(kinds.get("case"), kinds.get("number"), kinds.get("article"),
                         kinds.get("preposition"), particle)
        return Slot(name, feats, self.text[open_tok.start:close.start + 1], open_tok.start, close.start + 1)

    def group(self) -> Group:
        open_tok = self.take("LBRACE")
        name_tok = self.take("NAME")
        if not name_tok.value:
            raise TemplateSyntaxError("agreement group without a slot", name_tok.start, "write {X: masc=... }")
        name = self.slot_name(name_tok)
        self.take("COLON")
        options: list[Option] = []
        seen: set[str] = set()
        while True:
            vtok = self.take("NAME")
            value = self.option_value(vtok)
            key = "+".join(sorted(value.split("+")))
            if key in seen:
                raise TemplateSyntaxError(f"agreement value '{value}' given twice", vtok.start,
                                          "keep one form per value")
            seen.add(key)
            self.take("EQ")
            ftok = self.take("FORM")
            lead = len(ftok.value) - len(ftok.value.lstrip())
            options.append(Option(value, ftok.value.strip(), vtok.start, ftok.start + lead))
            nxt = self.peek()
            if nxt.kind == "PIPE":
                self.pos += 1
                continue
            close = self.take("RBRACE")
            return Group(name, tuple(options), open_tok.start, close.start + 1)


    def option_value(self, tok: Token) -> str:
        """An option's value: one known value, or values of different kinds joined by '+' (no spaces)."""
        from factatlas.errors import did_you_mean

        parts = tok.value.split("+")
        kinds: dict[str, str] = {}
        offset = tok.start
        for part in parts:
            if part not in OPTION_VALUES:
                raise TemplateSyntaxError(
                    f"unknown agreement value '{part}'.{did_you_mean(part, OPTION_VALUES)}", offset,
                    "values: " + " ".join(OPTION_VALUES) + "; join values of different kinds with '+': fem+dead")
            if part == "other" and len(parts) > 1:
                raise TemplateSyntaxError("'other' joined with other values", offset,
                                          "'other' stands alone: it is the form when no other option holds")
            kind = _VALUE_KIND.get(part)
            if kind in kinds:
                raise TemplateSyntaxError(f"two {kind} values ('{kinds[kind]}' and '{part}') in one option", offset,
                                          "an entity has one of each; write one option per value")
            if kind:
                kinds[kind] = part
            offset += len(part) + 1
        return tok.value


@lru_cache(maxsize=65536)
def parse(text: str) -> ParsedTemplate:
    """Parse a template text (cached: the same text parses once per process)."""
    return _Parser(text).parse()
