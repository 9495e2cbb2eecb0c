"""Decorators that register what they decorate and re-apply what decorates another function
(a registry walked by name), and functions that set attributes on their arguments.
"""

from __future__ import annotations

import ast
from typing import Any

from apidrift.auditor.upstream.analyses.nodes import _last_name, _own_nodes
from apidrift.auditor.upstream.astwalk import walk

from .flow import _none_test


def _sets_attributes_of_arguments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`setattr(cls, ...)` or `cls.name = ...` (a name that is not a dunder) on one of the function's
    parameters, here or in a function nested in it (matplotlib `_define_aliases` adds `set_lw`), or on
    a parameter of a function it returns (a decorator factory's `decorate(cls)`)."""
    cached = node.__dict__.get("_apidrift_sets_attributes")
    if cached is None:  # the loader asks twice per function
        cached = node.__dict__["_apidrift_sets_attributes"] = _read_sets_attributes(node)
    return cached


def _read_sets_attributes(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    # a factory's returned decorator (`def decorate(cls): setattr(cls, meth, ...)`, SQLAlchemy 1.4's
    # `create_proxy_methods`) sets attributes on the class the factory's result decorates
    if _sets_attributes(node):
        return True
    own = _own_nodes(node)  # cached: the loader's other analyses walk the same body
    returned = {n.value.id for n in own if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)}
    return any(
        _sets_attributes(f)
        for f in own
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name in returned
    )


def _sets_attributes(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    params = {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    params.discard("self")
    if not params:
        return False  # nothing below can match
    for inner in walk(node):
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Name)
            and inner.func.id == "setattr"
            and inner.args
            and isinstance(inner.args[0], ast.Name)
            and inner.args[0].id in params
        ):
            return True
        if (
            isinstance(inner, ast.Attribute)
            and isinstance(inner.ctx, ast.Store)
            and isinstance(inner.value, ast.Name)
            and inner.value.id in params
            and not (inner.attr.startswith("__") and inner.attr.endswith("__"))
        ):
            return True
    return False


def _expr_text(node: ast.expr) -> str | None:
    """`DECORATORS` or `_api.deprecation.DECORATORS`: a dotted name's text, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _is_wraps_of(decorator: ast.expr, param: str) -> bool:
    return (
        isinstance(decorator, ast.Call)
        and _last_name(decorator.func) == "wraps"
        and len(decorator.args) == 1
        and isinstance(decorator.args[0], ast.Name)
        and decorator.args[0].id == param
    )


def _registers_self(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """`def deco(since, name, func=None)` whose body binds `decorator = functools.partial(deco, since,
    name)` (its parameters before the function, in order) and stores `REGISTRY[wrapper] = decorator`
    for a nested `@functools.wraps(func) def wrapper`: the wrapper is registered with what re-applies
    the same decorator (matplotlib `_api.rename_parameter`, `make_keyword_only`). The registry's text."""
    args = node.args.posonlyargs + node.args.args
    if len(args) < 2 or not node.args.defaults or node.args.kwonlyargs:
        return None
    before, func = [a.arg for a in args[:-1]], args[-1].arg
    partials = {
        target.id
        for stmt in node.body
        if isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance((target := stmt.targets[0]), ast.Name)
        and isinstance(stmt.value, ast.Call)
        and _last_name(stmt.value.func) == "partial"
        and [a.id if isinstance(a, ast.Name) else None for a in stmt.value.args] == [node.name, *before]
        and all(
            k.arg is None
            and node.args.kwarg is not None
            and isinstance(k.value, ast.Name)
            and k.value.id == node.args.kwarg.arg
            for k in stmt.value.keywords
        )
    }
    wrappers = {
        stmt.name
        for stmt in node.body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(_is_wraps_of(d, func) for d in stmt.decorator_list)
    }
    registries = {
        text
        for stmt in node.body
        if isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance((target := stmt.targets[0]), ast.Subscript)
        and isinstance(target.slice, ast.Name)
        and target.slice.id in wrappers
        and isinstance(stmt.value, ast.Name)
        and stmt.value.id in partials
        and (text := _expr_text(target.value)) is not None
    }
    return registries.pop() if len(registries) == 1 else None


def _reapplies_registered(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any] | None:
    """`def copy_deco(method, func=None)` that hands back `func` decorated by what a registry holds for
    `method` and each function down its `__wrapped__` chain, after decorators it calls with `method`
    (matplotlib 3.4+ pyplot `_copy_docstring_and_deprecators`):

        if func is None:
            return functools.partial(copy_deco, method)
        decorators = [docstring.copy(method)]
        while getattr(method, "__wrapped__", None) is not None:
            decorator = REGISTRY.get(method)
            if decorator:
                decorators.append(decorator)
            method = method.__wrapped__
        for decorator in decorators[::-1]:
            func = decorator(func)
        return func

    Calls made for their effect only (`note(func, method)`) may come between. Gives the registry's text
    and the texts of the callables the list starts with, or None for any other shape."""
    args = node.args.posonlyargs + node.args.args
    if len(args) != 2 or len(node.args.defaults) != 1 or node.args.vararg or node.args.kwarg:
        return None
    if node.args.kwonlyargs or not (
        isinstance(node.args.defaults[0], ast.Constant) and node.args.defaults[0].value is None
    ):
        return None
    method, func = args[0].arg, args[1].arg
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) < 5:
        return None
    first, listed, loop, ret = body[0], body[1], body[2], body[-1]
    partial = (
        _uncast(first.body[0].value)
        if isinstance(first, ast.If) and first.body and isinstance(first.body[0], ast.Return)
        else None
    )
    if not (
        isinstance(first, ast.If)
        and not first.orelse
        and _none_test(first.test, func) is True
        and len(first.body) == 1
        and isinstance(partial, ast.Call)
        and _last_name(partial.func) == "partial"
        and not partial.keywords
        and [a.id if isinstance(a, ast.Name) else None for a in partial.args] == [node.name, method]
    ):
        return None
    found = _listed_decorators(listed, method)
    if found is None:
        return None
    name, initial = found
    registry = _registry_walk(loop, method, name)
    if registry is None:
        return None
    applies = [stmt for stmt in body[3:-1] if isinstance(stmt, ast.For)]
    if len(applies) != 1:
        return None
    apply = applies[0]
    if not _applies_in_reverse(apply, name, func):
        return None
    if not (isinstance(ret, ast.Return) and isinstance(ret.value, ast.Name) and ret.value.id == func):
        return None
    for stmt in body[3:-1]:  # besides the loop applying them, only calls for their effect: none rebinds
        if stmt is apply:
            continue
        if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
            return None
        if any(isinstance(n, ast.NamedExpr) for n in walk(stmt)):
            return None
    return {"registry": registry, "initial": initial}


