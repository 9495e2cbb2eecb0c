"""Plan an upgrade: audit a downstream against every upstream release from the version it was written
for to a target, and tell each finding's history.

`plan(request)` lists the upstream's releases on the index, audits the ends of the range with the
engine's `audit`, and bisects: where two audited releases have the same findings, the releases between
them are not audited (they are inferred, and the result says so); where they differ, the middle release
is audited, until every change of findings lies between two neighbouring releases. `every=True` audits
every release. Each audit reuses the caches (extracted releases, the downstream's scan, and the parsed
API of every module whose source did not change, keyed by its content), so the cost of a release grows
with what changed since its neighbour.

For each finding of the target release the history says: the release where it first appeared (the
first of the unbroken run that ends at the target), the release where its target was first deprecated
(the deprecation the engine reads, `@deprecated`/`warnings.warn`/`.. deprecated::`, on the callee or a
member named like the keyword; or a deprecation warning inside the callee that names the parameter), and
the migration window: the releases before the break that already accept the new way while the old one
still works (a new parameter present before it became required, a removed keyword optional before it
went, the new name of a renamed keyword or of a moved import already there). Releases between audited
ones are looked at for these questions by bisection too, assuming what is added stays until the break.
"""

from __future__ import annotations

import ast
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from apidrift.auditor.cache import Cache
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import (
    AuditResult,
    Finding,
    InputInfo,
    ManualStep,
    MoveImport,
    RemoveKeyword,
    RenameKeyword,
    Severity,
)
from apidrift.auditor.core.version import __version__
from apidrift.auditor.engine import AuditRequest, audit
from apidrift.auditor.sources import stdlib
from apidrift.auditor.sources.index_client import IndexClient, ProjectListing
from apidrift.auditor.sources.locate import SourceTree, locate
from apidrift.auditor.sources.specs import IndexSpec, SourceError, SpecError, is_valid_name, normalize_name
from apidrift.auditor.sources.written_for import NONE, choose_old, choose_old_python

PLAN_SCHEMA_VERSION = 1
MAX_SOURCE_BYTES = 5 * 1024 * 1024  # a module larger than this is not read for parameter deprecations
_DEPRECATION_CATEGORIES = ("DeprecationWarning", "PendingDeprecationWarning", "FutureWarning")


@dataclass(frozen=True)
class PlanRequest:
    downstream: str
    upstream: str  # the upstream's distribution name
    old: str | None = None  # `--from`: a version (or NAME==VER); None: inferred as `audit` does
    to: str | None = None  # `--to`: a version; None: the latest final release (with `pre`: any)
    pre: bool = False  # include pre-releases in the walk
    every: bool = False  # audit every release instead of bisecting where the ends agree
    cache_dir: Path | None = None
    offline: bool = False
    index_url: str | None = None
    ignore_rules: frozenset[str] = frozenset()
    severities: dict[str, str] = field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    ignore_symbols: tuple[str, ...] = ()


@dataclass
class ReleaseRow:
    """One release of the range, audited or not."""

    version: str
    status: str = "pending"  # "audited", "inferred" (between two audited releases with the same findings), "yanked", "looked-at"
    errors: int | None = None
    warnings: int | None = None
    infos: int | None = None
    checked: int | None = None  # use sites checked with a certain verdict
    found: int | None = None  # use sites found
    seconds: float | None = None  # time of its audit
    modules_parsed: int | None = None  # upstream modules parsed anew (not in the cache) for its audit
    note: str | None = None
    keys: frozenset[str] = frozenset()  # the findings' identities (see `finding_key`)
    findings: list[dict[str, Any]] | None = None  # for an audited release: its findings, in short

    @property
    def safe(self) -> bool | None:
        return None if self.errors is None else self.errors == 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": self.version, "status": self.status, "errors": self.errors, "warnings": self.warnings,
            "infos": self.infos, "use_sites_checked": self.checked, "use_sites_found": self.found,
            "seconds": None if self.seconds is None else round(self.seconds, 3),
            "modules_parsed": self.modules_parsed, "note": self.note, "findings": self.findings,
        }  # fmt: skip


@dataclass(frozen=True)
class Event:
    version: str
    kind: str  # "clean", "appeared", "deprecated", "window-opens", "target"
    text: str


