"""Calls: functions of the analysed source (their arguments bound as CPython binds them), the builtins
and the methods of builtin values the evaluator runs, with the work each is charged.
"""

from __future__ import annotations

import ast
import builtins
from typing import Any

from .limits import MAX_DEPTH, _Bounded, _format_bound
from .values import (
    _COLLECTIONS,
    _FORMATTER,
    _LOOPABLE,
    _NESTED_FIELD,
    _NO_DEFAULT,
    _SIZED,
    UNKNOWN,
    _Abort,
    _BoundMethod,
    _Builtin,
    _Function,
    _Limit,
    _Mod,
    _Obj,
    _Raised,
    _Return,
    _Scope,
    _Unknown,
)

_FUNCTION_FACTS: dict[int, tuple[ast.AST, frozenset[str], bool]] = {}  # id(def) -> (def, locals, generator)


def _function_facts(node: ast.FunctionDef | ast.Lambda) -> tuple[frozenset[str], bool]:
    """A function's local names and whether it is a generator, computed once per def node (the node is
    kept in the entry, so its id is not reused while the entry lives)."""
    entry = _FUNCTION_FACTS.get(id(node))
    if entry is None or entry[0] is not node:
        if len(_FUNCTION_FACTS) > 4096:
            _FUNCTION_FACTS.clear()
        generator = any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await)) for n in _own_nodes(node))
        entry = _FUNCTION_FACTS[id(node)] = (node, _local_names(node), generator)
    return entry[1], entry[2]


def _is_generator(node: ast.FunctionDef) -> bool:
    return _function_facts(node)[1]


def _own_nodes(node: ast.FunctionDef | ast.Lambda) -> list[ast.AST]:
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(node.body) if isinstance(node, ast.FunctionDef) else [node.body]
    while stack:
        current = stack.pop()
        found.append(current)
        if not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(current))
    return found


def _local_names(node: ast.FunctionDef | ast.Lambda) -> frozenset[str]:
    """Names a function assigns anywhere in its own body (Python makes them local to it)."""
    names = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    for inner in _own_nodes(node):
        if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
            names.add(inner.id)
        elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(inner.name)
        elif isinstance(inner, (ast.Import, ast.ImportFrom)):
            names.update(a.asname or a.name.split(".")[0] for a in inner.names)
        elif isinstance(inner, ast.ExceptHandler) and inner.name:
            names.add(inner.name)
    return frozenset(names)


