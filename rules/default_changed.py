"""## What it does
Finds calls that rely on a parameter's default (they do not pass it) where the default value
changed between the old and the new version. Only literal defaults are compared, so the verdict
is certain.

## Why is this bad?
Nothing raises: the call now behaves differently than when it was written and tested.

## Example
```python
connect(host)  # old: connect(host, timeout=30); new: connect(host, timeout=5)
```

## Fix
Pass the value the code relies on explicitly.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.results import Finding, Severity
from apidrift.auditor.upstream.signature import ParamKind
from apidrift.rules import _calls, _drift
from apidrift.rules.base import Rule

RULE = {
    "code": "AD202",
    "name": "default-changed",
    "severity": Severity.WARNING,
    "summary": "The default of a parameter the call omits changed",
    "family": "drift",
}


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    bound = _drift.both_bound(checked)
    if bound is None:
        return
    old_ok, new_ok, old_signature, new_signature = bound
    given_old = {name for _, name in old_ok.assignments}
    given_new = {name for _, name in new_ok.assignments}
    for new_param in new_signature.parameters:
        if new_param.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD) or not new_param.has_default:
            continue
        old_param = old_signature.get(new_param.name)
        if old_param is None or not old_param.has_default:
            continue
        if new_param.name in given_new or old_param.name in given_old:
            continue
        if "..." in (old_param.default, new_param.default):
            continue  # a stub's placeholder: the value is the implementation's, not known here
        old_ok_literal, old_value = _drift.literal(old_param.default)
        new_ok_literal, new_value = _drift.literal(new_param.default)
        if not (old_ok_literal and new_ok_literal) or (old_value == new_value and type(old_value) is type(new_value)):
            continue
        yield rule.finding(
            checked,
            f"{_calls.display(checked)}: the default of `{new_param.name}` changed from {old_param.default} "
            f"to {new_param.default} in {checked.new.version}",
            symbol=_calls.callee(checked),
            hint=f"pass `{new_param.name}={old_param.default}` to keep the old behaviour",
        )
