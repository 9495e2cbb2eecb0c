"""GitHub-flavoured Markdown summary, for a pull-request comment or `$GITHUB_STEP_SUMMARY`.

A verdict, counts by severity and rule, a table of findings (capped, so a huge audit stays under the
comment and summary size limits), then coverage and notes in a collapsed block.
"""

from __future__ import annotations

import re
from collections import Counter

from apidrift.auditor.core.results import AuditResult, FileStatus, Finding, Severity
from apidrift.auditor.core.wording import plural
from apidrift.reports.escape import escaped
from apidrift.reports.sarif import help_uri
from apidrift.rules.registry import get_rule

MAX_ROWS = 200  # findings listed in the table; the rest are counted
ICONS = {Severity.ERROR: ":x:", Severity.WARNING: ":warning:", Severity.INFO: ":information_source:"}
_SPECIAL = re.compile(r"([\\|*_\[\]<>#~])")


# A word GitHub would make live in a comment: an @mention (which notifies someone), a URL or an e-mail
# address (autolinked), an issue reference. Markdown escapes do not stop these (GitHub finds them in
# the rendered text), so such a word is shown as an inline code span, where nothing is live.
_LIVE = re.compile(r"\S*(?:@|://|\bwww\.|#\d)\S*", re.IGNORECASE)


def cell(text: str) -> str:
    """Text safe inside a table cell: no newlines, pipes and markup escaped; `code` spans kept; no live
    @mention, URL or issue reference (each becomes a code span)."""
    text = " ".join(text.split())
    pieces = re.split(r"(`[^`]*`)", text)
    out = []
    for piece in pieces:
        if piece.startswith("`") and piece.endswith("`") and len(piece) >= 2:
            out.append(piece.replace("|", "\\|"))  # GFM tables split on | even in code spans
            continue
        end = 0
        for live in _LIVE.finditer(piece):
            out += [_plain(piece[end : live.start()]), code(live.group())]
            end = live.end()
        out.append(_plain(piece[end:]))
    return "".join(out)


def _plain(text: str) -> str:
    return _SPECIAL.sub(r"\\\1", text).replace("&", "&amp;")


def code(text: str) -> str:
    """`text` as an inline code span, whatever backticks it holds."""
    text = " ".join(text.split()).replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render(result: AuditResult, *, max_rows: int = MAX_ROWS) -> str:
    result = escaped(result)  # control characters made visible first
    counts = {s: result.count(s) for s in Severity}
    title = f"{result.downstream.label} against {result.upstream.label}"
    if result.old_upstream is not None:
        title += f" (written for {result.old_upstream.label})"
    lines = [f"### apidrift: {cell(title)}", ""]
    if result.unchecked:  # no pass: said first
        lines += [f":warning: **{cell(result.unchecked)}**", ""]
        lines += [f"- {cell(line)}" for line in result.dependents] + ([""] if result.dependents else [])
    if result.findings:
        worst = result.worst() or Severity.INFO
        lines.append(
            f"{ICONS[worst]} **{plural(counts[Severity.ERROR], 'error')}**, "
            f"{plural(counts[Severity.WARNING], 'warning')}, {counts[Severity.INFO]} info"
            + _classes(result.findings)
        )
    elif not result.unchecked:
        lines.append(":white_check_mark: **No breaking changes found.**")
    lines.append("")
    if result.findings:
        lines += ["| rule | findings |", "| --- | ---: |"]
        by_rule = Counter((f.code, f.rule) for f in result.findings)
        for (rule_code, name), n in sorted(by_rule.items()):
            rule = get_rule(rule_code)
            label = f"`{rule_code}` {name}"
            lines.append(f"| {f'[{label}]({help_uri(rule)})' if rule else label} | {n} |")
        lines += ["", "| | location | rule | message |", "| --- | --- | --- | --- |"]
        ordered = sorted(
            result.findings, key=lambda f: (-f.severity.rank, f.location.path, f.location.line, f.code)
        )
        for finding in ordered[:max_rows]:
            lines.append(_row(finding))
        if len(ordered) > max_rows:
            lines += ["", f"… and {len(ordered) - max_rows} more; see the full report."]
        lines.append("")
    lines += _details(result)
    return "\n".join(lines).rstrip("\n") + "\n"


def _row(finding: Finding) -> str:
    loc = finding.location
    message = cell(finding.message)
    if finding.hint:
        message += f"<br>Fix: {cell(finding.hint)}"
    if finding.since is not None:
        message += f"<br>History: {cell(finding.since.sentence())}"
    return f"| {ICONS[finding.severity]} | {code(loc.where)} | `{finding.code}` {finding.rule} | {message} |"


def _details(result: AuditResult) -> list[str]:
    lines = ["<details><summary>Coverage, files and notes</summary>", ""]
    for coverage in result.coverage:
        lines.append(f"- Coverage of {cell(coverage.upstream)}: {coverage.summary()}")
        for reason, n in sorted(coverage.not_checkable.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  - not checkable, {cell(reason)}: {n}")
    statuses = Counter(o.status for o in result.files)
    lines.append("- Files: " + ", ".join(f"{statuses.get(s, 0)} {s.value}" for s in FileStatus))
    for outcome in sorted((o for o in result.files if o.status is FileStatus.FAILED), key=lambda o: o.path):
        lines.append(f"  - failed: {code(outcome.path)}: {cell(outcome.reason or 'no reason given')}")
    for note in result.notes:
        lines.append(f"- Note: {cell(note)}")
    lines += ["", "</details>"]
    return lines


def _classes(findings: list[Finding]) -> str:
    classes = Counter(f.classification.value for f in findings if f.classification)
    if not classes:
        return ""
    return " (" + ", ".join(f"{name} {n}" for name, n in sorted(classes.items())) + ")"
