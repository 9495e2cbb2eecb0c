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
from apidrift.auditor.core.results import Applicability, Finding, Fix, FixKind, Severity
from apidrift.rules import _calls
from apidrift.rules.base import Family, FixOffer, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.ARGUMENT_GIVEN_TWICE,
    name="argument-given-twice",
    severity=Severity.ERROR,
    family=Family.CALLS,
    summary="Call gives one parameter both a positional and a keyword value",
    since="0.1.0",
    fixes=(
        FixOffer(
            FixKind.POSITIONAL_TO_KEYWORD,
            Applicability.SAFE,
            "the old binding names the parameter each argument from the first one the new version places "
            "elsewhere went to, the new version has a parameter of each name taking a keyword, and the "
            "converted call binds",
        ),
        FixOffer(FixKind.POSITIONAL_TO_KEYWORD, Applicability.SAFE, _calls.DROP_DEFAULT_OFFER_TEXT),
        FixOffer(FixKind.POSITIONAL_TO_KEYWORD, Applicability.UNSAFE, _calls.DROP_OFFER_TEXT),
    ),
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
        fix=_fix(checked),
    )


def _fix(checked: CheckedSite) -> Fix | None:
    first = _calls.first_moved_position(checked)
    converted = _calls.remap_conversion(checked, first) if first is not None else None
    return _calls.keyword_fix(checked, converted)
