"""What a module `__getattr__` (PEP 562) does for one attribute name, found without running it.

A small abstract interpreter over the module's own source and the helpers it calls in the same
package: literals and comprehensions over them, tests on the name (`in`, `==`, `startswith`, ...),
`return`, `raise`, `try`/`except`, `warnings.warn`, module-level constants, closures returned by a
factory (`__getattr__ = make_getattr(__name__)`, `__getattr__, __dir__, __all__ = attach(...)`),
`importlib.import_module` and `getattr(module, name)`. Whatever it cannot follow makes the answer
`Undecided`: the answer is certain or it is not given. Evaluation is bounded in steps, call depth,
sizes, work and wall time; nothing is imported or executed (only methods of builtin values such as
`str.startswith` run, on values the source spells out). A bound reached is never read as the module
raising: the answer is `Undecided` with `limit` set. A value's size is estimated from its operands'
sizes and refused before it is built (a join, a concatenation, a `%` or `str.format` with a width),
and every operation is charged work in proportion to the size of what it reads and builds.

`evaluate(module, source, name, sources)` answers `Served(target, warning)` (the object handed back,
as a dotted path when it names one, and the message of a warning issued on the way: a deprecation),
`NotServed(message)` (the function raises, with the message it raises) or `Undecided(why)`.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import string
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Union

from apidrift.auditor.upstream.astwalk import walk_once
from apidrift.auditor.upstream.escape import Escapes, changed_depths

MAX_STEPS = 50_000  # expressions and statements evaluated for one name
MAX_DEPTH = 16  # nested calls
MAX_SIZE = 100_000  # elements of a container, characters of a string
MAX_SOURCE = 2 * 1024 * 1024  # a helper module larger than this is not read
MAX_WORK = 2_000_000  # elements read or built (by loops, builtins, methods, operators) for one name
MAX_NAME_SECONDS = 5.0  # wall time for one name
MAX_MODULE_SECONDS = 30.0  # wall time for all the names asked of one module's `__getattr__`

# dotted module path -> (its source text, whether it is a package), when it is in the package
Sources = Callable[[str], tuple[str, bool] | None]


@dataclass(frozen=True)
class Served:
    target: str | None = None  # dotted path of the object handed back, when it names one
    warning: str | None = None  # message of the warning issued on the way (a deprecation)


@dataclass(frozen=True)
class NotServed:
    message: str | None = None  # the message the function raises with
    exception: str = "AttributeError"


@dataclass(frozen=True)
class Undecided:
    why: str
    limit: bool = False  # a bound of the analysis was reached (steps, work, time, size, depth, memory)


Answer = Union[Served, NotServed, Undecided]


def evaluate(module: str, source: str, name: str, sources: Sources, *, is_package: bool = False) -> Answer:
    """What `module.__getattr__(name)` does; `source` is the module's source, `sources` reads others."""
    return Evaluator(sources).evaluate(module, source, name, is_package=is_package)


class Evaluator:
    """Answers for many names of one upstream version: module-level values are computed once."""

    def __init__(self, sources: Sources) -> None:
        self.interpreter = _Interpreter(sources)
        self.spent: dict[str, float] = {}  # module -> seconds spent on its names so far

    def evaluate(self, module: str, source: str, name: str, *, is_package: bool = False) -> Answer:
        interpreter = self.interpreter
        spent = self.spent.get(module, 0.0)
        if spent >= MAX_MODULE_SECONDS:
            return Undecided(
                f"more time than the analysis spends on one module ({MAX_MODULE_SECONDS:g} s)", True
            )
        started = time.monotonic()
        interpreter.reset(started + min(MAX_NAME_SECONDS, MAX_MODULE_SECONDS - spent))
        try:
            return _evaluate(interpreter, module, source, name, is_package)
        finally:
            interpreter.memo.clear()
            self.spent[module] = spent + time.monotonic() - started


def _evaluate(interpreter: _Interpreter, module: str, source: str, name: str, is_package: bool) -> Answer:
    try:
        mod = interpreter.modules.get(module) or interpreter.module(module, source, is_package)
        function = interpreter.global_value(mod, "__getattr__")
        if not isinstance(function, _Function):
            raise _Abort("`__getattr__` is not a function the analysis can read")
        value = interpreter.call(function, [name], {})
    except _Limit as limit:
        return Undecided(limit.why, True)
    except _Abort as abort:
        if interpreter.exact_warning is not None:  # the warning is certain, what is handed back is not
            return Served(None, interpreter.exact_warning)
        return Undecided(abort.why)
    except _Raised as raised:
        return NotServed(raised.message, raised.cls)
    except RecursionError:
        return Undecided("nesting deeper than the analysis follows", True)
    except MemoryError:
        return Undecided("more memory than the analysis has", True)
    if interpreter.approximate or isinstance(value, _Unknown):
        if interpreter.exact_warning is not None:
            # `click.__version__`: warns, then hands back `importlib.metadata.version("click")`
            return Served(None, interpreter.exact_warning)
        return Undecided("it hands back what a helper the analysis cannot follow returns")
    warning = interpreter.warnings[0] if interpreter.warnings else None
    return Served(_path_of(value), warning)


