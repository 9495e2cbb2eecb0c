"""What the decorator readers share: the `return` statements reachable in a body (a branch `if func
is None:` not taken when the function is given) and each local name's assigned values.
"""

from __future__ import annotations

import ast

from apidrift.auditor.upstream.analyses.nodes import _last_name, _own_nodes
from apidrift.auditor.upstream.astwalk import children, walk


def _local_assignments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr]]:
    """Each local name with the values assigned to it (a placeholder for augmented or unpacked ones)."""
    assigned: dict[str, list[ast.expr]] = {}
    for stmt in _own_nodes(node):
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                for name in walk(target):
                    if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                        assigned.setdefault(name.id, []).append(
                            stmt.value if target is name else ast.Constant(None)
                        )
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(stmt.target, ast.Name):
            assigned.setdefault(stmt.target.id, []).extend([ast.Constant(None), ast.Constant(None)])
        elif isinstance(stmt, (ast.For, ast.With, ast.NamedExpr, ast.comprehension)):
            for name in walk(getattr(stmt, "target", stmt)):
                if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                    assigned.setdefault(name.id, []).extend([ast.Constant(None), ast.Constant(None)])
    return assigned


def _none_test(test: ast.expr, param: str) -> bool | None:
    """True for `param is None`, False for `param is not None`, None for any other test."""
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == param
        and len(test.ops) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        if isinstance(test.ops[0], ast.Is):
            return True
        if isinstance(test.ops[0], ast.IsNot):
            return False
    return None


def _reachable_returns(body: list[ast.stmt], param: str, is_none: bool = False) -> list[ast.Return]:
    """The `return`s of a function body that can run when `param is None` is `is_none`: a top-level
    `if param is None:` / `if param is not None:` branch is followed only when it is taken."""
    found: list[ast.Return] = []
    for stmt in body:
        if isinstance(stmt, ast.If) and (test := _none_test(stmt.test, param)) is not None:
            taken = stmt.body if test == is_none else stmt.orelse
            found.extend(_reachable_returns(taken, param, is_none))
            if taken and isinstance(taken[-1], (ast.Return, ast.Raise)):
                return found
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        stack: list[ast.AST] = [stmt]
        while stack:
            current = stack.pop()
            if isinstance(current, ast.Return):
                found.append(current)
            if not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(children(current))
        if isinstance(stmt, (ast.Return, ast.Raise)):
            break
    return found


def _star_wrapper(wrapper: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> tuple[str, str] | None:
    """`@wraps(param) def w(*args, **kwargs)`, with no other parameter: the names of its `*` and `**`
    parameters; None for any other wrapper."""
    wraps = any(
        isinstance(d, ast.Call)
        and _last_name(d.func) == "wraps"
        and d.args
        and isinstance(d.args[0], ast.Name)
        and d.args[0].id == param
        for d in wrapper.decorator_list
    )
    args = wrapper.args
    if not wraps or args.args or args.posonlyargs or args.kwonlyargs or not args.vararg or not args.kwarg:
        return None
    return args.vararg.arg, args.kwarg.arg
