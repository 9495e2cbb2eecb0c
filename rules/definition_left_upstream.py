"""## What it does
Finds uses of a class attribute or method that the old version's upstream classes defined and that
no upstream class in front of an outside base (a standard-library or third-party class the
upstream's class derives from) defines in the target version, such as a test helper that Django
removed from its `TestCase` classes, which derive from `unittest.TestCase`. Also a method gone from
every class of an instance whose class answers unknown names itself (`__getattr__`, or attributes it
writes into its instances at run time), such as pandas 2.0's `DataFrame.append`, which only
`NDFrame.__getattr__` (serving columns by name) could still answer.

## Why is this bad?
The name now resolves only if the outside base happens to define it. apidrift does not read that
base, so it cannot say for certain: if the base does not define the name, the access raises
`AttributeError`; if it does, the call now runs the base's version, with its own signature and
behaviour.

## Example
```python
from django.test import TestCase

class T(TestCase):
    def test_it(self):
        self.assertQuerysetEqual(qs, values)  # removed from Django's test cases in 5.1
```

## Fix
Use the replacement the upstream names (here `assertQuerySetEqual`), or confirm that the outside
base provides the name and suppress the finding.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.refs import AttrRef
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.upstream.resolve import FunctionValue, ServedValue
from apidrift.rules import _names
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.DEFINITION_LEFT_UPSTREAM,
    name="definition-left-upstream",
    severity=Severity.WARNING,
    family=Family.DRIFT,
    summary=(
        "A class attribute the upstream defined before now comes only from an outside base, or only from"
        " the class's own `__getattr__` (pandas 2.0's `DataFrame.append`), if at all"
    ),
    since="0.1.0",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    new, old, ref = checked.new, checked.old, checked.site.ref
    if (
        (new.beyond_upstream is None and new.run_time_only is None)
        or old is None
        or not isinstance(ref, AttrRef)
    ):
        return
    if old.unknown is not None or old.missing is not None:
        return  # the old version did not define it for certain either
    before = getattr(old.resolution, "path", None)
    if (
        not isinstance(before, str)
        or not before.endswith(f".{ref.name}")
        or isinstance(old.resolution, ServedValue)
    ):
        return
    what = "method" if isinstance(old.resolution, FunctionValue) else "attribute"
    deprecated = _names.old_deprecation(checked)
    if new.run_time_only is not None:
        # `df.append(...)` on pandas 2.0: gone from every class, only `NDFrame.__getattr__` (which
        # serves columns by name) could answer it
        only = f"only {new.run_time_only} could still answer it"
        otherwise = f"use its replacement; the name resolves now only if {new.run_time_only} provide it"
    else:
        only = f"only `{new.beyond_upstream}`, outside {checked.upstream}, could still provide it"
        otherwise = f"use its replacement, or check that `{new.beyond_upstream}` provides `{ref.name}`"
    yield rule.finding(
        checked,
        f"{what} `{ref.name}` ({before} in {old.version}) is defined by no {checked.upstream} class in"
        f" {new.version}; {only}",
        symbol=before,
        hint=f"{old.version} deprecated it: \u201c{deprecated}\u201d" if deprecated else otherwise,
    )
