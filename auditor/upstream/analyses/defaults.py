"""What an omitted argument means when a function's default is `None` and its body replaces it at once.

Input: a function's AST (and, for a method, its class's). Output: for each parameter whose default is
`None` and whose body starts by replacing `None` with a value known for certain, that value's source
text: `{"catch_exceptions": "True"}` for click 8.2's

    class CliRunner:
        def __init__(self, ..., catch_exceptions: bool = True) -> None:
            ...
            self.catch_exceptions = catch_exceptions

        def invoke(self, ..., catch_exceptions: bool | None = None, ...):
            exc_info = None
            if catch_exceptions is None:
                catch_exceptions = self.catch_exceptions

The replacement counts only where nothing can run before it (the statements before it call nothing and
store no attribute) and the value is a literal, or `self.NAME` of a class without bases, metaclass or
`setattr` whose only binding of `NAME` is a literal class attribute or one top-level
`self.NAME = <literal or an __init__ parameter with a literal default>` in `__init__`. That is the
value a runner built with its defaults holds; anything else (a base that may define a property, a
second assignment, a call before) records nothing, and the default is compared as written.
"""

from __future__ import annotations

import ast

_MAX_STATEMENTS = 20  # leading statements looked at: the replacement comes first or not at all


def replaced_defaults(
    node: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None
) -> dict[str, str]:
    """{parameter: source text of the literal an omitted `None` is replaced by at once}."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    nones = {a.arg for a, d in pairs if isinstance(d, ast.Constant) and d.value is None}
    if not nones:
        return {}
    receiver = _receiver(node, owner)
    found: dict[str, str] = {}
    seen: set[str] = set()  # parameters mentioned before: a later replacement is no longer "at once"
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    for stmt in body[:_MAX_STATEMENTS]:
        replacement = _replacement(stmt)
        if replacement is not None and replacement[0] in nones and replacement[0] not in seen:
            name, value = replacement
            text = _value_text(value, receiver, owner)
            seen.add(name)
            if text is None:
                break  # replaced by something else: what follows may depend on it
            found[name] = text
            continue
        if _runs_code(stmt):
            break  # a call may change what `self.NAME` holds, or return first: nothing after is "at once"
        seen |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
    return found


def _receiver(node: ast.FunctionDef | ast.AsyncFunctionDef, owner: ast.ClassDef | None) -> str | None:
    """The name of the instance in a plain method (`self`), else None."""
    if owner is None or node.decorator_list:
        return None
    positional = [*node.args.posonlyargs, *node.args.args]
    return positional[0].arg if positional else None


def _replacement(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    """`if NAME is None: NAME = VALUE` (nothing else in it) or `NAME = VALUE if NAME is None else NAME`."""
    if (
        isinstance(stmt, ast.If)
        and not stmt.orelse
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], ast.Assign)
        and (name := _is_none_test(stmt.test)) is not None
        and _assigns(stmt.body[0], name)
    ):
        return name, stmt.body[0].value
    if (
        isinstance(stmt, ast.Assign)
        and isinstance(stmt.value, ast.IfExp)
        and (name := _is_none_test(stmt.value.test)) is not None
        and _assigns(stmt, name)
        and isinstance(stmt.value.orelse, ast.Name)
        and stmt.value.orelse.id == name
    ):
        return name, stmt.value.body
    return None


def _is_none_test(test: ast.expr) -> str | None:
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Is)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return test.left.id
    return None


def _assigns(stmt: ast.Assign, name: str) -> bool:
    return len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == name


def _runs_code(node: ast.AST) -> bool:
    """Whether evaluating `node` may run code beyond reading locals and literals (a call, an attribute
    store or read through a descriptor, an await, a yield, a return, a raise...)."""
    for inner in ast.walk(node):
        if isinstance(inner, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.Return, ast.Raise,
                              ast.With, ast.AsyncWith, ast.Delete, ast.Global, ast.Nonlocal, ast.Subscript,
                              ast.BinOp, ast.Compare, ast.For, ast.While, ast.Try, ast.Lambda, ast.NamedExpr)):  # fmt: skip
            return True
        if isinstance(inner, ast.Attribute):  # a property or `__getattr__` may run code, a store may too
            return True
    return False


def _literal(node: ast.expr) -> str | None:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return ast.unparse(node)


def _value_text(value: ast.expr, receiver: str | None, owner: ast.ClassDef | None) -> str | None:
    text = _literal(value)
    if text is not None:
        return text
    if (
        receiver is not None
        and owner is not None
        and isinstance(value, ast.Attribute)
        and isinstance(value.value, ast.Name)
        and value.value.id == receiver
    ):
        return _attribute_default(owner, value.attr)
    return None


def _attribute_default(owner: ast.ClassDef, attr: str) -> str | None:
    """The literal an instance built with the defaults holds in `attr`, when the class says it for certain."""
    if owner.keywords or any(not (isinstance(b, ast.Name) and b.id == "object") for b in owner.bases):
        return None  # a base may define a property of that name; a metaclass may change instances
    class_level: list[ast.expr | None] = []
    stores: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.stmt]] = []
    for stmt in owner.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if stmt.name == attr:
                return None  # a method or property of that name
            for inner in ast.walk(stmt):
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id in (
                    "setattr", "vars", "exec", "eval"
                ):  # fmt: skip
                    return None
                if isinstance(inner, ast.Name) and inner.id == "__dict__":
                    return None
                if isinstance(inner, ast.Attribute) and inner.attr in ("__dict__", "__setattr__"):
                    return None
                if (
                    isinstance(inner, ast.Attribute)
                    and inner.attr == attr
                    and not isinstance(inner.ctx, ast.Load)
                ):
                    stores.append((stmt, inner))  # type: ignore[arg-type]
        elif isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == attr for t in stmt.targets
        ):
            class_level.append(stmt.value if len(stmt.targets) == 1 else None)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == attr:
            class_level.append(stmt.value)
        elif isinstance(stmt, ast.ClassDef) and stmt.name == attr:
            return None
        elif not isinstance(stmt, (ast.Expr, ast.Pass, ast.Assign, ast.AnnAssign)):
            return None  # an `if`/`for`/`try` in the class body: bindings not read here
    if len(class_level) > 1 or len(stores) > 1:
        return None
    if not stores:
        return _literal(class_level[0]) if class_level and class_level[0] is not None else None
    method, store = stores[0]
    if method.name != "__init__" or method.decorator_list:
        return None
    return _init_value(method, store, attr)


def _init_value(init: ast.FunctionDef | ast.AsyncFunctionDef, store: ast.AST, attr: str) -> str | None:
    """`self.ATTR = VALUE` as a top-level statement of `__init__`: the literal, or the literal default
    of the parameter it copies (not rebound before)."""
    positional = [*init.args.posonlyargs, *init.args.args]
    if not positional:
        return None
    me = positional[0].arg
    for index, stmt in enumerate(init.body):
        if not (
            isinstance(stmt, (ast.Assign, ast.AnnAssign))
            and (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]) == [store]
        ):
            continue
        target = store
        if not (
            isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me
        ):
            return None
        value = stmt.value
        if value is None:
            return None
        text = _literal(value)
        if text is not None:
            return text
        if not isinstance(value, ast.Name):
            return None
        before = init.body[:index]
        if any(
            isinstance(n, ast.Name) and n.id == value.id and not isinstance(n.ctx, ast.Load)
            for s in before
            for n in ast.walk(s)
        ):
            return None  # the parameter is rebound first
        args = init.args
        params = [*positional, *args.kwonlyargs]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += [*args.defaults, *args.kw_defaults]
        for param, default in zip(params, defaults):
            if param.arg == value.id:
                return _literal(default) if default is not None else None
        return None
    return None  # not a top-level statement of __init__ (inside an `if`, a loop...)
