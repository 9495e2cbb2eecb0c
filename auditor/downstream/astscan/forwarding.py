"""Keyword forwarding through a downstream `__init__(self, ..., **kwargs)`: to `super().__init__`, or
to the one upstream call a wrapper class makes."""

from __future__ import annotations

import ast
from dataclasses import replace

from apidrift.auditor.core.bind import CallShape
from apidrift.auditor.downstream.astscan.nodes import _dotted, _identifiers
from apidrift.auditor.downstream.astscan.signatures import _signature_of
from apidrift.auditor.downstream.astscan.text import _Text
from apidrift.auditor.downstream.astscan.values import _Function, _Method
from apidrift.auditor.downstream.shared import Forwarding


def _forwarding(init: _Function, method: _Method, text: _Text) -> Forwarding | None:
    if init.args.kwarg is None:
        return None
    kwargs = init.args.kwarg.arg
    supers: list[ast.Call] = []
    uses = 0
    defaults: list[str] = []
    for statement in init.body:
        key = _setdefault_key(statement, kwargs)
        if key is not None and not supers:  # `kwargs.setdefault("timeout", T)` before the super() call
            defaults.append(key)
            uses -= 1
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                func = node.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr == "__init__"
                    and isinstance(func.value, ast.Call)
                    and _dotted(func.value.func) == "super"
                ):
                    supers.append(node)
        uses += sum(1 for name in _identifiers(statement) if name == kwargs)
    if len(supers) != 1 or uses != 1:
        return None  # kwargs read or changed elsewhere, or several super() calls: not certain
    forwarding = _handed_on(init, kwargs, supers[0], method, text)
    return (
        replace(forwarding, defaults=tuple(defaults)) if forwarding is not None and defaults else forwarding
    )


def _setdefault_key(statement: ast.stmt, kwargs: str) -> str | None:
    """`kwargs.setdefault("key", value)` as a statement: "key"."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "setdefault"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == kwargs
        and len(call.args) == 2
        and not call.keywords
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
        and call.args[0].value.isidentifier()
        and kwargs not in _identifiers(call.args[1])
    ):
        return None
    return call.args[0].value


# Statements with a body of their own: a call under one of them may not be made.
_COMPOUND = tuple(
    getattr(ast, n)
    for n in ("If", "For", "AsyncFor", "While", "Try", "TryStar", "With", "AsyncWith", "FunctionDef",
              "AsyncFunctionDef", "ClassDef", "Match")
    if hasattr(ast, n)
)  # fmt: skip


def _kwargs_call(init: _Function, method: _Method, text: _Text) -> tuple[ast.Call, Forwarding] | None:
    """The one call of `__init__`'s own body (not in a nested def, not under a branch or a loop) that
    receives its `**kwargs` unchanged, the mapping used nowhere else; no `super()` call at all."""
    if init.args.kwarg is None or not init.body:
        return None
    first = init.body[0]
    if text.line(first.lineno)[: text.column(first.lineno, first.col_offset)].strip():
        return None  # `def __init__(self, **kw): ...` on one line (LibCST's statement suite): not followed
    kwargs = init.args.kwarg.arg
    calls: list[ast.Call] = []
    uses = 0
    # `kind is ast.X` (cheaper than isinstance on this hot path) does not narrow for mypy: the
    # `type: ignore[attr-defined]`s below are those reads.
    for statement in init.body:
        for node in ast.walk(statement):
            kind = type(node)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
                return None  # a nested function
            if kind is ast.Call:
                if _dotted(node.func) == "super":  # type: ignore[attr-defined]
                    return None
                if any(
                    k.arg is None and isinstance(k.value, ast.Name) and k.value.id == kwargs
                    for k in node.keywords  # type: ignore[attr-defined]
                ):
                    calls.append(node)  # type: ignore[arg-type]
        uses += sum(1 for name in _identifiers(statement) if name == kwargs)
    if len(calls) != 1 or uses != 1:
        return None
    call = calls[0]
    top = [stmt for stmt in init.body if not isinstance(stmt, _COMPOUND)]
    if not any(node is call for stmt in top for node in ast.walk(stmt)):
        return None  # under an `if`, a loop or a `try`: the call may not be made
    forwarding = _handed_on(init, kwargs, call, method, text)
    return (call, forwarding) if forwarding is not None else None


def _assigns_name(function: _Function, dotted: str) -> bool:
    """Whether the function binds the first name of `dotted`: a parameter, an assignment target or an
    imported name (names as LibCST writes them: the attribute names of a target count)."""
    head = dotted.split(".")[0]
    args = function.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every += [p for p in (args.vararg, args.kwarg) if p is not None]
    if any(p.arg == head for p in every):
        return True
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign):
                if any(name == head for target in node.targets for name in _identifiers(target)):
                    return True
            elif isinstance(node, ast.alias):
                local = [node.asname] if node.asname is not None else node.name.split(".")
                if head in local:
                    return True
    return False


def _handed_on(
    init: _Function, kwargs: str, call: ast.Call, method: _Method, text: _Text
) -> Forwarding | None:
    double = [k for k in call.keywords if k.arg is None]
    passes = [k for k in double if isinstance(k.value, ast.Name) and k.value.id == kwargs]
    if len(passes) != 1 or len(double) != 1:
        return None
    positional = sum(1 for a in call.args if not isinstance(a, ast.Starred))
    keywords = tuple(k.arg for k in call.keywords if k.arg is not None)
    star_args = any(isinstance(a, ast.Starred) for a in call.args)
    return Forwarding(
        _signature_of(init.args, method.indent, text).bound(),
        kwargs,
        CallShape(positional, keywords, star_args, False),
    )
