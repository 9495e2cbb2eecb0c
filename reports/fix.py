"""Renderer for `apidrift fix`: the unified diff (or what was written) and the to-do for the rest.

With `--diff` every line that is not part of the patch starts with `# `, so the whole output can be
saved and given to `git apply` or `patch -p1` as it is. Unsafe fixes are labelled where the user
reads them, in these lines, and never in the code.
"""

from __future__ import annotations

from pathlib import Path

from apidrift.auditor.core.results import Applicability, Finding, ManualParameter, ManualStep, Severity
from apidrift.auditor.core.signature import ParamKind
from apidrift.auditor.core.wording import plural
from apidrift.auditor.fix.codemods import (
    APPLIED,
    GUARDED,
    MANUAL,
    NEEDS_UNSAFE,
    NO_FIX,
    NOT_APPLIED,
    RESOLVED,
    FixResult,
    Outcome,
    manual_parameters,
)

_KINDS = {
    ParamKind.POSITIONAL_ONLY: "by position only",
    ParamKind.POSITIONAL_OR_KEYWORD: "by position or by keyword",
    ParamKind.KEYWORD_ONLY: "by keyword only",
}


def render(result: FixResult, *, written: list[Path] | None = None) -> str:
    """The report of a fix run: with `written` None, the diff mode; else the files written."""
    diff_mode = written is None
    out: list[str] = []

    def say(text: str = "") -> None:
        out.append(f"# {text}".rstrip() if diff_mode else text)

    audit = result.audit
    header = f"apidrift fix: {audit.downstream.label} against {audit.upstream.label}"
    if audit.old_upstream is not None:
        header += f" (written for {audit.old_upstream.label})"
    say(header)
    say(f"paths are relative to {result.root}")
    if audit.old_upstream is None:
        say(
            "no old version (--from): the old version's own evidence (a renamed keyword it accepted, its deprecation notices) is unknown, so no rename is offered"
        )
    if not result.local:
        say(f"a diff only: {result.not_local_reason}, so apidrift will not write into it")
    for note in result.notes:
        say(f"note: {note}")
    applied = result.with_status(APPLIED)
    resolved = result.with_status(RESOLVED)
    by_path: dict[str, list[Outcome]] = {}
    for outcome in result.with_status(APPLIED, RESOLVED):
        by_path.setdefault(outcome.finding.location.path, []).append(outcome)
    changed = {change.path: change for change in result.changes}
    for path in sorted(changed):
        say()
        say(f"{path}:" if diff_mode else f"fixed {path}:")
        for outcome in sorted(by_path.get(path, []), key=lambda o: (o.status == RESOLVED, _order(o.finding))):
            if outcome.status == RESOLVED:
                say(f"  {_where(outcome.finding)} {outcome.finding.code} resolved: {outcome.reason}")
                continue
            say(f"  {_where(outcome.finding)} {outcome.finding.code} {_fix_label(outcome)}")
            fix = outcome.finding.fix
            if fix is not None and fix.evidence:
                say(f"      evidence: {fix.evidence}")
            if outcome.reason:
                say(f"      UNSAFE: {outcome.reason}")
        if diff_mode:
            out.append(changed[path].diff().rstrip("\n"))
    if not changed:
        say()
        if result.with_status(NEEDS_UNSAFE) and not applied:
            say("no changes without --unsafe-fixes")
        else:
            say("no changes: nothing here can be fixed mechanically" if not applied else "no changes")

    manual = result.with_status(MANUAL)
    if manual:
        say()
        say("Manual steps (no automatic fix: the value is yours to choose):")
        for outcome in manual:
            for line in manual_step(outcome.finding, audit.upstream.label, outcome.supplied):
                say(line)
    unsafe = result.with_status(NEEDS_UNSAFE)
    if unsafe:
        say()
        say("Unsafe fixes not applied (they change behaviour; rerun with --unsafe-fixes to apply them):")
        for outcome in unsafe:
            fix = outcome.finding.fix
            say(f"  {_site(outcome.finding)} {outcome.finding.code} {fix.description if fix else ''}")
            if fix is not None and fix.evidence:
                say(f"      evidence: {fix.evidence}")
            say(f"      {outcome.reason}")
    failed = result.with_status(NOT_APPLIED)
    if failed:
        say()
        say("Fixes not applied:")
        for outcome in failed:
            fix = outcome.finding.fix
            say(
                f"  {_site(outcome.finding)} {outcome.finding.code} {fix.description if fix else ''}: {outcome.reason}"
            )
    others = [o for o in result.with_status(NO_FIX, GUARDED) if o.finding.severity is not Severity.INFO]
    infos = [o for o in result.with_status(NO_FIX, GUARDED) if o.finding.severity is Severity.INFO]
    if others:
        say()
        say("Not fixed (no mechanical fix; see `apidrift audit` for hints):")
        for outcome in others:
            finding = outcome.finding
            say(f"  {_site(finding)} {finding.code} [{finding.severity.value}] {finding.message}")

    say()
    safe_count = sum(
        1 for o in applied if o.finding.fix and o.finding.fix.applicability is Applicability.SAFE
    )
    files = len(result.changes)
    verb = "to apply" if diff_mode else "applied"
    if applied:
        summary = f"{plural(len(applied), 'fix', 'fixes')} {verb} in {plural(files, 'file')} ({safe_count} safe, {len(applied) - safe_count} unsafe)"
    else:
        summary = f"nothing {verb}"
    if resolved:
        summary += (
            f", which also resolve{'s' if len(applied) == 1 else ''} {plural(len(resolved), 'more finding')}"
        )
    summary += f"; {plural(len(manual), 'manual step')}"
    if unsafe:
        summary += f"; {len(unsafe)} unsafe not applied"
    if failed:
        summary += f"; {len(failed)} not applicable"
    if others:
        summary += f"; {plural(len(others), 'other finding')} without a fix"
    if infos:
        summary += f"; {plural(len(infos), 'info finding')} left alone"
    say(summary + ".")
    return "\n".join(out) + "\n"


