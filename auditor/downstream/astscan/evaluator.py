"""What an expression's value is: names, attributes and calls turned into upstream `Ref`s through the
collected bindings, inheritance through downstream classes, and annotations."""

from __future__ import annotations

import ast
import io
import tokenize
from typing import Any, TypeVar

from apidrift.auditor.core.refs import (
    AttrRef,
    CallRef,
    InstanceRef,
    ItemRef,
    ModuleRef,
    OpaqueRef,
    Ref,
    StarRef,
    root_module,
)
from apidrift.auditor.downstream.astscan.nodes import _dotted
from apidrift.auditor.downstream.astscan.pieces import parse_expression_quietly
from apidrift.auditor.downstream.astscan.text import _Text
from apidrift.auditor.downstream.astscan.values import (
    _NONE,
    _Binding,
    _CallSite,
    _ClassScope,
    _compact,
    _Container,
    _DownClass,
    _DownFunction,
    _Expr,
    _method_owner,
    _Reach,
    _Scope,
    _SelfOf,
    _SuperOf,
    _Value,
)
from apidrift.auditor.downstream.shared import REFS, Forwarding, is_builtin

_R = TypeVar("_R", bound=Ref)
_MAX_ALTERNATIVES = 4  # the bindings a name may have and still be read as each of its values (a store)
# How many parameters deep a value is followed through the callers of downstream functions (`f(x)`
# calls `g(x)` calls `h(x)`); beyond it, the parameter is unknown (`receiver-unknown:parameter-depth`).
_MAX_PARAMETER_DEPTH = 6
# How many bindings are evaluated inside one another (`b = b.m()` bound 2,000 times: each binding reads
# every other); beyond it, the value is unknown (`receiver-unknown:value-depth`). About seven Python
# frames a level: well inside the interpreter's recursion limit, wherever the evaluation starts.
_MAX_EVALUATION_DEPTH = 64
_UNSET: Any = object()
# How many bindings of one name in one scope are read (each use reads them all); beyond it, the value
# is unknown (`receiver-unknown:too-many-bindings`): a name bound 2,000 times over itself cost 8 s.
_MAX_BINDINGS = 256
# Decorators that hand a function's callers' arguments to it unchanged.
_PASSING_DECORATORS = frozenset({"staticmethod", "classmethod", "cache", "lru_cache"})


