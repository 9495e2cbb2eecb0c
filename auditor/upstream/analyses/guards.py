"""Guards that raise on which arguments a call passes, read from a function's own source.

    def read_csv(path, names=lib.no_default, prefix=lib.no_default):
        kwds = locals().copy()
        checked = _refine(names, prefix)              # a helper of the same module, parameters unchanged
    def _refine(names, prefix):
        if names is not lib.no_default and prefix is not lib.no_default:
            raise ValueError("Specified named and prefix; you can only specify one.")

Input: a function's AST (and its module's, for a helper). Output: each guard `if <p is not X> and
...: raise E(...)` (or `p is X`: `if epochs is None: raise ...`) that every call reaches before anything could return: the statements before it
(in the function, then in the helper up to the guard) only bind, delete, evaluate or branch into
blocks that do the same, never `return`, loop, `yield` or catch. A statement before it may raise
too: the call still fails. The tests are in the terms of the function's own parameters, each with
whether the parameter's default is the very expression it is compared with (`names=lib.no_default`
against `names is not lib.no_default`: unpassed, the test is False). Whether an argument `is not`
the object is decided at the call, from the argument (a literal) and what the object is.
"""

from __future__ import annotations

import ast
from typing import Any

from apidrift.auditor.upstream.analyses.nodes import _own_nodes
from apidrift.auditor.upstream.astwalk import walk

# Statements that complete or raise, and nothing else, when their nested blocks do the same.
_SIMPLE = (
    ast.Assign,
    ast.AnnAssign,
    ast.AugAssign,
    ast.Delete,
    ast.Expr,
    ast.Pass,
    ast.Assert,
    ast.Raise,
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
)
MAX_STATEMENTS = 60  # statements read before a guard, in the function and its helper together


def raising_guards(
    function: ast.FunctionDef | ast.AsyncFunctionDef, module: ast.Module | None
) -> list[dict[str, Any]]:
    """The guards of `function` as dicts: tests [(param, compared text, default is compared)],
    exception text, message, function name and line of the raise."""
    if not isinstance(function, ast.FunctionDef) or _is_generator(function):
        return []
    args = function.args
    if args.vararg is not None or args.kwarg is not None:
        return []  # arguments may arrive under other names
    defaults = _defaults(args)
    params = {name: name for name in defaults}
    found: list[dict[str, Any]] = []
    budget = [MAX_STATEMENTS]
    helpers = _module_functions(module) if module is not None else {}
    _scan(function, function.body, params, defaults, helpers, found, budget, depth=0)
    return found


def _defaults(args: ast.arguments) -> dict[str, str | None]:
    """Each parameter -> the source text of its default (None when it has none)."""
    positional = [*args.posonlyargs, *args.args]
    texts: dict[str, str | None] = {a.arg: None for a in positional}
    for arg, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults):
        texts[arg.arg] = ast.unparse(default)
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults):
        texts[arg.arg] = ast.unparse(kw_default) if kw_default is not None else None
    return texts


def _scan(
    function: ast.FunctionDef,
    body: list[ast.stmt],
    params: dict[str, str],  # a name in this body -> the outer function's parameter it holds
    defaults: dict[str, str | None],
    helpers: dict[str, ast.FunctionDef],
    found: list[dict[str, Any]],
    budget: list[int],
    depth: int,
) -> None:
    held = dict(params)
    for stmt in _without_docstring(body):
        budget[0] -= 1
        if budget[0] < 0:
            return
        guard = _guard(stmt, held, defaults)
        if guard is not None:
            guard["where"] = f"{function.name}:{stmt.lineno}"
            found.append(guard)
            continue
        if depth == 0:
            helper = _helper_call(stmt, held, helpers)
            if helper is not None:
                callee, mapping = helper
                _scan(callee, callee.body, mapping, defaults, helpers, found, budget, depth + 1)
        if not _completes_or_raises(stmt):
            return
        for name in _stored_names(stmt):
            held.pop(name, None)  # rebound: no longer the argument


