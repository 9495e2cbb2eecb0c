"""What an expression's value is: names, attributes and calls turned into upstream `Ref`s through the
collected bindings, inheritance through downstream classes, and annotations."""

from __future__ import annotations

import libcst as cst

from apidrift.auditor.core.refs import (
    AttrRef,
    CallRef,
    InstanceRef,
    ModuleRef,
    Ref,
    StarRef,
    root_module,
)
from apidrift.auditor.downstream.scan.collector import _chain
from apidrift.auditor.downstream.scan.forwarding import _assigns_name, _forwarding, _kwargs_call
from apidrift.auditor.downstream.scan.nodes import _dotted, _is_trivial_base
from apidrift.auditor.downstream.scan.values import (
    _Binding,
    _ClassScope,
    _DownClass,
    _method_owner,
    _Scope,
    _SelfOf,
    _SuperOf,
    _Value,
)
from apidrift.auditor.downstream.shared import REFS, Forwarding, is_builtin


class _Evaluator:
    """Turns expressions into `Ref`s through the collected bindings; memoized, cycle-safe."""

    def __init__(
        self,
        bound_anywhere: frozenset[str] = frozenset(),
        stores: set[tuple[int, tuple[object, ...], str]]
        | frozenset[tuple[int, tuple[object, ...], str]] = frozenset(),
    ) -> None:
        self.stores = stores  # (scope, base chain, attribute) the file assigns (see astscan's evaluator)
        self._active: set[int] = set()
        self._memo: dict[int, _Value] = {}  # binding -> its value: each binding is evaluated once
        self.bound_anywhere = bound_anywhere  # every name the file binds, however (for star imports)

    def name(self, name: str, scope: _Scope) -> _Value:
        current: _Scope | None = scope
        module = scope
        while current is not None:
            bindings = current.bindings.get(name)
            if bindings:
                value = self._unique(bindings)
                if isinstance(value, InstanceRef) and name in current.narrowed:
                    return None  # `isinstance(x, Sub)` narrows x: its annotation no longer says what x is
                return value
            module = current
            current = current.parent
        stars = module.star_modules
        if stars and None not in stars and name not in self.bound_anywhere and not is_builtin(name):
            return StarRef(tuple(s for s in stars if s is not None), name)  # only a star import can bind it
        return None

    def _unique(self, bindings: list[_Binding]) -> _Value:
        """The one value all of a name's bindings agree on; None as soon as one is unknown or differs.
        A binding under `if TYPE_CHECKING:` never runs: where the name is also bound otherwise, only
        the bindings that run count (`Base = up.Client` for the checker, `Base = _Wrapper` at run time)."""
        running = [b for b in bindings if not b.type_checking]
        if running and len(running) < len(bindings):
            bindings = running
        first: _Value = None
        seen = False
        for binding in bindings:
            if isinstance(binding.expression, cst.Name) and binding.expression.value == "None":
                continue  # `x = None` then `x = Cls()`: uses of x's attributes mean the instance
            value = self.binding(binding)
            if value is None or (seen and value != first):
                return None
            first, seen = value, True
        return first

    def binding(self, binding: _Binding) -> _Value:
        key = id(binding)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return None  # a cycle (`x = x.parent`): unknown
        self._active.add(key)
        try:
            value = self._evaluate(binding)
        finally:
            self._active.discard(key)
        self._memo[key] = value
        return value

    def _evaluate(self, binding: _Binding) -> _Value:
        if binding.value is not None:
            return binding.value
        if binding.annotation is not None:
            cls = self.annotation(binding.annotation, binding.scope)
            if isinstance(cls, _DownClass):
                return _SelfOf(cls.cls)  # an instance of a downstream class (or of a subclass)
            return InstanceRef(cls) if cls is not None else None
        if binding.expression is not None:
            return self.expression(binding.expression, binding.scope)
        return None

    def _stored(self, base: cst.BaseExpression, name: str, scope: _Scope) -> bool:
        chain = _chain(base)
        if chain is None:
            return False
        current: _Scope | None = scope
        while current is not None:
            if (id(current), chain, name) in self.stores:
                return True
            current = current.parent
        owner = _method_owner(scope)
        return owner is not None and (id(owner), chain, name) in self.stores

    def expression(self, node: cst.BaseExpression, scope: _Scope) -> _Value:
        if isinstance(node, cst.Name):
            return self.name(node.value, scope)
        if isinstance(node, cst.Attribute):
            base = self.expression(node.value, scope)
            if self.stores and isinstance(base, REFS) and self._stored(node.value, node.attr.value, scope):
                return None  # `r.mix_stderr = True` then `r.mix_stderr`: what the downstream stored
            return self.attribute(base, node.attr.value)
        if isinstance(node, cst.Call):
            if _dotted(node.func) == "super" and not node.args:
                owner = _method_owner(scope)
                return _SuperOf(owner) if owner is not None else None
            func = self.expression(node.func, scope)
            if isinstance(func, _DownClass):
                return _SelfOf(func.cls)
            if func is None or isinstance(func, (_SelfOf, _SuperOf)):
                return None
            return CallRef(func)
        if isinstance(node, cst.NamedExpr):
            return self.expression(node.value, scope)
        return None

    def attribute(self, base: _Value, name: str) -> _Value:
        if isinstance(base, _SelfOf):
            bindings = base.cls.self_attributes.get(name)
            if bindings:
                return self._unique(bindings)
            return self._class_member(base.cls, name, instance=True)
        if isinstance(base, _DownClass):
            return self._class_member(base.cls, name, instance=False)
        if isinstance(base, _SuperOf):
            parent = self.single_base(base.cls)
            if isinstance(parent, _DownClass):
                return self._class_member(parent.cls, name, instance=True)
            return AttrRef(InstanceRef(parent), name) if parent is not None else None
        if base is None:
            return None
        return AttrRef(base, name)

    def _class_member(self, cls: _ClassScope, name: str, *, instance: bool) -> _Value:
        """A member of a downstream class: its own, else inherited from its one upstream base."""
        own = cls.bindings.get(name)
        if own:
            return None if name in cls.methods else self._unique(own)
        if name in cls.self_attributes:
            return None
        parent = self.single_base(cls)
        if isinstance(parent, _DownClass):
            return self._class_member(parent.cls, name, instance=instance)
        if parent is None:
            return None
        return AttrRef(InstanceRef(parent) if instance else parent, name)

    def single_base(self, cls: _ClassScope) -> Ref | _DownClass | None:
        """The one base a downstream class has (besides object and typing helpers), when it has one."""
        assert cls.node is not None and cls.parent is not None
        bases = [a.value for a in cls.node.bases if a.keyword is None and not _is_trivial_base(a.value)]
        if len(bases) != 1 or any(a.keyword is not None for a in cls.node.keywords):
            return None
        value = self.expression(bases[0], cls.parent)
        return value if isinstance(value, (AttrRef, ModuleRef, _DownClass)) else None

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
            node = current.node
            assert node is not None
            if node.decorators or "__new__" in current.methods:
                return None
            init = current.methods.get("__init__")
            if init is not None:
                if forwarding is not None:
                    return None  # forwarding through forwarding: not followed
                forwarding = _forwarding(init)
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
        node = cls.node
        if node is None or cls.parent is None or node.decorators or "__new__" in cls.methods:
            return None
        if any(not _is_trivial_base(a.value) or a.keyword is not None for a in node.bases) or node.keywords:
            return None
        init = cls.methods.get("__init__")
        found = _kwargs_call(init) if init is not None else None
        if init is None or found is None:
            return None
        call, forwarding = found
        callee = self.expression(call.func, cls.parent)
        if not isinstance(callee, (AttrRef, ModuleRef)) or root_module(callee) not in upstream_names:
            return None
        if _assigns_name(init, _dotted(call.func) or ""):
            return None  # the name the callee is read through is rebound in `__init__`: not the module's
        return callee, forwarding

    def annotation(self, node: cst.BaseExpression, scope: _Scope) -> Ref | _DownClass | None:
        """The class an annotation names: `C`, `mod.C`, `"C"`, `Optional[C]`, `C | None`."""
        if isinstance(node, cst.SimpleString):
            try:
                parsed = cst.parse_expression(node.evaluated_value)  # type: ignore[arg-type]  # bytes: TypeError, below
            except (cst.ParserSyntaxError, TypeError, ValueError):
                return None
            return self.annotation(parsed, scope)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            sides = [
                s for s in (node.left, node.right) if not (isinstance(s, cst.Name) and s.value == "None")
            ]
            return self.annotation(sides[0], scope) if len(sides) == 1 else None
        if isinstance(node, cst.Subscript):
            head = _dotted(node.value)
            if head in ("Optional", "typing.Optional", "t.Optional") and len(node.slice) == 1:
                element = node.slice[0].slice
                if isinstance(element, cst.Index):
                    return self.annotation(element.value, scope)
            return None
        if isinstance(node, (cst.Name, cst.Attribute)):
            value = self.expression(node, scope)
            return value if isinstance(value, (ModuleRef, AttrRef, _DownClass)) else None
        return None
