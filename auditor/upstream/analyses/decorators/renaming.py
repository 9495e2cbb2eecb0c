"""Wrappers that rename a keyword on the way to the function (`kwargs[new] = kwargs.pop(old)`)."""

from __future__ import annotations

import ast

from apidrift.auditor.upstream.analyses.decorators.flow import _none_test, _star_wrapper
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
    statements = _star_statements(wrapper, param)
    if statements is None:
        return None
    star, double, body = statements
    if len(body) != 2 or not isinstance(body[0], ast.If) or not isinstance(body[1], ast.Return):
        return None
    test, ret = body[0], body[1].value
    if not calls_through(ret, param, star, double):
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


def _renames_popped_keyword(
    wrapper: ast.FunctionDef | ast.AsyncFunctionDef,
    param: str,
    params: set[str],
    enclosing: dict[str, list[ast.expr]],
) -> str | None:
    """pandas `deprecate_kwarg(old_arg_name, new_arg_name, mapping=None)`: `@wraps(f) def w(*args,
    **kwargs): v = kwargs.pop(old, None); if v is not None: <branches on `new is None`, `mapping is not
    None`>; ...; kwargs[new] = v` then `return f(*args, **kwargs)`. The branches are followed with `new`
    not None and every other decorator parameter tested against None being None (the decorator's own
    arguments decide that at each use, where it is checked); the branches taken may only bind local
    names, call what touches neither the arguments nor the popped value (the warning), raise in a guard
    whose test reads the keywords only through `kwargs.get(...)` (both spellings given), and must store
    the popped value unchanged under `new`, once. An explicit `old=None` is dropped, not passed on: the
    effect carries "drops-none", checked where the decorated function is known (its `new` parameter must
    default to None). Gives "rename-keyword:OLD:NEW:drops-none[:none=PARAM...]", or None."""
    statements = _star_statements(wrapper, param)
    if statements is None:
        return None
    star, double, body = statements
    if len(body) != 3 or not isinstance(body[0], ast.Assign) or not isinstance(body[1], ast.If):
        return None
    if not isinstance(body[2], ast.Return) or not calls_through(body[2].value, param, star, double):
        return None
    pop, popped = body[0], body[0].value
    if not (
        len(pop.targets) == 1
        and isinstance(pop.targets[0], ast.Name)
        and isinstance(popped, ast.Call)
        and isinstance(popped.func, ast.Attribute)
        and popped.func.attr == "pop"
        and isinstance(popped.func.value, ast.Name)
        and popped.func.value.id == double
        and len(popped.args) == 2
        and not popped.keywords
        and isinstance(popped.args[0], ast.Name)
        and isinstance(popped.args[1], ast.Constant)
        and popped.args[1].value is None
    ):
        return None
    value, old = pop.targets[0].id, popped.args[0].id
    if value in (star, double, param):
        return None
    test = body[1]
    if test.orelse or _none_tested(test.test) != (value, False):
        return None
    keys = {
        t.slice.id
        for stmt in test.body
        for node in walk(stmt)
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Subscript)
        and isinstance(t.value, ast.Name)
        and t.value.id == double
        and isinstance(t.slice, ast.Name)
        and t.slice.id != old
    }
    if len(keys) != 1:
        return None
    new = next(iter(keys))
    conditions: set[str] = set()
    holds = {value}  # names holding the popped value unchanged
    stored: list[str] = []

    def reads_only_get(node: ast.expr) -> bool:
        """A guard's test: no call but `kwargs.get(...)`, no assignment expression."""
        for n in walk(node):
            if isinstance(n, ast.NamedExpr):
                return False
            if isinstance(n, ast.Call) and not (
                isinstance(n.func, ast.Attribute)
                and n.func.attr == "get"
                and isinstance(n.func.value, ast.Name)
                and n.func.value.id == double
            ):
                return False
        return True

    def run(statements: list[ast.stmt]) -> bool:
        for stmt in statements:
            if isinstance(stmt, ast.If):
                tested = _none_tested(stmt.test)
                if tested is not None and tested[0] in params:
                    name, is_none = tested
                    assumed_none = name != new
                    if assumed_none:
                        conditions.add(name)
                    if not run(stmt.body if assumed_none == is_none else stmt.orelse):
                        return False
                    continue
                if (
                    stmt.body
                    and isinstance(stmt.body[-1], ast.Raise)
                    and reads_only_get(stmt.test)
                    and (not stmt.orelse or run(stmt.orelse))
                    and all(
                        isinstance(s, ast.Assign)
                        and all(
                            isinstance(t, ast.Name) and t.id not in (star, double, param) for t in s.targets
                        )
                        and not {n.id for n in walk(s.value) if isinstance(n, ast.Name)} & {star, double}
                        for s in stmt.body[:-1]
                    )
                ):
                    continue  # a guard that only raises (both spellings given: CPython raises there too)
                return False
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                if {n.id for n in walk(stmt) if isinstance(n, ast.Name)} & ({star, double, value} | holds):
                    return False
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    if isinstance(stmt.value, ast.Name) and stmt.value.id in holds:
                        holds.add(target.id)
                        continue
                    names = {n.id for n in walk(stmt.value) if isinstance(n, ast.Name)}
                    if target.id in holds or target.id in (star, double, param) or names & {star, double}:
                        return False
                    continue
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == double
                    and isinstance(target.slice, ast.Name)
                    and target.slice.id == new
                    and isinstance(stmt.value, ast.Name)
                    and stmt.value.id in holds
                ):
                    stored.append(new)
                    continue
            return False
        return True

    if not run(test.body) or stored != [new]:
        return None
    if old == new or old not in params or new not in params or old in enclosing or new in enclosing:
        return None
    if any(name in enclosing or name == param for name in conditions):
        return None
    return ":".join(
        [f"rename-keyword:{old}:{new}:drops-none", *(f"none={name}" for name in sorted(conditions))]
    )


def _star_statements(
    wrapper: ast.FunctionDef | ast.AsyncFunctionDef, param: str
) -> tuple[str, str, list[ast.stmt]] | None:
    """For a `def w(*args, **kwargs)` wrapper of `param`: its two names and its statements but the
    docstring (and any other bare constant); None for another wrapper."""
    starred = _star_wrapper(wrapper, param)
    if starred is None:
        return None
    body = [s for s in wrapper.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return starred[0], starred[1], body


def _none_tested(node: ast.expr) -> tuple[str, bool] | None:
    """`x is None` -> (x, True); `x is not None` -> (x, False); else None."""
    if not (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name)):
        return None
    is_none = _none_test(node, node.left.id)
    return None if is_none is None else (node.left.id, is_none)


def calls_through(node: ast.expr | None, param: str, star: str, double: str) -> bool:
    """`f(*args, **kwargs)` with f the decorated function."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == param
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Starred)
        and isinstance(node.args[0].value, ast.Name)
        and node.args[0].value.id == star
        and len(node.keywords) == 1
        and node.keywords[0].arg is None
        and isinstance(node.keywords[0].value, ast.Name)
        and node.keywords[0].value.id == double
    )