def namespace_names(
    evaluator: Evaluator, module: str, source: str, enums: dict[str, list[str]], *, is_package: bool = False
) -> frozenset[str] | Undecided:
    """The names a module's code binds through `globals()` on every import (see namespace_writes),
    evaluated with the bounds of `evaluate`; `enums` holds the members of the module's Enum classes."""
    interpreter = evaluator.interpreter
    spent = evaluator.spent.get(module, 0.0)
    if spent >= MAX_MODULE_SECONDS:
        return Undecided(f"more time than the analysis spends on one module ({MAX_MODULE_SECONDS:g} s)", True)
    started = time.monotonic()
    interpreter.reset(started + min(MAX_NAME_SECONDS, MAX_MODULE_SECONDS - spent))
    try:
        mod = interpreter.modules.get(module) or interpreter.module(module, source, is_package)
        interpreter.enums = {
            f"{module}.{key.removesuffix('.__iter__')}": members
            for key, members in enums.items()
            if key.endswith(".__iter__")
        }
        tree = ast.parse(source)
        names: list[str] = []
        for stmt in namespace_writes(tree):
            interpreter.before = (module, stmt.lineno)
            try:
                names.extend(interpreter.namespace_write(mod, stmt, enums))
            finally:
                interpreter.before = None
        return frozenset(names)
    except _Limit as limit:
        return Undecided(limit.why, True)
    except _Abort as abort:
        return Undecided(abort.why)
    except _Raised as raised:
        return Undecided(f"the module's code raises {raised.cls} there")
    except (_Return, _Break, _Continue):
        return Undecided("a statement the analysis does not follow")
    except (SyntaxError, ValueError):
        return Undecided("the module does not parse")
    except RecursionError:
        return Undecided("nesting deeper than the analysis follows", True)
    except MemoryError:
        return Undecided("more memory than the analysis has", True)
    finally:
        interpreter.memo.clear()
        evaluator.spent[module] = spent + time.monotonic() - started


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

    def literal(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            return node.id in members  # an alias of an earlier member
        if isinstance(node, ast.Tuple):
            return all(literal(e) for e in node.elts)
        if isinstance(node, ast.UnaryOp):
            return literal(node.operand)
        if isinstance(node, ast.BinOp):
            return literal(node.left) and literal(node.right)
        return isinstance(node, ast.Call) and is_auto(node.func) and not node.args and not node.keywords

    for index, stmt in enumerate(body):
        if isinstance(stmt, ast.Pass) or (
            index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        ):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if all(
                isinstance(d, ast.Name) and d.id in ("property", "classmethod", "staticmethod")
                for d in stmt.decorator_list
            ):
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
        if not literal(value):
            return None  # maybe a descriptor: not a member
        members.append(name)
        if canonical is not None:
            try:
                constant = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                canonical = None  # `auto()`, another member: which value it has is not read here
                continue
            if not any(constant == earlier for earlier in values):
                canonical.append(name)
            values.append(constant)
    return members, canonical


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


# -- values -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Mod:
    path: str  # a module object


@dataclass(frozen=True)
class _Obj:
    path: str  # an object named by its dotted path (in the package or outside it)
    # imported and then changed in place where it is imported (`T.pop(k)`): its own module's value
    # is no longer the one read
    changed: bool = field(default=False, compare=False)
    # imported, and what it holds from this depth on may be changed where it is imported (escape.py)
    shared: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class _Exc:
    name: str  # a builtin exception class


@dataclass(frozen=True)
class _Builtin:
    name: str  # a builtin function the interpreter models


@dataclass(frozen=True)
class _EnumMember:
    cls: str  # dotted path of its Enum class
    name: str


class _SysModules:
    """`sys.modules`: only its entries for modules of the package are read (`sys.modules[__name__]`)."""


@dataclass(frozen=True)
class _Namespace:
    module: str  # `sys.modules[name].__dict__` of a module of the package: its top-level names


@dataclass(frozen=True)
class _Spec:
    module: str  # `__spec__` of a module
    is_package: bool


class _Unknown:
    """A value the analysis does not know; `hint` is how it reads in a message."""

    __slots__ = ("hint",)

    def __init__(self, hint: str = "\u2026") -> None:
        self.hint = hint

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = _Unknown()
_NO_DEFAULT = object()


@dataclass(eq=False)
class _Module:
    path: str
    is_package: bool
    bindings: dict[str, list[tuple[ast.stmt, bool]]]  # name -> (binding statement, always runs)
    mutated: set[str]
    # name -> the module-level statements that change it in place, in order, where they are all its
    # changes and each runs on every import (`T = {}` then `T.update({...})`, `T["k"] = v`)
    mutations: dict[str, list[ast.stmt]] = field(default_factory=dict)
    stars: bool = False  # a star import binds names the analysis does not list
    # name -> the nesting depth from which what its value holds may be changed where the analysis does
    # not look (through another name, a container, a helper: escape.py); 0 is the value itself
    shared: dict[str, int] = field(default_factory=dict)
    # name -> (a function of another module it is handed to, the slot, the depth it would be changed
    # from if that function does more than read it); function -> parameter -> depth (escape.py)
    deferred: dict[str, list[tuple[str, int | str, int]]] = field(default_factory=dict)
    params: dict[str, dict[str, int]] = field(default_factory=dict)
    values: dict[str, tuple[Any, bool]] = field(default_factory=dict)  # name -> (value, from an unknown call)

    @property
    def package(self) -> str:
        return self.path if self.is_package else self.path.rpartition(".")[0]


@dataclass(eq=False)
class _Function:
    node: ast.FunctionDef | ast.Lambda
    module: _Module
    closure: _Scope | None
    defaults: list[Any]
    kw_defaults: list[Any]

    @property
    def path(self) -> str | None:
        if self.closure is None and isinstance(self.node, ast.FunctionDef):
            return f"{self.module.path}.{self.node.name}"
        return None


@dataclass(eq=False)
class _Scope:
    module: _Module
    names: dict[str, Any]
    local_names: frozenset[str]
    parent: _Scope | None = None
    handling: _Raised | None = None  # the exception an `except` block handles (for a bare `raise`)


@dataclass(frozen=True)
class _BoundMethod:
    owner: Any
    name: str


class _Abort(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Limit(_Abort):
    """A bound of the analysis reached: never an answer about the module, whatever catches it."""


@dataclass(frozen=True)
class _Failed:
    why: str  # a module-level value whose evaluation reached a bound (kept: asking again costs as much)


class _Raised(Exception):
    def __init__(self, cls: str, message: str | None) -> None:
        super().__init__(cls)
        self.cls = cls
        self.message = message


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_PLAIN = (str, int, float, bool, type(None), bytes)
_CONTAINERS = (tuple, list, set, frozenset, dict)
_VIEWS: tuple[type[Collection[Any]], ...] = (type({}.keys()), type({}.values()), type({}.items()))
_COLLECTIONS: tuple[type[Collection[Any]], ...] = (*_CONTAINERS, *_VIEWS)  # what a loop can run over
_LOOPABLE: tuple[type[Collection[Any]], ...] = (str, *_COLLECTIONS)
_SIZED: tuple[type[Collection[Any]], ...] = (str, bytes, *_COLLECTIONS)  # what MAX_SIZE bounds
_EXCEPTIONS = frozenset(
    n
    for n in dir(builtins)
    if isinstance(getattr(builtins, n), type) and issubclass(getattr(builtins, n), BaseException)
)
_BUILTIN_FUNCTIONS = frozenset(
    {
        "set",
        "frozenset",
        "list",
        "tuple",
        "dict",
        "len",
        "str",
        "sorted",
        "print",
        "getattr",
        "hasattr",
        "isinstance",
        "repr",
        "bool",
        "int",
        "any",
        "all",
        "reversed",
        "enumerate",
        "zip",
        "min",
        "max",
    }
)
_PURE_METHODS = {
    str: {
        "startswith",
        "endswith",
        "format",
        "split",
        "rsplit",
        "partition",
        "rpartition",
        "lower",
        "upper",
        "replace",
        "join",
        "strip",
        "lstrip",
        "rstrip",
        "removeprefix",
        "removesuffix",
        "isidentifier",
        "isupper",
        "islower",
        "count",
        "find",
        "title",
        "capitalize",
    },
    dict: {"get", "keys", "values", "items", "copy"},
    set: {"union", "intersection", "difference", "issubset", "issuperset", "copy"},
    frozenset: {"union", "intersection", "difference", "issubset", "issuperset", "copy"},
    list: {"index", "count", "copy"},
    tuple: {"index", "count"},
}
_MODELLED_PATHS = {
    "importlib.import_module": "import_module",
    "warnings.warn": "warn",
    "builtins.print": "print",
}
_COMPARE = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}
_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitAnd: lambda a, b: a & b,
    ast.Mod: lambda a, b: a % b,
}


