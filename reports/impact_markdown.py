"""Markdown summary of an impact run (a pull request comment, a release checklist)."""

from __future__ import annotations

from apidrift.auditor.impact.results import STATUSES, ImpactResult
from apidrift.reports.escape import escaped
from apidrift.reports.impact_text import bucket_lines, counts_line, detail, group_line, names, title
from apidrift.reports.markdown import cell

MAX_ROWS = 300


def render(result: ImpactResult, *, max_rows: int = MAX_ROWS) -> str:
    result = escaped(result)  # control characters made visible first
    lines = [f"### apidrift impact: {cell(title(result))}", ""]
    lines += [f"- **{cell(line)}**" for line in bucket_lines(result)]
    lines += ["", f"**{cell(counts_line(result))}**", ""]
    groups = result.groups()
    if groups:
        lines += ["| upstream symbol | dependents | example |", "| --- | --- | --- |"]
        for group in groups[:max_rows]:
            lines.append(
                f"| {cell(group_line(group))} | {cell(names(group.dependents + group.pinned))} | {cell(group.message)} |"
            )
        if len(groups) > max_rows:
            lines.append(f"\n… and {len(groups) - max_rows} more groups; see the full results.")
        lines.append("")
    order = {status: i for i, status in enumerate(STATUSES)}
    rows = sorted(result.rows, key=lambda r: (order[r["status"]], r["dependent"]))
    lines += ["| status | dependent | version | details |", "| --- | --- | --- | --- |"]
    for row in rows[:max_rows]:
        lines.append(
            f"| {row['status']} | {cell(row['dependent'])} | {cell(str(row.get('version') or ''))} | {cell(detail(row))} |"
        )
    if len(rows) > max_rows:
        lines.append(f"\n… and {len(rows) - max_rows} more dependents; see the full results.")
    if result.dropped or result.notes:
        lines += ["", "<details><summary>Notes</summary>", ""]
        lines += [f"- not audited: {cell(item['name'])}: {cell(item['reason'])}" for item in result.dropped]
        lines += [f"- {cell(note)}" for note in result.notes]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"
