"""Jupyter notebooks as downstream files: the Python of their code cells, read from the notebook's JSON.

A notebook's code cells run one after the other in one namespace (an import in the first cell serves
the last), so they are scanned as one text: the cells' lines in order. What is not Python is kept out
of that text line by line, each such line replaced by `pass` at its indentation (so blocks around it
still parse and every other line keeps its number): a cell magic (`%%time` on a cell's first line:
the whole cell), a line magic (`%matplotlib inline`, `x = %who_ls`), a shell escape (`!pip install`,
`files = !ls`) and a help request (`np.sum?`). Only the first line of a logical line is one of these
(a `%` inside a string or a bracket is Python). A cell that still does not parse is left out whole
and said so (`Notebook.problems`); the others are scanned.

Every line of the scanned text knows its cell (numbered from 1 over all the notebook's cells, as
Jupyter and editors show them), its line in that cell, and where its characters are in the JSON file
itself (`NotebookMap.json_position`): SARIF and GitHub annotations point into the file as it is.

The JSON is hostile input like any source file: its size is bounded before it is read, and the walk
over it decodes only the cells' `source` and `cell_type`, the kernel's language and the format's
version; everything else (outputs, metadata) is stepped over undecoded, one step per string and
bracket, within bounds on their number and nesting. The cell count and the code cells' text (as a
source file's) are bounded too. Memory stays about the file's text. Nothing is run.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from apidrift.auditor.core.notebook_map import JSON_CHAR, CellProblem, NotebookMap, Segment, Skipped

MAX_NOTEBOOK_BYTES = (
    32 * 1024 * 1024
)  # outputs (images) make notebooks large: the JSON is skipped over, not kept
MAX_CODE_CHARS = 2 * 1024 * 1024  # the code cells' text, bounded as a source file is (walk.MAX_FILE_BYTES)
MAX_CELLS = 10_000
MAX_JSON_VALUES = 1_000_000  # strings, arrays and objects stepped over: about 1.4 s for a million
MAX_JSON_DEPTH = 200  # real notebooks nest about 10 deep; widget and plot outputs a few dozen
MAX_DECODED = 64 * 1024  # the few values decoded besides the sources (a cell's type, the kernel's language)

# What the walk steps over without decoding: a string literal, and a run of anything else but
# strings and brackets (numbers, literals, commas, colons, white space: a plot's data is one step).
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_JSON_OTHER = re.compile(r'[^"\[\]{}]*')
# json (and so nbformat) also reads the constants Python's `json.dumps` writes for non-finite floats
_JSON_SCALAR = re.compile(r"-?\d[\d.eE+-]*|true|false|null|NaN|-?Infinity")
_CLOSER = {"[": "]", "{": "}"}
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_WS = re.compile(r"[ \t\n\r]*")
_NEWLINE = re.compile(r"\r\n|\r|\n")
# The lines IPython reads as its own, at the start of a logical line.
_ASSIGNED_ESCAPE = re.compile(r"[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[!%]")


class NotebookError(ValueError):
    """The file is not a notebook this reader takes; the message is one line, said as the outcome."""


@dataclass(frozen=True)
class CellSource:
    """One cell's `source` as the JSON writes it: where its value is and how it is laid out."""

    number: int  # 1-based over all cells
    code: bool
    text: str  # the decoded source
    start: int  # offsets of the value (a string or an array of strings) in the JSON text
    end: int
    literals: tuple[tuple[int, int], ...]  # each string literal's start and end offset


@dataclass(frozen=True)
class Notebook:
    text: str  # what the parser reads: the code cells' lines, with what is not Python as `pass`
    lines: tuple[str, ...]  # the code cells' lines as written, for showing findings
    map: NotebookMap
    language: str | None  # the kernel's language, when the notebook names it
    cells: tuple[CellSource, ...]