_DIGIT_RUNS = re.compile(r"\d+")
_FORMATTER = string.Formatter()
_NESTED_FIELD = re.compile(r"\{[^{}]*\{")


def _format_bound(template: str, fields: int, values: list[int], ints: list[int], nested: bool) -> int:
    """An upper bound on the length of `template` formatted with values whose texts are at most
    `values` long: every field the longest value, padded to the largest number the template spells
    (a width or precision), and to an int argument's value where a width comes from the arguments."""
    runs = _DIGIT_RUNS.findall(template)
    if any(len(run) > 9 for run in runs):
        return MAX_SIZE + 1
    widths = sum(int(run) for run in runs)
    if nested:
        widths += sum(abs(i) for i in ints)
    return len(template) + fields * (max(values, default=0) + widths)


def _built(maker: Callable[[list[Any]], Any], items: list[Any]) -> Any:
    """A set or dict built from items, as CPython builds it: an unhashable key raises TypeError."""
    try:
        return maker(items)
    except TypeError as error:
        raise _Raised("TypeError", str(error)) from None


def _path_of(value: Any) -> str | None:
    if isinstance(value, (_Mod, _Obj)):
        return value.path
    if isinstance(value, _Function):
        return value.path
    if isinstance(value, _Exc):
        return f"builtins.{value.name}"
    return None


