"""## What it does
Finds `from module import name` where the upstream module no longer defines `name`, and names a
downstream module gets only from `from module import *` when the module no longer exports them.

## Why is this bad?
The import raises `ImportError: cannot import name ...` when the importing module loads.

## Example
```python
from vllm.v1.core.kv_cache_utils import removed_helper
```

## Fix
Import the name from where it lives now, or use its replacement.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Applicability, Finding, Fix, FixKind, MoveImport, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.auditor.upstream.resolve import Missing
from apidrift.rules import _names
from apidrift.rules.base import Family, FixOffer, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.MISSING_IMPORT_NAME,
    name="missing-import-name",
    severity=Severity.ERROR,
    family=Family.NAMES,
    summary="Name imported from an upstream module does not exist",
    since="0.1.0",
    raises="ImportError",
    fixes=(
        *_names.RENAME_ATTRIBUTE_OFFERS,
        FixOffer(
            FixKind.MOVE_IMPORT,
            Applicability.SAFE,
            "the new location binds the old definition: a re-export of it, or the same code (as parsed, docstrings aside)",
        ),
        FixOffer(
            FixKind.MOVE_IMPORT,
            Applicability.SAFE,
            "the old version re-exported another distribution's object (jinja2.Markup was markupsafe.Markup): imported from there",
        ),
        FixOffer(
            FixKind.REPLACE_NAME,
            Applicability.SAFE,
            "the upstream's own message names the replacement (a deprecation warning, a module __getattr__), it resolves where the name was and takes the same uses",
        ),
        FixOffer(
            FixKind.MANUAL,
            Applicability.MANUAL,
            "the upstream's own message says what to use instead, but not as a name shown to take the same uses: the step quotes it",
        ),
        FixOffer(
            FixKind.MOVE_IMPORT,
            Applicability.UNSAFE,
            "an object of the same name and kind lives elsewhere, but its code differs: its uses are checked there in the same run",
        ),
    ),
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    missing = _names.miss(checked)
    if missing is not None and missing.owner_kind == "star":
        # `from mod import *` then `name(...)`: nothing else binds `name`, and `mod` no longer exports it
        yield rule.finding(
            checked,
            f"name `{missing.name}` is not defined: `from {missing.owner} import *` does not provide it "
            f"in {checked.new.version}",
            symbol=_names.missing_path(missing),
            hint=_names.hint(
                checked,
                missing,
                f"`{missing.name}` is no longer exported by `{missing.owner}` nor found elsewhere",
            ),
            raises="NameError",
        )
        return
    if missing is None or not _names.is_name_import(checked):
        return
    yield rule.finding(
        checked,
        f"cannot import name `{missing.name}` from `{missing.owner}` ({checked.new.version})",
        symbol=_names.missing_path(missing),
        hint=_names.hint(
            checked,
            missing,
            f"`{missing.name}` is neither defined in `{missing.owner}` any more nor found elsewhere",
        ),
        fix=_fix(checked, missing),
    )


def _fix(checked: CheckedSite, missing: Missing) -> Fix | None:
    """A move to the same definition, else the replacement the upstream names, else the re-export of
    another distribution's object, else a move to an object of the same name (unsafe)."""
    moved = _move(checked, missing.owner, missing.name)
    if moved is not None and moved.applicability is Applicability.SAFE:
        return moved
    return (
        _names.rename_fix(checked, missing)
        or _names.replacement_fix(checked, missing.name, missing.owner)
        or _names.external_fix(checked, missing)
        or moved
        or _names.message_step(checked, missing)
    )


def _move(checked: CheckedSite, module: str, name: str) -> Fix | None:
    relocated = checked.new.relocated
    if not relocated or checked.site.kind is not SiteKind.IMPORT:
        return None
    new_module = relocated[0].rpartition(".")[0]
    evidence = checked.new.relocated_same
    if evidence is None:
        # an object of the same name and kind, but not shown to be the same definition: its uses may
        # need changes there (checked after the move, in the same `apidrift fix` run)
        return Fix(
            FixKind.MOVE_IMPORT,
            Applicability.UNSAFE,
            f"import `{name}` from `{new_module}`: the definition there is not the old one's (review its uses)",
            MoveImport(name, new_module, module),
        )
    return Fix(
        FixKind.MOVE_IMPORT,
        Applicability.SAFE,
        f"import `{name}` from `{new_module}`",
        MoveImport(name, new_module, module),
        evidence=evidence,
    )
