"""Callables whose every call raises, read from their own source.

    class interp2d:
        def __init__(self, x, y, z, kind="linear", copy=True, bounds_error=False, fill_value=None):
            raise NotImplementedError(err_mesg)          # err_mesg: a module-level string

    def mapper(*arg, **kw):
        raise InvalidRequestError("The 'sqlalchemy.orm.mapper()' function is removed ...")

    def expired(*args, **kwargs):
        _raise_expired("expired")                        # a helper of the same package that always raises

Input: a `def` node (griffe links it to its parents). Output: a dict {exception, message, fields,
where} for a `raise` every call reaches (the statements before it only bind, evaluate or branch into
blocks that do the same: never `return`, loop, `yield` or catch), and/or {through, arguments} for the
first plain call of a module-level name before it (a helper: whether it always raises is decided
when the call is checked, where the helper resolves); None when the body may complete.

Only a `def` that is the one binding of its name, written unconditionally at module level or in the
body of a class written so (not in an `if`, `try` or function; not rebound; in a module that does not
write its own namespace through `globals()` or `sys.modules`), plain or with decorators that keep its
body (staticmethod, classmethod, deprecated, final, override), is read: a generator, a coroutine,
an abstract method, an overload or a single-dispatch base never runs its body as the call.
A message is a string literal, literals joined with `+`, a name bound to one (in the function before
the raise, or once at module level), or an f-string: a field naming one of the function's parameters
is kept as `{name}` (listed in `fields`, filled in from a literal argument of a caller), any other as `…`.
"""

from __future__ import annotations

import ast
import builtins
from collections import Counter
from typing import Any

from apidrift.auditor.upstream.analyses.guards import (
    _completes_or_raises,
    _dotted,
    _is_generator,
    _stored_names,
    _without_docstring,
)
from apidrift.auditor.upstream.analyses.nodes import _last_name_of
from apidrift.auditor.upstream.astwalk import walk_once

MAX_STATEMENTS = 40  # statements read before the raise
_KEEPING = frozenset({"staticmethod", "classmethod", "deprecated", "final", "override", "no_type_check"})


def always_raises(function: ast.AST) -> dict[str, Any] | None:
    if not isinstance(function, ast.FunctionDef):
        return None
    if any(_last_name_of(d) not in _KEEPING for d in function.decorator_list):
        return None
    module = _module_of(function)
    if module is None:
        return None
    # The body first (a few statements), the module-wide conditions only for what it finds: most
    # functions find nothing, and the module's walk is then not made for them.
    found = _body_raises(function, module)
    if not found or _is_generator(function) or _unconditional_module(function) is None:
        return None
    return found


def _module_of(node: ast.AST) -> ast.Module | None:
    """The module a node sits in, through the parents griffe's visitor links."""
    current: Any = node
    for _ in range(200):
        current = getattr(current, "parent", None)
        if current is None or isinstance(current, ast.Module):
            return current
    return None


def _body_raises(function: ast.FunctionDef, module: ast.Module) -> dict[str, Any] | None:
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    for extra in (function.args.vararg, function.args.kwarg):
        if extra is not None:
            params.add(extra.arg)
    found: dict[str, Any] = {}
    local: dict[str, str] = {}  # names the body binds to a literal string before the raise
    for budget, stmt in enumerate(_without_docstring(function.body)):
        if budget >= MAX_STATEMENTS:
            return found or None
        if "through" not in found:
            helper = _helper_call(stmt)
            if helper is not None:
                found.update(helper)
        if isinstance(stmt, ast.Raise):
            raised = _raised(stmt, local, module, params)
            if raised is None:
                return found or None
            raised["where"] = f"{function.name}:{stmt.lineno}"
            found.update(raised)
            return found
        if not _completes_or_raises(stmt):
            return found or None
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and (text := _text(stmt.value, local, None, params)) is not None
        ):
            local[stmt.targets[0].id] = text[0]
        else:
            for name in _stored_names(stmt):
                local.pop(name, None)
    return found or None


def _unconditional_module(function: ast.FunctionDef) -> ast.Module | None:
    """The module the `def` sits in when it is the one binding of its name, at module level or in
    classes there (each written unconditionally and bound once), in a module that leaves its own
    namespace alone; else None."""
    node: Any = function
    owners: list[str] = []  # the classes it sits in, innermost first
    for _ in range(20):
        parent = getattr(node, "parent", None)
        if parent is None:
            return None
        body = parent.body if isinstance(parent, (ast.Module, ast.ClassDef)) else None
        if body is None or not any(stmt is node for stmt in body):
            return None  # inside an if, a try, a function...
        if _facts(parent).bindings(parent)[node.name] != 1:
            return None
        if isinstance(parent, ast.ClassDef) and (parent.decorator_list or parent.keywords):
            return None  # a class decorator or metaclass may replace what the body defines
        if isinstance(parent, ast.Module):
            facts = _facts(parent)
            if facts.writes_own_namespace or facts.rebound_elsewhere(function.name, owners):
                return None
            return parent
        if isinstance(parent, ast.ClassDef):
            owners.append(parent.name)
        node = parent
    return None