def bounded_json(data: bytes) -> str:
    """The notebook's JSON text, within the size bound; or NotebookError. The walk that reads it
    bounds the rest: it decodes only the cells' sources and a few small values."""
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise NotebookError(f"notebook larger than {MAX_NOTEBOOK_BYTES // 1024 // 1024} MiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise NotebookError(f"not valid UTF-8 at byte {error.start}: {error.reason}") from None


def read_notebook(data: bytes) -> Notebook:
    """Read a notebook's code cells (nbformat 4) into one scannable text; or raise NotebookError."""
    text = bounded_json(data)
    cells, language, major = _walk(text)
    if major is not None and major < 4:
        raise NotebookError(f"nbformat {major} notebook: only nbformat 4 is read")
    return _assemble(text, cells, language)


# ---- the JSON walk: only cell types, sources and the language are decoded


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.values = 0

    def fail(self, what: str) -> NotebookError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return NotebookError(f"not a notebook: {what} at line {line} column {column}")

    def peek(self) -> str:
        self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]  # matches empty
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self, char: str) -> None:
        if self.peek() != char:
            raise self.fail(f"expected {char!r}")
        self.pos += 1

    def string(self) -> tuple[str, int, int]:
        if self.peek() != '"':
            raise self.fail("expected a string")
        start = self.pos
        try:
            value, self.pos = _scanstring(self.text, start + 1, True)
        except json.JSONDecodeError as error:
            raise self.fail(error.msg) from None
        return value, start, self.pos

    def count(self) -> None:
        self.values += 1
        if self.values > MAX_JSON_VALUES:
            raise NotebookError(
                f"notebook JSON with more than {MAX_JSON_VALUES:,} strings, arrays and objects"
            )

    def skip(self) -> None:
        """Step over one value without decoding it: strings and brackets one step each (bounded in
        number and depth), everything between them in one."""
        char = self.peek()
        if char == '"':
            self.count()
            match = _JSON_STRING.match(self.text, self.pos)
            if match is None:
                raise self.fail("unterminated string")
            self.pos = match.end()
            return
        if char not in _CLOSER:
            match = _JSON_SCALAR.match(self.text, self.pos)
            if match is None:
                raise self.fail("expected a value")
            self.pos = match.end()
            return
        expected: list[str] = []
        while True:
            char = self.text[self.pos] if self.pos < len(self.text) else ""
            if char == '"':
                self.count()
                match = _JSON_STRING.match(self.text, self.pos)
                if match is None:
                    raise self.fail("unterminated string")
                self.pos = match.end()
            elif char in _CLOSER:
                self.count()
                expected.append(_CLOSER[char])
                if len(expected) > MAX_JSON_DEPTH:
                    raise NotebookError(f"notebook JSON nested deeper than {MAX_JSON_DEPTH} levels")
                self.pos += 1
            elif char in "]}":
                if expected.pop() != char:
                    raise self.fail(f"unexpected {char!r}")
                self.pos += 1
                if not expected:
                    return
            elif not char:
                raise self.fail("unexpected end of the file")
            self.pos = _JSON_OTHER.match(self.text, self.pos).end()  # type: ignore[union-attr]  # matches empty

    def small(self) -> object:
        """A small value, decoded (a cell's type, a version number); None for a larger one, skipped."""
        start = self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]
        self.skip()
        if self.pos - start > MAX_DECODED:
            return None
        try:
            return json.loads(self.text[start : self.pos])
        except (ValueError, RecursionError):
            raise self.fail("invalid value") from None

    def members(self) -> Iterator[str]:
        """Each key of the object here; the caller reads (or skips) its value before the next."""
        self.take("{")
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            self.count()
            key, _, _ = self.string()
            self.take(":")
            yield key
            char = self.peek()
            self.pos += 1
            if char == "}":
                return
            if char != ",":
                self.pos -= 1
                raise self.fail("expected ',' or '}'")

    def items(self) -> Iterator[None]:
        """Once before each item of the array here; the caller reads (or skips) the item."""
        self.take("[")
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            yield
            char = self.peek()
            self.pos += 1
            if char == "]":
                return
            if char != ",":
                self.pos -= 1
                raise self.fail("expected ',' or ']'")


def _walk(text: str) -> tuple[list[CellSource], str | None, int | None]:
    reader = _Reader(text)
    cells: list[CellSource] = []
    language: str | None = None
    major: int | None = None
    if reader.peek() != "{":
        raise reader.fail("expected a JSON object")
    for key in reader.members():
        if key == "cells":
            cells = []
            if reader.peek() != "[":
                raise reader.fail("'cells' is not an array")
            for _ in reader.items():
                if len(cells) >= MAX_CELLS:
                    raise NotebookError(f"notebook with more than {MAX_CELLS:,} cells")
                cells.append(_cell(reader, len(cells) + 1))
        elif key == "metadata" and reader.peek() == "{":
            for inner in reader.members():
                if inner in ("kernelspec", "language_info"):
                    value = reader.small()  # read whether or not the language is known already
                    language = language or _language({inner: value})
                else:
                    reader.skip()
        elif key == "nbformat":
            value = reader.small()
            major = value if isinstance(value, int) and not isinstance(value, bool) else None
        else:
            reader.skip()
    if reader.peek():
        raise reader.fail("extra data after the notebook")
    return cells, language, major


