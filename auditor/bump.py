"""`apidrift bump`: audit the local project against every package a change of its lock or pin files moves.

    sides      the pinned versions before and after (auditor/sources/lockfiles.py): the work tree against
               `git show REF:path` (`--base REF`), or two files (`--old`/`--new`)
    changes    per package: upgrade, downgrade, changed (versions that do not compare), added, removed
    used?      the project's imports against each changed package's import names, known without a
               download where the name says them; only the packages the project imports are audited
    audit      the engine's `audit`, once per used package, from the old version to the new one
    result     one `AuditResult` (findings of every package, coverage per package) plus the list of changes

Nothing is checked out, installed or executed; every file read is bounded (see lockfiles.py).
"""

from __future__ import annotations

import fnmatch
import re
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.version import InvalidVersion, Version

from apidrift.auditor.cache import Cache
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import (
    Applicability,
    AuditResult,
    Coverage,
    FileOutcome,
    Finding,
    InputInfo,
)
from apidrift.auditor.core.version import __version__
from apidrift.auditor.core.wording import plural
from apidrift.auditor.downstream.notebook import MAX_NOTEBOOK_BYTES, NotebookError, read_notebook
from apidrift.auditor.downstream.walk import _python_files
from apidrift.auditor.engine import AuditRequest, audit
from apidrift.auditor.sources.import_names import guessed_names, normal_name, provides
from apidrift.auditor.sources.locate import locate
from apidrift.auditor.sources.lockfiles import (
    GitSide,
    LockError,
    Reader,
    Side,
    choose,
    folder_reader,
    listing_of,
    read_lock,
    read_side,
)
from apidrift.auditor.sources.specs import SourceError, SpecError
from apidrift.auditor.sources.written_for import _lower_bound

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib
if TYPE_CHECKING:
    from apidrift.auditor.fix.codemods import Suggestion

MAX_IMPORT_SCAN_BYTES = 2 * 1024 * 1024  # per file, as the downstream walk
MAX_IMPORT_SCAN_FILES = 50_000
MAX_IMPORT_NAME_FETCHES = 40  # releases fetched by one bump only to learn import names


@dataclass(frozen=True)
class BumpRequest:
    project: Path  # the local project folder (the downstream)
    base: str | None = None  # git revision of the old side (the new side is the work tree)
    old_file: Path | None = None  # or: two files
    new_file: Path | None = None
    template: AuditRequest | None = None  # options for each audit (downstream/against/old replaced)
    cache_dir: Path | None = None
    offline: bool = False
    index_url: str | None = None
    learn_imports: bool = True  # fetch a release to learn its import names when the name does not say them


@dataclass
class PackageChange:
    name: str  # normalized
    display: str
    old: str | None
    new: str | None
    kind: str  # "upgrade", "downgrade", "changed", "added" or "removed"
    files: tuple[str, ...] = ()  # files that pin it (either side)
    status: str = ""  # "audited", "not used", "not audited", "added" or "removed"
    reason: str | None = None  # why not used / not audited
    import_names: tuple[str, ...] = ()
    findings: list[Finding] = field(default_factory=list)
    coverage: Coverage | None = None
    notes: list[str] = field(default_factory=list)
    failed: bool = False  # "not audited" because a release could not be had (not by choice)

    @property
    def label(self) -> str:
        return f"{self.display} {self.old or '(none)'} -> {self.new or '(none)'}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.display,
            "old": self.old,
            "new": self.new,
            "kind": self.kind,
            "status": self.status,
            "reason": self.reason,
            "failed": self.failed,
            "files": list(self.files),
            "import_names": list(self.import_names),
            "findings": len(self.findings),
            "coverage": asdict(self.coverage) if self.coverage else None,
        }


@dataclass(frozen=True)
class FileRead:
    side: str  # "old" or "new"
    where: str  # e.g. "origin/main" or "work tree" or the file named
    path: str
    kind: str
    pins: int