@dataclass
class History:
    """Where one finding of the target release came from."""

    finding: Finding
    key: str
    first_appeared: str | None  # None: present since the written-for release (pre-existing)
    last_clean: str | None  # the release before `first_appeared` (the highest release without it)
    deprecated_in: str | None = None
    deprecation: str | None = None  # the message
    window_from: str | None = None  # the first release accepting both the old and the new way
    window_to: str | None = None  # the last release where the old way still works
    migration: str | None = None  # one sentence: what to do, from when; or why there is no window
    events: list[Event] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "finding": self.finding.as_dict(),
            "first_appeared": self.first_appeared,
            "last_clean": self.last_clean,
            "deprecated_in": self.deprecated_in,
            "deprecation": self.deprecation,
            "migration_window": {"from": self.window_from, "to": self.window_to}
            if self.window_from
            else None,
            "migration": self.migration,
            "timeline": [{"version": e.version, "kind": e.kind, "text": e.text} for e in self.events],
        }


@dataclass(frozen=True)
class Bisection:
    low: str
    high: str
    skipped: tuple[str, ...]  # releases between them, not audited (same findings at both ends)


@dataclass
class PlanResult:
    downstream: InputInfo
    upstream: str
    from_version: str
    to_version: str
    rows: list[ReleaseRow]
    histories: list[History]
    bisections: list[Bisection]
    target: AuditResult
    notes: list[str] = field(default_factory=list)
    every: bool = False
    seconds: float = 0.0
    tool_version: str = __version__

    def row(self, version: str) -> ReleaseRow | None:
        return next((r for r in self.rows if r.version == version), None)

    @property
    def walk(self) -> list[ReleaseRow]:
        """The releases of the range that count (not yanked)."""
        return [r for r in self.rows if r.status != "yanked"]

    @property
    def safe(self) -> str | None:
        """The highest release without errors (audited, or inferred between two audited ones without)."""
        safe = [r.version for r in self.walk if r.safe]
        return safe[-1] if safe else None

    @property
    def target_reachable(self) -> bool:
        row = self.row(self.to_version)
        return bool(row and row.safe)

    @property
    def audited(self) -> list[str]:
        return [r.version for r in self.rows if r.status == "audited"]

    @property
    def not_audited(self) -> list[str]:
        return [r.version for r in self.rows if r.status in ("inferred", "looked-at")]

    def summary(self) -> str:
        """One sentence for every format: how far the downstream can go."""
        if self.target_reachable and self.to_version == self.from_version:
            return f"{self.to_version} is the version in use, the target: no errors"
        if self.target_reachable:
            return f"safe to upgrade to {self.to_version}: no errors up to the target"
        if self.safe is None:
            return f"no release from {self.from_version} to {self.to_version} is free of errors"
        target = self.row(self.to_version)
        errors = target.errors if target is not None else None
        if self.safe == self.from_version:  # no upgrade at all: the one without errors is the one in use
            return (
                f"no later release is free of errors: {self.safe} is the version in use; "
                f"{self.to_version} has {errors} error(s)"
            )
        return f"safe to upgrade to {self.safe}; {self.to_version} has {errors} error(s)"

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema_version": PLAN_SCHEMA_VERSION,
            "tool": {"name": "apidrift", "version": self.tool_version},
            "downstream": asdict(self.downstream),
            "upstream": self.upstream,
            "from": self.from_version,
            "to": self.to_version,
            "safe": self.safe,
            "target_reachable": self.target_reachable,
            "summary": self.summary(),
            "mode": "every release" if self.every else "bisect",
            "releases": [r.as_dict() for r in self.rows],
            "audited": self.audited,
            "not_audited": self.not_audited,
            "bisections": [
                {"low": b.low, "high": b.high, "skipped": list(b.skipped)} for b in self.bisections
            ],
            "findings": [h.as_dict() for h in self.histories],
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
        }


class PlanError(Exception):
    """A plan that cannot be made (bad range, no releases): one line for the user."""


Progress = Callable[[str], None]


def finding_key(finding: Finding, label: str) -> str:
    """A finding's identity across releases: rule, place and message, with the release's label taken out."""
    message = finding.message.replace(label, "").replace(label.split("==")[-1], "")
    where = finding.location.where
    return f"{finding.code} {where} {finding.symbol} {message}"


# ---- the walk


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
            from apidrift.auditor.engine import _index
            from apidrift.auditor.upstream.resolve import Resolver

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


# ---- releases and the range


