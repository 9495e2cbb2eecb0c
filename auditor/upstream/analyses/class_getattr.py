"""What a class's `__getattr__` hands back for a name, where its body says so plainly.

pymongo's `Collection.__getattr__(self, name)` refuses names starting with `_` (AttributeError) and
returns `self.__getitem__(name)`, whose one `return` builds `Collection(...)`: any other name read on
a collection is a sub-collection, an instance of `Collection` itself. Read from the source: a body of
refusing guards (`if <test of name>: raise ...`) and one `return` that is a constructor call or
`self.__getitem__(name)`. Nothing is evaluated; anything else is no answer (None).
"""

from __future__ import annotations

import ast
from typing import Any


def getattr_serves(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any] | None:
    """For `__getattr__(self, name)`: {"returns": "item" | dotted callee as written, "refuses":
    [[kind, value], ...]} where kind is "startswith" (value: list of prefixes), "in" (list of names)
    or "eq" (a name); None when the body is not of that plain shape."""
    if isinstance(node, ast.AsyncFunctionDef) or len(node.args.args) != 2 or node.decorator_list:
        return None
    this, name = node.args.args[0].arg, node.args.args[1].arg
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        return None
    refuses: list[list[Any]] = []
    for stmt in body[:-1]:
        if not (isinstance(stmt, ast.If) and not stmt.orelse and _ends_in_raise(stmt.body)):
            return None
        tests = _name_tests(stmt.test, name)
        if tests is None:
            return None
        refuses += tests
    returns = _returned(body[-1].value, this, name)
    return {"returns": returns, "refuses": refuses} if returns is not None else None


def single_constructor_return(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The dotted callee, as written, of a function whose one `return` is a call of a plain dotted
    name (`return Collection(self.__database, ...)`); None otherwise."""
    if isinstance(node, ast.AsyncFunctionDef):
        return None
    returns = [n for n in ast.walk(node) if isinstance(n, ast.Return)]
    nested = [n for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    if len(returns) != 1 or len(nested) != 1 or returns[0].value is None:
        return None
    value = returns[0].value
    return _dotted(value.func) if isinstance(value, ast.Call) else None


def refused(serves: dict[str, Any], attribute: str) -> bool:
    """Whether a guard of the `__getattr__` refuses `attribute`."""
    for kind, value in serves["refuses"]:
        if kind == "startswith" and any(attribute.startswith(p) for p in value):
            return True
        if kind == "in" and attribute in value:
            return True
        if kind == "eq" and attribute == value:
            return True
    return False


def _ends_in_raise(body: list[ast.stmt]) -> bool:
    return (
        bool(body)
        and isinstance(body[-1], ast.Raise)
        and all(isinstance(s, (ast.Assign, ast.AnnAssign, ast.Expr)) for s in body[:-1])
    )


def _name_tests(test: ast.expr, name: str) -> list[list[Any]] | None:
    """`name.startswith("_")` (a string or a tuple of strings), `name in ("a", "b")`, `name == "a"`,
    and `or` of them: the names the test holds for; None for any other test."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        found: list[list[Any]] = []
        for value in test.values:
            inner = _name_tests(value, name)
            if inner is None:
                return None
            found += inner
        return found
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "startswith"
        and isinstance(test.func.value, ast.Name)
        and test.func.value.id == name
        and len(test.args) == 1
        and not test.keywords
    ):
        prefixes = _strings(test.args[0])
        return [["startswith", prefixes]] if prefixes is not None else None
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == name
        and len(test.ops) == 1
    ):
        if isinstance(test.ops[0], ast.In):
            names = _strings(test.comparators[0])
            return [["in", names]] if names is not None else None
        if isinstance(test.ops[0], ast.Eq):
            names = _strings(test.comparators[0])
            return [["eq", names[0]]] if names is not None and len(names) == 1 else None
    return None


def _strings(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def _returned(value: ast.expr, this: str, name: str) -> str | None:
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "__getitem__"
        and isinstance(func.value, ast.Name)
        and func.value.id == this
        and len(value.args) == 1
        and isinstance(value.args[0], ast.Name)
        and value.args[0].id == name
        and not value.keywords
    ):
        return "item"
    return _dotted(func)


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id in ("self", "cls"):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))
