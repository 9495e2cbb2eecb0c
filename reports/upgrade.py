"""Reports of `apidrift upgrade`: per dependency, safe to upgrade, breaks (with the highest safe release and
the sites that break), not checkable (why) or not used, then the findings at each latest release.

text and markdown lead with that table; json is the audit document plus an `upgrade` object; sarif,
html and github are the audit renderers on the combined result (github adds one notice per dependency).
"""

from __future__ import annotations

import json as _json

from apidrift.auditor.core.wording import plural
from apidrift.auditor.upgrade import BREAKS, NOT_CHECKABLE, NOT_USED, SAFE, Dependency, UpgradeResult
from apidrift.reports import json as json_report
from apidrift.reports import markdown as md
from apidrift.reports import render as render_audit
from apidrift.reports.github import command
from apidrift.reports.text import _finding_block, _Style

MAX_ROWS = md.MAX_ROWS
GROUPS = (
    (BREAKS, "Breaks"),
    (SAFE, "Safe to upgrade"),
    (NOT_CHECKABLE, "Not checkable"),
    (NOT_USED, "Not used"),
)


def render(result: UpgradeResult, fmt: str, *, color: bool = False) -> str:
    if fmt == "text":
        return render_text(result, color=color)
    if fmt == "markdown":
        return render_markdown(result)
    if fmt == "json":
        data = _json.loads(json_report.render(result.audit))
        data["upgrade"] = result.as_dict()
        return _json.dumps(data, indent=2) + "\n"
    if fmt == "github":
        notices = [command("notice", d.headline(), title="apidrift upgrade") for d in result.dependencies]
        return "\n".join([*notices, render_audit(result.audit, "github").rstrip("\n")]) + "\n"
    return render_audit(result.audit, fmt)


def render_text(result: UpgradeResult, *, color: bool = False) -> str:
    style = _Style(color)
    blocks: list[str] = []
    for dependency in result.with_status(BREAKS):
        ordered = sorted(dependency.findings, key=lambda f: (*f.location.order, f.code, f.message))
        blocks.append(
            "\n\n".join(
                [style(dependency.headline(), "\x1b[1m")] + [_finding_block(f, style) for f in ordered]
            )
        )
    unread = [f for f in result.audit.findings if f.code.startswith("AD9")]
    if (
        unread
    ):  # the project's own files that could not be read: whatever the dependency, their uses are unknown
        blocks.append(
            "\n\n".join(
                [style("Files that cannot be parsed (their uses of any dependency are unknown)", "\x1b[1m")]
                + [_finding_block(f, style) for f in unread]
            )
        )
    lines = [f"Upgrade of every dependency of {result.project.label} to its latest release"]
    lines.append("Read: " + (", ".join(result.files_read) or "no requirement file"))
    for status, title in GROUPS:
        group = result.with_status(status)
        if group:
            lines.append(f"{title}:")
            lines += [f"  {_line(d)}" for d in group]
    for coverage in result.audit.coverage:
        lines.append(f"Coverage of {coverage.upstream}: {coverage.summary()}")
    lines += [f"  note: {note}" for note in result.audit.notes]
    breaks = result.with_status(BREAKS)
    lines.append("")
    lines.append(
        f"{plural(len(breaks), 'dependency', 'dependencies')} {'breaks' if len(breaks) == 1 else 'break'}, "
        f"{len(result.with_status(SAFE))} safe, {len(result.with_status(NOT_CHECKABLE))} not checkable "
        f"({result.seconds:.1f} s)."
    )
    blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _line(dependency: Dependency) -> str:
    where = f" [from {dependency.start_from}]" if dependency.start_from else ""
    return dependency.headline() + where


def render_markdown(result: UpgradeResult, *, max_rows: int = MAX_ROWS) -> str:
    lines = [f"### apidrift: upgrade of every dependency of {md.cell(result.project.label)}", ""]
    lines += ["| dependency | on | latest | verdict | highest safe |", "|---|---|---|---|---|"]
    icons = {BREAKS: ":x:", SAFE: ":white_check_mark:", NOT_CHECKABLE: ":grey_question:", NOT_USED: ""}
    for status, _ in GROUPS:
        for d in result.with_status(status):
            verdict = f"{icons[status]} {status}" + (f": {md.cell(d.reason)}" if d.reason else "")
            if status == BREAKS:
                verdict += f" ({plural(len(d.errors), 'error')})"
            lines.append(
                f"| {md.cell(d.display)} | {md.cell(d.start or '?')} | {md.cell(d.latest or '?')} | {verdict} | {md.cell(d.safe or '')} |"
            )
    lines.append("")
    rows = 0
    for dependency in result.with_status(BREAKS):
        lines.append(f"**{md.cell(dependency.headline())}**")
        for finding in sorted(dependency.errors, key=lambda f: (*f.location.order, f.code)):
            if rows >= max_rows:
                break
            rows += 1
            lines.append(f"- {md.code(finding.location.where)} `{finding.code}` {md.cell(finding.message)}")
        lines.append("")
    lines += ["<details><summary>Files read, coverage and notes</summary>", ""]
    lines += [f"- Read {md.code(path)}" for path in result.files_read]
    for coverage in result.audit.coverage:
        lines.append(f"- Coverage of {md.cell(coverage.upstream)}: {coverage.summary()}")
    lines += [f"- Note: {md.cell(note)}" for note in result.audit.notes]
    lines += ["", "</details>"]
    return "\n".join(lines).rstrip("\n") + "\n"