def _releases(listing: ProjectListing, pre: bool) -> tuple[list[Version], dict[Version, str]]:
    """The releases with a usable file (pre-releases only with `pre`), and the yanked ones with why."""
    usable: list[Version] = []
    yanked: dict[Version, str] = {}
    for version, files in listing.by_version().items():
        if version.is_prerelease and not pre:
            continue
        if any(not f.yanked for f in files):
            usable.append(version)
        else:
            reason = next((f.yanked_reason for f in files if f.yanked_reason), None)
            yanked[version] = f"yanked on the index ({reason})" if reason else "yanked on the index"
    return sorted(usable), yanked


def _latest(versions: list[Version], pre: bool, listing: ProjectListing) -> Version:
    finals = [v for v in versions if pre or not v.is_prerelease]
    if not finals:
        raise PlanError(f"{listing.name} has no release on the index {listing.index_url} to plan for")
    return finals[-1]


def _as_spec(text: str, name: str) -> str:
    text = text.strip()
    if text.lower() == NONE:
        raise PlanError("--from none: a plan needs the release the downstream was written for")
    if text[:1] in "=<>!~":
        return f"{name}{text}"  # a bare specifier: `>=0.11,<0.12`
    try:
        Version(text)
    except InvalidVersion:
        return text
    return f"{name}=={text}"


def _pick(listing: ProjectListing, text: str, option: str) -> Version:
    """The release a version or `NAME<specifier>` names, chosen as `audit` would choose it."""
    from apidrift.auditor.sources.index_client import select_release
    from apidrift.auditor.sources.specs import parse_spec

    spec = parse_spec(_as_spec(text, listing.name), "upstream")
    if not isinstance(spec, IndexSpec) or normalize_name(spec.name) != normalize_name(listing.name):
        raise PlanError(f"{option} {text!r}: not a version of {listing.name}")
    release = select_release(listing, spec)
    return Version(release.version)


def _python_pick(text: str, option: str) -> Version:
    """`3.12`, `3.12.1` or `python==3.12` -> Version("3.12"): the standard library is per minor version."""
    bare = text.strip()
    if bare.lower().startswith(stdlib.DISTRIBUTION):
        bare = bare[len(stdlib.DISTRIBUTION) :].strip().removeprefix("==").strip()
    try:
        release = Version(bare).release
    except InvalidVersion:
        raise PlanError(f"{option} {text!r}: not a version of Python (3.X)") from None
    if release[0] != 3 or len(release) < 2:
        raise PlanError(f"{option} {text!r}: not a version of Python (3.X)")
    return Version(f"3.{release[1]}")


def _label(tree: SourceTree) -> str:
    return f"{tree.name}=={tree.version}" if tree.version else tree.name


# ---- each finding's history


def _history(finding: Finding, order: list[str], runner: _Runner, rows: dict[str, ReleaseRow]) -> History:
    target = order[-1]
    key = finding_key(finding, runner.label(target))
    index = len(order) - 1
    while index > 0 and key in rows[order[index - 1]].keys:
        index -= 1
    first = order[index] if index > 0 else None
    last_clean = order[index - 1] if index > 0 else None
    history = History(finding, key, first, last_clean)
    if first is None:
        history.events.append(
            Event(order[0], "appeared", f"already there in {order[0]}, the written-for release")
        )
    else:
        history.events.append(Event(order[0], "clean", f"fine in {order[0]}, the written-for release"))
    if finding.severity is Severity.ERROR and first is not None:
        question = _question(finding, target, runner)
        # Without a new way to offer (a name that is gone, nowhere else), only the deprecation is asked.
        _deprecation(history, question or _Question("name", finding.symbol, ()), order[: index + 1], runner)
        if question is not None:
            _window(history, question, order[:index], runner)
    if first is not None:
        history.events.append(
            Event(
                first, "appeared", f"first found in {first}: {_plain(finding.message, runner.label(target))}"
            )
        )
    if target != first:
        history.events.append(Event(target, "target", f"still there in {target}, the target"))
    history.events.sort(
        key=lambda e: (
            Version(e.version),
            ["clean", "deprecated", "window-opens", "appeared", "target"].index(e.kind),
        )
    )
    return history


def _plain(message: str, label: str) -> str:
    return message.replace(f" in {label}", "").replace(f" ({label})", "")


@dataclass(frozen=True)
class _Question:
    """What to ask of a release's API about one finding."""

    kind: str  # "add-argument", "drop-keyword", "rename-keyword", "move-import", "name" (no new way known)
    callee: str  # dotted path of the callee (or, for a move, the new home of the name)
    names: tuple[str, ...]  # the parameters concerned (for a move: the name)
    new: str | None = None  # a renamed keyword's new name