class _Calls(_Bounded):
    def make_function(
        self, node: ast.FunctionDef | ast.Lambda, scope: _Scope, closure: _Scope | None
    ) -> _Function:
        args = node.args
        defaults = [self.expr_value(d, scope) for d in args.defaults]
        kw_defaults = [self.expr_value(d, scope) if d is not None else _NO_DEFAULT for d in args.kw_defaults]
        return _Function(node, scope.module, closure, defaults, kw_defaults)

    def call(self, function: _Function, positional: list[Any], keywords: dict[str, Any]) -> Any:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Limit("calls nested deeper than the analysis follows")
        try:
            node = function.node
            names = self.bind_arguments(function, positional, keywords)
            scope = _Scope(function.module, names, _function_facts(node)[0], function.closure)
            if isinstance(node, ast.Lambda):
                return self.eval(node.body, scope)
            if _is_generator(node):
                raise _Abort("a generator function")
            try:
                self.run(node.body, scope)
            except _Return as returned:
                return returned.value
            return None
        finally:
            self.depth -= 1

    def bind_arguments(
        self, function: _Function, positional: list[Any], keywords: dict[str, Any]
    ) -> dict[str, Any]:
        args = function.node.args
        params = [*args.posonlyargs, *args.args]
        names: dict[str, Any] = {}
        if len(positional) > len(params) and args.vararg is None:
            raise _Abort("a call with more positional arguments than the function takes")
        for param, value in zip(params, positional):
            names[param.arg] = value
        if args.vararg is not None:
            names[args.vararg.arg] = tuple(positional[len(params) :])
        extra: dict[str, Any] = {}
        for key, value in keywords.items():
            if key in names or key in {p.arg for p in args.posonlyargs}:
                raise _Abort("a call that does not bind")
            if key in {p.arg for p in (*args.args, *args.kwonlyargs)}:
                names[key] = value
            elif args.kwarg is not None:
                extra[key] = value
            else:
                raise _Abort("a call with a keyword the function does not take")
        first_default = len(params) - len(function.defaults)
        for index, param in enumerate(params):
            if param.arg not in names:
                if index < first_default:
                    raise _Abort("a call that misses an argument")
                names[param.arg] = function.defaults[index - first_default]
        for param, default in zip(args.kwonlyargs, function.kw_defaults):
            if param.arg not in names:
                if default is _NO_DEFAULT:
                    raise _Abort("a call that misses a keyword-only argument")
                names[param.arg] = default
        if args.kwarg is not None:
            names[args.kwarg.arg] = extra
        return names

    def call_value(self, callee: Any, positional: list[Any], keywords: dict[str, Any], node: ast.Call) -> Any:
        if isinstance(callee, _Function):
            try:
                return self.call(callee, positional, keywords)
            except _Limit:
                raise
            except _Abort:
                self.approximate = True
                return _Unknown()
        if isinstance(callee, _Builtin):
            return self.call_builtin(callee.name, positional, keywords)
        if isinstance(callee, _BoundMethod):
            return self.call_method(callee, positional, keywords)
        if isinstance(callee, _Obj):
            resolved = self.function_of(callee.path)
            if not isinstance(resolved, _Obj):
                return self.call_value(resolved, positional, keywords, node)
        # An object outside what the analysis reads: what it returns is unknown, and it may raise.
        self.approximate = True
        return _Unknown()

    def call_builtin(self, name: str, positional: list[Any], keywords: dict[str, Any]) -> Any:
        if name == "print":
            return None
        if name == "warn":
            return self.builtin_warn(positional, keywords)
        if name == "import_module":
            return self.builtin_import_module(positional, keywords)
        if name in ("getattr", "hasattr"):
            return self.builtin_getattr(name, positional)
        if (
            keywords
            or any(self.has_unknown(p) for p in positional)
            or not all(self.plain(p) for p in positional)
        ):
            return self.builtin_on_unknown(name, positional, keywords)
        if name == "isinstance":
            return _Unknown()
        if (
            name == "int"
            and positional
            and isinstance(positional[0], (str, bytes))
            and len(positional[0]) > 4000
        ):
            return _Unknown()  # longer than some Pythons convert (3.11: 4,300 digits)
        self.charge_builtin(name, positional)
        try:
            result = getattr(builtins, name)(*positional)
        except (MemoryError, RecursionError):
            raise _Limit("a value larger than the analysis follows") from None
        except Exception as error:  # a TypeError of the analysed code: it would raise there too
            raise _Raised(type(error).__name__, str(error)) from None
        return self.sized(result)

    def builtin_warn(self, positional: list[Any], keywords: dict[str, Any]) -> Any:
        """`warnings.warn(message, ...)`: the warning is recorded (the first, where certain, as exact)."""
        message = positional[0] if positional else keywords.get("message", UNKNOWN)
        text = self.text(message)
        if not self.warnings and not self.approximate and not isinstance(message, _Unknown):
            self.exact_warning = text
        self.warnings.append(text)
        return None

    def builtin_import_module(self, positional: list[Any], keywords: dict[str, Any]) -> Any:
        """`importlib.import_module(name, package)`: the module it names (relative names resolved)."""
        target = positional[0] if positional else keywords.get("name", UNKNOWN)
        package = positional[1] if len(positional) > 1 else keywords.get("package")
        if not isinstance(target, str):
            return _Unknown()
        if target.startswith("."):
            if not isinstance(package, str):
                return _Unknown()
            level = len(target) - len(target.lstrip("."))
            parts = package.split(".")
            if level - 1 >= len(parts):
                return _Unknown()
            rest = target[level:]
            target = ".".join(parts[: len(parts) - (level - 1)] + ([rest] if rest else []))
        return _Mod(target)

    def builtin_getattr(self, name: str, positional: list[Any]) -> Any:
        """`getattr(owner, name)` of a module or object the analysis names; `hasattr` is not followed."""
        if len(positional) < 2 or not isinstance(positional[1], str):
            return _Unknown()
        owner, attr = positional[0], positional[1]
        if name == "hasattr" or len(positional) > 2:
            return _Unknown()  # whether it exists is the resolver's to say
        if isinstance(owner, (_Mod, _Obj)):
            return _Obj(f"{owner.path}.{attr}")
        return _Unknown()

    def builtin_on_unknown(self, name: str, positional: list[Any], keywords: dict[str, Any]) -> Any:
        """A builtin given keywords or values not all known and plain: only a container copied or sorted."""
        if name == "isinstance":
            return _Unknown()
        if name in ("set", "list", "tuple", "frozenset", "sorted") and len(positional) == 1 and not keywords:
            value = positional[0]
            if isinstance(value, _COLLECTIONS) and not self.unknown_keys(value):
                if name != "sorted" or not self.has_unknown(value):
                    self.charge_builtin(name, positional)
                    try:
                        return getattr(builtins, name)(value)
                    except TypeError:  # objects the analysis names but cannot order or hash
                        return _Unknown()
        return _Unknown()

    def charge_builtin(self, name: str, positional: list[Any]) -> None:
        """Refuse a builtin's result beforehand where it would be too large, and charge what it reads
        and builds (`sorted`: n log n)."""
        reads = sum(self.extent(p) for p in positional)
        self.charge(reads)
        first = positional[0] if positional else None
        if name in ("str", "repr"):
            self.ensure(len(first) if name == "str" and isinstance(first, str) else self.facts(first)[3])
        elif isinstance(first, _SIZED) and name in ("set", "list", "tuple", "frozenset", "sorted", "dict"):
            self.ensure(len(first))
            if name == "sorted":
                self.charge(len(first) * max(1, len(first).bit_length()))

    def call_method(self, method: _BoundMethod, positional: list[Any], keywords: dict[str, Any]) -> Any:
        owner, name = method.owner, method.name
        if isinstance(owner, dict) and name == "get" and positional and not keywords:
            key = positional[0]
            default = positional[1] if len(positional) > 1 else None
            if isinstance(key, _Unknown):
                return _Unknown()
            self.charge(self.extent(key))
            try:
                if key in owner:
                    return owner[key]
            except TypeError:
                return _Unknown()
            return _Unknown() if self.unknown_keys(owner) else default
        if isinstance(owner, dict) and name in ("keys", "values", "items") and not positional:
            return getattr(owner, name)()
        arguments = [*positional, *keywords.values()]
        if self.has_unknown(owner) or any(self.has_unknown(p) for p in arguments):
            return _Unknown()
        if not all(self.plain(p) for p in arguments):
            return _Unknown()
        if name == "format" and isinstance(owner, str) and "." in owner:
            try:
                fields = [f for _, f, _, _ in _FORMATTER.parse(owner) if f is not None]
            except ValueError:
                fields = []
            if any("." in f for f in fields):
                return _Unknown()  # an attribute of an argument (`{0.__class__}`): not read
        self.charge(self.extent(owner) + sum(self.extent(a) for a in arguments))
        self.ensure(self.method_bound(owner, name, positional, keywords))
        try:
            result = getattr(owner, name)(*positional, **keywords)
        except (MemoryError, RecursionError):
            raise _Limit("a value larger than the analysis follows") from None
        except Exception as error:
            raise _Raised(type(error).__name__, str(error)) from None
        return self.sized(result)

    def method_bound(self, owner: Any, name: str, positional: list[Any], keywords: dict[str, Any]) -> int:
        """An upper bound on the size of what a builtin method returns, from its operands' sizes."""
        arguments = [*positional, *keywords.values()]
        if not isinstance(owner, str):
            if name in ("union", "intersection", "difference", "copy"):
                return len(owner) + sum(len(a) if isinstance(a, _SIZED) else 1 for a in arguments)
            return 1
        if name == "join":
            items = positional[0] if positional else ()
            if not isinstance(items, _LOOPABLE):
                return 1
            lengths = [len(i) if isinstance(i, str) else 0 for i in items]
            return sum(lengths) + len(owner) * max(len(lengths) - 1, 0)
        if name == "format":
            texts = [self.facts(a)[3] if not isinstance(a, str) else len(a) for a in arguments]
            ints = [a for a in arguments if isinstance(a, int)]
            return _format_bound(
                owner, owner.count("{"), texts, ints, _NESTED_FIELD.search(owner) is not None
            )
        if name == "replace":
            old = positional[0] if positional and isinstance(positional[0], str) else ""
            new = positional[1] if len(positional) > 1 and isinstance(positional[1], str) else ""
            return len(owner) + (len(owner) // max(len(old), 1) + 1) * len(new)
        if name in ("upper", "lower", "title", "capitalize"):
            return len(owner) if owner.isascii() else 3 * len(owner)
        return len(owner) + 1
