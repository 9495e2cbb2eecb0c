"""The calls in a function or class body that tell how it calls, or what it gives back.

Input: a `def` or `class` node. Output: the shapes of a class's `self.m(...)` calls of its own methods
(the shapes the upstream calls its hooks with), the one call a function hands its `**kwargs` to
unchanged, and the one dotted name (or `self`) every `return` of an unannotated function calls.
"""

from __future__ import annotations

import ast
from typing import Any

from apidrift.auditor.upstream.analyses.nodes import _last_name_of, _own_nodes

_MAX_SELF_CALLS = 8  # per method called: the shapes kept of the class's own calls


def _self_calls(node: ast.ClassDef) -> dict[str, list[dict[str, Any]]]:
    """`self.m(...)` calls in the class's plain methods (the shapes the upstream calls its hooks with)."""
    calls: dict[str, list[dict[str, Any]]] = {}
    for method in node.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or not method.args.args:
            continue
        if any(_last_name_of(d) in ("staticmethod", "classmethod") for d in method.decorator_list):
            continue
        self_name = method.args.args[0].arg
        for inner in _own_nodes(method):
            if not (
                isinstance(inner, ast.Call)
                and isinstance(inner.func, ast.Attribute)
                and isinstance(inner.func.value, ast.Name)
                and inner.func.value.id == self_name
            ):
                continue
            found = calls.setdefault(inner.func.attr, [])
            if len(found) >= _MAX_SELF_CALLS:
                continue
            shape = {
                "caller": method.name,
                "positional": sum(1 for a in inner.args if not isinstance(a, ast.Starred)),
                "keywords": [k.arg for k in inner.keywords if k.arg is not None],
                "star_args": any(isinstance(a, ast.Starred) for a in inner.args),
                "star_kwargs": any(k.arg is None for k in inner.keywords),
                "lineno": inner.lineno,
                "text": ast.unparse(inner)[:120],
            }
            key = {k: v for k, v in shape.items() if k not in ("lineno", "text")}
            if not any({k: v for k, v in f.items() if k not in ("lineno", "text")} == key for f in found):
                found.append(shape)
    return calls


def _kwargs_forwarding(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any] | None:
    """`def f(..., **kw): ...; g(x, y=1, **kw)`: the one call `**kw` goes to, unchanged (kw is used
    nowhere else, so nothing is popped or added on the way)."""
    kwarg = node.args.kwarg
    if kwarg is None:
        return None
    name = kwarg.arg
    # A bare truth test (`if kwargs: ...`) reads the mapping without changing it: not a use.
    tested = {
        id(n.test)
        for n in _own_nodes(node)
        if isinstance(n, (ast.If, ast.While, ast.Assert)) and isinstance(n.test, ast.Name)
    } | {id(n.operand) for n in _own_nodes(node) if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)}
    uses = [n for n in _own_nodes(node) if isinstance(n, ast.Name) and n.id == name and id(n) not in tested]
    calls = [
        c
        for c in _own_nodes(node)
        if isinstance(c, ast.Call)
        and any(k.arg is None and isinstance(k.value, ast.Name) and k.value.id == name for k in c.keywords)
    ]
    # `kw.pop("legacy", None)` takes a named keyword out before the hand-over: it is consumed here.
    pops = [
        c
        for c in _own_nodes(node)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Attribute)
        and c.func.attr == "pop"
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id == name
        and c.args
        and isinstance(c.args[0], ast.Constant)
        and isinstance(c.args[0].value, str)
    ]
    # `kw.setdefault("key", v)` adds a key of the upstream's own: the caller's keywords go on unchanged.
    defaults = [
        c
        for c in _own_nodes(node)
        if isinstance(c, ast.Call)
        and isinstance(c.func, ast.Attribute)
        and c.func.attr == "setdefault"
        and isinstance(c.func.value, ast.Name)
        and c.func.value.id == name
        and c.args
        and isinstance(c.args[0], ast.Constant)
        and isinstance(c.args[0].value, str)
    ]
    if len(uses) != 1 + len(pops) + len(defaults) or len(calls) != 1:
        return None
    call = calls[0]
    if (
        not isinstance(call.func, (ast.Name, ast.Attribute))
        or sum(1 for k in call.keywords if k.arg is None) != 1
    ):
        return None
    return {
        "target": ast.unparse(call.func),
        "positional": sum(1 for a in call.args if not isinstance(a, ast.Starred)),
        "keywords": [k.arg for k in call.keywords if k.arg is not None],
        "star_args": any(isinstance(a, ast.Starred) for a in call.args),
        "consumed": [p.args[0].value for p in pops],  # type: ignore[attr-defined]  # `pops` holds only calls whose first argument is a Constant
    }


def _returned_class(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """For a function without a return annotation: what every `return` gives, when it is one thing:
    a call of one dotted name (`DataFrame(...)`, `cls(...)`), or `self`. `return None` is passed over."""
    if isinstance(node, ast.AsyncFunctionDef):
        return None  # calling it gives a coroutine
    found: set[str] = set()
    for inner in _own_nodes(node):
        if isinstance(inner, (ast.Yield, ast.YieldFrom, ast.Await)):
            return None
        if not isinstance(inner, ast.Return) or inner.value is None:
            continue
        value = inner.value
        if isinstance(value, ast.Constant) and value.value is None:
            continue
        if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)):
            found.add(ast.unparse(value.func))
        elif isinstance(value, ast.Name) and value.id == "self":
            found.add("self")
        else:
            return None
    return found.pop() if len(found) == 1 else None
