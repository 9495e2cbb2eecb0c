"""The audit's output value: findings, coverage, inputs and per-file outcomes, consumed by every renderer."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.signature import ParamKind

SCHEMA_VERSION = 1  # bump on any incompatible change to `AuditResult.as_dict()`


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]


@dataclass(frozen=True)
class Location:
    path: str  # POSIX path relative to the downstream's project root (see `InputInfo.root`)
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int
    source_line: str  # the text of `line`, without its newline
    # In a notebook: the code cell (numbered from 1 over all the notebook's cells, as Jupyter shows
    # them), whose lines `line` and `end_line` count; and the span's region in the notebook's JSON
    # file itself (line, column, end line, end column), which SARIF and annotations point at.
    cell: int | None = None
    json_region: tuple[int, int, int, int] | None = None

    @property
    def where(self) -> str:
        """`path:line:column`, or `path:cell N:line:column` in a notebook (as ruff writes it)."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.line}:{self.column}"

    @property
    def order(self) -> tuple[str, int, int, int]:
        """How locations sort: by file, then cell, line and column."""
        return (self.path, self.cell or 0, self.line, self.column)


class FixKind(str, Enum):
    """What a `Fix` does; each kind carries its own payload (`FIX_PAYLOADS`)."""

    RENAME_KEYWORD = "rename-keyword"
    REMOVE_KEYWORD = "remove-keyword"
    MOVE_IMPORT = "move-import"
    MOVE_IMPORTS = "move-imports"
    RENAME_ATTRIBUTE = "rename-attribute"
    REPLACE_NAME = "replace-name"
    POSITIONAL_TO_KEYWORD = "positional-to-keyword"
    MANUAL = "manual"


class Applicability(str, Enum):
    """Whether `apidrift fix` may apply a fix, as ruff grades its fixes."""

    SAFE = "safe"  # keeps behaviour
    UNSAFE = "unsafe"  # changes it: only with --unsafe-fixes
    MANUAL = "manual"  # no edit: a step for the developer


def _position(call: tuple[int, int]) -> str:
    return f"{call[0]}:{call[1]}"


@dataclass(frozen=True)
class RenameKeyword:
    """`f(old=x)` becomes `f(new=x)`."""

    old: str
    new: str
    call: tuple[int, int] | None = (
        None  # (line, column) of the call: a missing argument there may be this keyword
    )
    kind: ParamKind | None = None  # of the new parameter: a positional-only one cannot take the keyword
    # (line, column) where the keyword is written: `fix` edits it there (the finding is at the call)
    at: tuple[int, int] | None = None

    def as_data(self) -> dict[str, str]:
        data = {"old": self.old, "new": self.new}
        if self.call is not None:
            data["call"] = _position(self.call)
        if self.kind is not None:
            data["kind"] = self.kind.value
        return data


@dataclass(frozen=True)
class RemoveKeyword:
    """`f(a, name=x)` becomes `f(a)`."""

    name: str
    call: tuple[int, int] | None = None  # (line, column) of the call
    # (line, column) where the keyword is written: `fix` edits it there (the finding is at the call)
    at: tuple[int, int] | None = None

    def as_data(self) -> dict[str, str]:
        data = {"name": self.name}
        if self.call is not None:
            data["call"] = _position(self.call)
        return data


@dataclass(frozen=True)
class MoveImport:
    """`from module import name` becomes `from new_module import name`."""

    name: str
    new_module: str
    module: str | None = None  # where the import takes it from today (checked before editing, when known)

    def as_data(self) -> dict[str, str]:
        data = {"module": self.module} if self.module is not None else {}
        return {**data, "name": self.name, "new_module": self.new_module}


@dataclass(frozen=True)
class MoveImports:
    """`from module import A, B as C`, where `module` is gone, becomes `from new import A, B as C`
    (or one statement per new module, where the names now live in different ones): every name of the
    statement moves, each as its `MoveImport` says."""

    module: str  # the module the statement imports from today (checked before editing)
    moves: tuple[MoveImport, ...]

    def as_data(self) -> dict[str, str]:
        return {
            "module": self.module,
            "names": ",".join(move.name for move in self.moves),
            "new_modules": ",".join(move.new_module for move in self.moves),
        }


@dataclass(frozen=True)
class RenameAttribute:
    """`obj.old` becomes `obj.new`: the old name was an alias of the new one (the same object)."""

    old: str
    new: str

    def as_data(self) -> dict[str, str]:
        return {"old": self.old, "new": self.new}


