"""Module protocols read from a module's tree: whether it defines `__getattr__` and what that calls,
the names it binds through `globals()` or `__all__` (a loop over a table, `globals().update(...)`,
lazy loaders), and the members of its Enum classes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from .facts import _bindings, _certain_statements, _module_statements, _Pruner


def namespace_writes(tree: ast.Module) -> list[ast.stmt]:
    """Module-level statements that run on every import and bind names in the module's namespace in a
    way the evaluator reads: `globals().update(X)` (X a dict it can evaluate, keywords, or an Enum's
    `__members__`), and a `for` loop over a value it can evaluate (an Enum class too) whose body writes
    `globals()[key] = value` or `setattr(module, key, value)` (the module: `sys.modules[__name__]`, or
    a name bound once to it and used for nothing else: Pillow's constants), with plain assignments,
    nested loops, `if` tests, `continue` and `__all__` additions around it. The binding of such a
    module name is one of these statements (it binds nothing)."""
    certain = _certain_statements(tree)
    aliases = _module_aliases(tree)
    found = [
        stmt
        for stmt in _module_statements(tree)
        if id(stmt) in certain and (_is_namespace_update(stmt) or _is_namespace_loop(stmt, aliases))
    ]
    if found and aliases:
        used = {
            id(n)
            for stmt in found
            for n in ast.walk(stmt)
            if isinstance(n, ast.Name) and n.id in aliases and isinstance(n.ctx, ast.Load)
        }
        loads = {
            id(n)
            for n in ast.walk(tree)
            if isinstance(n, ast.Name) and n.id in aliases and isinstance(n.ctx, ast.Load)
        }
        if used == loads:  # every use of the alias is a write the evaluator reads
            found.extend(stmt for stmt in tree.body if _module_alias_of(stmt) in aliases)
        else:
            found = [
                stmt
                for stmt in found
                if not any(isinstance(n, ast.Name) and n.id in aliases for n in ast.walk(stmt))
            ]
    return sorted(found, key=lambda stmt: stmt.lineno)


def _is_this_module(node: ast.AST) -> bool:
    """`sys.modules[__name__]`."""
    return (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "modules"
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id == "sys"
        and isinstance(node.slice, ast.Name)
        and node.slice.id == "__name__"
    )


def _module_alias_of(stmt: ast.stmt) -> str | None:
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
        and _is_this_module(stmt.value)
    ):
        return stmt.targets[0].id
    return None


def _module_aliases(tree: ast.Module) -> frozenset[str]:
    """Names bound once, at the top level, to `sys.modules[__name__]`, and never otherwise."""
    candidates = {name for stmt in tree.body if (name := _module_alias_of(stmt)) is not None}
    if not candidates:
        return frozenset()
    stores: dict[str, int] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, (ast.Store, ast.Del))
            and node.id in candidates
        ):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            candidates -= set(node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            candidates.discard(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            candidates -= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.arg):
            candidates.discard(node.arg)
    return frozenset(name for name in candidates if stores.get(name) == 1)


def _setattr_key(stmt: ast.stmt, aliases: frozenset[str]) -> ast.expr | None:
    """The key of `setattr(module, key, value)` on the module itself."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return None
    call = stmt.value
    if not (
        isinstance(call.func, ast.Name)
        and call.func.id == "setattr"
        and len(call.args) == 3
        and not call.keywords
        and not any(isinstance(a, ast.Starred) for a in call.args)
    ):
        return None
    target, key, value = call.args
    if not (_is_this_module(target) or (isinstance(target, ast.Name) and target.id in aliases)):
        return None
    if _reads_namespace(key) or _reads_namespace(value):
        return None
    return key


def enum_members(tree: ast.Module) -> dict[str, list[str]]:
    """The member names of each module-level Enum class whose body the analysis reads for certain: its
    bases the `enum` module's classes (after builtin mixins), its body only members whose values are
    literals, `auto()` or other members, methods, annotations and a docstring. Under the key
    `"CLASS.__iter__"`, where known, the members iterating the class gives (aliases left out: a
    member whose value equals an earlier one's; for an Enum, IntEnum or StrEnum whose values are all
    literals)."""
    enum_names = {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"}
    imported: set[str] = set()
    modules: set[str] = set()
    for stmt in _module_statements(tree):
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "enum" and not stmt.level:
            imported.update(
                a.asname or a.name for a in stmt.names if a.name in enum_names | {"auto", "unique"}
            )
        elif isinstance(stmt, ast.Import):
            modules.update(a.asname or a.name for a in stmt.names if a.name == "enum")

    def is_enum(node: ast.expr, names: set[str]) -> bool:
        if isinstance(node, ast.Name):
            return node.id in imported and node.id in names
        return (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr in names
        )

    found: dict[str, list[str]] = {}
    for stmt in tree.body:
        if not isinstance(stmt, ast.ClassDef) or not stmt.bases or stmt.keywords:
            continue
        *mixins, base = stmt.bases
        if not is_enum(base, enum_names) or not all(
            isinstance(m, ast.Name) and m.id in ("int", "str") for m in mixins
        ):
            continue
        if not all(is_enum(d, {"unique"}) for d in stmt.decorator_list):
            continue
        read = _enum_body_members(stmt.body, lambda n: is_enum(n, {"auto"}))
        if read is not None:
            found[stmt.name] = read[0]
            if read[1] is not None and is_enum(base, {"Enum", "IntEnum", "StrEnum"}):
                found[f"{stmt.name}.__iter__"] = read[1]
    return found


def _enum_body_members(
    body: list[ast.stmt], is_auto: Callable[[ast.expr], bool]
) -> tuple[list[str], list[str] | None] | None:
    """(the names `__members__` holds, the canonical members in order where every value is a literal)"""
    members: list[str] = []
    canonical: list[str] | None = []
    values: list[Any] = []

    for index, stmt in enumerate(body):
        if isinstance(stmt, ast.Pass) or (
            index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if _plain_method(stmt):
                continue
            return None
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign):
            target, value = stmt.target, stmt.value
        if not isinstance(target, ast.Name):
            return None
        name = target.id
        if name.startswith("__") and name.endswith("__") and len(name) > 4:
            if value is not None and isinstance(stmt, ast.Assign) and name != "__doc__":
                return None  # `__init__ = ...`, `__new__`: more than members
            continue
        if name.startswith("_"):
            return None  # `_ignore_`, `_order_`, private names (members or not, depending on the version)
        if value is None:
            continue  # an annotation alone binds nothing
        if not _member_literal(value, members, is_auto):
            return None  # maybe a descriptor: not a member
        members.append(name)
        canonical = _canonical_after(canonical, values, name, value)
    return members, canonical


def _canonical_after(
    canonical: list[str] | None, values: list[Any], name: str, value: ast.expr
) -> list[str] | None:
    """The canonical members once `name = value` is read: `name` added unless its value is an earlier
    member's (an alias); None from the first value that is not a literal on."""
    if canonical is None:
        return None
    try:
        constant = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None  # `auto()`, another member: which value it has is not read here
    if not any(constant == earlier for earlier in values):
        canonical.append(name)
    values.append(constant)
    return canonical


def _plain_method(stmt: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A method of an Enum class that is no member: undecorated, a property, a class or static method."""
    return all(
        isinstance(d, ast.Name) and d.id in ("property", "classmethod", "staticmethod")
        for d in stmt.decorator_list
    )


def _member_literal(node: ast.expr, members: list[str], is_auto: Callable[[ast.expr], bool]) -> bool:
    """A member's value the class body spells out: constants, earlier members (aliases), tuples and
    arithmetic of them, `auto()`."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in members  # an alias of an earlier member
    if isinstance(node, ast.Tuple):
        return all(_member_literal(e, members, is_auto) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _member_literal(node.operand, members, is_auto)
    if isinstance(node, ast.BinOp):
        return _member_literal(node.left, members, is_auto) and _member_literal(node.right, members, is_auto)
    return isinstance(node, ast.Call) and is_auto(node.func) and not node.args and not node.keywords


def _is_namespace_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "globals"
        and not node.args
        and not node.keywords
    )


def _reads_namespace(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id in ("globals", "locals", "vars", "exec", "eval", "setattr"))
        or (isinstance(n, ast.Attribute) and n.attr == "modules")
        for n in ast.walk(node)
    )


def _is_namespace_update(stmt: ast.stmt) -> bool:
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    return (
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "update"
        and _is_namespace_call(call.func.value)
        and len(call.args) <= 1
        and not any(_reads_namespace(a) for a in (*call.args, *call.keywords))
    )


def _namespace_key(stmt: ast.stmt) -> ast.expr | None:
    """The key of `globals()[key] = value`."""
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Subscript)
        and _is_namespace_call(stmt.targets[0].value)
        and not _reads_namespace(stmt.value)
        and not _reads_namespace(stmt.targets[0].slice)
    ):
        return stmt.targets[0].slice
    return None


