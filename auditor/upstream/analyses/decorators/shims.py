"""When a wrapper warns: a deprecation shim for positional arguments (`if len(args) > n: warn(...)`),
its threshold and the parameters it names.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from apidrift.auditor.upstream.analyses.nodes import _last_name
from apidrift.auditor.upstream.astwalk import children, walk

from .flow import _local_assignments, _reachable_returns


def _shim_warning(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    position: int,
    owner: ast.FunctionDef | ast.AsyncFunctionDef | None = None,
    depth: int = 0,
) -> dict[str, str] | None:
    """As a decorator given the function at parameter `position`: when the wrapper every reachable
    `return` gives warns, read from its source. A `*warn*` call (`warnings.warn`, `warn_deprecated`)
    under one condition comparing `len(<*args>)` with the function's positional parameters: their
    count (`len(names)`, a list of the POSITIONAL_OR_KEYWORD names of `signature(f)`: "threshold":
    "positional") or the index of the parameter a decorator argument names (`[*signature(f).parameters]
    .index(name)`: "threshold": "index", "argument": its name, "position": its place among `owner`'s
    parameters, `owner` being the function the decorator's call arguments go to; `.index("c")`:
    "literal": "c"). The wrapper warns
    exactly when more positional arguments than that threshold are given. "warn": the warning call's
    name, "category": the warning class when written."""
    args = node.args.posonlyargs + node.args.args
    if isinstance(node, ast.AsyncFunctionDef) or len(args) <= position or depth > 2:
        return None
    param = args[position].arg
    inner = {n.name: n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assigned = _local_assignments(node)
    found: set[tuple[tuple[str, str], ...]] = set()
    for ret in _reachable_returns(node.body, param):
        value = ret.value
        warning: dict[str, str] | None = None
        if isinstance(value, ast.Name) and value.id in inner and value.id not in assigned:
            warning = _wrapper_warning(inner[value.id], param, node, assigned, owner)
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in inner
            and value.func.id not in assigned
            and len(value.args) == 1
            and not value.keywords
            and isinstance(value.args[0], ast.Name)
            and value.args[0].id == param
        ):
            warning = _shim_warning(inner[value.func.id], 0, owner or node, depth + 1)
        if warning is None:
            return None
        found.add(tuple(sorted(warning.items())))
    return dict(found.pop()) if len(found) == 1 else None


def _is_warn_call(stmt: ast.stmt) -> ast.Call | None:
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        name = _last_name(stmt.value.func)
        if name is not None and "warn" in name.lower():
            return stmt.value
    return None


_NEGATED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Gt: ast.LtE,
    ast.GtE: ast.Lt,
    ast.Lt: ast.GtE,
    ast.LtE: ast.Gt,
}


_FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
}


def _wrapper_warning(
    wrapper: ast.FunctionDef | ast.AsyncFunctionDef,
    param: str,
    decorator: ast.FunctionDef | ast.AsyncFunctionDef,
    assigned: dict[str, list[ast.expr]],
    owner: ast.FunctionDef | ast.AsyncFunctionDef | None,
) -> dict[str, str] | None:
    """The warning of `def wrapper(*args, **kwargs)` (see `_shim_warning`): the first `*warn*` call at
    the top of the body or of an `if` body there, with the one condition it runs under: that `if`'s
    test, or the negation of an earlier `if test: return ...` guard."""
    spec = wrapper.args
    if spec.args or spec.posonlyargs or not spec.vararg:
        return None
    star = spec.vararg.arg
    found = _warn_under(wrapper)
    if found is None:
        return None
    call, conditions = found
    if len(conditions) != 1:
        return None
    test, holds = conditions[0]
    local = _local_assignments(wrapper)
    threshold = _count_condition(test, holds, star, local, param, decorator, assigned, owner)
    if threshold is None:
        return None
    category = next((k.value for k in call.keywords if k.arg == "category"), None)
    if category is None and len(call.args) >= 2:
        category = call.args[1]
    warning = dict(threshold)
    warning["warn"] = _last_name(call.func) or ""
    if isinstance(category, (ast.Name, ast.Attribute)):
        warning["category"] = _last_name(category) or ""
    return warning


def _warn_under(
    wrapper: ast.FunctionDef | ast.AsyncFunctionDef,
) -> tuple[ast.Call, list[tuple[ast.expr, bool]]] | None:
    """The first `*warn*` call at the top of the wrapper's body or of an `if` body there, with the
    conditions it runs under (test, holds when true); None where another branch comes first."""
    conditions: list[tuple[ast.expr, bool]] = []  # (test, holds when true)
    call: ast.Call | None = None
    for stmt in wrapper.body:
        if (call := _is_warn_call(stmt)) is not None:
            break
        if isinstance(stmt, ast.If):
            warned = None
            for inner in stmt.body:
                if isinstance(inner, (ast.Return, ast.Raise)):
                    break  # what follows never runs
                if (warned := _is_warn_call(inner)) is not None:
                    break
            if warned is not None:
                if stmt.orelse:
                    return None
                conditions.append((stmt.test, True))
                call = warned
                break
            if stmt.body and isinstance(stmt.body[-1], (ast.Return, ast.Raise)) and not stmt.orelse:
                conditions.append((stmt.test, False))
                continue
            return None  # another branch before the warning: it may change what follows
        if isinstance(stmt, (ast.Return, ast.Raise, ast.Try, ast.For, ast.While, ast.With)):
            return None
    if call is None:
        return None
    return call, conditions


def _count_condition(
    test: ast.expr,
    holds: bool,
    star: str,
    local: dict[str, list[ast.expr]],
    param: str,
    decorator: ast.FunctionDef | ast.AsyncFunctionDef,
    assigned: dict[str, list[ast.expr]],
    owner: ast.FunctionDef | ast.AsyncFunctionDef | None,
) -> dict[str, str] | None:
    """`len(args) > T`, `len(args) - T > 0`, `extra = len(args) - T; if extra <= 0: return ...` and
    the like: the threshold T when the condition holds exactly for `len(args) > T`."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, holds = test.operand, not holds
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    op = type(test.ops[0])
    if op not in _NEGATED:
        return None
    if not holds:
        op = _NEGATED[op]
    terms = _Terms(star, local, param, decorator, assigned, owner)
    thresholds = terms.thresholds
    left, right = terms.linear(test.left), terms.linear(test.comparators[0])
    if left is None or right is None or len({tuple(sorted(t.items())) for t in thresholds}) != 1:
        return None
    n, t, c = left[0] - right[0], left[1] - right[1], left[2] - right[2]
    if n not in (1, -1) or t != -n:
        return None
    if n == -1:  # -(len(args) - T) - c OP 0  ->  len(args) - T + c FLIP(OP) 0
        op, c = _FLIPPED[op], -c
    # len(args) - T + c OP 0: warns exactly when len(args) > T for `> 0` (c == 0) or `>= 1` (c == -1)
    if (op is ast.Gt and c == 0) or (op is ast.GtE and c == -1):
        return thresholds[0]
    return None


