"""Whether a use's introspection tests let it run under one upstream version.

Input: a use site's `Introspected` tests (`if "x" in inspect.signature(f).parameters:`, `hasattr(C,
"x")`, their negations and `else` branches) and a resolver of one version. Output: whether the site
is guarded there: True when one of its tests is certainly false there (the branch never runs under
that version: its uses cannot fail) or not known, False when every test certainly lets it run (a guard
that tests another name than the one the use needs protects nothing).

What each test is under CPython: `hasattr(obj, name)` is true where the attribute resolves and false
where the name is certainly missing (a namespace known complete); `name in
inspect.signature(f).parameters` is true where the callee's signature has a parameter of that name
(`*args` and `**kwargs` by their own names); `getfullargspec(f).args` lists the positional parameters,
`.kwonlyargs` the keyword-only ones; `f.__code__.co_varnames` lists the parameters and the locals (only
a parameter makes it certainly true). A signature known only from a stub, a callee with overloads or a
class whose `__new__` takes part is not known.
"""

from __future__ import annotations

from apidrift.auditor.core.reasons import Unknown
from apidrift.auditor.core.refs import AttrRef
from apidrift.auditor.core.signature import ParamKind
from apidrift.auditor.core.sites import Introspected, UseSite
from apidrift.auditor.upstream.callables import CallTarget, call_target
from apidrift.auditor.upstream.resolve import ClassValue, FunctionValue, Missing, Resolver

_POSITIONAL = (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)


def guarded_by_tests(site: UseSite, resolver: Resolver) -> bool:
    """Whether the site's introspection tests guard it under this version (see the module's doc)."""
    for test in site.tests:
        value = test_value(test, resolver)
        if value is None or value is not test.holds:
            return True
    return False


def test_value(test: Introspected, resolver: Resolver) -> bool | None:
    """What the test is under this version: True, False, or None when not known."""
    if test.kind == "type-error":
        return None  # whether the `try` body's call raises TypeError here is not read
    if test.kind == "attribute":
        resolution = resolver.resolve(AttrRef(test.ref, test.name))
        if isinstance(resolution, Missing):
            base = resolver.resolve(test.ref)
            certain = resolution.exact and resolution.name == test.name
            return False if certain and not isinstance(base, (Missing, Unknown)) else None
        return None if isinstance(resolution, Unknown) else True
    value = resolver.resolve(test.ref)
    if isinstance(value, (Missing, Unknown)):
        return None
    if test.kind == "varname" and not isinstance(value, FunctionValue):
        return None  # a class has no `__code__`
    if test.kind in ("positional", "keyword-only") and isinstance(value, ClassValue):
        return None  # getfullargspec of a class keeps `self`, read from another signature
    target = call_target(value, resolver)
    if (
        not isinstance(target, CallTarget)
        or target.typing_view
        or target.alternatives
        or target.requires_also
    ):
        return None
    param = target.signature.get(test.name)
    if test.kind == "parameter":
        return param is not None
    if test.kind == "positional":
        return param is not None and param.kind in _POSITIONAL
    if test.kind == "keyword-only":
        return param is not None and param.kind is ParamKind.KEYWORD_ONLY
    return True if param is not None else None  # "varname": a local of that name makes it true too