def _question(finding: Finding, target: str, runner: _Runner) -> _Question | None:
    data = finding.fix.data if finding.fix else None
    if (
        finding.code == RuleCode.MISSING_REQUIRED_ARGUMENT
        and isinstance(data, ManualStep)
        and data.parameters
    ):
        names = tuple(p.name.strip() for p in data.parameters if p.name.strip())
        return _Question("add-argument", data.callee or finding.symbol, names)
    if finding.code == RuleCode.UNEXPECTED_KEYWORD:
        if isinstance(data, RenameKeyword):
            return _Question("rename-keyword", finding.symbol, (data.old,), data.new)
        if isinstance(data, RemoveKeyword) and data.name:
            return _Question("drop-keyword", finding.symbol, (data.name,))
    if isinstance(data, MoveImport):
        return _Question("move-import", f"{data.new_module}.{data.name}", (data.name,))
    return None


def _deprecation(history: History, question: _Question, releases: list[str], runner: _Runner) -> None:
    """The first release (up to the break) where the finding's target or parameter is deprecated."""
    if not releases:
        return

    def deprecated(version: str) -> str | None:
        view = runner.view(version)
        return _deprecation_in(view, question) if view else None

    before = releases[:-1]
    found = _earliest(before, lambda v: deprecated(v) is not None)
    if found is None and deprecated(releases[-1]):
        found = releases[-1]  # deprecated in the very release that breaks (a member left behind)
    if found is None:
        return
    history.deprecated_in, history.deprecation = found, deprecated(found)
    history.events.append(Event(found, "deprecated", f"deprecated in {found}: {history.deprecation}"))


def _window(history: History, question: _Question, before: list[str], runner: _Runner) -> None:
    """The releases before the break where the old way still works and the new one already does."""
    names = ", ".join(f"`{n}`" for n in question.names)
    if not before:
        return

    def both(version: str) -> bool:
        view = runner.view(version)
        return bool(view) and _new_way_works(view[0], question)

    opens = _earliest(before, both)
    if opens is None:
        history.migration = f"no release before {history.first_appeared} accepts the new way: a clean break at {history.first_appeared}"
        return
    history.window_from, history.window_to = opens, before[-1]
    span = opens if opens == before[-1] else f"{opens} on (to {before[-1]})"
    if question.kind == "add-argument":
        what = f"pass {names}"
    elif question.kind == "drop-keyword":
        what = f"stop passing {names} (optional there)"
    elif question.kind == "rename-keyword":
        what = f"pass `{question.new}=` instead of {names}"
    else:
        what = f"import {names} from `{question.callee.rpartition('.')[0]}`"
    history.migration = f"{what} from {span}, where both work"
    history.events.append(
        Event(opens, "window-opens", f"{what}: accepted from {opens}, while the old way still works")
    )


def _earliest(versions: list[str], test: Callable[[str], bool]) -> str | None:
    """The first version passing `test`, by bisection (what is added stays): checks the last one first."""
    if not versions or not test(versions[-1]):
        return None
    low, high = 0, len(versions) - 1  # test(versions[high]) is true
    while low < high:
        middle = (low + high) // 2
        if test(versions[middle]):
            high = middle
        else:
            low = middle + 1
    return versions[high]


def _signature(resolver: Any, path: str) -> Any:
    """The signature a call of `path` binds against in this release, or None."""
    from apidrift.auditor.core.reasons import Unknown
    from apidrift.auditor.upstream.callables import call_target

    if path.endswith(".__init__"):
        path = path[: -len(".__init__")]
    value = resolver.lookup(path)
    try:
        target = call_target(value, resolver)
    except Exception:  # a shape the checker never meets at a call site: no answer, not a crash
        return None
    return None if isinstance(target, Unknown) else target.signature


def _new_way_works(resolver: Any, question: _Question) -> bool:
    from apidrift.auditor.core.reasons import Unknown
    from apidrift.auditor.core.signature import ParamKind
    from apidrift.auditor.upstream.resolve import Missing

    if question.kind == "move-import":
        value = resolver.lookup(question.callee)
        return not isinstance(value, (Missing, Unknown))
    signature = _signature(resolver, question.callee)
    if signature is None:
        return False
    keywordable = (ParamKind.POSITIONAL_OR_KEYWORD, ParamKind.KEYWORD_ONLY)
    if question.kind == "add-argument":
        return all((p := signature.get(n)) is not None and p.kind in keywordable for n in question.names)
    if question.kind == "rename-keyword":
        param = signature.get(question.new or "")
        return param is not None and param.kind in keywordable
    param = signature.get(question.names[0])  # drop-keyword: leaving it out must already bind
    return param is None or not param.required


