"""Compiler-style text report: one block per finding, grouped by file, then a summary."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from apidrift.auditor.core.results import (
    AuditResult,
    Coverage,
    FileOutcome,
    FileStatus,
    Finding,
    InputInfo,
    Location,
    Severity,
    UncheckedSite,
)
from apidrift.auditor.core.wording import plural
from apidrift.reports.escape import escaped
from apidrift.reports.sigdiff import Row, diff_signatures, parse_signature, single_side

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_SEVERITY_COLOR = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.INFO: "\x1b[36m"}
_CODE_COLOR = "\x1b[35m"
_GREEN = "\x1b[32m"

GUTTER = 6  # width of the line-number column; wider numbers just push the bar right


class _Style:
    """Wraps text in ANSI codes only when colour was asked for, so the plain output stays byte-identical."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *codes: str) -> str:
        if not self.enabled or not codes or not text:
            return text
        return "".join(codes) + text + _RESET


def render(result: AuditResult, *, color: bool = False, show_unchecked: bool = False) -> str:
    """The whole report, ending with a newline; ANSI colours only when `color` is True."""
    result = escaped(result)  # nothing untrusted reaches the terminal raw
    style = _Style(color)
    blocks = [_unchecked(result, style)] if result.unchecked else []
    blocks += [_finding_block(finding, style) for finding in sorted_findings(result.findings)]
    blocks.append(_summary(result, style, show_unchecked))
    return "\n\n".join(blocks) + "\n"


def _unchecked(result: AuditResult, style: _Style) -> str:
    """First thing on the page: this run is no pass, because nothing was checked."""
    lines = [style(f"apidrift: {result.unchecked}", _BOLD, _SEVERITY_COLOR[Severity.WARNING])]
    if result.dependents:
        lines.append("  releases that do require it (audit one of them):")
        lines += [f"    {line}" for line in result.dependents]
    return "\n".join(lines)


