"""## What it does
Finds calls that pass more positional arguments than the target version's signature takes.

## Why is this bad?
The call raises `TypeError: takes N positional arguments but M were given` when it runs.

## Example
```python
load(path, True)  # the new version made the second parameter keyword-only
```

## Fix
Pass the extra arguments by keyword, under the names the new signature gives them.
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
    code=RuleCode.TOO_MANY_POSITIONAL,
    name="too-many-positional",
    severity=Severity.ERROR,
    family=Family.CALLS,
    summary="Call passes more positional arguments than the callee takes",
    since="0.1.0",
    fixes=(
        FixOffer(
            FixKind.POSITIONAL_TO_KEYWORD,
            Applicability.SAFE,
            "the old binding names the parameter each surplus argument went to, the new version takes it by keyword only, and the converted call binds",
        ),
        FixOffer(FixKind.POSITIONAL_TO_KEYWORD, Applicability.SAFE, _calls.DROP_DEFAULT_OFFER_TEXT),
        FixOffer(FixKind.POSITIONAL_TO_KEYWORD, Applicability.UNSAFE, _calls.DROP_OFFER_TEXT),
    ),
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    problem = _calls.problem(checked, ProblemKind.TOO_MANY_POSITIONAL)
    if problem is None:
        return
    counts = ""
    if problem.given is not None and problem.accepted is not None:
        counts = f": takes {problem.accepted}, {problem.given} given"
    yield rule.finding(
        checked,
        f"{_calls.display(checked)} gets too many positional arguments in {checked.new.version}{counts}",
        symbol=_calls.callee(checked),
        hint=_hint(checked),
        fix=_fix(checked),
    )


def _hint(checked: CheckedSite) -> str:
    converted = _calls.keyword_conversion(checked)
    if converted is None:
        return "pass the surplus arguments by keyword"
    return "pass " + ", ".join(f"argument {i + 1} as `{name}=`" for i, name in converted[0])


def _fix(checked: CheckedSite) -> Fix | None:
    converted = _calls.keyword_conversion(checked)
    return _calls.keyword_fix(checked, converted)