@dataclass
class _Terms:
    """Reads a side of a count condition as a linear form; the thresholds it names are collected."""

    star: str
    local: dict[str, list[ast.expr]]
    param: str
    decorator: ast.FunctionDef | ast.AsyncFunctionDef
    assigned: dict[str, list[ast.expr]]
    owner: ast.FunctionDef | ast.AsyncFunctionDef | None
    thresholds: list[dict[str, str]] = field(default_factory=list)

    def linear(self, expr: ast.expr, depth: int = 0) -> tuple[int, int, int] | None:
        # (coefficient of len(args), coefficient of T, constant)
        if depth > 4:
            return None
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return 0, 0, expr.value
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            inner = self.linear(expr.operand, depth + 1)
            return None if inner is None else (-inner[0], -inner[1], -inner[2])
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            left, right = self.linear(expr.left, depth + 1), self.linear(expr.right, depth + 1)
            if left is None or right is None:
                return None
            sign = 1 if isinstance(expr.op, ast.Add) else -1
            return left[0] + sign * right[0], left[1] + sign * right[1], left[2] + sign * right[2]
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Name)
            and expr.func.id == "len"
            and len(expr.args) == 1
            and not expr.keywords
            and isinstance(expr.args[0], ast.Name)
        ):
            return self.length(expr.args[0].id)
        if isinstance(expr, ast.Name):
            if expr.id in self.local:
                values = self.local[expr.id]
                return self.linear(values[0], depth + 1) if len(values) == 1 else None
            index = _parameter_index(self.decorator, expr.id, self.param, self.assigned, self.owner)
            if index is not None:
                self.thresholds.append(index)
                return 0, 1, 0
        return None

    def length(self, name: str) -> tuple[int, int, int] | None:
        """`len(name)`: the count of positional arguments, or a threshold (the function's own)."""
        if name == self.star and name not in self.local:
            return 1, 0, 0
        if name not in self.local and _counts_positional(self.decorator, name, self.param, self.assigned):
            self.thresholds.append({"threshold": "positional"})
            return 0, 1, 0
        return None