class _Evaluator:
    """Turns expressions into `Ref`s through the collected bindings; memoized, cycle-safe."""

    def __init__(
        self,
        text: _Text,
        bound_anywhere: frozenset[str] = frozenset(),
        stores: set[tuple[int, _Expr, str]] | frozenset[tuple[int, _Expr, str]] = frozenset(),
        escaping: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        self.text = text
        self.stores = stores  # (base, attribute) the file assigns: read back, they are the downstream's
        self.bound_anywhere = bound_anywhere  # every name the file binds, however (for star imports)
        self._active: set[int] = set()
        self._memo: dict[int, _Value] = {}  # binding -> its value: each binding is evaluated once
        self._returned: dict[int, _Value] = {}  # downstream function -> what calling it gives
        # The line of the use being evaluated (where an isinstance() narrowing may hold); None while a
        # binding is evaluated (its value is kept for every use: any narrowing counts there)
        self.position: int | None = None
        # The bindings that reach the expression being evaluated, of the name it starts from (see _Reach);
        # names a `global` or `nonlocal` statement names are read through all their bindings
        self.reach: _Reach | None = None
        self.escaping = escaping
        self._refs: dict[Ref, Ref] = {}
        self._subclasses: dict[int, list[_ClassScope]] = {}  # class -> the file's classes deriving from it
        # The upstream's import names: an override's unannotated parameter takes what the upstream's
        # method declares (see `_handed_over`); empty, it is unknown.
        self.upstream_names: frozenset[str] = frozenset()
        # The file's calls and what is read as a value, as the collector kept them (see from_callers)
        self.calls: dict[str, list[_CallSite]] = {}
        self.skipped_calls: dict[str, list[tuple[str, _Scope]]] = {}
        self.overflowing: set[str] | frozenset[str] = frozenset()
        self.value_names: set[str] | frozenset[str] = frozenset()
        self.value_attributes: set[str] | frozenset[str] = frozenset()
        self.classes: list[tuple[str, _ClassScope]] = []
        self.method_names: dict[str, int] = {}
        self.computed_class_call = False
        self._callers_of: dict[int, tuple[list[tuple[_CallSite, int]], str | None]] = {}
        self._parameter_depth = 0
        self._limited = False  # a value being evaluated met the parameter depth limit (not kept)
        self._depth = 0  # bindings being evaluated inside one another (see _MAX_EVALUATION_DEPTH)
        self._ref_depths: dict[int, int] = {}  # an interned reference's id -> how deep it nests

    def name(self, name: str, scope: _Scope) -> _Value:
        current: _Scope | None = scope
        module = scope
        while current is not None:
            bindings = current.bindings.get(name)
            if bindings:
                reach = self.reach
                if name in self.escaping:  # `global`/`nonlocal`: another scope may rebind it at any call
                    return self._opaque([self._unique(bindings)], "rebound-elsewhere")
                if reach is not None and reach.scope is current and reach.name == name:
                    bindings = list(reach.bindings)  # only those that reach the use
                value = self._unique(bindings)
                if name in current.narrowed and (value is None or isinstance(value, REFS)):
                    regions = current.narrowed[name]
                    line = self.position
                    if regions is None or line is None:
                        # `isinstance(x, Sub)` narrows x: its annotation no longer says what x is
                        return None if isinstance(value, (InstanceRef, ItemRef)) else value
                    holding = [cls for a, b, cls in regions if a <= line <= b]
                    if holding:  # inside the test's reach: an instance of the class tested, if one
                        tested = (
                            self.expression(holding[0], scope) if len(holding) == 1 and holding[0] else None
                        )
                        return InstanceRef(tested) if isinstance(tested, (AttrRef, ModuleRef)) else None
                return value
            module = current
            current = current.parent
        stars = module.star_modules
        if stars and None not in stars and name not in self.bound_anywhere and not is_builtin(name):
            return StarRef(tuple(s for s in stars if s is not None), name)  # only a star import can bind it
        return None

    def _unique(self, bindings: list[_Binding]) -> _Value:
        """The one value all of a name's bindings agree on; else None, or an opaque value where one may be upstream.
        A binding under `if TYPE_CHECKING:` never runs: where the name is also bound otherwise, only
        the bindings that run count (`Base = up.Client` for the checker, `Base = _Wrapper` at run time)."""
        running = [b for b in bindings if not b.type_checking]
        if running and len(running) < len(bindings):
            bindings = running
        if len(bindings) > _MAX_BINDINGS:
            return self._too_far("too-many-bindings")
        # `x = None` then `x = Cls()`: uses of x's attributes mean the instance
        values: list[_Value] = [self.binding(binding) for binding in bindings if binding.expression != _NONE]
        if not values:
            return None
        first = values[0]
        if first is not None and all(value == first for value in values):
            return first
        # Every binding is read, not only those up to the first that differs: `self.server = server`
        # (a parameter) then `self.server = up.Flask(name)` may still be an upstream object.
        if any(b.hook_param is not None for b in bindings):
            # An override's parameter the method rebinds: what the upstream hands it is not followed
            # (read as a plain parameter), the other bindings may still hold an upstream object.
            values = [self.binding(b) for b in bindings if b.hook_param is None and b.expression != _NONE]
        opaque = self._opaque(values, "bindings-disagree")
        if opaque is not None and not opaque.alternatives and 1 < len(bindings) <= _MAX_ALTERNATIVES:
            return self._alternatives(opaque, bindings)
        return opaque

    def _alternatives(self, opaque: OpaqueRef, bindings: list[_Binding]) -> OpaqueRef:
        """The opaque value with each of its few bindings' values, when every one is an upstream
        reference the analysis follows (`ctx = old_ctx` and `ctx = old_ctx.parent`)."""
        values = [self.binding(b) for b in bindings if b.expression != _NONE]
        if not all(isinstance(v, REFS) and not isinstance(v, OpaqueRef) for v in values):
            return opaque
        distinct = tuple(dict.fromkeys(v for v in values if isinstance(v, REFS)))
        return self._ref(OpaqueRef(opaque.why, opaque.root, distinct))

    def _opaque(self, values: list[_Value], why: str) -> OpaqueRef | None:
        """A value that may be an upstream object (one of `values` is one), which one unknown."""
        refs = [v for v in values if isinstance(v, REFS)]
        # An upstream object before a value of the downstream's other modules (followed once linked)
        upstream = next((v for v in refs if root_module(v) in self.upstream_names), refs[0] if refs else None)
        if upstream is None:
            return None
        if isinstance(upstream, OpaqueRef):
            return upstream
        return self._ref(OpaqueRef(why, root_module(upstream)))

    def _too_far(self, why: str) -> OpaqueRef | None:
        """A value beyond a limit of the analysis: it may be an upstream object (its uses are counted
        as `receiver-unknown:<why>`, under the first upstream module: which one is not known)."""
        roots = sorted(self.upstream_names)
        return self._ref(OpaqueRef(why, roots[0])) if roots else None

    def binding(self, binding: _Binding) -> _Value:
        key = id(binding)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return None  # a cycle (`x = x.parent`): unknown
        if self._depth >= _MAX_EVALUATION_DEPTH:
            # too deep to follow: what it holds may be an upstream object (its uses are counted). The
            # values read through it are kept all the same (read again, each would be cut again: a
            # name bound many times over itself would be read a number of times exponential in them)
            return self._too_far("value-depth")
        self._active.add(key)
        position, self.position = self.position, None
        reach, self.reach = self.reach, binding.reach
        limited, self._limited = self._limited, False
        self._depth += 1
        value = _UNSET
        try:
            value = self._evaluate(binding)
        finally:
            self._depth -= 1
            self._active.discard(key)
            self.position = position
            self.reach = reach
            # one cut short by a depth limit is read again from nearer; an exception keeps nothing
            if not self._limited and value is not _UNSET:
                self._memo[key] = value
            self._limited = self._limited or limited
        return value

    def _evaluate(self, binding: _Binding) -> _Value:
        if binding.value is not None:
            return binding.value
        if binding.hook_param is not None:
            handed = self._handed_over(binding.hook_param)
            if handed is not None or binding.param_of is None:
                return handed
        if binding.annotation is not None:
            return self.annotated(binding.annotation, binding.scope)
        if binding.expression is not None:
            return self.expression(binding.expression, binding.scope)
        if binding.first_of is not None and binding.first_of.handed:
            handed = self._handed_first(binding.first_of, binding.handed_place)
            upstream = isinstance(handed, REFS) and root_module(handed) in self.upstream_names
            if binding.param_of is None:
                return handed
            if upstream:  # also called in the file with a value of its own: which one, unknown
                callers = self.from_callers(*binding.param_of)
                return handed if callers is None else self._opaque([handed, callers], "untyped-parameter")
            # else handed to another library (`functools.cache`): its callers tell
        if binding.param_of is not None:
            return self.from_callers(*binding.param_of)
        return None

    # -- parameters, from the calls of the file ------------------------------------------------------

    def from_callers(self, function: _DownFunction, name: str) -> _Value:
        """An unannotated parameter of a downstream function: what every call of it in the file passes
        there (an argument, or the default where a call leaves it out), when all agree: one value, or
        instances of one class (`up.Client()` and a name annotated `up.Client`: an instance of it or of a
        subclass). Where they disagree, where the function escapes (read as a value, decorated, called
        with `*args`/`**kwargs` or through a receiver the analysis cannot follow) or a limit is met, an
        opaque value if one of them is an upstream object (its uses are counted, never checked), else
        unknown. Flow-insensitive across functions, bounded in depth (_MAX_PARAMETER_DEPTH) and calls
        (_MAX_CALLS); calls from other files are not read."""
        if self._parameter_depth >= _MAX_PARAMETER_DEPTH:
            self._limited = True
            return None
        sites, escape = self._callers(function)
        values: list[_Value] = []
        limited, self._limited = self._limited, False
        self._parameter_depth += 1
        try:
            for site, shift in sites:
                argument = _argument_for(function, name, site, shift)
                if argument is None:
                    continue  # none passed: the call raises TypeError
                if not isinstance(argument, _Binding):
                    values.append(None)  # an argument not followed (a literal, an expression)
                elif argument.expression != _NONE:  # None: its attributes are no use of it
                    values.append(self.binding(argument))
        finally:
            self._parameter_depth -= 1
            cut = self._limited
            self._limited = self._limited or limited
        if not values:
            return None
        first = values[0]
        if escape is None and not cut:
            if first is not None and all(value == first for value in values):
                return first
            one = _one_class(values)
            if one is not None:
                return self._ref(one)
        return self._opaque(values, "parameter-depth" if cut else escape or "untyped-parameter")

    def _callers(self, function: _DownFunction) -> tuple[list[tuple[_CallSite, int]], str | None]:
        """The calls of the file that call `function`, each with how many positional parameters the
        call fills before its arguments (1 for `self` of a bound method), and why the function may be
        called otherwise too (None when those calls are all)."""
        key = id(function)
        known = self._callers_of.get(key)
        if known is not None:
            return known
        self._callers_of[key] = ([], "untyped-parameter")  # while being read (a call inside a call)
        found = self._read_callers(function)
        self._callers_of[key] = found
        return found

    def _read_callers(self, function: _DownFunction) -> tuple[list[tuple[_CallSite, int]], str | None]:
        name, cls = function.name, function.method_of
        escape: str | None = None
        if function.decorators - _PASSING_DECORATORS:
            escape = "untyped-parameter"  # a decorator may call it with anything
        constructors: list[_ClassScope] = []
        if cls is None:
            keys = [name]
            if name in self.value_names:
                escape = "untyped-parameter"
        elif name == "__init__":
            constructors = [c for _, c in self.classes if self._init_of(c) is function]
            keys = [n for n, c in self.classes if c in constructors] + ["__init__"]
            if self.computed_class_call or any(
                n in self.value_names or c.decorated or _makes_instances(c)
                for n, c in self.classes
                if c in constructors
            ):
                escape = "untyped-parameter"  # the class handed on, or called as `cls(...)`
        else:
            keys = [name]
            if name.startswith("__") and name.endswith("__"):
                escape = "untyped-parameter"  # called by the object model
            elif name in self.value_attributes or self.method_names.get(name, 0) > 1:
                escape = "untyped-parameter"  # handed on, or another class's method of that name
            elif not self._own_bases(cls):
                escape = "untyped-parameter"  # a base's code may call it
        if any(key in self.overflowing for key in keys):
            escape = "too-many-callers"
        for key in keys:
            for name_read, scope in self.skipped_calls.get(key, ()):
                if not _module_or_builtin(name_read, scope):
                    escape = escape or "untyped-parameter"  # a call set aside may call it after all
        sites: list[tuple[_CallSite, int]] = []
        for key in keys:
            for site in self.calls.get(key, ()):
                callee, shift, unknown = self._callee(site)
                if callee is None and not function.followed and site.func == ("n", name):
                    callee = function  # a decorated function, called by its name: the wrapper's
                    # callers are read (to count its uses: the decorator makes it escape)
                if unknown and cls is not None and name != "__init__":
                    escape = escape or "untyped-parameter"  # `x.name(...)` on a value not followed
                if callee is None:
                    continue
                if isinstance(callee, _DownClass):
                    if callee.cls not in constructors:
                        if name == "__init__" and self._init_of(callee.cls) is _UNKNOWN_INIT:
                            escape = escape or "untyped-parameter"  # its bases are not followed
                        continue
                    shift = 1
                elif callee is not function:
                    continue
                if site.star:
                    escape = escape or "untyped-parameter"
                    continue
                sites.append((site, shift))
        return sites, escape

    def _callee(self, site: _CallSite) -> tuple[_Value, int, bool]:
        """What a call calls, how many positional parameters are filled before its arguments, and
        whether it is a method call on a receiver not followed."""
        expression = site.func
        if expression is None:
            return None, 0, False
        reach, self.reach = self.reach, site.reach
        position, self.position = self.position, None
        try:
            if expression[0] == "a":
                base = self.expression(expression[1], site.scope)
                if base is None or isinstance(base, OpaqueRef):
                    return None, 0, True
                callee = self.attribute(base, expression[2])
                shift = 1 if isinstance(base, (_SelfOf, _SuperOf)) else 0
            else:
                callee = self.expression(expression, site.scope)
                shift = 0
        finally:
            self.reach = reach
            self.position = position
        if isinstance(callee, _DownFunction):
            if "staticmethod" in callee.decorators:
                shift = 0
            elif "classmethod" in callee.decorators:
                shift = 1
        return callee, shift, False

    def _init_of(self, cls: _ClassScope) -> _DownFunction | object | None:
        """The `__init__` that calling a downstream class runs: a downstream one found through single
        bases, None where none of the file's runs (no base, or an upstream base's), _UNKNOWN_INIT where
        the analysis cannot say (several bases, a `__new__`, a decorator or metaclass on the way)."""
        current: _ClassScope = cls
        for _ in range(50):
            if current.decorated or "__new__" in current.methods or current.any_keywords:
                return _UNKNOWN_INIT
            method = current.methods.get("__init__")
            if method is not None:
                return method.function
            if not current.bases:
                return None
            parent = self.single_base(current)
            if parent is not None and not isinstance(parent, _DownClass):
                return None  # an upstream (or other module's) class: its own `__init__`
            if parent is None:
                return _UNKNOWN_INIT
            current = parent.cls
        return _UNKNOWN_INIT

    def _own_bases(self, cls: _ClassScope) -> bool:
        """Whether every class `cls` inherits from is one of the file's (or object): no other code's
        methods call its methods."""
        current: _ClassScope = cls
        for _ in range(50):
            if not current.bases:
                return not current.any_keywords
            parent = self.single_base(current)
            if not isinstance(parent, _DownClass):
                return False
            current = parent.cls
        return False

    def _handed_first(self, function: _DownFunction, place: int = 0) -> _Value:
        """The argument at `place` of a function handed to one upstream callable (every place it is
        handed names the same one, at the same place): what that callable's annotation says it passes
        (`ItemRef` "handed:PLACE", then the slot: "@N", "=name", "()", see _DownFunction.handed)."""
        callees = [(self.expression(callee, scope), slot) for callee, scope, slot in function.handed]
        callee, slot = callees[0]
        if not isinstance(callee, (AttrRef, CallRef)) or any(other != callees[0] for other in callees[1:]):
            return None  # a site on it is kept only where its root is an upstream module
        if isinstance(callee, CallRef) != (slot == "()"):
            return None
        return self._ref(ItemRef(callee, f"handed:{place}{slot}"))

    def expression(self, expression: _Expr, scope: _Scope) -> _Value:
        if expression is None:
            return None
        tag = expression[0]
        if tag == "n":
            return self.name(expression[1], scope)
        if tag == "?":  # one of several values (`a if t else b`, `a or b`); None is no receiver
            values = [self.expression(option, scope) for option in expression[1:] if option != _NONE]
            if values and values[0] is not None and all(value == values[0] for value in values):
                return values[0]
            return self._opaque(values, "bindings-disagree")
        if tag == "a":
            base = self.expression(expression[1], scope)
            if isinstance(base, OpaqueRef):
                return base
            if self.stores and isinstance(base, REFS) and self._stored(expression[1], expression[2], scope):
                return None  # `r.mix_stderr = True` then `r.mix_stderr`: what the downstream stored
            return self.attribute(base, expression[2])
        if tag == "c":
            func = self.expression(expression[1], scope)
            if isinstance(func, OpaqueRef):
                return func
            if isinstance(func, _DownClass):
                return _SelfOf(func.cls)
            if isinstance(func, _DownFunction):
                return None if func.is_async else self.returned(func)
            if func is None or isinstance(func, (_SelfOf, _SuperOf, _Container)):
                return None
            return self._ref(CallRef(func))
        if tag == "w":  # `await f()`: what an `async def` returns (an upstream one's return annotation)
            inner = expression[1]
            if inner is None or inner[0] != "c":
                return None
            func = self.expression(inner[1], scope)
            if isinstance(func, _DownFunction):
                return self.returned(func) if func.is_async else None
            value = self.expression(inner, scope)
            return self._ref(ItemRef(value, "await")) if isinstance(value, CallRef) else None
        if tag == "s":
            owner = _method_owner(scope)
            return _SuperOf(owner) if owner is not None else None
        if tag == "S":  # `super(Cls, self)`: what comes after Cls for an instance of Cls (or below)
            cls = self.name(expression[1], scope)
            instance = self.name(expression[2], scope)
            if isinstance(cls, _DownClass) and isinstance(instance, _SelfOf):
                current: Ref | _DownClass | None = _DownClass(instance.cls)
                for _ in range(50):  # the instance's class must be Cls or a subclass of it
                    if not isinstance(current, _DownClass):
                        break
                    if current.cls is cls.cls:
                        return _SuperOf(cls.cls)
                    current = self.single_base(current.cls)
            return None
        if tag == "i":
            base = self.expression(expression[1], scope)
            if isinstance(base, OpaqueRef):
                return base
            if isinstance(base, _Container):
                return base.element(expression[2])
            if isinstance(base, REFS):
                return self._ref(ItemRef(base, expression[2]))
            return None
        return None

    def _stored(self, base: _Expr, name: str, scope: _Scope) -> bool:
        """Whether the file sets `base.name` in this scope, an enclosing one, or (through `self`) the
        method's class."""
        current: _Scope | None = scope
        while current is not None:
            if (id(current), base, name) in self.stores:
                return True
            current = current.parent
        owner = _method_owner(scope)
        return owner is not None and (id(owner), base, name) in self.stores

    def returned(self, function: _DownFunction) -> _Value:
        """What calling a downstream function gives: the one value all its `return`s agree on (`return`
        and `return None` aside, as `x = None` beside `x = Cls()`); unknown for a generator, a
        decorator that may change the result, a cycle, or returns that disagree."""
        key = id(function)
        if key in self._returned:
            return self._returned[key]
        if key in self._active or not function.followed:
            return None
        self._active.add(key)
        position, self.position = self.position, None  # the returns are read where they are written
        reach = self.reach
        limited, self._limited = self._limited, False
        try:
            value: _Value = None
            seen = False
            for index, returned in enumerate(function.returns):
                if returned == _NONE:
                    continue
                self.reach = function.reaches[index] if index < len(function.reaches) else None
                found = self.expression(returned, function.scope)
                if found is None or isinstance(found, _DownFunction) or (seen and found != value):
                    value = None
                    break
                value, seen = found, True
        finally:
            self._active.discard(key)
            self.position = position
            self.reach = reach
            if not self._limited:
                self._returned[key] = value
            self._limited = self._limited or limited
        return value

    def _ref(self, ref: _R) -> _R:
        """One object per distinct reference (a large file names the same few thousands of times).
        A reference nested deeper than _MAX_EVALUATION_DEPTH (`a.m().m()...` 3,000 times) is opaque
        (`receiver-unknown:value-depth`): hashing and reading it would recurse that deep."""
        inner = getattr(ref, "base", None) or getattr(ref, "func", None) or getattr(ref, "cls", None)
        depth = self._ref_depths.get(id(inner), 0) + 1 if inner is not None else 0
        if depth > _MAX_EVALUATION_DEPTH and isinstance(inner, REFS):
            return self._ref(OpaqueRef("value-depth", root_module(inner)))  # type: ignore[return-value]
        kept = self._refs.setdefault(ref, ref)
        if depth:
            self._ref_depths[id(kept)] = depth
        return kept  # type: ignore[return-value]  # equal refs are of one type

    def attribute(self, base: _Value, name: str) -> _Value:
        if isinstance(base, _SelfOf):
            bindings = base.cls.self_attributes.get(name)
            if bindings:
                # Declared (`rows: list[up.Row]` in the class body, `self.rows: ... = []`): the
                # declaration says what every assignment holds, as a type checker reads it.
                declared = [
                    b for b in (*base.cls.bindings.get(name, ()), *bindings) if b.annotation is not None
                ]
                return self._unique(declared or bindings)
            own = self._class_member(base.cls, name, instance=True)
            again = [sub for sub in self.subclasses(base.cls) if name in sub.bindings]
            if again:
                # `self` may be an instance of a subclass that binds the name again: which value is
                # not known (counted as `receiver-unknown:overridden-in-subclass` where it may be upstream)
                values = [own, *(self._class_member(sub, name, instance=True) for sub in again)]
                return self._opaque(values, "overridden-in-subclass")
            return own
        if isinstance(base, _DownClass):
            return self._class_member(base.cls, name, instance=False)
        if isinstance(base, _SuperOf):
            parent = self.single_base(base.cls)
            if isinstance(parent, _DownClass):
                return self._class_member(parent.cls, name, instance=True)
            return AttrRef(InstanceRef(parent), name) if parent is not None else None
        if base is None or isinstance(base, (_DownFunction, _Container)):
            return None
        return self._ref(AttrRef(base, name))

    def _class_member(self, cls: _ClassScope, name: str, *, instance: bool) -> _Value:
        """A member of a downstream class: its own, else inherited from its one upstream base. A method
        is the function (calling it gives what it returns); a property read on an instance, its result."""
        own = cls.bindings.get(name)
        if own:
            if name not in cls.methods:
                value = self._unique(own)
                if instance and isinstance(value, CallRef):
                    # read on an instance, an object the class body built is itself, or what its
                    # `__get__` gives where its class is a descriptor (decided by the check)
                    return self._ref(ItemRef(value, "get"))
                return value
            function = cls.methods[name].function
            if len(own) > 1 or function is None or not function.followed:
                return None
            if function.is_property:
                return self.returned(function) if instance else None
            return function
        if name in cls.self_attributes:
            return None
        parent = self.single_base(cls)
        if isinstance(parent, _DownClass):
            return self._class_member(parent.cls, name, instance=instance)
        if parent is None:
            return None
        return AttrRef(InstanceRef(parent) if instance else parent, name)

    def subclasses(self, cls: _ClassScope) -> list[_ClassScope]:
        """The classes of the file's module level that derive from `cls` (through one base each)."""
        found = self._subclasses.get(id(cls))
        if found is not None:
            return found
        found = []
        module = cls.parent
        while module is not None and module.parent is not None:
            module = module.parent
        for bindings in module.bindings.values() if module is not None else ():
            for binding in bindings:
                other = binding.value
                if not isinstance(other, _DownClass) or other.cls is cls:
                    continue
                current: _ClassScope | None = other.cls
                for _ in range(50):  # a chain of single bases up to `cls`
                    parent = self.single_base(current) if current is not None else None
                    current = parent.cls if isinstance(parent, _DownClass) else None
                    if current is None or current is cls:
                        break
                if current is cls:
                    found.append(other.cls)
        self._subclasses[id(cls)] = found
        return found

    def single_base(self, cls: _ClassScope) -> Ref | _DownClass | None:
        """The one base a downstream class has (besides object and typing helpers), when it has one."""
        assert cls.parent is not None
        if len(cls.bases) != 1 or cls.keywords:
            return None
        reach, self.reach = self.reach, None
        try:
            value = self.expression(cls.bases[0], cls.parent)
        finally:
            self.reach = reach
        return value if isinstance(value, (AttrRef, ModuleRef, _DownClass)) else None

    def _handed_over(self, hook: tuple[_ClassScope, str, str, int]) -> _Value:
        """An unannotated parameter of a method that overrides an upstream one: what the upstream's
        method declares it takes there (resolved from its annotation at check time), else unknown."""
        cls, method, name, place = hook
        base = self.upstream_base(cls, self.upstream_names) if self.upstream_names else None
        if base is None:
            return None
        return self._ref(ItemRef(AttrRef(InstanceRef(base), method), f"param:{name}:{place}"))

    def upstream_base(self, cls: _ClassScope, upstream_names: frozenset[str]) -> Ref | None:
        parent = self.single_base(cls)
        if isinstance(parent, _DownClass):
            return self.upstream_base(parent.cls, upstream_names) if parent.cls is not cls else None
        if parent is not None and root_module(parent) in upstream_names:
            return parent
        return None

    def inherited_constructor(
        self, cls: _ClassScope, upstream_names: frozenset[str]
    ) -> tuple[Ref, Forwarding | None] | None:
        """The upstream class whose constructor `cls(...)` runs: no class on the way defines one, except
        one `__init__(self, ..., **kwargs)` that hands its extra keywords on to `super().__init__`."""
        current: _ClassScope | None = cls
        forwarding: Forwarding | None = None
        for _ in range(50):
            if current is None:
                return None
            if current.decorated or "__new__" in current.methods:
                return None
            init = current.methods.get("__init__")
            if init is not None:
                if forwarding is not None:
                    return None  # forwarding through forwarding: not followed
                forwarding = init.forwarding
                if forwarding is None:
                    return None
            parent = self.single_base(current)
            if isinstance(parent, _DownClass):
                current = parent.cls
                continue
            if parent is None or root_module(parent) not in upstream_names:
                return None
            return parent, forwarding
        return None

    def wrapped_constructor(
        self, cls: _ClassScope, upstream_names: frozenset[str]
    ) -> tuple[Ref, Forwarding] | None:
        """A downstream class of its own (no base but object) whose `__init__(self, ..., **kwargs)` hands
        its extra keywords, unchanged, to one upstream callable (`self._client = up.Client(**kwargs)`):
        calling the class makes that call."""
        if cls.parent is None or cls.decorated or "__new__" in cls.methods:
            return None
        if cls.bases or cls.any_keywords:
            return None
        init = cls.methods.get("__init__")
        if init is None or init.wraps is None:
            return None
        func, rebound, forwarding = init.wraps
        callee = self.expression(func, cls.parent)
        if not isinstance(callee, (AttrRef, ModuleRef)) or root_module(callee) not in upstream_names:
            return None
        if rebound:
            return None  # the name the callee is read through is rebound in `__init__`: not the module's
        return callee, forwarding

    def annotated(self, node: ast.expr, scope: _Scope, text: _Text | None = None, depth: int = 0) -> _Value:
        """The value an annotation declares: an instance of the class it names, or a builtin container
        whose elements are declared (`list[up.Row]`, `Sequence[up.Row]`, `dict[str, up.Row]`,
        `tuple[up.A, up.B]`, `Iterator[up.Row]`; through `Optional`, `Annotated`, `ClassVar`, `Final`
        and string annotations)."""
        if depth > 8:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if not _single_string((text or self.text).segment(node)) or node.value[:1].isspace():
                return None
            try:
                parsed = parse_expression_quietly(node.value).body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            return self.annotated(parsed, scope, _Text(node.value), depth + 1)
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            head = _typing_name(node.value)
            members = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
            if head in _WRAPPERS and members:
                return self.annotated(members[0], scope, text, depth + 1)
            if head in ("Optional", "Union"):
                kept = [m for m in members if not (isinstance(m, ast.Constant) and m.value is None)]
                if len(kept) == 1:
                    return self.annotated(kept[0], scope, text, depth + 1)
            elif head is not None and head in _CONTAINERS:
                return self._container(head, members, scope, text, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            sides = [
                s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)
            ]
            if len(sides) == 1:
                return self.annotated(sides[0], scope, text, depth + 1)
        cls = self.annotation(node, scope, text)
        if isinstance(cls, OpaqueRef):
            return cls
        if isinstance(cls, _DownClass):
            return _SelfOf(cls.cls)  # an instance of a downstream class (or of a subclass)
        return self._ref(InstanceRef(cls)) if cls is not None else None

    def _container(
        self, head: str, members: list[ast.expr], scope: _Scope, text: _Text | None, depth: int
    ) -> _Value:
        kind = _CONTAINERS[head]
        items: list[tuple[str, _Value]]
        if kind == "tuple" and len(members) == 2:
            last = members[1]
            if isinstance(last, ast.Constant) and last.value is Ellipsis:  # `tuple[C, ...]`
                kind, members = "sequence", members[:1]
        if kind == "tuple":
            places = [self.annotated(m, scope, text, depth + 1) for m in members]
            items = [(f"unpack:{i}", v) for i, v in enumerate(places)]
            if places and all(p == places[0] for p in places):
                items += [("item", places[0]), ("iter", places[0])]
        elif kind == "mapping":
            if len(members) != 2:
                return None
            key = self.annotated(members[0], scope, text, depth + 1)
            value = self.annotated(members[1], scope, text, depth + 1)
            items = [("item", value), ("iter", key)]
        else:
            if len(members) < 1 or (kind != "iterator" and len(members) != 1):
                return None
            element = self.annotated(members[0], scope, text, depth + 1)
            items = [("iter", element)]
            if kind == "sequence":
                items.append(("item", element))
            elif kind == "iterator":
                items.append(("next", element))
        kept = tuple((via, v) for via, v in items if v is not None)
        return _Container(kept) if kept else None

    def _union(self, members: list[Ref | _DownClass | None]) -> OpaqueRef | None:
        """`Union[up.A, up.B]`, `up.A | up.B`: one of several classes, at least one the upstream's."""
        return self._opaque([m for m in members if not isinstance(m, _DownClass)], "union-annotation")

    def annotation(self, node: ast.expr, scope: _Scope, text: _Text | None = None) -> Ref | _DownClass | None:
        """The class an annotation names: `C`, `mod.C`, `"C"`, `Optional[C]`, `C | None`."""
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, str) or not _single_string((text or self.text).segment(node)):
                return None
            if node.value[:1].isspace():
                return None  # not an expression on its own
            try:
                parsed = parse_expression_quietly(node.value).body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            return self.annotation(parsed, scope, _Text(node.value))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            sides = [
                s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)
            ]
            if len(sides) == 1:
                return self.annotation(sides[0], scope, text)
            return self._union([self.annotation(side, scope, text) for side in sides])
        if isinstance(node, ast.Subscript):
            head = _dotted(node.value)
            if head in ("Optional", "typing.Optional", "t.Optional") and not isinstance(
                node.slice, (ast.Tuple, ast.Slice)
            ):
                return self.annotation(node.slice, scope, text)
            if head in ("Union", "typing.Union", "t.Union"):
                members = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                kept = [m for m in members if not (isinstance(m, ast.Constant) and m.value is None)]
                if len(kept) == 1:
                    return self.annotation(kept[0], scope, text)
                return self._union([self.annotation(m, scope, text) for m in kept])
            if isinstance(node.value, (ast.Name, ast.Attribute)):  # a generic class: `up.Table[Row]`
                value = self.expression(_compact(node.value), scope)
                return value if isinstance(value, (ModuleRef, AttrRef)) else None
            return None
        if isinstance(node, (ast.Name, ast.Attribute)):
            value = self.expression(_compact(node), scope)
            return value if isinstance(value, (ModuleRef, AttrRef, _DownClass)) else None
        return None