def manual_step(finding: Finding, version: str, supplied: tuple[str, ...] = ()) -> list[str]:
    """`pass `block_size`, an `int`, to Scheduler(): required, no default ...`, one line per parameter
    (but those a rename in the same call passes)."""
    callee = _callee(finding)
    lines = [f"  {_site(finding)} {finding.code} {callee}:"]
    params = [p for p in manual_parameters(finding) if p.name not in supplied]
    if not params:
        lines.append(f"      {finding.fix.description if finding.fix else finding.message}")
    elif finding.fix is not None and finding.fix.description.startswith("drop `"):
        # a removed keyword whose call also lacks a required parameter: the drop comes first
        lines.append(f"      {finding.fix.description.split(' and pass ', 1)[0]}, and:")
    for param in params:
        lines.append(f"      {_describe(param, callee, version)}")
    return lines


def _describe(param: ManualParameter, callee: str, version: str) -> str:
    text = f"pass `{param.name}`"
    if param.annotation:
        article = "an" if param.annotation[:1].lower() in "aeiou" else "a"
        text += f", {article} `{param.annotation}`,"
    text += f" to {callee}: required, no default"
    status = {
        "new": f"new in {version}",
        "had-default": f"its default was removed in {version}",
        "required": "it was required before too",
    }.get(param.before or "")
    if status:
        text += f" ({status})"
    where = []
    if param.position is not None:
        where.append(f"parameter {param.position}" + (f" of {param.of}" if param.of else ""))
    if param.after:
        where.append(f"after `{param.after}`")
    if param.kind is not None and param.kind in _KINDS:
        where.append(f"passed {_KINDS[param.kind]}")
    if where:
        text += "; " + ", ".join(where)
    return text


def _callee(finding: Finding) -> str:
    first = finding.message.split(" ", 1)[0]
    if first.endswith("()"):
        return first
    callee = finding.fix.data.callee if finding.fix and isinstance(finding.fix.data, ManualStep) else None
    return f"{callee}()" if callee else finding.symbol


def _fix_label(outcome: Outcome) -> str:
    fix = outcome.finding.fix
    if fix is None:
        return ""
    label = "unsafe fix" if fix.applicability is Applicability.UNSAFE else "safe fix"
    return f"{label}: {fix.description}"


def _order(finding: Finding) -> tuple[int, int, int]:
    return finding.location.cell or 0, finding.location.line, finding.location.column


def _where(finding: Finding) -> str:
    cell = f"cell {finding.location.cell}:" if finding.location.cell is not None else ""
    return f"{cell}{finding.location.line}:{finding.location.column}"


def _site(finding: Finding) -> str:
    return finding.location.where
