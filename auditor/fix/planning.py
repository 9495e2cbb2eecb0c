"""Which fixes, from the findings: each finding's outcome (applied, unsafe, manual, guarded, not
applied and why), each file's fixed text (read from the tree, rewritten by `rewriting`, judged by
CPython's parser), the follow-up audits of the fixed text, the last release's evidence for a name
gone, and one safe fix as a GitHub suggestion. Nothing is written.
"""

from __future__ import annotations

import ast
import difflib
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import libcst as cst
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import Version

from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import (
    Applicability,
    AuditResult,
    Finding,
    FixKind,
    ManualParameter,
    ManualStep,
    MoveImport,
    MoveImports,
    PositionalToKeyword,
    RemoveKeyword,
    RenameKeyword,
    ReplaceName,
)
from apidrift.auditor.core.wording import first_line, plural
from apidrift.auditor.engine import audit, locate_inputs
from apidrift.auditor.fix.model import (
    APPLIED,
    EDIT_KINDS,
    GUARDED,
    MANUAL,
    NEEDS_UNSAFE,
    NO_FIX,
    NOT_APPLIED,
    RESOLVED,
    FileChange,
    FixResult,
    Outcome,
)
from apidrift.auditor.fix.notebooks import NotebookError, fix_notebook
from apidrift.auditor.fix.rewriting import apply_fixes
from apidrift.auditor.fix.writing import _within, source_encoding
from apidrift.auditor.pysource import SourceDecodeError, decode_source
from apidrift.auditor.sources.import_names import guessed_names, provides
from apidrift.auditor.sources.index_client import IndexClient

if TYPE_CHECKING:
    from apidrift.auditor.engine import AuditRequest

UNFIXED_NAMES = (
    RuleCode.MISSING_IMPORT_NAME,
    RuleCode.MISSING_ATTRIBUTE,
    RuleCode.MISSING_METHOD,
)  # a name gone: its replacement may be named by a release between


def with_evidence_of_the_last_release(
    request: AuditRequest, inputs: Any, result: AuditResult
) -> tuple[AuditResult, list[str]]:
    """Where names the downstream uses are gone and neither version says what replaced them, the
    last release before the target may (Jinja2 3.0.3's `contextfunction` warns that it "is renamed to
    'pass_context'"; 2.11.3 did not deprecate it, 3.1.0 removed it). The downstream is audited again
    with that release as the version written for, and a finding of the same file, rule and message
    takes the fix found there, its evidence naming that release. Only between two releases of the
    index, one release more; anything that fails leaves the result as it was."""

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
    seen: set[str] = set()
    for outcome in fixed.with_status(APPLIED):
        fix = outcome.finding.fix
        data = fix.data if fix is not None else None
        modules = (
            [data.new_module]
            if isinstance(data, MoveImport)
            else [move.new_module for move in data.moves]
            if isinstance(data, MoveImports)
            else []
        )
        for module in modules:
            note = _undeclared_note(module, upstream_names, own, old_requires, names, seen)
            if note is not None:
                notes.append(note)
    return notes


def _undeclared_note(
    module: str,
    upstream_names: Sequence[str],
    own: list[str],
    old_requires: Sequence[str],
    names: Callable[[Sequence[str]], list[str]],
    seen: set[str],
) -> str | None:
    """The note for one module a moved import now reads, where the downstream does not declare it."""
    if provides(upstream_names, module):
        return None
    top = module.split(".")[0]
    if top in seen or any(provides(guessed_names(name), module) for name in own):
        return None
    seen.add(top)
    brought = next((name for name in names(old_requires) if provides(guessed_names(name), module)), None)
    by = (
        f"`{brought}` (the old upstream required it)"
        if brought
        else f"the distribution that provides `{top}`"
    )
    return (
        f"the fixed code imports `{top}`, which the downstream does not declare: add {by} to its dependencies"
    )


MAX_ROUNDS = 3  # audits of the fixed text after the first: a moved name's new home, then what it needs


def follow_up(fixed: FixResult, audit_again: Callable[[Path], AuditResult]) -> FixResult:
    """Check the fixed text again, where a fix made names resolve somewhere else (an import moved, a
    name replaced): the uses of a moved class are calls of its new home, whose signature may differ;
    or changed a call's arguments: CPython stops at a call's first error, so a second break of the same
    call (`is_isomorphic(G1, G2, False, rtol=1e-06)`: once `rtol=` is dropped, `False` lands in
    another parameter) is reported only on the fixed text. The changed files are audited again in a private temporary folder; the findings that were not
    there before are planned on the fixed text, in the same run, up to `MAX_ROUNDS` times. Nothing
    is written."""
    for _ in range(MAX_ROUNDS):
        relocating = [
            o
            for o in fixed.outcomes
            if o.status == APPLIED
            and o.finding.fix is not None
            and isinstance(
                o.finding.fix.data,
                (MoveImport, MoveImports, ReplaceName, RemoveKeyword, RenameKeyword, PositionalToKeyword),
            )
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
    if fix is not None and isinstance(fix.data, MoveImports):
        moves = fix.data.moves
        moved = ", ".join(f"`{move.new_module}.{move.name}`" for move in moves)
        which = f"{moved} is not" if len(moves) == 1 else f"not all of {moved} are"
        return (
            f"may change behaviour: {which} shown to be the definition that name had in "
            f"`{fix.data.module}` (the code differs, or cannot be compared)"
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


def manual_parameters(finding: Finding) -> list[ManualParameter]:
    """The parameters a manual `Fix` asks for."""
    fix = finding.fix
    if fix is None or not isinstance(fix.data, ManualStep):
        return []
    return list(fix.data.parameters)
