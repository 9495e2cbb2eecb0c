"""`apidrift fix`: apply the findings' structured fixes to the downstream's source, as LibCST codemods.

Input: an `AuditResult` and the folder its finding paths are relative to. Each finding's `Fix` says
what would repair it (`results.Fix`); this module turns the mechanical ones into edits:

- `move-import` (safe): `from old import a, Moved as m, b` keeps `a, b` and gains a line
  `from new import Moved as m` after it; when every name of the statement moves to one module, only
  the module is rewritten (parentheses, comments and aliases stay as they are).
- `rename-keyword` (safe): `f(path=x)` becomes `f(file_path=x)`; only the keyword's name changes.
- `rename-attribute` (safe): `self.assertEquals(...)` becomes `self.assertEqual(...)`, where the old
  name was an alias of the new one; only the attribute's name changes; in an import,
  `from m import old` becomes `from m import new as old`, so the uses stay as they are. Unsafe where
  only a stub says the two behave alike (`SafeConfigParser`, an empty subclass of `ConfigParser`).
- `remove-keyword` (unsafe, only when asked): the argument is dropped with its comma; the comment on
  its own line goes with it, comment lines above and below stay, and the trailing-comma and
  one-argument-per-line layout of the call is kept.
- `manual`: no edit; the renderer lists it as a step (parameter, annotation, position, no default).

The call or import is found by the finding's exact position (line and column, as the scanner's
`PositionProvider` gave them) and the keyword or name it names; a node that is no longer there (the
file changed, or the fix was already applied) is left alone, which makes a second run a no-op.
Everything else in the file is reproduced byte for byte by LibCST, and a file whose fixed text
CPython's parser rejects is left unchanged. Nothing is imported or executed.

Writing is a separate step (`write_changes`) and only ever into a local tree the user named: never
into a release fetched from an index, an installed distribution, or apidrift's cache.
"""

from __future__ import annotations

import ast
import difflib
import io
import sysconfig
import tempfile
import tokenize
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from apidrift.auditor.files import atomic_write_bytes
from apidrift.auditor.pysource import SourceDecodeError, decode_source
from apidrift.auditor.results import (
    Applicability,
    AuditResult,
    Finding,
    FixKind,
    ManualParameter,
    ManualStep,
    MoveImport,
    PositionalToKeyword,
    RemoveKeyword,
    RenameAttribute,
    RenameKeyword,
    ReplaceName,
    Severity,
)
from apidrift.auditor.upstream.signature import ParamKind
from apidrift.auditor.wording import first_line, plural

if TYPE_CHECKING:
    from apidrift.auditor.engine import AuditRequest

