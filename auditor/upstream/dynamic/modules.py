"""Modules: loading a module of the package, its globals (the value a name has at a line of module-level
code, changes made in place), imports between its modules and the `globals()` writes it runs.
"""

from __future__ import annotations

import ast
from typing import Any

from .facts import _module_facts
from .limits import MAX_SOURCE, _Bounded
from .protocols import _namespace_key, _setattr_key
from .values import (
    _BUILTIN_FUNCTIONS,
    _COLLECTIONS,
    _EXCEPTIONS,
    _MODELLED_PATHS,
    _SIZED,
    UNKNOWN,
    _Abort,
    _Break,
    _Builtin,
    _Continue,
    _Exc,
    _Failed,
    _Function,
    _Limit,
    _Mod,
    _Module,
    _Obj,
    _Raised,
    _Return,
    _Scope,
    _Spec,
    _Unknown,
)


class _Modules(_Bounded):
    def module(self, path: str, source: str, is_package: bool) -> _Module:
        if len(source) > MAX_SOURCE:
            raise _Abort(f"`{path}` is larger than the analysis reads")
        facts = _module_facts(source)
        if isinstance(facts, str):
            raise _Abort(f"`{path}` does not parse: {facts}")
        bindings, mutated, mutations, stars, escapes = facts
        mod = _Module(
            path,
            is_package,
            bindings,
            mutated,
            mutations,
            stars,
            shared=escapes.shared,
            deferred=escapes.deferred,
            params=escapes.params,
        )
        self.modules[path] = mod
        return mod

    def load(self, path: str) -> _Module | None:
        if path in self.modules:
            return self.modules[path]
        found = self.sources(path)
        if found is None:
            self.modules[path] = None
            return None
        return self.module(path, *found)

    def global_value(self, mod: _Module, name: str) -> Any:
        statements = mod.bindings.get(name)
        before = self.before[1] if self.before is not None and self.before[0] == mod.path else None
        if before is not None and statements:  # module-level code: what is bound and changed by then
            earlier = [s for s in statements if s[0].lineno < before]
            changes = mod.mutations.get(name, ())
            if len(earlier) != len(statements) or any(c.lineno >= before for c in changes):
                return self.value_before(mod, name, earlier, before)
        if name in mod.values:
            value, approximate = mod.values[name]
            if isinstance(value, _Failed):
                raise _Limit(value.why)
            self.approximate = self.approximate or approximate
            return value
        if name == "__name__":
            return mod.path
        if name == "__package__":
            return mod.package
        if name == "__spec__":
            return _Spec(mod.path, mod.is_package)
        if not statements:
            if (
                before is not None
                and mod.stars
                and name not in _EXCEPTIONS
                and name not in _BUILTIN_FUNCTIONS
            ):
                return _Unknown()  # maybe bound by a star import: a value not known, in a value that may be
            return self.builtin(name)
        stmt, certain = statements[0]
        changed = name in mod.mutated and not isinstance(stmt, (ast.Import, ast.ImportFrom))
        if changed and name in mod.mutations and len(statements) == 1 and certain:
            return self.value_before(mod, name, statements, None)
        if len(statements) > 1 or not certain or changed:
            value = UNKNOWN  # bound several ways, maybe not at all, or changed after: not one known value
        else:
            key = (mod.path, name)
            if key in self.active:
                raise _Abort(f"`{name}` is defined through itself")
            self.active.add(key)
            approximate_before, self.approximate = self.approximate, False
            outer, self.before = (
                self.before,
                (mod.path, stmt.lineno),
            )  # its code sees the module as it is there
            try:
                value = self.bind_statement(mod, stmt, name)
                if isinstance(value, _Obj) and isinstance(stmt, ast.ImportFrom):
                    value = _Obj(value.path, changed=name in mod.mutated, shared=self.shared_depth(mod, name))
                else:
                    value = self.unshared(mod, name, value)
            except _Limit as limit:
                mod.values[name] = (_Failed(limit.why), False)
                raise
            finally:
                self.before = outer
                self.active.discard(key)
                approximate, self.approximate = self.approximate, approximate_before or self.approximate
            mod.values[name] = (value, approximate)
            return value
        mod.values[name] = (value, False)
        return value

    def value_before(
        self, mod: _Module, name: str, statements: list[tuple[ast.stmt, bool]], before: int | None
    ) -> Any:
        """A module-level name's value as the module's code sees it just before line `before` (None:
        once imported): from its one binding then, and the changes made in place after it, in order."""
        key = f"{name}@{before}"  # no identifier holds "@": never a name's own entry
        if key in mod.values:
            value, approximate = mod.values[key]
            if isinstance(value, _Failed):
                raise _Limit(value.why)
            self.approximate = self.approximate or approximate
            return value
        every_change = mod.mutations.get(name)
        if name in mod.mutated and every_change is None:
            return UNKNOWN  # changed where the analysis does not follow
        changes = [c for c in every_change or () if before is None or c.lineno < before]
        if not statements:  # not bound yet there: a builtin, a name a star import binds, or a NameError
            return _Unknown() if mod.stars else self.builtin(name)
        stmt, certain = statements[0]
        if len(statements) > 1 or not certain or isinstance(stmt, ast.Delete):
            return UNKNOWN  # bound several ways, maybe not at all, or deleted by then
        if (mod.path, key) in self.active:
            raise _Abort(f"`{name}` is defined through itself")
        self.active.add((mod.path, key))
        outer, outer_approximate = self.before, self.approximate
        self.approximate = False
        try:
            self.before = (mod.path, stmt.lineno)
            value = self.bind_statement(mod, stmt, name)
            for change in changes:
                self.before = (mod.path, change.lineno)
                value = self.change(mod, value, change)
            value = self.unshared(mod, name, value)
        except _Limit as limit:
            mod.values[key] = (_Failed(limit.why), False)
            raise
        finally:
            self.before = outer
            self.active.discard((mod.path, key))
            approximate, self.approximate = self.approximate, outer_approximate or self.approximate
        mod.values[key] = (value, approximate)
        return value

    def namespace_write(self, mod: _Module, stmt: ast.stmt, enums: dict[str, list[str]]) -> list[str]:
        """The names one statement of namespace_writes binds."""
        scope = _Scope(mod, {}, frozenset())
        names: list[str] = []
        if isinstance(stmt, ast.Assign):
            return names  # `module = sys.modules[__name__]`, used only by the writes
        if isinstance(stmt, ast.For):
            self.namespace_loop(stmt, scope, names)
            return names
        assert isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
        call = stmt.value
        for argument in call.args:
            if (
                isinstance(argument, ast.Attribute)
                and argument.attr == "__members__"
                and isinstance(argument.value, ast.Name)
                and argument.value.id in enums
                and not argument.value.id.endswith(".__iter__")
                and len(mod.bindings.get(argument.value.id, ())) == 1
            ):
                names.extend(enums[argument.value.id])
                continue
            names.extend(self.mapping_keys(self.data(self.eval(argument, scope))))
        for keyword in call.keywords:
            if keyword.arg is not None:
                names.append(keyword.arg)
            else:
                names.extend(self.mapping_keys(self.data(self.eval(keyword.value, scope))))
        return names

    def mapping_keys(self, value: Any) -> list[str]:
        """The keys `dict.update(value)` adds: a dict's, or the first items of pairs."""
        if isinstance(value, dict):
            if self.unknown_keys(value):
                raise _Abort("a key the analysis does not know")
            keys = list(value)
        else:
            keys = [
                self.iterate(pair)[0] if isinstance(pair, (tuple, list)) and len(pair) == 2 else UNKNOWN
                for pair in self.iterate(value)
            ]
        if not all(isinstance(k, str) for k in keys):
            raise _Abort("a name the analysis does not know")
        return keys

    def namespace_loop(self, stmt: ast.For, scope: _Scope, names: list[str]) -> None:
        for item in self.iterate(self.eval(stmt.iter, scope)):
            self.store(stmt.target, item, scope)
            try:
                self.namespace_body(stmt.body, scope, names)
            except _Continue:
                continue

    def namespace_body(self, body: list[ast.stmt], scope: _Scope, names: list[str]) -> None:
        for stmt in body:
            self.step()
            key = _namespace_key(stmt)
            if key is None:
                key = _setattr_key(stmt, frozenset(n for n in scope.module.bindings if n not in scope.names))
            if isinstance(stmt, ast.For):
                self.namespace_loop(stmt, scope, names)
            elif key is not None:
                name = self.eval(key, scope)
                if not isinstance(name, str):
                    raise _Abort("a name the analysis does not know")
                names.append(name)
            elif isinstance(stmt, ast.If):
                self.namespace_body(
                    stmt.body if self.truth(self.eval(stmt.test, scope)) else stmt.orelse, scope, names
                )
            elif isinstance(stmt, ast.Assign):
                self.assign(stmt, scope)
            elif isinstance(stmt, ast.Continue):
                raise _Continue()

            # `pass`, a docstring, an addition to `__all__`: nothing bound

    def unshared(self, mod: _Module, name: str, value: Any) -> Any:
        """`value`, bound to `name` in `mod`, or unknown where an object it holds may be changed where
        the analysis does not look."""
        if not isinstance(value, _COLLECTIONS):
            return value
        depth = self.shared_depth(mod, name)
        return UNKNOWN if depth is not None and self.mutable_from(value, depth) else value

    def shared_depth(self, mod: _Module, name: str) -> int | None:
        """The depth from which what `name` holds may be changed unseen: its own module's finding, and
        each function of another module it is handed to that does more than read it."""
        depth = mod.shared.get(name)
        for callee, slot, deferred in mod.deferred.get(name, ()):
            if (depth is None or deferred < depth) and not self.only_reads(mod, callee, slot):
                depth = deferred
        return depth

    def only_reads(self, mod: _Module, callee: str, slot: int | str) -> bool:
        """Whether the function `callee` names in `mod` (a def of the package, followed through imports)
        only reads the argument passed in `slot`."""
        try:
            function = self.global_value(mod, callee)
            if isinstance(function, _Obj):
                function = self.function_of(function.path)
        except _Limit:
            raise
        except (_Abort, _Raised, _Return, _Break, _Continue):
            return False
        if not isinstance(function, _Function) or function.path is None:
            return False
        node = function.node
        assert isinstance(node, ast.FunctionDef)
        positional = [*node.args.posonlyargs, *node.args.args]
        if isinstance(slot, int):
            if slot >= len(positional):
                return False
            param = positional[slot].arg
        else:
            if slot not in {a.arg for a in (*node.args.args, *node.args.kwonlyargs)}:
                return False
            param = slot
        params = function.module.params.get(node.name)
        return params is not None and param not in params

    def mutable_from(self, value: Any, depth: int, level: int = 0) -> bool:
        """Whether `value` holds a mutable container (a dict, list or set) at `depth` or deeper."""
        if not isinstance(value, _COLLECTIONS):
            return False
        if depth <= 0 and isinstance(value, (dict, list, set)):
            return True
        if level > 20:
            return True
        self.charge(len(value) + 1)
        children = [x for pair in value.items() for x in pair] if isinstance(value, dict) else value
        return any(self.mutable_from(child, depth - 1, level + 1) for child in children)

    def change(self, mod: _Module, value: Any, stmt: ast.stmt) -> Any:
        """`value` after a module-level statement changes it in place (see _module_mutations)."""
        if not isinstance(value, (dict, list, set)):
            return UNKNOWN
        scope = _Scope(mod, {}, frozenset())
        self.charge(len(value))
        value = value.copy()
        try:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = stmt.value
                assert isinstance(call.func, ast.Attribute)
                if any(isinstance(a, ast.Starred) for a in call.args) or call.keywords:
                    return UNKNOWN
                arguments = [self.eval(a, scope) for a in call.args]
                if any(isinstance(a, _Unknown) for a in arguments):
                    return UNKNOWN
                if call.func.attr in ("update", "extend") and not all(
                    isinstance(a, _COLLECTIONS) for a in arguments
                ):
                    return UNKNOWN
                self.ensure(len(value) + sum(len(a) if isinstance(a, _SIZED) else 1 for a in arguments))
                method = getattr(value, call.func.attr, None)
                if method is None:
                    return UNKNOWN
                method(*arguments)
            elif isinstance(stmt, ast.Assign):
                target = stmt.targets[0]
                assert isinstance(target, ast.Subscript)
                key = self.eval(target.slice, scope)
                if isinstance(key, _Unknown) or not isinstance(value, (dict, list)):
                    return UNKNOWN
                value[key] = self.eval(stmt.value, scope)
            elif isinstance(stmt, ast.Delete):
                target = stmt.targets[0]
                assert isinstance(target, ast.Subscript)
                key = self.eval(target.slice, scope)
                if isinstance(key, _Unknown) or not isinstance(value, (dict, list)):
                    return UNKNOWN
                del value[key]
            else:
                return UNKNOWN
        except _Limit:
            raise
        except (MemoryError, RecursionError):
            raise _Limit("a value larger than the analysis follows") from None
        except (_Abort, _Raised, _Return, _Break, _Continue, TypeError, KeyError, IndexError, ValueError):
            return UNKNOWN  # a change the analysis cannot make: the import may even fail there
        return self.sized(value)

    def bind_statement(self, mod: _Module, stmt: ast.stmt, name: str) -> Any:
        scope = _Scope(mod, {}, frozenset())
        if isinstance(stmt, ast.FunctionDef):
            return UNKNOWN if stmt.decorator_list else self.make_function(stmt, scope, None)
        if isinstance(stmt, (ast.AsyncFunctionDef, ast.ClassDef)):
            return _Obj(f"{mod.path}.{name}")
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound == name:
                    return self.imported(mod, stmt, alias)
            return UNKNOWN
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if stmt.value is None or len(targets) != 1:
                return UNKNOWN
            target = targets[0]
            if isinstance(target, ast.Name):
                return self.expr_value(stmt.value, scope)
            if isinstance(target, (ast.Tuple, ast.List)) and all(
                isinstance(e, ast.Name) for e in target.elts
            ):
                value = self.expr_value(stmt.value, scope)
                if isinstance(value, (tuple, list)) and len(value) == len(target.elts):
                    for element, item in zip(target.elts, value):
                        if element.id == name:  # type: ignore[attr-defined]  # every element is an ast.Name (checked above)
                            return item
            return UNKNOWN
        return UNKNOWN

    def expr_value(self, node: ast.expr, scope: _Scope) -> Any:
        """Evaluate a module-level expression: what cannot be followed is unknown, not an abort."""
        try:
            return self.eval(node, scope)
        except _Limit:
            raise
        except _Abort:
            return UNKNOWN
        except (_Raised, _Return, _Break, _Continue):
            return UNKNOWN

    def imported(self, mod: _Module, stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> Any:
        if isinstance(stmt, ast.Import):
            return _Mod(alias.name if alias.asname else alias.name.split(".")[0])
        base = self.absolute(mod, stmt.module or "", stmt.level)
        if base is None:
            return UNKNOWN
        return _Obj(f"{base}.{alias.name}")

    def absolute(self, mod: _Module, name: str, level: int) -> str | None:
        if not level:
            return name
        parts = mod.package.split(".") if mod.package else []
        if level - 1 > len(parts) or (level - 1 == len(parts) and not name):
            return None
        base = parts[: len(parts) - (level - 1)]
        return ".".join(base + ([name] if name else []))

    def builtin(self, name: str) -> Any:
        if name in _EXCEPTIONS:
            return _Exc(name)
        if name in _BUILTIN_FUNCTIONS:
            return _Builtin(name)
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        raise _Abort(f"`{name}` is not a name the analysis knows")

    def function_of(self, path: str, depth: int = 0) -> Any:
        """The object a dotted path names in the package: a function to call, a module, or the path."""
        if path in _MODELLED_PATHS:
            return _Builtin(_MODELLED_PATHS[path])
        module, _, name = path.rpartition(".")
        if not module:
            return _Obj(path)
        mod = self.load(module)
        if mod is None:
            return _Obj(path)
        if name in mod.bindings:
            value = self.global_value(mod, name)
            if isinstance(value, _Obj) and value.path != path and depth < 8:
                return self.function_of(value.path, depth + 1)  # an import of an import
            return _Obj(path) if isinstance(value, _Unknown) else value
        return _Obj(path)