@dataclass(frozen=True)
class ReplaceName:
    """A reference to a name the upstream replaced, rewritten to the replacement, where the old name
    was looked up: `np.float_` becomes `np.float64` (the attribute, in place); `from jinja2 import
    contextfunction` becomes `from jinja2 import pass_context as contextfunction` (the imported name;
    the local name stays, so every use of it in the file follows)."""

    old: str  # the name as written (attribute or imported name)
    new: str  # the replacement's name
    module: str | None = None  # for an import: the module it imports from (checked before editing)

    def as_data(self) -> dict[str, str]:
        data = {"old": self.old, "new": self.new}
        if self.module is not None:
            data["module"] = self.module
        return data


@dataclass(frozen=True)
class PositionalToKeyword:
    """`f(a, b)` becomes `f(a, b=b)`: the positional arguments at these places (0-based, among the
    plain positional arguments of the call at `call`) are passed by keyword, each to the parameter
    the old version bound it to."""

    call: tuple[int, int]  # (line, column) of the call
    arguments: tuple[tuple[int, str], ...]  # (position, parameter name)
    # positions whose argument is dropped, each with the parameter the old version bound it to and the
    # new version no longer has (an unsafe fix: the callee no longer receives that value)
    dropped: tuple[tuple[int, str], ...] = ()

    def as_data(self) -> dict[str, str]:
        data = {
            "call": _position(self.call),
            "arguments": ",".join(f"{index}:{name}" for index, name in self.arguments),
        }
        if self.dropped:
            data["dropped"] = ",".join(f"{index}:{name}" for index, name in self.dropped)
        return data


ParameterHistory = Literal["new", "had-default", "required"]  # what a parameter was in the old version


@dataclass(frozen=True)
class ManualParameter:
    """One parameter a manual step asks the developer to pass."""

    name: str
    annotation: str | None = None
    position: int | None = None  # 1-based, in the signature as the call sees it
    of: int | None = None  # how many parameters that signature has
    kind: ParamKind | None = None
    after: str | None = None  # the parameter before it
    before: ParameterHistory | None = None  # None: no old version

    def as_data(self) -> dict[str, object]:
        return {
            "name": self.name,
            "annotation": self.annotation,
            "position": self.position,
            "of": self.of,
            "kind": self.kind.value if self.kind is not None else None,
            "after": self.after,
            "before": self.before,
        }


@dataclass(frozen=True)
class ManualStep:
    """No edit: pass these parameters to `callee` (the values are the developer's to choose)."""

    callee: str
    parameters: tuple[ManualParameter, ...] = ()

    def as_data(self) -> dict[str, str]:
        """Flat string fields, and the same facts per parameter as JSON in `details` (annotations may
        hold commas)."""
        return {
            "parameters": ",".join(p.name for p in self.parameters),
            "annotations": ",".join(p.annotation or "" for p in self.parameters),
            "after": ",".join(p.after or "" for p in self.parameters),
            "callee": self.callee,
            "details": json.dumps([p.as_data() for p in self.parameters]),
        }


FixData = (
    RenameKeyword
    | RemoveKeyword
    | MoveImport
    | MoveImports
    | RenameAttribute
    | ReplaceName
    | PositionalToKeyword
    | ManualStep
)
FIX_PAYLOADS: dict[FixKind, type[FixData]] = {
    FixKind.RENAME_KEYWORD: RenameKeyword,
    FixKind.REMOVE_KEYWORD: RemoveKeyword,
    FixKind.MOVE_IMPORT: MoveImport,
    FixKind.MOVE_IMPORTS: MoveImports,
    FixKind.RENAME_ATTRIBUTE: RenameAttribute,
    FixKind.REPLACE_NAME: ReplaceName,
    FixKind.POSITIONAL_TO_KEYWORD: PositionalToKeyword,
    FixKind.MANUAL: ManualStep,
}