def sorted_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Grouped by file (files sorted), then by position; code and message only break ties, for stable output."""
    return sorted(findings, key=lambda f: (*f.location.order, f.code, f.message))


def _finding_block(finding: Finding, style: _Style) -> str:
    loc = finding.location
    tags = finding.severity.value + (f", {finding.classification.value}" if finding.classification else "")
    severity_color = _SEVERITY_COLOR[finding.severity]
    header = (
        f"{style(f'{loc.where}:', _BOLD)} {style(finding.code, _BOLD, _CODE_COLOR)} "
        f"{style(f'[{tags}]', severity_color)} {finding.message}"
    )
    lines = [header]
    if loc.source_line.strip():
        number = str(loc.line).rjust(GUTTER)
        lines.append(f"{style(number + ' |', _DIM)} {loc.source_line}")
        carets = caret_line(loc)
        indent = carets.rstrip("^")
        lines.append(
            f"{style(' ' * len(number) + ' |', _DIM)} {indent}{style(carets[len(indent) :], _BOLD, severity_color)}"
        )
    new_text, old_text = short_signatures(finding)
    if new_text:
        lines.append(f"  new: {new_text}")
    if old_text:
        lines.append(f"  old: {old_text}")
    if finding.hint:
        lines.append(f"  {style('hint:', _BOLD)} {finding.hint}")
    if finding.since is not None:
        lines.append(f"  {style('history:', _BOLD)} {finding.since.sentence()}")
    return "\n".join(lines)


LONG_SIGNATURE = 120  # longer signatures show their changed parameters with a little context
CONTEXT = 1  # unchanged parameters shown on each side of a changed one
FOLD_AT = 3  # shortest run of unchanged parameters that is elided


def short_signatures(finding: Finding) -> tuple[str | None, str | None]:
    """(new, old) signatures for the text report: whole when short; otherwise the parameters that
    changed or that the message names, one neighbour each side, and `..., 37 unchanged, ...` for the
    rest (JSON and HTML carry them whole)."""
    new, old = finding.new_signature, finding.old_signature
    if max(len(new or ""), len(old or "")) <= LONG_SIGNATURE:
        return new, old
    named = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)", finding.message + " " + (finding.hint or "")))
    compared = diff_signatures(old, new) if old and new else None
    if compared is not None:
        return _elide(compared.new, compared.new_returns, named), _elide(
            compared.old, compared.old_returns, named
        )
    return (_elide(single_side(new), _returns(new), named) if new else None), (
        _elide(single_side(old), _returns(old), named) if old else None
    )


def _returns(signature: str) -> str | None:
    parsed = parse_signature(signature)
    return parsed[1] if parsed else None


def _elide(rows: tuple[Row, ...] | None, returns: str | None, named: set[str]) -> str | None:
    if rows is None:
        return None
    # The parameters the finding names (`seed` of a changed default) are what it is about; without
    # such, every parameter that differs between the versions.
    keep = {i for i, row in enumerate(rows) if row.param.name in named}
    if not keep:
        keep = {i for i, row in enumerate(rows) if row.status != "same"}
    shown = {j for i in keep for j in range(i - CONTEXT, i + CONTEXT + 1) if 0 <= j < len(rows)}
    if not shown:
        shown = set(range(min(len(rows), 2)))
    run: list[int] = []  # a run of fewer than FOLD_AT hidden parameters is shown: eliding it saves nothing
    for i in [*range(len(rows)), len(rows)]:
        if i < len(rows) and i not in shown:
            run.append(i)
            continue
        if len(run) < FOLD_AT:
            shown.update(run)
        run = []
    parts: list[str] = []
    hidden: list[Row] = []

    def elided() -> str:
        what = "unchanged" if all(r.status == "same" for r in hidden) else "other"
        return f"{len(hidden)} {what}"

    for i, row in enumerate(rows):
        if i in shown:
            if hidden:
                parts.append(f"..., {elided()}, ...")
                hidden = []
            parts.append(row.param.text)
        else:
            hidden.append(row)
    if hidden:
        parts.append(f"..., {elided()}")
    return f"({', '.join(parts)})" + (f" -> {returns}" if returns else "")


def caret_line(location: Location) -> str:
    """Spaces up to the column, then one caret per character of the span on that line (at least one)."""
    line = location.source_line
    start = min(max(location.column, 1), len(line) + 1) - 1
    # A span running onto later lines is marked to the end of its first line (trailing blanks excluded).
    end = location.end_column - 1 if location.end_line == location.line else len(line.rstrip())
    end = min(max(end, start + 1), max(len(line), start + 1))
    # Tabs stay tabs, so the carets line up however the terminal expands them.
    indent = "".join("\t" if char == "\t" else " " for char in line[:start])
    return indent + "^" * (end - start)


def _summary(result: AuditResult, style: _Style, show_unchecked: bool = False) -> str:
    lines = ["Audited:"]
    inputs = [
        ("downstream", result.downstream),
        ("upstream", result.upstream),
        ("old upstream", result.old_upstream),
    ]
    for role, info in inputs:
        if info is not None:
            lines.append(f"  {role + ':':<13} {_describe(info, result.notes)}")
    lines += [f"  note: {note}" for note in result.notes]
    errors, warnings, infos = (result.count(s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO))
    counts = f"Findings: {plural(errors, 'error')}, {plural(warnings, 'warning')}, {infos} info"
    classes = Counter(f.classification.value for f in result.findings if f.classification)
    if classes:
        counts += f" ({_counted(classes)})"
    lines.append(counts)
    for coverage in result.coverage:
        lines += _coverage_lines(coverage)
        if show_unchecked:
            lines += _unchecked_site_lines(coverage)
    lines += _file_lines(result.files)
    if result.unchecked and not result.findings:
        final = style("Nothing was checked (exit status 3).", _BOLD, _SEVERITY_COLOR[Severity.WARNING])
    elif result.findings:
        final = f"Found {plural(errors, 'error')} ({plural(warnings, 'warning')}, {infos} info)."
        final = style(final, _BOLD, _SEVERITY_COLOR[result.worst() or Severity.INFO])
    else:
        final = style("No breaking changes found.", _BOLD, _GREEN)
    lines += ["", final]
    return "\n".join(lines)


def _describe(info: InputInfo, notes: list[str]) -> str:
    text = f"{info.label} ({info.origin}: {info.location})"
    if info.note and info.note not in notes:  # the engine usually copies input notes into the notes too
        text += f": {info.note}"
    return text


def _coverage_lines(coverage: Coverage) -> list[str]:
    lines = [f"Coverage of {coverage.upstream}: {coverage.summary()}"]
    if coverage.not_checkable:
        lines.append(f"  not checkable: {_counted(coverage.not_checkable)}")
    return lines


def _unchecked_site_lines(coverage: Coverage) -> list[str]:
    """Each site that could not be checked, under its reason (most frequent reason first)."""
    by_reason: dict[str, list[UncheckedSite]] = {}
    for site in coverage.sites:
        by_reason.setdefault(site.reason, []).append(site)
    lines = []
    for reason, sites in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"  {reason} ({len(sites)}):")
        for site in sites:
            lines.append(f"    {site.where}" + (f"  {_shortened(site.code)}" if site.code else ""))
    if coverage.unlisted:
        lines.append(f"  and {plural(coverage.unlisted, 'more site')} not listed")
    return lines


def _shortened(code: str, width: int = 80) -> str:
    return code if len(code) <= width else code[: width - 3] + "..."


def _file_lines(files: list[FileOutcome]) -> list[str]:
    by_status: dict[FileStatus, list[FileOutcome]] = {status: [] for status in FileStatus}
    for outcome in files:
        by_status[outcome.status].append(outcome)
    counts = ", ".join(f"{len(group)} {status.value}" for status, group in by_status.items())
    lines = [f"Files: {counts}"]
    skipped = Counter(outcome.reason or "no reason given" for outcome in by_status[FileStatus.SKIPPED])
    if skipped:
        # Many files are skipped for the same dull reason, so these are counted, not listed.
        lines.append(f"  skipped: {_counted(skipped)}")
    for outcome in sorted(by_status[FileStatus.FAILED], key=lambda o: o.path):
        lines.append(f"  failed: {outcome.path}: {outcome.reason or 'no reason given'}")
    return lines


def _counted(counts: dict[str, int]) -> str:
    """`reason count` pairs, most frequent first, then by name so equal counts keep a stable order."""
    return ", ".join(
        f"{reason} {count}" for reason, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
