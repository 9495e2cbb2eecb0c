"""`plan`: audit the ends of the release range, bisect where the findings differ (or audit every
release), and tell each finding of the target its history.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from packaging.version import Version

from apidrift.auditor.cache import Cache
from apidrift.auditor.core.results import (
    AuditResult,
    Severity,
)
from apidrift.auditor.engine import AuditRequest, _index, audit
from apidrift.auditor.sources import stdlib
from apidrift.auditor.sources.index_client import IndexClient
from apidrift.auditor.sources.locate import locate
from apidrift.auditor.sources.specs import SourceError, SpecError, is_valid_name, normalize_name
from apidrift.auditor.sources.written_for import NONE, choose_old, choose_old_python
from apidrift.auditor.upstream.resolve import Resolver

from .history import _history
from .model import Bisection, PlanError, PlanRequest, PlanResult, Progress, ReleaseRow, finding_key
from .releases import _as_spec, _label, _latest, _pick, _python_pick, _releases


def plan(
    request: PlanRequest, progress: Progress | None = None, target: AuditResult | None = None
) -> PlanResult:
    """Make the plan; raises `SpecError`/`SourceError` for inputs that cannot be had, `PlanError` for a bad range.

    `target`: an audit already made of the target release with the same request and the written-for
    release as its old version (`audit --history` hands in its own), taken instead of auditing it again."""
    say = progress or (lambda _text: None)
    started = time.perf_counter()
    if not is_valid_name(request.upstream):
        raise SpecError(
            f"--upstream {request.upstream!r}: give the upstream's distribution name (its releases are read from the index)"
        )
    cache = Cache(request.cache_dir)
    notes: list[str] = []
    python = normalize_name(request.upstream) == stdlib.DISTRIBUTION
    listing = None
    if not python:
        with IndexClient(cache, request.index_url, offline=request.offline) as client:
            listing = client.project(request.upstream)
    name = listing.name or request.upstream if listing is not None else stdlib.DISTRIBUTION
    down_tree = locate(
        request.downstream,
        role="downstream",
        cache=cache,
        index_url=request.index_url,
        offline=request.offline,
    )
    if listing is None:  # Python itself: the versions its standard library's stubs describe
        versions = [Version(f"3.{minor}") for minor in range(stdlib.OLDEST[1], stdlib.NEWEST[1] + 1)]
        yanked: dict[Version, str] = {}
        to = _python_pick(request.to, "--to") if request.to else versions[-1]
        choice = choose_old_python(
            f"python=={_python_pick(request.old, '--from')}" if request.old else None,
            _label(down_tree),
            down_tree.requires_python,
            str(to),
        )
    else:
        versions, yanked = _releases(listing, request.pre)
        to = _pick(listing, request.to, "--to") if request.to else _latest(versions, request.pre, listing)
        choice = choose_old(
            _as_spec(request.old, name) if request.old else None,
            name,
            _label(down_tree),
            down_tree.requires,
            str(to),
        )
    if choice.spec is None:
        raise PlanError(f"{choice.note}; give --from VERSION")
    notes.append(choice.note)
    if listing is None:
        start = _python_pick(choice.spec, "--from")
        if start < versions[0]:
            notes.append(f"Python {start} is read as {versions[0]}, the oldest its stubs describe")
            start = versions[0]
    else:
        start = _pick(listing, choice.spec, "--from")
    if start > to:
        raise PlanError(f"the written-for release {start} is newer than the target {to}")
    walk = sorted({v for v in versions if start <= v <= to} | {start, to})
    rows = {str(v): ReleaseRow(str(v)) for v in walk}
    for version, reason in sorted(yanked.items()):
        if start < version < to:
            rows[str(version)] = ReleaseRow(str(version), "yanked", note=reason)
    skipped = [str(v) for v in sorted(yanked) if start < v < to]
    if skipped:
        notes.append(f"yanked, not audited: {', '.join(skipped)}")
    order = [str(v) for v in walk]
    runner = _Runner(request, name, str(start), cache, rows, say, len(order))

    if target is not None and _audit_of(target, name, order[-1], order[0]):
        runner.record(order[-1], target, sum(target.timings.values()) if target.timings else None, None)
    runner.audit(order[0])
    runner.audit(order[-1])
    bisections: list[Bisection] = []
    if request.every:
        for between in order[1:-1]:
            runner.audit(between)
    else:
        _bisect(order, 0, len(order) - 1, runner, bisections)
    for bisection in bisections:
        notes.append(
            f"bisected: {bisection.low} and {bisection.high} have the same findings; "
            f"not audited between them: {', '.join(bisection.skipped)}"
        )
    target = runner.results[order[-1]]
    histories = [_history(f, order, runner, rows) for f in target.findings]
    notes.extend(runner.notes)
    # What the target's audit had to say about how it ran (modules it could not parse, ...).
    notes.extend(
        n for n in target.notes if not n.startswith(("old version", "no old version")) and n not in notes
    )
    result = PlanResult(
        downstream=target.downstream,
        upstream=name,
        from_version=order[0],
        to_version=order[-1],
        rows=[rows[v] for v in sorted(rows, key=Version)],
        histories=histories,
        bisections=bisections,
        target=target,
        notes=notes,
        every=request.every,
    )
    result.seconds = time.perf_counter() - started
    return result


def _audit_of(result: AuditResult, name: str, version: str, old: str) -> bool:
    """Whether `result` audits `name==version` from the index with `name==old` as its old version."""
    up, before = result.upstream, result.old_upstream
    if normalize_name(up.name) != normalize_name(name) or up.origin != "index" or up.version is None:
        return False
    if before is None or before.version is None:
        return False
    return Version(up.version) == Version(version) and Version(before.version) == Version(old)


def _bisect(order: list[str], low: int, high: int, runner: _Runner, out: list[Bisection]) -> None:
    if high - low <= 1:
        return
    if runner.rows[order[low]].keys == runner.rows[order[high]].keys:
        between = order[low + 1 : high]
        for version in between:
            row = runner.rows[version]
            ends = runner.rows[order[low]]
            row.status, row.errors, row.warnings, row.infos, row.keys = (
                "inferred",
                ends.errors,
                ends.warnings,
                ends.infos,
                ends.keys,
            )
            row.note = f"not audited: {order[low]} and {order[high]} have the same findings"
        out.append(Bisection(order[low], order[high], tuple(between)))
        return
    middle = (low + high) // 2
    runner.audit(order[middle])
    _bisect(order, low, middle, runner, out)
    _bisect(order, middle, high, runner, out)


class _Runner:
    """Audits releases (once each) and opens their API for the history questions."""

    def __init__(
        self,
        request: PlanRequest,
        name: str,
        start: str,
        cache: Cache,
        rows: dict[str, ReleaseRow],
        say: Progress,
        total: int,
    ) -> None:
        self.request = request
        self.name = name
        self.start = start
        self.cache = cache
        self.rows = rows
        self.say = say
        self.total = total
        self.results: dict[str, AuditResult] = {}
        self.views: dict[str, Any] = {}
        self.notes: list[str] = []

    def label(self, version: str) -> str:
        return f"{self.name}=={version}"

    def audit(self, version: str) -> AuditResult:
        if version in self.results:
            return self.results[version]
        self.say(
            f"auditing against {self.label(version)} ({len(self.results) + 1} audited, {self.total} releases in the range)"
        )
        request = self.request
        api = self.cache.dir("api")
        before = _count_files(api)
        began = time.perf_counter()
        result = audit(
            AuditRequest(
                request.downstream,
                self.label(version),
                NONE if version == self.start else self.label(self.start),
                request.cache_dir,
                request.offline,
                request.index_url,
                ignore_rules=request.ignore_rules,
                severities=dict(request.severities),
                exclude=request.exclude,
                ignore_symbols=request.ignore_symbols,
            )
        )
        self.record(version, result, time.perf_counter() - began, max(0, _count_files(api) - before))
        return result

    def record(self, version: str, result: AuditResult, seconds: float | None, parsed: int | None) -> None:
        """Take `result` as the audit of `version` (made here, or handed in by `audit --history`)."""
        self.results[version] = result
        coverage = result.coverage[0] if result.coverage else None
        row = self.rows[version]
        row.status = "audited"
        row.errors, row.warnings, row.infos = (
            result.count(s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
        )
        row.checked = coverage.checked if coverage else 0
        row.found = coverage.found if coverage else 0
        row.seconds = seconds
        row.modules_parsed = parsed
        row.keys = frozenset(finding_key(f, self.label(version)) for f in result.findings)
        row.findings = [
            {"code": f.code, "severity": f.severity.value, "path": f.location.path, "line": f.location.line,
             "column": f.location.column, "symbol": f.symbol, "message": f.message}
            for f in result.findings
        ]  # fmt: skip
        row.note = None

    def view(self, version: str) -> Any:
        """The release's API (a `Resolver`), without auditing it; None when it cannot be had."""
        if version not in self.views:
            try:
                tree = locate(
                    self.label(version),
                    role="upstream",
                    cache=self.cache,
                    index_url=self.request.index_url,
                    offline=self.request.offline,
                )
            except SourceError as error:
                self.notes.append(f"{self.label(version)} could not be had for the history ({error})")
                self.views[version] = None
            else:
                self.views[version] = (Resolver(_index(tree, self.cache.dir("api"))), tree)
                row = self.rows[version]
                if row.status == "inferred":
                    row.status = "looked-at"
                    row.note = (row.note or "") + "; its API was read for the findings' history"
        return self.views[version]


def _count_files(folder: Path) -> int:
    try:
        return sum(1 for sub in folder.iterdir() if sub.is_dir() for _ in sub.iterdir())
    except OSError:
        return 0