def _signature_names(param: str, assigned: dict[str, list[ast.expr]]) -> set[str]:
    """Local names holding `signature(param)`."""
    return {
        name
        for name, values in assigned.items()
        if len(values) == 1
        and isinstance(values[0], ast.Call)
        and _last_name(values[0].func) == "signature"
        and len(values[0].args) == 1
        and not values[0].keywords
        and isinstance(values[0].args[0], ast.Name)
        and values[0].args[0].id == param
    }


def _is_parameters_of(expr: ast.expr, signatures: set[str], param: str) -> bool:
    """`sig.parameters` with `sig` one of `signatures`, or `signature(param).parameters`."""
    if not (isinstance(expr, ast.Attribute) and expr.attr == "parameters"):
        return False
    value = expr.value
    if isinstance(value, ast.Name):
        return value.id in signatures
    return (
        isinstance(value, ast.Call)
        and _last_name(value.func) == "signature"
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], ast.Name)
        and value.args[0].id == param
    )


def _kind_test(test: ast.expr, var: str) -> str | None:
    """`var.kind == <...>.KIND` (or `is`): the kind's name."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.Is))
        and isinstance(test.left, ast.Attribute)
        and test.left.attr == "kind"
        and isinstance(test.left.value, ast.Name)
        and test.left.value.id == var
    ):
        return _last_name(test.comparators[0])
    return None


def _counts_positional(
    decorator: ast.FunctionDef | ast.AsyncFunctionDef,
    name: str,
    param: str,
    assigned: dict[str, list[ast.expr]],
) -> bool:
    """`name = []`, filled by one `name.append(...)` in `for ..., p in signature(f).parameters.items():`
    (or `.values()`) under `if p.kind == Parameter.POSITIONAL_OR_KEYWORD:` (an `elif` after tests of
    other kinds), and otherwise only measured: `len(name)` counts f's positional-or-keyword parameters."""
    values = assigned.get(name, [])
    if len(values) != 1 or not (isinstance(values[0], ast.List) and not values[0].elts):
        return False
    signatures = _signature_names(param, assigned)
    parents: dict[int, ast.AST] = {}
    for holder in walk(decorator):
        for child in children(holder):
            parents[id(child)] = holder
    appends = 0
    for use in walk(decorator):
        if not (isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load)):
            continue
        parent = parents.get(id(use))
        if isinstance(parent, ast.Call) and _last_name(parent.func) == "len" and parent.args == [use]:
            continue
        call = parents.get(id(parent)) if parent is not None else None
        if not (
            isinstance(parent, ast.Attribute)
            and parent.attr == "append"
            and isinstance(call, ast.Call)
            and call.func is parent
            and len(call.args) == 1
            and not call.keywords
        ):
            return False
        appends += 1
        if not _appended_in_positional_loop(call, parents, signatures, param):
            return False
    return appends == 1


