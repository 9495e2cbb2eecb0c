"""The source as CPython numbers it: lines, UTF-8 byte columns turned into characters, the text of a
node, and the positions `ast` does not record (a `from` module, an imported name, a def's name)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from bisect import bisect_right
from typing import Protocol

from apidrift.auditor.core.sites import Span
from apidrift.auditor.downstream.astscan.values import _Function


class Located(Protocol):
    """A node that `ast` gives a position: an expression, a statement, an argument, an alias, a keyword."""

    @property
    def lineno(self) -> int: ...
    @property
    def col_offset(self) -> int: ...
    @property
    def end_lineno(self) -> int | None: ...
    @property
    def end_col_offset(self) -> int | None: ...


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_GAP = r"(?:[ \t\f]|\\\r?\n|\\\r)"  # what may separate two tokens on one logical line
_FROM_MODULE = re.compile(rf"from{_GAP}+(\w+(?:{_GAP}*\.{_GAP}*\w+)*)")
_DEF_NAME = re.compile(rf"(?:async{_GAP}+)?def{_GAP}+(\w+)")
_IDENTIFIER = re.compile(r"\w+")


class _Text:
    """The source as CPython numbers it: lines split at \\n, \\r\\n and \\r; byte columns to characters."""

    def __init__(self, source: str) -> None:
        self.source = source
        starts = [0]
        starts.extend(m.end() for m in _LINE_BREAK.finditer(source))
        self.starts = starts
        self.ascii = source.isascii()
        self._encoded: dict[int, bytes] = {}

    def line(self, lineno: int) -> str:
        starts = self.starts
        start = starts[lineno - 1]
        end = starts[lineno] if lineno < len(starts) else len(self.source)
        return self.source[start:end]

    def column(self, lineno: int, byte_column: int) -> int:
        """The character column of a UTF-8 byte column on line `lineno` (1-based)."""
        if self.ascii:
            return byte_column
        line = self.line(lineno)
        if line.isascii():
            return byte_column
        encoded = self._encoded.get(lineno)
        if encoded is None:
            encoded = self._encoded[lineno] = line.encode("utf-8", "surrogatepass")
        return len(encoded[:byte_column].decode("utf-8", "replace"))

    def offset(self, lineno: int, byte_column: int) -> int:
        return self.starts[lineno - 1] + self.column(lineno, byte_column)

    def position(self, offset: int) -> tuple[int, int]:
        """(line, 0-based character column) of a character offset."""
        index = bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index]

    def span(self, node: Located) -> Span:
        line, end_line, end_column = node.lineno, node.end_lineno, node.end_col_offset
        assert end_line is not None and end_column is not None  # the parser sets both
        return Span(
            line, self.column(line, node.col_offset) + 1, end_line, self.column(end_line, end_column) + 1
        )

    def failing_at(self, node: ast.Attribute | ast.Call) -> Span | None:
        """Where CPython (3.10 on) places a failure of an attribute or a method call, when not where the
        node starts (None): an attribute read, stored or deleted, or a method called (`obj.m(...)`),
        whose attribute name is written on a later line than the node starts fails at that name
        (`f(\n).decode()` fails on `.decode`'s line; compiler `update_start_location_to_match_attr`),
        up to the node's end. Any other failure of a call (its arguments) is where the call starts."""
        attribute = node.func if isinstance(node, ast.Call) else node
        if not isinstance(attribute, ast.Attribute):
            return None
        end_line, end_column = attribute.end_lineno, attribute.end_col_offset
        assert end_line is not None and end_column is not None  # the parser sets both
        if end_line == node.lineno:
            return None
        start = self.column(end_line, end_column) - len(attribute.attr)
        node_end_line, node_end = node.end_lineno, node.end_col_offset
        assert node_end_line is not None and node_end is not None
        return Span(end_line, max(start, 0) + 1, node_end_line, self.column(node_end_line, node_end) + 1)

    def bounds(self, node: Located) -> tuple[int, int]:
        """The node's character offsets [start, end)."""
        end_line, end_column = node.end_lineno, node.end_col_offset
        assert end_line is not None and end_column is not None  # the parser sets both
        return self.offset(node.lineno, node.col_offset), self.offset(end_line, end_column)

    def segment(self, node: Located) -> str:
        start, end = self.bounds(node)
        return self.source[start:end]

    def parenthesized(self, node: Located, indent: str) -> str:
        """The node's text with the brackets that group it (`(1)` for a default written `=(1)`), as
        LibCST prints a node on its own: continuation lines lose the block's `indent`, except inside
        a string literal.

        Only for an expression right after `=` or `:` (a default, an annotation), where every `(`
        between that sign and the expression groups the expression itself."""
        start, end = self.bounds(node)
        source = self.source
        opened = 0
        at = start
        while at > 0:
            char = source[at - 1]
            if char == "(":
                opened += 1
                start = at - 1
            elif not char.isspace() and char != "\\":
                break
            at -= 1
        at = end
        while opened and at < len(source):
            char = source[at]
            if char == ")":
                opened -= 1
                end = at + 1
            elif not char.isspace() and char != "\\":
                break
            at += 1
        code = source[start:end]
        if indent and ("\n" in code or "\r" in code):
            code = _dedent(code, indent)
        return code

    def span_of(self, start: int, end: int) -> Span:
        line, column = self.position(start)
        end_line, end_column = self.position(end)
        return Span(line, column + 1, end_line, end_column + 1)


def _dedent(code: str, indent: str) -> str:
    """`code` without `indent` at the start of its continuation lines, except lines inside a string."""
    lines = code.splitlines(keepends=True)
    inside: set[int] = set()  # 0-based numbers of lines that start within a string literal
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                inside.update(
                    range(token.start[0], token.end[0])
                )  # rows are 1-based: the lines after the first
    except (tokenize.TokenError, SyntaxError):
        pass
    return "".join(
        line[len(indent) :] if number and number not in inside and line.startswith(indent) else line
        for number, line in enumerate(lines)
    )


def _name_span(function: _Function, text: _Text) -> Span:
    """Where a function's name is written: after `def` (ast records where `def` starts)."""
    start = text.offset(function.lineno, function.col_offset)
    match = _DEF_NAME.match(text.source, start)
    if match is None:  # not reached: the parser saw `def NAME` here
        return text.span(function)
    return text.span_of(match.start(1), match.end(1))
