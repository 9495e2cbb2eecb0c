"""What `apidrift fix` decides and changes: the status of each finding's fix (`Outcome`), each file
before and after (`FileChange`, with its diff) and the run's result (`FixResult`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from apidrift.auditor.core.results import (
    AuditResult,
    Finding,
    FixKind,
    Severity,
)

EDIT_KINDS = (
    FixKind.RENAME_KEYWORD,
    FixKind.REMOVE_KEYWORD,
    FixKind.MOVE_IMPORT,
    FixKind.MOVE_IMPORTS,
    FixKind.RENAME_ATTRIBUTE,
    FixKind.REPLACE_NAME,
    FixKind.POSITIONAL_TO_KEYWORD,
)


# What happened to each finding's fix.
APPLIED = "applied"  # edited (in the diff, or written)


RESOLVED = "resolved"  # no edit of its own: another fix repairs it (a rename passes the missing argument)


NEEDS_UNSAFE = "needs-unsafe"  # an unsafe fix, not applied without --unsafe-fixes


MANUAL = "manual"  # no edit possible: a step for the developer


NOT_APPLIED = "not-applied"  # a fix that could not be applied here (the reason says why)


GUARDED = "guarded"  # the use is guarded (try/except ImportError...): the code expects it may fail


NO_FIX = "no-fix"  # the finding carries no fix


class FixError(Exception):
    """A fix run that cannot proceed (e.g. writing outside a local tree): one line, exit status 2."""


@dataclass(frozen=True)
class Outcome:
    finding: Finding
    status: str  # one of APPLIED, NEEDS_UNSAFE, MANUAL, NOT_APPLIED, GUARDED, NO_FIX
    reason: str | None = None  # for NOT_APPLIED: why; for APPLIED unsafe fixes: what changes
    supplied: tuple[str, ...] = ()  # for MANUAL and RESOLVED: the parameters a rename in the same call passes


@dataclass
class FileChange:
    """One downstream file before and after its fixes."""

    path: str  # POSIX, relative to the root (as in the findings)
    before: str
    after: str
    encoding: str

    def diff(self) -> str:
        """A unified diff with `a/` and `b/` prefixes, as `git apply` and `patch -p1` take it."""
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            f"a/{self.path}",
            f"b/{self.path}",
        )
        out = []
        for line in lines:
            if not line.endswith(("\n", "\r")):
                line += "\n\\ No newline at end of file\n"
            out.append(line)
        return "".join(out)


@dataclass
class FixResult:
    audit: AuditResult
    root: Path  # the folder the finding paths are relative to
    local: bool  # a local tree the user named: the only kind `write_changes` writes into
    unsafe: bool  # --unsafe-fixes was given
    changes: list[FileChange] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    not_local_reason: str | None = None  # why it is not a local tree, when it is not
    notes: list[str] = field(default_factory=list)  # e.g. a distribution the fixed code now imports

    def with_status(self, *statuses: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.status in statuses]

    @property
    def remaining_errors(self) -> list[Outcome]:
        """Error findings this run does not fix: what still fails the audit afterwards."""
        return [
            o
            for o in self.outcomes
            if o.status not in (APPLIED, RESOLVED) and o.finding.severity is Severity.ERROR
        ]