@dataclass
class BumpResult:
    project: InputInfo
    old_side: str
    new_side: str
    files_read: list[FileRead]
    changes: list[PackageChange]
    audit: AuditResult  # every audited package's findings and coverage, for the audit renderers
    notes: list[str] = field(default_factory=list)
    # Safe fixes as GitHub suggestions, by finding (path, line, column, code): for the pull-request comment
    suggestions: dict[tuple[str, int, int, RuleCode], Suggestion] = field(default_factory=dict)

    def failed(self) -> list[PackageChange]:
        return [c for c in self.changes if c.failed]

    def audited(self) -> list[PackageChange]:
        return [c for c in self.changes if c.status == "audited"]

    def with_status(self, status: str) -> list[PackageChange]:
        return [c for c in self.changes if c.status == status]

    def as_dict(self) -> dict[str, Any]:
        return {
            "old": self.old_side,
            "new": self.new_side,
            "files_read": [asdict(f) for f in self.files_read],
            "changes": [c.as_dict() for c in self.changes],
            "notes": list(self.notes),
        }


class BumpError(Exception):
    """Inputs that cannot be used (no git, no such revision, a file that does not parse): one line."""


def run_bump(request: BumpRequest) -> BumpResult:
    """Read both sides, find the changed packages, audit the used ones; raise `BumpError` on bad input."""
    try:
        old, new, old_where, new_where = _sides(request)
    except LockError as error:
        raise BumpError(str(error)) from None
    notes = old.notes() + new.notes()
    files_read = [FileRead("old", old_where, f.path, f.kind, len(f.pins)) for f in old.files]
    files_read += [FileRead("new", new_where, f.path, f.kind, len(f.pins)) for f in new.files]
    changes, choice_notes = changed_packages(old, new)
    notes += choice_notes
    python = python_change(request)

    cache = Cache(request.cache_dir)
    template = request.template or AuditRequest(str(request.project), "")
    try:
        project_tree = locate(str(request.project), role="downstream", cache=cache, offline=True)
        project = InputInfo(
            project_tree.name,
            project_tree.version,
            project_tree.origin,
            project_tree.location,
            import_names=tuple(project_tree.import_names),
        )
    except (SpecError, SourceError):  # no package of its own (scripts only, or no Python yet)
        project = InputInfo(request.project.resolve().name, None, "directory", str(request.project))
    imports = third_party_imports(request.project, frozenset(project.import_names), template.exclude)
    locked = {name for name in {*old.versions(), *new.versions()}}
    explained = {m for m in imports if any(provides(guessed_names(name), m) for name in locked)}
    unexplained = sorted(imports - explained)

    to_audit: set[str] = set()
    pending: list[PackageChange] = []  # changed packages whose import names only a download tells
    results: list[AuditResult] = []
    if python is not None:  # the interpreter itself: its standard library is used by any project
        changes.insert(0, python)
        _audit_change(python, template, request, results)
    for change in changes:
        if change is python:
            continue
        if change.kind in ("added", "removed"):
            change.status = change.kind
            continue
        if any(provides(guessed_names(change.name), m) for m in imports):
            to_audit.add(change.name)
        elif not unexplained:
            change.status, change.reason = "not used", "the project imports none of its modules"
        elif not request.learn_imports:
            change.status = "not audited"
            change.reason = f"its import names are not known without a download (the project imports {', '.join(unexplained[:5])})"
        else:
            pending.append(change)
    to_audit |= _learn_needed(pending, unexplained, imports, request, cache)

    for change in changes:
        if change.name in to_audit:
            _audit_change(change, template, request, results)

    fetched_for_names = [
        c
        for c in changes
        if any(n.startswith("import names learned") for n in c.notes)
        or (c.failed and c.reason and "import names" in c.reason)
    ]
    if fetched_for_names:
        shown = ", ".join(unexplained[:8]) + (", ..." if len(unexplained) > 8 else "")
        notes.append(
            f"the project imports {shown}, which no locked package's name accounts for: "
            f"{plural(len(fetched_for_names), 'release')} fetched to learn {'their' if len(fetched_for_names) != 1 else 'its'} import names"
        )
    combined = combine(project, changes, results)
    combined.notes[:0] = notes
    suggestions = {}
    for finding in combined.findings:
        if finding.fix is None or finding.fix.applicability is not Applicability.SAFE:
            continue
        # lazy: LibCST (0.19 s) loads only where there is a safe fix to show
        from apidrift.auditor.fix.codemods import suggestion

        found = suggestion(request.project, finding)
        if found is not None:
            loc = finding.location
            suggestions[(loc.path, loc.line, loc.column, finding.code)] = found
    return BumpResult(project, old.label, new.label, files_read, changes, combined, notes, suggestions)


