"""A large file parsed in pieces that end where a top-level statement ends (memory stays bounded)."""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterator

# Where a top-level statement may start: a line that begins with code, and not with a clause that
# continues the statement before it.
_STATEMENT_START = re.compile(r"^(?=[^\s#)\]}])(?!(?:else|elif|except|finally)\b)", re.MULTILINE)


def parse_quietly(source: str) -> ast.Module:
    """`ast.parse`, its warnings (an invalid escape sequence) silenced: they say nothing about the
    tree, and where warnings are errors (`-W error`, a test runner's filters) they would refuse a file
    CPython runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source)


def parse_expression_quietly(source: str) -> ast.Expression:
    """`ast.parse(source, mode="eval")`, its warnings silenced (as `parse_quietly`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(source, mode="eval")


def _parse(source: str, chunk_chars: int) -> Iterator[ast.Module]:
    """The file's tree, in pieces of about `chunk_chars` for a large file.

    A piece ends before a line that starts at column 0 and only where the text before parses: then
    the tokenizer is at the top level there (no string, bracket or continuation is open, since the
    piece would not parse), so the pieces' statements are exactly the file's. Each piece is parsed
    after as many empty lines as precede it, so line numbers are the file's.
    """
    if len(source) <= chunk_chars:
        yield parse_quietly(source)
        return
    start = 0
    lines_before = 0
    while start < len(source):
        size = chunk_chars
        while True:
            boundary = _STATEMENT_START.search(source, start + size) if start + size < len(source) else None
            end = boundary.start() if boundary is not None else len(source)
            try:
                module = parse_quietly("\n" * lines_before + source[start:end])
                break
            except SyntaxError as error:
                if end >= len(source) or _is_nesting_error(error):
                    raise
                size *= 2  # the piece ends inside a string, brackets or a decorated definition: go on
        yield module
        del module
        lines_before += source.count("\n", start, end) + _lone_returns(source, start, end)
        start = end


def _lone_returns(source: str, start: int, end: int) -> int:
    """Line breaks in source[start:end] written as a lone \\r (CPython counts them as lines)."""
    returns = source.count("\r", start, end)
    return returns - source.count("\r\n", start, end) if returns else 0


def _is_nesting_error(error: SyntaxError) -> bool:
    return any(
        marker in str(error.msg)
        for marker in ("too many nested", "too many levels", "too many statically", "too complex")
    )