# Builtin and typing containers an annotation may declare the elements of, by their last name:
# "sequence" (subscription and iteration give the element), "collection" (iteration only), "mapping"
# (`[k]` gives the value, iteration the key), "iterator" (iteration and `next()`; a Generator's first
# argument), "tuple" (`tuple[A, ...]`, or a place each).
_CONTAINERS = {
    **dict.fromkeys(("list", "List", "Sequence", "MutableSequence", "deque", "Deque"), "sequence"),
    **dict.fromkeys(
        ("set", "Set", "frozenset", "FrozenSet", "AbstractSet", "MutableSet", "Iterable", "Collection"),
        "collection",
    ),
    **dict.fromkeys(
        ("dict", "Dict", "Mapping", "MutableMapping", "defaultdict", "DefaultDict", "OrderedDict"),
        "mapping",
    ),
    **dict.fromkeys(("Iterator", "Generator"), "iterator"),
    **dict.fromkeys(("tuple", "Tuple"), "tuple"),
}
_WRAPPERS = frozenset({"Annotated", "ClassVar", "Final", "Required", "NotRequired", "ReadOnly"})
# The modules that spell them (`typing.List`, `t.Sequence`, `collections.abc.Iterator`).
_TYPING_MODULES = frozenset(
    {"typing", "t", "typing_extensions", "collections", "collections.abc", "abc", "builtins"}
)