def _adds_to_all(stmt: ast.stmt) -> bool:
    """`__all__.append(...)`, `__all__.extend(...)`, `__all__ += ...`: the export list, not the namespace."""
    if isinstance(stmt, ast.AugAssign):
        return (
            isinstance(stmt.target, ast.Name)
            and stmt.target.id == "__all__"
            and not _reads_namespace(stmt.value)
        )
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "__all__"
            and func.attr in ("append", "extend")
            and not any(_reads_namespace(a) for a in stmt.value.args)
        )
    return False


def _loop_body_ok(body: list[ast.stmt], aliases: frozenset[str]) -> tuple[bool, bool]:
    """(every statement is one the evaluator runs in a namespace loop, one of them writes the namespace)"""
    writes = False
    for stmt in body:
        if _namespace_key(stmt) is not None or _setattr_key(stmt, aliases) is not None:
            writes = True
        elif isinstance(stmt, ast.For):
            if stmt.orelse or _reads_namespace(stmt.iter) or not _names_only(stmt.target):
                return False, writes
            ok, inner = _loop_body_ok(stmt.body, aliases)
            if not ok:
                return False, writes
            writes = writes or inner
        elif isinstance(stmt, ast.Assign) and all(_names_only(t) for t in stmt.targets):
            if _reads_namespace(stmt.value):
                return False, writes
        elif isinstance(stmt, ast.If):
            if _reads_namespace(stmt.test):
                return False, writes
            for branch in (stmt.body, stmt.orelse):
                ok, inner = _loop_body_ok(branch, aliases)
                if not ok:
                    return False, writes
                writes = writes or inner
        elif (
            isinstance(stmt, (ast.Pass, ast.Continue))
            or _adds_to_all(stmt)
            or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
        ):
            continue
        else:
            return False, writes
    return True, writes


