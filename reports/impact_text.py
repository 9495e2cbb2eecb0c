"""Plain-text summary of an impact run: counts by status, what breaks by upstream symbol, one line per dependent."""

from __future__ import annotations

from typing import Any

from apidrift.auditor.core.wording import plural
from apidrift.auditor.impact.results import BUCKET_TITLES, STATUSES, Group, ImpactResult
from apidrift.reports.escape import escaped

MAX_GROUP_DEPENDENTS = 8  # names listed per group; the rest are counted
MAX_SITES = 12  # breaking call sites listed per dependent; the rest are counted


def bucket_lines(result: ImpactResult) -> list[str]:
    """ "Breaks its users (...) 3: typer 0.15.1, ..." per bucket that is not empty: what to read first."""
    lines = []
    for name, rows in result.buckets().items():
        if rows:
            lines.append(f"{BUCKET_TITLES[name]}: {len(rows)}: {', '.join(_who(row) for row in rows)}")
    return lines


def breaking_sites(row: dict[str, Any], limit: int = MAX_SITES) -> list[str]:
    """ "typer/core.py:245 AD101 (shipped)" for each finding the release causes at the row's grade."""
    grade = "error" if row.get("errors") else "warning"
    sites = [
        f"{f['path']}:{f['line']} {f['code']} ({f.get('role') or 'role unknown'})"
        for f in row.get("findings", ())
        if f.get("severity") == grade and f.get("classification") != "pre-existing"
    ]
    if len(sites) > limit:
        sites = [*sites[:limit], f"and {len(sites) - limit} more"]
    return sites


def title(result: ImpactResult) -> str:
    return f"{result.release['label']} (from {result.old['label']}): {plural(len(result.rows), 'dependent')}"


def counts_line(result: ImpactResult) -> str:
    counts = result.counts()
    return ", ".join(f"{status} {counts[status]}" for status in STATUSES if counts[status]) or "no dependents"


def group_verdict(group: Group) -> str:
    """ "breaks 7 dependents, 12 call sites" (and those pinned below the release)."""
    verb = "breaks" if group.severity == "error" else "warns"
    if not group.dependents:
        return f"{verb} {plural(len(group.pinned), 'dependent')} pinned below the release, when they upgrade"
    line = f"{verb} {plural(len(group.dependents), 'dependent')}, {plural(group.sites, 'call site')}"
    if group.pinned:
        line += f" (+{len(group.pinned)} pinned below the release)"
    return line


def group_line(group: Group) -> str:
    """ "`pkg.Scheduler.__init__` AD102 missing-required-argument: breaks 7 dependents, 12 call sites"."""
    return f"`{group.symbol}` {group.code} {group.rule}: {group_verdict(group)}"


def names(items: tuple[str, ...], limit: int = MAX_GROUP_DEPENDENTS) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def rules_text(row: dict[str, Any]) -> str:
    return " ".join(f"{code}x{n}" for code, n in sorted(row.get("by_rule", {}).items()))


def coverage_text(row: dict[str, Any]) -> str:
    found = row.get("found") or 0
    return f"{row.get('checked', 0)}/{found} sites checked" if found else "no use site"


def detail(row: dict[str, Any]) -> str:
    status = row["status"]
    if status in ("timeout", "memory", "error"):
        return row.get("error") or status
    parts = []
    if row.get("errors"):
        parts.append(plural(row["errors"], "error"))
    if row.get("warnings"):
        parts.append(plural(row["warnings"], "warning"))
    if row.get("pre_existing"):
        parts.append(f"{row['pre_existing']} pre-existing")
    if row.get("pin"):
        parts.append(f"pins {row['pin']}")
    if row.get("reach") == "own-code":
        parts.append("only in " + "/".join(sorted(row.get("roles") or {})))
    for alias in row.get("aliases") or ():
        parts.append(str(alias))
    if rules_text(row):
        parts.append(rules_text(row))
    parts.append(coverage_text(row))
    return ", ".join(parts)


def render(result: ImpactResult) -> str:
    result = escaped(result)  # dependents' names, errors, notes and messages come from the inputs
    lines = [f"apidrift impact: {title(result)}"]
    lines += [f"  {line}" for line in bucket_lines(result)]
    lines += [f"  {counts_line(result)}", ""]
    groups = result.groups()
    if groups:
        lines.append("What the release breaks, by upstream symbol:")
        for group in groups:
            lines.append(f"  {group_line(group)}")
            lines.append(f"      {' '.join(group.message.split())}")
            if group.dependents:
                lines.append(f"      dependents: {names(group.dependents)}")
            if group.pinned:
                lines.append(f"      pinned below it: {names(group.pinned)}")
        lines.append("")
    order = {status: i for i, status in enumerate(STATUSES)}
    lines.append("Dependents:")
    width = max((len(_who(row)) for row in result.rows), default=0)
    for row in sorted(result.rows, key=lambda r: (order[r["status"]], r["dependent"])):
        seconds = row.get("wall_seconds")
        timing = f"  {seconds:.1f}s" if isinstance(seconds, (int, float)) else ""
        lines.append(f"  {row['status']:<16} {_who(row):<{width}}  {detail(row)}{timing}")
        if row["status"] in ("broken", "at-risk"):
            lines += [f"      {site}" for site in breaking_sites(row)]
    if result.dropped:
        lines += ["", f"Not audited ({len(result.dropped)} candidates):"]
        lines += [f"  {item['name']}: {item['reason']}" for item in result.dropped]
    for note in result.notes:
        lines.append(f"note: {note}")
    lines.append(f"{result.executor}; {result.elapsed:.1f}s; rows in {result.results_dir}")
    return "\n".join(lines) + "\n"


def _who(row: dict[str, Any]) -> str:
    version = row.get("version")
    return (
        f"{row['dependent']} {version}"
        if version and str(version) not in row["dependent"]
        else row["dependent"]
    )