def _listed_decorators(listed: ast.stmt, method: str) -> tuple[str, list[str]] | None:
    """`decorators = [docstring.copy(method), ...]`: the list's name and the texts of the callables it
    starts with, each called with `method` alone."""
    target = listed.targets[0] if isinstance(listed, ast.Assign) and len(listed.targets) == 1 else None
    if isinstance(listed, ast.AnnAssign) and listed.simple:
        target = listed.target
    value = listed.value if isinstance(listed, (ast.Assign, ast.AnnAssign)) else None
    if not (isinstance(target, ast.Name) and isinstance(value, ast.List)):
        return None
    name = target.id
    initial = []
    for element in value.elts:
        if not (
            isinstance(element, ast.Call)
            and not element.keywords
            and len(element.args) == 1
            and isinstance(element.args[0], ast.Name)
            and element.args[0].id == method
            and (text := _expr_text(element.func)) is not None
        ):
            return None
        initial.append(text)
    return name, initial


def _applies_in_reverse(apply: ast.For, name: str, func: str) -> bool:
    """`for decorator in decorators[::-1]: func = decorator(func)`."""
    return bool(
        not apply.orelse
        and isinstance(apply.target, ast.Name)
        and _reversed_name(apply.iter) == name
        and len(apply.body) == 1
        and isinstance((step := apply.body[0]), ast.Assign)
        and len(step.targets) == 1
        and isinstance(step.targets[0], ast.Name)
        and step.targets[0].id == func
        and isinstance(step.value, ast.Call)
        and isinstance(step.value.func, ast.Name)
        and step.value.func.id == apply.target.id
        and [a.id if isinstance(a, ast.Name) else None for a in step.value.args] == [func]
        and not step.value.keywords
    )


def _uncast(node: ast.expr | None) -> ast.expr | None:
    """`cast(T, value)` (typing's, a no-op at run time): value; anything else as it is."""
    if (
        isinstance(node, ast.Call)
        and _last_name(node.func) == "cast"
        and len(node.args) == 2
        and not node.keywords
    ):
        return node.args[1]
    return node


