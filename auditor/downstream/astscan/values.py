"""What the collector records and the evaluator reads: scopes, bindings, the values a name can have
(an upstream `Ref`, a downstream class, an instance of one, `super()`), kept methods and candidate
use sites; and the compact form of an expression kept instead of its tree."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Union

from apidrift.auditor.core.bind import CallShape
from apidrift.auditor.core.refs import Ref
from apidrift.auditor.core.sites import Span
from apidrift.auditor.downstream.shared import Forwarding

# A compact expression, all the evaluation needs of one: ("n", name), ("a", base, attribute),
# ("c", function) for a call, ("s",) for `super()`, ("S", class name, instance name) for
# `super(Cls, self)`, ("w", call) for `await call`, ("i", base, protocol) for what a protocol hands
# out of base (`base[k]`: "item"; `next(iter(base))`: "iter"; `next(base)`: "next"; the target of a
# `for` or `with`: "iter", "enter"), ("?", *alternatives) for a value that is one of several
# (`a if t else b`, `a or b`), _NONE for `None`; None for anything else.
_Expr = Union[tuple, None]
_NONE = ("none",)
_SUPER = ("s",)


def _compact(node: ast.AST) -> _Expr:
    # `kind is ast.X` (cheaper than isinstance on this hot path) does not narrow for mypy: the
    # `type: ignore[attr-defined]`s below are those reads.
    kind = type(node)
    if kind is ast.Name:
        return ("n", node.id)  # type: ignore[attr-defined]
    if kind is ast.Attribute:
        return ("a", _compact(node.value), node.attr)  # type: ignore[attr-defined]
    if kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        if type(func) is ast.Name and not node.keywords:  # type: ignore[attr-defined]
            if func.id == "super" and not node.args:  # type: ignore[attr-defined]
                return _SUPER
            if func.id == "super" and len(node.args) == 2:  # type: ignore[attr-defined]
                cls, instance = node.args  # type: ignore[attr-defined]
                if type(cls) is ast.Name and type(instance) is ast.Name:
                    return ("S", cls.id, instance.id)
                return None
            if func.id == "next" and 1 <= len(node.args) <= 2:  # type: ignore[attr-defined]
                return _next_of(node.args[0])  # type: ignore[attr-defined]
        return ("c", _compact(func))
    if kind is ast.Subscript and type(node.slice) is not ast.Slice:  # type: ignore[attr-defined]
        return _item_of(_compact(node.value), "item")  # type: ignore[attr-defined]
    if kind is ast.NamedExpr:
        return _compact(node.value)  # type: ignore[attr-defined]
    if kind is ast.Await:
        inner = _compact(node.value)  # type: ignore[attr-defined]
        return ("w", inner) if inner is not None else None
    if kind is ast.Constant and node.value is None:  # type: ignore[attr-defined]
        return _NONE
    if kind is ast.IfExp:  # `up.Flask(name) if server else None`: one of the two branches
        return ("?", _compact(node.body), _compact(node.orelse))  # type: ignore[attr-defined]
    if kind is ast.BoolOp:  # `server or up.Flask(name)`: one of the operands
        return ("?", *(_compact(value) for value in node.values))  # type: ignore[attr-defined]
    return None


def _item_of(base: _Expr, via: str) -> _Expr:
    return ("i", base, via) if base is not None else None


def _next_of(argument: ast.expr) -> _Expr:
    """`next(iter(x))` is an element of x; `next(x)` what x's `__next__` gives."""
    if (
        isinstance(argument, ast.Call)
        and isinstance(argument.func, ast.Name)
        and argument.func.id == "iter"
        and len(argument.args) == 1
        and not argument.keywords
    ):
        return _item_of(_compact(argument.args[0]), "iter")
    return _item_of(_compact(argument), "next")


def _root_name(expression: _Expr) -> str | None:
    """The name a compact expression's value starts from (`a.b().c[0]`: a)."""
    for _ in range(1000):
        if not isinstance(expression, tuple) or not expression:
            return None
        tag = expression[0]
        if tag == "n":
            return expression[1]
        if tag not in ("a", "c", "i", "w"):
            return None
        expression = expression[1]
    return None


def _attribute_names(expression: _Expr) -> list[str]:
    """The attribute names along a compact expression (`a.b().c` -> c, b)."""
    names: list[str] = []
    while isinstance(expression, tuple) and expression:
        if expression[0] == "a":
            names.append(expression[2])
            expression = expression[1]
        elif expression[0] == "c":
            expression = expression[1]
        else:
            break
    return names