@dataclass(frozen=True)
class Fix:
    """What would repair a finding, as data for `apidrift fix` (and for a reader).

    A `safe` fix keeps behaviour, and only the upstream's own code can prove that: `evidence` says
    which fact of the upstream it rests on (the old version accepted both spellings, the upstream's
    deprecation message names the replacement, the new location binds the same definition). A
    guess (a parameter added where another was removed) is never a fix: it stays a hint."""

    kind: FixKind
    applicability: Applicability
    description: str
    data: FixData  # the kind's payload, e.g. RenameKeyword("path", "file_path")
    evidence: str | None = None  # the upstream fact a safe fix rests on, in words

    def __post_init__(self) -> None:
        if not isinstance(self.data, FIX_PAYLOADS[self.kind]):
            raise TypeError(f"a {self.kind.value} fix carries a {FIX_PAYLOADS[self.kind].__name__}")
        if self.applicability is Applicability.SAFE and not self.evidence:
            raise ValueError("a safe fix needs the upstream's evidence that it keeps behaviour")

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "applicability": self.applicability.value,
            "description": self.description,
            "data": self.data.as_data(),  # string values (docs/json-schema.md)
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class Since:
    """A finding's history across the upstream's releases, from the written-for one to the audited one
    (`audit --history`; computed as `apidrift plan` computes it)."""

    upstream: str  # distribution name
    written_for: str  # the first release of the walk (the old version)
    first_appeared: (
        str | None
    )  # the first release of the unbroken run ending at the target; None: already in `written_for`
    last_clean: str | None  # the release before `first_appeared`
    deprecated_in: str | None = None  # the first release where the finding's target was deprecated
    deprecation: str | None = None  # that deprecation's message (the upstream's text)
    window_from: str | None = None  # the first release accepting both the old and the new way
    window_to: str | None = None  # the last release where the old way still works
    migration: str | None = None  # one sentence: what to do, from when; or why there is no window

    def as_dict(self) -> dict[str, Any]:
        return {
            "upstream": self.upstream,
            "written_for": self.written_for,
            "first_appeared": self.first_appeared,
            "last_clean": self.last_clean,
            "deprecated_in": self.deprecated_in,
            "deprecation": self.deprecation,
            "migration_window": {"from": self.window_from, "to": self.window_to}
            if self.window_from
            else None,
            "migration": self.migration,
        }

    def sentence(self, limit: int = 100) -> str:
        """One line for the text, Markdown and HTML reports: `since vllm 0.11.1 (fine in 0.11.0); deprecated in ...`."""
        if self.first_appeared is None:
            parts = [f"already in {self.upstream} {self.written_for}, the written-for release"]
        else:
            parts = [f"since {self.upstream} {self.first_appeared} (fine in {self.last_clean})"]
        if self.deprecated_in:
            message = " ".join((self.deprecation or "").split())
            if len(message) > limit:
                message = message[: limit - 1].rstrip() + "…"
            parts.append(f"deprecated in {self.deprecated_in}" + (f": {message}" if message else ""))
        if self.migration:
            parts.append(self.migration)
        return "; ".join(parts)


class Classification(str, Enum):
    """A finding against the old version of the upstream."""

    DRIFT = "drift"  # fine on the old version
    PRE_EXISTING = "pre-existing"  # the same rule fired at the same place on the old version too
    UNKNOWN_BEFORE = "unknown-before"  # the old version could not be checked there


@dataclass(frozen=True)
class Finding:
    code: RuleCode  # stable rule code, e.g. "AD101"
    rule: str  # kebab-case rule name, e.g. "unexpected-keyword"
    severity: Severity
    message: str
    location: Location
    symbol: str  # dotted upstream path of the target, e.g. "vllm.v1.core.sched.scheduler.Scheduler"
    upstream: str  # distribution name of the upstream
    new_signature: str | None = None
    old_signature: str | None = None
    hint: str | None = None
    classification: Classification | None = None  # None without an old version
    fix: Fix | None = None
    guarded: bool = False  # inside try/except ImportError, a hasattr or version test...: expected to fail
    # The source around the use: the whole call (all its lines) with a few lines before and after,
    # starting at line `context_start`; empty when not known.
    context: tuple[str, ...] = ()
    context_start: int = 0
    # Where the target is defined in the upstream version's sources ("pkg/core.py:12", relative to
    # its source root), with the first lines of that definition; None / empty when not known.
    definition: str | None = None
    definition_source: tuple[str, ...] = ()
    # Its history across the upstream's releases; only with `audit --history` (absent from `as_dict` otherwise).
    since: Since | None = None
    # Where the finding lives in the downstream (auditor/roles.py): "shipped" (code its distribution
    # installs: a break reaches its users), "tests", "examples" (and docs), "build" or "other"; None
    # when not decided (a finding made outside the engine).
    role: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("cell", "json_region"):  # present for notebooks only
            if data["location"][key] is None:
                del data["location"][key]
            elif key == "json_region":
                data["location"][key] = list(data["location"][key])
        data["severity"] = self.severity.value
        data["classification"] = self.classification.value if self.classification is not None else None
        data["fix"] = self.fix.as_dict() if self.fix is not None else None
        data["context"] = list(self.context)
        data["definition_source"] = list(self.definition_source)
        if self.since is None:
            del data["since"]  # reports without --history stay as they were
        else:
            data["since"] = self.since.as_dict()
        return data