def _reversed_name(node: ast.expr) -> str | None:
    """`L[::-1]` or `reversed(L)`: L."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Name)
        and isinstance(node.slice, ast.Slice)
        and node.slice.lower is None
        and node.slice.upper is None
        and isinstance(node.slice.step, ast.UnaryOp)
        and isinstance(node.slice.step.op, ast.USub)
        and isinstance(node.slice.step.operand, ast.Constant)
        and node.slice.step.operand.value == 1
    ):
        return node.value.id
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "reversed"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Name)
    ):
        return node.args[0].id
    return None


def _registry_walk(loop: ast.stmt, method: str, listed: str) -> str | None:
    """`while getattr(method, "__wrapped__", None) is not None:` (or `while hasattr(method,
    "__wrapped__"):`) holding `d = REGISTRY.get(method)`, `if d: listed.append(d)`, `method =
    method.__wrapped__`: the registry's text."""
    if not isinstance(loop, ast.While) or loop.orelse or len(loop.body) != 3:
        return None
    test = loop.test
    wrapped_test = (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
        and _getattr_wrapped(test.left, method, with_default=True)
    ) or _getattr_wrapped(test, method, with_default=False)
    if not wrapped_test:
        return None
    get, check, step = loop.body
    if not (
        isinstance(get, ast.Assign)
        and len(get.targets) == 1
        and isinstance(get.targets[0], ast.Name)
        and isinstance(get.value, ast.Call)
        and isinstance(get.value.func, ast.Attribute)
        and get.value.func.attr == "get"
        and len(get.value.args) == 1
        and isinstance(get.value.args[0], ast.Name)
        and get.value.args[0].id == method
        and not get.value.keywords
        and (registry := _expr_text(get.value.func.value)) is not None
    ):
        return None
    found = get.targets[0].id
    if not (
        isinstance(check, ast.If)
        and not check.orelse
        and isinstance(check.test, ast.Name)
        and check.test.id == found
        and len(check.body) == 1
        and isinstance(check.body[0], ast.Expr)
        and isinstance((append := check.body[0].value), ast.Call)
        and isinstance(append.func, ast.Attribute)
        and append.func.attr == "append"
        and isinstance(append.func.value, ast.Name)
        and append.func.value.id == listed
        and [a.id if isinstance(a, ast.Name) else None for a in append.args] == [found]
    ):
        return None
    if not (
        isinstance(step, ast.Assign)
        and len(step.targets) == 1
        and isinstance(step.targets[0], ast.Name)
        and step.targets[0].id == method
        and isinstance(step.value, ast.Attribute)
        and step.value.attr == "__wrapped__"
        and isinstance(step.value.value, ast.Name)
        and step.value.value.id == method
    ):
        return None
    return registry


def _getattr_wrapped(node: ast.expr, method: str, with_default: bool) -> bool:
    """`getattr(method, "__wrapped__", None)` (with_default) or `hasattr(method, "__wrapped__")`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords):
        return False
    expected = ("getattr", 3) if with_default else ("hasattr", 2)
    if (node.func.id, len(node.args)) != expected:
        return False
    target, attr = node.args[0], node.args[1]
    if not (isinstance(target, ast.Name) and target.id == method):
        return False
    if not (isinstance(attr, ast.Constant) and attr.value == "__wrapped__"):
        return False
    return not with_default or (isinstance(node.args[2], ast.Constant) and node.args[2].value is None)


_MUTATORS = frozenset({"update", "setdefault", "__setitem__", "__ior__"})


def _container_stores(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The containers a function (nested functions included) stores a key into: `X[k] = v`, `X[k] |=
    v`, `X.update(...)`, `X.setdefault(...)`, `X.__setitem__(...)`, `X |= ...` with X a dotted name,
    as texts; the store `_registers_self` recognizes (its own wrapper, keyed to itself) left out."""
    recognized = _registers_self(node)
    found: set[str] = set()
    for inner in walk(node):
        targets: list[ast.expr] = []
        if isinstance(inner, ast.Assign):
            targets = inner.targets
        elif isinstance(inner, (ast.AugAssign, ast.AnnAssign)):
            targets = [inner.target]
        for target in targets:
            if isinstance(target, ast.Subscript):
                text = _expr_text(target.value)
                if text is not None and not (inner in node.body and text == recognized):
                    found.add(text)
            elif isinstance(inner, ast.AugAssign) and (text := _expr_text(target)) is not None:
                found.add(text)
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr in _MUTATORS
        ):
            text = _expr_text(inner.func.value)
            if text is not None:
                found.add(text)
    return sorted(found)
