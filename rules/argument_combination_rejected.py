"""## What it does
Finds calls that bind but pass (or leave out) arguments in a way the target version's own code
rejects before it does anything else: a guard such as `if names is not no_default and prefix is not
no_default: raise ValueError(...)` or `if epochs is None: raise ValueError(...)` at the top of the
callee (or of a helper of the same module it hands those parameters to unchanged), typically after a
default changed from `None` to a sentinel, or an optional parameter became required in the body.

## Why is this bad?
The call raises the guard's exception (usually `ValueError`) when it runs, although its arguments
still bind.

## Example
```python
pd.read_csv(path, names=None, prefix=None)
# pandas 1.3.0: "Specified named and prefix; you can only specify one."
```

## Fix
Pass only one of the arguments (one that merely repeats the old default can be left out), or pass
the argument the guard requires.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.rules import _calls
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.ARGUMENT_COMBINATION_REJECTED,
    name="argument-combination-rejected",
    severity=Severity.ERROR,
    family=Family.CALLS,
    summary="Call passes a combination of arguments the callee's own guard rejects",
    since="0.1.0",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    raised = checked.new.raises
    if checked.site.kind is not SiteKind.CALL or raised is None or not checked.new.certain:
        return
    guard = raised.guard
    exception = guard.exception.rsplit(".", 1)[-1]
    said = f": {guard.message!r}" if guard.message else ""
    where, _, line = guard.where.rpartition(":")
    parts = []
    if raised.passed:
        parts.append(f"{_listed(raised.passed)} {'is' if len(raised.passed) == 1 else 'are'} passed")
    if raised.omitted:
        parts.append(f"{_listed(raised.omitted)} {'is' if len(raised.omitted) == 1 else 'are'} left out")
    hints = []
    if len(raised.passed) > 1:
        hints.append(
            f"pass only one of {_calls.names(raised.passed)}; an argument that repeats the old default can be left out"
        )
    elif raised.passed:
        hints.append(f"leave out {_calls.names(raised.passed)}")
    if raised.omitted:
        hints.append(f"pass {'one of ' if len(raised.omitted) > 1 else ''}{_calls.names(raised.omitted)}")
    yield rule.finding(
        checked,
        f"{_calls.display(checked)} raises {exception} in {checked.new.version} when {' and '.join(parts)},"
        f" as here{said} (`{where}`, line {line})",
        symbol=_calls.callee(checked),
        hint="; or ".join(hints),
    )


def _listed(names: tuple[str, ...]) -> str:
    if len(names) == 2:
        return f"both {_calls.names(names[:1])} and {_calls.names(names[1:])}"
    if len(names) > 2:
        return f"all of {_calls.names(names)}"
    return _calls.names(names)