class _ModuleFacts:
    """What the checks above ask of a module, read in one walk of it (asked once per function: a
    module of a thousand functions must not be walked a thousand times)."""

    def __init__(self, module: ast.Module) -> None:
        self.module = module
        self.writes_own_namespace = False
        self.globals: set[str] = set()  # names a function declares `global`
        self.class_stores: set[tuple[str, str]] = set()  # `Cls.name = ...` / `del Cls.name`
        self.setattr_owners: set[str] = set()  # `setattr(Cls, ...)`
        self._bindings: dict[int, Counter[str]] = {}
        for node in walk_once(module):
            if isinstance(node, ast.Name) and node.id in ("globals", "vars"):
                self.writes_own_namespace = True
            elif isinstance(node, ast.Attribute):
                if node.attr == "modules" and _dotted(node) == "sys.modules":
                    self.writes_own_namespace = True
                if isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(node.value, ast.Name):
                    self.class_stores.add((node.value.id, node.attr))
            elif isinstance(node, ast.Global):
                self.globals.update(node.names)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "setattr"
                and len(node.args) > 1
                and isinstance(node.args[0], ast.Name)
            ):
                self.setattr_owners.add(node.args[0].id)

    def bindings(self, owner: ast.Module | ast.ClassDef) -> Counter[str]:
        """How many statements of the module's or class's body bind each name."""
        key = id(owner)
        if key not in self._bindings:
            self._bindings[key] = Counter(name for stmt in owner.body for name in set(_stored_names(stmt)))
        return self._bindings[key]

    def rebound_elsewhere(self, name: str, owners: list[str]) -> bool:
        """A function rebinds the name (`global name`), or code of the module sets it on its class
        from outside the body (`Cls.name = ...`, `setattr(Cls, "name", ...)`)."""
        if not owners:
            return name in self.globals
        return (owners[0], name) in self.class_stores or owners[0] in self.setattr_owners


_LAST: list[_ModuleFacts] = []  # the module being loaded: its functions are read one after another


def _facts(module: Any) -> _ModuleFacts:
    while not isinstance(module, ast.Module):  # a class: its module's facts hold its body's counts
        module = getattr(module, "parent", None)
        if module is None:
            raise ValueError("a class outside a module")
    if not _LAST or _LAST[0].module is not module:
        _LAST[:] = [_ModuleFacts(module)]
    return _LAST[0]


def _helper_call(stmt: ast.stmt) -> dict[str, Any] | None:
    """`helper(...)`, `x = helper(...)` or `return helper(...)` with `helper` a plain name: its text
    and its literal arguments (position or keyword -> source text)."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.Return)) else None
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
        return None
    if hasattr(builtins, value.func.id):
        return None  # `print(...)`, `len(...)`: not a helper of the package
    if any(isinstance(a, ast.Starred) for a in value.args) or any(k.arg is None for k in value.keywords):
        return {"through": value.func.id, "arguments": {}}
    arguments: dict[str, str] = {}
    for index, arg in enumerate(value.args):
        if isinstance(arg, ast.Constant) and isinstance(arg.value, (str, int, float, bool)):
            arguments[str(index)] = str(arg.value)
    for keyword in value.keywords:
        if isinstance(keyword.value, ast.Constant) and isinstance(
            keyword.value.value, (str, int, float, bool)
        ):
            arguments[str(keyword.arg)] = str(keyword.value.value)
    return {"through": value.func.id, "arguments": arguments}


def _raised(
    stmt: ast.Raise, local: dict[str, str], module: ast.Module, params: set[str]
) -> dict[str, Any] | None:
    exc = stmt.exc
    if exc is None:
        return None  # a bare `raise`: re-raises what is being handled, if anything
    message: str | None = None
    fields: list[str] = []
    if isinstance(exc, ast.Call):
        if exc.args and not isinstance(exc.args[0], ast.Starred):
            text = _text(exc.args[0], local, module, params)
            if text is not None:
                message, fields = text
        exc = exc.func
    exception = _dotted(exc)
    if exception is None:
        return None
    return {"exception": exception, "message": message, "fields": fields}


def _text(
    node: ast.expr, local: dict[str, str], module: ast.Module | None, params: set[str]
) -> tuple[str, list[str]] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, []
    if isinstance(node, ast.Name):
        if node.id in local:
            return local[node.id], []
        if module is not None:
            value = _module_string(module, node.id)
            return (value, []) if value is not None else None
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left, local, module, params), _text(node.right, local, module, params)
        if left is None or right is None:
            return None
        return left[0] + right[0], left[1] + right[1]
    if isinstance(node, ast.JoinedStr):
        parts: list[str] = []
        fields: list[str] = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
            elif (
                isinstance(part, ast.FormattedValue)
                and isinstance(part.value, ast.Name)
                and part.value.id in params
                and part.conversion == -1
                and part.format_spec is None
            ):
                parts.append("{" + part.value.id + "}")
                fields.append(part.value.id)
            else:
                parts.append("\u2026")
        return "".join(parts), fields
    return None


def _module_string(module: ast.Module, name: str) -> str | None:
    """The string literal a module binds `name` to, once, at its top level."""
    value: str | None = None
    count = 0
    for stmt in module.body:
        if name not in _stored_names(stmt):
            continue
        count += 1
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            value = stmt.value.value
    return value if count == 1 else None