_UNKNOWN_INIT = object()


def _module_or_builtin(name: str, scope: _Scope) -> bool:
    """Whether `name`, read in `scope`, is bound only to modules (imports), or not at all (a builtin)."""
    current: _Scope | None = scope
    while current is not None:
        bindings = current.bindings.get(name)
        if bindings:
            return all(isinstance(b.value, ModuleRef) for b in bindings)
        current = current.parent
    return True


def _argument_for(
    function: _DownFunction, name: str, site: _CallSite, shift: int
) -> _Binding | object | None:
    """What a call passes to the parameter `name`: the binding of its argument (or of the default it
    leaves in place), _UNFOLLOWED for an argument the analysis does not follow, None where it passes
    nothing to read (a default of None, or no default: a call that raises TypeError)."""
    if name in function.positional:
        place = function.positional.index(name) - shift
        if 0 <= place < len(site.args):
            argument = site.args[place]
            return argument if argument is not None else _UNFOLLOWED
    for keyword, argument in site.keywords:
        if keyword == name:
            return argument if argument is not None else _UNFOLLOWED
    defaults = function.defaults
    if defaults is None or name not in defaults:
        return None  # none, or None: no value to read
    default = defaults[name]
    return default if default is not None else _UNFOLLOWED


_UNFOLLOWED = object()


