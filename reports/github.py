"""GitHub Actions workflow commands: one `::error`/`::warning`/`::notice` annotation per finding.

    ::error file=pkg/mod.py,line=3,col=5,endLine=3,endColumn=12,title=AD101 unexpected-keyword::message

Escaping follows the runner's rules: in the message `%`, CR and LF become `%25`, `%0D`, `%0A`; in
property values `:` and `,` also become `%3A` and `%2C`. Paths are made relative to the workspace
($GITHUB_WORKSPACE, else the current folder) when the downstream is a local folder inside it, so the
annotations land on the pull request's files.
"""

from __future__ import annotations

from pathlib import Path

from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import AuditResult, Finding, Severity
from apidrift.reports.escape import escaped
from apidrift.reports.paths import workspace_path

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **properties: object) -> str:
    props = ",".join(
        f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def render(result: AuditResult, *, workspace: Path | None = None) -> str:
    """One workflow command per finding, then the notes as notices, then a plain summary line."""
    result = escaped(result)  # no control character of the inputs reaches the log (nor forges a command)
    lines = (
        [command("warning", result.unchecked, title="apidrift: nothing checked")] if result.unchecked else []
    )
    lines += [_annotation(finding, result, workspace) for finding in _sorted(result.findings)]
    for note in result.notes:
        lines.append(command("notice", note, title="apidrift"))
    reported = {
        f.location.path for f in result.findings if f.code == RuleCode.UNPARSABLE_FILE
    }  # already an annotation
    for outcome in sorted(
        (o for o in result.files if o.status == "failed" and o.path not in reported), key=lambda o: o.path
    ):
        lines.append(
            command(
                "warning",
                f"not audited: {outcome.reason or 'no reason given'}",
                file=workspace_path(result, outcome.path, workspace),
                title="apidrift: file not audited",
            )
        )
    counts = {s: result.count(s) for s in Severity}
    lines.append(
        f"apidrift: {result.downstream.label} against {result.upstream.label}: "
        f"{counts[Severity.ERROR]} error(s), {counts[Severity.WARNING]} warning(s), {counts[Severity.INFO]} info"
    )
    return "\n".join(lines) + "\n"


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (*f.location.order, f.code))


def _annotation(finding: Finding, result: AuditResult, workspace: Path | None) -> str:
    loc = finding.location
    line, column, end_line, end_column = loc.line, loc.column, loc.end_line, loc.end_column
    if loc.cell is not None:  # a notebook: the annotation points into its JSON, where the cell's line is
        if loc.json_region is None:
            line = column = end_line = end_column = None  # type: ignore[assignment]  # the file alone
        else:
            line, column, end_line, end_column = loc.json_region
    one_line = end_line == line
    message = finding.message if loc.cell is None else f"{loc.where}: {finding.message}"
    if finding.hint:
        message += f"\nFix: {finding.hint}"
    if finding.new_signature:
        message += f"\nNow: {finding.new_signature}"
    if finding.old_signature:
        message += f"\nBefore: {finding.old_signature}"
    return command(
        COMMANDS[finding.severity],
        message,
        file=workspace_path(result, loc.path, workspace),
        line=line,
        # Columns only mean something on one line; the runner ignores them across lines.
        col=column if one_line else None,
        endLine=end_line,
        endColumn=end_column if one_line else None,
        title=f"{finding.code} {finding.rule}",
    )