class _Interpreter:
    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.steps = 0
        self.depth = 0
        self.modules: dict[str, _Module | None] = {}
        self.active: set[tuple[str, str]] = set()
        self.warnings: list[str] = []
        # The first warning, when it was issued on a path the analysis followed exactly (no helper it
        # could not follow ran before it): it is issued whatever happens next.
        self.exact_warning: str | None = None
        # A helper that could not be followed gave an unknown value: a raise found after it is still
        # certain (whatever it did, the name is not served), a value handed back is not.
        self.approximate = False
        # While a module-level statement is evaluated (a binding, or a change made in place): the line
        # of the statement (names bound or deleted after it are not seen yet), else None.
        self.before: tuple[str, int] | None = None  # (module, line)
        self.work = 0
        self.deadline = time.monotonic() + MAX_NAME_SECONDS
        # id(container) -> (the container, its facts): each container is walked once per name
        self.memo: dict[int, tuple[Any, tuple[bool, bool, bool, int]]] = {}
        self.enums: dict[str, list[str]] = {}  # dotted path of an Enum class -> its members, iterated

    def reset(self, deadline: float | None = None) -> None:
        """Before the next name: module-level values stay (they do not depend on the name)."""
        self.steps = 0
        self.depth = 0
        self.work = 0
        self.deadline = deadline if deadline is not None else time.monotonic() + MAX_NAME_SECONDS
        self.warnings = []
        self.exact_warning = None
        self.approximate = False
        self.active.clear()
        self.memo.clear()

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise _Limit("more steps than the analysis takes")
        self.charge(1)

    # -- bounds -----------------------------------------------------------------------------------

    def charge(self, amount: int) -> None:
        """Count work (elements read or built) before it is done; past a bound, stop."""
        self.work += amount
        if self.work > MAX_WORK:
            raise _Limit("more work than the analysis does for one name")
        if time.monotonic() > self.deadline:
            raise _Limit("more time than the analysis spends on one name")

    def ensure(self, size: int) -> None:
        """A value about to be built, `size` elements or characters at most: refused beforehand if
        larger than the analysis follows, and charged as work."""
        if size > MAX_SIZE:
            raise _Limit("a value larger than the analysis follows")
        self.charge(size)

    def sized(self, value: Any) -> Any:
        if isinstance(value, _SIZED) and len(value) > MAX_SIZE:
            raise _Limit("a value larger than the analysis follows")
        return value

    def facts(self, value: Any, depth: int = 0) -> tuple[bool, bool, bool, int]:
        """(holds something unknown, builtin data only, an element or key is itself unknown, a bound on
        the length of its repr()), computed once per container per name and charged by its length."""
        if isinstance(value, _Unknown):
            return True, False, True, len(value.hint)
        if isinstance(value, str):
            return False, True, False, 10 * len(value) + 2  # repr: `\U0001f600` is ten characters
        if isinstance(value, bytes):
            return False, True, False, 4 * len(value) + 3
        if isinstance(value, (bool, type(None))):
            return False, True, False, 5
        if isinstance(value, int):
            return False, True, False, value.bit_length() // 3 + 2
        if isinstance(value, float):
            return False, True, False, 32
        if not isinstance(value, _COLLECTIONS):
            return False, False, False, 256  # a module, an object, a function
        entry = self.memo.get(id(value))
        if entry is not None and entry[0] is value:
            return entry[1]
        if depth > 20:
            return True, False, True, MAX_SIZE + 1  # nested deeper than read: not known to be plain
        self.charge(len(value) + 1)
        unknown, plain, unknown_keys, size = False, True, False, 2
        children: Any = value
        if isinstance(value, dict):
            children = (x for pair in value.items() for x in pair)
            unknown_keys = any(isinstance(k, _Unknown) for k in value)
        else:
            unknown_keys = any(isinstance(k, _Unknown) for k in value)
        for child in children:
            child_unknown, child_plain, _, child_size = self.facts(child, depth + 1)
            unknown = unknown or child_unknown
            plain = plain and child_plain
            size += child_size + 2
        found = (unknown, plain and not unknown, unknown_keys, size)
        self.memo[id(value)] = (value, found)
        return found

    def has_unknown(self, value: Any) -> bool:
        """Whether a value is, or holds, something unknown."""
        return self.facts(value)[0]

    def plain(self, value: Any) -> bool:
        """A value of builtin type only (the interpreter may run builtin methods on it)."""
        return self.facts(value)[1]

    def unknown_keys(self, container: Any) -> bool:
        return self.facts(container)[2]

    def extent(self, value: Any) -> int:
        """What reading a value costs: a string's length, a container's elements (nested ones too)."""
        if isinstance(value, (str, bytes)):
            return len(value)
        return self.facts(value)[3] if isinstance(value, _COLLECTIONS) else 1

    def text(self, value: Any) -> str:
        """How a value reads in a message (`str()`), or an ellipsis where it is not known or too long."""
        if isinstance(value, _Unknown):
            return value.hint
        if isinstance(value, str):
            return value
        if isinstance(value, (_Mod, _Obj)):
            return value.path
        if isinstance(value, int) and value.bit_length() > 10_000:
            return "\u2026"  # more digits than str() converts
        if isinstance(value, _PLAIN):
            return str(value)
        if isinstance(value, _CONTAINERS):
            unknown, _, _, size = self.facts(value)
            if not unknown and size <= MAX_SIZE:
                self.charge(size)
                return repr(value)
        return "\u2026"

    def hint(self, *parts: str) -> _Unknown:
        """An unknown value with a message made of known parts, where that message is not too long."""
        if sum(len(p) for p in parts) > MAX_SIZE:
            return _Unknown()
        return _Unknown("".join(parts))

    # -- modules ----------------------------------------------------------------------------------

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

    # -- calls ------------------------------------------------------------------------------------

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
            message = positional[0] if positional else keywords.get("message", UNKNOWN)
            text = self.text(message)
            if not self.warnings and not self.approximate and not isinstance(message, _Unknown):
                self.exact_warning = text
            self.warnings.append(text)
            return None
        if name == "import_module":
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
        if name in ("getattr", "hasattr"):
            if len(positional) < 2 or not isinstance(positional[1], str):
                return _Unknown()
            owner, attr = positional[0], positional[1]
            if name == "hasattr" or len(positional) > 2:
                return _Unknown()  # whether it exists is the resolver's to say
            if isinstance(owner, (_Mod, _Obj)):
                return _Obj(f"{owner.path}.{attr}")
            return _Unknown()
        if (
            keywords
            or any(self.has_unknown(p) for p in positional)
            or not all(self.plain(p) for p in positional)
        ):
            if name == "isinstance":
                return _Unknown()
            if (
                name in ("set", "list", "tuple", "frozenset", "sorted")
                and len(positional) == 1
                and not keywords
            ):
                value = positional[0]
                if isinstance(value, _COLLECTIONS) and not self.unknown_keys(value):
                    if name != "sorted" or not self.has_unknown(value):
                        self.charge_builtin(name, positional)
                        try:
                            return getattr(builtins, name)(value)
                        except TypeError:  # objects the analysis names but cannot order or hash
                            return _Unknown()
            return _Unknown()
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

    # -- statements -------------------------------------------------------------------------------

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
            if isinstance(stmt.value, ast.Constant):
                return  # a docstring
            if isinstance(stmt.value, ast.Call):
                callee = self.eval(stmt.value.func, scope)
                if not isinstance(callee, (_Function, _Builtin)) and not (
                    isinstance(callee, _Obj) and not isinstance(self.function_of(callee.path), _Obj)
                ):
                    raise _Abort("a call whose effect is unknown")
            self.eval(stmt.value, scope)
            return
        if isinstance(stmt, ast.Raise):
            self.raise_(stmt, scope)
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            self.assign(stmt, scope)
            return
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                if alias.name == "*":
                    raise _Abort("a star import in a function")
                scope.names[alias.asname or alias.name.split(".")[0]] = self.imported(
                    scope.module, stmt, alias
                )
            return
        if isinstance(stmt, ast.FunctionDef):
            if stmt.decorator_list:
                raise _Abort("a decorated function")
            scope.names[stmt.name] = self.make_function(stmt, scope, scope)
            return
        if isinstance(stmt, ast.Try):
            self.try_(stmt, scope)
            return
        if isinstance(stmt, ast.For) and not stmt.orelse:
            self.for_(stmt, scope)
            return
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

    # -- expressions ------------------------------------------------------------------------------

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
        if isinstance(node, ast.Dict):
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
        if isinstance(node, ast.Compare):
            return self.compare(node, scope)
        if isinstance(node, ast.BoolOp):
            last: Any = None
            for operand in node.values:
                last = self.eval(operand, scope)
                if isinstance(last, _Unknown):
                    return _Unknown()
                truth = self.truth(last)
                if (isinstance(node.op, ast.And) and not truth) or (isinstance(node.op, ast.Or) and truth):
                    return last
            return last
        if isinstance(node, ast.Slice):  # `VERSION.split(".")[:2]`: bounds that are ints or None
            bounds = [
                None if part is None else self.eval(part, scope)
                for part in (node.lower, node.upper, node.step)
            ]
            if all(b is None or (isinstance(b, int) and not isinstance(b, bool)) for b in bounds):
                return slice(*bounds)
            return _Unknown()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = self.eval(node.operand, scope)
            if isinstance(operand, (int, float)) and not isinstance(operand, bool):
                return -operand
            return _Unknown()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = self.eval(node.operand, scope)
            return _Unknown() if isinstance(operand, _Unknown) else not self.truth(operand)
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.eval(node.left, scope), self.eval(node.right, scope))
        if isinstance(node, ast.IfExp):
            return self.eval(node.body if self.truth(self.eval(node.test, scope)) else node.orelse, scope)
        if isinstance(node, ast.Lambda):
            return self.make_function(node, scope, scope)
        if isinstance(node, ast.NamedExpr):
            value = self.eval(node.value, scope)
            scope.names[node.target.id] = value
            return value
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


