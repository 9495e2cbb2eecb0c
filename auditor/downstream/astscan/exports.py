"""What a module of the downstream hands to its other modules (`downstream.linking` reads it): for each
module-level name, the value it holds, what calling a function gives, and for each class what its
instances' attributes and properties hold; in terms of upstream references or of references to the
downstream's own modules (resolved once every file is scanned). Read through the file's evaluator, with
the in-file rules: a name's bindings must agree, a function's returns must agree (else, where one of
them may be an upstream object, the entry says why it is not followed)."""

from __future__ import annotations

from typing import Any

from apidrift.auditor.core.refs import AttrRef, InstanceRef, ModuleRef, Ref, root_module
from apidrift.auditor.downstream.astscan.evaluator import _Evaluator
from apidrift.auditor.downstream.astscan.values import (
    _NONE,
    _ClassScope,
    _DownClass,
    _DownFunction,
    _Scope,
    _SelfOf,
    _Value,
)
from apidrift.auditor.downstream.linking import Entry, Exports
from apidrift.auditor.downstream.shared import REFS

# Entries of a module's summary at most (a generated module of thousands of names keeps the first)
MAX_EXPORTS = 2000
# Attributes of one class at most
MAX_MEMBERS = 300


class _Exporter:
    def __init__(
        self,
        evaluator: _Evaluator,
        module: str,
        reaching: frozenset[str],
        classes: list[tuple[str, _ClassScope]],
        decorated: dict[str, _DownFunction],
    ) -> None:
        self.decorated = decorated
        self.evaluator = evaluator
        self.module = module
        self.reaching = reaching
        # The module-level classes, by their scope: the name other modules reach them by
        self.names: dict[int, str] = {
            id(cls): name for name, cls in classes if cls.parent is not None and cls.parent.parent is None
        }

    def summary(self, module_scope: _Scope) -> Exports:
        out: dict[str, Entry] = {}
        evaluator = self.evaluator
        for name, bindings in module_scope.bindings.items():
            if len(out) >= MAX_EXPORTS:
                break
            evaluator.reach, evaluator.position = None, None
            if len(bindings) == 1 and isinstance(bindings[0].value, _DownClass):
                cls = bindings[0].value.cls
                if self.names.get(id(cls)) == name:
                    entry = self._class(cls)
                    if entry is not None:
                        out[name] = entry
                    continue
            entry = self.entry(evaluator._unique(bindings), 0)
            function = self.decorated.get(name)
            if entry is None and function is not None and len(bindings) == 1:
                # under a decorator not followed: calling it may give anything; counted where it may be upstream
                entry = ("f", self._returned(function, 0), function.is_async)
            if entry is not None:
                out[name] = entry
        return out

    def entry(self, value: _Value, depth: int) -> Entry | None:
        if isinstance(value, REFS):
            return ("v", value) if root_module(value) in self.reaching else None
        if isinstance(value, (_SelfOf, _DownClass)):
            name = self.names.get(id(value.cls))
            if name is None:
                return None
            cls = AttrRef(ModuleRef(self.module), name)
            return ("v", InstanceRef(cls) if isinstance(value, _SelfOf) else cls)
        if isinstance(value, _DownFunction) and depth < 3:
            return ("f", self._returned(value, depth), value.is_async)
        return None

    def _returned(self, function: _DownFunction, depth: int) -> Entry | None:
        """What calling the function gives, as the file's own uses read it (`_Evaluator.returned`); where
        that is unknown but one of its returns may be an upstream object, why it is not followed."""
        evaluator = self.evaluator
        if function.followed:
            agreed = self.entry(evaluator.returned(function), depth + 1)
            if agreed is not None:
                return agreed
        found = []
        for index, expression in enumerate(function.returns[:20]):
            if expression == _NONE:
                continue
            evaluator.reach = function.reaches[index] if index < len(function.reaches) else None
            value = evaluator.expression(expression, function.scope)
            if isinstance(value, REFS) and root_module(value) in self.reaching:
                found.append(value)
        evaluator.reach = None
        if not found:
            return None
        why = (
            "generator"
            if function.generator
            else "decorated"
            if not function.followed
            else "returns-disagree"
        )
        return ("u", why, tuple(dict.fromkeys(found)))

    def _class(self, cls: _ClassScope) -> Entry | None:
        evaluator = self.evaluator
        instance: dict[str, Entry] = {}
        members: dict[str, Entry] = {}
        every = list(dict.fromkeys((*cls.self_attributes, *cls.bindings)))
        names = every[:MAX_MEMBERS]
        for name in names:
            evaluator.reach, evaluator.position = None, None
            entry = self.entry(evaluator.attribute(_SelfOf(cls), name), 0)
            if entry is not None:
                instance[name] = entry
            if name in cls.bindings:
                entry = self.entry(evaluator.attribute(_DownClass(cls), name), 0)
                if entry is not None:
                    members[name] = entry
        base = evaluator.single_base(cls) if cls.bases else None
        base_ref: Ref | None = None
        if isinstance(base, _DownClass):
            base_name = self.names.get(id(base.cls))
            base_ref = AttrRef(ModuleRef(self.module), base_name) if base_name is not None else None
        elif isinstance(base, REFS) and root_module(base) in self.reaching:
            base_ref = base
        # Closed: any other attribute of an instance is its base's (or none); else it is not followed
        closed = not (
            len(every) > MAX_MEMBERS
            or cls.decorated
            or cls.any_keywords
            or (cls.bases and base_ref is None)
            or "__getattr__" in cls.methods
            or "__getattribute__" in cls.methods
        )
        if not instance and not members and base_ref is None:
            return None
        return ("k", instance, members, base_ref, closed, frozenset(names), _constructor(cls))


def _constructor(cls: _ClassScope) -> Any:
    """What calling the class runs of its own (`linking.Constructor`): "inherit" (no `__init__` nor
    `__new__`: its base's), a `Forwarding` (`__init__(self, ..., **kwargs)` handing them on to
    `super().__init__`), "own" (another constructor of its own) or "decorated" (not followed)."""
    if cls.decorated:
        return "decorated"
    if "__new__" in cls.methods:
        return "own"
    init = cls.methods.get("__init__")
    if init is None:
        return "inherit"
    return init.forwarding if init.forwarding is not None else "own"


def module_exports(
    evaluator: _Evaluator,
    module: str,
    reaching: frozenset[str],
    module_scope: _Scope,
    classes: list[tuple[str, _ClassScope]],
    decorated: dict[str, _DownFunction],
) -> Exports:
    """The summary of one module (see `downstream.linking.Exports`)."""
    return _Exporter(evaluator, module, reaching, classes, decorated).summary(module_scope)