def _deprecation_in(view: Any, question: _Question) -> str | None:
    """A deprecation of the finding's target in this release: the callee's own, a member named like the
    keyword, or a deprecation warning in the callee's body that names the parameter."""
    from apidrift.auditor.upstream.resolve import ClassValue, FunctionValue

    resolver, _tree = view
    path = question.callee[: -len(".__init__")] if question.callee.endswith(".__init__") else question.callee
    value = resolver.lookup(path)
    info = getattr(value, "info", None)
    own = getattr(info, "deprecated", None)
    if own:
        return own
    if isinstance(value, ClassValue):
        for name in question.names:
            member = value.info.members.get(name) if isinstance(value.info.members, dict) else None
            deprecated = getattr(member, "deprecated", None)
            if deprecated:
                return deprecated
        init = resolver.attribute(value, "__init__")
        function = init if isinstance(init, FunctionValue) else None
        if function is not None and function.info.deprecated:
            return function.info.deprecated  # constructing it warns: the class is deprecated
    else:
        function = value if isinstance(value, FunctionValue) else None
    if function is None or function.info.lineno is None or question.kind == "move-import":
        return None
    module = _defining_module(resolver, function.path)
    if module is None:
        return None
    return _parameter_warning(module, function.info.lineno, question.names)


def _defining_module(resolver: Any, path: str) -> Path | None:
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        file = resolver.index.module_file(".".join(parts[:cut]))
        if file is not None and file.is_file():
            return file
    return None


def _parameter_warning(file: Path, lineno: int, names: tuple[str, ...]) -> str | None:
    """A `warnings.warn(..., DeprecationWarning)` (or a message saying "deprecat") in the function
    defined at `lineno` whose message names one of `names`. The file is parsed, never run."""
    from apidrift.auditor.pysource import SourceDecodeError, decode_source

    try:
        data = file.read_bytes()[: MAX_SOURCE_BYTES + 1]
        if len(data) > MAX_SOURCE_BYTES:
            return None
        tree = ast.parse(decode_source(data))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError, SourceDecodeError):
        return None
    function = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and lineno in (node.lineno, *(d.lineno for d in node.decorator_list))
        ),
        None,
    )
    if function is None:
        return None
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        callee = (
            node.func.attr
            if isinstance(node.func, ast.Attribute)
            else node.func.id
            if isinstance(node.func, ast.Name)
            else ""
        )
        if callee not in ("warn", "warn_once", "deprecated", "warning_once", "warning"):
            continue
        message = _text(node.args[0])
        category = (
            node.args[1]
            if len(node.args) > 1
            else next((k.value for k in node.keywords if k.arg == "category"), None)
        )
        category_name = (
            (category.attr if isinstance(category, ast.Attribute) else getattr(category, "id", ""))
            if category is not None
            else ""
        )
        deprecating = category_name in _DEPRECATION_CATEGORIES or "deprecat" in message.lower()
        if deprecating and any(_names_word(message, name) for name in names):
            return message
    return None


def _text(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{…}" for v in node.values)  # type: ignore[misc]  # a Constant in an f-string holds text
    try:
        return ast.unparse(node)
    except Exception:
        return ""


def _names_word(message: str, name: str) -> bool:
    import re

    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None


# ---- `audit --history`


def audit_history(
    request: AuditRequest, result: AuditResult, progress: Progress | None = None
) -> AuditResult:
    """`apidrift audit --history`: each finding of `result` gets its `since` (the release where it first
    appeared, where its target was first deprecated, the migration window), computed by `plan` over the
    upstream's releases from the old version to the audited one; `result` (already the target's audit)
    is reused. Without an old version, or for an upstream not from the index, a note says why not."""
    from dataclasses import replace

    from apidrift.auditor.core.results import Since

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


__all__ = [
    "Bisection",
    "Event",
    "History",
    "PlanError",
    "PlanRequest",
    "PlanResult",
    "ReleaseRow",
    "audit_history",
    "finding_key",
    "plan",
]
