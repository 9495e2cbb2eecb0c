"""Whether a call that binds still raises: the callee's guards on which arguments are passed.

Input: a call's shape (with what each argument is: the literal None, another literal, or anything
else), the binding `Ok` gives (argument -> parameter) and the callee's `RaisingGuard`s, read by the
loader from its source. Output: the first guard every test of which certainly holds, or None.

A test `p is not X` holds for an argument when CPython's identity says so whatever runs: a literal
other than None against None; any literal (a constant or a display, made at the call) against an
object that is never such a value (`object()`, a class, a function, a module, or an attribute
annotated with a class that is not a builtin literal type). `p is X` holds for the literal None
against None, and for an unpassed parameter whose default is `X` itself.
Anything else (a variable, a call, an unknown sentinel) leaves the guard undecided: no finding.
"""

from __future__ import annotations

from dataclasses import dataclass

from apidrift.auditor.core.bind import CallShape, Ok
from apidrift.auditor.upstream.callables import CallTarget
from apidrift.auditor.upstream.model import GuardTest, RaisingGuard
from apidrift.auditor.upstream.resolve import (
    AttributeValue,
    ClassValue,
    FunctionValue,
    ModuleValue,
    Resolver,
)

# Types a literal's value can have and a module-level object could share by identity (interned or
# singleton constants): an object annotated with one of them may be the literal itself.
_LITERAL_TYPES = frozenset(
    "builtins." + name
    for name in (
        "NoneType",
        "bool",
        "int",
        "float",
        "complex",
        "str",
        "bytes",
        "tuple",
        "frozenset",
        "ellipsis",
    )
)


@dataclass(frozen=True)
class Raised:
    guard: RaisingGuard
    passed: tuple[str, ...]  # the parameters whose arguments make it raise, in the guard's order
    omitted: tuple[str, ...] = ()  # the parameters whose absence makes it raise


def raised_by(shape: CallShape, verdict: Ok, target: CallTarget, resolver: Resolver) -> Raised | None:
    if not target.guards or shape.star_args or shape.star_kwargs:
        return None
    if len(shape.values) != shape.positional + len(shape.keywords):
        return None  # what the arguments are was not recorded
    letters: dict[str, str] = {}
    for key, param in verdict.assignments:
        index = key if isinstance(key, int) else shape.positional + shape.keywords.index(key)
        letters[param] = shape.values[index]
    cache: dict[str, bool] = {}
    for guard in target.guards:
        if all(_holds(test, letters, resolver, cache) for test in guard.tests):
            return Raised(
                guard,
                tuple(t.param for t in guard.tests if t.param in letters),
                tuple(t.param for t in guard.tests if t.param not in letters),
            )
    return None


def _holds(test: GuardTest, letters: dict[str, str], resolver: Resolver, cache: dict[str, bool]) -> bool:
    """Whether the test certainly holds for this call (False: it fails, or it is not known)."""
    letter = letters.get(test.param)
    if letter is None:  # not passed: the parameter holds its default
        return test.default_is_compared and not test.is_not
    if letter == "?":
        return False
    if test.compared == "None":
        return (letter != "n") is test.is_not
    if test.compared not in cache:
        cache[test.compared] = _never_a_literal(test.compared, resolver)
    return cache[test.compared] and test.is_not  # a literal is never that object


def _never_a_literal(path: str, resolver: Resolver) -> bool:
    """The object at `path` is certainly not the value of a literal written at a call."""
    value = resolver.lookup(path)
    if isinstance(value, (ClassValue, FunctionValue, ModuleValue)):
        return True
    if not isinstance(value, AttributeValue):
        return False
    info = value.info
    if info.value_call == "builtins.object":
        return True  # `_sentinel = object()`
    annotation = info.annotation or ""
    if not info.annotation_path or any(
        t in annotation for t in ("None", "Optional", "Union", "|", "Any", "[")
    ):
        return False
    return info.annotation_path not in _LITERAL_TYPES and info.annotation_path != "builtins.object"