@dataclass(frozen=True)
class InputInfo:
    """One audited distribution, as it was actually read."""

    name: str
    version: str | None
    origin: str  # "index", "path", "installed" or "directory"
    location: str  # archive file name, folder or installed location
    sha256: str | None = None  # of the archive, when one was read
    import_names: tuple[str, ...] = ()
    note: str | None = None  # e.g. why the latest release was used
    # The folder the report's paths are relative to (absolute), for a local folder or an installed
    # distribution; for a release, paths are relative to the release's own top folder and this is None.
    root: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name}=={self.version}" if self.version else self.name


# At most this many not-checkable sites are listed one by one per upstream (all are counted).
MAX_LISTED_UNCHECKED = 10_000


@dataclass(frozen=True)
class UncheckedSite:
    """Where a use could not be checked, and why: what a reader needs to look at the hole itself."""

    path: str  # POSIX path, relative to the downstream root
    line: int | None  # None for a whole file (one that does not parse)
    column: int | None
    reason: str  # a coverage reason label, e.g. "receiver-unknown:untyped-parameter"
    code: str = ""  # the use as written, first line only
    cell: int | None = None  # in a notebook: the cell's number (`line` is then the line in the cell)

    @property
    def where(self) -> str:
        """`path:line:column`, `path cell 3:2`, or the path alone for a whole file."""
        where = self.path if self.cell is None else f"{self.path} cell {self.cell}"
        if self.line is not None:
            where += f":{self.line}" + (f":{self.column}" if self.column is not None else "")
        return where


@dataclass
class Coverage:
    """How many use sites into one upstream were found, resolved and checked with a certain verdict."""

    upstream: str
    found: int = 0
    resolved: int = 0
    checked: int = 0
    not_checkable: dict[str, int] = field(default_factory=dict)  # reason -> count
    # Each not-checkable site, in the order found (at most MAX_LISTED_UNCHECKED; `unlisted` counts the rest).
    sites: list[UncheckedSite] = field(default_factory=list)
    unlisted: int = 0

    @property
    def unchecked(self) -> int:
        return sum(self.not_checkable.values())

    def count_unchecked(self, reason: str, where: UncheckedSite | None = None) -> None:
        self.not_checkable[reason] = self.not_checkable.get(reason, 0) + 1
        if where is None:
            return
        if len(self.sites) < MAX_LISTED_UNCHECKED:
            self.sites.append(where)
        else:
            self.unlisted += 1

    def summary(self) -> str:
        return (
            f"{self.found} use sites found, {self.resolved} resolved, {self.checked} checked, "
            f"{self.unchecked} not checkable"
        )


class FileStatus(str, Enum):
    SCANNED = "scanned"
    SKIPPED = "skipped"  # with a reason
    FAILED = "failed"  # with the error


@dataclass(frozen=True)
class FileOutcome:
    """What happened to one downstream file: scanned, skipped (with a reason) or failed (with the error)."""

    path: str
    status: FileStatus
    reason: str | None = None
    use_sites: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "status": self.status.value,
            "reason": self.reason,
            "use_sites": self.use_sites,
        }


@dataclass
class AuditResult:
    downstream: InputInfo
    upstream: InputInfo
    old_upstream: InputInfo | None = None
    findings: list[Finding] = field(default_factory=list)
    coverage: list[Coverage] = field(default_factory=list)
    files: list[FileOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the user should know about how the audit ran
    timings: dict[str, float] = field(default_factory=dict)  # phase -> seconds
    tool_version: str = ""
    # Set when nothing was checked: the downstream does not use the upstream, or none of its use sites
    # could be checked. The gate then has nothing to pass (exit status 3), and every report says so first.
    unchecked: str | None = None
    dependents: list[str] = field(default_factory=list)  # releases that do require the upstream
    # How this report was produced, for a reader of a file: "date" (ISO 8601, UTC), "command" (the
    # command line), "config" (the configuration file, or None) and "settings" (what it set),
    # "seconds" (the whole run). Set by the command line; empty for library use.
    run: dict[str, Any] = field(default_factory=dict)
    # The folder the findings' paths are relative to, as read (for a release: its extracted copy in the
    # cache), for what works on the downstream's files after the audit (`apidrift fix`). Not reported.
    root: Path | None = field(default=None, compare=False, repr=False)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "apidrift", "version": self.tool_version},
            "downstream": asdict(self.downstream),
            "upstream": asdict(self.upstream),
            "old_upstream": asdict(self.old_upstream) if self.old_upstream else None,
            "summary": {s.value: self.count(s) for s in Severity},
            "findings": [f.as_dict() for f in self.findings],
            "coverage": [asdict(c) for c in self.coverage],
            "files": [f.as_dict() for f in self.files],
            "notes": list(self.notes),
            "timings": dict(self.timings),
            "unchecked": self.unchecked,
            "dependents": list(self.dependents),
            "run": dict(self.run),
        }
