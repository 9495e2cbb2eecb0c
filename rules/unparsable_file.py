"""## What it does
Reports a downstream file that cannot be parsed: its file, line and the parser's message. Its use
sites of the upstream are unknown, so the audit cannot say the file is safe.

## Why is this bad?
A file that does not parse is not checked at all; without this finding it would pass the gate
silently (`Files: 0 scanned, 1 failed`). A syntax error also fails at import time under CPython.

## Example
```python
import pkg

def f(:  # SyntaxError: invalid syntax
    pkg.run()
```

## Fix
Repair the syntax (or exclude the file with `exclude` in `[tool.apidrift]` if it is not Python meant
to run, e.g. a template), then audit again. Re-grade or ignore the rule like any other
(`--severity AD901=warning`, `--ignore unparsable-file`).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Iterator
from pathlib import Path

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import FileOutcome, Finding, Location, Severity
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.UNPARSABLE_FILE,
    name="unparsable-file",
    severity=Severity.ERROR,
    family=Family.INPUT,
    summary="A downstream file cannot be parsed, so none of its uses were checked",
    since="0.1.0",
)

_MAX_BYTES = 2 * 1024 * 1024
_AT = re.compile(r"@ (\d+):(\d+)")


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    return iter(())  # a file-level rule: see `file_finding`


def file_finding(rule: Rule, outcome: FileOutcome, file: Path | None, upstream: str) -> Finding:
    """The finding for one file the scan could not read. CPython's parser gives the line and message
    when it rejects the text; otherwise the scanner's reason (and its position, when it has one)."""
    line, column, message = 1, 1, outcome.reason or "cannot be parsed"
    source_line = ""
    text = _read(file) if file is not None else None
    if text is not None:
        lines = text.splitlines()
        cpython = (
            _cpython_error(text, outcome.path) if (outcome.reason or "").startswith("syntax error") else None
        )
        if cpython is not None:
            line, column, message = cpython
        elif (match := _AT.search(outcome.reason or "")) is not None:
            line, column = int(match.group(1)), max(1, int(match.group(2)))
        line = min(max(1, line), max(1, len(lines)))
        source_line = lines[line - 1] if lines else ""
    return Finding(
        code=rule.code,
        rule=rule.name,
        severity=rule.severity,
        message=f"cannot be parsed, so its uses of the upstream are not checked: {message}",
        location=Location(outcome.path, line, column, line, column, source_line[:500]),
        symbol="",
        upstream=upstream,
        hint="repair the file, or exclude it if it is not Python source",
    )


def _read(file: Path) -> str | None:
    try:
        with open(file, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > _MAX_BYTES:
        return None
    return data.decode("utf-8", "replace")


def _cpython_error(text: str, path: str) -> tuple[int, int, str] | None:
    """Where and why CPython's parser rejects `text` (parsed only, never compiled to code or run)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text, path)
    except SyntaxError as error:
        return error.lineno or 1, error.offset or 1, f"SyntaxError: {error.msg}"
    except (ValueError, RecursionError, MemoryError):
        return None
    return None
