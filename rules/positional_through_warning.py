"""## What it does
Finds calls that pass a keyword-only parameter positionally and run only because a decorator of the
callee catches it: the decorator's wrapper, read from its source, warns when a call passes more
positional arguments than the function's positional parameters (a `*warn*` call under a condition on
`len(args)`), then hands the arguments on by name or unchanged.

## Why is this bad?
The call works today, with the same meaning, and emits a deprecation warning each time; the
decorator is a transition shim, and the release that drops it turns the call into a `TypeError`.

## Example
```python
KMeans(2, "k-means++")  # `init` is keyword-only; `@_deprecate_positional_args` warns (FutureWarning)
```

## Fix
Pass the parameters the warning names by keyword: `KMeans(2, init="k-means++")`.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.bind import Ok
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import (
    Applicability,
    Finding,
    Fix,
    FixKind,
    ManualParameter,
    ManualStep,
    Severity,
)
from apidrift.auditor.core.signature import ParamKind
from apidrift.auditor.core.sites import SiteKind
from apidrift.rules import _calls
from apidrift.rules.base import Family, FixOffer, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.POSITIONAL_THROUGH_WARNING_SHIM,
    name="positional-through-warning-shim",
    severity=Severity.WARNING,
    family=Family.DRIFT,
    summary="Call passes a keyword-only parameter positionally, accepted only by a decorator that warns",
    since="0.1.0",
    fixes=(
        FixOffer(
            FixKind.MANUAL, Applicability.MANUAL, "pass the named parameters by keyword, keeping the values"
        ),
    ),
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    new = checked.new
    target, shape = new.target, checked.site.shape
    if (
        checked.site.kind is not SiteKind.CALL
        or target is None
        or shape is None
        or shape.star_args
        or not isinstance(new.verdict, Ok)
        or new.unknown is not None
        or checked.site.forwarded
        or checked.site.through_init
    ):
        return
    given = shape.positional
    shim = min((s for s in target.shims if given > s.threshold), key=lambda s: s.threshold, default=None)
    if shim is None:
        return
    params = target.signature.parameters
    passed = [
        p
        for p in params[shim.threshold : given]
        if p.kind not in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
    ]
    if not passed:
        return
    names = tuple(p.name for p in passed)
    plural = "s" if len(names) > 1 else ""
    warns = f"which warns ({shim.category})" if shim.category else f"which warns through `{shim.warn}`"
    keywords = ", ".join(f"{n}=..." for n in names)
    call = _calls.display(checked)
    yield rule.finding(
        checked,
        f"{call} passes keyword-only parameter{plural} {_calls.names(names)} positionally in "
        f"{new.version}: this runs only through the decorator `{shim.decorator}`, {warns}",
        symbol=_calls.callee(checked),
        hint=f"pass {_calls.names(names)} by keyword ({keywords})",
        fix=Fix(
            FixKind.MANUAL,
            Applicability.MANUAL,
            f"pass {_calls.names(names)} to {call} by keyword ({keywords}), keeping the values",
            ManualStep(
                _calls.callee(checked),
                tuple(
                    ManualParameter(
                        name=p.name,
                        annotation=p.annotation,
                        position=params.index(p) + 1,
                        of=len(params),
                        kind=ParamKind.KEYWORD_ONLY,
                        after=params[params.index(p) - 1].name if params.index(p) > 0 else None,
                    )
                    for p in passed
                ),
            ),
        ),
    )
