"""Folding findings: one break, one finding. A site seen twice says a thing once; the uses of a name
a file cannot import go with the import's finding (their lines listed in its hint), and so do the uses
reached through a value bound from a missing name; the missing argument of a call that also passes an
unexpected keyword goes with the keyword's finding (CPython fails on the keyword first)."""

from __future__ import annotations

import re
from dataclasses import replace

from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.notebook_map import NotebookMap
from apidrift.auditor.core.results import Finding, Location, Severity
from apidrift.auditor.core.wording import plural


def deduplicated(findings: list[Finding]) -> list[Finding]:
    """One finding per rule, place and message: a site seen twice (a name both imported and called,
    a line the scanner reaches by two paths) must not say the same thing twice. The gravest is kept."""
    kept: dict[tuple[str, str, int, int, str], Finding] = {}
    for finding in findings:
        key = (
            finding.code,
            finding.location.path,
            finding.location.line,
            finding.location.column,
            finding.message,
        )
        if key not in kept or finding.severity.rank > kept[key].severity.rank:
            kept[key] = finding
    return list(kept.values())


_FOLDED_INTO_IMPORT = frozenset({RuleCode.MISSING_ATTRIBUTE, RuleCode.MISSING_METHOD})
_IMPORTS = frozenset({RuleCode.MISSING_MODULE, RuleCode.MISSING_IMPORT_NAME})  # what a file cannot import


def fold(findings: list[Finding], notebooks: dict[str, NotebookMap]) -> list[Finding]:
    """A name a file cannot import is one break, however often the file uses it: the uses of that
    same missing name or module in that file (`_json.dumps` after `from itsdangerous import json as
    _json`, `imp.reload` after `import imp`) go
    with the import's finding, which lists their lines, rather than repeating it. Only an unguarded
    import's error takes its uses' errors; a guarded import's information takes its uses that are
    guarded too (a use after the import in the `try` that handles it), not an error elsewhere."""
    imports: dict[tuple[str, str], Finding] = {}
    handled: dict[tuple[str, str], Finding] = {}  # guarded imports: their guarded uses go with them
    for finding in findings:
        if finding.code in _IMPORTS and finding.severity is Severity.ERROR and not finding.guarded:
            key = (finding.location.path, finding.symbol)
            if key not in imports or finding.location.line < imports[key].location.line:
                imports[key] = finding
        elif finding.code in _IMPORTS and finding.guarded:
            key = (finding.location.path, finding.symbol)
            if key not in handled or finding.location.line < handled[key].location.line:
                handled[key] = finding
    # Where each missing name is written first in a file: a use that does not write it reaches it
    # through a value (`c = pkg.gone()` then `c.get()`), which CPython never gets to.
    written: dict[tuple[str, str], Finding] = {}
    for finding in sorted(findings, key=lambda f: (f.location.line, f.location.column)):
        if (
            finding.code in _FOLDED_INTO_IMPORT
            and finding.severity is Severity.ERROR
            and _writes_name(finding)
        ):
            written.setdefault((finding.location.path, finding.symbol), finding)
    uses: dict[int, list[Finding]] = {}
    through: dict[int, list[Finding]] = {}
    kept = []
    for finding in findings:
        first = imports.get((finding.location.path, finding.symbol))
        guarded_import = handled.get((finding.location.path, finding.symbol))
        if (
            finding.code in _FOLDED_INTO_IMPORT
            and finding.guarded
            and guarded_import is not None
            and _spelled_through(finding, _bound_name(guarded_import))
        ):
            # `try: from up import gone; B = gone(...)`: the use of what the handled import could not
            # bind is that same (handled) break
            uses.setdefault(id(guarded_import), []).append(finding)
        elif finding.code not in _FOLDED_INTO_IMPORT or finding.severity is not Severity.ERROR:
            kept.append(finding)
        elif first is not None and _spelled_through(finding, _bound_name(first)):
            uses.setdefault(id(first), []).append(finding)
        elif first is not None and not _writes_name(finding):
            # `req = _stack.top.request` then `req.method`: a value bound from what the import
            # could not bind, which CPython never gets to
            through.setdefault(id(first), []).append(finding)
        elif (
            first is None
            and (where := written.get((finding.location.path, finding.symbol))) is not None
            and where is not finding
            and not _writes_name(finding)
        ):
            through.setdefault(id(where), []).append(finding)
        else:
            kept.append(finding)
    kept = _one_binding_error_per_call(kept)
    result = []
    for finding in kept:
        folded, reached = uses.get(id(finding)), through.get(id(finding))
        if folded:
            verb = "goes" if len(folded) == 1 else "go"
            book = notebooks.get(finding.location.path)
            note = f"{plural(len(folded), 'use')} of it in this file {verb} with this import ({_lines(folded, book)})"
            finding = replace(finding, hint=f"{finding.hint}; {note}" if finding.hint else note)
        if reached:
            note = (
                f"{plural(len(reached), 'use')} of what it gives in this file (through a name or value "
                f"bound from it) fail{'s' if len(reached) == 1 else ''} with it "
                f"({_lines(reached, notebooks.get(finding.location.path))})"
            )
            finding = replace(finding, hint=f"{finding.hint}; {note}" if finding.hint else note)
        result.append(finding)
    return result


