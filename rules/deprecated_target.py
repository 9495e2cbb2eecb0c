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
from apidrift.auditor.downstream.refs import AttrRef, ModuleRef
from apidrift.auditor.downstream.sites import SiteKind
from apidrift.auditor.results import Applicability, Finding, Fix, FixKind, Severity
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
    code="AD203",
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


def _hint(checked: CheckedSite) -> str:
    replacement = checked.new.replacement
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
    return _names.replacement_fix(checked, ref.name, module)
