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

The same holds for a method the upstream never declares but calls by name on the objects it is
handed, an implicit hook (`if hasattr(field, "from_json"): field.from_json(value, ctx)`,
`getattr(obj, "hook")(...)`): an error where the upstream makes that call on `self` in a class the
downstream class inherits, or on an object it annotates as such a class; a warning where it does not
type the object (whether the downstream's instances reach that call is not known).

The upstream's own calls of the method decide where they are found (`self.m(...)`,
`functools.partial(self.m, request=request)`, called later with arguments not written there: Django
2.1's `formfield_for_dbfield`, `self.m` handed to a call, its arguments unknown, and calls on a
held object typed as the class); the call its signature implies (every required parameter, as
declared) is used only where none is.

Where no code of the upstream calls a method of that name (it spells the name only in `def`
lines and looks no attribute up by a computed name), the upstream never takes the path that would
call the override: a warning, as the break happens only where the method is called the new way.

Where the upstream calls it only from its own methods (`self.m(...)`) and the downstream runs none of
them, a warning too: the downstream builds the class itself, uses its instances only as
`name.attr` (never handing one, or the class, to any call, container or attribute), and none of the
methods it uses reaches `self.m` through the upstream's `self.x(...)`/`super().x(...)` calls (the
downstream subclasses a parser and never calls its `read()`). Where any of that is not known (an
instance handed on, a method that hands `self` on, a metaclass, a lookup by a computed name, a
notebook), an error, as before.

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
from dataclasses import replace

from apidrift.auditor.check.checked import CheckedSite
from apidrift.auditor.core.bind import Break
from apidrift.auditor.core.codes import RuleCode
from apidrift.auditor.core.refs import AttrRef
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
    if site.kind is not SiteKind.OVERRIDE or not isinstance(checked.new.verdict, Break):
        return
    call = checked.new.upstream_call
    if target is None:
        if call is not None and call.get("hook"):
            yield from _hook_finding(rule, checked, call)
        return
    required = [p.render() for p in target.signature.parameters if p.required]
    name = target.defined_at.rsplit(".", 1)[-1]
    if (
        call is not None and "call" in call
    ):  # the upstream's own call, with an argument the override does not take
        accepted = {p.name for p in site.signature.parameters} if site.signature else set()
        new = [p.render() for p in target.signature.parameters if p.name not in accepted]
        untyped = bool(call.get("untyped")) or call.get("reach") == "untyped"
        on = " on a value it does not type (this class's instances, if they reach it)" if untyped else ""
        unentered = call.get("reach") == "unentered"
        if unentered:
            listed = call.get("callers")
            callers = (
                [str(c) for c in listed] if isinstance(listed, list) and listed else [str(call["caller"])]
            )
            on = (
                f" (reached only through {', '.join(f'`{c}`' for c in callers)}, which this package never "
                f"runs and to which it never hands a `{call['class']}`)"
            )
        yield rule.finding(
            checked,
            f"`{name}` overrides `{target.defined_at}`, which {checked.new.version} calls as `{call['call']}` "
            f"in `{call['caller']}` (line {call['lineno']}){on}; the override takes "
            f"{site.signature.render() if site.signature else '?'}",
            symbol=target.defined_at,
            hint=f"accept what the upstream passes: def {name}(self, ..., {', '.join(new)})"
            if new
            else f"accept what the upstream passes: {target.signature.render()}",
            severity=Severity.WARNING if untyped or unentered else None,
        )
        return
    never = call is not None and call.get("reach") == "never-called"
    finding = rule.finding(
        checked,
        f"`{name}` overrides `{target.defined_at}`, which {checked.new.version} calls with "
        f"({', '.join(required)}); the override takes {site.signature.render() if site.signature else '?'}"
        + (
            f" (no code of {checked.new.version} calls a method of that name: it breaks where it is "
            "called the new way)"
            if never
            else ""
        ),
        symbol=target.defined_at,
        hint=f"accept the new parameters: def {name}(self, {', '.join(required)}{', ' if required else ''}...)",
    )
    yield replace(finding, severity=Severity.WARNING) if never else finding


def _hook_finding(rule: Rule, checked: CheckedSite, call: dict[str, object]) -> Iterator[Finding]:
    """A method the upstream calls by name (an implicit hook) that no longer takes the upstream's call:
    an error where the call is made on the class's own instances (`self`, or an object the upstream
    annotates as a class the downstream class inherits), a warning where the upstream does not type
    the object it calls it on (whether this class's instances reach that call is not known)."""
    site = checked.site
    name = site.ref.name if isinstance(site.ref, AttrRef) else site.code
    takes = site.signature.render() if site.signature else "?"
    untyped = call.get("reach") == "untyped"
    message = (
        f"{checked.new.version} calls `{name}` by name as `{call['call']}` in `{call['caller']}` "
        f"(line {call['lineno']}); this method takes {takes}"
    )
    if untyped:
        message += (
            " (the upstream does not type that object: this applies if instances of this class reach it)"
        )
    finding = rule.finding(
        checked,
        message,
        symbol=str(call["caller"]),
        hint=f"accept what the upstream passes: `{call['call']}`",
    )
    yield replace(finding, severity=Severity.WARNING) if untyped else finding
