"""The evaluator's bounds (steps, depth, sizes, work, wall time) and `_Bounded`, the state every part
of the interpreter shares and charges its work to: a bound reached raises `_Limit`, never read as the
module raising.
"""

from __future__ import annotations

import ast
import time
from typing import TYPE_CHECKING, Any

from .values import (
    _COLLECTIONS,
    _CONTAINERS,
    _DIGIT_RUNS,
    _PLAIN,
    _SIZED,
    Sources,
    _Function,
    _Limit,
    _Mod,
    _Module,
    _Obj,
    _Scope,
    _Unknown,
)

MAX_STEPS = 50_000  # expressions and statements evaluated for one name


MAX_DEPTH = 16  # nested calls


MAX_SIZE = 100_000  # elements of a container, characters of a string


MAX_SOURCE = 2 * 1024 * 1024  # a helper module larger than this is not read


MAX_WORK = 2_000_000  # elements read or built (by loops, builtins, methods, operators) for one name


MAX_NAME_SECONDS = 5.0  # wall time for one name


MAX_MODULE_SECONDS = 30.0  # wall time for all the names asked of one module's `__getattr__`


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


class _Bounded:
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

    if TYPE_CHECKING:  # defined by the other parts of the interpreter

        def assign(self, stmt: ast.Assign | ast.AnnAssign | ast.AugAssign, scope: _Scope) -> None: ...
        def binary(self, op: ast.operator, left: Any, right: Any) -> Any: ...
        def call_value(
            self, callee: Any, positional: list[Any], keywords: dict[str, Any], node: ast.Call
        ) -> Any: ...
        def data(self, value: Any) -> Any: ...
        def eval(self, node: ast.expr, scope: _Scope) -> Any: ...
        def expr_value(self, node: ast.expr, scope: _Scope) -> Any: ...
        def function_of(self, path: str, depth: int = 0) -> Any: ...
        def global_value(self, mod: _Module, name: str) -> Any: ...
        def imported(self, mod: _Module, stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> Any: ...
        def iterate(self, value: Any) -> list[Any]: ...
        def load(self, path: str) -> _Module | None: ...
        def make_function(
            self, node: ast.FunctionDef | ast.Lambda, scope: _Scope, closure: _Scope | None
        ) -> _Function: ...
        def mutable_from(self, value: Any, depth: int, level: int = 0) -> bool: ...
        def name(self, name: str, scope: _Scope) -> Any: ...
        def run(self, body: list[ast.stmt], scope: _Scope) -> None: ...
        def store(self, target: ast.expr, value: Any, scope: _Scope) -> None: ...
        def truth(self, value: Any) -> bool: ...