@dataclass
class _SelfOf:
    """An instance of a downstream class: `self` in its methods, or what calling it returns."""

    cls: _ClassScope


@dataclass
class _DownClass:
    """A class defined in the downstream (possibly a subclass of an upstream class)."""

    cls: _ClassScope


@dataclass
class _SuperOf:
    """`super()` in a method of a downstream class."""

    cls: _ClassScope


# Decorators that leave what calling the function returns as its body says (or, for properties, make
# reading the attribute call it).
KEEPING_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "property", "cached_property", "cache", "lru_cache"}
)


@dataclass(eq=False)
class _DownFunction:
    """A function or method the downstream defines: calling it gives what all its `return`s agree on
    (followed within the file, bounded: a cycle or a disagreement is unknown)."""

    scope: _Scope  # its body's scope (for a method, `self` there is an instance of its class)
    returns: list[_Expr] = field(default_factory=list)
    reaches: list[_Reach | None] = field(default_factory=list)  # of each return (see _Reach)
    decorators: frozenset[str] = frozenset()
    generator: bool = False  # it yields: calling it gives a generator
    is_async: bool = False  # calling it gives a coroutine; `await` gives what it returns
    # The callables it is handed to (`up.pass_context(f)`, or `@up.pass_context` as its innermost
    # decorator), with the scope each is written in: what they call it with types its parameters.
    # The slot: "" for the callable's first argument, "@N" for its Nth positional one, "=name" for the
    # keyword `name` (`bus.on("evt", handler)`: "@1"); "()" for a decorator factory's call
    # (`@bus.on("evt")`): the function is handed to what that call returns.
    handed: list[tuple[_Expr, _Scope, str]] = field(default_factory=list)
    # Its parameters as its callers fill them (see _Evaluator.from_callers): its name, the positional
    # parameters in order (`self` or `cls` included), the keyword-only ones, the default of each
    # parameter that has one other than None (None for one the analysis does not follow), and the
    # class it is a method of (None for a plain function).
    name: str = ""
    positional: tuple[str, ...] = ()
    keyword_only: tuple[str, ...] = ()
    defaults: dict[str, _Binding | None] | None = None
    method_of: _ClassScope | None = None

    @property
    def followed(self) -> bool:
        return not self.generator and self.decorators <= KEEPING_DECORATORS

    @property
    def is_property(self) -> bool:
        return bool(self.decorators & {"property", "cached_property"})


@dataclass(frozen=True)
class _Container:
    """A builtin container as the downstream annotates it (`list[up.Row]`, `dict[str, up.Row]`,
    `tuple[up.A, up.B]`): no upstream object itself, but what its protocols hand out is known. `items`
    maps a protocol ("item", "iter", "next", "unpack:N"; see ItemRef) to the value it gives."""

    items: tuple[tuple[str, _Value], ...]

    def element(self, via: str) -> _Value:
        table = dict(self.items)
        if via in table:
            return table[via]
        return table.get("iter") if via.startswith("unpack:") else None


_Value = Union[Ref, _SelfOf, _DownClass, _SuperOf, _DownFunction, _Container, None]
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


class _Reach:
    """The bindings of `name` in `scope` that can reach one point of the code (an expression whose value
    starts from that name): straight-line code and `if`/`else` joins followed exactly; in a loop, every
    binding made before it or in it. The evaluator reads the name there through these only."""

    __slots__ = ("bindings", "name", "scope")

    def __init__(self, scope: _Scope, name: str, bindings: tuple[_Binding, ...]) -> None:
        self.scope = scope
        self.name = name
        self.bindings = bindings


@dataclass(eq=False)
class _Region:
    """A loop, `try` or `with` being visited: the flow state before it, the bindings made in it (per
    name) and the reaches recorded in it (which a loop widens once it is read whole)."""

    before: dict[str, tuple[_Binding, ...]]
    made: dict[str, list[_Binding]] = field(default_factory=dict)
    records: list[_Reach] = field(default_factory=list)


def _merged(*groups: tuple[_Binding, ...] | list[_Binding]) -> tuple[_Binding, ...]:
    """The bindings of several groups, each once, in order."""
    seen: dict[int, _Binding] = {}
    for group in groups:
        for binding in group:
            seen.setdefault(id(binding), binding)
    return tuple(seen.values())


def _joined(states: list[dict[str, tuple[_Binding, ...]]]) -> dict[str, tuple[_Binding, ...]]:
    """The flow state where paths meet: each name reached by the bindings of every path."""
    out: dict[str, tuple[_Binding, ...]] = {}
    for state in states:
        for name, bindings in state.items():
            current = out.get(name)
            out[name] = bindings if current is None or current is bindings else _merged(current, bindings)
    return out


