"""## What it does
Finds assignments `x.name = value` on an instance of an upstream class whose attribute `name` became a
`property` without a setter, or whose class (with every class it inherits from) now lists `__slots__`
without `name`, where the old version let the instance hold the name (an instance attribute, a plain
class attribute, a property with a setter, or no such name on a class with a `__dict__`).

## Why is this bad?
CPython runs the property's `__set__`, which raises `AttributeError: property 'name' of 'Cls' object
has no setter` when the assignment runs (click 8.2.0 made `Context.protected_args` such a property:
click-repl 0.3.0's `group_ctx.protected_args = args` fails at once); an instance without a `__dict__`
raises `AttributeError: 'Cls' object has no attribute 'name'`.

## Example
```python
ctx = Context(command)
ctx.protected_args = ["run"]
```

## Fix
Set what the property reads instead (the upstream's setter-less properties usually read another
attribute or are computed), or stop assigning it.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.refs import AttrRef
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.READ_ONLY_ATTRIBUTE_ASSIGNED,
    name="read-only-attribute-assigned",
    severity=Severity.ERROR,
    family=Family.NAMES,
    summary="Assignment to an attribute of an upstream instance that became a property without a setter",
    since="0.1.0",
    raises="AttributeError",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    site, new, old = checked.site, checked.new, checked.old
    if site.kind is not SiteKind.STORE or not isinstance(site.ref, AttrRef):
        return
    if new.read_only is None and new.slots is None:
        return
    if old is not None:
        if old.read_only is not None or old.slots is not None or old.unknown is not None:
            return  # read-only before too (not this upgrade's doing), or not known to be settable then
        before = f"it could be set in {old.version}"
    elif not new.exact:
        return  # an instance known by its annotation only: a subclass may define a setter
    else:
        before = None
    name = site.ref.name
    hint = f"{before}; " if before else ""
    if new.read_only is not None:
        owner = new.read_only.rpartition(".")[0]
        message = f"`{owner}.{name}` is a property without a setter in {new.version}: assigning it raises AttributeError"
        hint += f"set what the property reads instead, or stop assigning `{name}`"
        symbol = new.read_only
    else:
        message = (
            f"`{new.slots}` instances have `__slots__` without `{name}` in {new.version}: "
            "assigning it raises AttributeError"
        )
        hint += f"keep `{name}` elsewhere (a mapping of your own, or a subclass)"
        symbol = f"{new.slots}.{name}"
    yield rule.finding(checked, message, symbol=symbol, hint=hint)
