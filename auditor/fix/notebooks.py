"""`apidrift fix` in a notebook: the codemods edit a code cell's source, and only its `source` value
changes in the notebook's JSON.

Each cell with findings is fixed as a file of its own: its lines (IPython's lines as `pass` with a
marker, put back as they were afterwards), the findings' positions (their cell's line and column),
LibCST's codemods and CPython's parser as the judge, as for a `.py` file. The cell's new source is
then written where the old one was in the JSON text, laid out as it was (one string, or an array of
lines with the same indentation), with non-ASCII characters escaped only if the notebook escaped
them; every other byte of the file (outputs, metadata, key order, indentation) stays as it was.
nbformat, Jupyter's own reader, is the judge of the result: the new file must read as a notebook of
the same version, valid if the old one was, with every cell as before but for the sources fixed.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from apidrift.auditor.core.results import Finding
from apidrift.auditor.downstream.notebook import (
    CellSource,
    NotebookError,
    bounded_json,
    cell_lines,
    python_lines,
    read_notebook,
)

_MARKER = "  # apidrift-notebook-line-"
_MARKED = re.compile(r"^[ \t]*pass  # apidrift-notebook-line-(\d+)$")


class CellFixes:
    """What fixing one notebook gave: its new JSON text (None: unchanged), and per finding (in the
    order given) why its fix was not applied (None: applied) and the value a dropped keyword passed."""

    def __init__(self, before: str, count: int) -> None:
        self.before = before
        self.after: str | None = None
        self.reasons: list[str | None] = [None] * count
        self.values: list[str | None] = [None] * count


def fix_notebook(
    data: bytes,
    findings: Sequence[Finding],
    apply: Callable[[str, Sequence[Finding]], Any],
    compile_problem: Callable[[str, str, str], str | None],
    path: str,
) -> CellFixes:
    """Apply the fixes of `findings` (all in this notebook, each with its cell) to the cells'
    sources. `apply` is the codemod on one text (`codemods.apply_fixes`); `compile_problem` judges a
    cell's text before and after. Raises NotebookError when the file is no notebook any more, and
    libcst's ParserSyntaxError when a cell does not parse."""
    text = bounded_json(data)
    notebook = read_notebook(data)
    result = CellFixes(text, len(findings))
    cells = {cell.number: cell for cell in notebook.cells}
    groups: dict[int, list[int]] = {}
    for index, finding in enumerate(findings):
        cell = cells.get(finding.location.cell or 0)
        if cell is None or not cell.code:
            result.reasons[index] = "the notebook changed since the audit"
            continue
        lines = cell_lines(cell.text)
        line = finding.location.line
        if not 0 < line <= len(lines) or lines[line - 1] != finding.location.source_line:
            result.reasons[index] = "the notebook changed since the audit"
            continue
        groups.setdefault(cell.number, []).append(index)
    edits: list[tuple[CellSource, str]] = []
    for number, indices in sorted(groups.items()):
        cell = cells[number]
        lines = cell_lines(cell.text)
        python, kinds = python_lines(lines)
        marked = [f"{line}{_MARKER}{i}" if i in kinds else line for i, line in enumerate(python)]
        source = "\n".join(marked) + "\n"
        fixes = apply(source, [findings[i] for i in indices])
        for i, reason, value in zip(indices, fixes.reasons, fixes.dropped_values):
            result.reasons[i] = reason
            result.values[i] = value
        if fixes.code == source:
            continue
        problem = compile_problem(source, fixes.code, f"{path} (cell {number})")
        if problem is not None:
            for i in indices:
                if result.reasons[i] is None:
                    result.reasons[i] = problem
            continue
        restored = [_restore(line, lines) for line in fixes.code.split("\n")]
        if restored and restored[-1] == "":
            restored.pop()
        newline = m.group() if (m := re.search(r"\r\n|\r|\n", cell.text)) else "\n"
        new = newline.join(restored) + (newline if re.search(r"(\r\n|\r|\n)$", cell.text) else "")
        edits.append((cell, new))
    if not edits:
        return result
    after = _rewritten(text, edits)
    problem = _nbformat_problem(text, after, {cell.number: new for cell, new in edits})
    if problem is not None:
        for indices in groups.values():
            for i in indices:
                if result.reasons[i] is None:
                    result.reasons[i] = problem
        return result
    result.after = after
    return result


def _restore(line: str, original: list[str]) -> str:
    match = _MARKED.match(line)
    if match is None:
        return line
    index = int(match.group(1))
    return original[index] if index < len(original) else line


def _rewritten(text: str, edits: list[tuple[CellSource, str]]) -> str:
    """The JSON text with each edited cell's `source` value replaced, laid out as it was."""
    out = []
    at = 0
    for cell, new in sorted(edits, key=lambda edit: edit[0].start):
        out.append(text[at : cell.start])
        out.append(_encoded(text, cell, new))
        at = cell.end
    out.append(text[at:])
    return "".join(out)


def _encoded(text: str, cell: CellSource, new: str) -> str:
    raw = text[cell.start : cell.end]
    escaped = "\\u" in raw and raw.isascii()
    if raw.startswith('"'):
        return json.dumps(new, ensure_ascii=escaped)
    items = [json.dumps(line, ensure_ascii=escaped) for line in new.splitlines(keepends=True)]
    literals = cell.literals
    if not literals or not items:
        return "[" + ", ".join(items) + "]"
    lead = text[cell.start + 1 : literals[0][0]]
    trail = text[literals[-1][1] : cell.end - 1]
    between = text[literals[0][1] : literals[1][0]] if len(literals) > 1 else "," + lead
    return "[" + lead + between.join(items) + trail + "]"


def _nbformat_problem(before: str, after: str, sources: dict[int, str]) -> str | None:
    """Why nbformat does not take the fixed notebook as the same notebook with new sources; or None."""
    # lazy: nbformat (0.09 s) loads only to judge a rewritten notebook
    import nbformat

    def read(text: str) -> tuple[Any, bool]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
            try:
                nbformat.validate(notebook)
                return notebook, True
            except nbformat.ValidationError:
                return notebook, False

    try:
        old, old_valid = read(before)
    except Exception:  # nbformat's own refusal of the original: the fix is judged by the JSON walk alone
        return None
    try:
        new, new_valid = read(after)
    except Exception as error:
        return f"nbformat cannot read the fixed notebook ({type(error).__name__}); left unchanged"
    if old_valid and not new_valid:
        return "the fixed notebook would not validate with nbformat; left unchanged"
    if len(old.cells) != len(new.cells) or old.nbformat != new.nbformat or old.metadata != new.metadata:
        return "the fixed notebook would differ beyond its sources; left unchanged"
    for number, (was, now) in enumerate(zip(old.cells, new.cells), start=1):
        expected = sources.get(number, was.get("source"))
        if now.get("source") != expected or {k: v for k, v in was.items() if k != "source"} != {
            k: v for k, v in now.items() if k != "source"
        }:
            return "the fixed notebook would differ beyond its sources; left unchanged"
    return None


__all__ = ["CellFixes", "NotebookError", "fix_notebook"]
