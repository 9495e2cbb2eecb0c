"""## What it does
Finds imports of upstream modules that do not exist in the target version.

## Why is this bad?
`import pkg.gone` or `from pkg.gone import x` raises `ModuleNotFoundError` as soon as the importing
module loads, so nothing in it runs.

## Example
```python
from vllm.engine.old_module import helper  # vllm.engine.old_module was removed
```

## Fix
Import from the module's new location, or guard the import and fall back.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite, MovedName
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.refs import ModuleRef
from apidrift.auditor.core.results import (
    Applicability,
    Finding,
    Fix,
    FixKind,
    MoveImport,
    MoveImports,
    Severity,
)
from apidrift.rules import _names
from apidrift.rules.base import Family, FixOffer, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.MISSING_MODULE,
    name="missing-module",
    severity=Severity.ERROR,
    family=Family.NAMES,
    summary="Imported upstream module does not exist",
    since="0.1.0",
    raises="ModuleNotFoundError",
    fixes=(
        FixOffer(
            FixKind.MOVE_IMPORTS,
            Applicability.SAFE,
            "`from gone import A, B`: every name's new home binds the old definition (a re-export of it, or the same code, as parsed, docstrings aside)",
        ),
        FixOffer(
            FixKind.MOVE_IMPORTS,
            Applicability.UNSAFE,
            "`from gone import A, B`: every name has an object of its name and kind elsewhere, not all shown to be the old definition",
        ),
    ),
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    missing = _names.miss(checked)
    if missing is None or not _names.is_module_import(checked):
        return
    module = _names.missing_path(missing)
    moved = checked.new.moved_names
    stdlib = checked.upstream == "python"
    if moved and not stdlib:
        # `from gone import A, B`: where the names went is what to say, not where a module of the same
        # name is (`griffe.loader` gone, `GriffeLoader` is `griffe.GriffeLoader`)
        hint = _moved_hint(checked, moved)
    else:
        hint = _names.hint(
            checked,
            missing,
            f"`{module}` is no longer in the standard library of {checked.new.version} (typeshed's VERSIONS "
            f"ends its range before it): move to its replacement, or to a distribution that provides it"
            if stdlib
            else f"find where `{module}`'s contents moved in {checked.new.version}, or pin the old version",
        )
        if any(name.homes for name in moved):  # the standard library's: what it still has of that name
            hint += "; " + _moved_hint(checked, moved)
    yield rule.finding(
        checked,
        f"module `{module}` does not exist in {checked.new.version}",
        symbol=module,
        hint=hint,
        fix=_fix(checked, moved),
    )


def _moved_hint(checked: CheckedSite, moved: tuple[MovedName, ...]) -> str:
    """Where each imported name lives now (`A` -> `pkg.A`), whether it is the old definition (as AD002
    says it of one name), and the import to write where every name has a home."""
    proven = checked.old is None
    said = []
    for name in moved:
        if not name.homes:
            said.append(f"`{name.name}` is found nowhere in {checked.new.version}")
            continue
        others = f", also `{'`, `'.join(name.homes[1:3])}`" if len(name.homes) > 1 else ""
        if name.same is not None:
            how = "the same definition"
        elif proven:
            how = "no old version to compare"
        else:
            how = "an object of the same name, but its code is not the old one's: check its uses there"
        said.append(f"`{name.name}` -> `{name.homes[0]}` ({how}{others})")
    hint = f"its names in {checked.new.version}: " + "; ".join(said)
    if all(name.homes for name in moved):
        hint += "; import them as " + "; ".join(
            f"`from {m} import {', '.join(n)}`" for m, n in _by_home(moved).items()
        )
    return hint


def _by_home(moved: tuple[MovedName, ...]) -> dict[str, list[str]]:
    """The names, by the module of their first home (every name has one), in the statement's order."""
    groups: dict[str, list[str]] = {}
    for name in moved:
        groups.setdefault(name.homes[0].rpartition(".")[0], []).append(name.name)
    return groups


def _fix(checked: CheckedSite, moved: tuple[MovedName, ...]) -> Fix | None:
    """Every name of `from gone import ...` moved to its new home: safe where each binds the old
    definition, unsafe where one is only an object of the same name and kind; none where a name is
    found nowhere."""
    ref = checked.site.ref
    if not moved or not isinstance(ref, ModuleRef) or not all(name.homes for name in moved):
        return None
    moves = tuple(MoveImport(n.name, n.homes[0].rpartition(".")[0], ref.path) for n in moved)
    where = "; ".join(
        f"{', '.join(f'`{n}`' for n in names)} from `{module}`" for module, names in _by_home(moved).items()
    )
    data = MoveImports(ref.path, moves)
    if all(name.same is not None for name in moved):
        evidence = "; ".join(name.same or "" for name in moved)
        return Fix(FixKind.MOVE_IMPORTS, Applicability.SAFE, f"import {where}", data, evidence=evidence)
    changed = [f"`{name.name}`" for name in moved if name.same is None]
    which = (
        f"the definition of {changed[0]} there is"
        if len(changed) == 1
        else f"the definitions of {', '.join(changed)} there are"
    )
    return Fix(
        FixKind.MOVE_IMPORTS,
        Applicability.UNSAFE,
        f"import {where}: {which} not shown to be the old one (review the uses)",
        data,
    )
