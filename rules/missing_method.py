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
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.auditor.upstream.resolve import ExternalValue, Missing
from apidrift.rules import _names
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.MISSING_METHOD,
    name="missing-method",
    severity=Severity.ERROR,
    family=Family.NAMES,
    summary="Method or attribute missing on an instance of an upstream class",
    since="0.1.0",
    raises="AttributeError",
    fixes=(*_names.RENAME_ATTRIBUTE_OFFERS,),
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    missing = _names.miss(checked)
    if missing is None or checked.site.kind is SiteKind.IMPORT or missing.owner_kind != "instance":
        return
    if missing.owner.startswith("builtins."):  # the value's type changed, not the builtin type
        kind = missing.owner.removeprefix("builtins.")
        before = _builtin_before(checked, missing)
        was = f" (it was {before})" if before else ""
        yield rule.finding(
            checked,
            f"the value is a `{kind}` in {checked.new.version}{was}, and `{kind}` has no attribute `{missing.name}`",
            symbol=_names.missing_path(missing),
            hint=f"the upstream changed what it returns (or annotates) here: adapt the code to a `{kind}`",
        )
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


def _builtin_before(checked: CheckedSite, missing: Missing) -> str | None:
    """What the old version's value was where the new one is a builtin that lacks the name:
    `builtins.bytes.decode` existed -> "a `bytes`"."""
    old = checked.old
    if old is None or not isinstance(old.resolution, ExternalValue):
        return None
    owner = old.resolution.path.rpartition(".")[0]
    return f"a `{owner.removeprefix('builtins.')}`" if owner.startswith("builtins.") else None