@dataclass(eq=False)
class _Scope:
    parent: _Scope | None
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)
    is_class: bool = False
    inline: bool = False  # a comprehension: it runs where it is written (its enclosing flow holds)
    # Flow: the bindings of each name that reach the point the collector is at, and the loops, `try`
    # and `with` statements it is in (see _Reach)
    flow: dict[str, tuple[_Binding, ...]] = field(default_factory=dict)
    regions: list[_Region] = field(default_factory=list)
    deferred: list[tuple[str, _Binding, bool]] | None = None  # see defer()
    # Names tested with isinstance(): where their annotated type no longer holds, as the line ranges
    # of the code the test narrows (an `if isinstance(x, T):` body, what follows an assert) with the
    # class tested (what x is there, when one class; None for a test the collector cannot place,
    # negated or in an `or`, which makes x unknown from its line on), or None for the whole scope.
    narrowed: dict[str, list[tuple[int, int, _Expr]] | None] = field(default_factory=dict)
    owner: _ClassScope | None = None  # for a method's scope: its class (what `super()` refers to)
    # For the module scope: its star imports in order, the upstream module each reads (None for one the
    # analysis cannot follow: not upstream, relative, nested in a block, or names made by globals()/exec).
    star_modules: list[str | None] | None = None
    type_checking: int = 0  # inside how many `if TYPE_CHECKING:` bodies the collector is, in this scope

    def bind(self, name: str, binding: _Binding, *, maybe: bool = False) -> None:
        """Bind `name` here; `maybe`: a binding that may not happen (`:=` in a condition) joins the
        ones that reach on, instead of replacing them."""
        binding.type_checking = self.type_checking > 0
        self.bindings.setdefault(name, []).append(binding)
        if self.regions:
            self.regions[-1].made.setdefault(name, []).append(binding)
        if self.deferred is not None:
            self.deferred.append((name, binding, maybe))  # the statement's own reads come first
            return
        self._flow(name, binding, maybe)

    def _flow(self, name: str, binding: _Binding, maybe: bool) -> None:
        reaching = self.flow.get(name)
        self.flow[name] = _merged(reaching, (binding,)) if maybe and reaching else (binding,)

    def defer(self) -> bool:
        """The bindings of a statement being visited reach only past it (`o = o.m()` reads the old o).
        False when already deferring (the outer statement settles)."""
        if self.deferred is not None:
            return False
        self.deferred = []
        return True

    def settle(self) -> None:
        deferred, self.deferred = self.deferred, None
        for name, binding, maybe in deferred or ():
            self._flow(name, binding, maybe)

    def open_region(self) -> _Region:
        region = _Region(dict(self.flow))
        self.regions.append(region)
        return region

    def close_region(self, region: _Region, *, loop: bool) -> None:
        """After a loop, `try` or `with`: a name bound in it is reached by its bindings there and the
        ones before it (a loop's body may run any number of times, a `try` or a `with` body stop
        anywhere); in a loop, so is every point of the loop that reads it."""
        popped = self.regions.pop()
        assert popped is region
        before = region.before
        widened = {name: _merged(before.get(name, ()), made) for name, made in region.made.items()}
        self.flow.update(widened)
        if loop:
            for reach in region.records:
                if reach.name in widened:
                    reach.bindings = widened[reach.name]
        if self.regions:
            outer = self.regions[-1]
            for name, made in region.made.items():
                outer.made.setdefault(name, []).extend(made)
            outer.records.extend(region.records)

    def reach(self, name: str) -> _Reach | None:
        """The bindings of `name` here that reach this point (recorded, for a loop to widen)."""
        bindings = self.flow.get(name)
        if not bindings:
            return None
        found = _Reach(self, name, bindings)
        if self.regions:
            self.regions[-1].records.append(found)
        return found


@dataclass(eq=False)
class _ClassScope(_Scope):
    self_attributes: dict[str, list[_Binding]] = field(default_factory=dict)
    bases: tuple[_Expr, ...] = ()  # the bases that are not `object`, `Generic[...]` or `Protocol`
    keywords: bool = False  # `metaclass=...` and other keywords among the bases
    any_keywords: bool = False  # any keyword among the bases, `**extra` included
    decorated: bool = False
    methods: dict[str, _Method] = field(default_factory=dict)


