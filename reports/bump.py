"""Reports of `apidrift bump`: the changed packages, each with its from/to and what its audit found.

text and markdown group the findings by package ("click 8.1.8 -> 8.2.0: 1 call site breaks"), markdown
written for a pull-request comment; json is the audit document plus a `bump` object (docs/bump.md);
sarif, html and github are the audit renderers on the combined result (github adds one notice per package).
"""

from __future__ import annotations

import json as _json
from typing import TYPE_CHECKING

from apidrift.auditor.bump import BumpResult, PackageChange
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.wording import plural
from apidrift.reports import json as json_report
from apidrift.reports import markdown as md
from apidrift.reports import render as render_audit
from apidrift.reports.escape import escaped
from apidrift.reports.github import command
from apidrift.reports.text import _finding_block, _Style

if TYPE_CHECKING:
    from apidrift.auditor.fix.codemods import Suggestion

MAX_ROWS = md.MAX_ROWS


def render(result: BumpResult, fmt: str, *, color: bool = False) -> str:
    if fmt == "text":
        return render_text(result, color=color)
    if fmt == "markdown":
        return render_markdown(result)
    if fmt == "json":
        data = _json.loads(json_report.render(result.audit))
        data["bump"] = result.as_dict()
        return _json.dumps(data, indent=2) + "\n"
    if fmt == "github":
        notices = [
            command("notice", headline(c), title="apidrift bump")
            for c in result.changes
            if c.status == "audited"
        ]
        return "\n".join([*notices, render_audit(result.audit, "github").rstrip("\n")]) + "\n"
    return render_audit(result.audit, fmt)


def _suggestion(found: Suggestion) -> list[str]:
    """A safe fix as a GitHub suggestion block, indented under its list item, with its evidence."""
    where = f"line {found.first}" if found.first == found.last else f"lines {found.first}-{found.last}"
    fence = "````" if "```" in found.text else "```"
    return [
        f"  Safe fix ({where}; evidence: {md.cell(found.evidence)}):",
        "",
        f"  {fence}suggestion",
        *(f"  {line}" if line else "" for line in found.text.split("\n")),
        f"  {fence}",
    ]


def headline(change: PackageChange) -> str:
    """`vllm 0.11.0 -> 0.16.0: 3 call sites break` (or clean, or why it was not audited)."""
    if change.status != "audited":
        return f"{change.label}: {change.status}" + (f" ({change.reason})" if change.reason else "")
    breaks = _sites(change.findings, Severity.ERROR)
    warnings = _sites(change.findings, Severity.WARNING)
    infos = _sites(change.findings, Severity.INFO)
    parts = []
    if breaks:
        parts.append(f"{plural(breaks, 'call site')} {'breaks' if breaks == 1 else 'break'}")
    if warnings:
        parts.append(plural(warnings, "warning"))
    if infos:
        parts.append(f"{infos} info")
    if not parts:
        checked = change.coverage.checked if change.coverage else 0
        return f"{change.label}: clean ({plural(checked, 'use site')} checked)"
    return f"{change.label}: {', '.join(parts)}"


def _sites(findings: list[Finding], severity: Severity) -> int:
    return len({f.location.order for f in findings if f.severity is severity})


# ---- text


def render_text(result: BumpResult, *, color: bool = False) -> str:
    result = escaped(result)  # names, versions, paths and messages come from the inputs
    style = _Style(color)
    blocks: list[str] = []
    for change in result.audited():
        ordered = sorted(
            change.findings,
            key=lambda f: (*f.location.order, f.code, f.message),
        )
        blocks.append(
            "\n\n".join([style(headline(change), "\x1b[1m")] + [_finding_block(f, style) for f in ordered])
        )
    blocks.append(_text_summary(result))
    return "\n\n".join(blocks) + "\n"


