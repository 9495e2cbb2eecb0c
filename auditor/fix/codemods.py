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

The package, by job: `planning` (which fixes, from the findings: each finding's outcome, each file's
fixed text, the follow-up audits of the fixed text), `rewriting` (the LibCST transforms, pure: text in,
text out), `writing` (where apidrift may write, and the atomic write of the changed files) and `model`
(outcomes, changes, the result). This module runs the whole thing (`run_fix`: audit, then plan) and
keeps every name importable from here.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from apidrift.auditor.core.results import AuditResult
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
    FixError,
    FixResult,
    Outcome,
)
from apidrift.auditor.fix.planning import (
    MAX_ROUNDS,
    UNFIXED_NAMES,
    Suggestion,
    follow_up,
    manual_parameters,
    plan_fixes,
    suggestion,
    undeclared_imports,
    unsafe_consequence,
    with_evidence_of_the_last_release,
)
from apidrift.auditor.fix.rewriting import FileFixes, apply_fixes
from apidrift.auditor.fix.writing import not_local_reason, source_encoding, write_changes

if TYPE_CHECKING:
    from apidrift.auditor.engine import AuditRequest


def run_fix(request: AuditRequest, *, unsafe: bool = False) -> FixResult:
    """Audit `request` and plan the fixes of its findings; writes nothing. The downstream is located
    once: the files fixed are the ones audited."""

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


__all__ = [
    "APPLIED",
    "EDIT_KINDS",
    "GUARDED",
    "MANUAL",
    "MAX_ROUNDS",
    "NEEDS_UNSAFE",
    "NOT_APPLIED",
    "NO_FIX",
    "RESOLVED",
    "UNFIXED_NAMES",
    "FileChange",
    "FileFixes",
    "FixError",
    "FixResult",
    "Outcome",
    "Suggestion",
    "apply_fixes",
    "follow_up",
    "manual_parameters",
    "not_local_reason",
    "plan_fixes",
    "run_fix",
    "source_encoding",
    "suggestion",
    "undeclared_imports",
    "unsafe_consequence",
    "with_evidence_of_the_last_release",
    "write_changes",
]
