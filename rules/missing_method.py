"""## What it does
Finds attribute uses and method calls on an instance of a known upstream class (built by a
constructor call, or typed by an annotation) that the class no longer has, through all its bases.

## Why is this bad?
`obj.method(...)` raises `AttributeError` when it runs.

## Example
```python
scheduler = Scheduler(...)
scheduler.removed_method()
```

## Fix
Call the method's replacement on the new class.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.downstream.sites import SiteKind
from apidrift.auditor.results import Finding, Severity
from apidrift.rules import _names
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code="AD004",
    name="missing-method",
    severity=Severity.ERROR,
    family=Family.NAMES,
    summary="Method or attribute missing on an instance of an upstream class",
    since="0.1.0",
    raises="AttributeError",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    missing = _names.miss(checked)
    if missing is None or checked.site.kind is SiteKind.IMPORT or missing.owner_kind != "instance":
        return
    yield rule.finding(
        checked,
        f"`{missing.owner}` instances have no attribute `{missing.name}` in {checked.new.version}",
        symbol=_names.missing_path(missing),
        hint=_names.hint(
            checked, missing, f"`{missing.owner}` no longer defines `{missing.name}` (nor do its bases)"
        ),
        fix=_names.rename_fix(checked, missing),
    )