def _sides(request: BumpRequest) -> tuple[Side, Side, str, str]:
    project = request.project
    if request.base is not None:
        if request.old_file or request.new_file:
            raise LockError("give either --base REF or --old FILE --new FILE, not both")
        if not project.is_dir():
            raise LockError(f"{project}: not a folder; --base compares a project folder with a git revision")
        git = GitSide.open(project, request.base)
        paths = list(dict.fromkeys([*listing_of(project), *git.listing()]))
        if not paths:
            raise LockError(f"{project}: no lock or pin file here or at {request.base}")
        old = read_side(request.base, paths, git.reader())
        new = read_side("work tree", paths, folder_reader(project))
        return old, new, f"git {request.base}", "work tree"
    if request.old_file is None or request.new_file is None:
        raise LockError("give --base REF, or both --old FILE and --new FILE")
    sides = []
    for option, path in (("--old", request.old_file), ("--new", request.new_file)):
        if not path.is_file():
            raise LockError(f"{option} {path}: no such file")
        root = _root_for(path, project)
        relative = path.resolve().relative_to(root).as_posix()
        side = Side(str(path))
        side.files = read_lock(relative, folder_reader(root))
        sides.append(side)
    return sides[0], sides[1], str(request.old_file), str(request.new_file)


def python_change(request: BumpRequest) -> PackageChange | None:
    """The Python the project runs on, when the change moves it: the lower bound of `requires-python`
    in pyproject.toml (or the version in `.python-version`) on each side, when both say one and they
    differ. Audited as `python==NEW` from `python==OLD`."""
    readers: list[tuple[Reader, Reader]] = []
    if request.base is not None and request.project.is_dir():
        try:
            readers.append(
                (GitSide.open(request.project, request.base).reader(), folder_reader(request.project))
            )
        except LockError:
            return None
    elif request.old_file is not None and request.new_file is not None:
        if request.old_file.name != "pyproject.toml" or request.new_file.name != "pyproject.toml":
            return None
        readers.append((folder_reader(request.old_file.parent), folder_reader(request.new_file.parent)))
    for old_read, new_read in readers:
        old_version, new_version = _python_of(old_read), _python_of(new_read)
        if old_version is None or new_version is None or old_version[0] == new_version[0]:
            return None
        files = tuple(dict.fromkeys([old_version[1], new_version[1]]))
        return PackageChange(
            "python", "python", old_version[0], new_version[0], _kind(old_version[0], new_version[0]), files
        )
    return None


def _python_of(read: Reader) -> tuple[str, str] | None:
    """(3.X, the file that says it) from pyproject.toml's `requires-python` lower bound, else `.python-version`."""
    try:
        data = read("pyproject.toml")
        if data is not None:
            project = tomllib.loads(data.decode("utf-8", "replace")).get("project") or {}
            declared = project.get("requires-python") if isinstance(project, dict) else None
            lowest = _lower_bound(declared) if isinstance(declared, str) else None
            if lowest is not None:
                return lowest, "pyproject.toml"
        data = read(".python-version")
    except (LockError, ValueError):
        return None
    if data is not None:
        match = re.match(
            r"\s*(3\.\d{1,2})(?:\.\d+)?\s*$",
            data.decode("utf-8", "replace").splitlines()[0] if data.strip() else "",
        )
        if match:
            return match.group(1), ".python-version"
    return None