EDIT_KINDS = (
    FixKind.RENAME_KEYWORD,
    FixKind.REMOVE_KEYWORD,
    FixKind.MOVE_IMPORT,
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


# ---- the whole run: audit, then plan the edits


def run_fix(request: AuditRequest, *, unsafe: bool = False) -> FixResult:
    """Audit `request` and plan the fixes of its findings; writes nothing. The downstream is located
    once: the files fixed are the ones audited."""
    from apidrift.auditor.engine import audit, locate_inputs

    inputs = locate_inputs(request)
    result = audit(request, inputs)
    tree = inputs.downstream
    assert tree is not None and result.root is not None  # an audit always has a downstream
    reason = not_local_reason(tree.origin, tree.root, inputs.sources.cache.root)
    root = result.root
    result, said = with_evidence_of_the_last_release(request, inputs, result)
    fixed = plan_fixes(result, root, unsafe=unsafe, local=reason is None, not_local_reason=reason)
    fixed.notes += said

    def audit_again(folder: Path) -> AuditResult:
        again = replace(inputs, downstream=inputs.sources.locate(str(folder), "downstream"))
        return audit(replace(request, downstream=str(folder)), again)

    fixed = follow_up(fixed, audit_again)
    fixed.notes += undeclared_imports(
        fixed,
        tree.requires,
        inputs.upstream.import_names,
        inputs.old_upstream.requires if inputs.old_upstream is not None else (),
    )
    return fixed


UNFIXED_NAMES = ("AD002", "AD003", "AD004")  # a name gone: its replacement may be named by a release between


def with_evidence_of_the_last_release(
    request: AuditRequest, inputs: Any, result: AuditResult
) -> tuple[AuditResult, list[str]]:
    """Where names the downstream uses are gone and neither version says what replaced them, the
    last release before the target may (Jinja2 3.0.3's `contextfunction` warns that it "is renamed to
    'pass_context'"; 2.11.3 did not deprecate it, 3.1.0 removed it). The downstream is audited again
    with that release as the version written for, and a finding of the same file, rule and message
    takes the fix found there, its evidence naming that release. Only between two releases of the
    index, one release more; anything that fails leaves the result as it was."""
    from apidrift.auditor.engine import audit, locate_inputs
    from apidrift.auditor.sources.index_client import IndexClient

    old, new = inputs.old_upstream, inputs.upstream
    wanted = [
        f
        for f in result.findings
        if f.code in UNFIXED_NAMES and (f.fix is None or f.fix.kind is FixKind.MANUAL)
    ]
    if (
        not wanted
        or old is None
        or old.origin != "index"
        or new.origin != "index"
        or not old.version
        or not new.version
    ):
        return result, []
    try:
        from packaging.version import Version

        low, high = Version(old.version), Version(new.version)
        with IndexClient(inputs.sources.cache, request.index_url, offline=request.offline) as client:
            listing = client.project(new.name)
        between = sorted(
            v
            for v, files in listing.by_version().items()
            if low < v < high and not v.is_prerelease and any(not f.yanked for f in files)
        )
        if not between:
            return result, []
        last = f"{new.name}=={between[-1]}"
        again = audit(replace(request, old=last), locate_inputs(replace(request, old=last)))
    except Exception as error:
        return result, [
            f"the last release before {new.name}=={new.version} could not be read for evidence ({first_line(error)})"
        ]
    offered: dict[tuple[str, str, str], Finding] = {}
    for finding in again.findings:
        fix = finding.fix
        if fix is not None and fix.kind is not FixKind.MANUAL and fix.applicability is Applicability.SAFE:
            offered.setdefault(_key(finding), finding)
    adopted = 0
    wanted_ids = {id(f) for f in wanted}
    findings = []
    for finding in result.findings:
        better = offered.get(_key(finding)) if id(finding) in wanted_ids else None
        if better is not None and better.location.line == finding.location.line:
            findings.append(replace(finding, fix=better.fix, hint=better.hint))
            adopted += 1
        else:
            findings.append(finding)
    if not adopted:
        return result, []
    note = (
        f"{plural(adopted, 'fix', 'fixes')} rest on {last}, the last release before {new.name}=={new.version}: "
        f"its own deprecation messages name the replacements"
    )
    return replace(result, findings=findings), [note]


def undeclared_imports(
    fixed: FixResult, declared: Sequence[str], upstream_names: Sequence[str], old_requires: Sequence[str]
) -> list[str]:
    """A note for each distribution the fixed code now imports from that is neither the upstream nor
    one the downstream declares (`from markupsafe import Markup`, which Jinja2 2.11.3 re-exported and
    brought along as its own dependency)."""
    from packaging.requirements import InvalidRequirement, Requirement

    from apidrift.auditor.bump import _guessed_names, _provides

    def names(lines: Sequence[str]) -> list[str]:
        found = []
        for line in lines:
            try:
                found.append(Requirement(line).name)
            except InvalidRequirement:
                continue
        return found

    own = names(declared)
    notes = []
    seen = set()
    for outcome in fixed.with_status(APPLIED):
        fix = outcome.finding.fix
        module = fix.data.new_module if fix is not None and isinstance(fix.data, MoveImport) else None
        if module is None or _provides(upstream_names, module):
            continue
        top = module.split(".")[0]
        if top in seen or any(_provides(_guessed_names(name), module) for name in own):
            continue
        seen.add(top)
        brought = next(
            (name for name in names(old_requires) if _provides(_guessed_names(name), module)), None
        )
        by = (
            f"`{brought}` (the old upstream required it)"
            if brought
            else f"the distribution that provides `{top}`"
        )
        notes.append(
            f"the fixed code imports `{top}`, which the downstream does not declare: add {by} to its dependencies"
        )
    return notes


MAX_ROUNDS = 3  # audits of the fixed text after the first: a moved name's new home, then what it needs


def follow_up(fixed: FixResult, audit_again: Callable[[Path], AuditResult]) -> FixResult:
    """Check the fixed text again, where a fix made names resolve somewhere else (an import moved, a
    name replaced): the uses of a moved class are calls of its new home, whose signature may differ.
    The changed files are audited again in a private temporary folder; the findings that were not
    there before are planned on the fixed text, in the same run, up to `MAX_ROUNDS` times. Nothing
    is written."""
    for _ in range(MAX_ROUNDS):
        relocating = [
            o
            for o in fixed.outcomes
            if o.status == APPLIED
            and o.finding.fix is not None
            and isinstance(o.finding.fix.data, (MoveImport, ReplaceName))
        ]
        if not relocating or not fixed.changes:
            return fixed
        with tempfile.TemporaryDirectory(prefix="apidrift-fix-") as folder:
            root = Path(folder)
            for change in fixed.changes:
                target = root / change.path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(change.after, encoding="utf-8")
            again = audit_again(root)
            fixed.outcomes = _resolved_by_fixes(fixed, again)
            known = Counter(_key(o.finding) for o in fixed.outcomes)
            fresh = []
            for finding in again.findings:
                if known[_key(finding)] > 0:
                    known[_key(finding)] -= 1
                else:
                    fresh.append(finding)
            if not fresh:
                return fixed
            more = plan_fixes(replace(again, findings=fresh), root, unsafe=fixed.unsafe)
        by_path = {change.path: change for change in fixed.changes}
        for change in more.changes:
            first = by_path.get(change.path)
            by_path[change.path] = (
                replace(change, before=first.before, encoding=first.encoding) if first is not None else change
            )
        fixed.changes = [by_path[path] for path in sorted(by_path)]
        fixed.outcomes = [*fixed.outcomes, *more.outcomes]
        if not more.with_status(APPLIED):
            return fixed
    return fixed


def _resolved_by_fixes(fixed: FixResult, again: AuditResult) -> list[Outcome]:
    """The findings without an edit of their own that the audit of the fixed text no longer reports
    (a use of a name whose import was moved): resolved by the fixes in their file."""
    changed = {change.path for change in fixed.changes}
    left = Counter(_key(finding) for finding in again.findings)
    outcomes = []
    for outcome in fixed.outcomes:
        key = _key(outcome.finding)
        if outcome.status in (APPLIED, RESOLVED, GUARDED) or outcome.finding.location.path not in changed:
            outcomes.append(outcome)
        elif left[key] > 0:
            left[key] -= 1
            outcomes.append(outcome)
        else:
            outcomes.append(
                Outcome(outcome.finding, RESOLVED, "the fixes in this file resolve it (checked again)")
            )
    return outcomes


def _key(finding: Finding) -> tuple[str, str, str]:
    """A finding regardless of where its line moved to: file, rule and message."""
    return (finding.location.path, finding.code, finding.message)


def not_local_reason(origin: str, root: Path, cache_root: Path | None = None) -> str | None:
    """Why apidrift must not write into `root`, or None for a local source tree the user named."""
    if origin == "index":
        return "it is a release fetched from the package index"
    if origin == "installed":
        return "it is an installed distribution"
    if origin != "directory":
        return f"it is not a local source tree (origin {origin})"
    resolved = root.resolve()
    if cache_root is not None and _within(resolved, cache_root.resolve()):
        return f"it is inside apidrift's cache ({cache_root})"
    for key in ("purelib", "platlib"):
        site = sysconfig.get_paths().get(key)
        if site and _within(resolved, Path(site).resolve()):
            return f"it is inside this environment's installed packages ({site})"
    if any(part in ("site-packages", "dist-packages") for part in resolved.parts):
        return "it is inside a folder of installed packages"
    return None


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def plan_fixes(
    result: AuditResult,
    root: Path,
    *,
    unsafe: bool = False,
    local: bool = True,
    not_local_reason: str | None = None,
) -> FixResult:
    """Compute every file's fixed text from the findings; decide what each finding's fix became."""
    fixed = FixResult(result, root, local, unsafe, not_local_reason=not_local_reason)
    by_path: dict[str, list[Finding]] = {}
    statuses: dict[int, Outcome] = {}
    for index, finding in enumerate(result.findings):
        fix = finding.fix
        if finding.guarded:
            statuses[index] = Outcome(finding, GUARDED, "the code handles its absence")
        elif fix is None:
            statuses[index] = Outcome(finding, NO_FIX)
        elif fix.kind is FixKind.MANUAL or fix.applicability is Applicability.MANUAL:
            statuses[index] = Outcome(finding, MANUAL)
        elif fix.kind not in EDIT_KINDS:
            statuses[index] = Outcome(
                finding, NOT_APPLIED, f"apidrift fix does not know fixes of kind {fix.kind.value!r}"
            )
        elif fix.applicability is Applicability.UNSAFE and not unsafe:
            statuses[index] = Outcome(finding, NEEDS_UNSAFE, unsafe_consequence(finding))
        else:
            by_path.setdefault(finding.location.path, []).append(finding)
    done: dict[int, Outcome] = {}
    for path, findings in sorted(by_path.items()):
        change, outcomes = _fix_file(root, path, findings)
        if change is not None:
            fixed.changes.append(change)
        for finding, outcome in zip(findings, outcomes):
            done[id(finding)] = outcome
    for index, finding in enumerate(result.findings):
        fixed.outcomes.append(statuses.get(index) or done[id(finding)])
    fixed.outcomes = _resolved_by_renames(fixed.outcomes)
    return fixed


def _resolved_by_renames(outcomes: list[Outcome]) -> list[Outcome]:
    """A call that passed `path=` lacks `file_path`: renaming the keyword passes it, so that missing
    argument is no manual step. Matched by file, the call's exact position and its callee."""
    renamed: dict[tuple[str, tuple[int, int], str], dict[str, str]] = {}
    for outcome in outcomes:
        fix, finding = outcome.finding.fix, outcome.finding
        if (
            outcome.status == APPLIED
            and fix is not None
            and isinstance(fix.data, RenameKeyword)
            and fix.data.call is not None
        ):
            key = (finding.location.path, fix.data.call, finding.symbol)
            renamed.setdefault(key, {})[fix.data.new] = fix.data.old
    result = []
    for outcome in outcomes:
        finding = outcome.finding
        key = (finding.location.path, (finding.location.line, finding.location.column), finding.symbol)
        if outcome.status != MANUAL or key not in renamed:
            result.append(outcome)
            continue
        wanted = [p.name for p in manual_parameters(finding)]
        supplied = tuple(name for name in wanted if name in renamed[key])
        if supplied and len(supplied) == len(wanted):
            how = ", ".join(f"`{renamed[key][name]}=` to `{name}=`" for name in supplied)
            result.append(Outcome(finding, RESOLVED, f"the rename of {how} passes it", supplied))
        else:
            result.append(Outcome(finding, MANUAL, outcome.reason, supplied))
    return result


def _fix_file(root: Path, path: str, findings: list[Finding]) -> tuple[FileChange | None, list[Outcome]]:
    def failed(reason: str) -> tuple[None, list[Outcome]]:
        return None, [Outcome(f, NOT_APPLIED, reason) for f in findings]

    target = root / path
    if target.is_symlink() or not _within(target.resolve(), root.resolve()):
        return failed("the file is a symbolic link or lies outside the tree: not edited")
    if path.endswith(".ipynb"):
        return _fix_notebook(target, path, findings)
    try:
        data = target.read_bytes()
        text = decode_source(data)
    except OSError as error:
        return failed(f"cannot read {path}: {error.strerror or error}")
    except SourceDecodeError as error:
        return failed(f"cannot decode {path}: {error}")
    encoding = source_encoding(data)
    lines = text.splitlines()
    fresh = []
    outcomes: dict[int, Outcome] = {}
    for finding in findings:
        line = finding.location.line
        if not 0 < line <= len(lines) or lines[line - 1] != finding.location.source_line:
            outcomes[id(finding)] = Outcome(finding, NOT_APPLIED, "the file changed since the audit")
        else:
            fresh.append(finding)
    try:
        fixes = apply_fixes(text, fresh)
    except cst.ParserSyntaxError as error:
        return failed(f"LibCST cannot parse {path}: {first_line(error, strip=False)}")
    after = fixes.code
    for finding, reason, value in zip(fresh, fixes.reasons, fixes.dropped_values):
        if reason is None:
            unsafe = finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
            outcomes[id(finding)] = Outcome(
                finding, APPLIED, unsafe_consequence(finding, value) if unsafe else None
            )
        else:
            outcomes[id(finding)] = Outcome(finding, NOT_APPLIED, reason)
    ordered = [outcomes[id(f)] for f in findings]
    if after == text:
        return None, ordered
    problem = _compile_problem(text, after, path)
    if problem is not None:
        return None, [Outcome(o.finding, NOT_APPLIED, problem) if o.status == APPLIED else o for o in ordered]
    return FileChange(path, text, after, encoding), ordered


def _fix_notebook(
    target: Path, path: str, findings: list[Finding]
) -> tuple[FileChange | None, list[Outcome]]:
    """A notebook's fixes, cell by cell (`fix.notebooks`)."""
    from apidrift.auditor.fix.notebooks import NotebookError, fix_notebook

    def failed(reason: str) -> tuple[None, list[Outcome]]:
        return None, [Outcome(f, NOT_APPLIED, reason) for f in findings]

    try:
        data = target.read_bytes()
        fixed = fix_notebook(data, findings, apply_fixes, _compile_problem, path)
    except OSError as error:
        return failed(f"cannot read {path}: {error.strerror or error}")
    except NotebookError as error:
        return failed(f"cannot read {path} as a notebook: {error}")
    except cst.ParserSyntaxError as error:
        return failed(f"LibCST cannot parse a cell of {path}: {first_line(error, strip=False)}")
    outcomes = []
    for finding, reason, value in zip(findings, fixed.reasons, fixed.values):
        if reason is None:
            unsafe = finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
            outcomes.append(Outcome(finding, APPLIED, unsafe_consequence(finding, value) if unsafe else None))
        else:
            outcomes.append(Outcome(finding, NOT_APPLIED, reason))
    if fixed.after is None:
        return None, [
            Outcome(o.finding, NOT_APPLIED, "no edit") if o.status == APPLIED else o for o in outcomes
        ]
    encoding = "utf-8-sig" if data.startswith(b"\xef\xbb\xbf") else "utf-8"
    return FileChange(path, fixed.before, fixed.after, encoding), outcomes


def source_encoding(data: bytes) -> str:
    """The encoding to write a file back in: its PEP 263 cookie or BOM, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        return "utf-8"
    return encoding


def _compile_problem(before: str, after: str, path: str) -> str | None:
    """CPython's parser as the judge: a file it took before must still parse after the edits."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. SyntaxWarning for invalid escapes: not ours to report
        try:
            ast.parse(before, path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # newer syntax than this Python's, or not parseable here: LibCST is the only judge
        try:
            ast.parse(after, path)
        except (SyntaxError, ValueError) as error:
            return f"the fixed file would not parse ({error}); left unchanged"
    return None


def unsafe_consequence(finding: Finding, value: str | None = None) -> str:
    """What an unsafe fix changes, said to the user (never written into the code)."""
    fix = finding.fix
    if fix is not None and isinstance(fix.data, RemoveKeyword):
        callee = finding.message.split(" ", 1)[0]
        name = fix.data.name
        what = f"`{_shorten(value)}` (passed as `{name}=`)" if value else f"the value passed as `{name}=`"
        return (
            f"changes behaviour: {callee} no longer receives {what}; "
            f"check how {finding.upstream}'s new version gets what it used to be told"
        )
    if fix is not None and isinstance(fix.data, PositionalToKeyword) and fix.data.dropped:
        callee = finding.message.split(" ", 1)[0]
        names = ", ".join(f"`{name}`" for _, name in fix.data.dropped)
        what = f"`{_shorten(value)}` (passed to {names})" if value else f"the value passed to {names}"
        return (
            f"changes behaviour: {callee} no longer receives {what}; "
            f"check how {finding.upstream}'s new version gets what it used to be told"
        )
    if fix is not None and isinstance(fix.data, MoveImport):
        return (
            f"may change behaviour: `{fix.data.new_module}.{fix.data.name}` is not shown to be the definition "
            f"`{fix.data.module or '?'}.{fix.data.name}` was (its code differs, or cannot be compared)"
        )
    return "changes behaviour: review it"


def _shorten(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- the codemod on one file's text


@dataclass
class FileFixes:
    """The codemod's result on one file: the new text and, per finding in the order given, why its fix
    was not applied (None: applied) and, for a dropped keyword, the source of the value it passed."""

    code: str
    reasons: list[str | None]
    dropped_values: list[str | None]


def apply_fixes(source: str, findings: Sequence[Finding]) -> FileFixes:
    """Apply the edit fixes of `findings` (all in this file) to `source`.

    Raises `libcst.ParserSyntaxError` when LibCST cannot parse `source`.
    """
    reasons: list[str | None] = [None] * len(findings)
    values: list[str | None] = [None] * len(findings)
    if not findings:
        return FileFixes(source, reasons, values)
    wrapper = MetadataWrapper(cst.parse_module(source))
    locator = _Locator()
    wrapper.visit(locator)
    empty = cst.Module([])
    call_edits: dict[cst.Call, dict[int, tuple[str, str]]] = {}
    import_edits: dict[cst.ImportFrom, dict[int, str]] = {}
    import_renames: dict[cst.ImportFrom, dict[int, str]] = {}
    attribute_edits: dict[cst.Attribute, str] = {}
    for number, finding in enumerate(findings):
        fix = finding.fix
        if fix is None or fix.kind not in EDIT_KINDS or isinstance(fix.data, ManualStep):
            reasons[number] = "no fix to apply"
            continue
        where = (finding.location.line, finding.location.column)
        data = fix.data
        if isinstance(data, RenameAttribute):
            attribute = locator.attributes.get((*where, data.old))
            imported = locator.aliases.get((*where, data.old))
            if not data.new.isidentifier():
                reasons[number] = f"`{data.new}` is not a name"
            elif attribute is not None:
                attribute_edits[attribute] = data.new
            elif imported is not None:  # `from m import old` -> `from m import new as old`: uses unchanged
                import_renames.setdefault(imported[0], {})[imported[1]] = data.new
            else:
                reasons[number] = f"no `{data.old}` at {where[0]}:{where[1]} (already fixed?)"
            continue
        if isinstance(data, MoveImport):
            name, new_module = data.name, data.new_module
            found = locator.aliases.get((*where, name))
            module = data.module
            if found is None or (
                module and found[0].module is not None and empty.code_for_node(found[0].module) != module
            ):
                reasons[number] = (
                    f"no import of `{name}` from `{module or '?'}` at {where[0]}:{where[1]} (already fixed?)"
                )
            elif not _is_dotted(new_module):
                reasons[number] = f"`{new_module}` is not a module path"
            else:
                statement, index = found
                import_edits.setdefault(statement, {})[index] = new_module
            continue
        if isinstance(data, PositionalToKeyword):
            call = locator.calls.get(data.call)
            plain = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star] if call else []
            if call is None:
                reasons[number] = f"no call at {data.call[0]}:{data.call[1]} (already fixed?)"
            elif (
                any(a.star == "*" for a in call.args)
                or any(index >= len(plain) or not name.isidentifier() for index, name in data.arguments)
                or any(index >= len(plain) for index, _ in data.dropped)
            ):
                reasons[number] = "the call's positional arguments are not the ones audited (already fixed?)"
            else:
                edits = call_edits.setdefault(call, {})
                for index, name in data.arguments:
                    edits[plain[index]] = ("keyword", name)
                for index, name in data.dropped:
                    edits[plain[index]] = ("remove", name)
                if data.dropped:
                    values[number] = ", ".join(
                        empty.code_for_node(call.args[plain[index]].value) for index, _ in data.dropped
                    )
            continue
        if isinstance(data, ReplaceName):
            if not data.new.isidentifier():
                reasons[number] = f"`{data.new}` is not a name"
            elif data.module is not None:
                found = locator.aliases.get((*where, data.old))
                if found is None or (
                    found[0].module is not None and empty.code_for_node(found[0].module) != data.module
                ):
                    reasons[number] = (
                        f"no import of `{data.old}` from `{data.module}` at {where[0]}:{where[1]} (already fixed?)"
                    )
                else:
                    import_renames.setdefault(found[0], {})[found[1]] = data.new
            else:
                attribute = locator.attributes.get((*where, data.old))
                if attribute is None:
                    reasons[number] = f"no attribute `{data.old}` at {where[0]}:{where[1]} (already fixed?)"
                else:
                    attribute_edits[attribute] = data.new
            continue
        keyword = data.old if isinstance(data, RenameKeyword) else data.name
        found_arg = locator.keywords.get((*where, keyword))
        if found_arg is None:
            reasons[number] = f"no keyword argument `{keyword}=` at {where[0]}:{where[1]} (already fixed?)"
            continue
        call, index = found_arg
        edits = call_edits.setdefault(call, {})
        if isinstance(data, RenameKeyword):
            new = data.new
            passed = {a.keyword.value for a in call.args if a.keyword is not None}
            if not new.isidentifier():
                reasons[number] = f"`{new}` is not a parameter name"
            elif new in passed or ("rename", new) in edits.values():
                reasons[number] = f"the call already passes `{new}=`: merge the two by hand"
            elif data.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD):
                reasons[number] = f"`{new}` is {data.kind.value} now: pass the value by position"
            else:
                edits.setdefault(index, ("rename", new))
        else:
            edits[index] = ("remove", keyword)
            values[number] = empty.code_for_node(call.args[index].value)
    if call_edits or import_edits or import_renames or attribute_edits:
        source = wrapper.module.visit(
            _Rewriter(call_edits, import_edits, import_renames, attribute_edits)
        ).code
    return FileFixes(source, reasons, values)


def _is_dotted(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))


