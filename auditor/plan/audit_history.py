"""`apidrift audit --history`: the findings of an audit given their history by `plan`, over the
upstream's releases from the old version to the audited one.
"""

from __future__ import annotations

from dataclasses import replace

from apidrift.auditor.core.results import (
    AuditResult,
    Since,
)
from apidrift.auditor.engine import AuditRequest
from apidrift.auditor.sources.specs import SourceError, SpecError

from .model import PlanError, PlanRequest, Progress, finding_key
from .walk import plan


def audit_history(
    request: AuditRequest, result: AuditResult, progress: Progress | None = None
) -> AuditResult:
    """`apidrift audit --history`: each finding of `result` gets its `since` (the release where it first
    appeared, where its target was first deprecated, the migration window), computed by `plan` over the
    upstream's releases from the old version to the audited one; `result` (already the target's audit)
    is reused. Without an old version, or for an upstream not from the index, a note says why not."""

    up, old = result.upstream, result.old_upstream
    if old is None or old.version is None:
        result.notes.append(
            "--history needs the version the downstream was written for: give --from VERSION (or let the downstream pin the upstream)"
        )
        return result
    if up.origin != "index" or up.version is None:
        result.notes.append(
            f"--history walks the upstream's releases on the index; {up.label} was read from a {up.origin}, so no history"
        )
        return result
    if not result.findings:
        result.notes.append("--history: no findings, so no history to tell")
        return result
    plan_request = PlanRequest(
        request.downstream, up.name, old=old.version, to=up.version, cache_dir=request.cache_dir, offline=request.offline,
        index_url=request.index_url, ignore_rules=request.ignore_rules, severities=dict(request.severities),
        exclude=request.exclude, ignore_symbols=request.ignore_symbols,
    )  # fmt: skip
    try:
        made = plan(plan_request, progress, target=result)
    except (SpecError, SourceError, PlanError) as error:
        result.notes.append(f"--history: no history ({error})")
        return result
    label = f"{made.upstream}=={made.to_version}"
    histories = {h.key: h for h in made.histories}
    traced = 0
    findings = []
    for finding in result.findings:
        history = histories.get(finding_key(finding, label))
        if history is not None:
            traced += 1
            finding = replace(finding, since=Since(
                made.upstream, made.from_version, history.first_appeared, history.last_clean, history.deprecated_in,
                history.deprecation, history.window_from, history.window_to, history.migration,
            ))  # fmt: skip
        findings.append(finding)
    result.findings = findings
    walk = made.walk
    note = (
        f"--history: {made.upstream} releases {made.from_version} to {made.to_version} ({len(walk)} in the range, "
        f"{len(made.audited)} audited, {len(made.not_audited)} not audited: same findings at both ends)"
    )
    yanked = [r.version for r in made.rows if r.status == "yanked"]
    if yanked:
        note += f"; yanked, skipped: {', '.join(yanked)}"
    if traced < len(findings):
        note += f"; {len(findings) - traced} finding(s) not traced"
    result.notes.append(note)
    result.notes.extend(
        n for n in made.notes if n.startswith(("could not", f"{made.upstream}==")) and n not in result.notes
    )
    return result
