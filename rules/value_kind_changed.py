"""## What it does
Finds uses that still name something that exists, where the upstream changed what kind of value it
is: an attribute (or property) that became a method, a method that became a property or a plain
attribute, and a function that became a coroutine function (`def` -> `async def`).

- An attribute that became a method: a use that needs a value of a kind (arithmetic, an ordering,
  `in`, a conversion such as `int(...)` or `len(...)`, a subscript, an iteration) is an error (a
  bound method there raises TypeError); any other read (a format, `==`, an argument) is a warning: it
  now gives the bound method, not its value, and nothing raises.
- A method that became a property or an attribute whose annotation names a builtin value type
  (`int`, `str`, `list`, ...), or an unannotated property whose getter returns only literals of one
  such type (`return True`): calling it is an error (`TypeError: 'bool' object is not callable`); a
  property of another type is a warning (its value may or may not be callable). The same for an
  attribute or property whose old value was not known to be such a value (it may have been callable,
  as Django 1.11's `is_authenticated` was) and whose new value certainly is. An unannotated property
  whose getter returns `Cls(...)` gives an instance of exactly that class: calling it is an error
  when no class of its MRO defines `__call__`; when its `__call__` always raises (docker 2.0's
  `client.images()`: `Collection.__call__` raises TypeError), AD108 reports the call instead.
- A function that became `async def`: a call whose result is used without `await` is an error (the
  value is a coroutine); a call whose result is dropped is a warning (the coroutine is never awaited:
  the function's body does not run).

## Why is this bad?
Every name and signature stayed the same, so nothing at import or binding time says the code broke;
the value it gets is of another kind, and the program fails later or silently does nothing.

## Example
```python
limit = task.timestamp * 1000  # old: `timestamp: int`; new: `def timestamp(self) -> int`
total = cart.total()           # old: `def total(self)`; new: `@property def total(self) -> int`
data = client.fetch(url)       # old: `def fetch(...)`; new: `async def fetch(...)`
```

## Fix
Call the new method (`task.timestamp()`), read the property without calling it (`cart.total`), or
`await` the coroutine (in an `async def`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.auditor.upstream.callables import TRANSPARENT_DECORATORS
from apidrift.auditor.upstream.resolve import AttributeValue, FunctionValue
from apidrift.rules import _calls
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.VALUE_KIND_CHANGED,
    name="value-kind-changed",
    severity=Severity.ERROR,
    family=Family.DRIFT,
    summary="An attribute became a method, a method a property, or a function a coroutine function",
    since="0.1.0",
)

# Annotations (canonical paths) of values that are certainly not callable.
_NOT_CALLABLE = frozenset(
    f"builtins.{name}"
    for name in (
        "int",
        "float",
        "complex",
        "bool",
        "str",
        "bytes",
        "list",
        "dict",
        "tuple",
        "set",
        "frozenset",
    )
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    old = checked.old
    if old is None:
        return
    before, after = old.resolution, checked.new.resolution
    if checked.new.member_before is not None:  # the old version did not type the value: its class tells
        before = checked.new.member_before
    site = checked.site
    version = checked.new.version
    if site.kind is SiteKind.ATTRIBUTE and _plain_value(before) and _method(after):
        assert isinstance(after, FunctionValue)
        name = after.path.rpartition(".")[2]
        finding = rule.finding(
            checked,
            f"`{name}` is a method in {version}, no longer a value: {_use_words(site.use)}",
            symbol=after.path,
            hint=f"call it: `{site.code.strip()}()`" if site.code else "call the method",
            raises="TypeError" if site.use == "value" else None,
        )
        yield finding if site.use == "value" else replace(finding, severity=Severity.WARNING)
    elif (
        site.kind is SiteKind.CALL
        and isinstance(after, AttributeValue)
        and checked.new.always_raises is None  # its value's `__call__` always raises: AD108 says so
        and (_method(before) or _value_became_not_callable(before, after, checked.new.not_callable))
    ):
        name = after.path.rpartition(".")[2]
        certain = after.info.annotation_path in _NOT_CALLABLE or checked.new.not_callable
        kind = "a property" if after.info.lineno is not None and after.on_instance else "an attribute"
        annotation = _type_words(after, checked.new.property_value if checked.new.not_callable else None)
        finding = rule.finding(
            checked,
            f"`{name}` is {kind}{annotation} in {version}, "
            + ("no longer a method" if _method(before) else "its value no longer callable")
            + ": calling it "
            + ("raises TypeError" if certain else "calls its value"),
            symbol=after.path,
            hint=f"read it without calling: `{_without_call(site.code)}`",
            raises="TypeError" if certain else None,
        )
        yield finding if certain else replace(finding, severity=Severity.WARNING)
    elif (
        site.kind is SiteKind.CALL
        and site.use != "await"
        and isinstance(before, FunctionValue)
        and isinstance(after, FunctionValue)
        and not before.info.is_async
        and after.info.is_async
    ):
        discarded = site.use == "discard"
        finding = rule.finding(
            checked,
            f"{_calls.display(checked)} is a coroutine function in {version}: "
            + (
                "the call gives a coroutine that is never awaited (its body does not run)"
                if discarded
                else "the call gives a coroutine, not its result"
            ),
            symbol=after.path,
            hint="`await` it (inside an `async def`), or run it with `asyncio.run(...)`",
        )
        yield replace(finding, severity=Severity.WARNING) if discarded else finding


def _value_became_not_callable(before: object, after: AttributeValue, not_callable: bool = False) -> bool:
    """An attribute or property whose old value was not known to be a plain builtin value (Django 1.11's
    `is_authenticated` property gives a callable `CallableBool`) and whose new one certainly is (Django
    2.0's `return True`): calling it worked and now raises TypeError."""
    return (
        isinstance(before, AttributeValue)
        and before.info.annotation_path not in _NOT_CALLABLE
        and (after.info.annotation_path in _NOT_CALLABLE or not_callable)
    )


def _type_words(value: AttributeValue, built: str | None = None) -> str:
    if built is not None:  # an unannotated getter's `return Cls(...)`, a class without `__call__`
        return f" giving a `{built.rpartition('.')[2]}` (its getter builds one; no `__call__`)"
    if value.info.annotation:
        return f" of type `{value.info.annotation}`"
    if value.info.annotation_path in _NOT_CALLABLE:  # an unannotated property's literal returns
        return f" of type `{value.info.annotation_path.rpartition('.')[2]}` (its getter returns literals)"
    return ""


def _plain_value(value: object) -> bool:
    """An attribute or property read as a value (not annotated as something callable)."""
    if not isinstance(value, AttributeValue):
        return False
    annotation = value.info.annotation or ""
    return "Callable" not in annotation and "callable" not in annotation


def _method(value: object) -> bool:
    """A plain method read through an instance. A decorator outside the known transparent ones may
    make the name anything (SQLAlchemy 2.0's `@util.ro_non_memoized_property def c(self)` is a
    descriptor giving `c`'s value): such a def is no evidence of a method."""
    return (
        isinstance(value, FunctionValue)
        and value.via == "instance"
        and all(d.path in TRANSPARENT_DECORATORS for d in value.info.decorators)
    )


def _use_words(use: str) -> str:
    if use == "value":
        return "the code uses it as a value of a kind, which a bound method is not (TypeError)"
    if use == "format":
        return "the format now shows the bound method, not its value"
    return "reading it now gives the bound method, not its value"


def _without_call(code: str) -> str:
    """The code with its last call's argument list dropped (`AnonymousUser().is_authenticated()` ->
    `AnonymousUser().is_authenticated`)."""
    text = code.strip()
    if not text.endswith(")"):
        return text
    depth = 0
    for at in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[at], 0)
        if depth == 0:
            return text[:at]
    return text