def _appended_in_positional_loop(
    call: ast.Call, parents: dict[int, ast.AST], signatures: set[str], param: str
) -> bool:
    """The `name.append(...)` statement `call` is the body of an `if p.kind == POSITIONAL_OR_KEYWORD:`
    (an `elif` after tests of other kinds) in `for ..., p in signature(f).parameters.items():`."""
    stmt = parents.get(id(call))
    guard = parents.get(id(stmt)) if stmt is not None else None
    if not (isinstance(stmt, ast.Expr) and isinstance(guard, ast.If) and stmt in guard.body):
        return False
    # climb the elif chain to the loop: earlier tests must be of other kinds (disjoint)
    tests = [guard.test]
    current: ast.AST = guard
    while isinstance(up := parents.get(id(current)), ast.If) and current in up.orelse:
        tests.append(up.test)
        current = up
    loop = parents.get(id(current))
    if not (isinstance(loop, ast.For) and current in loop.body):
        return False
    iterated = loop.iter
    if not (
        isinstance(iterated, ast.Call)
        and isinstance(iterated.func, ast.Attribute)
        and iterated.func.attr in ("items", "values")
        and not iterated.args
        and _is_parameters_of(iterated.func.value, signatures, param)
    ):
        return False
    target = loop.target
    if iterated.func.attr == "items":
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            return False
        target = target.elts[1]
    if not isinstance(target, ast.Name):
        return False
    kinds = [_kind_test(t, target.id) for t in tests]
    return kinds[0] == "POSITIONAL_OR_KEYWORD" and not any(k is None or k == kinds[0] for k in kinds[1:])


def _parameter_index(
    decorator: ast.FunctionDef | ast.AsyncFunctionDef,
    name: str,
    param: str,
    assigned: dict[str, list[ast.expr]],
    owner: ast.FunctionDef | ast.AsyncFunctionDef | None,
) -> dict[str, str] | None:
    """`name = names.index(arg)` with `names = [*signature(f).parameters]` (or `list(...)`) and `arg` a
    parameter of `owner` (the function the decorator's call arguments go to) it never rebinds."""
    values = assigned.get(name, [])
    if len(values) != 1:
        return None
    value = values[0]
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "index"
        and isinstance(value.func.value, ast.Name)
        and len(value.args) == 1
        and not value.keywords
        and isinstance(value.args[0], (ast.Name, ast.Constant))
    ):
        return None
    listed = assigned.get(value.func.value.id, [])
    signatures = _signature_names(param, assigned)
    if len(listed) != 1 or not (
        (
            isinstance(listed[0], ast.List)
            and len(listed[0].elts) == 1
            and isinstance(listed[0].elts[0], ast.Starred)
            and _is_parameters_of(listed[0].elts[0].value, signatures, param)
        )
        or (
            isinstance(listed[0], ast.Call)
            and isinstance(listed[0].func, ast.Name)
            and listed[0].func.id == "list"
            and len(listed[0].args) == 1
            and _is_parameters_of(listed[0].args[0], signatures, param)
        )
    ):
        return None
    if isinstance(value.args[0], ast.Constant):  # `names.index("c")`: the decorator's own choice
        literal = value.args[0].value
        return {"threshold": "index", "literal": literal} if isinstance(literal, str) else None
    arg = value.args[0].id
    owner = owner or decorator
    owner_args = owner.args.posonlyargs + owner.args.args
    position = next((i for i, a in enumerate(owner_args) if a.arg == arg), None)
    keyword = position is None and any(a.arg == arg for a in owner.args.kwonlyargs)
    if position is None and not keyword:
        return None
    comprehended = {
        id(n) for comp in walk(owner) if isinstance(comp, ast.comprehension) for n in walk(comp.target)
    }
    if any(
        isinstance(n, ast.Name)
        and n.id == arg
        and not isinstance(n.ctx, ast.Load)
        and id(n) not in comprehended
        for n in walk(owner)
    ):
        return None
    found = {"threshold": "index", "argument": arg}
    if position is not None:
        found["position"] = str(position)
    return found
