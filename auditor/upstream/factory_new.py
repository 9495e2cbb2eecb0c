"""Which class a `__new__` constructs, read statically from its body (never run).

`type.__call__(cls, *args, **kwargs)` calls `cls.__new__(cls, *args, **kwargs)` and then, only when the
object returned is an instance of `cls`, `type(obj).__init__(obj, *args, **kwargs)`: a factory
`__new__` (`if cls is Op: return super().__new__(_CustomOp)`) decides which `__init__` the arguments
meet. The loader records the body as a decision list, `((conditions, result), ...)` in source order:

- a condition is `("is", path)` or `("is not", path)`: `cls is X` / `cls is not X`, X as written;
- a result is `"cls"` (`super().__new__(cls)`, `object.__new__(cls)`, `Base.__new__(cls, ...)`),
  a dotted name (the class handed to such a `__new__` call), `"none"` (falls off the end or returns
  None: `__init__` is not called), or `"?"` (anything else: not knowable).

The first entry whose conditions all hold for the class called is what the call constructs.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

Construct = tuple[tuple[tuple[str, str], ...], str]

UNKNOWN = "?"
MAX_ENTRIES = 32


def new_constructs(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[Construct, ...]:
    """The decision list of a `__new__` body (see the module docstring)."""
    if isinstance(node, ast.AsyncFunctionDef) or not node.args.args:
        return (((), UNKNOWN),)
    cls = node.args.args[0].arg
    stores: dict[str, list[ast.expr | None]] = {}
    arguments = node.args
    for param in (
        *arguments.posonlyargs,
        *arguments.args,
        *arguments.kwonlyargs,
        arguments.vararg,
        arguments.kwarg,
    ):
        if param is not None and param.arg != cls:
            stores[param.arg] = [None]  # a parameter: whatever the caller passes
    for inner in ast.walk(node):
        if isinstance(inner, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
            value = inner.value if isinstance(inner, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) else None
            for target in targets:
                for name in _bound_names(target):
                    if isinstance(name, ast.Name):
                        single = isinstance(target, ast.Name) and not isinstance(inner, ast.AugAssign)
                        stores.setdefault(name.id, []).append(value if single else None)
    for inner in ast.walk(node):
        if isinstance(
            inner, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.comprehension, ast.ExceptHandler)
        ):
            if isinstance(inner, ast.ExceptHandler):
                if inner.name:
                    stores.setdefault(inner.name, []).append(None)
                continue
            bound = (
                [inner.target]
                if not isinstance(inner, (ast.With, ast.AsyncWith))
                else [item.optional_vars for item in inner.items if item.optional_vars is not None]
            )
            for target in bound:
                for name in _bound_names(target):
                    stores.setdefault(name.id, []).append(None)  # bound by a loop or a with: not one value
        elif isinstance(inner, (ast.Import, ast.ImportFrom)):
            for alias in inner.names:
                stores.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
        elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Del):
            stores.setdefault(inner.id, []).append(None)
        elif isinstance(inner, (ast.Global, ast.Nonlocal)):
            for declared in inner.names:
                stores.setdefault(declared, []).append(None)
    if cls in stores:
        return (((), UNKNOWN),)  # `cls` rebound: the tests below may not see the class called
    entries: list[Construct] = []
    reader = _Reader(cls, stores, entries)
    if not reader.block(node.body, ()):
        entries.append(((), "none"))  # falls off the end: reached only when no earlier entry holds
    return tuple(entries) if len(entries) <= MAX_ENTRIES else (((), UNKNOWN),)


class _Reader:
    def __init__(self, cls: str, stores: dict[str, list[ast.expr | None]], entries: list[Construct]) -> None:
        self.cls = cls
        self.stores = stores
        self.entries = entries

    def block(self, statements: list[ast.stmt], conditions: tuple[tuple[str, str], ...]) -> bool:
        """Read statements in order; True when every path through them returns (or raises)."""
        for stmt in statements:
            if isinstance(stmt, ast.Return):
                self.entries.append((conditions, self.result(stmt.value)))
                return True
            if isinstance(stmt, ast.Raise):
                self.entries.append((conditions, UNKNOWN))
                return True
            if isinstance(stmt, ast.If):
                test = self.condition(stmt.test)
                if test is None:
                    if _returns_or_raises(stmt):
                        self.entries.append((conditions, UNKNOWN))
                        return True
                    continue
                negated = ("is not" if test[0] == "is" else "is", test[1])
                body = self.block(stmt.body, (*conditions, test))
                orelse = self.block(stmt.orelse, (*conditions, negated))
                if body and orelse:
                    return True
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if _returns_or_raises(stmt, raises=False):
                self.entries.append((conditions, UNKNOWN))  # a return inside a loop, try or with
                return True
        return False

    def condition(self, test: ast.expr) -> tuple[str, str] | None:
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and isinstance(test.left, ast.Name)
            and test.left.id == self.cls
            and isinstance(test.comparators[0], (ast.Name, ast.Attribute))
        ):
            return ("is" if isinstance(test.ops[0], ast.Is) else "is not", ast.unparse(test.comparators[0]))
        return None

    def result(self, value: ast.expr | None, depth: int = 0) -> str:
        if value is None or (isinstance(value, ast.Constant) and value.value is None):
            return "none"
        if isinstance(value, ast.Name) and depth < 3:
            assigned = self.stores.get(value.id, [])
            if len(assigned) == 1 and assigned[0] is not None:
                return self.result(assigned[0], depth + 1)
            return UNKNOWN
        if not (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "__new__"
        ):
            return UNKNOWN
        owner = value.func.value
        is_super = (
            isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super"
        )
        if not (is_super or isinstance(owner, (ast.Name, ast.Attribute))) or not value.args:
            return UNKNOWN
        first = value.args[0]
        if isinstance(first, ast.Starred):
            return UNKNOWN
        if isinstance(first, ast.Name) and first.id == self.cls:
            return "cls"
        if isinstance(first, (ast.Name, ast.Attribute)) and not (
            isinstance(first, ast.Name) and first.id in self.stores
        ):
            return ast.unparse(first)
        return UNKNOWN


def _bound_names(target: ast.expr) -> list[ast.Name]:
    """The names an assignment target binds (`a`, `a, *b`), not those it only reads (`a.x`, `a[i]`)."""
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for element in target.elts for n in _bound_names(element)]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    return []


def _returns_or_raises(stmt: ast.stmt, raises: bool = True) -> bool:
    kinds: tuple[type, ...] = (ast.Return, ast.Raise) if raises else (ast.Return,)
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def evaluate(constructs: tuple[Construct, ...], holds: Callable[[tuple[str, str]], bool | None]) -> str:
    """What the body constructs for one class: `holds(condition)` tells a test's truth (None: unknown)."""
    for conditions, result in constructs:
        truths = [holds(c) for c in conditions]
        if any(t is None for t in truths):
            return UNKNOWN
        if all(truths):
            return result
    return "none"


__all__ = ["UNKNOWN", "Construct", "evaluate", "new_constructs"]
