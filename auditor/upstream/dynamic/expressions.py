"""Expressions: names, attributes, subscripts, calls, comparisons, operators, f-strings and
comprehensions, evaluated on the interpreter's values.
"""

from __future__ import annotations

import ast
from typing import Any

from .limits import MAX_SIZE, _Bounded, _format_bound
from .values import (
    _BINARY,
    _COMPARE,
    _CONTAINERS,
    _LOOPABLE,
    _MODELLED_PATHS,
    _PLAIN,
    _PURE_METHODS,
    _SIZED,
    _VIEWS,
    _Abort,
    _BoundMethod,
    _built,
    _Builtin,
    _EnumMember,
    _Limit,
    _Mod,
    _Namespace,
    _Obj,
    _Raised,
    _Scope,
    _Spec,
    _SysModules,
    _Unknown,
)


class _Expressions(_Bounded):
    def truth(self, value: Any) -> bool:
        if isinstance(value, _Unknown):
            raise _Abort("a test whose outcome is unknown")
        if isinstance(value, (*_PLAIN, *_CONTAINERS, *_VIEWS)):
            return bool(value)
        return True  # modules, functions, classes and other objects are true

    def name(self, name: str, scope: _Scope) -> Any:
        current: _Scope | None = scope
        while current is not None:
            if name in current.names:
                return current.names[name]
            if name in current.local_names:
                raise _Abort(f"`{name}` is read before it is assigned")
            current = current.parent
        return self.global_value(scope.module, name)

    def iterate(self, value: Any) -> list[Any]:
        # A list or tuple holding unknown values still has its length and order; an unknown key of a
        # set or dict may equal another one.
        if isinstance(value, _Obj) and value.path in self.enums:
            module, _, cls = value.path.rpartition(".")
            mod = self.load(module)
            if mod is not None and len(mod.bindings.get(cls, ())) == 1:
                members = self.enums[value.path]
                self.charge(len(members))
                return [_EnumMember(value.path, name) for name in members]
        value = self.data(value)
        if isinstance(value, (str, list, tuple)) or (
            isinstance(value, _LOOPABLE) and not self.unknown_keys(value)
        ):
            self.charge(len(value))
            return list(value)
        raise _Abort("a loop over values the analysis does not know")

    def eval(self, node: ast.expr, scope: _Scope) -> Any:
        self.step()
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self.name(node.id, scope)
        if isinstance(node, ast.JoinedStr):
            return self.joined(node, scope)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return self.display(node, scope)
        if isinstance(node, ast.Dict):
            return self.dict_display(node, scope)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(node, scope)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.eval(node.value, scope), node.attr)
        if isinstance(node, ast.Subscript):
            return self.subscript(self.eval(node.value, scope), self.eval(node.slice, scope))
        if isinstance(node, ast.Call):
            if self.is_globals_call(node, scope):
                return _Namespace(scope.module.path)  # `globals()[f"_{name}"]`: the module's own names
            return self.call_expr(node, scope)
        if isinstance(node, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.IfExp)):
            return self.operation(node, scope)
        if isinstance(node, ast.Slice):
            return self.slice_(node, scope)
        if isinstance(node, ast.Lambda):
            return self.make_function(node, scope, scope)
        if isinstance(node, ast.NamedExpr):
            value = self.eval(node.value, scope)
            scope.names[node.target.id] = value
            return value
        return _Unknown()

    def operation(
        self, node: ast.Compare | ast.BoolOp | ast.UnaryOp | ast.BinOp | ast.IfExp, scope: _Scope
    ) -> Any:
        """Comparisons, `and`/`or`, unary and binary operators, `a if test else b`."""
        if isinstance(node, ast.Compare):
            return self.compare(node, scope)
        if isinstance(node, ast.BoolOp):
            return self.bool_op(node, scope)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node, scope)
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.eval(node.left, scope), self.eval(node.right, scope))
        return self.eval(node.body if self.truth(self.eval(node.test, scope)) else node.orelse, scope)

    def display(self, node: ast.Tuple | ast.List | ast.Set, scope: _Scope) -> Any:
        """A tuple, list or set display (`*` spreads included)."""
        items: list[Any] = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                spread = self.iterate(self.eval(element.value, scope))
                self.ensure(len(items) + len(spread))
                items.extend(spread)
            else:
                items.append(self.eval(element, scope))
        maker = {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)]
        self.ensure(len(items))
        return _built(maker, items)

    def dict_display(self, node: ast.Dict, scope: _Scope) -> Any:
        """A dict display (`**` spreads included)."""
        result: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values):
            if key is None:
                spread = self.eval(value, scope)
                if not isinstance(spread, dict):
                    return _Unknown()
                self.ensure(len(result) + len(spread))
                result.update(spread)
            else:
                entry = self.eval(key, scope)
                self.charge(self.extent(entry))
                try:
                    result[entry] = self.eval(value, scope)
                except TypeError as error:
                    raise _Raised("TypeError", str(error)) from None
        return result

    def bool_op(self, node: ast.BoolOp, scope: _Scope) -> Any:
        """`and` / `or`: the operand that decides, as CPython gives it."""
        last: Any = None
        for operand in node.values:
            last = self.eval(operand, scope)
            if isinstance(last, _Unknown):
                return _Unknown()
            truth = self.truth(last)
            if (isinstance(node.op, ast.And) and not truth) or (isinstance(node.op, ast.Or) and truth):
                return last
        return last

    def slice_(self, node: ast.Slice, scope: _Scope) -> Any:
        """`VERSION.split(".")[:2]`: bounds that are ints or None."""
        bounds = [
            None if part is None else self.eval(part, scope) for part in (node.lower, node.upper, node.step)
        ]
        if all(b is None or (isinstance(b, int) and not isinstance(b, bool)) for b in bounds):
            return slice(*bounds)
        return _Unknown()

    def unary(self, node: ast.UnaryOp, scope: _Scope) -> Any:
        """`-x` on a number, `not x`; any other unary operator is not followed."""
        if isinstance(node.op, ast.USub):
            operand = self.eval(node.operand, scope)
            if isinstance(operand, (int, float)) and not isinstance(operand, bool):
                return -operand
            return _Unknown()
        if isinstance(node.op, ast.Not):
            operand = self.eval(node.operand, scope)
            return _Unknown() if isinstance(operand, _Unknown) else not self.truth(operand)
        return _Unknown()

    def joined(self, node: ast.JoinedStr, scope: _Scope) -> Any:
        parts: list[str] = []
        known = True
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
                continue
            assert isinstance(value, ast.FormattedValue)
            inner = self.data(self.eval(value.value, scope))  # `f"...{VERSION}..."`, imported
            if (
                isinstance(inner, _Unknown)
                or value.format_spec is not None
                or not self.plain(inner)
                or self.has_unknown(inner)
            ):
                known = False
                parts.append(self.text(inner))
                continue
            if value.conversion == ord("r"):
                self.ensure(self.facts(inner)[3])
                parts.append(repr(inner))
            else:
                parts.append(self.text(inner))
        if not known:
            return self.hint(*parts)
        self.ensure(sum(len(p) for p in parts))
        return "".join(parts)

    def comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, scope: _Scope
    ) -> Any:
        inner = _Scope(scope.module, {}, frozenset(), scope)
        results: list[Any] = []

        def loop(index: int) -> None:
            if index == len(node.generators):
                self.step()
                if isinstance(node, ast.DictComp):
                    results.append((self.eval(node.key, inner), self.eval(node.value, inner)))
                else:
                    results.append(self.eval(node.elt, inner))
                if len(results) > MAX_SIZE:
                    raise _Limit("a comprehension larger than the analysis follows")
                return
            generator = node.generators[index]
            if generator.is_async:
                raise _Abort("an async comprehension")
            for item in self.iterate(self.eval(generator.iter, inner)):
                self.store(generator.target, item, inner)
                if all(self.truth(self.eval(test, inner)) for test in generator.ifs):
                    loop(index + 1)

        loop(0)
        self.charge(len(results))
        if isinstance(node, ast.DictComp):
            return _built(dict, results)
        if isinstance(node, ast.SetComp):
            return _built(set, results)
        if isinstance(node, ast.GeneratorExp):
            return tuple(results)
        return results

    def bound_in(self, module: str, name: Any) -> Any:
        """`name in sys.modules[module].__dict__` once the module has run: True where every run binds it
        at top level, False where nothing can (no binding, no star import), else unknown. (Names that
        `globals()` games or `exec` bind are the resolver's to rule out: it trusts "not served" only in
        a module without them.)"""
        mod = self.load(module)
        if mod is None or not isinstance(name, str):
            return _Unknown()
        if name in (
            "__name__",
            "__doc__",
            "__package__",
            "__spec__",
            "__loader__",
            "__file__",
            "__builtins__",
        ):
            return True
        statements = mod.bindings.get(name)
        if statements:
            return True if any(certain for _, certain in statements) else _Unknown()
        return _Unknown() if mod.stars else False

    def data(self, value: Any) -> Any:
        """An imported name read as data (`attr in TABLE`, `TABLE[attr]`, a loop over it): the value
        its own module binds, where that is known and not changed where it is imported."""
        if isinstance(value, _Obj):
            if value.changed:
                return _Unknown()
            resolved = self.function_of(value.path)
            if isinstance(resolved, _Obj):
                return _Unknown()
            if value.shared is not None and self.mutable_from(resolved, value.shared):
                return _Unknown()
            return resolved
        return value

    def attribute(self, owner: Any, name: str) -> Any:
        if isinstance(owner, _Unknown):
            return _Unknown()
        if isinstance(owner, _EnumMember):
            return owner.name if name == "name" else _Unknown()
        if isinstance(owner, _Spec):
            if name == "parent":
                return owner.module if owner.is_package else owner.module.rpartition(".")[0]
            if name == "name":
                return owner.module
            return _Unknown()
        if isinstance(owner, _Mod) and name == "__dict__":
            return _Namespace(owner.path) if self.load(owner.path) is not None else _Unknown()
        if isinstance(owner, _Mod):
            if owner.path == "sys":
                # sys.modules and friends: the interpreter's state, but for the package's own modules
                return _SysModules() if name == "modules" else _Unknown()
            path = f"{owner.path}.{name}"
            return _Builtin(_MODELLED_PATHS[path]) if path in _MODELLED_PATHS else _Obj(path)
        if isinstance(owner, _Obj):
            value = self.data(owner)
            if not any(type(value) is kind and name in methods for kind, methods in _PURE_METHODS.items()):
                return _Obj(f"{owner.path}.{name}")
            owner = value  # an imported table's own method (`TABLE.get(attr)`)
        for kind, methods in _PURE_METHODS.items():
            if type(owner) is kind and name in methods:
                return _BoundMethod(owner, name)
        return _Unknown()

    def is_globals_call(self, node: ast.Call, scope: _Scope) -> bool:
        """`globals()` of the builtins (not a name the module or the function binds itself)."""
        if not (isinstance(node.func, ast.Name) and node.func.id == "globals") or node.args or node.keywords:
            return False
        try:
            self.name("globals", scope)
        except _Abort:
            return True  # not bound anywhere the analysis reads: the builtin
        return False

    def subscript(self, owner: Any, key: Any) -> Any:
        owner = self.data(owner)
        if isinstance(owner, _Unknown) or isinstance(key, _Unknown):
            return _Unknown()
        if isinstance(owner, _SysModules):
            # a module of the package the code is running in is imported: `sys.modules[__name__]`
            return _Mod(key) if isinstance(key, str) and self.load(key) is not None else _Unknown()
        if isinstance(owner, _Namespace):
            mod = self.load(owner.module)
            return self.global_value(mod, key) if mod is not None and isinstance(key, str) else _Unknown()
        if isinstance(owner, dict):
            self.charge(self.extent(key))
            try:
                if key in owner:
                    return owner[key]
            except TypeError:
                return _Unknown()
            if self.unknown_keys(owner):
                return _Unknown()
            raise _Raised("KeyError", self.text(key) if isinstance(key, _CONTAINERS) else repr(key))
        if (
            isinstance(owner, (list, tuple, str))
            and isinstance(key, (int, slice))
            and not isinstance(key, bool)
        ):
            if isinstance(key, slice):
                self.charge(len(owner))
            try:
                return owner[key]
            except IndexError:
                raise _Raised("IndexError", None) from None
        return _Unknown()

    def call_expr(self, node: ast.Call, scope: _Scope) -> Any:
        callee = self.eval(node.func, scope)
        positional: list[Any] = []
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                positional.extend(self.iterate(self.eval(argument.value, scope)))
            else:
                positional.append(self.eval(argument, scope))
        keywords: dict[str, Any] = {}
        for keyword in node.keywords:
            value = self.eval(keyword.value, scope)
            if keyword.arg is None:
                if not isinstance(value, dict) or self.unknown_keys(value):
                    return _Unknown()
                keywords.update(value)
            else:
                keywords[keyword.arg] = value
        return self.call_value(callee, positional, keywords, node)

    def compare(self, node: ast.Compare, scope: _Scope) -> Any:
        left = self.eval(node.left, scope)
        for op, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node, scope)
            outcome = self.compare_one(op, left, right)
            if isinstance(outcome, _Unknown) or not outcome:
                return outcome
            left = right
        return True

    def compare_one(self, op: ast.cmpop, left: Any, right: Any) -> Any:
        left, right = self.data(left), self.data(right)  # `attr == OLD_NAME`, imported
        if isinstance(op, (ast.Is, ast.IsNot)):
            if isinstance(left, _Unknown) or isinstance(right, _Unknown):
                return _Unknown()
            if left is None or right is None or isinstance(left, bool) or isinstance(right, bool):
                same = left is right
                return same if isinstance(op, ast.Is) else not same
            return _Unknown()
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, _Namespace):
            found = self.bound_in(right.module, left)
            if isinstance(found, _Unknown):
                return found
            return found if isinstance(op, ast.In) else not found
        if isinstance(op, (ast.In, ast.NotIn)):
            return self.membership(op, left, right)
        compare = _COMPARE.get(type(op))
        if compare is None or not self.plain(left) or not self.plain(right):
            return _Unknown()
        if self.has_unknown(left) or self.has_unknown(right):
            return _Unknown()
        self.charge(min(self.extent(left), self.extent(right)))
        try:
            return compare(left, right)
        except TypeError:
            return _Unknown()

    def membership(self, op: ast.In | ast.NotIn, left: Any, right: Any) -> Any:
        """`left in right` / `not in` on values the analysis knows (a container, a string)."""
        if isinstance(left, _Unknown) or isinstance(right, _Unknown):
            return _Unknown()
        if not isinstance(right, _LOOPABLE):
            return _Unknown()
        if isinstance(right, str) and not isinstance(left, str):
            return _Unknown()
        self.charge(self.extent(left) + (len(right) if isinstance(right, (str, list, tuple)) else 1))
        try:
            found = left in right
        except TypeError:
            return _Unknown()
        if not found and (self.unknown_keys(right) if not isinstance(right, str) else False):
            return _Unknown()
        if not found and isinstance(right, (list, tuple)) and not self.plain(right):
            return _Unknown()
        return found if isinstance(op, ast.In) else not found

    def binary(self, op: ast.operator, left: Any, right: Any) -> Any:
        left, right = self.data(left), self.data(right)
        function = _BINARY.get(type(op))
        if function is None or self.has_unknown(left) or self.has_unknown(right):
            if (
                isinstance(op, ast.Add)
                and isinstance(left, (str, _Unknown))
                and isinstance(right, (str, _Unknown))
            ):
                return self.hint(self.text(left), self.text(right))  # a message with a part not known
            return _Unknown()
        if not self.plain(left) or not self.plain(right):
            return _Unknown()
        if isinstance(op, ast.Mod) and not isinstance(left, str):
            return _Unknown()
        self.charge(self.extent(left) + self.extent(right))
        self.ensure(self.binary_bound(op, left, right))
        try:
            result = function(left, right)
        except (MemoryError, RecursionError):
            raise _Limit("a value larger than the analysis follows") from None
        except Exception as error:
            raise _Raised(type(error).__name__, str(error)) from None
        return self.sized(result)

    def binary_bound(self, op: ast.operator, left: Any, right: Any) -> int:
        """An upper bound on the size of `left OP right`, from the operands' sizes."""
        if isinstance(op, ast.Mod) and isinstance(left, str):  # `"%-3000000000s" % name`
            values = (
                list(right.values())
                if isinstance(right, dict)
                else list(right)
                if isinstance(right, tuple)
                else [right]
            )
            texts = [len(v) if isinstance(v, str) else self.facts(v)[3] for v in values]
            ints = [v for v in values if isinstance(v, int)]
            return _format_bound(left, left.count("%"), texts, ints, "*" in left)
        sizes = [len(v) if isinstance(v, _SIZED) else 1 for v in (left, right)]
        return sum(sizes)
