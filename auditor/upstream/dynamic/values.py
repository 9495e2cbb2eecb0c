"""The values the evaluator builds (modules, objects, functions, scopes, unknowns) and the signals it
raises (an abort, a bound reached, a raise, `return`, `break`, `continue`), with the tables of the
builtins, methods and operators it models.
"""

from __future__ import annotations

import ast
import builtins
import re
import string
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

# dotted module path -> (its source text, whether it is a package), when it is in the package
Sources = Callable[[str], tuple[str, bool] | None]


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
