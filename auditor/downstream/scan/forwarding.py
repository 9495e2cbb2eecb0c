"""Keyword forwarding through a downstream `__init__(self, ..., **kwargs)`: to `super().__init__`, or
to the one upstream call a wrapper class makes."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from apidrift.auditor.core.bind import CallShape
from apidrift.auditor.downstream.scan.nodes import _calls_in, _dotted, _names_in
from apidrift.auditor.downstream.scan.signatures import _signature_of
from apidrift.auditor.downstream.shared import Forwarding


def _forwarding(init: cst.FunctionDef) -> Forwarding | None:
    star_kwarg = init.params.star_kwarg
    if not isinstance(star_kwarg, cst.Param):
        return None
    kwargs = star_kwarg.name.value
    supers: list[cst.Call] = []
    uses = 0

    class _Find(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value == "__init__"
                and isinstance(func.value, cst.Call)
                and _dotted(func.value.func) == "super"
            ):
                supers.append(call)

        def visit_Name(self, name: cst.Name) -> None:
            nonlocal uses
            if name.value == kwargs:
                uses += 1

    init.body.visit(_Find())
    defaults = _setdefault_keys(init, kwargs, supers)
    if len(supers) != 1 or uses - len(defaults) != 1:
        return None  # kwargs read or changed elsewhere, or several super() calls: not certain
    forwarding = _handed_on(init, kwargs, supers[0])
    return replace(forwarding, defaults=defaults) if forwarding is not None and defaults else forwarding


def _setdefault_keys(init: cst.FunctionDef, kwargs: str, supers: list[cst.Call]) -> tuple[str, ...]:
    """The keys of `kwargs.setdefault("key", value)` statements of `__init__`'s own body before the
    statement holding the super() call."""
    if not isinstance(init.body, cst.IndentedBlock):
        return ()
    keys: list[str] = []
    for statement in init.body.body:
        if supers and any(call is supers[0] for call in _calls_in(statement)):
            break
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            continue
        expr = statement.body[0]
        call = expr.value if isinstance(expr, cst.Expr) else None
        if not (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "setdefault"
            and isinstance(call.func.value, cst.Name)
            and call.func.value.value == kwargs
            and len(call.args) == 2
            and all(a.keyword is None and not a.star for a in call.args)
            and isinstance(call.args[0].value, cst.SimpleString)
            and kwargs not in {n.value for n in _names_in(call.args[1].value)}
        ):
            continue
        key = call.args[0].value.evaluated_value
        if isinstance(key, str) and key.isidentifier():
            keys.append(key)
    return tuple(keys)


def _kwargs_call(init: cst.FunctionDef) -> tuple[cst.Call, Forwarding] | None:
    """The one call of `__init__`'s own body (not in a nested def, not under a branch or a loop) that
    receives its `**kwargs` unchanged, the mapping used nowhere else; no `super()` call at all."""
    star_kwarg = init.params.star_kwarg
    if not isinstance(star_kwarg, cst.Param) or not isinstance(init.body, cst.IndentedBlock):
        return None
    kwargs = star_kwarg.name.value
    calls: list[cst.Call] = []
    uses = 0
    nested = False

    class _Find(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal nested
            if _dotted(call.func) == "super":
                nested = True
            if any(
                a.star == "**" and isinstance(a.value, cst.Name) and a.value.value == kwargs
                for a in call.args
            ):
                calls.append(call)

        def visit_Name(self, name: cst.Name) -> None:
            nonlocal uses
            if name.value == kwargs:
                uses += 1

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            nonlocal nested
            nested = True
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            nonlocal nested
            nested = True
            return False

    init.body.visit(_Find())
    if len(calls) != 1 or uses != 1 or nested:
        return None
    call = calls[0]
    top = [stmt for stmt in init.body.body if isinstance(stmt, cst.SimpleStatementLine)]
    if not any(call in _calls_in(stmt) for stmt in top):
        return None  # under an `if`, a loop or a `try`: the call may not be made
    forwarding = _handed_on(init, kwargs, call)
    return (call, forwarding) if forwarding is not None else None


def _assigns_name(function: cst.FunctionDef, dotted: str) -> bool:
    head = dotted.split(".")[0]
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    if any(p.name.value == head for p in every):
        return True
    found = False

    class _Find(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            nonlocal found
            found = found or any(n.value == head for n in _names_in(node.target))

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            nonlocal found
            local = node.asname.name if node.asname is not None else node.name
            found = found or any(n.value == head for n in _names_in(local))

    function.body.visit(_Find())
    return found


def _handed_on(init: cst.FunctionDef, kwargs: str, call: cst.Call) -> Forwarding | None:
    passes = [
        a for a in call.args if a.star == "**" and isinstance(a.value, cst.Name) and a.value.value == kwargs
    ]
    if len(passes) != 1 or any(a.star == "**" and a not in passes for a in call.args):
        return None
    positional = sum(1 for a in call.args if not a.star and a.keyword is None)
    keywords = tuple(a.keyword.value for a in call.args if a.keyword is not None)
    star_args = any(a.star == "*" for a in call.args)
    return Forwarding(_signature_of(init).bound(), kwargs, CallShape(positional, keywords, star_args, False))
