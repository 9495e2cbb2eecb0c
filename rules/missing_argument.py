"""## What it does
Finds calls that do not supply a parameter the target version requires (a new parameter without a
default, or a default that was removed), positional or keyword-only.

## Why is this bad?
The call raises `TypeError: missing a required argument` when it runs; for a dataclass-like class
(pydantic, PEP 681), a validation error such as `Field required`.

## Example
```python
Scheduler(vllm_config=c, kv_cache_config=k, structured_output_manager=m)
# vllm 0.16.0 added a required `block_size: int`
```

## Fix
Pass the new parameter.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.bind import ProblemKind
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import (
    Applicability,
    Finding,
    Fix,
    FixKind,
    ManualParameter,
    ManualStep,
    ParameterHistory,
    Severity,
)
from apidrift.auditor.core.signature import Signature
from apidrift.rules import _calls
from apidrift.rules.base import Family, FixOffer, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.MISSING_REQUIRED_ARGUMENT,
    name="missing-required-argument",
    severity=Severity.ERROR,
    family=Family.CALLS,
    summary="Call omits a parameter the callee now requires",
    since="0.1.0",
    fixes=(
        FixOffer(
            FixKind.MANUAL,
            Applicability.MANUAL,
            "a new required parameter: the value is the developer's to choose (its name, annotation and position are given)",
        ),
    ),
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    problem = _calls.problem(checked, ProblemKind.MISSING_ARGUMENT)
    if problem is None or checked.new.target is None:
        return
    signature = checked.new.target.signature
    described = []
    names = [p.name for p in signature.parameters]
    for name in problem.names:
        param = signature.get(name)
        text = f"`{param.render()}`" if param else f"`{name}`"
        index = names.index(name) if name in names else -1
        if index > 0:
            text += f" (after `{names[index - 1]}`)"
        elif index == 0:
            text += " (the first parameter)"
        described.append(text)
    plural = "s" if len(problem.names) > 1 else ""
    yield rule.finding(
        checked,
        f"{_calls.display(checked)} is missing required argument{plural} {_calls.names(problem.names)} "
        f"in {checked.new.version}",
        symbol=_calls.callee(checked),
        hint=f"pass {', '.join(described)}",
        fix=Fix(
            FixKind.MANUAL,
            Applicability.MANUAL,
            f"pass {', '.join(described)} to {_calls.display(checked)}",
            ManualStep(
                _calls.callee(checked),
                tuple(_parameter(checked, signature, names, n) for n in problem.names),
            ),
        ),
    )


def _parameter(checked: CheckedSite, signature: Signature, names: list[str], name: str) -> ManualParameter:
    """Name, annotation, 1-based position as the call sees it, kind, the parameter before it, and what it
    was in the old version: "new" (absent), "had-default" (its default was removed), "required" or None."""
    param = signature.get(name)
    index = names.index(name) if name in names else -1
    before: ParameterHistory | None = None
    old = checked.old
    if old is not None and old.target is not None:
        was = old.target.signature.get(name)
        before = "new" if was is None else "had-default" if was.has_default else "required"
    return ManualParameter(
        name=name,
        annotation=param.annotation if param else None,
        position=index + 1 if index >= 0 else None,
        of=len(names),
        kind=param.kind if param else None,
        after=names[index - 1] if index > 0 else None,
        before=before,
    )
