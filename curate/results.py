"""SPARQL 1.1 JSON results read one binding at a time, as the body arrives.

``json.loads`` of a whole answer holds the body, the decoded text and every parsed row at once (about
0.8 KB a row): on full Wikidata one country's P27 candidates are millions of rows. ``iter_bindings`` walks
the document's structure (``{"head": ..., "results": {"bindings": [ ... ]}}``, keys in any order) and decodes
each binding with the standard library's own JSON decoder (``JSONDecoder.raw_decode``), so a row is exactly
what ``json.loads`` would give, while only the unread part of the current chunk and one row are held.

No extra dependency: the JSON format is what every engine serves alike (WDQS, QLever, Oxigraph, Virtuoso);
the TSV format would need a Turtle term parser per engine, and Virtuoso 7's TSV quotes IRIs like strings.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable, Iterator

from factatlas.errors import FactatlasError

_DECODER = json.JSONDecoder()
_SPACE = " \t\n\r"
MAX_VALUE_CHARS = 16 * 2**20  # one binding (or head) longer than this is not an answer being read, but garbage


class MalformedAnswer(FactatlasError):
    """The body is not a complete SPARQL JSON results document (cut short, or not JSON)."""


class _Reader:
    """Decoded text of the chunks, consumed from the front; refilled on demand."""

    def __init__(self, chunks: Iterable[bytes]):
        self._chunks = iter(chunks)
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self.buf, self.pos, self.ended = "", 0, False

    def _more(self) -> bool:
        """Append the next chunk's text to the unread rest; False once the body has ended."""
        if self.ended:
            return False
        try:
            chunk = next(self._chunks)
        except StopIteration:
            self.ended = True
            try:
                tail = self._utf8.decode(b"", final=True)
            except UnicodeDecodeError as e:
                raise MalformedAnswer(f"the answer ends inside a UTF-8 character ({e.reason})") from e
            self.buf, self.pos = self.buf[self.pos:] + tail, 0
            return bool(tail)
        try:
            text = self._utf8.decode(chunk)
        except UnicodeDecodeError as e:
            raise MalformedAnswer(f"the answer is not UTF-8 ({e.reason})") from e
        self.buf, self.pos = self.buf[self.pos:] + text, 0
        return True

    def peek(self) -> str:
        """The next character that is not white space (consumed up to it); '' at the end of the body."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _SPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self._more():
                return ""

    def expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            shown = repr(found) if found else "the end of the body"
            raise MalformedAnswer(f"expected {char!r} in the SPARQL JSON answer, found {shown}")
        self.pos += 1

    def value(self):
        """One whole JSON value at the front: decoded as ``json.loads`` would, reading on while it is cut."""
        self.peek()
        while True:
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                if len(self.buf) - self.pos < MAX_VALUE_CHARS and self._more():
                    continue
                raise MalformedAnswer(f"the answer is cut short or not JSON ({e.msg})") from e
            # a number at the very end of the text may go on in the next chunk ("12" then "34")
            if end == len(self.buf) and not isinstance(obj, (dict, list, str)) and self._more():
                continue
            self.pos = end
            return obj


def _members(reader: _Reader) -> Iterator[str]:
    """The keys of the object whose '{' comes next, each left for the caller to read its value."""
    reader.expect("{")
    if reader.peek() == "}":
        reader.pos += 1
        return
    while True:
        key = reader.value()
        if not isinstance(key, str):
            raise MalformedAnswer("an object key in the SPARQL JSON answer is not a string")
        reader.expect(":")
        yield key
        if reader.peek() == ",":
            reader.pos += 1
            continue
        reader.expect("}")
        return


def _rows(reader: _Reader) -> Iterator[dict]:
    """The bindings of the array whose first element comes next, up to and including its ']'.

    The common layout (``{...},{...}``, no space between: Oxigraph, and most engines' compact output) is
    read by one scanner call per row from the decoded text as it stands; anything else (white space, a
    row cut by the end of a chunk) goes through the reader's general steps."""
    scan = _DECODER.scan_once
    while True:
        buf, pos = reader.buf, reader.pos
        try:
            while True:  # the fast path: rows back to back within the text already decoded
                row, end = scan(buf, pos)
                if type(row) is not dict:
                    raise MalformedAnswer("a binding in the SPARQL JSON answer is not an object")
                if buf[end:end + 1] != "," or end + 1 >= len(buf):
                    break
                yield row
                pos = end + 1
        except (StopIteration, json.JSONDecodeError):  # white space, or a row cut by the chunk's end
            reader.pos = pos
            row = reader.value()
            if not isinstance(row, dict):
                raise MalformedAnswer("a binding in the SPARQL JSON answer is not an object") from None
            end = reader.pos
        reader.pos = end
        yield row
        if reader.peek() == ",":
            reader.pos += 1
            continue
        reader.expect("]")
        return


def iter_bindings(chunks: Iterable[bytes]) -> Iterator[dict]:
    """The bindings of a SPARQL JSON results document, one at a time, from its body's chunks. Raises
    ``MalformedAnswer`` when the body ends before the document does, or has no ``results.bindings``; what
    came after the last binding (``"distinct"``, ``"ordered"``) is read and checked, not kept."""
    reader = _Reader(chunks)
    seen = False
    for key in _members(reader):
        if key != "results":
            reader.value()  # "head" (variables, links), "boolean": small, read whole
            continue
        for inner in _members(reader):
            if inner != "bindings":
                reader.value()
                continue
            seen = True
            reader.expect("[")
            if reader.peek() == "]":
                reader.pos += 1
                continue
            yield from _rows(reader)
    if reader.peek():
        raise MalformedAnswer("the SPARQL JSON answer goes on after its end")
    if not seen:
        raise MalformedAnswer("the SPARQL JSON answer has no results.bindings")
