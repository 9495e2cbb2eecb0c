"""`apidrift upgrade`: every dependency a local project declares and imports, audited from the version it
is on to its latest release, in one report.

    declared   the project's requirement sources (auditor/sources/declared.py): pyproject.toml,
               requirements files, setup.cfg, setup.py literals, environment.yml's pip section
    on         the version each is on: a lock or pin file's (auditor/sources/lockfiles.py, lock files
               first, as `bump` reads them), else the one installed in the project's environment
               (`--python`, or the active virtualenv), else the lowest release its specifier allows
    used?      the project's imports (its .py files and notebooks) against each dependency's import names
    walk       `apidrift plan` from that version to the latest release, per dependency, several at once
               (threads, --jobs): the target's findings and the highest release without errors
    result     per dependency: safe (no error at the latest release), breaks (the highest safe release
               and the sites), not checkable (why), not used; and one `AuditResult` for every format

Nothing is installed, imported or executed.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from apidrift.auditor.bump import third_party_imports
from apidrift.auditor.cache import Cache
from apidrift.auditor.core.results import (
    AuditResult,
    Coverage,
    FileOutcome,
    FileStatus,
    Finding,
    InputInfo,
    Severity,
)
from apidrift.auditor.core.version import __version__
from apidrift.auditor.core.wording import plural
from apidrift.auditor.engine import AuditRequest
from apidrift.auditor.plan import PlanError, PlanRequest, plan
from apidrift.auditor.sources.declared import Declarations, declared_requirements
from apidrift.auditor.sources.import_names import guessed_names, normal_name, provides
from apidrift.auditor.sources.index_client import IndexClient
from apidrift.auditor.sources.locate import locate
from apidrift.auditor.sources.lockfiles import (
    KINDS,
    LockError,
    Pin,
    choose,
    folder_reader,
    kind_by_name,
    listing_of,
    read_side,
)
from apidrift.auditor.sources.specs import SourceError, SpecError
from apidrift.auditor.sources.written_for import downstream_environment

log = logging.getLogger(__name__)

DEFAULT_JOBS = 2  # dependencies walked at once (threads: a walk mostly waits on downloads and files); --jobs

SAFE = "safe"
BREAKS = "breaks"
NOT_CHECKABLE = "not checkable"
NOT_USED = "not used"


@dataclass(frozen=True)
class UpgradeRequest:
    project: Path
    template: AuditRequest | None = None  # options for each audit (selection, severities)
    cache_dir: Path | None = None
    offline: bool = False
    index_url: str | None = None
    python: Path | None = None  # the project's own environment, for installed versions
    jobs: int = DEFAULT_JOBS
    only: tuple[str, ...] = ()  # these dependencies only (names)
    requirements: tuple[
        Path, ...
    ] = ()  # requirement files of other names (`req.txt`), read as requirements*.txt


@dataclass
class Dependency:
    name: str  # normalized
    display: str
    declared: tuple[str, ...]  # "numpy>=1.20 (requirements.txt)", one per declaration
    start: str | None = None  # the version it is on
    start_from: str = ""  # where that version comes from
    latest: str | None = None
    status: str = ""
    reason: str | None = None
    safe: str | None = None  # the highest release without errors (plan's walk)
    findings: list[Finding] = field(default_factory=list)  # at the latest release
    coverage: Coverage | None = None
    audited: tuple[str, ...] = ()  # releases the walk audited
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    failed: bool = False  # not checkable because a release could not be had
    allowed: str | None = (
        None  # with no version pinned or installed: the specifiers, whose lowest release it starts from
    )
    files: list[FileOutcome] = field(default_factory=list)  # the target audit's file outcomes

    @property
    def errors(self) -> list[Finding]:
        """The errors of this dependency's upgrade (a file that cannot be parsed is the project's own)."""
        return [f for f in self.findings if f.severity is Severity.ERROR and not _input_finding(f)]

    def headline(self) -> str:
        span = f"{self.display} {self.start or '?'}" + (f" -> {self.latest}" if self.latest else "")
        if self.status == SAFE:
            checked = self.coverage.checked if self.coverage else 0
            same = self.start == self.latest
            return f"{span}: safe to upgrade ({'already the latest; ' if same else ''}{plural(checked, 'use site')} checked)"
        if self.status == BREAKS:
            safe = (
                f"highest safe release {self.safe}" if self.safe else "no release after it is free of errors"
            )
            return f"{span}: breaks ({plural(len(self.errors), 'error')}); {safe}"
        return f"{span}: {self.status}" + (f" ({self.reason})" if self.reason else "")

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.display,
            "declared": list(self.declared),
            "from": self.start,
            "from_source": self.start_from,
            "latest": self.latest,
            "status": self.status,
            "reason": self.reason,
            "highest_safe": self.safe,
            "errors": len(self.errors),
            "findings": len(self.findings),
            "audited_releases": list(self.audited),
            "coverage": asdict(self.coverage) if self.coverage else None,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class UpgradeResult:
    project: InputInfo
    dependencies: list[Dependency]
    audit: AuditResult  # every dependency's findings at its latest release, for the audit renderers
    files_read: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def with_status(self, status: str) -> list[Dependency]:
        return [d for d in self.dependencies if d.status == status]

    def as_dict(self) -> dict[str, Any]:
        return {
            "files_read": list(self.files_read),
            "dependencies": [d.as_dict() for d in self.dependencies],
            "safe": [d.display for d in self.with_status(SAFE)],
            "breaks": [d.display for d in self.with_status(BREAKS)],
            "not_checkable": [d.display for d in self.with_status(NOT_CHECKABLE)],
            "not_used": [d.display for d in self.with_status(NOT_USED)],
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
        }


class UpgradeError(Exception):
    """A project that cannot be read (no declared dependency, a file that does not parse): one line."""


def run_upgrade(request: UpgradeRequest) -> UpgradeResult:
    started = time.perf_counter()
    project_dir = request.project
    if not project_dir.is_dir():
        raise UpgradeError(f"{project_dir}: not a folder")
    try:
        named = [_relative(path, project_dir) for path in request.requirements]
        declarations = declared_requirements(project_dir, tuple(named))
        side = read_side("work tree", [*listing_of(project_dir), *named], folder_reader(project_dir))
    except LockError as error:
        raise UpgradeError(str(error)) from None
    notes = list(declarations.notes) + side.notes()
    pins = side.versions()
    by_name = declarations.by_name()
    if not by_name:  # nothing declared: what the lock and pin files pin
        by_name = {name: [] for name in pins}
    if not by_name:
        raise UpgradeError(
            f"{project_dir}: no declared dependency (pyproject.toml, requirements*.txt, setup.cfg, setup.py, environment.yml)"
        )
    wanted = {n.lower().replace("_", "-").replace(".", "-") for n in request.only}
    project = _project_info(project_dir)
    template = request.template or AuditRequest(str(project_dir), "")
    imports = third_party_imports(project_dir, frozenset(project.import_names), template.exclude)
    environment = downstream_environment(request.python)
    dependencies: list[Dependency] = []
    for name, declared in sorted(by_name.items()):
        if wanted and name not in wanted:
            continue
        display = declared[0].display if declared else (pins[name][0].display or name)
        dependency = Dependency(
            name,
            display,
            tuple(f"{d.display}{d.specifier} ({d.path})" for d in declared),
        )
        dependencies.append(dependency)
        _start(dependency, pins.get(name, []), declared, environment)
        if not any(provides(guessed_names(name), m) for m in imports):
            dependency.status, dependency.reason = NOT_USED, "the project imports none of its modules"
    jobs = [d for d in dependencies if not d.status and (d.start is not None or d.allowed)]
    for dependency in dependencies:
        if not dependency.status and dependency.start is None and not dependency.allowed:
            dependency.status = NOT_CHECKABLE
    done = _walk_all([(d, request, template) for d in jobs], request.jobs)
    for dependency, checked in zip(jobs, done):
        dependencies[dependencies.index(dependency)] = checked
    combined = combine(project, dependencies)
    combined.notes[:0] = notes
    result = UpgradeResult(project, dependencies, combined, list(declarations.files), notes)
    result.seconds = time.perf_counter() - started
    return result


def _relative(path: Path, project: Path) -> str:
    try:
        return path.resolve().relative_to(project.resolve()).as_posix()
    except ValueError:
        raise UpgradeError(f"--requirements {path}: not a file inside {project}") from None


def _project_info(project: Path) -> InputInfo:
    try:
        tree = locate(str(project), role="downstream", cache=Cache(None), offline=True)
        return InputInfo(
            tree.name, tree.version, tree.origin, tree.location, import_names=tuple(tree.import_names)
        )
    except (SpecError, SourceError):
        return InputInfo(project.resolve().name, None, "directory", str(project))


def _start(dependency: Dependency, pins: list[Pin], declared: list[Any], environment: Any) -> None:
    """The version the project is on: locked or pinned (lock files first), installed, else the lowest
    its specifiers allow (chosen once the index's releases are known, in the walk)."""
    if pins:
        rank = {kind: index for index, kind in enumerate(KINDS)}
        best = min(rank.get(_kind_of(p), len(KINDS)) for p in pins)
        chosen = [p for p in pins if rank.get(_kind_of(p), len(KINDS)) == best]
        dependency.start, note = choose(chosen)
        dependency.start_from = ", ".join(dict.fromkeys(p.path for p in chosen))
        if note:
            dependency.notes.append(note)
        return
    installed = environment.version_of(dependency.name) if environment is not None else None
    if installed:
        dependency.start, dependency.start_from = installed, f"installed ({environment.label})"
        return
    specifiers = [d.specifier for d in declared if d.specifier]
    if not specifiers:
        dependency.reason = (
            "declared without a version, and neither locked, pinned nor installed: no version to start from"
        )
        return
    dependency.allowed = ",".join(dict.fromkeys(specifiers))
    dependency.start_from = "lowest allowed by " + ", ".join(dict.fromkeys(specifiers))


def _kind_of(pin: Pin) -> str:
    return kind_by_name(pin.path) or "requirements"


# ---- the walks, several at once


def _walk_all(jobs: list[tuple[Dependency, UpgradeRequest, AuditRequest]], workers: int) -> list[Dependency]:
    """The walks, `workers` at once in threads: a walk mostly waits for downloads and files (measured on
    a real project: about 1 s of CPU in a 3 s warm run). While threads run, the scan parses in its own
    thread, never in a forked pool (walk._parse_all)."""
    workers = max(1, min(workers, len(jobs)))
    if workers < 2:
        return [_walk(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="apidrift-upgrade") as pool:
        return list(pool.map(_walk, jobs))


def _walk(job: tuple[Dependency, UpgradeRequest, AuditRequest]) -> Dependency:
    """One dependency's walk from the version it is on to its latest release (`apidrift plan`)."""
    dependency, request, template = job
    dependency = replace(dependency, notes=list(dependency.notes))
    started = time.perf_counter()
    try:
        if dependency.start is None and dependency.allowed:
            with IndexClient(Cache(request.cache_dir), request.index_url, offline=request.offline) as client:
                listing = client.project(dependency.name)
            dependency.start = _lowest(listing, dependency.allowed)
            if dependency.start is None:
                dependency.status = NOT_CHECKABLE
                dependency.reason = f"no release on the index matches {dependency.allowed}"
                return dependency
        result = plan(
            PlanRequest(
                downstream=str(request.project),
                upstream=dependency.display,
                old=dependency.start,
                cache_dir=request.cache_dir,
                offline=request.offline,
                index_url=request.index_url,
                ignore_rules=template.ignore_rules,
                severities=template.severities,
                exclude=template.exclude,
                ignore_symbols=template.ignore_symbols,
            )
        )
    except (SpecError, SourceError, PlanError) as error:
        dependency.status, dependency.reason = NOT_CHECKABLE, str(error)
        dependency.failed = not isinstance(error, PlanError)
        return dependency
    finally:
        dependency.seconds = time.perf_counter() - started
    target = result.target
    dependency.latest = result.to_version
    dependency.start = result.from_version
    dependency.findings = list(target.findings)
    dependency.coverage = target.coverage[0] if target.coverage else None
    dependency.audited = tuple(result.audited)
    dependency.files = list(target.files)
    # The releases the walk skipped are in `audited` (and the JSON); the notes keep what the reader needs.
    skipped = ("old version", "no old version", "bisected:", "yanked, not audited")
    dependency.notes += [n for n in result.notes if not n.startswith(skipped)]
    errors = [f for f in target.findings if f.severity is Severity.ERROR and not _input_finding(f)]
    if errors:
        dependency.status, dependency.safe = BREAKS, result.safe
    elif target.unchecked is not None:
        # The project's imports name it: where no use was found but a file could not be parsed, its uses
        # may be there (a Python 2 file importing it), so it is not known to be unused.
        used = dependency.coverage is not None and dependency.coverage.found > 0
        unread = [o.path for o in target.files if o.status is FileStatus.FAILED]
        dependency.status = NOT_CHECKABLE if used or unread else NOT_USED
        dependency.reason = target.unchecked.removeprefix("nothing checked: ")
        if unread and not used:
            dependency.reason = (
                f"imported, but no use of it was read: {', '.join(unread[:3])} cannot be parsed"
            )
    else:
        dependency.status, dependency.safe = SAFE, result.to_version
    return dependency


def _input_finding(finding: Finding) -> bool:
    """A finding about the project's own files (AD9xx: a file that cannot be parsed), the same whatever
    the dependency: reported once, never a break of one."""
    return finding.code.startswith("AD9")


def _lowest(listing: Any, specifiers: str) -> str | None:
    try:
        allowed = SpecifierSet(specifiers)
    except InvalidSpecifier:
        return None
    versions = []
    for version in listing.by_version():
        try:
            if not version.is_prerelease and Version(str(version)) in allowed:
                versions.append(version)
        except InvalidVersion:
            continue
    return str(min(versions)) if versions else None


def combine(project: InputInfo, dependencies: list[Dependency]) -> AuditResult:
    """One `AuditResult` for the audit renderers: every walked dependency's findings at its latest release."""
    walked = [d for d in dependencies if d.status in (SAFE, BREAKS)]
    upstream = InputInfo(
        ", ".join(f"{d.display}=={d.latest}" for d in walked) or "no dependency checked",
        None,
        "upgrade",
        ", ".join(f"{d.display} {d.start} -> {d.latest}" for d in walked),
    )
    old = (
        InputInfo(", ".join(f"{d.display}=={d.start}" for d in walked), None, "upgrade", "")
        if walked
        else None
    )
    combined = AuditResult(project, upstream, old, tool_version=__version__)
    files: dict[str, FileOutcome] = {}
    seen_input: set[tuple[str, str, int]] = set()
    for dependency in dependencies:
        for finding in dependency.findings:
            if _input_finding(finding):
                key = (finding.code, finding.location.path, finding.location.line)
                if key in seen_input:
                    continue
                seen_input.add(key)
            combined.findings.append(finding)
        if dependency.coverage is not None:
            combined.coverage.append(dependency.coverage)
        combined.notes += [f"{dependency.display}: {note}" for note in dependency.notes]
        for outcome in dependency.files:
            known = files.get(outcome.path)
            files[outcome.path] = (
                outcome if known is None else replace(known, use_sites=known.use_sites + outcome.use_sites)
            )
    combined.files = sorted(files.values(), key=lambda o: o.path)
    if not walked:
        combined.unchecked = "nothing checked: no dependency of the project could be checked"
    order = {d.name: i for i, d in enumerate(dependencies)}
    combined.findings.sort(key=lambda f: (order.get(normal_name(f.upstream), 0), *f.location.order, f.code))
    return combined


__all__ = ["Declarations", "Dependency", "UpgradeError", "UpgradeRequest", "UpgradeResult", "run_upgrade"]
