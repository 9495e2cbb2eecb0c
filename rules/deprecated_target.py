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

from apidrift.auditor.check.bind import Ok, bind
from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.downstream.sites import SiteKind
from apidrift.auditor.results import Finding, Severity
from apidrift.auditor.upstream.resolve import (
    AttributeValue,
    ClassValue,
    FunctionValue,
    ServedValue,
    value_path,
)
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code="AD203",
    name="deprecated-target",
    severity=Severity.WARNING,
    family=Family.DRIFT,
    summary="Use of an upstream object the target version deprecates",
    since="0.1.0",
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
        hint="move to the replacement the deprecation names",
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
