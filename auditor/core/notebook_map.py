"""Where a notebook's scanned lines are in the notebook: its cells and its JSON text.

The part of a read notebook that travels with a file's use sites (`FileScan.notebook`) and that every
stage after the scan reads (positions in reports, fixes written back into the JSON); the reader itself
is `downstream/notebook.py`.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

# One decoded character of a JSON string body: an escaped surrogate pair, another escape, or itself.
JSON_CHAR = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\.|[^\\]", re.DOTALL
)


@dataclass(frozen=True)
class Segment:
    """Where a run of one scanned line's characters is written in the notebook's JSON."""

    column: int  # 0-based: the first character of the line this run holds
    json_line: int  # 1-based line of the JSON file where that character is written
    json_column: int  # 1-based, in characters
    escaped: str  # the run as the JSON writes it (escapes and all)


@dataclass(frozen=True)
class Skipped:
    line: int  # of the scanned text
    kind: str  # "cell magic", "line magic", "shell escape", "help request"
    text: str


@dataclass(frozen=True)
class CellProblem:
    line: int  # of the scanned text: the cell's first line
    cell: int
    message: str


@dataclass(frozen=True)
class NotebookMap:
    """From the scanned text's lines to the notebook's cells and to its JSON."""

    cell_starts: tuple[int, ...]  # the scanned line of each code cell's first line, ascending
    cell_numbers: tuple[int, ...]  # those cells' numbers (1-based, over all cells)
    segments: tuple[tuple[Segment, ...], ...]  # per scanned line
    skipped: tuple[Skipped, ...] = ()
    problems: tuple[CellProblem, ...] = ()

    def cell_of(self, line: int) -> tuple[int, int, int]:
        """(cell number, line in the cell, the cell's first scanned line) of a scanned line."""
        index = max(0, bisect.bisect_right(self.cell_starts, line) - 1)
        if not self.cell_starts:
            return 1, line, 1
        first = self.cell_starts[index]
        return self.cell_numbers[index], line - first + 1, first

    def cell_range(self, line: int) -> tuple[int, int]:
        """The first and last scanned lines of the cell holding `line`."""
        index = max(0, bisect.bisect_right(self.cell_starts, line) - 1)
        first = self.cell_starts[index] if self.cell_starts else 1
        last = self.cell_starts[index + 1] - 1 if index + 1 < len(self.cell_starts) else len(self.segments)
        return first, max(first, last)

    def json_position(self, line: int, column: int) -> tuple[int, int] | None:
        """Where the character at `line`, `column` (1-based, of the scanned text) is in the JSON file;
        past the end of a line, just after its last character. None for a line the JSON does not hold."""
        if not 0 < line <= len(self.segments) or not self.segments[line - 1]:
            return None
        runs = self.segments[line - 1]
        wanted = max(0, column - 1)
        run = runs[max(0, bisect.bisect_right([r.column for r in runs], wanted) - 1)]
        offset = 0
        count = run.column
        for match in JSON_CHAR.finditer(run.escaped):
            if count >= wanted:
                break
            offset += len(match.group())
            count += 1
        return run.json_line, run.json_column + offset
