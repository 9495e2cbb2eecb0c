"""Evaluate a downstream reference (`Ref`) against one upstream `ApiIndex`: a value, a certain miss, or unknown.

Follows re-exports and aliases, submodules, star imports, class bases (C3 MRO) and instance types
(constructor calls, annotations, return annotations). Every answer is three-valued: `Missing` only
when the miss is certain; anything the analysis cannot see through is `Unknown(reason)`
(the reasons are in `auditor.core.reasons`).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Union

from apidrift.auditor.core.reasons import Reason, Unknown
from apidrift.auditor.core.refs import (
    AttrRef,
    CallRef,
    InstanceRef,
    ItemRef,
    ModuleRef,
    OpaqueRef,
    Ref,
    StarRef,
)
from apidrift.auditor.core.signature import Parameter, ParamKind
from apidrift.auditor.upstream import dynamic
from apidrift.auditor.upstream.analyses.class_getattr import refused
from apidrift.auditor.upstream.analyses.mappings import expand_names
from apidrift.auditor.upstream.api_index import ApiIndex
from apidrift.auditor.upstream.class_decorators import MEMBER_KEEPING_CLASS_DECORATORS
from apidrift.auditor.upstream.factory_new import UNKNOWN, evaluate
from apidrift.auditor.upstream.model import (
    BUDGET_MESSAGE,
    AliasInfo,
    AttributeInfo,
    ClassInfo,
    Decorator,
    FunctionInfo,
    Member,
    ModuleInfo,
)

# Bases that add nothing a downstream call or attribute could depend on.
TRANSPARENT_BASES = frozenset(
    {
        "builtins.object",
        "typing.Generic",
        "typing_extensions.Generic",
        "abc.ABC",
        "typing.Protocol",
        "typing_extensions.Protocol",
    }
)


# A first pass's answer that depends on what it does not ask (`Resolver._module_attribute`): never
# returned by a full reading.
_UNDECIDED = Unknown(Reason.MODULE_GETATTR)

# Metaclasses whose `__call__` is type's own.
PLAIN_METACLASSES = frozenset({"builtins.type", "abc.ABCMeta"})
# Enum classes: class-level access finds the members the body defines and this API, nothing else.
ENUM_BASES = frozenset({"enum.Enum", "enum.Flag"})
ENUM_CLASS_API = frozenset(
    {
        "name",
        "value",
        "_name_",
        "_value_",
        "_missing_",
        "_generate_next_value_",
        "_member_names_",
        "_member_map_",
        "_value2member_map_",
        "_ignore_",
        "_order_",
        "_numeric_repr_",
        "_boundary_",
        "_iter_member_",
        "mro",
    }
)


@dataclass(frozen=True)
class ModuleValue:
    info: ModuleInfo


@dataclass(frozen=True)
class ClassValue:
    info: ClassInfo


@dataclass(frozen=True)
class FunctionValue:
    info: FunctionInfo
    path: str
    via: str | None = None  # "class" or "instance" when reached through one (binds self/cls)


@dataclass(frozen=True)
class InstanceValue:
    cls: ClassInfo
    exact: bool  # built by a constructor call here; False when known from an annotation
    # The type arguments when known (`-> Page[Item]`: ("pkg.Item",)), for the class's type parameters
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttributeValue:
    info: AttributeInfo
    path: str
    on_instance: bool = False


@dataclass(frozen=True)
class ExternalValue:
    """A name that exists, but lives outside the upstream (an import of typing, torch, ...)."""

    path: str


_IMPORT_SYSTEM_DUNDERS = frozenset(
    {"__name__", "__file__", "__spec__", "__loader__", "__package__", "__path__", "__doc__", "__cached__",
     "__builtins__", "__dict__", "__annotations__"}
)  # fmt: skip


@dataclass(frozen=True)
class ServedValue:
    """A name a module `__getattr__` serves, where what it hands back is not an object of the upstream
    the analysis can follow (`markupsafe.Markup`, a literal, the result of a helper)."""

    path: str  # the name as served: `flask.Markup`
    target: str | None = None  # what it hands back, as a dotted path, when it names one
    deprecated: str | None = None  # the warning the `__getattr__` issues on the way


@dataclass(frozen=True)
class Missing:
    owner: str  # dotted path of the module or class searched
    name: str
    owner_kind: str  # "module", "class" or "instance"
    # For instances: built by a constructor call here (exact), or only typed by an annotation, where a
    # subclass instance could carry the attribute.
    exact: bool = True
    message: str | None = None  # what the module's `__getattr__` raises for the name, when it says


@dataclass(frozen=True)
class BuiltinInstanceValue:
    """An instance of a builtin value type (`-> bytes`, `x: str`), known from an annotation: its
    members are those of the builtin type as the interpreter apidrift runs under has them (a subclass
    instance is possible: a miss is certain only as a removal, when the old value's type had it)."""

    path: str  # "builtins.str"


Value = Union[
    ModuleValue,
    ClassValue,
    FunctionValue,
    InstanceValue,
    AttributeValue,
    ExternalValue,
    ServedValue,
    BuiltinInstanceValue,
]
Resolution = Union[Value, Missing, Unknown]


def reason_of(code: str) -> Reason:
    """The reason a model records by its code (`open_namespace`). The same as `Reason(code)`, Enum's
    lookup by value, which a type checker reads as a call of the members' `__new__(code, text)`."""
    reason = _REASONS_BY_CODE.get(code)
    if reason is None:
        raise ValueError(f"{code!r} is not a valid Reason")
    return reason


_REASONS_BY_CODE = {reason.code: reason for reason in Reason}


def value_path(value: Value) -> str:
    if isinstance(value, ModuleValue):
        return value.info.path
    if isinstance(value, ClassValue):
        return value.info.path
    if isinstance(value, InstanceValue):
        return value.cls.path
    return value.path


class Resolver:
    """Resolves references for one upstream version; memoizes per reference."""

    def __init__(self, index: ApiIndex) -> None:
        self.index = index
        self._active: set[str] = set()
        self._memo: dict[Ref, Resolution] = {}
        self._mro: dict[str, list[ClassInfo | str] | None] = {}
        self._base_calls: dict[str, ClassInfo] = {}  # classes whose base is a with_metaclass() call, as made
        self._served: dict[tuple[str, str], dynamic.Answer] = {}
        # (decorator path, its literal arguments) -> the names it adds to the class (None: unknown)
        self._added: dict[tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]], set[str] | None] = {}
        self._sources: dict[str, tuple[str, bool] | None] = {}  # helper modules the evaluator reads
        self._evaluator: dynamic.Evaluator | None = None
        self._computed: dict[
            str, frozenset[str] | dynamic.Undecided
        ] = {}  # module -> names bound via globals()

    # -- references -------------------------------------------------------------------------------

    def resolve(self, ref: Ref) -> Resolution:
        if ref not in self._memo:
            try:
                self._memo[ref] = self._resolve(ref)
            except RecursionError:  # a chain of thousands of aliases or classes: unknown, never a crash
                self._memo[ref] = Unknown(Reason.TOO_DEEP)
        return self._memo[ref]

    def _resolve(self, ref: Ref) -> Resolution:
        if isinstance(ref, ModuleRef):
            if not self.index.owns(ref.path):
                return Unknown(Reason.NOT_UPSTREAM)
            if self.index.is_compiled(ref.path):
                return Unknown(Reason.COMPILED_MODULE)
            info = self.index.module(ref.path)
            if info is not None:
                return ModuleValue(info)
            parent, _, name = ref.path.rpartition(".")
            if not parent:
                return Missing(ref.path, ref.path, "module")
            parent_value = self.resolve(ModuleRef(parent))
            if not isinstance(parent_value, ModuleValue):
                return parent_value if isinstance(parent_value, Unknown) else Unknown(Reason.PARENT_MISSING)
            if self._installs_modules(ref.path):
                return Unknown(Reason.INSTALLED_MODULE)  # an importer or `sys.modules` store may provide it
            if parent_value.info.shares_path or not parent_value.info.filepath.endswith((".py", ".pyi")):
                # A namespace package (PEP 420): other distributions add their modules to it
                # (`google.cloud.storage` beside `google.cloud.bigquery`).
                return Unknown(Reason.NAMESPACE_PACKAGE)
            return Missing(parent, name, "module")
        if isinstance(ref, AttrRef):
            base = self.resolve(ref.base)
            if isinstance(base, Missing):
                return Unknown(Reason.PARENT_MISSING)  # reported once, at the parent
            if isinstance(base, Unknown):
                return base
            return self.attribute(base, ref.name)
        if isinstance(ref, CallRef):
            func = self.resolve(ref.func)
            if isinstance(func, Unknown) and func.reason is Reason.UNTYPED_PARAMETER:
                return func  # no use of the upstream at all
            if isinstance(func, (Missing, Unknown)):
                return Unknown(Reason.CALLEE_UNRESOLVED)
            return self.call_result(func, self._receiver(ref))
        if isinstance(ref, StarRef):
            return self._star_name(ref)
        if isinstance(ref, ItemRef):
            return self._item(ref)
        if isinstance(ref, OpaqueRef):
            return Unknown(Reason.RECEIVER_UNKNOWN, ref.why)
        if isinstance(ref, InstanceRef):
            cls = self.resolve(ref.cls)
            if isinstance(cls, ClassValue):
                return InstanceValue(cls.info, exact=False)
            if isinstance(cls, ExternalValue):
                return Unknown(Reason.EXTERNAL_CLASS)
            return Unknown(Reason.ANNOTATION_NOT_A_CLASS)
        raise TypeError(ref)

    def _item(self, ref: ItemRef) -> Resolution:
        """What a protocol hands out of a value: from the container annotation of what produced it
        (`-> list[Row]`, `rows: dict[str, Row]`), else from the protocol method of its class
        (`__getitem__`, `__iter__` then `__next__`, `__next__`, `__enter__`) and that method's return
        annotation. An element is typed by an annotation: a subclass instance is possible (not exact)."""
        if ref.via == "get":
            # a class attribute of the downstream's read on an instance (`plot = CachedAccessor(...)`
            # in a class body): the object itself, unless its class is a descriptor, whose `__get__`
            # answers the read instead (what it gives is not followed)
            base = self.resolve(ref.base)
            if isinstance(base, InstanceValue):
                mro = self.mro(base.cls)
                if mro is None or any(
                    (entry != "builtins.object") if isinstance(entry, str) else "__get__" in entry.members
                    for entry in mro
                ):
                    return Unknown(Reason.ITEM_UNKNOWN, "get")
            return base
        if ref.via.startswith("param:"):
            return self._handed_over(ref)
        if ref.via.startswith("handed:"):
            place, slot = _HANDED_VIA.match(ref.via).groups()  # type: ignore[union-attr]  # made by the scanner
            return self._handed_first(ref.base, slot, int(place))
        produced: tuple[tuple[str, str], ...] | None = None
        if isinstance(ref.base, CallRef):
            func = self.resolve(ref.base.func)
            if isinstance(func, Unknown) and func.reason is Reason.UNTYPED_PARAMETER:
                return func
            if isinstance(func, (Missing, Unknown)):
                return Unknown(Reason.CALLEE_UNRESOLVED)
            receiver = self._receiver(ref.base)
            if ref.via == "await":  # `await f()`: what an `async def` returns
                if not (isinstance(func, FunctionValue) and func.info.is_async):
                    return Unknown(Reason.ITEM_UNKNOWN, "await")
                return self.call_result(replace(func, info=replace(func.info, is_async=False)), receiver)
            if isinstance(func, FunctionValue) and not func.info.is_async:
                produced = tuple((k, self._substituted(p, receiver)) for k, p in func.info.returns_items)
        elif ref.via == "await":
            return Unknown(Reason.ITEM_UNKNOWN, "await")
        base = self.resolve(ref.base)
        if isinstance(base, Missing):
            return Unknown(Reason.PARENT_MISSING)
        if isinstance(base, AttributeValue) and produced is None:
            produced = base.info.items
        unpacking = ref.via.startswith("unpack:")
        if produced:
            table = dict(produced)
            path = table.get(ref.via) or (table.get("iter") if unpacking else None)
            if path is None:
                return Unknown(Reason.ITEM_UNKNOWN, "unpack" if unpacking else ref.via)
            return self._instance_of(path)
        if isinstance(base, Unknown):
            if base.reason is not Reason.UNKNOWN_RETURN:
                return base
            return Unknown(Reason.ITEM_UNKNOWN, "unpack" if unpacking else ref.via)
        if isinstance(base, AttributeValue):
            cls = self._annotated_class(base.info)
            if cls is not None:
                base = InstanceValue(cls, exact=False)
        if not isinstance(base, InstanceValue):
            return Unknown(Reason.ITEM_UNKNOWN, "unpack" if unpacking else ref.via)
        return self._protocol_result(base, "iter" if unpacking else ref.via)

    def _handed_over(self, ref: ItemRef) -> Resolution:
        """`param:NAME:PLACE` of an upstream method: what the upstream hands the parameter NAME of an
        override, from its own method's annotation of it. Only where the override's parameter is the
        upstream's at the same place (PLACE among the positional parameters after `self`; -1 for a
        keyword-only one, which the upstream's must then be, or be the same name): called either way,
        the override's NAME receives what the upstream's NAME does."""
        _, name, place_text = ref.via.split(":")
        func = self.resolve(ref.base)
        if not isinstance(func, FunctionValue) or func.via != "instance":
            return Unknown(Reason.UNTYPED_PARAMETER)
        if func.info.has_decorator("builtins.staticmethod") or func.info.has_decorator(
            "builtins.classmethod"
        ):
            return Unknown(Reason.UNTYPED_PARAMETER)
        params = func.info.signature.bound().parameters
        positional = [
            p for p in params if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
        ]
        place = int(place_text)
        mine = next((p for p in params if p.name == name), None)
        if mine is None:
            return Unknown(Reason.UNTYPED_PARAMETER)
        if place >= 0 and (place >= len(positional) or positional[place].name != name):
            return Unknown(Reason.UNTYPED_PARAMETER)  # a positional call fills another parameter there
        if place < 0 and mine.kind is not ParamKind.KEYWORD_ONLY:
            return Unknown(Reason.UNTYPED_PARAMETER)
        path = dict(func.info.param_paths).get(name)
        if path is None:
            return Unknown(Reason.UNTYPED_PARAMETER)
        return self._instance_of(path)

    def _handed_first(self, callee: Ref, slot: str = "", place: int = 0) -> Resolution:
        """What a function handed to `callee` gets as its argument at `place`, from the annotation of the
        callee's parameter it is handed to: `f: Callable[Concatenate[Context, P], R]` (click's
        `pass_context`) calls `f` with a `Context` first; a callback registered with
        `on(f: Callable[[Token, Event], R])`, a function, a method of an upstream instance
        (`app.on(handler)`) or a class (its `__init__`: `Handler("start", callback)`), gets a `Token`
        first and an `Event` second; `slot` says which of the callable's parameters the function was
        passed to ("": the first, "@N": the Nth positional, "=name": that keyword), "()" that `callee`
        is a decorator factory's call (`@bus.on("evt")`) whose return annotation
        (`Callable[[Callable[[Event], R]], ...]`) says what the decorator calls the function with. A
        TypeVar names its bound. Typed by an annotation: a subclass instance is possible."""
        if slot == "()":
            if not isinstance(callee, CallRef):
                return Unknown(Reason.ITEM_UNKNOWN, "handed")
            func = self.resolve(callee.func)
            if not isinstance(func, FunctionValue) or func.info.is_async:
                return Unknown(Reason.ITEM_UNKNOWN, "handed")
            decorator = _callable_arguments(func.info.signature.returns or "")
            annotation = decorator[0] if decorator and len(decorator) == 1 else ""
            owner = func.path.rpartition(".")[0]
            if func.via == "instance":
                owner = owner.rpartition(".")[0]  # the class's module
            elif func.via is not None:
                return Unknown(Reason.ITEM_UNKNOWN, "handed")
            return self._handed_class(annotation, owner, place)
        func = self.resolve(callee)
        if isinstance(func, Missing):
            return Unknown(Reason.PARENT_MISSING)
        if isinstance(func, ClassValue):  # `Handler("start", callback)`: what its `__init__` takes
            init = self._class_attribute(func.info, "__init__", on_instance=True, exact=True)
            if not isinstance(init, FunctionValue) or init.path.rpartition(".")[0] != func.info.path:
                return Unknown(
                    Reason.ITEM_UNKNOWN, "handed"
                )  # only a class's own `__init__` (no `__new__` games)
            if func.info.metaclass and not self.plain_metaclass(func.info.metaclass):
                return Unknown(Reason.ITEM_UNKNOWN, "handed")
            func = init
        if not isinstance(func, FunctionValue) or func.via not in (None, "instance"):
            return Unknown(Reason.ITEM_UNKNOWN, "handed")
        params = func.info.signature.parameters
        owner = func.path.rpartition(".")[0]  # where the annotation's names are looked up
        if func.via == "instance":
            if func.info.has_decorator("builtins.staticmethod") or func.info.has_decorator(
                "builtins.classmethod"
            ):
                return Unknown(Reason.ITEM_UNKNOWN, "handed")
            params = func.info.signature.bound().parameters
            owner = owner.rpartition(".")[0]  # the class's module
        elif func.path.endswith(".__init__"):
            params = func.info.signature.bound().parameters
            owner = owner.rpartition(".")[0]
        param = _slot_parameter(params, slot)
        if param is None:
            return Unknown(Reason.ITEM_UNKNOWN, "handed")
        return self._handed_class(param.annotation or "", owner, place)

    def _handed_class(self, annotation: str, owner: str, place: int) -> Resolution:
        """The class a `Callable[[A, B, ...], R]` (or `Callable[Concatenate[A, ...], R]`) annotation names
        at `place`, looked up from the module `owner`; also through a generic alias of another module
        (`HandlerCallback[Update, CCT, RT]` with `HandlerCallback = Callable[[UT, CCT], ...]`); a TypeVar
        stands for its bound."""
        match = _CONCATENATE_FIRST.search(annotation) if place == 0 else None
        if match is not None:
            name, module = match.group(1), owner
        else:
            arguments = _callable_arguments(annotation)
            found = (
                [(a, owner) for a in arguments]
                if arguments is not None
                else self._generic_alias_arguments(annotation, owner)
            )
            if found is None or place >= len(found):
                return Unknown(Reason.ITEM_UNKNOWN, "handed")
            name, module = found[place][0].strip("\"' "), found[place][1]
            if not _DOTTED.fullmatch(name):
                return Unknown(Reason.ITEM_UNKNOWN, "handed")
        cls = self.lookup(f"{module}.{name}")
        if isinstance(cls, AttributeValue):  # `CCT = TypeVar("CCT", bound="CallbackContext")`
            bound = _typevar_bound(cls.info.value or "")
            if bound is None:
                return Unknown(Reason.ITEM_UNKNOWN, "handed")
            cls = self.lookup(f"{cls.path.rpartition('.')[0]}.{bound}")
        if not isinstance(cls, ClassValue):
            return Unknown(Reason.ITEM_UNKNOWN, "handed")
        return InstanceValue(cls.info, exact=False)

    def _generic_alias_arguments(self, annotation: str, owner: str) -> list[tuple[str, str]] | None:
        """The argument types, each with the module to look it up from, of `Alias[X, Y, Z]` where `Alias`
        (found from `owner`) is a module attribute `Callable[[T1, T2], ...]` over TypeVars: its type
        parameters are its TypeVars in the order they first appear, replaced by the arguments given."""
        text = annotation.strip().strip("\"'")
        try:
            node = ast.parse(text, mode="eval").body if text and len(text) <= 2000 else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute))):
            return None
        alias = self.lookup(f"{owner}.{ast.unparse(node.value)}")
        if not isinstance(alias, AttributeValue) or not alias.info.value:
            return None
        arguments = _callable_arguments(alias.info.value)
        if arguments is None:
            return None
        home = alias.path.rpartition(".")[0]
        given = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        try:
            found = [n for n in ast.walk(ast.parse(alias.info.value, mode="eval")) if isinstance(n, ast.Name)]
            names = [
                n.id for n in sorted(found, key=lambda n: (n.lineno, n.col_offset))
            ]  # in the order written
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        parameters: list[str] = []
        for name in names:
            held = self.lookup(f"{home}.{name}") if name not in parameters else None
            if isinstance(held, AttributeValue) and "TypeVar(" in (held.info.value or ""):
                parameters.append(name)
        if len(parameters) != len(given):
            return None  # not a generic alias of these arguments: its parameters are unknown
        bound = dict(zip(parameters, (ast.unparse(g) for g in given), strict=True))
        return [(bound[a], owner) if a in bound else (a, home) for a in arguments]

    def _protocol_result(self, base: InstanceValue, via: str, depth: int = 0) -> Resolution:
        method = self._class_attribute(base.cls, _PROTOCOL_METHODS[via], on_instance=True, exact=base.exact)
        if not isinstance(method, FunctionValue):
            return Unknown(Reason.ITEM_UNKNOWN, via)
        info = method.info
        if via == "iter" and info.returns_items:
            path = dict(info.returns_items).get("next") or dict(info.returns_items).get("iter")
            path = self._substituted(path, base) if path else None
            return self._instance_of(path) if path else Unknown(Reason.ITEM_UNKNOWN, via)
        returned = self._substituted(info.returns_path, base) if info.returns_path else None
        if returned in _SELF_TYPES or (returned is not None and returned == method.path.rpartition(".")[0]):
            if via == "iter" and depth == 0:  # an iterator that is its own `__iter__`: `__next__` says
                return self._protocol_result(base, "next", 1)
            return (
                base if returned in _SELF_TYPES or base.cls.path == returned else self._instance_of(returned)
            )
        if not returned:
            return Unknown(Reason.ITEM_UNKNOWN, via)
        made = self._instance_of(returned)
        if isinstance(made, InstanceValue) and self._returns_exactly(method, base, made.cls):
            return InstanceValue(
                made.cls, exact=True
            )  # `Database.__getitem__`: `return Collection(self, name)`
        return made

    def _receiver(self, call: CallRef) -> InstanceValue | None:
        """The instance a method is called on (`page.first()`: page): its type arguments, and whether it
        is exactly of its class."""
        if not isinstance(call.func, AttrRef):
            return None
        receiver = self.resolve(call.func.base)
        return receiver if isinstance(receiver, InstanceValue) else None

    def _substituted(self, path: str, receiver: InstanceValue | None) -> str:
        """A type parameter of the receiver's class (`T` of `Page(Generic[T])`) stands for its type
        argument (`Item` of `Page[Item]`); "" when that argument is no plain class."""
        if receiver is None or not receiver.args:
            return path
        name = path.rpartition(".")[2]
        params = receiver.cls.type_params
        if name not in params or isinstance(self.lookup(path), ClassValue):
            return path
        index = params.index(name)
        return receiver.args[index] if index < len(receiver.args) else ""

    def _instance_of(self, path: str) -> Resolution:
        if path in _BUILTIN_VALUE_TYPES:
            return BuiltinInstanceValue(path)
        target = self.lookup(path)
        if isinstance(target, ClassValue):
            return InstanceValue(target.info, exact=False)
        if isinstance(target, ExternalValue):
            return Unknown(Reason.EXTERNAL_CLASS)
        return Unknown(Reason.ANNOTATION_NOT_A_CLASS)

    def _star_name(self, ref: StarRef) -> Resolution:
        """A name only the downstream's star imports can bind: the last module that exports it gives it
        (its `__all__`, else its public names); when none does, using it raises NameError."""
        unsure: Unknown | None = None
        for dotted in reversed(ref.modules):
            if not self.index.owns(dotted):
                return Unknown(Reason.STAR_IMPORT)
            if self.index.is_compiled(dotted):
                unsure = unsure or Unknown(Reason.STAR_IMPORT_COMPILED, dotted)
                continue
            info = self.index.module(dotted)
            if info is None:
                continue  # the module is gone: reported at its import
            if info.exports is not None:
                if ref.name not in info.exports:
                    continue
                found = self._module_attribute(info, ref.name)  # `__all__` names are fetched by getattr
            elif ref.name.startswith("_"):
                continue
            else:
                found = self._module_attribute(info, ref.name)
                if isinstance(found, ServedValue):
                    continue  # without `__all__`, a star import copies the module's dict: no `__getattr__`
            if isinstance(found, Unknown):
                unsure = unsure or found
            elif not isinstance(found, Missing):
                return found
        if unsure is not None:
            return unsure
        if any(self.index.module(m) is None for m in ref.modules):
            return Unknown(Reason.PARENT_MISSING)  # a star-imported module is gone: reported at its import
        return Missing(ref.modules[-1], ref.name, "star")

    def lookup(self, path: str) -> Resolution:
        """A canonical dotted path (as imports and griffe write them): submodules take precedence."""
        if not self.index.owns(path):
            return ExternalValue(path)
        if path in self._active:
            return Unknown(Reason.ALIAS_CYCLE)
        self._active.add(path)
        try:
            parts = path.split(".")
            value: Resolution = self.resolve(ModuleRef(parts[0]))
            for position, name in enumerate(parts[1:], start=2):
                if not isinstance(value, ModuleValue):
                    break
                prefix = ".".join(parts[:position])
                if self.index.module(prefix) is not None or self.index.is_compiled(prefix):
                    value = self.resolve(ModuleRef(prefix))
                    continue
                value = self.attribute(value, name)
            else:
                return value
            for name in parts[position - 1 :]:
                if isinstance(value, (Missing, Unknown)):
                    return value
                value = self.attribute(value, name)
            return value
        finally:
            self._active.discard(path)

    # -- attributes -------------------------------------------------------------------------------

    def attribute(self, base: Value, name: str) -> Resolution:
        if isinstance(base, ModuleValue):
            return self._module_attribute(base.info, name)
        if isinstance(base, ClassValue):
            return self._class_attribute(base.info, name, on_instance=False)
        if isinstance(base, InstanceValue):
            return self._class_attribute(base.cls, name, on_instance=True, exact=base.exact)
        if isinstance(base, AttributeValue):
            cls = self._annotated_class(base.info)
            if cls is not None:
                return self._class_attribute(cls, name, on_instance=True, exact=False)
            if base.info.annotation_path in _BUILTIN_VALUE_TYPES:
                return self.attribute(BuiltinInstanceValue(base.info.annotation_path), name)
            built = self.property_instance(base)  # `return ContainerCollection(client=self)`
            if built is not None:
                return self.attribute(built, name)
            assigned = self.assigned_value(base)
            if isinstance(assigned, (Missing, Unknown)):
                return Unknown(Reason.UNTYPED_ATTRIBUTE)
            return self.attribute(assigned, name)
        if isinstance(base, BuiltinInstanceValue):
            builtin = _BUILTIN_VALUE_TYPES[base.path]
            if hasattr(builtin, name):
                return ExternalValue(f"{base.path}.{name}")
            return Missing(base.path, name, "instance", exact=False)
        if isinstance(base, ExternalValue):
            return Unknown(Reason.EXTERNAL)
        if isinstance(base, ServedValue):
            return Unknown(Reason.SERVED_BY_GETATTR)
        return Unknown(Reason.ATTRIBUTE_OF_FUNCTION)

    def _compiled_twin(self, module: ModuleInfo, name: str) -> FunctionValue | None:
        """A name bound by `try: from .compiled import f except ImportError: from .python import f`
        (ModuleInfo.twins): the compiled twin is known only by its stub's declaration (no Python
        definition beside it), the fallback is a plain Python function with the same parameters (names,
        kinds, defaults), neither decorated. Whichever branch runs, the name exists and a call binds the
        same: the fallback is the value, its raising facts dropped (the compiled body is not read); its
        deprecation message is the package's word on the name (MarkupSafe 2.0's `soft_unicode` "has
        been renamed to 'soft_str'"). Anything else: None."""
        pair = module.twins.get(name)
        if pair is None:
            return None
        compiled, fallback = (self.lookup(path) for path in pair)
        if not isinstance(compiled, FunctionValue) or not isinstance(fallback, FunctionValue):
            return None
        owner = self.index.module(pair[0].rpartition(".")[0])
        if (
            owner is None
            or not owner.is_stub
            or not compiled.info.typing_view
            or compiled.info.runtime_signature is not None
            or compiled.info.overloads
            or fallback.info.typing_view
            or fallback.info.overloads
            or compiled.info.decorators
            or fallback.info.decorators
            or compiled.via is not None
            or fallback.via is not None
        ):
            return None

        def shape(info: FunctionInfo) -> list[tuple[str, ParamKind, bool, str | None]]:
            return [(p.name, p.kind, p.has_default, p.default) for p in info.signature.parameters]

        if shape(compiled.info) != shape(fallback.info):
            return None
        return replace(fallback, info=replace(fallback.info, raises_when=(), always_raises=None))

    def _installs_modules(self, dotted: str) -> bool:
        """Whether a module on the way to `dotted` (its top-level package included) installs modules
        the files do not show (`sys.modules[...] = ...`, a `sys.meta_path` importer)."""
        parts = dotted.split(".")
        for end in range(1, len(parts)):
            info = self.index.module(".".join(parts[:end]))
            if info is not None and info.installs_modules:
                return True
        return False

    def _module_attribute(
        self, module: ModuleInfo, name: str, seen: frozenset[str] = frozenset(), *, stores: bool = True
    ) -> Resolution:
        """The module's attribute `name`. Without `stores` (the first pass over star imports): whether
        another module stores the name on this one is not asked (a miss stays a miss), and an answer
        that would depend on it (a module `__getattr__` consulted after the star imports) is
        `_UNDECIDED`: a value found so is the value the full reading finds, at the same star import."""
        member = module.members.get(name)
        if member is not None:
            if name in module.rebound:
                twin = self._compiled_twin(module, name)
                if twin is not None:
                    return twin
                return Unknown(Reason.DEFINED_MORE_THAN_ONCE)  # bound for sure, but which definition runs?
            return self._member_value(member, f"{module.path}.{name}", None)
        submodule = f"{module.path}.{name}"
        if self.index.is_compiled(submodule):
            return Unknown(Reason.COMPILED_MODULE)
        submodule_info = self.index.module(submodule)
        if submodule_info is not None:
            return ModuleValue(submodule_info)
        if (
            name.startswith("__")
            and name.endswith("__")
            and name != "__all__"
            and (name in _IMPORT_SYSTEM_DUNDERS or module.getattr_source is None)
        ):
            # Set by the import system; `__all__` only by the module. Another dunder a module with a
            # `__getattr__` does not bind (`click.__version__` in 8.2) is that function's to answer.
            return Unknown(Reason.MODULE_DUNDER)
        # A star import binds its names for certain, whatever else the module does; when several
        # provide one, the last import wins, as in Python. A first pass without the question of stores
        # from other modules (which reads every file of the upstream) answers where an import binds
        # the name; a miss in a module imported before another that binds it is then never asked about.
        if stores and module.star_imports:
            first = self._star_value(module, name, seen)
            if first is not None:
                return first
        unsure: Unknown | None = None
        for star in reversed(module.star_imports):
            if star in seen or not self.index.owns(star):
                unsure = unsure or Unknown(Reason.STAR_IMPORT)
                continue
            source = self.index.module(star)
            if source is None and self.index.is_compiled(star):
                # An sdist's Cython module: its source's literal `__all__` says which names it binds.
                exports = self.index.cython_exports(star)
                if exports is None or name in exports:
                    unsure = unsure or Unknown(
                        Reason.STAR_IMPORT if exports is None else Reason.COMPILED_MODULE
                    )
                continue
            if source is None:
                unsure = unsure or Unknown(Reason.STAR_IMPORT)
                continue
            if (source.exports is not None and name not in source.exports) or (
                source.exports is None and name.startswith("_")
            ):
                continue
            found = self._module_attribute(source, name, seen | {module.path}, stores=stores)
            if found is _UNDECIDED:
                return found
            if isinstance(found, Unknown):
                unsure = unsure or found
            elif not isinstance(found, Missing):
                return found
        if name in module.bound_names:
            return Unknown(Reason.DYNAMIC_BINDING)
        # Names bound through `globals()` in a loop or an update the evaluator reads: where it does,
        # they are all the module binds that way, and its namespace is complete.
        closed = False
        if module.namespace_source is not None:
            computed = self.computed_names(module)
            if isinstance(computed, frozenset):
                if name in computed:
                    return AttributeValue(AttributeInfo(name), f"{module.path}.{name}")
                closed = True
            elif computed.limit:
                return Unknown(Reason.EVALUATION_LIMIT)
        if module.getattr_source is not None:
            if not stores:
                return _UNDECIDED  # its answer depends on `unsure`, which the stores may change
            return self._getattr_attribute(module, name, unsure, closed=closed)
        # Open: globals() games, a load that failed, or top-level code that binds names itself
        # (`exec(...)`, `locals()[...] = ...`): a name the analysis does not see may still be there.
        if (module.dynamic_namespace and not closed) or module.open_namespace:
            if self.index.stats.failed.get(module.path, "").startswith(BUDGET_MESSAGE):
                return Unknown(Reason.LOAD_BUDGET)
            if module.namespace_source is not None and not module.open_namespace:
                return Unknown(Reason.DYNAMIC_BINDING)  # names bound via globals() the evaluator cannot read
            return Unknown(
                reason_of(module.open_namespace) if module.open_namespace else Reason.MODULE_GETATTR
            )
        if unsure is not None:
            return unsure
        if module.is_package and (module.shares_path or not module.filepath.endswith((".py", ".pyi"))):
            return Unknown(Reason.NAMESPACE_PACKAGE)  # another distribution's module of the namespace
        if self._installs_modules(f"{module.path}.{name}"):
            return Unknown(Reason.INSTALLED_MODULE)
        if stores and self.index.assigned_elsewhere(module.path, name):
            return Unknown(Reason.ASSIGNED_BY_ANOTHER_MODULE)
        return Missing(module.path, name, "module")

    def _star_value(self, module: ModuleInfo, name: str, seen: frozenset[str]) -> Resolution | None:
        """The value a star import of the module binds `name` to, read without the question of stores
        from other modules; None when none binds it so (the full reading then decides)."""
        for star in reversed(module.star_imports):
            if star in seen or not self.index.owns(star):
                continue
            source = self.index.module(star)
            if source is None:
                continue  # absent, or compiled: unsure at most, never a value
            if (source.exports is not None and name not in source.exports) or (
                source.exports is None and name.startswith("_")
            ):
                continue
            found = self._module_attribute(source, name, seen | {module.path}, stores=False)
            if found is _UNDECIDED:
                return None
            if not isinstance(found, (Unknown, Missing)):
                return found
        return None

    def _getattr_attribute(
        self, module: ModuleInfo, name: str, unsure: Unknown | None, *, closed: bool = False
    ) -> Resolution:
        """A name the module does not bind, answered by what its `__getattr__` does (PEP 562)."""
        answer = self.served(module, name)
        if isinstance(answer, dynamic.Undecided):
            return Unknown(Reason.EVALUATION_LIMIT if answer.limit else Reason.MODULE_GETATTR)
        if unsure is not None:
            return unsure  # a star import the analysis cannot read may bind it before `__getattr__` runs
        if isinstance(answer, dynamic.NotServed):
            if (module.dynamic_namespace and not closed) or module.open_namespace:
                return Unknown(Reason.DYNAMIC_BINDING)  # globals() games or exec() elsewhere may bind it
            return Missing(module.path, name, "module", message=answer.message)
        path = f"{module.path}.{name}"
        if answer.target and self.index.owns(answer.target) and answer.target != path:
            target = self.lookup(answer.target)
            if isinstance(target, (FunctionValue, ClassValue, AttributeValue)):
                if not answer.warning:
                    return target
                # Deprecated is the name as served here, not the object it hands back.
                if isinstance(target, ClassValue):
                    return replace(target, info=replace(target.info, deprecated=answer.warning))
                if isinstance(target, FunctionValue):
                    return replace(target, info=replace(target.info, deprecated=answer.warning), path=path)
                return replace(target, info=replace(target.info, deprecated=answer.warning), path=path)
            if isinstance(target, ModuleValue) and not answer.warning:
                return target
        return ServedValue(path, answer.target, answer.warning)

    def computed_names(self, module: ModuleInfo) -> frozenset[str] | dynamic.Undecided:
        """The names the module binds through `globals()` (`ModuleInfo.namespace_source`), evaluated."""
        if module.path not in self._computed:
            evaluator = self._evaluator_for(module)
            self._computed[module.path] = dynamic.namespace_names(
                evaluator,
                module.path,
                module.namespace_source or "",
                {k: list(v) for k, v in module.enum_members.items()},
                is_package=module.is_package,
            )
        return self._computed[module.path]

    def _evaluator_for(self, module: ModuleInfo) -> dynamic.Evaluator:
        own = module.path

        def sources(dotted: str) -> tuple[str, bool] | None:
            if dotted == own:
                return module.getattr_source or module.namespace_source or "", module.is_package
            if dotted not in self._sources:
                self._sources[dotted] = self.index.source(dotted)
            return self._sources[dotted]

        if self._evaluator is None:
            self._evaluator = dynamic.Evaluator(sources)
        self._evaluator.interpreter.sources = sources
        return self._evaluator

    def served(self, module: ModuleInfo, name: str) -> dynamic.Answer:
        key = (module.path, name)
        if key not in self._served:
            self._evaluator_for(module)
            assert self._evaluator is not None
            self._served[key] = self._evaluator.evaluate(
                module.path, module.getattr_source or "", name, is_package=module.is_package
            )
        return self._served[key]

    def _class_attribute(
        self, cls: ClassInfo, name: str, *, on_instance: bool, exact: bool = True
    ) -> Resolution:
        mro = self.mro(cls)
        if mro is None:
            return Unknown(Reason.UNRESOLVABLE_MRO)
        for entry in mro:
            if isinstance(entry, str):
                if entry in ENUM_BASES and not on_instance:
                    if name in ENUM_CLASS_API:
                        return Unknown(Reason.ENUM_API)
                    continue  # an enum class has its members and Enum's own API, nothing else
                return Unknown(Reason.EXTERNAL_BASE, entry)
            member = entry.members.get(name)
            if member is not None:
                if name in entry.rebound:
                    return Unknown(Reason.DEFINED_MORE_THAN_ONCE)
                if on_instance and self._replaced_on_instance(mro, entry, name, member):
                    # `impl = Thing` in the body, `self.impl = self.impl()` in a method: what an
                    # instance holds is what the method stored (the instance's dict comes first)
                    return Unknown(Reason.INSTANCE_ATTRIBUTE)
                return self._member_value(
                    member, f"{entry.path}.{name}", "instance" if on_instance else "class"
                )
            if on_instance and name in entry.instance_attributes:
                return Unknown(Reason.INSTANCE_ATTRIBUTE)  # set in a method: type unknown, existence certain
            if name in entry.source_only:
                return Unknown(Reason.NOT_IN_STUB)
            if name in entry.bound_names:
                return Unknown(Reason.DYNAMIC_BINDING)  # bound (a for target, `Cls.x = ...`), not as a member
        if name.startswith("__") and name.endswith("__"):
            return Unknown(Reason.DUNDER)
        for entry in mro:
            if isinstance(entry, str):
                continue
            if "__getattr__" in entry.members or "__getattribute__" in entry.members:
                served = self._served_by_class_getattr(mro, entry, name) if on_instance and exact else None
                return served if served is not None else Unknown(Reason.CLASS_GETATTR)
            if entry.dynamic_attributes:  # `setattr(self, name, ...)`, `self.__dict__[key] = ...`
                return Unknown(Reason.DYNAMIC_ATTRIBUTES, entry.path)
            for decorator in (
                *entry.decorators,
                *entry.source_decorators,
            ):  # `@_define_aliases({...})` setattr()s methods
                if decorator.path.startswith("?") or not self.index.owns(decorator.path):
                    continue
                target = self.lookup(decorator.path)
                if isinstance(target, FunctionValue) and target.info.adds_attributes:
                    key = (decorator.path, decorator.literals, tuple(sorted(decorator.keywords.items())))
                    if key not in self._added:
                        self._added[key] = _names_added(target.info, decorator)
                    added = self._added[key]
                    if added is None or name in added:
                        return Unknown(Reason.DECORATOR_ADDS_ATTRIBUTES, decorator.path)
        incomplete = self._incomplete(mro, on_instance)
        if incomplete is not None:
            return incomplete
        if not on_instance and any(isinstance(e, ClassInfo) and e.metaclass for e in mro):
            return Unknown(Reason.METACLASS_ATTRIBUTE)
        return Missing(cls.path, name, "instance" if on_instance else "class", exact or not on_instance)

    def _replaced_on_instance(
        self, mro: list[ClassInfo | str], owner: ClassInfo, name: str, member: Member
    ) -> bool:
        """Whether a method of the class or of a class in its MRO stores `self.<name>`, so that an
        instance's own dict may hold another object than the class member `owner` defines. Not for a
        data descriptor (a property's setter runs instead), nor for an attribute of `owner` that its own
        methods assign: the loader already reads that member as what they store."""
        if isinstance(member, FunctionInfo) and (
            member.has_decorator("builtins.property") or self._property_like(member)
        ):
            return False
        for entry in mro:
            if not isinstance(entry, ClassInfo) or name not in entry.instance_attributes:
                continue
            if entry is owner and isinstance(member, AttributeInfo):
                continue
            return True
        return False

    def attribute_of_instance(self, cls: ClassInfo, name: str) -> Resolution:
        """`name` on an instance whose class is exactly `cls`."""
        return self._class_attribute(cls, name, on_instance=True)

    def _incomplete(self, mro: list[ClassInfo | str], on_instance: bool) -> Unknown | None:
        """Why the classes' member lists may not be the whole namespace, if they may not: a body or code
        that binds names dynamically, a class decorator that may add members, a metaclass that may."""
        for entry in mro:
            if not isinstance(entry, ClassInfo):
                continue
            if entry.open_namespace:
                return Unknown(reason_of(entry.open_namespace))
            for decorator in (*entry.decorators, *entry.source_decorators):
                if not self._keeps_members(decorator):
                    return Unknown(Reason.CLASS_DECORATOR, decorator.path)
            if on_instance and entry.metaclass and not self._metaclass_keeps_members(entry.metaclass):
                return Unknown(Reason.METACLASS_ATTRIBUTE)
        return None

    def _keeps_members(self, decorator: Decorator) -> bool:
        """A class decorator known to add no member a downstream could read (or to hand the class back)."""
        if decorator.path in MEMBER_KEEPING_CLASS_DECORATORS:
            return True
        if decorator.path.startswith("?") or not self.index.owns(decorator.path):
            return False
        target = self.lookup(decorator.path)
        if isinstance(target, AttributeValue) and not decorator.called:
            # `interpd = _Substitution()` used as `@interpd`: its class's `__call__` hands the class back
            # and sets no attribute on it (matplotlib's docstring interpolation)
            instance = self.assigned_value(target)
            if isinstance(instance, InstanceValue):
                call = self.attribute(ClassValue(instance.cls), "__call__")
                return (
                    isinstance(call, FunctionValue) and call.info.identity and not call.info.adds_attributes
                )
            return False
        if not isinstance(target, FunctionValue):
            return False
        info = target.info
        if info.typing_view and info.dataclass_transform is None:
            return False  # a stub's `-> type[T]` says the class comes back, not that nothing is added to it
        return (
            bool(info.factory_identity if decorator.called else info.identity)
            or info.dataclass_transform is not None
        )

    def _metaclass_keeps_members(self, path: str) -> bool:
        """A metaclass that cannot add members to its classes: type's own, or one defining no __new__,
        __init__ or __prepare__ (through its bases)."""
        return self._metaclass_defines_none(path, ("__new__", "__init__", "__prepare__", "__init_subclass__"))

    def _metaclass_defines_none(self, path: str, names: tuple[str, ...]) -> bool:
        """`path` is type's own metaclass or one whose MRO (up to type) defines none of `names`."""
        if path in PLAIN_METACLASSES:
            return True
        target = self.lookup(path) if not path.startswith("?") else None
        if not isinstance(target, ClassValue):
            return False
        mro = self.mro(target.info)
        if mro is None:
            return False
        for entry in mro:
            if isinstance(entry, str):
                if entry not in PLAIN_METACLASSES:
                    return False
            elif any(n in entry.members for n in names):
                return False
        return True

    def _made_by_base_call(self, cls: ClassInfo) -> ClassInfo:
        """`class C(with_metaclass(Meta, Base))`, where the callee proves it (see loader
        `_makes_metaclass_base`): C as CPython makes it, deriving from Base with the metaclass Meta."""
        if cls.path in self._base_calls:
            return self._base_calls[cls.path]
        self._base_calls[cls.path] = cls  # while reading: a cycle keeps the class as written
        made = cls
        assert cls.base_call is not None
        callee, arguments = cls.base_call
        target = self.lookup(callee)
        if isinstance(target, FunctionValue) and target.info.makes_metaclass_base and len(arguments) >= 1:
            made = replace(cls, bases=arguments[1:], metaclass=arguments[0], base_call=None)
        self._base_calls[cls.path] = made
        return made

    def _member_value(self, member: Member, path: str, via: str | None) -> Resolution:
        if isinstance(member, AliasInfo):
            target = self.lookup(member.target)
            if isinstance(target, Missing):
                return Unknown(Reason.BROKEN_ALIAS)  # e.g. a TYPE_CHECKING-only or optional import
            return target
        if isinstance(member, ClassInfo):
            return ClassValue(self._made_by_base_call(member) if member.base_call else member)
        if isinstance(member, FunctionInfo):
            if member.has_decorator("builtins.property", "functools.cached_property") or self._property_like(
                member
            ):
                return AttributeValue(
                    AttributeInfo(
                        member.name,
                        member.signature.returns,
                        member.returns_path,
                        deprecated=member.deprecated,
                        items=member.returns_items,
                    ),
                    path,
                    on_instance=via == "instance",
                )
            return FunctionValue(member, path, via)
        return AttributeValue(member, path, on_instance=via == "instance")

    def _served_by_class_getattr(
        self, mro: list[ClassInfo | str], entry: ClassInfo, name: str
    ) -> InstanceValue | None:
        """What an instance's `__getattr__` hands back for `name`, where its body says (see
        analyses/class_getattr.py): an instance of the class it (or `self.__getitem__`) builds, with
        no guard refusing the name. pymongo's `Collection.__getattr__` serves every public name as a
        sub-collection, so `collection.insert` (gone in pymongo 4) is a `Collection`."""
        getattr_ = entry.members.get("__getattr__")
        if not isinstance(getattr_, FunctionInfo) or getattr_.getattr_serves is None:
            return None
        if any(isinstance(e, ClassInfo) and "__getattribute__" in e.members for e in mro):
            return None
        serves = getattr_.getattr_serves
        if refused(serves, name):
            return None
        built = serves["returns"]
        if built == "item":
            getitem = next(
                (
                    e.members["__getitem__"]
                    for e in mro
                    if isinstance(e, ClassInfo) and "__getitem__" in e.members
                ),
                None,
            )
            if not isinstance(getitem, FunctionInfo) or getitem.decorators or getitem.item_constructs is None:
                return None
            built = getitem.item_constructs
        target = self.lookup(built)
        if not isinstance(target, ClassValue) or target.info.metaclass:
            return None
        built_mro = self.mro(target.info)
        if built_mro is None or any(isinstance(e, str) or "__new__" in e.members for e in built_mro):
            return None  # an outside base or a `__new__` may make another object
        return InstanceValue(target.info, exact=True)

    def _property_like(self, member: FunctionInfo) -> bool:
        """Decorated by one plain `@name` that is a class read as `property`: either a `property`
        subclass whose own classes (up to `property`) define no `__init__` or `__new__`, and a `__get__`
        only when every return of it gives `self.fget(...)` (polars `class sphinx_accessor(property)`);
        or a descriptor class of the upstream's own whose `__init__(self, fget, ...)` stores the
        function as `self.fget` and whose `__get__` gives `self.fget(instance)` (SQLAlchemy's
        `memoized_property`, `non_memoized_property`)."""
        if len(member.decorators) != 1 or member.decorators[0].called:
            return False
        path = member.decorators[0].path
        if path.startswith("?") or not self.index.owns(path):
            return False
        target = self.lookup(path)
        if isinstance(target, AttributeValue):
            target = self.assigned_value(target)
        if isinstance(target, ExternalValue) and target.path in (
            "builtins.property",
            "functools.cached_property",
        ):
            return True  # `ro_non_memoized_property = property` (as the type checkers read it)
        if not isinstance(target, ClassValue):
            return False
        mro = self.mro(target.info)
        if mro is None:
            return False
        init = get = None  # the first definitions along the MRO
        for entry in mro:
            if isinstance(entry, str):
                if entry == "builtins.property":
                    return init is None and (get is None or get.returns_fget)
                return False
            if "__new__" in entry.members:
                return False
            if init is None and "__init__" in entry.members:
                found = entry.members["__init__"]
                if not isinstance(found, FunctionInfo):
                    return False
                init = found
            if get is None and "__get__" in entry.members:
                found = entry.members["__get__"]
                if not isinstance(found, FunctionInfo):
                    return False
                get = found
        # `object` at the end: a descriptor of its own making
        return init is not None and init.stores_fget and get is not None and get.returns_fget

    def assigned_value(self, value: AttributeValue) -> Resolution:
        """What a module or class attribute holds, from its assignment: `x = other.thing` or `x = Cls()`.

        An attribute may be reassigned elsewhere, so an instance found this way is never exact."""
        info = value.info
        key = f"assigned:{value.path}"
        if key in self._active:
            return Unknown(Reason.ALIAS_CYCLE)
        self._active.add(key)
        try:
            if info.value_path and not info.value_path.startswith("?"):
                target = self.lookup(info.value_path)
                return target if not isinstance(target, Missing) else Unknown(Reason.BROKEN_ALIAS)
            if info.value_call and not info.value_call.startswith("?"):
                callee = self.lookup(info.value_call)
                if isinstance(callee, ClassValue) and not callee.info.metaclass:
                    return InstanceValue(callee.info, exact=False)
            return Unknown(Reason.UNTYPED_ATTRIBUTE)
        finally:
            self._active.discard(key)

    def property_instance(self, value: AttributeValue) -> InstanceValue | None:
        """What reading an unannotated property gives when its getter's every return calls one class
        (`return ContainerCollection(client=self)`): a fresh instance of exactly that class, when the
        class's call builds its own instances (a plain metaclass, no `__new__` choosing another class)."""
        path = value.info.constructs if value.on_instance else None
        if not path or path.startswith("?"):
            return None
        target = self.lookup(path)
        if not isinstance(target, ClassValue):
            return None
        cls = target.info
        if cls.metaclass and not self.plain_metaclass(cls.metaclass):
            return None
        made = self.constructed_class(cls)
        if not isinstance(made, ClassInfo) or made.path != cls.path:
            return None
        return InstanceValue(cls, exact=True)

    def has_no_call(self, cls: ClassInfo) -> bool:
        """Instances of exactly `cls` are certainly not callable: no class of its MRO (all read, `object`
        last) defines `__call__`, and nothing may add one (CPython looks `__call__` up on the type only)."""
        mro = self.mro(cls)
        if mro is None or any(isinstance(e, str) for e in mro):
            return False  # a base outside the code read may define `__call__`
        for entry in mro:
            assert isinstance(entry, ClassInfo)
            if "__call__" in entry.members or "__call__" in entry.bound_names or entry.dynamic_attributes:
                return False
        return self._incomplete(mro, on_instance=True) is None

    def _annotated_class(self, attribute: AttributeInfo) -> ClassInfo | None:
        if not attribute.annotation_path:
            return None
        target = self.lookup(attribute.annotation_path)
        return target.info if isinstance(target, ClassValue) else None

    # -- classes ----------------------------------------------------------------------------------

    def mro(self, cls: ClassInfo) -> list[ClassInfo | str] | None:
        """C3 linearization; a base outside the upstream stays in it as its path (opaque).

        The bases' orders are computed first, deepest first, without recursion: a chain of 600 classes
        must not exhaust the stack. What still recurses too deep (odd hierarchies) is unresolvable.
        """
        if cls.path in self._mro:
            return self._mro[cls.path]
        try:
            for ancestor in reversed(self._ancestors(cls)):
                self._mro_of(ancestor)
            return self._mro_of(cls)
        except RecursionError:
            self._mro[cls.path] = None
            return None

    def _ancestors(self, cls: ClassInfo) -> list[ClassInfo]:
        """The upstream classes `cls` inherits from whose order is not known yet, nearest first (iterative)."""
        found: list[ClassInfo] = []
        seen = {cls.path}
        stack = [cls]
        while stack:
            current = stack.pop()
            for base in current.bases:
                if base in TRANSPARENT_BASES or base.startswith("?"):
                    continue
                target = self._base_value(base)
                if (
                    isinstance(target, ClassValue)
                    and target.info.path not in seen
                    and target.info.path not in self._mro
                ):
                    seen.add(target.info.path)
                    found.append(target.info)
                    stack.append(target.info)
        return found

    def _base_value(self, base: str) -> Resolution:
        """What a base path names; a module-level alias of a class (`Visitable = Traversible`) is
        that class."""
        target = self.lookup(base)
        if isinstance(target, AttributeValue) and not target.on_instance:
            assigned = self.assigned_value(target)
            if isinstance(assigned, ClassValue):
                return assigned
        return target

    def _mro_of(self, cls: ClassInfo) -> list[ClassInfo | str] | None:
        if cls.path in self._mro:
            return self._mro[cls.path]
        self._mro[cls.path] = None  # guards against inheritance cycles
        result = self._linearize(cls)
        self._mro[cls.path] = result
        return result

    def _linearize(self, cls: ClassInfo) -> list[ClassInfo | str] | None:
        sequences: list[list[ClassInfo | str]] = []
        direct: list[ClassInfo | str] = []
        for base in cls.bases:
            if base in TRANSPARENT_BASES:
                continue
            target = self._base_value(base) if not base.startswith("?") else None
            if isinstance(target, ClassValue):
                base_mro = self._mro_of(target.info)
                if base_mro is None:
                    return None
                sequences.append(list(base_mro))
                direct.append(target.info)
            else:
                sequences.append([base])
                direct.append(base)
        sequences.append(list(direct))
        result: list[ClassInfo | str] = [cls]
        # The C3 merge, with a count of each key in the sequences' tails (past each one's current head), so
        # that a chain of n classes costs O(n^2) in all rather than O(n^3).
        keys = [[_mro_key(entry) for entry in sequence] for sequence in sequences]
        heads = [0] * len(sequences)
        in_tails: Counter[str] = Counter(k for sequence in keys for k in sequence[1:])
        while True:
            live = [i for i in range(len(sequences)) if heads[i] < len(sequences[i])]
            if not live:
                return result
            for i in live:
                if in_tails[keys[i][heads[i]]] == 0:
                    chosen = keys[i][heads[i]]
                    result.append(sequences[i][heads[i]])
                    break
            else:
                return None  # inconsistent hierarchy: Python would refuse the class
            for j in live:
                if keys[j][heads[j]] == chosen:
                    heads[j] += 1
                    if heads[j] < len(keys[j]):
                        in_tails[keys[j][heads[j]]] -= 1  # the new head is no longer in that tail

    # -- calls ------------------------------------------------------------------------------------

    def plain_metaclass(self, path: str) -> bool:
        """A metaclass that leaves `type.__call__` in charge: neither it nor its bases define `__call__`."""
        return self._metaclass_defines_none(path, ("__call__",))

    def constructed_class(self, cls: ClassInfo) -> ClassInfo | Unknown | None:
        """The class of what `cls(...)` builds, by its `__new__` read statically: `cls` itself unless a
        `__new__` from source says otherwise. None when the object is no instance of `cls` (or None):
        type.__call__ then runs no `__init__`."""
        mro = self.mro(cls)
        if mro is None:
            return Unknown(Reason.UNRESOLVABLE_MRO)
        new = None
        for entry in mro:
            if isinstance(entry, str):
                return cls  # an outside base's __new__ (object's, a builtin's): the class called
            if "__new__" in entry.members:
                new = entry.members["__new__"]
                break
        if not isinstance(new, FunctionInfo) or new.constructs is None:
            return cls

        def holds(condition: tuple[str, str]) -> bool | None:
            op, path = condition
            target = self.lookup(path) if not path.startswith("?") else None
            if not isinstance(target, ClassValue):
                return None
            return (target.info.path == cls.path) is (op == "is")

        made = evaluate(new.constructs, holds)
        if made == "cls":
            return cls
        if made == "none":
            return None
        target = self.lookup(made) if made != UNKNOWN and not made.startswith("?") else None
        if not isinstance(target, ClassValue):
            return Unknown(Reason.FACTORY_NEW, made if made != UNKNOWN else "")
        made_mro = self.mro(target.info)
        if made_mro is None:
            return Unknown(Reason.UNRESOLVABLE_MRO)
        if any(isinstance(e, ClassInfo) and e.path == cls.path for e in made_mro):
            return target.info  # an instance of cls: its own class's __init__ runs
        return None

    def call_result(self, func: Value, receiver: InstanceValue | None = None, depth: int = 0) -> Resolution:
        """What calling a value returns, when that is certain enough to follow (a method's `T`
        standing for the receiver's type argument)."""
        if isinstance(func, ClassValue):
            if func.info.metaclass and not self.plain_metaclass(func.info.metaclass):
                return Unknown(Reason.METACLASS)
            made = self.constructed_class(func.info)
            if made is None:
                return Unknown(Reason.UNKNOWN_RETURN)
            if isinstance(made, Unknown):
                # Most such factories build an instance of the class or of a subclass: its attributes
                # are then those of the class at least, a miss certain only as a removal.
                return (
                    made if made.reason is not Reason.FACTORY_NEW else InstanceValue(func.info, exact=False)
                )
            return InstanceValue(made, exact=True)
        if isinstance(func, AttributeValue) and depth < 8:
            # `encode = _default.encode` (a method of a module-level instance): what it holds, called
            held = self.assigned_value(func)
            if isinstance(held, (FunctionValue, ClassValue, AttributeValue)):
                return self.call_result(held, receiver, depth + 1)
            return Unknown(Reason.UNKNOWN_RETURN)
        if isinstance(func, FunctionValue) and func.info.is_async:
            return Unknown(Reason.COROUTINE)  # what awaiting it gives is an ItemRef "await"
        if isinstance(func, FunctionValue) and func.info.returns_super and not func.info.returns_path:
            following = self._next_method(func) if depth < 8 else None
            return (
                self.call_result(following, receiver, depth + 1)
                if following
                else Unknown(Reason.UNKNOWN_RETURN)
            )
        if isinstance(func, FunctionValue) and func.info.returns_path:
            path = self._substituted(func.info.returns_path, receiver)
            if path in _BUILTIN_VALUE_TYPES:
                return BuiltinInstanceValue(path)
            target = self.lookup(path) if path else None
            if isinstance(target, ClassValue):
                if self._returns_exactly(func, receiver, target.info):
                    return InstanceValue(target.info, exact=True)
                return InstanceValue(target.info, exact=False, args=func.info.returns_args)
            if isinstance(target, FunctionValue) and depth < 8 and self._forwards_call(func, target):
                # `def from_env(**kwargs): return Client.from_env(**kwargs)`: what that call gives
                forwarded = self.call_result(target, None, depth + 1)
                if isinstance(forwarded, InstanceValue):
                    return replace(forwarded, exact=False)
                if isinstance(forwarded, BuiltinInstanceValue):
                    return forwarded
            return Unknown(Reason.RETURN_NOT_A_CLASS)
        return Unknown(Reason.UNKNOWN_RETURN)

    @staticmethod
    def _forwards_call(func: FunctionValue, target: FunctionValue) -> bool:
        """An unannotated function whose every return calls `target`, a plain function or a class's
        static or class method reached through its class (no other decorator on either: one may change
        what the call gives; no method reached through an instance: a subclass may override it)."""
        plain = {"builtins.classmethod", "builtins.staticmethod"}
        return (
            func.info.signature.returns is None
            and not target.info.is_async
            and target.via != "instance"
            and all(d.path in plain for d in (*func.info.decorators, *target.info.decorators))
        )

    def _returns_exactly(self, func: FunctionValue, receiver: InstanceValue | None, cls: ClassInfo) -> bool:
        """The call gives an instance of exactly `cls`: the function's every return builds one
        (`returns_exact`), the class's constructor makes its own instances (no metaclass, no `__new__`
        choosing another class), and a method is the one the receiver's class really has (an exact
        receiver: a subclass could override it)."""
        if not func.info.returns_exact or func.info.decorators:
            return False
        if func.via == "instance" and (receiver is None or not receiver.exact):
            return False
        if cls.metaclass and not self.plain_metaclass(cls.metaclass):
            return False
        made = self.constructed_class(cls)
        return isinstance(made, ClassInfo) and made.path == cls.path

    def _next_method(self, func: FunctionValue) -> FunctionValue | None:
        """The method `super().<name>` reaches from a method of a class: the same name in the next class
        of that class's MRO that defines it (a plain function there, else None)."""
        owner_path, _, name = func.path.rpartition(".")
        owner = self.lookup(owner_path)
        if not isinstance(owner, ClassValue):
            return None
        mro = self.mro(owner.info)
        if mro is None:
            return None
        for entry in mro[1:]:
            if isinstance(entry, str):
                return None
            member = entry.members.get(name)
            if member is not None:
                found = self._member_value(member, f"{entry.path}.{name}", func.via)
                return found if isinstance(found, FunctionValue) else None
        return None


