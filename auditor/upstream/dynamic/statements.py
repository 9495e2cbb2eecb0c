"""Statements: assignments, `if`, `for`, `try`/`except`, `raise`, `return`, run in a scope."""

from __future__ import annotations

import ast
import builtins
from typing import Any

from .limits import _Bounded
from .values import (
    _EXCEPTIONS,
    _Abort,
    _Break,
    _Builtin,
    _Continue,
    _Exc,
    _Function,
    _Limit,
    _Mod,
    _Obj,
    _Raised,
    _Return,
    _Scope,
    _Unknown,
)


def _handling(scope: _Scope) -> _Raised | None:
    current: _Scope | None = scope
    while current is not None:
        if current.handling is not None:
            return current.handling
        current = None  # a bare raise re-raises the exception of its own function's handler only
    return None


class _Statements(_Bounded):
    def run(self, body: list[ast.stmt], scope: _Scope) -> None:
        for stmt in body:
            self.execute(stmt, scope)

    def execute(self, stmt: ast.stmt, scope: _Scope) -> None:
        self.step()
        if isinstance(stmt, ast.Return):
            raise _Return(self.eval(stmt.value, scope) if stmt.value is not None else None)
        if isinstance(stmt, ast.If):
            self.run(stmt.body if self.truth(self.eval(stmt.test, scope)) else stmt.orelse, scope)
            return
        if isinstance(stmt, ast.Expr):
            self.expression(stmt, scope)
            return
        if isinstance(stmt, ast.Raise):
            self.raise_(stmt, scope)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            self.assign(stmt, scope)
            return
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.import_(stmt, scope)
            return
        if isinstance(stmt, ast.FunctionDef):
            self.define(stmt, scope)
            return
        if isinstance(stmt, ast.Try):
            self.try_(stmt, scope)
            return
        if isinstance(stmt, ast.For) and not stmt.orelse:
            self.for_(stmt, scope)
            return
        self.simple(stmt, scope)

    def expression(self, stmt: ast.Expr, scope: _Scope) -> None:
        """An expression statement: a docstring, or a call whose effect the analysis knows."""
        if isinstance(stmt.value, ast.Constant):
            return  # a docstring
        if isinstance(stmt.value, ast.Call):
            callee = self.eval(stmt.value.func, scope)
            if not isinstance(callee, (_Function, _Builtin)) and not (
                isinstance(callee, _Obj) and not isinstance(self.function_of(callee.path), _Obj)
            ):
                raise _Abort("a call whose effect is unknown")
        self.eval(stmt.value, scope)

    def import_(self, stmt: ast.Import | ast.ImportFrom, scope: _Scope) -> None:
        for alias in stmt.names:
            if alias.name == "*":
                raise _Abort("a star import in a function")
            scope.names[alias.asname or alias.name.split(".")[0]] = self.imported(scope.module, stmt, alias)

    def define(self, stmt: ast.FunctionDef, scope: _Scope) -> None:
        if stmt.decorator_list:
            raise _Abort("a decorated function")
        scope.names[stmt.name] = self.make_function(stmt, scope, scope)

    def simple(self, stmt: ast.stmt, scope: _Scope) -> None:
        """`pass`, `break`, `continue`, `assert`; any other statement is not followed."""
        if isinstance(stmt, ast.Pass):
            return
        if isinstance(stmt, ast.Break):
            raise _Break()
        if isinstance(stmt, ast.Continue):
            raise _Continue()
        if isinstance(stmt, ast.Assert):
            if not self.truth(self.eval(stmt.test, scope)):
                raise _Raised("AssertionError", None)
            return
        raise _Abort(f"a `{type(stmt).__name__}` statement")

    def raise_(self, stmt: ast.Raise, scope: _Scope) -> None:
        if stmt.exc is None:
            handling = _handling(scope)
            if handling is None:
                raise _Abort("a bare raise outside a handler")
            raise handling
        node = stmt.exc
        call = node if isinstance(node, ast.Call) else None
        cls = self.eval(call.func if call is not None else node, scope)
        if isinstance(cls, _Exc):
            name = cls.name
        elif isinstance(cls, _Obj):
            name = cls.path
        else:
            name = "?"
        message = None
        if call is not None and call.args:
            try:
                message = self.text(self.eval(call.args[0], scope))
            except _Limit:
                raise
            except _Abort:
                message = None
        raise _Raised(name, message)

    def try_(self, stmt: ast.Try, scope: _Scope) -> None:
        try:
            try:
                self.run(stmt.body, scope)
            except _Raised as raised:
                for handler in stmt.handlers:
                    if self.handles(handler, raised, scope):
                        if handler.name:
                            scope.names[handler.name] = _Unknown()
                        previous, scope.handling = scope.handling, raised
                        try:
                            self.run(handler.body, scope)
                        finally:
                            scope.handling = previous
                        break
                else:
                    raise
            else:
                self.run(stmt.orelse, scope)
        finally:
            if stmt.finalbody:
                self.run(stmt.finalbody, scope)

    def handles(self, handler: ast.ExceptHandler, raised: _Raised, scope: _Scope) -> bool:
        if handler.type is None:
            return True
        value = self.eval(handler.type, scope)
        classes = value if isinstance(value, tuple) else (value,)
        for cls in classes:
            if isinstance(cls, _Exc) and raised.cls in _EXCEPTIONS:
                if issubclass(getattr(builtins, raised.cls), getattr(builtins, cls.name)):
                    return True
                continue
            if isinstance(cls, _Obj) and cls.path == raised.cls:
                return True
            if isinstance(cls, _Exc) and cls.name in ("BaseException", "Exception"):
                return True  # every class raised by name in the analysed code derives from Exception
            raise _Abort("an exception handler whose match is unknown")
        return False

    def for_(self, stmt: ast.For, scope: _Scope) -> None:
        iterable = self.eval(stmt.iter, scope)
        for item in self.iterate(iterable):
            self.store(stmt.target, item, scope)
            try:
                self.run(stmt.body, scope)
            except _Break:
                break
            except _Continue:
                continue

    def assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: _Scope) -> None:
        if isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self.store(stmt.target, self.eval(stmt.value, scope), scope)
            return
        if isinstance(stmt, ast.AugAssign):
            if not isinstance(stmt.target, ast.Name):
                raise _Abort("an augmented assignment to an attribute or item")
            current = self.name(stmt.target.id, scope)
            value = self.binary(stmt.op, current, self.eval(stmt.value, scope))
            scope.names[stmt.target.id] = value
            return
        value = self.eval(stmt.value, scope)
        for target in stmt.targets:
            self.store(target, value, scope)

    def store(self, target: ast.expr, value: Any, scope: _Scope) -> None:
        if isinstance(target, ast.Name):
            scope.names[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                raise _Abort("a starred assignment")
            if isinstance(value, _Unknown):
                for element in target.elts:
                    self.store(element, _Unknown(), scope)
                return
            items = list(self.iterate(value))
            if len(items) != len(target.elts):
                raise _Raised("ValueError", "unpacking")
            for element, item in zip(target.elts, items):
                self.store(element, item, scope)
            return
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            owner = self.eval(target.value, scope)
            if isinstance(owner, (_Unknown, _Mod, _Obj)):
                return  # a cache written on a module or an object outside: nothing read here depends on it
            raise _Abort("an item or attribute written on a value the analysis tracks")
        raise _Abort("an assignment target the analysis does not follow")