@dataclass(eq=False)
class _Method:
    """What is kept of a method: its decorators, its parameters, where its name is, its forwarding."""

    decorators: frozenset[str]  # last parts of their dotted names ("?" for any other expression)
    args: ast.arguments
    indent: str  # of the block it is defined in
    name_span: Span
    forwarding: Forwarding | None = None  # for `__init__(self, ..., **kwargs)`
    function: _DownFunction | None = None  # what calling it (or, for a property, reading it) gives
    # For an `__init__(self, ..., **kwargs)` without super() call that hands its `**kwargs` to one call:
    # that call's function, whether `__init__` rebinds the name it is read through, and the forwarding.
    wraps: tuple[_Expr, bool, Forwarding] | None = None


@dataclass(eq=False)
class _Binding:
    """How a name got its value: a ready value, an expression to evaluate, or an annotation."""

    scope: _Scope
    value: _Value = None
    expression: _Expr = None
    annotation: ast.expr | None = None
    type_checking: bool = False  # made under `if TYPE_CHECKING:`: never runs
    parameter: bool = False  # an unannotated parameter of a function
    reach: _Reach | None = None  # the bindings of its expression's first name that reach it
    # For an unannotated parameter of a plain method: (its class, the method's name, the parameter's
    # name, its place among the positional parameters after `self`, -1 for a keyword-only one). If the
    # method overrides an upstream one, the upstream's annotation of that parameter tells its value.
    hook_param: tuple[_ClassScope, str, str, int] | None = None
    # For a positional parameter of a plain function (not a method): the function, whose `handed` list
    # says what the callables it is handed to pass there, and the parameter's place.
    first_of: _DownFunction | None = None
    handed_place: int = 0
    # For an unannotated parameter of a downstream function or method (not an override of an upstream
    # one): the function and the parameter's name. Its value is what the function's callers in the file
    # pass there, when they all agree (see _Evaluator.from_callers).
    param_of: tuple[_DownFunction, str] | None = None


class _CallSite:
    """A call that may call a downstream function (its callee a name or an attribute): where it is, and
    each argument as a binding of the caller's scope (None for one the analysis does not follow)."""

    __slots__ = ("args", "func", "keywords", "reach", "scope", "star")

    def __init__(
        self, func: _Expr, scope: _Scope, reach: _Reach | None, args: tuple[_Binding | None, ...],
        keywords: tuple[tuple[str, _Binding | None], ...], star: bool,
    ) -> None:  # fmt: skip
        self.func = func
        self.scope = scope
        self.reach = reach  # the bindings that reach it of the name its callee starts from
        self.args = args
        self.keywords = keywords
        self.star = star  # it unpacks `*args` or `**kwargs`: which parameter gets what is unknown


# What an import candidate names: (module, imported name or None, the span of the code to show).
_Import = tuple[Union[str, None], Union[str, None], Union[Span, None]]


# An introspection test around a use, as the collector sees it: (kind, the tested object's expression,
# the name tested, whether the use runs where the name is there, the scope and line of the test).
_Test = tuple[str, "_Expr", str, bool, "_Scope", int]


class _Candidate:
    """A use site to evaluate once the whole file is read: where it is and what it names."""

    __slots__ = (
        "at",
        "expression",
        "extra",
        "guarded",
        "import_caught",
        "keyword_spans",
        "kind",
        "reach",
        "scope",
        "shape",
        "span",
        "tests",
        "use",
    )

    def __init__(
        self, kind: str, expression: _Expr, scope: _Scope, guarded: bool | frozenset[str], span: Span | None, extra: _Import | None = None,
        shape: CallShape | None = None, keyword_spans: tuple[tuple[str, Span], ...] = (), use: str = "",
        tests: tuple[_Test, ...] = (),
    ) -> None:  # fmt: skip
        self.kind = kind
        self.expression = expression  # calls: the function; attributes: the attribute
        self.scope = scope
        self.guarded = guarded  # True, or the builtin exception classes caught around it (see UseSite)
        self.span = span
        self.extra = extra  # imports: (module, name or None, code span)
        self.shape = shape
        self.keyword_spans = keyword_spans
        self.use = use  # see UseSite.use
        self.reach: _Reach | None = None  # the bindings of its expression's first name that reach it
        self.tests = tests  # the introspection tests around it, read once the file is read
        # see UseSite.import_caught: how many attribute names follow that name (None: not such a use)
        self.import_caught: int | None = None
        self.at: Span | None = None  # see UseSite.at


def _method_owner(scope: _Scope) -> _ClassScope | None:
    current: _Scope | None = scope
    while current is not None:
        if current.owner is not None:
            return current.owner
        current = current.parent
    return None