# `Callable[Concatenate[X, P], R]` (any prefix on the names): X, the first argument such a callable gets.
_CONCATENATE_FIRST = re.compile(
    r"^[\s\"']*(?:[\w.]*\.)?Callable\[\s*(?:[\w.]*\.)?Concatenate\[\s*([A-Za-z_][\w.]*)\s*,"
)


def _slot_parameter(params: tuple[Parameter, ...], slot: str) -> Parameter | None:
    """The parameter an argument at `slot` binds to ("", "@N": positional N; "=name": keyword)."""
    if slot.startswith("="):
        name = slot[1:]
        found = next((p for p in params if p.name == name), None)
        if found is None or found.kind is ParamKind.POSITIONAL_ONLY:
            return None
        return found
    index = int(slot[1:]) if slot.startswith("@") else 0
    positional = [p for p in params if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)]
    return positional[index] if index < len(positional) else None


_HANDED_VIA = re.compile(r"handed:(\d+)(.*)")
_DOTTED = re.compile(r"[A-Za-z_][\w.]*")


def _callable_arguments(annotation: str) -> tuple[str, ...] | None:
    """The argument types of `Callable[[A, B], R]` (also `typing.Callable`, `collections.abc.Callable`,
    in quotes, inside `Optional[...]` or `X | None`), as source text; None for another annotation."""
    text = annotation.strip().strip("\"'")
    if not text or len(text) > 2000:
        return None
    try:
        node = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # `Callable[...] | None`
        sides = [s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        node = sides[0] if len(sides) == 1 else node
    if isinstance(node, ast.Subscript) and ast.unparse(node.value).rpartition(".")[2] == "Optional":
        node = node.slice
    if not (isinstance(node, ast.Subscript) and ast.unparse(node.value).rpartition(".")[2] == "Callable"):
        return None
    parts = node.slice
    if not (isinstance(parts, ast.Tuple) and len(parts.elts) == 2 and isinstance(parts.elts[0], ast.List)):
        return None
    return tuple(ast.unparse(e) for e in parts.elts[0].elts)


def _typevar_bound(value: str) -> str | None:
    """The bound of `TypeVar("T", bound=X)` (or `bound="X"`), when it names one class plainly."""
    try:
        node = ast.parse(value, mode="eval").body if value and len(value) < 500 else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not (isinstance(node, ast.Call) and ast.unparse(node.func).rpartition(".")[2] == "TypeVar"):
        return None
    if len(node.args) != 1:  # constrained TypeVars (`TypeVar("T", A, B)`) name no one class
        return None
    bound = next((k.value for k in node.keywords if k.arg == "bound"), None)
    if isinstance(bound, ast.Constant) and isinstance(bound.value, str):
        text = bound.value.split("[", 1)[0].strip()  # `"CallbackContext[Any, Any]"`: the class
    elif isinstance(bound, (ast.Name, ast.Attribute)):
        text = ast.unparse(bound)
    elif isinstance(bound, ast.Subscript) and isinstance(bound.value, (ast.Name, ast.Attribute)):
        text = ast.unparse(bound.value)
    else:
        return None
    return text if _DOTTED.fullmatch(text) else None


# The method a protocol calls on the instance (see ItemRef).
_PROTOCOL_METHODS = {"item": "__getitem__", "iter": "__iter__", "next": "__next__", "enter": "__enter__"}
# Builtin value types whose members the interpreter's own types tell (never an object of the code read).
_BUILTIN_VALUE_TYPES: dict[str, type] = {
    f"builtins.{t.__name__}": t
    for t in (str, bytes, bytearray, int, float, complex, bool, list, dict, tuple, set, frozenset)
}
# A return annotation that means the instance itself.
_SELF_TYPES = frozenset({"typing.Self", "typing_extensions.Self"})


def _mro_key(entry: ClassInfo | str) -> str:
    return entry if isinstance(entry, str) else entry.path


_MAX_LITERAL = 20_000  # characters of a decorator's literal argument read to expand the names it adds


def _names_added(info: FunctionInfo, decorator: Decorator) -> set[str] | None:
    """The names a class decorator that `setattr`s can add, from its name patterns and the literal
    arguments written at the decoration (`@define_aliases({"linewidth": ["lw"]})`); None when unknown."""
    if info.added_names is None:
        return None
    arguments: dict[str, object] = {}
    params = [
        p.name
        for p in info.signature.parameters
        if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL_OR_KEYWORD)
    ]
    texts = list(zip(params, decorator.literals)) if decorator.called else []
    texts += [(k, v) for k, v in decorator.keywords.items()] if decorator.called else []
    for param, text in texts:
        if len(text) > _MAX_LITERAL:
            continue
        try:
            arguments[param] = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return expand_names([list(p) for p in info.added_names], arguments)