def _cell(reader: _Reader, number: int) -> CellSource:
    if reader.peek() != "{":
        raise reader.fail("a cell is not an object")
    kind: object = None
    source: tuple[str, int, int, tuple[tuple[int, int], ...]] | None = None
    for key in reader.members():
        if key == "source":
            start = reader.pos = _WS.match(reader.text, reader.pos).end()  # type: ignore[union-attr]
            if reader.peek() == '"':
                reader.count()
                value, first, last = reader.string()
                source = (value, start, reader.pos, ((first, last),))
            elif reader.peek() == "[":
                parts: list[str] = []
                spans: list[tuple[int, int]] = []
                for _ in reader.items():
                    reader.count()
                    value, first, last = reader.string()
                    parts.append(value)
                    spans.append((first, last))
                source = ("".join(parts), start, reader.pos, tuple(spans))
            else:
                raise reader.fail("a cell's source is neither a string nor an array of strings")
        elif key == "cell_type":
            kind = reader.small()
        else:
            reader.skip()
    if source is None:
        return CellSource(number, kind == "code", "", reader.pos, reader.pos, ())
    return CellSource(number, kind == "code", *source)


def _language(metadata: object) -> str | None:
    if not isinstance(metadata, dict):
        return None
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(field), str):
            return str(value[field])
    return None


# ---- the scanned text


def _assemble(text: str, cells: list[CellSource], language: str | None) -> Notebook:
    parsed: list[str] = []
    shown: list[str] = []
    segments: list[tuple[Segment, ...]] = []
    starts: list[int] = []
    numbers: list[int] = []
    skipped: list[Skipped] = []
    problems: list[CellProblem] = []
    size = 0
    lines_at = _LineIndex(text)
    for cell in cells:
        if not cell.code or not cell.text:
            continue
        size += len(cell.text)
        if size > MAX_CODE_CHARS:
            raise NotebookError(f"code cells larger than {MAX_CODE_CHARS // 1024 // 1024} MiB in all")
        first = len(parsed) + 1
        lines = cell_lines(cell.text)
        python, kinds = python_lines(lines)
        problem = _parse_problem("\n".join(python))
        if problem is not None:
            problems.append(CellProblem(first, cell.number, problem))
            python = [""] * len(lines)
        for index, kind in kinds.items():
            skipped.append(Skipped(first + index, kind, lines[index].strip()[:200]))
        starts.append(first)
        numbers.append(cell.number)
        parsed.extend(python)
        shown.extend(lines)
        runs = _segments(text, cell, lines_at)
        segments.extend((runs + [()] * len(lines))[: len(lines)])
    return Notebook(
        "\n".join(parsed) + ("\n" if parsed else ""),
        tuple(shown),
        NotebookMap(tuple(starts), tuple(numbers), tuple(segments), tuple(skipped), tuple(problems)),
        language,
        tuple(cells),
    )


def cell_lines(text: str) -> list[str]:
    """A cell's lines, split where CPython's parser ends lines."""
    lines = _NEWLINE.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the newline that ends the last line opens no line of its own
    return lines


def python_lines(lines: list[str]) -> tuple[list[str], dict[int, str]]:
    """The cell's lines with each one that is IPython's, not Python, replaced by `pass` at its
    indentation; and what each replaced line was."""
    kinds: dict[int, str] = {}
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        return ["" for _ in lines], {first: "cell magic"}
    result = list(lines)
    for index in _logical_starts(lines):
        line = lines[index]
        stripped = line.lstrip()
        kind = None
        if stripped.startswith("%"):
            kind = "line magic"
        elif stripped.startswith("!"):
            kind = "shell escape"
        elif stripped.startswith("?") or (
            stripped.rstrip().endswith("?") and "#" not in stripped and not stripped.startswith("#")
        ):
            kind = "help request"
        elif _ASSIGNED_ESCAPE.match(stripped):
            kind = "shell escape" if "!" in stripped.split("=", 1)[1][:3] else "line magic"
        if kind is not None:
            kinds[index] = kind
            result[index] = line[: len(line) - len(stripped)] + "pass"
    return result, kinds


