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

The package, by what it evaluates: `values` (the values the interpreter builds and its control-flow
signals), `limits` (the bounds and the state they are charged to), `expressions`, `statements`,
`calls` (functions, builtins and methods of builtin values), `modules` (module loading, globals and
module-level changes), `protocols` (what a module's `__getattr__`, lazy loader and `globals()` or
`__all__` writes are, read from its tree) and `facts` (per-module facts: bindings, static truths,
changes in place). `_Interpreter` joins the parts; this module holds the entry points.
"""

from __future__ import annotations

import ast
import time
from dataclasses import dataclass
from typing import Union

from .calls import _Calls
from .expressions import _Expressions
from .limits import MAX_MODULE_SECONDS, MAX_NAME_SECONDS, _Bounded
from .modules import _Modules
from .protocols import defines_getattr, enum_members, getattr_helpers, namespace_writes, program_source
from .statements import _Statements
from .values import (
    Sources,
    _Abort,
    _Break,
    _Continue,
    _Function,
    _Limit,
    _path_of,
    _Raised,
    _Return,
    _Unknown,
)


class _Interpreter(_Expressions, _Statements, _Calls, _Modules, _Bounded):
    """The evaluator: expressions, statements, calls and module protocols over one bounded state."""


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


__all__ = [
    "Answer",
    "Evaluator",
    "NotServed",
    "Served",
    "Sources",
    "Undecided",
    "defines_getattr",
    "enum_members",
    "evaluate",
    "getattr_helpers",
    "namespace_names",
    "namespace_writes",
    "program_source",
]