def _guard(stmt: ast.stmt, held: dict[str, str], defaults: dict[str, str | None]) -> dict[str, Any] | None:
    if not isinstance(stmt, ast.If) or stmt.orelse or len(stmt.body) != 1:
        return None
    raised = stmt.body[0]
    if not isinstance(raised, ast.Raise) or raised.exc is None or raised.cause is not None:
        return None
    exc = raised.exc
    message: str | None = None
    if isinstance(exc, ast.Call):
        if exc.keywords or any(isinstance(a, ast.Starred) for a in exc.args):
            return None
        if exc.args and isinstance(exc.args[0], ast.Constant) and isinstance(exc.args[0].value, str):
            message = exc.args[0].value
        exc = exc.func
    exception = _dotted(exc)
    if exception is None:
        return None
    operands = (
        stmt.test.values
        if isinstance(stmt.test, ast.BoolOp) and isinstance(stmt.test.op, ast.And)
        else [stmt.test]
    )
    tests = []
    for operand in operands:
        if not (
            isinstance(operand, ast.Compare)
            and len(operand.ops) == 1
            and isinstance(operand.ops[0], (ast.IsNot, ast.Is))
            and isinstance(operand.left, ast.Name)
            and operand.left.id in held
        ):
            return None
        right = operand.comparators[0]
        compared = "None" if isinstance(right, ast.Constant) and right.value is None else _dotted(right)
        if compared is None:
            return None
        param = held[operand.left.id]
        tests.append(
            [param, compared, defaults.get(param) == compared, isinstance(operand.ops[0], ast.IsNot)]
        )
    if len({t[0] for t in tests}) != len(tests):
        return None
    return {"tests": tests, "exception": exception, "message": message}


def _helper_call(
    stmt: ast.stmt, held: dict[str, str], helpers: dict[str, ast.FunctionDef]
) -> tuple[ast.FunctionDef, dict[str, str]] | None:
    """`x = helper(a, b, k=c)` / `helper(...)` with `helper` a plain function of the module: its
    parameters that receive one of the outer parameters unchanged."""
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr, ast.AnnAssign)) else None
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return None
    callee = helpers.get(value.func.id)
    if callee is None or _is_generator(callee):
        return None
    args = callee.args
    if (
        args.vararg is not None
        or args.kwarg is not None
        or any(isinstance(a, ast.Starred) for a in value.args)
    ):
        return None
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if len(value.args) > len(positional):
        return None
    mapping: dict[str, str] = {}
    for name, arg in zip(positional, value.args):
        if isinstance(arg, ast.Name) and arg.id in held:
            mapping[name] = held[arg.id]
    keyword_names = {a.arg for a in (*args.args, *args.kwonlyargs)}
    for keyword in value.keywords:
        if keyword.arg is None or keyword.arg not in keyword_names:
            return None
        if isinstance(keyword.value, ast.Name) and keyword.value.id in held:
            mapping[keyword.arg] = held[keyword.value.id]
    return (callee, mapping) if mapping else None


def _module_functions(module: ast.Module) -> dict[str, ast.FunctionDef]:
    """Plain functions defined once at module level and bound nowhere else there (read once per
    module: every function of it asks)."""
    cached = module.__dict__.get("_apidrift_module_functions")
    if cached is None:
        cached = module.__dict__["_apidrift_module_functions"] = _read_module_functions(module)
    return cached


def _read_module_functions(module: ast.Module) -> dict[str, ast.FunctionDef]:
    seen: dict[str, int] = {}
    functions: dict[str, ast.FunctionDef] = {}
    for stmt in module.body:
        for name in _stored_names(stmt):
            seen[name] = seen.get(name, 0) + 1
        if isinstance(stmt, ast.FunctionDef) and not stmt.decorator_list:
            functions[stmt.name] = stmt
    return {name: f for name, f in functions.items() if seen.get(name) == 1}


def _completes_or_raises(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
        return True  # binds a name; decorators run, and may raise
    if isinstance(stmt, ast.If):
        return all(_completes_or_raises(s) for s in (*stmt.body, *stmt.orelse))
    if isinstance(stmt, _SIMPLE):
        return not any(
            isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)) for n in walk(stmt)
        )
    return False  # return, loops, try (a handler may swallow), with (its exit may), match, ...


def _stored_names(stmt: ast.stmt) -> set[str]:
    names: set[str] = set()
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    for node in walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


def _is_generator(function: ast.FunctionDef) -> bool:
    cached = function.__dict__.get("_apidrift_generator")  # asked for the function, then as a helper
    if cached is None:
        cached = function.__dict__["_apidrift_generator"] = _has_yield(function)
    return cached


def _has_yield(function: ast.FunctionDef) -> bool:
    """A `yield` of the function's own body (not of a function, class or lambda nested in it): from
    the body's nodes the other analyses of the function read too (one walk of it, not two)."""
    return any(isinstance(node, (ast.Yield, ast.YieldFrom)) for node in _own_nodes(function))


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[1:]
    return body


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
