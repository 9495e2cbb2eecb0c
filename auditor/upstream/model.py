"""apidrift's own model of an upstream API: modules, classes, functions, attributes and aliases.

Plain frozen values that serialize themselves (`as_dict` / `member_from_dict`), so that the parsed-API
cache and the rules never see griffe objects. Names inside are canonical dotted paths where the loader
could resolve them, else the source text prefixed with `?`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from apidrift.auditor.core.signature import Signature

MODEL_VERSION = 76  # part of every cache key: bump when the model or the loader's output changes
BUDGET_MESSAGE = "took longer than the load budget"  # how a module's failure over its load budget starts


@dataclass(frozen=True)
class Decorator:
    path: str  # canonical path of the decorator (of the callee when it is a call)
    called: bool = False  # `@dec(...)` rather than `@dec`
    keywords: dict[str, str] = field(default_factory=dict)  # keyword -> source text, for calls
    args: tuple[str, ...] = ()  # positional arguments of a call: canonical paths (`?text` otherwise)
    literals: tuple[str, ...] = ()  # every positional argument of a call, as source text, in order

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "called": self.called,
            "keywords": self.keywords,
            "args": list(self.args),
            "literals": list(self.literals),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Decorator:
        return cls(
            data["path"],
            data["called"],
            dict(data["keywords"]),
            tuple(data["args"]),
            tuple(data.get("literals", ())),
        )


@dataclass(frozen=True)
class FieldSpec:
    """One annotated name in a class body, in source order: a dataclass-like field candidate."""

    name: str
    annotation: str  # source text
    annotation_path: str | None  # canonical path of the annotation's head (`dataclasses.InitVar`, `int`, ...)
    has_value: bool  # `name: T = value`
    value: str | None  # source text of the value
    call_path: str | None  # canonical path of the callee when the value is a call (`dataclasses.field`)
    call_keywords: dict[str, str] = field(default_factory=dict)
    call_positional: int = 0  # positional arguments of that call (`Field(...)`: first is the default)
    lineno: int | None = None
    annotation_expanded: str | None = None  # with the module's type aliases written out (analyses/aliases.py)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "annotation": self.annotation,
            "annotation_expanded": self.annotation_expanded,
            "annotation_path": self.annotation_path,
            "has_value": self.has_value,
            "value": self.value,
            "call_path": self.call_path,
            "call_keywords": self.call_keywords,
            "call_positional": self.call_positional,
            "lineno": self.lineno,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FieldSpec:
        return cls(**{**data, "call_keywords": dict(data["call_keywords"])})


@dataclass(frozen=True)
class Forwarding:
    """A function's `**kwargs` handed unchanged to one call (proved by the loader from its body)."""

    target: str  # canonical path of the callee
    positional: int  # positional arguments the call passes (besides `*args`)
    keywords: tuple[str, ...]  # keywords the call names itself
    star_args: bool  # the call passes `*args` too
    consumed: tuple[str, ...]  # keywords taken out of the mapping first (`kwargs.pop("legacy", None)`)
    on_self: bool  # the callee is a method of the same class (`self.method(**kwargs)`)
    # `super().method(**kwargs)`: target is the calling class's path + the method name; the method that
    # runs is the next class's after it in the instance's MRO
    via_super: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "positional": self.positional,
            "keywords": list(self.keywords),
            "star_args": self.star_args,
            "consumed": list(self.consumed),
            "on_self": self.on_self,
            "via_super": self.via_super,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Forwarding:
        return cls(
            data["target"],
            data["positional"],
            tuple(data["keywords"]),
            data["star_args"],
            tuple(data.get("consumed", ())),
            bool(data.get("on_self", False)),
            bool(data.get("via_super", False)),
        )


@dataclass(frozen=True)
class GuardTest:
    """`param is not compared` (or `param is compared`) inside a raising guard."""

    param: str  # a parameter of the function the call binds
    compared: str  # canonical path of the object it is compared with, or "None"
    default_is_compared: bool  # the parameter's default is that very expression (unpassed, it is it)
    is_not: bool = True  # `is not`; False for `is`

    def as_list(self) -> list[Any]:
        return [self.param, self.compared, self.default_is_compared, self.is_not]