def _logical_starts(lines: list[str]) -> list[int]:
    """The indices of the lines that begin a logical line: not inside a string, a bracket, or after a
    backslash continuation. Quotes, brackets and comments are followed as the tokenizer does."""
    starts = []
    depth = 0
    quote: str | None = None  # the open string's quote (one or three characters)
    continued = False
    for index, line in enumerate(lines):
        if quote is None and depth == 0 and not continued:
            starts.append(index)
        continued = False
        position = 0
        length = len(line)
        if quote is not None and len(quote) == 1:
            quote = None  # a one-quote string ends with its line (an error, or a backslash the next line continues)
        while position < length:
            char = line[position]
            if quote is not None:
                if char == "\\":
                    position += 2
                    continue
                if line.startswith(quote, position):
                    position += len(quote)
                    quote = None
                    continue
                position += 1
                continue
            if char == "#":
                break
            if char in "\"'":
                quote = char * 3 if line.startswith(char * 3, position) else char
                position += len(quote)
                continue
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth = max(0, depth - 1)
            elif char == "\\" and position == length - 1:
                continued = True
            position += 1
    return starts


def _parse_problem(source: str) -> str | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarnings are no concern of this check
        try:
            ast.parse(source)
        except SyntaxError as error:
            return f"syntax error: {error.msg} (line {error.lineno} of the cell)"
        except (ValueError, RecursionError, MemoryError) as error:
            return f"cannot be parsed: {type(error).__name__}"
    return None


class _LineIndex:
    """Line and column of offsets of one text, asked for in ascending order (mostly)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 1

    def at(self, offset: int) -> tuple[int, int]:
        if offset < self.offset:
            self.offset, self.line = 0, 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line, offset - (self.text.rfind("\n", 0, offset) + 1) + 1


def _segments(text: str, cell: CellSource, lines_at: _LineIndex) -> list[tuple[Segment, ...]]:
    """For each line of the cell (as `_NEWLINE` splits it), where its characters are written in the
    JSON: one run per string literal the line's characters are in. One pass over the literals."""
    result: list[tuple[Segment, ...]] = []
    runs: list[Segment] = []
    column = 0
    after_cr = False

    def close(start: int, end: int) -> None:
        json_line, json_column = lines_at.at(start)
        runs.append(
            Segment(column - _decoded_length(text[start:end]), json_line, json_column, text[start:end])
        )

    for first, last in cell.literals:
        run: list[int] | None = None
        for match in JSON_CHAR.finditer(text, first + 1, last - 1):
            raw = match.group()
            char = raw if raw[0] != "\\" else json.loads(f'"{raw}"')
            if char == "\n" and after_cr:
                after_cr = False
                continue
            after_cr = char == "\r"
            if char in "\r\n":
                if run is not None:
                    close(*run)
                    run = None
                result.append(tuple(runs))
                runs, column = [], 0
                continue
            if run is None:
                run = [match.start(), match.end()]
            else:
                run[1] = match.end()
            column += 1
        if run is not None:
            close(*run)
    if runs or column:
        result.append(tuple(runs))
    return result


def _decoded_length(escaped: str) -> int:
    return sum(1 for _ in JSON_CHAR.finditer(escaped))


def cell_span(
    notebook_map: NotebookMap, line: int, column: int, end_line: int, end_column: int
) -> dict[str, int]:
    """A span of the scanned text as the notebook shows it: the cell, the line and end in the cell
    (never past it), and the region the span has in the JSON file itself when it has one."""
    cell, cell_line, first = notebook_map.cell_of(line)
    last = notebook_map.cell_range(line)[1]
    if not line <= end_line <= last:
        end_line, end_column = line, column
    where = {"cell": cell, "line": cell_line, "end_line": end_line - first + 1, "end_column": end_column}
    start = notebook_map.json_position(line, column)
    end = notebook_map.json_position(end_line, end_column)
    if start is not None and end is not None:
        where.update(json_line=start[0], json_column=start[1], json_end_line=end[0], json_end_column=end[1])
    return where
