"""## What it does
Finds calls that pass a positional-only parameter (before `/` in the signature) by keyword.

## Why is this bad?
The call raises `TypeError: got some positional-only arguments passed as keyword arguments`.

## Example
```python
encode(text="hi")  # the new version declares `def encode(text, /)`
```

## Fix
Pass the argument by position.
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
    code=RuleCode.POSITIONAL_ONLY_AS_KEYWORD,
    name="positional-only-as-keyword",
    severity=Severity.ERROR,
    family=Family.CALLS,
    summary="Call passes a positional-only parameter by keyword",
    since="0.1.0",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    problem = _calls.problem(checked, ProblemKind.POSITIONAL_ONLY_AS_KEYWORD)
    if problem is None:
        return
    for name in problem.names:
        yield rule.finding(
            checked,
            f"{_calls.display(checked)} takes `{name}` by position only in {checked.new.version}",
            symbol=_calls.callee(checked),
            span=_calls.keyword_place(checked, name),
            hint=f"pass `{name}` positionally",
        )
