"""Python source files as read from untrusted trees: bytes -> text (PEP 263), and a cheap check that a parser can take them.

Used by both sides before parsing: the upstream loader (griffe) and LibCST's parse of the downstream files CPython refuses (then converted to CPython's tree; `astscan` counts nesting itself while it visits).
LibCST's native parser recurses once per nesting level on the C stack, so a few thousand nested
brackets, unary operators, attribute or call chains crash the whole process (a segfault, not an
exception), and a few hundred already make its Python-level visitors slow and raise RecursionError.
`nesting_problem` measures the nesting first with CPython's own parser, which refuses such input
cleanly and quickly, and says why a file must be skipped. Nothing here imports or runs the code.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

from apidrift.auditor.core.wording import first_line

MAX_NESTING = (
    400  # AST nesting levels (as LibCST nests them) above which a file is not parsed (it crashes near 1,500)
)
_LONG_SPAN = 2_000  # characters: string literals longer than this are checked for implicit concatenation
_CPYTHON_NESTING_ERRORS = (
    "too many nested parentheses",
    "too many levels of indentation",
    "too many statically nested blocks",
    "too complex",
)
_OPERATORS = re.compile(r"[-+*/%@&|^~.(\[{]|\b(?:and|or|not|lambda|if)\b")
_CLOSERS = re.compile(r"[)\]}]")
_QUOTES = re.compile(r"""(?:[rRbBuUfF]{0,2})(?:'''|\"\"\"|'|")""")


class SourceDecodeError(ValueError):
    """The bytes are not text in the encoding the file declares (or UTF-8); the message is one line."""


def decode_source(data: bytes) -> str:
    """Source bytes to text, honouring a BOM or a PEP 263 coding cookie; raise `SourceDecodeError`."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except (
        SyntaxError
    ) as error:  # a BOM and a cookie that disagree, an unknown encoding, or bad UTF-8 early on
        if str(error).startswith("invalid or missing encoding declaration"):
            encoding = "utf-8"  # no cookie, and the first lines are not UTF-8: say where, below
        else:
            raise SourceDecodeError(first_line(error)) from None
    try:
        return data.decode(encoding)
    except LookupError:
        raise SourceDecodeError(f"unknown encoding {encoding!r}") from None
    except UnicodeDecodeError as error:
        raise SourceDecodeError(f"not valid {error.encoding} at byte {error.start}: {error.reason}") from None


def nesting_problem(text: str) -> str | None:
    """Why `text` is too deeply nested to parse safely, or None when it can be given to a parser."""
    try:
        tree = ast.parse(text)
    except (RecursionError, MemoryError):
        return "nesting too deep to parse"
    except SyntaxError as error:
        if any(marker in str(error.msg) for marker in _CPYTHON_NESTING_ERRORS):
            return f"nesting too deep to parse ({error.msg})"
        return _rough_nesting(text)  # invalid for this Python (older or newer syntax): estimate from the text
    except ValueError:  # null bytes (Python 3.11)
        return _rough_nesting(text)
    return depth_problem(tree, text)


def depth_problem(tree: ast.AST, text: str) -> str | None:
    """Why the parsed `tree` of `text` is too deeply nested to scan, or None."""
    depth = _depth(tree, text)
    if depth > MAX_NESTING:
        return f"nesting too deep to parse ({depth} levels, at most {MAX_NESTING})"
    return None


def parse_problem(error: SyntaxError) -> str | None:
    """For CPython's refusal of a file: the nesting outcome when it is about nesting, else None."""
    if any(marker in str(error.msg) for marker in _CPYTHON_NESTING_ERRORS):
        return f"nesting too deep to parse ({error.msg})"
    return None


def _depth(tree: ast.AST, text: str) -> int:
    """The nesting depth of `tree` as LibCST builds it: boolean operations and implicit string
    concatenations nest one level per operand there, while `ast` keeps them flat."""
    lines: list[str] | None = None
    best = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.BoolOp):
            depth += len(node.values) - 1
        elif isinstance(node, (ast.Constant, ast.JoinedStr)) and isinstance(
            getattr(node, "value", ""), (str, bytes)
        ):
            end = getattr(node, "end_lineno", None)
            if end is not None and (
                end > node.lineno or (node.end_col_offset or 0) - node.col_offset > _LONG_SPAN
            ):
                lines = lines if lines is not None else text.splitlines()
                segment = "\n".join(lines[node.lineno - 1 : end])
                if len(segment) > _LONG_SPAN or end - node.lineno > 50:
                    depth += len(_QUOTES.findall(segment)) // 2
        best = max(best, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return best


def _rough_nesting(text: str) -> str | None:
    """For text CPython cannot parse: refuse it when a rough textual bound on its nesting is too high.

    Counts operators, dots and opening brackets over each run of lines that brackets or backslashes
    join into one logical line; a file whose count passes the bound is refused (strings and comments
    count too: this errs on the side of not parsing, and only for files this Python cannot parse).
    """
    depth = 0
    run = 0
    for line in text.splitlines():
        run += len(_OPERATORS.findall(line))
        if run > MAX_NESTING * 4:
            return "not parsed: invalid syntax for this Python, and too deeply nested to parse safely"
        depth = max(
            0, depth + line.count("(") + line.count("[") + line.count("{") - len(_CLOSERS.findall(line))
        )
        if depth == 0 and not line.rstrip().endswith("\\"):
            run = 0
    return None
