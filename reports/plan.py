"""Renderers of a `PlanResult` (`apidrift plan`): text, JSON and Markdown; HTML is in `plan_html`, and
`apidrift.reports.render_plan` picks one by format.

Pure functions `render_*(result) -> str`, each the whole document ending with a newline. Text read from
the upstream (deprecation messages) or the downstream is untrusted: control characters are shown
escaped in the text report, and Markdown markup is escaped in the Markdown one.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from apidrift.reports.markdown import cell, code

if TYPE_CHECKING:
    from apidrift.auditor.plan import History, PlanResult, ReleaseRow

PLAN_FORMATS = ("text", "json", "markdown", "html")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(text: str) -> str:
    """One line of text for a terminal: control characters (escape sequences, newlines) shown escaped."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def status_text(row: ReleaseRow) -> str:
    return {
        "audited": "audited",
        "inferred": "not audited (same findings at both ends)",
        "looked-at": "not audited; API read for the history",
        "yanked": "skipped: yanked",
    }.get(row.status, row.status)


def _number(value: int | None) -> str:
    return "-" if value is None else str(value)


def headline(result: PlanResult) -> str:
    mode = "every release audited" if result.every else "bisected where the ends agree"
    return (
        f"apidrift plan: {result.downstream.label} against {result.upstream} "
        f"{result.from_version} -> {result.to_version} ({len(result.walk)} releases, {len(result.audited)} audited, {mode})"
    )


def history_lines(history: History) -> list[str]:
    """What the history says, as short labelled sentences (shared by text and Markdown)."""
    lines = []
    if history.first_appeared is None:
        lines.append("first appeared: already in the written-for release")
    else:
        lines.append(f"first appeared: {history.first_appeared} (fine in {history.last_clean})")
    if history.deprecated_in:
        lines.append(f"deprecated: in {history.deprecated_in}: {history.deprecation}")
    elif history.finding.severity.value == "error" and history.first_appeared is not None:
        lines.append("deprecated: no deprecation found before the break")
    if history.migration:
        lines.append(f"migration: {history.migration}")
    return lines


def render_text(result: PlanResult) -> str:
    out = [safe(headline(result)), ""]
    rows = [("release", "errors", "warnings", "checked", "status")]
    for row in result.rows:
        rows.append(
            (row.version, _number(row.errors), _number(row.warnings), _number(row.checked), status_text(row))
        )
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row_cells in rows:
        first = row_cells[0].ljust(widths[0])
        numbers = "  ".join(c.rjust(w) for c, w in zip(row_cells[1:4], widths[1:4]))
        out.append(f"  {first}  {numbers}  {row_cells[4]}")
    out += ["", safe(result.summary())]
    if result.histories:
        out += ["", f"findings in {result.upstream} {result.to_version} and their history:"]
        for history in result.histories:
            f = history.finding
            loc = f.location
            out.append(f"  {loc.where}: {f.code} [{f.severity.value}] {safe(f.message)}")
            out += [f"      {safe(line)}" for line in history_lines(history)]
    else:
        out += ["", f"no findings in {result.upstream} {result.to_version}"]
    if result.notes:
        out += ["", "notes:"] + [f"  - {safe(note)}" for note in result.notes]
    out.append(f"\nplanned in {result.seconds:.1f}s")
    return "\n".join(out) + "\n"


def render_json(result: PlanResult) -> str:
    return json.dumps(result.as_dict(), indent=2) + "\n"


def render_markdown(result: PlanResult) -> str:
    icon = ":white_check_mark:" if result.target_reachable else ":x:"
    out = [f"## {icon} apidrift plan: {cell(result.downstream.label)} against {cell(result.upstream)}", ""]
    out += [f"**{cell(result.summary())}**", "", cell(headline(result).removeprefix("apidrift plan: ")), ""]
    out += ["| release | errors | warnings | use sites checked | status |", "|---|---:|---:|---:|---|"]
    for row in result.rows:
        mark = " :white_check_mark:" if row.version == result.safe else ""
        out.append(
            f"| {cell(row.version)}{mark} | {_number(row.errors)} | {_number(row.warnings)} | {_number(row.checked)} | {cell(status_text(row))} |"
        )
    if result.histories:
        out += ["", f"### Findings in {cell(result.to_version)} and their history", ""]
        out += ["| finding | where | first appeared | deprecated | migration |", "|---|---|---|---|---|"]
        for history in result.histories:
            f = history.finding
            where = code(f.location.where.rpartition(":")[0])
            first = cell(history.first_appeared or "already in the written-for release")
            deprecated = (
                cell(f"{history.deprecated_in}: {history.deprecation}") if history.deprecated_in else ""
            )
            out.append(
                f"| {f.code} {cell(f.message)} | {where} | {first} | {deprecated} | {cell(history.migration or '')} |"
            )
    if result.notes:
        out += (
            ["", "<details><summary>Notes</summary>", ""]
            + [f"- {cell(note)}" for note in result.notes]
            + ["", "</details>"]
        )
    return "\n".join(out) + "\n"
