"""Evaluate a downstream reference (`Ref`) against one upstream `ApiIndex`: a value, a certain miss, or unknown.

Follows re-exports and aliases, submodules, star imports, class bases (C3 MRO) and instance types
(constructor calls, annotations, return annotations). Every answer is three-valued: `Missing` only
when the miss is certain; anything the analysis cannot see through is `Unknown(reason)`
(the reasons are in `auditor.reasons`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from apidrift.auditor.upstream.api_index import ApiIndex
from apidrift.auditor.upstream.model import AliasInfo, AttributeInfo, ClassInfo, FunctionInfo, Member, ModuleInfo
from apidrift.auditor.downstream.refs import AttrRef, CallRef, InstanceRef, ModuleRef, Ref
from apidrift.auditor.reasons import Reason, Unknown

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


# Metaclasses whose `__call__` is type's own.
PLAIN_METACLASSES = frozenset({"builtins.type", "abc.ABCMeta"})
# Enum classes: class-level access finds the members the body defines and this API, nothing else.
ENUM_BASES = frozenset({"enum.Enum", "enum.Flag"})
ENUM_CLASS_API = frozenset(
    {"name", "value", "_name_", "_value_", "_missing_", "_generate_next_value_", "_member_names_", "_member_map_",
     "_value2member_map_", "_ignore_", "_order_", "_numeric_repr_", "_boundary_", "_iter_member_", "mro"}
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


@dataclass(frozen=True)
class AttributeValue:
    info: AttributeInfo
    path: str
    on_instance: bool = False


@dataclass(frozen=True)
class ExternalValue:
    """A name that exists, but lives outside the upstream (an import of typing, torch, ...)."""

    path: str


@dataclass(frozen=True)
class Missing:
    owner: str  # dotted path of the module or class searched
    name: str
    owner_kind: str  # "module", "class" or "instance"
    # For instances: built by a constructor call here (exact), or only typed by an annotation, where a
    # subclass instance could carry the attribute.
    exact: bool = True


Value = Union[ModuleValue, ClassValue, FunctionValue, InstanceValue, AttributeValue, ExternalValue]
Resolution = Union[Value, Missing, Unknown]


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

    # -- references -------------------------------------------------------------------------------

    def resolve(self, ref: Ref) -> Resolution:
        if ref not in self._memo:
            self._memo[ref] = self._resolve(ref)
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
            if isinstance(func, (Missing, Unknown)):
                return Unknown(Reason.CALLEE_UNRESOLVED)
            return self.call_result(func)
        if isinstance(ref, InstanceRef):
            cls = self.resolve(ref.cls)
            if isinstance(cls, ClassValue):
                return InstanceValue(cls.info, exact=False)
            if isinstance(cls, ExternalValue):
                return Unknown(Reason.EXTERNAL_CLASS)
            return Unknown(Reason.ANNOTATION_NOT_A_CLASS)
        raise TypeError(ref)

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
            assigned = self.assigned_value(base)
            if isinstance(assigned, (Missing, Unknown)):
                return Unknown(Reason.UNTYPED_ATTRIBUTE)
            return self.attribute(assigned, name)
        if isinstance(base, ExternalValue):
            return Unknown(Reason.EXTERNAL)
        return Unknown(Reason.ATTRIBUTE_OF_FUNCTION)

    def _module_attribute(self, module: ModuleInfo, name: str, seen: frozenset[str] = frozenset()) -> Resolution:
        member = module.members.get(name)
        if member is not None:
            if name in module.rebound:
                return Unknown(Reason.DEFINED_MORE_THAN_ONCE)  # bound for sure, but which definition runs?
            return self._member_value(member, f"{module.path}.{name}", None)
        submodule = f"{module.path}.{name}"
        if self.index.is_compiled(submodule):
            return Unknown(Reason.COMPILED_MODULE)
        if self.index.module(submodule) is not None:
            return ModuleValue(self.index.module(submodule))  # type: ignore[arg-type]
        if name.startswith("__") and name.endswith("__"):
            return Unknown(Reason.MODULE_DUNDER)
        # A star import binds its names for certain, whatever else the module does; when several
        # provide one, the last import wins, as in Python.
        unsure: Unknown | None = None
        for star in reversed(module.star_imports):
            if star in seen or not self.index.owns(star):
                unsure = unsure or Unknown(Reason.STAR_IMPORT)
                continue
            source = self.index.module(star)
            if source is None:
                unsure = unsure or Unknown(Reason.STAR_IMPORT)
                continue
            if (source.exports is not None and name not in source.exports) or (
                source.exports is None and name.startswith("_")
            ):
                continue
            found = self._module_attribute(source, name, seen | {module.path})
            if isinstance(found, Unknown):
                unsure = unsure or found
            elif not isinstance(found, Missing):
                return found
        if name in module.bound_names:
            return Unknown(Reason.DYNAMIC_BINDING)
        if module.dynamic_namespace:
            return Unknown(Reason.MODULE_GETATTR)
        if unsure is not None:
            return unsure
        return Missing(module.path, name, "module")

    def _class_attribute(self, cls: ClassInfo, name: str, *, on_instance: bool, exact: bool = True) -> Resolution:
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
                return self._member_value(member, f"{entry.path}.{name}", "instance" if on_instance else "class")
            if on_instance and name in entry.instance_attributes:
                return Unknown(Reason.INSTANCE_ATTRIBUTE)  # set in a method: type unknown, existence certain
        if name.startswith("__") and name.endswith("__"):
            return Unknown(Reason.DUNDER)
        for entry in mro:
            if isinstance(entry, str):
                continue
            if entry.dynamic_attributes or "__getattr__" in entry.members or "__getattribute__" in entry.members:
                return Unknown(Reason.CLASS_GETATTR)
            for decorator in entry.decorators:  # `@_define_aliases({...})` setattr()s methods on the class
                if decorator.path.startswith("?") or not self.index.owns(decorator.path):
                    continue
                target = self.lookup(decorator.path)
                if isinstance(target, FunctionValue) and target.info.adds_attributes:
                    return Unknown(Reason.DECORATOR_ADDS_ATTRIBUTES, decorator.path)
        if not on_instance and any(isinstance(e, ClassInfo) and e.metaclass for e in mro):
            return Unknown(Reason.METACLASS_ATTRIBUTE)
        return Missing(cls.path, name, "instance" if on_instance else "class", exact or not on_instance)

    def _member_value(self, member: Member, path: str, via: str | None) -> Resolution:
        if isinstance(member, AliasInfo):
            target = self.lookup(member.target)
            if isinstance(target, Missing):
                return Unknown(Reason.BROKEN_ALIAS)  # e.g. a TYPE_CHECKING-only or optional import
            return target
        if isinstance(member, ClassInfo):
            return ClassValue(member)
        if isinstance(member, FunctionInfo):
            if member.has_decorator("builtins.property", "functools.cached_property"):
                return AttributeValue(
                    AttributeInfo(
                        member.name, member.signature.returns, member.returns_path, deprecated=member.deprecated
                    ),
                    path,
                    on_instance=via == "instance",
                )
            return FunctionValue(member, path, via)
        return AttributeValue(member, path, on_instance=via == "instance")

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

    def _annotated_class(self, attribute: AttributeInfo) -> ClassInfo | None:
        if not attribute.annotation_path:
            return None
        target = self.lookup(attribute.annotation_path)
        return target.info if isinstance(target, ClassValue) else None

    # -- classes ----------------------------------------------------------------------------------

    def mro(self, cls: ClassInfo) -> list[ClassInfo | str] | None:
        """C3 linearization; a base outside the upstream stays in it as its path (opaque)."""
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
            target = self.lookup(base) if not base.startswith("?") else None
            if isinstance(target, ClassValue):
                base_mro = self.mro(target.info)
                if base_mro is None:
                    return None
                sequences.append(list(base_mro))
                direct.append(target.info)
            else:
                sequences.append([base])
                direct.append(base)
        sequences.append(list(direct))
        result: list[ClassInfo | str] = [cls]
        key = _mro_key
        while any(sequences):
            for sequence in sequences:
                if not sequence:
                    continue
                head = sequence[0]
                if not any(key(head) in map(key, s[1:]) for s in sequences):
                    break
            else:
                return None  # inconsistent hierarchy: Python would refuse the class
            result.append(head)
            sequences = [s[1:] if s and key(s[0]) == key(head) else s for s in sequences]
        return result

    # -- calls ------------------------------------------------------------------------------------

    def plain_metaclass(self, path: str) -> bool:
        """A metaclass that leaves `type.__call__` in charge: neither it nor its bases define `__call__`."""
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
            elif "__call__" in entry.members:
                return False
        return True

    def call_result(self, func: Value) -> Resolution:
        """What calling a value returns, when that is certain enough to follow."""
        if isinstance(func, ClassValue):
            if func.info.metaclass and not self.plain_metaclass(func.info.metaclass):
                return Unknown(Reason.METACLASS)
            return InstanceValue(func.info, exact=True)
        if isinstance(func, FunctionValue) and func.info.returns_path:
            target = self.lookup(func.info.returns_path)
            if isinstance(target, ClassValue):
                return InstanceValue(target.info, exact=False)
            return Unknown(Reason.RETURN_NOT_A_CLASS)
        return Unknown(Reason.UNKNOWN_RETURN)


def _mro_key(entry: ClassInfo | str) -> str:
    return entry if isinstance(entry, str) else entry.path