def _root_for(path: Path, project: Path) -> Path:
    """Includes of a file stay inside the project when the file is in it, else inside the file's folder."""
    resolved = path.resolve()
    project_root = project.resolve()
    return (
        project_root if project_root.is_dir() and resolved.is_relative_to(project_root) else resolved.parent
    )


def changed_packages(old: Side, new: Side) -> tuple[list[PackageChange], list[str]]:
    """The packages whose pinned version differs between the sides, by name."""
    before, after = old.versions(), new.versions()
    changes: list[PackageChange] = []
    notes: list[str] = []
    for name in sorted({*before, *after}):
        old_version = new_version = None
        if name in before:
            old_version, note = choose(before[name])
            if note:
                notes.append(f"{old.label}: {note}")
        if name in after:
            new_version, note = choose(after[name])
            if note:
                notes.append(f"{new.label}: {note}")
        if old_version == new_version or _same(old_version, new_version):
            continue
        pins = before.get(name, []) + after.get(name, [])
        listed = after.get(name) or before.get(name)
        display = listed[0] if listed else None
        files = tuple(dict.fromkeys(p.path for p in pins))
        changes.append(
            PackageChange(
                name,
                display.display if display else name,
                old_version,
                new_version,
                _kind(old_version, new_version),
                files,
            )
        )
    return changes, notes