def _names_only(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_names_only(e) for e in target.elts)


def _is_namespace_loop(stmt: ast.stmt, aliases: frozenset[str] = frozenset()) -> bool:
    if not isinstance(stmt, ast.For) or stmt.orelse or _reads_namespace(stmt.iter):
        return False
    ok, writes = _loop_body_ok(stmt.body, aliases)
    return ok and writes


def defines_getattr(tree: ast.Module) -> bool:
    """Whether the module binds `__getattr__` at module level (a def or an assignment)."""
    return "__getattr__" in _bindings(tree)


def program_source(tree: ast.Module) -> str:
    """What the evaluator needs of a module, as source: every module-level statement, with class bodies
    and docstrings dropped (a class only binds its name here)."""
    pruned = _Pruner().visit(ast.Module(body=list(tree.body), type_ignores=[]))
    return ast.unparse(pruned)


def getattr_helpers(tree: ast.Module) -> set[str]:
    """Module-level functions reachable from the `__getattr__` binding (the function itself, the
    factory that builds it, and what they call by name): their bodies belong to the evaluated program.
    A function only handed back (not called) is not one: anyone may call it, at any time."""
    defs = {
        s.name: s for s in _module_statements(tree) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    start: list[ast.AST] = [stmt for stmt, _ in _bindings(tree).get("__getattr__", ())]
    seen: set[str] = set()
    while start:
        node = start.pop()
        for inner in ast.walk(node):
            called = inner.func if isinstance(inner, ast.Call) else None
            if isinstance(called, ast.Name) and called.id in defs and called.id not in seen:
                seen.add(called.id)
                start.append(defs[called.id])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            seen.add(node.name)
    return seen