@dataclass(frozen=True)
class RaisingGuard:
    """`if p is not X and q is not Y: raise Error("...")`, reached by every call of the function before
    anything could return (in its body, or in a helper of the same module it hands the parameters to
    unchanged): the call raises when every test holds."""

    tests: tuple[GuardTest, ...]
    exception: str  # canonical path of the raised class
    message: str | None  # its first argument, when a string literal
    where: str  # the function whose body raises, and its line: "pkg.mod._helper:1305"

    def as_dict(self) -> dict[str, Any]:
        return {
            "tests": [t.as_list() for t in self.tests],
            "exception": self.exception,
            "message": self.message,
            "where": self.where,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RaisingGuard:
        return cls(
            tuple(GuardTest(t[0], t[1], bool(t[2]), bool(t[3])) for t in data["tests"]),
            data["exception"],
            data["message"],
            data["where"],
        )


@dataclass(frozen=True)
class AlwaysRaises:
    """A `raise` every call of the function reaches (see analyses/raises.py), and/or the helper its body
    calls first, which raises in its place where that helper always raises."""

    exception: str | None  # canonical path of the raised class (None: only a helper may raise)
    message: str | None  # its first argument's text; an f-string's parameter fields as `{name}`
    where: str  # the function whose body raises, and the line: "pkg.mod.func:12"
    fields: tuple[str, ...] = ()  # the parameters whose `{name}` the message holds
    through: str | None = None  # canonical path of the helper called before the raise
    arguments: tuple[tuple[str, str], ...] = ()  # the helper call's literal arguments (position or name)
    # the builtin exception class the raised one derives from (found when a call is checked, not stored)
    builtin: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "exception": self.exception,
            "message": self.message,
            "where": self.where,
            "fields": list(self.fields),
            "through": self.through,
            "arguments": [list(a) for a in self.arguments],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AlwaysRaises:
        return cls(
            data["exception"],
            data["message"],
            data["where"],
            tuple(data["fields"]),
            data["through"],
            tuple((a[0], a[1]) for a in data["arguments"]),
        )


@dataclass(frozen=True)
class FunctionInfo:
    name: str
    signature: Signature
    decorators: tuple[Decorator, ...] = ()
    overloads: tuple[Signature, ...] = ()
    returns_path: str | None = None  # canonical path of the return annotation's class, when plain
    # what a container the annotation names hands out: (("item" | "iter" | "next", class path), ...)
    returns_items: tuple[tuple[str, str], ...] = ()
    is_async: bool = False  # `async def`: calling it gives a coroutine; awaiting that, what it returns
    # Unannotated, it returns what the same method of the next class in its class's MRO returns
    # (`return super().encode(...)`)
    returns_super: bool = False
    # The type arguments of a generic class the return annotation names (`-> Page[Item]`: the path of
    # each argument's class, "" where it names none), for the methods of what it returns (`T`).
    returns_args: tuple[str, ...] = ()
    # The class each parameter's annotation names when it is plain (`ctx: Context`, `Optional[Context]`):
    # (parameter name, class path) pairs; what the upstream hands an override of the method.
    param_paths: tuple[tuple[str, str], ...] = ()
    identity: bool = False  # as a decorator, hands back what it is given: changes no signature
    factory_identity: bool = False  # `@it(...)` returns such a decorator (typed `-> Callable[[F], F]`)
    dataclass_transform: dict[str, str] | None = None  # PEP 681 marker with its keyword arguments
    lineno: int | None = None
    deprecated: str | None = None  # the deprecation message (PEP 702, warnings.warn, docstring)
    # Each overload's own deprecation (`@deprecated` on one `@overload`), aligned with `overloads`:
    # a call is deprecated when every overload that binds it is.
    overload_deprecations: tuple[str | None, ...] = ()
    forwards: Forwarding | None = None  # `**kwargs` handed unchanged to one call
    # Declared by a stub: a typing view of the call, stricter than the runtime may be (compiled code,
    # deprecated parameters the stub leaves out).
    typing_view: bool = False
    # For a typing view with Python source beside the stub: the source's signature (the runtime's).
    runtime_signature: Signature | None = None
    # The source's `def` has a decorator that may change runtime_signature: it shows what the source
    # spells, so a call it accepts is not certainly rejected, but a call it rejects is not certainly so.
    runtime_decorated: bool = False
    # For a `__new__` read from source: which class it constructs, as a decision list
    # `((("is"|"is not", class path), ...), result)` (see auditor/upstream/factory_new.py).
    constructs: tuple[tuple[tuple[tuple[str, str], ...], str], ...] | None = None
    # identity / factory_identity hold only if this callable keeps the function too: `mod.func`, or
    # `mod.Cls:method` for a method of an instance (the function handed to it as its first argument)
    keeps_through: str | None = None
    factory_keeps_through: str | None = None
    # and what the decorator does to it on the way: "positional-by-name" (positional arguments are
    # passed by the names of the function's parameters in order, keyword-only ones included)
    keeps_effect: str | None = None
    factory_keeps_effect: str | None = None
    # and whether the function it hands back warns when given more positional arguments than a
    # threshold (see analyses/decorators/shims.py `_shim_warning`): {"threshold": "positional" | "index",
    # "argument": decorator parameter naming f's parameter, "position": its place, or "literal": that
    # name written in the decorator, "warn": the warning
    # call's name, "category": the warning class}
    keeps_warning: dict[str, str] | None = None
    factory_keeps_warning: dict[str, str] | None = None
    # As a decorator factory `@deco(since, name)`: the registry (a module-level dict's canonical path)
    # its wrapper is stored in, keyed to what re-applies the same decorator.
    registers_in: str | None = None
    # As a decorator factory `@copy(method)`: hands the function back decorated by the callables it
    # names (each called with `method`), then by what `registry` holds for `method` and each function
    # down its `__wrapped__` chain: {"registry": path, "initial": [paths]}.
    reapplies: dict[str, Any] | None = None
    # The containers its code (nested functions included) stores keys into, as canonical paths (local
    # names as `?name`), besides a `registers_in` store of its own wrapper; None when not read (methods).
    stores: tuple[str, ...] | None = None
    # sets attributes of an argument it is given (`setattr(cls, name, ...)`, `cls.name = ...`): as a
    # class decorator, it leaves the class's attribute list incomplete
    adds_attributes: bool = False
    # and the names it can add, as patterns over literals and its own arguments (analyses/mappings.py
    # `added_names`), None when not readable
    added_names: tuple[Any, ...] | None = None
    # a parameter whose mapping is handed positionally to one call that certainly runs:
    # {param: {"target": path, "index": argument position, "consumed": [...], "on_self", "via_super"}}
    hands_mapping: dict[str, Any] | None = None
    # a method that rejects a key of a mapping parameter unless `getattr(self, prefix + key + suffix)`
    # is callable: {"param", "index", "prefix", "suffix", "exempt"}
    checks_keys: dict[str, Any] | None = None
    # a descriptor `__get__` whose every return is `self.fget(...)`: a `property` subclass that has it
    # gives the getter's result, as `property` does
    returns_fget: bool = False
    # An `__init__(self, fget, ...)` that stores its first argument as `self.fget` (a descriptor class
    # built around the function it decorates).
    stores_fget: bool = False
    # A class's `__getattr__(self, name)` of a plain shape (see analyses/class_getattr.py): {"returns":
    # "item" (it hands back `self.__getitem__(name)`) or the canonical path of the class it builds,
    # "refuses": the guards that raise for some names}
    getattr_serves: dict[str, Any] | None = None
    # A function whose one `return` builds an instance of this class (canonical path): `__getitem__`
    item_constructs: str | None = None
    # Every return builds a fresh object by calling the one name `returns_path` reads (no annotation,
    # no `None`): the call's result is an instance of exactly that class, where its constructor makes it
    returns_exact: bool = False
    # guards that raise on which arguments are passed (see RaisingGuard)
    raises_when: tuple[RaisingGuard, ...] = ()
    # every call raises (or hands over first to a helper that may always raise)
    always_raises: AlwaysRaises | None = None
    # The function builds a base class with a metaclass (`with_metaclass(meta, *bases)`, six's and
    # SQLAlchemy 1.x's shape): a class deriving from its call derives from `bases`, made by `meta`.
    makes_metaclass_base: bool = False
    kind: str = field(default="function", init=False)

    def has_decorator(self, *paths: str) -> bool:
        return any(d.path in paths for d in self.decorators)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "signature": self.signature.as_dict(),
            "decorators": [d.as_dict() for d in self.decorators],
            "overloads": [s.as_dict() for s in self.overloads],
            "overload_deprecations": list(self.overload_deprecations),
            "returns_path": self.returns_path,
            "returns_items": [list(p) for p in self.returns_items],
            "is_async": self.is_async,
            "returns_super": self.returns_super,
            "returns_args": list(self.returns_args),
            "param_paths": [list(pair) for pair in self.param_paths],
            "identity": self.identity,
            "factory_identity": self.factory_identity,
            "dataclass_transform": self.dataclass_transform,
            "lineno": self.lineno,
            "deprecated": self.deprecated,
            "forwards": self.forwards.as_dict() if self.forwards is not None else None,
            "typing_view": self.typing_view,
            "runtime_decorated": self.runtime_decorated,
            "runtime_signature": self.runtime_signature.as_dict()
            if self.runtime_signature is not None
            else None,
            "constructs": [[[list(c) for c in conds], result] for conds, result in self.constructs]
            if self.constructs is not None
            else None,
            "keeps_through": self.keeps_through,
            "factory_keeps_through": self.factory_keeps_through,
            "keeps_effect": self.keeps_effect,
            "factory_keeps_effect": self.factory_keeps_effect,
            "keeps_warning": self.keeps_warning,
            "factory_keeps_warning": self.factory_keeps_warning,
            "registers_in": self.registers_in,
            "reapplies": self.reapplies,
            "stores": list(self.stores) if self.stores is not None else None,
            "adds_attributes": self.adds_attributes,
            "added_names": list(self.added_names) if self.added_names is not None else None,
            "hands_mapping": self.hands_mapping,
            "checks_keys": self.checks_keys,
            "returns_fget": self.returns_fget,
            "stores_fget": self.stores_fget,
            "getattr_serves": self.getattr_serves,
            "item_constructs": self.item_constructs,
            "returns_exact": self.returns_exact,
            "raises_when": [g.as_dict() for g in self.raises_when],
            "always_raises": self.always_raises.as_dict() if self.always_raises is not None else None,
            "makes_metaclass_base": self.makes_metaclass_base,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FunctionInfo:
        return cls(
            name=data["name"],
            signature=Signature.from_dict(data["signature"]),
            decorators=tuple(Decorator.from_dict(d) for d in data["decorators"]),
            overloads=tuple(Signature.from_dict(s) for s in data["overloads"]),
            overload_deprecations=tuple(data.get("overload_deprecations", ())),
            returns_path=data["returns_path"],
            returns_items=tuple((p[0], p[1]) for p in data.get("returns_items", ())),
            is_async=bool(data.get("is_async", False)),
            returns_super=bool(data.get("returns_super", False)),
            returns_args=tuple(data.get("returns_args", ())),
            param_paths=tuple((n, p) for n, p in data.get("param_paths", ())),
            identity=data["identity"],
            factory_identity=data["factory_identity"],
            dataclass_transform=data["dataclass_transform"],
            lineno=data["lineno"],
            deprecated=data["deprecated"],
            forwards=Forwarding.from_dict(data["forwards"]) if data["forwards"] else None,
            typing_view=data.get("typing_view", False),
            runtime_decorated=data.get("runtime_decorated", False),
            runtime_signature=Signature.from_dict(data["runtime_signature"])
            if data.get("runtime_signature")
            else None,
            constructs=tuple(
                (tuple((op, path) for op, path in conds), result) for conds, result in data["constructs"]
            )
            if data.get("constructs") is not None
            else None,
            keeps_through=data.get("keeps_through"),
            factory_keeps_through=data.get("factory_keeps_through"),
            keeps_effect=data.get("keeps_effect"),
            factory_keeps_effect=data.get("factory_keeps_effect"),
            keeps_warning=data.get("keeps_warning"),
            factory_keeps_warning=data.get("factory_keeps_warning"),
            registers_in=data.get("registers_in"),
            reapplies=data.get("reapplies"),
            stores=tuple(data["stores"]) if data.get("stores") is not None else None,
            adds_attributes=data.get("adds_attributes", False),
            added_names=tuple(data["added_names"]) if data.get("added_names") is not None else None,
            hands_mapping=data.get("hands_mapping"),
            checks_keys=data.get("checks_keys"),
            returns_fget=data.get("returns_fget", False),
            stores_fget=data.get("stores_fget", False),
            getattr_serves=data.get("getattr_serves"),
            item_constructs=data.get("item_constructs"),
            returns_exact=data.get("returns_exact", False),
            raises_when=tuple(RaisingGuard.from_dict(g) for g in data.get("raises_when", ())),
            makes_metaclass_base=data.get("makes_metaclass_base", False),
            always_raises=AlwaysRaises.from_dict(data["always_raises"])
            if data.get("always_raises")
            else None,
        )


@dataclass(frozen=True)
class AttributeInfo:
    name: str
    annotation: str | None = None
    annotation_path: str | None = None  # canonical path of the annotated class, when plain or Optional
    value: str | None = None
    lineno: int | None = None
    deprecated: str | None = None  # for properties built from a deprecated getter
    value_path: str | None = None  # `x = other.name`: the canonical path the value names
    value_call: str | None = None  # `x = Cls(...)`: the canonical path of the callee
    # what a container the annotation names hands out (see FunctionInfo.returns_items)
    items: tuple[tuple[str, str], ...] = ()
    # A `property` without a setter (griffe's labels: a property, neither writable nor cached): an
    # instance's `x.name = value` raises AttributeError ("property ... has no setter").
    read_only: bool = False
    # An unannotated property whose getter's every return calls this one name (canonical path; `?`
    # first when not resolved): `return ContainerCollection(client=self)`, a fresh object of it each read.
    constructs: str | None = None
    kind: str = field(default="attribute", init=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            **({"read_only": True} if self.read_only else {}),
            **({"constructs": self.constructs} if self.constructs else {}),
            "annotation": self.annotation,
            "annotation_path": self.annotation_path,
            "items": [list(p) for p in self.items],
            "value": self.value,
            "lineno": self.lineno,
            "deprecated": self.deprecated,
            "value_path": self.value_path,
            "value_call": self.value_call,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AttributeInfo:
        return cls(
            data["name"],
            data["annotation"],
            data["annotation_path"],
            data["value"],
            data["lineno"],
            data["deprecated"],
            data["value_path"],
            data["value_call"],
            tuple((p[0], p[1]) for p in data.get("items", ())),
            bool(data.get("read_only", False)),
            data.get("constructs"),
        )


@dataclass(frozen=True)
class AliasInfo:
    """A name bound by an import: `from a.b import c as d` gives `d -> a.b.c`."""

    name: str
    target: str
    lineno: int | None = None
    kind: str = field(default="alias", init=False)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "target": self.target, "lineno": self.lineno}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AliasInfo:
        return cls(data["name"], data["target"], data["lineno"])


@dataclass(frozen=True)
class ClassInfo:
    name: str
    path: str
    bases: tuple[str, ...] = ()  # canonical paths; `?text` where the expression could not be named
    metaclass: str | None = None
    class_keywords: dict[str, str] = field(default_factory=dict)  # other `class C(..., kw=...)` keywords
    decorators: tuple[Decorator, ...] = ()
    members: dict[str, Member] = field(default_factory=dict)
    fields: tuple[FieldSpec, ...] = ()
    instance_attributes: frozenset[str] = frozenset()  # `self.x = ...` anywhere in the class's methods
    dynamic_attributes: bool = False  # setattr(self, ...), self.__dict__ updates: attributes unknowable
    lineno: int | None = None
    deprecated: str | None = None
    rebound: frozenset[str] = frozenset()  # members defined more than once (per branch): not certain
    typing_view: bool = False  # declared by a stub
    # Completeness of the member list: names the body (or the module's code, `Cls.x = ...`) binds in
    # ways griffe does not record; and, when the namespace may hold names no one can list, why
    # (a Reason code: `dynamic-binding` for locals()/vars()/setattr(Cls, expr, ...)).
    bound_names: frozenset[str] = frozenset()
    open_namespace: str | None = None
    # For a class declared by a stub: the decorators of the class the Python source beside it defines
    # (a stub leaves them out): they may add members the stub does not list (`@define_aliases`).
    source_decorators: tuple[Decorator, ...] = ()
    # and the names that source class binds (body, `self.x = ...`, `Cls.x = ...`) the stub does not declare
    source_only: frozenset[str] = frozenset()
    # The class's own calls of its methods, `self.render(name, value, attrs, renderer)`: method ->
    # ({"caller", "positional", "keywords", "star_args", "star_kwargs", "lineno"}, ...), a few each.
    self_calls: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    # For each method the class body defines: the names its body reads, calls or stores on `self` (or
    # `super()`), or None where the instance may reach code not read (handed on, returned, a wrapping
    # decorator): what running the method may run of the instance's other methods.
    self_uses: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    # The class's type parameters, in order (`class Page(Generic[T])`): what `T` in a method's
    # annotations stands for on an instance whose type arguments are known (`Page[Item]`).
    type_params: tuple[str, ...] = ()
    # Its methods' calls on an object of another class it holds, typed by an annotation
    # (`self.widget.render(name, value, attrs=attrs, renderer=r)` with `widget: Widget`): each as a
    # self call's dict plus "on" (the held class's canonical path) and "method".
    held_calls: tuple[dict[str, Any], ...] = ()
    # A base written as a call (`class Unicode(util.with_metaclass(VisitableType, TypeEngine))`): the
    # callee's canonical path and its positional arguments' paths; read where the callee proves what
    # the call makes (FunctionInfo.makes_metaclass_base).
    base_call: tuple[str, tuple[str, ...]] | None = None
    # Its methods' calls, with keywords, of a method on a value they do not type (`widget.render(
    # name=n, value=v, attrs=a, renderer=r)`): each as a held call's dict without "on".
    untyped_calls: tuple[dict[str, Any], ...] = ()
    kind: str = field(default="class", init=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "path": self.path,
            "bases": list(self.bases),
            "metaclass": self.metaclass,
            "class_keywords": self.class_keywords,
            "decorators": [d.as_dict() for d in self.decorators],
            "members": {name: m.as_dict() for name, m in self.members.items()},
            "fields": [f.as_dict() for f in self.fields],
            "instance_attributes": sorted(self.instance_attributes),
            "dynamic_attributes": self.dynamic_attributes,
            "lineno": self.lineno,
            "deprecated": self.deprecated,
            "rebound": sorted(self.rebound),
            "typing_view": self.typing_view,
            "bound_names": sorted(self.bound_names),
            "open_namespace": self.open_namespace,
            "source_decorators": [d.as_dict() for d in self.source_decorators],
            "source_only": sorted(self.source_only),
            "self_calls": {name: list(calls) for name, calls in self.self_calls.items()},
            "self_uses": {
                name: None if uses is None else list(uses) for name, uses in self.self_uses.items()
            },
            "type_params": list(self.type_params),
            "held_calls": list(self.held_calls),
            "base_call": [self.base_call[0], list(self.base_call[1])] if self.base_call else None,
            "untyped_calls": list(self.untyped_calls),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClassInfo:
        return cls(
            name=data["name"],
            path=data["path"],
            bases=tuple(data["bases"]),
            metaclass=data["metaclass"],
            class_keywords=dict(data["class_keywords"]),
            decorators=tuple(Decorator.from_dict(d) for d in data["decorators"]),
            members={name: member_from_dict(m) for name, m in data["members"].items()},
            fields=tuple(FieldSpec.from_dict(f) for f in data["fields"]),
            instance_attributes=frozenset(data["instance_attributes"]),
            dynamic_attributes=data["dynamic_attributes"],
            lineno=data["lineno"],
            deprecated=data["deprecated"],
            rebound=frozenset(data["rebound"]),
            typing_view=data.get("typing_view", False),
            bound_names=frozenset(data.get("bound_names", ())),
            open_namespace=data.get("open_namespace"),
            source_decorators=tuple(Decorator.from_dict(d) for d in data.get("source_decorators", ())),
            source_only=frozenset(data.get("source_only", ())),
            self_calls={name: tuple(calls) for name, calls in data["self_calls"].items()},
            self_uses={
                name: None if uses is None else tuple(uses)
                for name, uses in data.get("self_uses", {}).items()
            },
            type_params=tuple(data.get("type_params", ())),
            held_calls=tuple(data.get("held_calls", ())),
            base_call=(data["base_call"][0], tuple(data["base_call"][1])) if data.get("base_call") else None,
            untyped_calls=tuple(data.get("untyped_calls", ())),
        )


@dataclass(frozen=True)
class ModuleInfo:
    path: str  # dotted module path
    filepath: str  # relative to the source root
    is_package: bool = False
    is_stub: bool = False
    members: dict[str, Member] = field(default_factory=dict)
    exports: tuple[str, ...] | None = None  # `__all__`, when written as a literal
    star_imports: tuple[str, ...] = ()  # modules star-imported at top level
    bound_names: frozenset[str] = frozenset()  # every name the module binds at top level, however
    rebound: frozenset[str] = frozenset()  # names defined more than once (per branch): not certain
    dynamic_namespace: bool = False  # globals()/sys.modules games, or a module `__getattr__` not read
    open_namespace: str | None = None  # why the member list may be incomplete (a Reason code), if known
    # The module-level statements a module `__getattr__` needs (as source, class bodies dropped), for the
    # static evaluator (`dynamic.py`): which names it serves, which it provably does not.
    getattr_source: str | None = None
    # A module whose only open door is names bound through `globals()` in ways the evaluator reads (a
    # loop over a table, `globals().update(...)`: `dynamic.namespace_writes`): its statements as source
    # (class bodies dropped), and the members of its Enum classes. Where the evaluator reads them, the
    # namespace is complete; where it does not, it is open (`dynamic_namespace` stays set).
    namespace_source: str | None = None
    enum_members: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The module's code installs modules the files do not show: `sys.modules[name] = ...`, an importer
    # on `sys.meta_path` (six's `six.moves`): a submodule without a file may still import.
    installs_modules: bool = False
    # A package whose `__path__` other folders join (`pkgutil.extend_path`, `declare_namespace`, a
    # `__path__` change): like a namespace package, other distributions may add modules to it.
    shares_path: bool = False
    # Its top level raises on import: a `try` importing other distributions' modules whose `except
    # ImportError:` raises, or a `raise` of its own: {"imports": [top-level names], "exception",
    # "message", "line"} (see analyses/needs.py).
    import_fails: dict[str, Any] | None = None
    # modules of its own package it imports unconditionally at top level (their failure is its own)
    own_imports: tuple[str, ...] = ()
    # other modules it registers in `sys.modules` under other names: (alias, target) pairs, each
    # `alias` (and what lies under it) importing `target` (see analyses/aliases.py)
    module_aliases: tuple[tuple[str, str], ...] = ()
    # Methods its functions call by name on objects they are handed (`getattr(obj, "hook")(...)`,
    # `if hasattr(obj, "hook"): obj.hook(...)`), implicit hooks: see analyses/hooks.py. "on" holds the
    # annotation's canonical path, "cls" the calling class's path.
    hook_calls: tuple[dict[str, Any], ...] = ()
    # pluggy hook specifications and markers (see analyses/hookspecs.py): {"markers", "specs",
    # "impl_prefixes", "spec_prefixes"}, names a decorator, project or message is given as resolved to
    # canonical paths ("decorator_path", "project_path", "warn_path"); None when the module has none.
    hookspecs: dict[str, Any] | None = None
    # Names bound in both branches of `try: from .compiled import x except ImportError: from .python
    # import x` (analyses/namespace.py `_import_twins`): name -> (the try branch's source, the fallback's)
    twins: dict[str, tuple[str, str]] = field(default_factory=dict)
    kind: str = field(default="module", init=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "path": self.path,
            "filepath": self.filepath,
            "is_package": self.is_package,
            "is_stub": self.is_stub,
            "members": {name: m.as_dict() for name, m in self.members.items()},
            "exports": list(self.exports) if self.exports is not None else None,
            "star_imports": list(self.star_imports),
            "bound_names": sorted(self.bound_names),
            "rebound": sorted(self.rebound),
            "dynamic_namespace": self.dynamic_namespace,
            "open_namespace": self.open_namespace,
            "getattr_source": self.getattr_source,
            "namespace_source": self.namespace_source,
            "enum_members": {name: list(members) for name, members in self.enum_members.items()},
            "installs_modules": self.installs_modules,
            "shares_path": self.shares_path,
            "import_fails": self.import_fails,
            "own_imports": list(self.own_imports),
            "module_aliases": [list(pair) for pair in self.module_aliases],
            "hook_calls": list(self.hook_calls),
            **({"hookspecs": self.hookspecs} if self.hookspecs else {}),
            "twins": {name: list(pair) for name, pair in self.twins.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModuleInfo:
        return cls(
            path=data["path"],
            filepath=data["filepath"],
            is_package=data["is_package"],
            is_stub=data["is_stub"],
            members={name: member_from_dict(m) for name, m in data["members"].items()},
            exports=tuple(data["exports"]) if data["exports"] is not None else None,
            star_imports=tuple(data["star_imports"]),
            bound_names=frozenset(data["bound_names"]),
            rebound=frozenset(data["rebound"]),
            dynamic_namespace=data["dynamic_namespace"],
            open_namespace=data.get("open_namespace"),
            getattr_source=data["getattr_source"],
            namespace_source=data.get("namespace_source"),
            enum_members={name: tuple(members) for name, members in data.get("enum_members", {}).items()},
            installs_modules=data.get("installs_modules", False),
            shares_path=data.get("shares_path", False),
            import_fails=data.get("import_fails"),
            own_imports=tuple(data.get("own_imports", ())),
            module_aliases=tuple((a, t) for a, t in data.get("module_aliases", ())),
            hook_calls=tuple(data.get("hook_calls", ())),
            hookspecs=data.get("hookspecs"),
            twins={name: (pair[0], pair[1]) for name, pair in data.get("twins", {}).items()},
        )


Member = Union[ClassInfo, FunctionInfo, AttributeInfo, AliasInfo]

_DECODERS = {
    "class": ClassInfo.from_dict,
    "function": FunctionInfo.from_dict,
    "attribute": AttributeInfo.from_dict,
    "alias": AliasInfo.from_dict,
}


def member_from_dict(data: dict[str, Any]) -> Member:
    return _DECODERS[data["kind"]](data)  # type: ignore[return-value]  # each decoder returns the member kind it is keyed by
