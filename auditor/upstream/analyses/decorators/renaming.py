"""Wrappers that rename a keyword on the way to the function (`kwargs[new] = kwargs.pop(old)`)."""

from __future__ import annotations

import ast

from apidrift.auditor.upstream.analyses.decorators.flow import _star_wrapper
from apidrift.auditor.upstream.astwalk import walk


def _renames_keyword(
    wrapper: ast.FunctionDef | ast.AsyncFunctionDef,
    param: str,
    params: set[str],
    enclosing: dict[str, list[ast.expr]],
) -> str | None:
    """`@wraps(f) def w(*args, **kwargs): if old in kwargs: <warn>; kwargs[new] = kwargs.pop(old)`
    then `return f(*args, **kwargs)`, with `old` and `new` parameters of the decorator: the keyword
    `old` is passed as `new` (matplotlib `_api.rename_parameter`). Gives "rename-keyword:OLD:NEW",
    the names of the decorator's parameters holding them, or None."""
    starred = _star_wrapper(wrapper, param)
    if starred is None:
        return None
    star, double = starred
    body = [s for s in wrapper.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 2 or not isinstance(body[0], ast.If) or not isinstance(body[1], ast.Return):
        return None
    test, ret = body[0], body[1].value
    if not (
        isinstance(ret, ast.Call)
        and isinstance(ret.func, ast.Name)
        and ret.func.id == param
        and len(ret.args) == 1
        and isinstance(ret.args[0], ast.Starred)
        and isinstance(ret.args[0].value, ast.Name)
        and ret.args[0].value.id == star
        and len(ret.keywords) == 1
        and ret.keywords[0].arg is None
        and isinstance(ret.keywords[0].value, ast.Name)
        and ret.keywords[0].value.id == double
    ):
        return None
    cond = test.test
    if test.orelse or not (
        isinstance(cond, ast.Compare)
        and len(cond.ops) == 1
        and isinstance(cond.ops[0], ast.In)
        and isinstance(cond.left, ast.Name)
        and isinstance(cond.comparators[0], ast.Name)
        and cond.comparators[0].id == double
    ):
        return None
    old = cond.left.id
    renames = []
    for stmt in test.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            names = {n.id for n in walk(stmt) if isinstance(n, ast.Name)}
            if names & {star, double}:
                return None  # the warning call must not touch the arguments
            continue
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Subscript)
            and isinstance(stmt.targets[0].value, ast.Name)
            and stmt.targets[0].value.id == double
            and isinstance(stmt.targets[0].slice, ast.Name)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and stmt.value.func.attr == "pop"
            and isinstance(stmt.value.func.value, ast.Name)
            and stmt.value.func.value.id == double
            and len(stmt.value.args) == 1
            and not stmt.value.keywords
            and isinstance(stmt.value.args[0], ast.Name)
            and stmt.value.args[0].id == old
        ):
            renames.append(stmt.targets[0].slice.id)
            continue
        return None
    if len(renames) != 1:
        return None
    new = renames[0]
    if old == new or old not in params or new not in params or old in enclosing or new in enclosing:
        return None
    return f"rename-keyword:{old}:{new}"