@functools.lru_cache(maxsize=32)
def _module_facts(
    source: str,
) -> tuple[dict[str, list[tuple[ast.stmt, bool]]], set[str], dict[str, list[ast.stmt]], bool, Escapes] | str:
    """A module's bindings, mutated names, changes made in place, whether it star-imports, and the
    depths from which its values may be changed unseen (parsed once per source: every name asked
    reads them). The trees are only read, never changed, by the interpreter."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as error:
        return str(error) or type(error).__name__
    mutations = _module_mutations(tree)
    followed = {id(change) for changes in mutations.values() for change in changes}
    # (the last: escape.Escapes)
    return _bindings(tree), _mutated(tree), mutations, _has_star_import(tree), changed_depths(tree, followed)


def _handling(scope: _Scope) -> _Raised | None:
    current: _Scope | None = scope
    while current is not None:
        if current.handling is not None:
            return current.handling
        current = None  # a bare raise re-raises the exception of its own function's handler only
    return None


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


def _module_statements(tree: ast.Module) -> list[ast.stmt]:
    """Module-level statements, inside `if`/`try`/`with`/`for` too, not inside defs or classes; of an
    `if` whose test is known without running anything (see _static_truths), the branch that runs."""
    truths = _static_truths(tree)
    found: list[ast.stmt] = []
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        stmt = stack.pop()
        found.append(stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.If) and id(stmt) in truths:
            stack.extend(reversed(stmt.body if truths[id(stmt)] else stmt.orelse))
            continue
        nested: list[ast.stmt] = []
        for name in ("body", "orelse", "finalbody"):
            nested.extend(s for s in getattr(stmt, name, ()) or () if isinstance(s, ast.stmt))
        for handler in getattr(stmt, "handlers", ()) or ():
            nested.extend(handler.body)
        stack.extend(reversed(nested))
    return found


def _bindings(tree: ast.Module) -> dict[str, list[tuple[ast.stmt, bool]]]:
    """Module-level statements binding each name (several: bound more than one way), each with whether
    it runs for certain on import (not under an `if`, in a loop or in an exception handler)."""
    bindings: dict[str, list[tuple[ast.stmt, bool]]] = {}
    certain = _certain_statements(tree)
    for stmt in _module_statements(tree):
        names: list[str] = []
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [stmt.name]
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names = [a.asname or a.name.split(".")[0] for a in stmt.names if a.name != "*"]
        elif isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                names.extend(
                    n.id for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                )
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            if isinstance(stmt.target, ast.Name) and (
                not isinstance(stmt, ast.AnnAssign) or stmt.value is not None
            ):
                names = [stmt.target.id]
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            targets = (
                [stmt.target]
                if isinstance(stmt, (ast.For, ast.AsyncFor))
                else [i.optional_vars for i in stmt.items if i.optional_vars]
            )
            for target in targets:
                names.extend(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(stmt, ast.Delete):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        for inner in (
            ast.walk(stmt)
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            else ()
        ):
            if isinstance(inner, ast.NamedExpr):
                names.append(inner.target.id)
        for name in names:
            bindings.setdefault(name, []).append((stmt, id(stmt) in certain))
    return bindings


def _certain_statements(tree: ast.Module) -> set[int]:
    """Ids of the module-level statements that run on every import: the top level, `try` and `with`
    bodies (an exception there fails the import, or binds in a handler: counted as another binding)."""
    truths = _static_truths(tree)
    found: set[int] = set()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        stmt = stack.pop()
        found.add(id(stmt))
        if isinstance(stmt, ast.If) and id(stmt) in truths:
            stack.extend(stmt.body if truths[id(stmt)] else stmt.orelse)  # the branch that runs
        if isinstance(stmt, (ast.Try, ast.With)) or type(stmt).__name__ == "TryStar":
            stack.extend(getattr(stmt, "body", ()))  # `TryStar` (3.11+) is not in 3.10's `ast`
            if isinstance(stmt, ast.Try):
                stack.extend(stmt.finalbody)
    return found


@functools.lru_cache(maxsize=8)
def _static_truths(tree: ast.Module) -> dict[int, bool]:
    """The module-level `if` statements whose test is known without running anything (id -> the
    test's truth): `TYPE_CHECKING` imported from `typing`, or `typing.TYPE_CHECKING` (False at run
    time), and a name bound only by
    the idiom that gives it a default unless something put it into builtins first, `try: NAME` /
    `except NameError: NAME = <constant>` (numpy's `__NUMPY_SETUP__`, which only its own build sets);
    `not` of either. Such an `if` runs one branch on every import."""
    stores: dict[str, int] = {}
    for node in walk_once(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.Global):
            for name in node.names:
                stores[name] = stores.get(name, 0) + 2
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                stores[bound] = stores.get(bound, 0) + 1
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores[node.name] = stores.get(node.name, 0) + 1
    known: dict[str, bool] = {}
    typing_modules: set[str] = set()  # `import typing` (as the one binding of its name)
    statements: list[ast.stmt] = []
    stack: list[ast.stmt] = list(tree.body)
    while stack:  # module-level statements, blocks included, not inside defs or classes
        stmt = stack.pop()
        statements.append(stmt)
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for name in ("body", "orelse", "finalbody"):
                stack.extend(s for s in getattr(stmt, name, ()) or () if isinstance(s, ast.stmt))
            for handler in getattr(stmt, "handlers", ()) or ():
                stack.extend(handler.body)
    for stmt in statements:
        if (
            isinstance(stmt, ast.ImportFrom)
            and stmt.module in ("typing", "typing_extensions")
            and not stmt.level
        ):
            for alias in stmt.names:
                if alias.name == "TYPE_CHECKING" and stores.get(alias.asname or alias.name) == 1:
                    known[alias.asname or alias.name] = False
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                bound = alias.asname or alias.name
                if alias.name in ("typing", "typing_extensions") and stores.get(bound) == 1:
                    typing_modules.add(bound)
        default = _injected_default(stmt)
        if default is not None and stores.get(default[0]) == 1 and not hasattr(builtins, default[0]):
            known[default[0]] = default[1]
    truths: dict[int, bool] = {}
    if not known and not typing_modules:
        return truths
    for stmt in statements:
        if isinstance(stmt, ast.If):
            test, negated = stmt.test, False
            while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, not negated
            if isinstance(test, ast.Name) and test.id in known:
                truths[id(stmt)] = known[test.id] != negated
            elif (
                isinstance(test, ast.Attribute)
                and test.attr == "TYPE_CHECKING"
                and isinstance(test.value, ast.Name)
                and test.value.id in typing_modules
            ):
                truths[id(stmt)] = negated  # `if typing.TYPE_CHECKING:` never runs its body
    return truths


def _injected_default(stmt: ast.stmt) -> tuple[str, bool] | None:
    """`try: NAME` / `except NameError: NAME = <constant>`: the name, and its constant's truth."""
    if not (isinstance(stmt, ast.Try) and len(stmt.body) == 1 and len(stmt.handlers) == 1):
        return None
    if stmt.orelse or stmt.finalbody:
        return None
    probe, handler = stmt.body[0], stmt.handlers[0]
    if not (isinstance(probe, ast.Expr) and isinstance(probe.value, ast.Name)):
        return None
    name = probe.value.id
    if not (isinstance(handler.type, ast.Name) and handler.type.id == "NameError" and len(handler.body) == 1):
        return None
    assign = handler.body[0]
    if not (
        isinstance(assign, ast.Assign)
        and len(assign.targets) == 1
        and isinstance(assign.targets[0], ast.Name)
        and assign.targets[0].id == name
        and isinstance(assign.value, ast.Constant)
    ):
        return None
    return name, bool(assign.value.value)


def _has_star_import(tree: ast.Module) -> bool:
    """A star import that may run (one under `if typing.TYPE_CHECKING:` never does)."""
    return any(
        isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        for node in _module_statements(tree)
    )


def _module_mutations(tree: ast.Module) -> dict[str, list[ast.stmt]]:
    """Names changed in place only by module-level statements that run on every import, each one plain
    change of the name (`T.update(...)`, `T.append(x)`, `T[k] = v`, `del T[k]`): those statements, in
    source order. A name changed anywhere else (in a function, in a loop, through an attribute, or
    declared `global`) is not here: its value is not followed."""
    counts: dict[str, int] = {}
    for inner in ast.walk(tree):
        for name in _changed_names(inner):
            counts[name] = counts.get(name, 0) + 1
    certain = _certain_statements(tree)
    found: dict[str, list[ast.stmt]] = {}
    for stmt in _module_statements(tree):
        if id(stmt) not in certain:
            continue
        changed = _plain_change(stmt)
        if changed is not None:
            found.setdefault(changed, []).append(stmt)
    return {
        name: sorted(changes, key=lambda c: c.lineno)
        for name, changes in found.items()
        if counts.get(name) == len(changes)
    }


def _changed_names(inner: ast.AST) -> list[str]:
    """The names one node changes in place (as _mutated counts them), `global` ones twice."""
    if isinstance(inner, ast.Global):
        return [*inner.names, *inner.names]
    if isinstance(inner, (ast.Subscript, ast.Attribute)) and isinstance(inner.ctx, (ast.Store, ast.Del)):
        return [inner.value.id] if isinstance(inner.value, ast.Name) else []
    if (
        isinstance(inner, ast.Call)
        and isinstance(inner.func, ast.Attribute)
        and isinstance(inner.func.value, ast.Name)
        and inner.func.attr in _MUTATORS
    ):
        return [inner.func.value.id]
    return []


def _plain_change(stmt: ast.stmt) -> str | None:
    """The name a statement changes in place, if that is all it does to it: `T.update(...)` (any of
    _MUTATORS) as a statement, `T[k] = v` or `del T[k]`."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in _MUTATORS:
            return func.value.id
        return None
    if isinstance(stmt, (ast.Assign, ast.Delete)) and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            return target.value.id
    return None


_MUTATORS = frozenset(
    {
        "update",
        "setdefault",
        "pop",
        "popitem",
        "clear",
        "append",
        "extend",
        "insert",
        "remove",
        "add",
        "discard",
        "__setitem__",
        "__delitem__",
        "sort",
        "reverse",
        "difference_update",
        "intersection_update",
    }
)


def _mutated(tree: ast.Module) -> set[str]:
    """Names changed in place anywhere in the module, functions included (`T[k] = v`, `T.update(...)`,
    `del T[k]`, `T.x = ...`), or declared `global` in a function: their first value may not be the one
    the `__getattr__` reads. (A local of the same name in some function counts too: only more unknowns.)"""
    names: set[str] = set()
    for inner in ast.walk(tree):
        if isinstance(inner, ast.Global):
            names.update(inner.names)
        elif isinstance(inner, (ast.Subscript, ast.Attribute)) and isinstance(
            inner.ctx, (ast.Store, ast.Del)
        ):
            if isinstance(inner.value, ast.Name):
                names.add(inner.value.id)
        elif (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and isinstance(inner.func.value, ast.Name)
        ) and inner.func.attr in _MUTATORS:
            names.add(inner.func.value.id)
    return names


class _Pruner(ast.NodeTransformer):
    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.bases, node.keywords, node.body, node.decorator_list = [], [], [ast.Pass()], []
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body = body[1:] or [ast.Pass()]
        node.body = body
        node.returns = None
        for argument in ast.walk(node.args):
            if isinstance(argument, ast.arg):
                argument.annotation = None
        self.generic_visit(node)
        return node


__all__ = [
    "Answer",
    "NotServed",
    "Served",
    "Undecided",
    "defines_getattr",
    "evaluate",
    "getattr_helpers",
    "program_source",
]