def _same(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return False
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return False


def _kind(old: str | None, new: str | None) -> str:
    if old is None:
        return "added"
    if new is None:
        return "removed"
    try:
        return "upgrade" if Version(new) > Version(old) else "downgrade"
    except InvalidVersion:
        return "changed"


# ---- which packages the project uses


_IMPORT_LINE = re.compile(
    r"(?:^|[;:])[ \t]*(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import\b|import[ \t]+([^#;\n]+))", re.MULTILINE
)
_DYNAMIC_IMPORT = re.compile(r"""(?:import_module|__import__)\(\s*['"]([A-Za-z_][\w.]*)['"]""")


def third_party_imports(root: Path, own: frozenset[str], exclude: tuple[str, ...] = ()) -> set[str]:
    """The dotted modules the project's files import, less the standard library and its own packages.

    A bounded textual pass, not a parse: it may also count an `import` in a string, which only makes a
    package look used (and audited), never the reverse.
    """
    files, _ = _python_files(root)
    modules: set[str] = set()
    for path, relative in files[:MAX_IMPORT_SCAN_FILES]:
        if any(fnmatch.fnmatchcase(relative, p) or relative.startswith(p.rstrip("/") + "/") for p in exclude):
            continue
        if relative.endswith(".ipynb"):
            text = _notebook_code(path)
            if text is None:
                continue
        else:
            try:
                with path.open("rb") as handle:
                    data = handle.read(MAX_IMPORT_SCAN_BYTES + 1)
            except OSError:
                continue
            if len(data) > MAX_IMPORT_SCAN_BYTES:
                continue
            text = data.decode("utf-8", "replace")
        for match in _IMPORT_LINE.finditer(text):
            if match.group(1):
                modules.add(match.group(1))
            else:
                for part in match.group(2).replace("\\", " ").split(","):
                    words = part.strip().strip("()").split()
                    if words and re.fullmatch(r"[A-Za-z_][\w.]*", words[0]):
                        modules.add(words[0])
        modules.update(m.group(1) for m in _DYNAMIC_IMPORT.finditer(text))
    stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    return {
        m
        for m in modules
        if m.split(".")[0] not in stdlib and m.split(".")[0] not in own and m.split(".")[0] != "__future__"
    }


_ALIAS_IMPORT = re.compile(
    r"^[ \t]*(?:import[ \t]+([A-Za-z_][\w.]*)|from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+\(?[ \t]*([A-Za-z_]\w*))"
    r"[ \t]+as[ \t]+([A-Za-z_]\w*)[ \t]*\)?[ \t]*(?:#.*)?$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class DropIn:
    """`import asyncclick as click`: another distribution's module bound to the upstream's name."""

    module: str  # what is imported: "asyncclick", "rich_click"
    name: str  # the upstream's import name it is bound to: "click"
    files: int  # files that do it and never import the upstream itself: every use there is the other's
    uses: int  # `click.` (the bound name, then a dot) written in those files
    fallback_files: int = 0  # files that also import the upstream (`try: import asyncclick as click`
    fallback_uses: int = 0  # `except ImportError: import click`): their uses are either one's

    def sentence(self) -> str:
        parts = []
        if self.files:
            parts.append(
                f"{plural(self.uses, 'use')} of `{self.name}.` in {plural(self.files, 'file')} not audited"
            )
        if self.fallback_files:
            parts.append(
                f"{plural(self.fallback_uses, 'use')} in {plural(self.fallback_files, 'file')} that fall{'s' if self.fallback_files == 1 else ''} back "
                f"to {self.name}: {self.module}'s when it is installed"
            )
        return f"uses {self.module} as {self.name}: " + "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def drop_in_aliases(root: Path, upstream_names: frozenset[str], own: frozenset[str]) -> list[DropIn]:
    """Where the project binds another distribution's module to an upstream import name (`import
    asyncclick as click`, `import rich_click as click`), with the uses of that name in those files.
    The same bounded textual pass as `third_party_imports` (files and sizes as the downstream walk)."""
    files, _ = _python_files(root)
    stdlib: frozenset[str] = getattr(sys, "stdlib_module_names", frozenset())
    found: dict[tuple[str, str], list[int]] = {}  # files alone, uses alone, files with a fallback, uses
    for path, _relative in files[:MAX_IMPORT_SCAN_FILES]:
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_IMPORT_SCAN_BYTES + 1)
        except OSError:
            continue
        if len(data) > MAX_IMPORT_SCAN_BYTES:
            continue
        text = data.decode("utf-8", "replace")
        if " as " not in text:
            continue
        bound: dict[tuple[str, str], None] = {}
        for match in _ALIAS_IMPORT.finditer(text):
            module = match.group(1) or f"{match.group(2)}.{match.group(3)}"
            name = match.group(4)
            top = module.split(".")[0]
            if name in upstream_names and top not in upstream_names and top not in own and top not in stdlib:
                bound[(module, name)] = None
        for module, name in bound:
            uses = len(re.findall(rf"(?<![\w.]){re.escape(name)}\.[A-Za-z_]", text))
            itself = re.search(
                rf"^[ \t]*(?:import[ \t]+{re.escape(name)}\b(?![ \t]+as)|from[ \t]+{re.escape(name)}\b)",
                text,
                re.MULTILINE,
            )
            entry = found.setdefault((module, name), [0, 0, 0, 0])
            entry[2 if itself else 0] += 1
            entry[3 if itself else 1] += uses
    return [DropIn(m, n, *counts) for (m, n), counts in sorted(found.items())]


def _learn_needed(
    pending: list[PackageChange],
    unexplained: list[str],
    imports: set[str],
    request: BumpRequest,
    cache: Cache,
) -> set[str]:
    """Learn the import names of `pending` packages (one release each) only while some import of the
    project is still unexplained, and at most MAX_IMPORT_NAME_FETCHES releases; the names of those to audit.

    The packages most likely to provide an unexplained import (a word of their name in it) are fetched
    first. Once every import is accounted for, the others are "not used", as a package is when the
    names alone account for every import; past the bound they are "not audited", with the reason.
    """
    remaining = set(unexplained)
    used: set[str] = set()
    fetched = 0

    def likely(change: PackageChange) -> int:
        words = [w for w in re.split(r"[-_.]+", change.name) if len(w) >= 3]
        return -sum(1 for m in remaining for w in words if w in m.lower())

    for change in sorted(pending, key=likely):
        if not remaining:
            change.status = "not used"
            change.reason = (
                "the project imports none of its modules (another package accounts for each import)"
            )
            continue
        if fetched >= MAX_IMPORT_NAME_FETCHES:
            change.status = "not audited"
            change.reason = (
                f"its import names were not learned: {MAX_IMPORT_NAME_FETCHES} releases were already fetched to "
                f"learn theirs (the project still imports {', '.join(sorted(remaining)[:5])} unexplained)"
            )
            continue
        fetched += 1
        learned = _learn_import_names(change, request, cache)
        if learned is None:
            continue
        provided = {m for m in imports if provides(learned, m)}
        if not provided:
            change.status = "not used"
            change.reason = f"the project imports none of {', '.join(learned) or 'its modules'}"
            change.import_names = learned
            continue
        remaining -= provided
        used.add(change.name)
    return used


def _notebook_code(path: Path) -> str | None:
    """A notebook's code cells as one text (bounded as the downstream walk reads notebooks), or None."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_NOTEBOOK_BYTES + 1)
        return read_notebook(data).text
    except (OSError, NotebookError):
        return None


def _learn_import_names(change: PackageChange, request: BumpRequest, cache: Cache) -> tuple[str, ...] | None:
    """The import names of the new release (one download, which the audit then reuses from the cache)."""
    try:
        tree = locate(
            f"{change.display}=={change.new}",
            role="upstream",
            cache=cache,
            index_url=request.index_url,
            offline=request.offline,
        )
    except (SpecError, SourceError) as error:
        change.status, change.reason = "not audited", f"its import names could not be learned: {error}"
        change.failed = True
        return None
    change.notes.append(f"import names learned from its release: {', '.join(tree.import_names) or 'none'}")
    return tuple(tree.import_names)


def _audit_change(
    change: PackageChange, template: AuditRequest, request: BumpRequest, results: list[AuditResult]
) -> None:
    audit_request = replace(
        template,
        downstream=str(request.project),
        against=f"{change.display}=={change.new}",
        old=f"{change.display}=={change.old}",
        cache_dir=request.cache_dir,
        offline=request.offline,
        index_url=request.index_url,
    )
    try:
        result = audit(audit_request)
    except (SpecError, SourceError) as error:
        change.status, change.reason, change.failed = "not audited", str(error), True
        return
    change.import_names = result.upstream.import_names
    change.coverage = result.coverage[0] if result.coverage else None
    change.findings = list(result.findings)
    change.notes += [n for n in result.notes if not n.startswith("old version: ")]
    if not result.findings and (change.coverage is None or change.coverage.found == 0):
        change.status, change.reason = "not used", "no use sites of it found in the project"
        return
    change.status = "audited"
    results.append(result)


def combine(project: InputInfo, changes: list[PackageChange], results: list[AuditResult]) -> AuditResult:
    """One `AuditResult` for the audit renderers: every audited package's findings and coverage."""
    audited = [c for c in changes if c.status == "audited"]
    upstream = InputInfo(
        ", ".join(f"{c.display}=={c.new}" for c in audited) or "no used package changed",
        None,
        "bump",
        ", ".join(c.label for c in audited),
    )
    old = (
        InputInfo(", ".join(f"{c.display}=={c.old}" for c in audited), None, "bump", "") if audited else None
    )
    combined = AuditResult(project, upstream, old, tool_version=__version__)
    files: dict[str, FileOutcome] = {}
    for result in results:
        combined.findings.extend(result.findings)
        combined.coverage.extend(result.coverage)
        for outcome in result.files:
            known = files.get(outcome.path)
            files[outcome.path] = (
                outcome if known is None else replace(known, use_sites=known.use_sites + outcome.use_sites)
            )
        for phase, seconds in result.timings.items():
            combined.timings[phase] = combined.timings.get(phase, 0.0) + seconds
    for change in changes:
        combined.notes += [f"{change.display}: {note}" for note in change.notes]
    combined.files = sorted(files.values(), key=lambda o: o.path)
    order = {c.name: i for i, c in enumerate(changes)}
    combined.findings.sort(
        key=lambda f: (
            order.get(normal_name(f.upstream), 0),
            *f.location.order,
            f.code,
        )
    )
    return combined
