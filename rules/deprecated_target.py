"""## What it does
Finds uses of upstream functions, classes, methods and properties that the target version
deprecates (PEP 702 `@deprecated`, `warnings.warn(..., DeprecationWarning)` at the top of the body,
or a `.. deprecated::` docstring directive), and names a module serves through its `__getattr__`
with a warning (a deprecation shim), and quotes the upstream's message.

## Why is this bad?
It works today, and breaks in a coming release; the message usually names the replacement.

## Example
```python
request.eos_token_id  # "Request.eos_token_id will be removed in v0.18. Please use ..."
```

## Fix
Move to the replacement the message names.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.bind import Ok, bind
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.refs import AttrRef, ModuleRef
from apidrift.auditor.core.results import Applicability, Finding, Fix, FixKind, MoveImport, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.auditor.upstream.resolve import (
    AttributeValue,
    ClassValue,
    FunctionValue,
    ServedValue,
    value_path,
)
from apidrift.rules import _names
from apidrift.rules.base import Family, FixOffer, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.DEPRECATED_TARGET,
    name="deprecated-target",
    severity=Severity.WARNING,
    family=Family.DRIFT,
    summary="Use of an upstream object the target version deprecates",
    since="0.1.0",
    fixes=(
        FixOffer(
            FixKind.REPLACE_NAME,
            Applicability.SAFE,
            "the deprecation message names the replacement, it resolves where the name is and takes the same uses",
        ),
        FixOffer(
            FixKind.MOVE_IMPORT,
            Applicability.SAFE,
            "a module __getattr__ serves the name with a warning by handing back another module's object itself: imported from there",
        ),
    ),
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    value = checked.new.resolution
    if checked.site.kind is SiteKind.OVERRIDE:
        return
    if isinstance(value, ServedValue):  # served by a module `__getattr__` with a warning
        message = value.deprecated
    elif isinstance(value, (FunctionValue, ClassValue, AttributeValue)):
        message = value.info.deprecated
        if not message and isinstance(value, FunctionValue):
            message = _overload_deprecation(value, checked)
    else:
        return
    if not message:
        return
    path = value_path(value)
    yield rule.finding(
        checked,
        f"`{path}` is deprecated in {checked.new.version}: {message}",
        symbol=path,
        hint=_hint(checked),
        fix=_fix(checked),
    )


def _overload_deprecation(value: FunctionValue, checked: CheckedSite) -> str | None:
    """The deprecation of a call whose every binding overload is deprecated (`files(package=x)` in
    Python 3.12+: only the overload taking the old keyword is)."""
    info, shape = value.info, checked.site.shape
    if not info.overload_deprecations or shape is None or checked.site.kind is not SiteKind.CALL:
        return None
    target = checked.new.target  # its overloads as the call sees them (`self` bound for a method)
    signatures = target.alternatives if target is not None else ()
    if len(signatures) != len(info.overload_deprecations):
        return None
    bound = [
        message
        for signature, message in zip(signatures, info.overload_deprecations)
        if isinstance(bind(shape, signature), Ok)
    ]
    return bound[0] if bound and all(bound) else None


def _hint(checked: CheckedSite) -> str:
    replacement = checked.new.replacement
    value = checked.new.resolution
    target = checked.new.served_from or (value.target if isinstance(value, ServedValue) else None)
    if replacement is None and target:
        return f"use `{target}` instead: the module's `__getattr__` hands back that very object"
    if replacement is None:
        return "move to the replacement the deprecation names"
    return f"use `{replacement.name}` instead: {replacement.evidence}"


def _fix(checked: CheckedSite) -> Fix | None:
    ref = checked.site.ref
    if not isinstance(ref, AttrRef):
        return None
    module = (
        ref.base.path if checked.site.kind is SiteKind.IMPORT and isinstance(ref.base, ModuleRef) else None
    )
    return _names.replacement_fix(checked, ref.name, module) or _served_from(checked, ref.name, module)


def _served_from(checked: CheckedSite, name: str, module: str | None) -> Fix | None:
    """`from click.parser import split_arg_string`, which click 8.2's `click.parser.__getattr__` serves
    with a warning by handing back `click.shell_completion.split_arg_string` itself: import it from
    there (the same object, so the same behaviour, without the warning)."""
    value = checked.new.resolution
    target = checked.new.served_from or (value.target if isinstance(value, ServedValue) else None)
    if module is None or not target:
        return None
    home, _, served = target.rpartition(".")
    if served != name or not home or home == module:
        return None
    return Fix(
        FixKind.MOVE_IMPORT,
        Applicability.SAFE,
        f"import `{name}` from `{home}`",
        MoveImport(name, home, module),
        evidence=(
            f"{checked.new.version}'s `{module}.__getattr__` hands back `{target}` itself for `{name}`,"
            f" with the warning \u201c{_deprecation(value)}\u201d"
        ),
    )


def _deprecation(value: object) -> str | None:
    if isinstance(value, ServedValue):
        return value.deprecated
    return getattr(getattr(value, "info", None), "deprecated", None)
