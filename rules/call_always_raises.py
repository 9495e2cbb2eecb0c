"""## What it does
Finds calls of upstream functions and classes whose body, in the target version, raises on every
call: a placeholder left where a removed function was (`raise InvalidRequestError("The
'sqlalchemy.orm.mapper()' function is removed ...")`), a class kept only to say what replaces it
(`raise NotImplementedError(err_mesg)` in its `__init__`), or a function whose first statement calls a
helper of the same package that always raises. The signature still takes the call; the body does not.
Quotes the upstream's own message.

A method called on an instance is left alone (the instance may be of a subclass that overrides it, as
with an abstract method's `raise NotImplementedError`), and so is a raise that depends on an argument,
a branch, or a name the call does not determine. The `__call__` of an instance of exactly one class is
not: a property whose getter builds it (`return ImageCollection(client=self)`), called as the method it
replaced (docker 2.0's `client.images()`, whose `Collection.__call__` raises TypeError).

## Why is this bad?
The call binds, so nothing in its signature shows the break; it raises when it runs.

## Example
```python
from scipy.interpolate import interp2d
f = interp2d(x, y, z)  # scipy 1.14: NotImplementedError: `interp2d` has been removed in SciPy 1.14.0.
```

## Fix
Move to the replacement the message names.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.refs import AttrRef
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.auditor.upstream.resolve import AttributeValue, FunctionValue, InstanceValue
from apidrift.rules import _calls
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.CALL_ALWAYS_RAISES,
    name="call-always-raises",
    severity=Severity.ERROR,
    family=Family.CALLS,
    summary="Call of an upstream function or class whose body raises on every call",
    since="0.1.0",
)

_MESSAGE_LENGTH = 300  # characters of the upstream's message quoted


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    raised = checked.new.always_raises
    if checked.site.kind is not SiteKind.CALL or raised is None or not checked.new.certain:
        return
    if checked.new.raises is not None:
        return  # a guard on the arguments raises first (AD107): one break, one finding
    exception = (raised.exception or "").rsplit(".", 1)[-1]
    message = " ".join((raised.message or "").split())
    if len(message) > _MESSAGE_LENGTH:
        message = message[: _MESSAGE_LENGTH - 1] + "\u2026"
    said = f": {message!r}" if message else ""
    where, _, line = raised.where.rpartition(":")
    builtin = getattr(builtins, raised.builtin or "", None)
    raises = raised.builtin if isinstance(builtin, type) and issubclass(builtin, BaseException) else None
    served = _instance_called(checked)
    if served is not None:
        yield rule.finding(
            checked,
            f"{served}: calling it always raises {exception}{said} (`{where}`, line {line})",
            symbol=_calls.callee(checked),
            hint=_instance_hint(checked),
            raises=raises,
        )
        return
    yield rule.finding(
        checked,
        f"{_calls.display(checked)} always raises {exception} in {checked.new.version}{said}"
        f" (`{where}`, line {line})",
        symbol=_calls.callee(checked),
        hint="move to the replacement the message names"
        if message
        else "the upstream no longer supports this call",
        raises=raises,
    )


def _instance_called(checked: CheckedSite) -> str | None:
    """`coll.insert(...)` where `insert` gives an instance (pymongo 4's `Collection.__getattr__` hands
    back a sub-collection for any public name), or is a property whose getter builds one (docker 2.0's
    `client.images`): what the name is now, and what it was."""
    resolution, ref, old = checked.new.resolution, checked.site.ref, checked.old
    built = checked.new.property_value
    if isinstance(resolution, AttributeValue) and built is not None and isinstance(ref, AttrRef):
        # docker 2.0's `client.images()`: `images` is a property whose getter builds an `ImageCollection`
        said = f"`{ref.name}` is a property giving a `{built.rpartition('.')[2]}` (`{built}`) in {checked.new.version}"
        if old is not None and isinstance(old.resolution, FunctionValue):
            said += f", no longer the method `{old.resolution.path}` of {old.version}"
        return said
    if not isinstance(resolution, InstanceValue) or not isinstance(ref, AttrRef):
        return None
    said = f"`{ref.name}` gives a `{resolution.cls.name}` (`{resolution.cls.path}`) in {checked.new.version}"
    if old is not None and isinstance(old.resolution, FunctionValue):
        said += f", no longer the method `{old.resolution.path}` of {old.version}"
    return said


def _instance_hint(checked: CheckedSite) -> str:
    old = checked.old
    deprecated = (
        old.resolution.info.deprecated
        if old is not None and isinstance(old.resolution, (FunctionValue, AttributeValue))
        else None
    )
    if deprecated:
        return f"{old.version} deprecated it: \u201c{deprecated}\u201d" if old else ""
    return "the method is gone: use its replacement"
