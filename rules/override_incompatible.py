"""## What it does
Finds methods of downstream subclasses that override an upstream method whose signature the target
version changed so that the upstream's own calls no longer bind to the override: a new required
parameter, say, which the upstream now passes, or an optional one the upstream's own classes pass
(`self.get_default(ctx, call=False)` against `def get_default(self, ctx)`), or pass through an
object of that class they hold, typed by an annotation (`self.widget.render(name, value,
renderer=r)` with `widget: Widget`), even where the method's own signature did not change. A call
the upstream makes on a value it does not type (Django 2.1's `widget.render(name=..., value=...,
attrs=..., renderer=...)` in `BoundField.as_widget`) that binds to the upstream's method and not to
the override is a warning: the override fails there if its instances reach that call.

## Why is this bad?
The upstream calls the override itself (a template method, a hook) and raises `TypeError` inside
the upstream's code, far from the downstream line that must change.

## Example
```python
class MyParam(click.Parameter):
    def make_metavar(self):  # click 8.2 calls make_metavar(ctx)
        ...
```

## Fix
Give the override the new signature (accept the new parameters), and pass them on to `super()`.
"""

from __future__ import annotations

from collections.abc import Iterator

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.bind import Break
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.results import Finding, Severity
from apidrift.auditor.core.sites import SiteKind
from apidrift.rules.base import Family, Rule, RuleMeta

RULE = RuleMeta(
    code=RuleCode.OVERRIDE_INCOMPATIBLE,
    name="override-incompatible",
    severity=Severity.ERROR,
    family=Family.CALLS,
    summary="An override no longer accepts the upstream's calls to the method it overrides",
    since="0.1.0",
)


def check(rule: Rule, checked: CheckedSite) -> Iterator[Finding]:
    site = checked.site
    target = checked.new.target
    if site.kind is not SiteKind.OVERRIDE or not isinstance(checked.new.verdict, Break) or target is None:
        return
    required = [p.render() for p in target.signature.parameters if p.required]
    name = target.defined_at.rsplit(".", 1)[-1]
    call = checked.new.upstream_call
    if call is not None:  # the upstream's own call, with an argument the override does not take
        accepted = {p.name for p in site.signature.parameters} if site.signature else set()
        new = [p.render() for p in target.signature.parameters if p.name not in accepted]
        untyped = bool(call.get("untyped"))
        on = " on a value it does not type (this class's instances, if they reach it)" if untyped else ""
        yield rule.finding(
            checked,
            f"`{name}` overrides `{target.defined_at}`, which {checked.new.version} calls as `{call['call']}` "
            f"in `{call['caller']}` (line {call['lineno']}){on}; the override takes "
            f"{site.signature.render() if site.signature else '?'}",
            symbol=target.defined_at,
            hint=f"accept what the upstream passes: def {name}(self, ..., {', '.join(new)})"
            if new
            else f"accept what the upstream passes: {target.signature.render()}",
            severity=Severity.WARNING if untyped else None,
        )
        return
    yield rule.finding(
        checked,
        f"`{name}` overrides `{target.defined_at}`, which {checked.new.version} calls with "
        f"({', '.join(required)}); the override takes {site.signature.render() if site.signature else '?'}",
        symbol=target.defined_at,
        hint=f"accept the new parameters: def {name}(self, {', '.join(required)}{', ' if required else ''}...)",
    )
