"""## What it does
Finds calls that give one parameter two values: by position and by keyword. This happens when the
target version inserted or reordered parameters so that a positional argument now lands on a
parameter the call also names.

## Why is this bad?
The call raises `TypeError: got multiple values for argument`.

## Example
```python
resize(img, 64, size=32)  # the new version inserted `size` as the second parameter
```

## Fix
Pass the arguments by keyword.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.bind import ProblemKind
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Finding, Severity
from apidrift.rules import _calls
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.ARGUMENT_GIVEN_TWICE,
    name="argument-given-twice",
    severity=Severity.ERROR,
    family=Family.CALLS,
    summary="Call gives one parameter both a positional and a keyword value",
    since="0.1.0",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    problem = _calls.problem(checked, ProblemKind.MULTIPLE_VALUES)
    if problem is None:
        return
    yield rule.finding(
        checked,
        f"{_calls.display(checked)} gets multiple values for {_calls.names(problem.names)} in {checked.new.version}",
        symbol=_calls.callee(checked),
        hint="pass these arguments by keyword",
    )