def _one_class(values: list[_Value]) -> InstanceRef | None:
    """`up.Client()` beside a name annotated `up.Client`: an instance of that class (or of a subclass:
    not exact). None unless every value is an instance made or declared of one class."""
    classes: set[Ref] = set()
    for value in values:
        if isinstance(value, CallRef) and isinstance(value.func, (AttrRef, ModuleRef)):
            classes.add(value.func)
        elif isinstance(value, InstanceRef):
            classes.add(value.cls)
        else:
            return None
    return InstanceRef(classes.pop()) if len(classes) == 1 else None


def _makes_instances(cls: _ClassScope) -> bool:
    """Whether the class has a classmethod (which may construct `cls(...)`)."""
    return any("classmethod" in method.decorators for method in cls.methods.values())


def _typing_name(node: ast.expr) -> str | None:
    """The name a subscripted annotation's head spells, when it is a builtin or typing one."""
    dotted = _dotted(node)
    if dotted is None:
        return None
    module, _, name = dotted.rpartition(".")
    if module and module not in _TYPING_MODULES:
        return None
    return name


def _single_string(literal: str) -> bool:
    """Whether the text of a string constant is one literal (`"a" "b"` is two, joined)."""
    if len(literal) < 2 or literal[-1] not in "'\"":
        return False
    try:
        tokens = [
            t for t in tokenize.generate_tokens(io.StringIO(literal).readline) if t.type == tokenize.STRING
        ]
    except (tokenize.TokenError, SyntaxError):
        return False
    return len(tokens) == 1
