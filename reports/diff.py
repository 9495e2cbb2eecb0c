"""Renderers for `apidrift diff`: the API changes between two versions, as text or JSON."""

from __future__ import annotations

import json
from collections import Counter

from apidrift.auditor.core.results import InputInfo
from apidrift.auditor.engine import DiffResult
from apidrift.auditor.upstream.diff import ApiChange, ChangeKind
from apidrift.reports.escape import escaped


def render(result: DiffResult, fmt: str = "text") -> str:
    if fmt == "json":
        return json.dumps(result.as_dict(), indent=2) + "\n"
    return render_text(result)


def render_text(result: DiffResult) -> str:
    result = escaped(result)  # names, paths and messages come from the inputs
    lines = [f"API changes from {_input_label(result.old)} to {_input_label(result.new)}"]
    if result.downstream is not None:
        lines[0] += f" that {_input_label(result.downstream)} uses"
        lines += LEGEND_USED_BY
    else:
        lines += LEGEND
    lines.append("")
    by_path: dict[str, list[ApiChange]] = {}
    for change in result.changes:
        by_path.setdefault(change.path, []).append(change)
    for path in sorted(by_path, key=lambda p: (not any(c.breaking for c in by_path[p]), p)):
        changes = sorted(by_path[path], key=lambda c: (not c.breaking, c.kind))
        lines.append(path)
        for change in changes:
            lines.append(f"  {_label(change)}  {change.kind.value}: {change.detail}")
        signed = next(
            (c for c in changes if c.old and c.new and c.kind not in (ChangeKind.MOVED, ChangeKind.REMOVED)),
            None,
        )
        if signed is not None:
            lines.append(f"  old: {signed.old}")
            lines.append(f"  new: {signed.new}")
        if result.downstream is None:
            uses = sorted({u for c in changes for u in c.uses}, key=_site_order)
            lines += _used_at("used at", uses)
        else:  # per change: exactly the sites it breaks (or, for the others, touches)
            for change in changes:
                verb = "breaks" if change.breaking else "touches"
                lines += _used_at(f"{change.kind.value} {verb}", sorted(change.uses, key=_site_order))
        lines.append("")
    lines.append("")
    for note in result.notes:
        lines.append(f"note: {note}")
    counts = Counter("breaking" if c.breaking else "other" for c in result.changes)
    lines.append(f"{len(result.changes)} changes ({counts['breaking']} breaking, {counts['other']} other).")
    return "\n".join(lines) + "\n"


# What each change's label means; paths and lines are those `audit` reports (relative to the
# downstream's project root, the line where CPython fails).
LEGEND_USED_BY = [
    "  BREAKING  breaks one of the downstream's use sites, listed under it as path:line",
    "  not here  breaks some callers, but none of the downstream's use sites",
    "  changed   breaks no caller (a new optional parameter, a changed default...); the uses it touches are listed",
]
LEGEND = [
    "  BREAKING  breaks some callers",
    "  changed   breaks no caller (a new optional parameter, a changed default, a deprecation)",
]


def _input_label(info: InputInfo) -> str:
    """`name==version`, or the name and where it came from when it has no version (a folder)."""
    return f"{info.name}=={info.version}" if info.version else f"{info.name} ({info.location})"


def _label(change: ApiChange) -> str:
    if change.breaking:
        return "BREAKING"
    if change.breaks_some_callers:
        return "not here"  # breaks some callers, none of this downstream's
    return "changed "


def _used_at(prefix: str, uses: list[str]) -> list[str]:
    """One line per file: `prefix path:line, path:line`, as `audit` writes locations."""
    by_file: dict[str, list[str]] = {}
    for use in uses:
        file, _, _line = use.rpartition(":")
        by_file.setdefault(file, []).append(use)
    return [f"  {prefix} {', '.join(found)}" for found in by_file.values()]


def _site_order(site: str) -> tuple[str, int]:
    path, _, line = site.rpartition(":")
    return path, int(line) if line.isdigit() else 0
