"""What `plan` is asked and what it answers: the request, the result, one row per release, the
events and history of each finding, the bisections made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from apidrift.auditor.core.results import (
    AuditResult,
    Finding,
    InputInfo,
)
from apidrift.auditor.core.version import __version__

PLAN_SCHEMA_VERSION = 1


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