def _text_summary(result: BumpResult) -> str:
    lines = [f"Dependency bump of {result.project.label}: {result.old_side} -> {result.new_side}"]
    lines += ["Read:"] + [
        f"  {f.side}: {_where(f.where, f.path)} ({f.kind}, {plural(f.pins, 'pin')})"
        for f in result.files_read
    ]
    if not result.files_read:
        lines.append("  no lock or pin file")
    if result.changes:
        width = max(len(c.label) for c in result.changes)
        lines.append("Changed packages:")
        for change in result.changes:
            lines.append(f"  {change.label:<{width}}  {change.kind:<9}  {_status_text(change)}")
    else:
        lines.append("Changed packages: none")
    for coverage in result.audit.coverage:
        lines.append(f"Coverage of {coverage.upstream}: {coverage.summary()}")
    lines += [f"  note: {note}" for note in result.audit.notes]
    errors, warnings, infos = (
        result.audit.count(s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
    )
    if result.audit.findings:
        lines += ["", f"Found {plural(errors, 'error')} ({plural(warnings, 'warning')}, {infos} info)."]
    else:
        lines += ["", "No breaking changes found."]
    return "\n".join(lines)


def _status_text(change: PackageChange) -> str:
    if change.status == "audited":
        return headline(change).split(": ", 1)[1]
    if change.status in ("added", "removed"):
        return f"{change.status}, not audited"
    return change.status + (f": {change.reason}" if change.reason else "")


# ---- markdown, for a pull-request comment


def render_markdown(result: BumpResult, *, max_rows: int = MAX_ROWS) -> str:
    result = escaped(result)  # control characters made visible first
    lines = [f"### apidrift: dependency bump of {md.cell(result.project.label)}", ""]
    audited = result.audited()
    failed = result.failed()
    if failed:
        lines += [
            f":warning: **{plural(len(failed), 'changed package')} could not be audited** (see below).",
            "",
        ]
    elif not audited:
        lines += [":white_check_mark: **No package the project uses changed.**", ""]
    rows = 0
    for change in audited:
        worst = max((f.severity for f in change.findings), key=lambda s: s.rank, default=None)
        icon = md.ICONS[worst] if worst else ":white_check_mark:"
        lines.append(f"{icon} **{md.cell(headline(change))}**")
        ordered = sorted(change.findings, key=lambda f: (-f.severity.rank, *f.location.order, f.code))
        for finding in ordered:
            if rows >= max_rows:
                break
            rows += 1
            loc = finding.location
            item = f"- {md.code(loc.where)} `{finding.code}` {md.cell(finding.message)}"
            if finding.hint:
                item += f" Fix: {md.cell(finding.hint)}"
            lines.append(item)
            found = result.suggestions.get((loc.path, loc.line, loc.column, finding.code))
            if found is not None:
                lines += _suggestion(found)
        lines.append("")
    if rows >= max_rows and len(result.audit.findings) > rows:
        lines += [f"… and {len(result.audit.findings) - rows} more; see the full report.", ""]
    groups = [
        ("Not used by the project", "not used"),
        ("Not audited", "not audited"),
        ("Added (not audited)", "added"),
        ("Removed", "removed"),
    ]
    for title, status in groups:
        changes = result.with_status(status)
        if changes:
            items = ", ".join(
                md.cell(_short(c))
                + (f" ({md.cell(c.reason)})" if status == "not audited" and c.reason else "")
                for c in changes
            )
            lines += [f"**{title}:** {items}", ""]
    lines += ["<details><summary>Files read, coverage and notes</summary>", ""]
    for f in result.files_read:
        lines.append(f"- {f.side}: {md.code(_where(f.where, f.path))} ({f.kind}, {plural(f.pins, 'pin')})")
    for coverage in result.audit.coverage:
        lines.append(f"- Coverage of {md.cell(coverage.upstream)}: {coverage.summary()}")
    for note in result.audit.notes:
        lines.append(f"- Note: {md.cell(note)}")
    lines += ["", "</details>"]
    return "\n".join(lines).rstrip("\n") + "\n"


def _short(change: PackageChange) -> str:
    if change.status == "added":
        return f"{change.display} {change.new}"
    if change.status == "removed":
        return f"{change.display} {change.old}"
    return change.label


def _where(where: str, path: str) -> str:
    """`git origin/main: uv.lock`, or just the file when it was named on the command line."""
    return where if where == path or where.endswith("/" + path) else f"{where}: {path}"