class _Locator(cst.CSTVisitor):
    """Every keyword argument, every imported name and every attribute (`a.b.name`, by the position
    where its expression starts), by the position the scanner reported."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.keywords: dict[tuple[int, int, str], tuple[cst.Call, int]] = {}
        self.aliases: dict[tuple[int, int, str], tuple[cst.ImportFrom, int]] = {}
        self.attributes: dict[tuple[int, int, str], cst.Attribute] = {}
        self.calls: dict[tuple[int, int], cst.Call] = {}

    def visit_Call(self, node: cst.Call) -> None:
        start = self.get_metadata(PositionProvider, node).start
        self.calls.setdefault((start.line, start.column + 1), node)
        for index, arg in enumerate(node.args):
            if arg.keyword is not None and not arg.star:
                start = self.get_metadata(PositionProvider, arg).start
                self.keywords[(start.line, start.column + 1, arg.keyword.value)] = (node, index)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        start = self.get_metadata(PositionProvider, node).start
        self.attributes[(start.line, start.column + 1, node.attr.value)] = node  # the innermost wins

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or isinstance(node.names, cst.ImportStar):
            return
        for index, alias in enumerate(node.names):
            if isinstance(alias.name, cst.Name):
                start = self.get_metadata(PositionProvider, alias.name).start
                self.aliases[(start.line, start.column + 1, alias.name.value)] = (node, index)


class _Rewriter(cst.CSTTransformer):
    def __init__(
        self,
        call_edits: dict[cst.Call, dict[int, tuple[str, str]]],
        import_edits: dict[cst.ImportFrom, dict[int, str]],
        import_renames: dict[cst.ImportFrom, dict[int, str]] | None = None,
        attribute_edits: dict[cst.Attribute, str] | None = None,
    ) -> None:
        super().__init__()
        self.call_edits = call_edits
        self.import_edits = import_edits
        self.import_renames = import_renames or {}
        self.attribute_edits = attribute_edits or {}
        # New imports (with the comments that travel with their names), per enclosing statement line.
        self.pending: list[list[tuple[cst.ImportFrom, list[cst.Comment]]]] = []

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        edits = self.call_edits.get(original_node)
        if not edits:
            return updated_node
        # removals first (a positional argument dropped after one made a keyword would otherwise
        # sit, for a moment, after a keyword: LibCST rejects that), then the edits, shifted
        removed = sorted((i for i, (action, _) in edits.items() if action == "remove"), reverse=True)
        call = updated_node
        for index in removed:
            call = _remove_arg(call, index)
        args = list(call.args)
        for original, (action, name) in edits.items():
            index = original - sum(1 for r in removed if r < original)
            if action == "rename":
                arg = args[index]
                assert arg.keyword is not None
                args[index] = arg.with_changes(keyword=arg.keyword.with_changes(value=name))
            elif action == "keyword":
                args[index] = args[index].with_changes(
                    keyword=cst.Name(name),
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
                    ),
                )
        return call.with_changes(args=args)

    # Statements that may hold an import: new `from new import X` statements go right after them.
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.pending.append([])

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.BaseStatement]:
        added = self.pending.pop()
        if not added:
            return updated_node
        return cst.FlattenSentinel(
            [updated_node, *(_statement_line(statement, comments) for statement, comments in added)]
        )

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.pending.append([])

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        added = self.pending.pop()
        if not added:
            return updated_node
        body = list(updated_node.body)
        body[-1] = body[-1].with_changes(semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated_node.with_changes(
            body=[*body, *(statement for statement, _ in added)]
        )  # one line: no comments

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        new = self.attribute_edits.get(original_node)
        if new is None:
            return updated_node
        return updated_node.with_changes(attr=updated_node.attr.with_changes(value=new))

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
        renames = self.import_renames.get(original_node)
        if renames and not isinstance(updated_node.names, cst.ImportStar):
            names = list(updated_node.names)
            for index, new in renames.items():
                alias = names[index]
                assert isinstance(alias.name, cst.Name)
                # the local name stays: `from m import new as old`, so every use in the file follows
                asname = alias.asname or cst.AsName(name=cst.Name(alias.name.value))
                names[index] = alias.with_changes(name=cst.Name(new), asname=asname)
            updated_node = updated_node.with_changes(names=names)
        edits = self.import_edits.get(original_node)
        if not edits or isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        names = list(updated_node.names)
        groups: dict[str, list[int]] = {}
        for index in sorted(edits):
            groups.setdefault(edits[index], []).append(index)
        statement = updated_node
        if len(edits) == len(names):
            # Every name moves: the statement itself takes the first new module, in place.
            first, *others = groups
            statement = statement.with_changes(module=_dotted_node(first))
            del groups[first]
            moved_away = [i for module in others for i in groups[module]]
        else:
            moved_away = sorted(edits)
        comments: dict[int, cst.Comment] = {}
        for index in sorted(moved_away, reverse=True):
            statement, comment = _remove_alias(statement, index)
            if comment is not None:
                comments[index] = comment  # the comment on a moved name's own line moves with it
        if groups and self.pending:
            self.pending[-1].extend(
                (
                    _import_statement(module, [names[i] for i in indices]),
                    [comments[i] for i in indices if i in comments],
                )
                for module, indices in groups.items()
            )
        return statement


def _dotted_node(dotted: str) -> cst.Attribute | cst.Name:
    node = cst.parse_expression(dotted)
    assert isinstance(node, (cst.Attribute, cst.Name))
    return node


def _statement_line(statement: cst.ImportFrom, comments: list[cst.Comment]) -> cst.SimpleStatementLine:
    """A new import line; one carried comment trails it, several go on their own lines above it."""
    if len(comments) == 1:
        trailing = cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=comments[0])
        return cst.SimpleStatementLine(body=[statement], trailing_whitespace=trailing)
    leading = [cst.EmptyLine(comment=comment) for comment in comments]
    return cst.SimpleStatementLine(body=[statement], leading_lines=leading)


def _import_statement(module: str, aliases: Iterable[cst.ImportAlias]) -> cst.ImportFrom:
    names = [alias.with_changes(comma=cst.MaybeSentinel.DEFAULT) for alias in aliases]
    spaced = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in names[:-1]]
    return cst.ImportFrom(module=_dotted_node(module), names=[*spaced, names[-1]])


# ---- removing one item from a comma-separated, possibly multi-line list, tidily

_Whitespace = cst.BaseParenthesizableWhitespace


def _gap(lead: _Whitespace, trail: _Whitespace, *, closing: bool) -> tuple[_Whitespace, cst.Comment | None]:
    """The whitespace left where an item was, from the whitespace before it (`lead`) and after its
    comma (`trail`); `closing` when the item was the last one, before the closing bracket. Also the
    comment dropped with the item, if any.

    An item on its own line takes its line with it, the comment on that line included; comment
    lines above and below it stay. An item sharing its line with the previous one leaves that line
    (and its comment) as it was. The next item, or the closing bracket, keeps its indentation.
    """
    if isinstance(trail, cst.ParenthesizedWhitespace):
        if isinstance(lead, cst.ParenthesizedWhitespace):
            merged = cst.ParenthesizedWhitespace(
                first_line=lead.first_line,
                empty_lines=[*lead.empty_lines, *trail.empty_lines],
                indent=trail.indent,
                last_line=trail.last_line,
            )
            return merged, trail.first_line.comment
        return trail, None
    if not closing:
        return lead, None
    if isinstance(lead, cst.ParenthesizedWhitespace) and _has_comment_lines(lead):
        # `)` followed the item on its line; the comment lines above it stay, `)` goes on a line of its own
        return lead.with_changes(indent=True, last_line=cst.SimpleWhitespace("")), None
    return trail, None


def _has_comment_lines(whitespace: _Whitespace) -> bool:
    return isinstance(whitespace, cst.ParenthesizedWhitespace) and (
        whitespace.first_line.comment is not None
        or any(line.comment is not None for line in whitespace.empty_lines)
    )


def _remove_arg(call: cst.Call, index: int) -> cst.Call:
    args = list(call.args)
    arg = args.pop(index)
    previous = args[index - 1] if index > 0 else None
    lead = (
        previous.comma.whitespace_after
        if isinstance(previous, cst.Arg) and isinstance(previous.comma, cst.Comma)
        else call.whitespace_before_args
    )
    has_comma = isinstance(arg.comma, cst.Comma)
    trail = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else arg.whitespace_after_arg
    last = index == len(args)
    gap, _ = _gap(lead, trail, closing=last)
    if not args:
        return call.with_changes(
            args=(), whitespace_before_args=gap if _has_comment_lines(gap) else cst.SimpleWhitespace("")
        )
    if previous is None:
        return call.with_changes(args=args, whitespace_before_args=gap)
    if last and not has_comma:  # the previous argument is now the last: it loses its comma
        args[index - 1] = previous.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=gap)
    else:
        assert isinstance(previous.comma, cst.Comma)
        args[index - 1] = previous.with_changes(comma=previous.comma.with_changes(whitespace_after=gap))
    return call.with_changes(args=args)


def _remove_alias(statement: cst.ImportFrom, index: int) -> tuple[cst.ImportFrom, cst.Comment | None]:
    assert not isinstance(statement.names, cst.ImportStar)
    names = list(statement.names)
    alias = names.pop(index)
    assert names, "the last name of an import is never removed"
    previous = names[index - 1] if index > 0 else None
    if previous is not None and isinstance(previous.comma, cst.Comma):
        lead = previous.comma.whitespace_after
    elif statement.lpar is not None:
        lead = statement.lpar.whitespace_after
    else:
        lead = statement.whitespace_after_import
    has_comma = isinstance(alias.comma, cst.Comma)
    if isinstance(alias.comma, cst.Comma):
        trail = alias.comma.whitespace_after
    elif statement.rpar is not None:
        trail = statement.rpar.whitespace_before
    else:
        trail = cst.SimpleWhitespace("")
    last = index == len(names)
    gap, dropped = _gap(lead, trail, closing=last)
    if previous is None:
        if statement.lpar is not None:
            return statement.with_changes(
                names=names, lpar=statement.lpar.with_changes(whitespace_after=gap)
            ), dropped
        if not isinstance(gap, cst.SimpleWhitespace) or not gap.value:
            gap = cst.SimpleWhitespace(" ")  # `from x import` needs its space
        return statement.with_changes(names=names, whitespace_after_import=gap), dropped
    if last and not has_comma:
        names[index - 1] = previous.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        if statement.rpar is not None:
            return statement.with_changes(
                names=names, rpar=statement.rpar.with_changes(whitespace_before=gap)
            ), dropped
        return statement.with_changes(names=names), dropped
    if (
        last and statement.rpar is None
    ):  # `from x import a, b,` is not Python: no trailing comma without parentheses
        names[index - 1] = previous.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return statement.with_changes(names=names), dropped
    assert isinstance(previous.comma, cst.Comma)
    names[index - 1] = previous.with_changes(comma=previous.comma.with_changes(whitespace_after=gap))
    return statement.with_changes(names=names), dropped


# ---- writing


def write_changes(result: FixResult) -> list[Path]:
    """Write each changed file in place (atomically, mode kept); only into a local tree."""
    if not result.local:
        raise FixError(f"refusing to write: {result.not_local_reason or 'not a local source tree'}")
    root = result.root.resolve()
    targets = []
    for change in result.changes:  # every check first: a refusal writes nothing at all
        target = result.root / change.path
        if target.is_symlink() or not target.is_file() or not _within(target.resolve(), root):
            raise FixError(f"refusing to write {change.path}: it is not a file inside {result.root}")
        if _current_text(target, change) != change.before:
            raise FixError(f"{change.path} changed since it was read; nothing written, run again")
        targets.append((target, change.after.encode(change.encoding)))
    for target, data in targets:
        atomic_write_bytes(target, data, mode=target.stat().st_mode & 0o7777, suffix=".apidrift-fix")
    return [target for target, _ in targets]


def _current_text(target: Path, change: FileChange) -> str:
    data = target.read_bytes()
    if change.path.endswith(".ipynb"):
        from apidrift.auditor.downstream.notebook import NotebookError, bounded_json

        try:
            return bounded_json(data)
        except NotebookError:
            return ""
    return decode_source(data)


# ---- one safe fix as a GitHub suggestion


@dataclass(frozen=True)
class Suggestion:
    """The lines a safe fix replaces (1-based, inclusive) and the text that replaces them."""

    first: int
    last: int
    text: str
    evidence: str


def suggestion(root: Path, finding: Finding) -> Suggestion | None:
    """A finding's safe fix as the replacement of the lines it changes, for a GitHub suggestion
    block: None when it has no safe fix, the file is not a regular file inside `root`, the fix does
    not apply, or it changes lines in more than one place (a moved import adds a line elsewhere)."""
    fix = finding.fix
    if (
        fix is None
        or fix.applicability is not Applicability.SAFE
        or fix.kind not in EDIT_KINDS
        or finding.guarded
    ):
        return None
    target = root / finding.location.path
    try:
        if target.is_symlink() or not _within(target.resolve(), root.resolve()) or not target.is_file():
            return None
        text = decode_source(target.read_bytes())
    except (OSError, SourceDecodeError):
        return None
    lines = text.splitlines()
    line = finding.location.line
    if not 0 < line <= len(lines) or lines[line - 1] != finding.location.source_line:
        return None
    try:
        fixes = apply_fixes(text, [finding])
    except cst.ParserSyntaxError:
        return None
    if (
        fixes.reasons[0] is not None
        or fixes.code == text
        or _compile_problem(text, fixes.code, "") is not None
    ):
        return None
    after = fixes.code.splitlines()
    hunks = [
        op
        for op in difflib.SequenceMatcher(None, lines, after, autojunk=False).get_opcodes()
        if op[0] != "equal"
    ]
    if len(hunks) != 1 or hunks[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = hunks[0]
    return Suggestion(i1 + 1, i2, "\n".join(after[j1:j2]), fix.evidence or "")


# ---- what a manual step needs the developer to do


def manual_parameters(finding: Finding) -> list[ManualParameter]:
    """The parameters a manual `Fix` asks for."""
    fix = finding.fix
    if fix is None or not isinstance(fix.data, ManualStep):
        return []
    return list(fix.data.parameters)