def _one_binding_error_per_call(findings: list[Finding]) -> list[Finding]:
    """A call with an unexpected keyword fails there (CPython checks keywords before it looks for
    missing arguments): a renamed keyword (`add_source(multi_cmd=g)` where `group` is now required)
    is one break, reported where the call fails; the missing argument of the same call goes with it."""
    unexpected = [
        f for f in findings if f.code == RuleCode.UNEXPECTED_KEYWORD and f.severity is Severity.ERROR
    ]
    if not unexpected:
        return findings
    absorbed: dict[int, list[Finding]] = {}
    kept = []
    for finding in findings:
        if finding.code == RuleCode.MISSING_REQUIRED_ARGUMENT and finding.severity is Severity.ERROR:
            first = next((u for u in unexpected if _within(u.location, finding.location)), None)
            if first is not None:
                absorbed.setdefault(id(first), []).append(finding)
                continue
        kept.append(finding)
    result = []
    for finding in kept:
        missing = absorbed.get(id(finding))
        if missing:
            note = "; ".join(f"then: {m.message}" for m in missing)
            finding = replace(finding, hint=f"{finding.hint}; {note}" if finding.hint else note)
        result.append(finding)
    return result


def _within(inner: Location, outer: Location) -> bool:
    return (
        inner.path == outer.path
        and (inner.line, inner.column) >= (outer.line, outer.column)
        and (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)
    )


def _lines(findings: list[Finding], book: NotebookMap | None = None) -> str:
    lines = sorted({f.location.line for f in findings})
    shown = ", ".join(cell_line(book, n) if book else str(n) for n in lines[:8])
    shown += ", ..." if len(lines) > 8 else ""
    return f"line{'s' if len(lines) > 1 else ''} {shown}"


def _writes_name(finding: Finding) -> bool:
    """Whether the use's own text, from where it is reported, writes the missing name: as the
    attribute it is (`.loader`), not as a local name that happens to be spelled the same (`loader =
    GriffeLoader(...)` after `from griffe.loader import GriffeLoader`, a module griffe 1.0 removed)."""
    name = finding.symbol.rpartition(".")[2]
    where = finding.location
    text = where.source_line[where.column - 1 :]
    return bool(name) and re.search(rf"\.\s*{re.escape(name)}(?![A-Za-z0-9_])", text) is not None


def cell_line(notebook: NotebookMap, line: int) -> str:
    """A line of a notebook's scanned text as its cell shows it: `cell 3:2`."""
    cell, cell_line, _ = notebook.cell_of(line)
    return f"cell {cell}:{cell_line}"


def _bound_name(finding: Finding) -> str | None:
    """The local name an import's finding binds: `_json` for `from itsdangerous import json as
    _json`, `Markup` for `from jinja2 import Markup`, the dotted path for `import pkg.sub` (its uses
    spell it whole); None when the line does not show it."""
    name = finding.symbol.rpartition(".")[2]
    line = finding.location.source_line
    start = finding.location.column - 1
    if "." in finding.symbol and line[start : start + len(finding.symbol)] == finding.symbol:
        name = finding.symbol  # `import pymongo.monotonic`: its uses spell `pymongo.monotonic.time()`
    elif line[start : start + len(name)] != name:
        return None
    alias = re.match(r"\s+as\s+([A-Za-z_][A-Za-z0-9_]*)", line[start + len(name) :])
    return alias.group(1) if alias else name


def _spelled_through(finding: Finding, bound: str | None) -> bool:
    """Whether a use's text starts with the local name (`_json.dumps`, `Markup(...)`), not with a
    path of its own (`pkg.cached_download` after `import pkg`: a break of its own)."""
    if bound is None:
        return False
    where = finding.location
    text = where.source_line[where.column - 1 :]
    return re.match(rf"{re.escape(bound)}(?![A-Za-z0-9_])", text) is not None
