"""Scan one downstream file with libcst: every import, attribute use and call that reaches an upstream.

The audit scans with `astscan` (CPython's parser); this scanner reads only the files CPython's parser
refuses (a newer grammar, or a syntax error it then locates), and tests/test_scanner_parity.py
checks that both give the same sites wherever both parse.

Input: a file's text and the upstream's top-level import names. Output: a `FileScan` value holding
`UseSite`s, each with a version-independent `Ref` (see `refs`), the call's shape and exact positions.
Local data flow is followed where it is unambiguous: imports and aliases, `x = Cls(...)`,
`self.x = ...` in any method, annotations of parameters and variables, and return annotations.
A name bound more than one way in a scope is not followed (no guessing).
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Union

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from apidrift.auditor.check.bind import CallShape, Ok, bind
from apidrift.auditor.downstream.refs import (
    AttrRef,
    CallRef,
    InstanceRef,
    ModuleRef,
    Ref,
    StarRef,
    root_module,
)
from apidrift.auditor.downstream.sites import FileScan, SiteKind, Span, UseSite
from apidrift.auditor.upstream.signature import Parameter, ParamKind, Signature

# Exceptions whose handler makes a use "guarded": the code expects it may not exist or bind.
GUARD_EXCEPTIONS = frozenset(
    {
        "ImportError",
        "ModuleNotFoundError",
        "AttributeError",
        "TypeError",
        "Exception",
        "BaseException",
        "NameError",
    }
)


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


_Value = Union[Ref, _SelfOf, _DownClass, _SuperOf, None]


@dataclass(eq=False)
class _Scope:
    parent: _Scope | None
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)
    is_class: bool = False
    narrowed: set[str] = field(default_factory=set)  # names tested with isinstance(): types not followed
    owner: _ClassScope | None = None  # for a method's scope: its class (what `super()` refers to)
    # For the module scope: its star imports in order, the upstream module each reads (None for one the
    # analysis cannot follow: not upstream, relative, nested in a block, or names made by globals()/exec).
    star_modules: list[str | None] | None = None
    type_checking: int = 0  # inside how many `if TYPE_CHECKING:` bodies the collector is, in this scope

    def bind(self, name: str, binding: _Binding) -> None:
        binding.type_checking = self.type_checking > 0
        self.bindings.setdefault(name, []).append(binding)


@dataclass(eq=False)
class _ClassScope(_Scope):
    self_attributes: dict[str, list[_Binding]] = field(default_factory=dict)
    node: cst.ClassDef | None = None
    methods: dict[str, cst.FunctionDef] = field(default_factory=dict)


@dataclass(eq=False)
class _Binding:
    """How a name got its value: a ready value, an expression to evaluate, or an annotation."""

    scope: _Scope
    value: _Value = None
    expression: cst.BaseExpression | None = None
    annotation: cst.BaseExpression | None = None
    type_checking: bool = False  # made under `if TYPE_CHECKING:`: never runs


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, upstream_names: frozenset[str]) -> None:
        self.upstream_names = upstream_names
        self.module_scope = _Scope(None)
        self.scopes: list[_Scope] = [self.module_scope]
        self.candidates: list[_Candidate] = []
        self.parents: list[cst.CSTNode] = []
        self.guard_depth = 0
        self.method_self: list[tuple[str, _ClassScope] | None] = []
        self.version_names: set[str] = set()  # names computed from a version or feature test
        # Names an `except ImportError:` fallback binds (`f = None`, `HAS_X = False`): a test of one
        # (`if f is not None:`) guards what it holds, as the code handles the import's failure there.
        self.fallback_names: set[str] = set()
        self.import_fallback_depth = 0
        # Attributes assigned or deleted (targets are seen before their children are visited), kept
        # here rather than asking LibCST's expression-context pass, which costs a quarter of a scan.
        self.stored: set[int] = set()
        self.guarding_ifs: set[int] = set()

    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    def _candidate(self, kind: str, node: cst.CSTNode, extra: str | None = None) -> None:
        self.candidates.append(_Candidate(kind, node, self.scope, self.guard_depth > 0, extra))

    # -- structure --------------------------------------------------------------------------------

    def on_visit(self, node: cst.CSTNode) -> bool:
        handler = getattr(self, f"visit_{type(node).__name__}", None)
        result = handler(node) if handler else True
        self.parents.append(node)
        return result is not False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.parents.pop()
        handler = getattr(self, f"leave_{type(original_node).__name__}", None)
        if handler:
            handler(original_node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        cls = _ClassScope(self.scope, is_class=True, node=node)
        self.scope.bind(node.name.value, _Binding(self.scope, value=_DownClass(cls)))
        self.scopes.append(cls)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        cls = self.scopes.pop()
        self.candidates.append(_Candidate("class", node, cls, self.guard_depth > 0))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        outer = self.scope
        outer.bind(node.name.value, _Binding(outer))
        # Names in a function resolve in enclosing functions and the module, never in a class body.
        parent = outer
        while parent.is_class and parent.parent is not None:
            parent = parent.parent
        scope = _Scope(parent, owner=outer if isinstance(outer, _ClassScope) else None)
        if isinstance(outer, _ClassScope):
            outer.methods[node.name.value] = node
        params = node.params
        ordered = [*params.posonly_params, *params.params]
        is_static = any(_decorator_name(d) == "staticmethod" for d in node.decorators)
        for index, param in enumerate([*ordered, *params.kwonly_params]):
            if index == 0 and isinstance(outer, _ClassScope) and not is_static and param in ordered:
                scope.bind(param.name.value, _Binding(scope, value=_SelfOf(outer)))
                self.method_self.append((param.name.value, outer))
            elif param.annotation is not None:
                scope.bind(param.name.value, _Binding(outer, annotation=param.annotation.annotation))
            else:
                scope.bind(param.name.value, _Binding(scope))
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.bind(star.name.value, _Binding(scope))
        if not (ordered and isinstance(outer, _ClassScope) and not is_static):
            self.method_self.append(None)
        self.scopes.append(scope)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.method_self.pop()
        self.scopes.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        scope = _Scope(self.scope)
        for param in [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]:
            scope.bind(param.name.value, _Binding(scope))
        self.scopes.append(scope)

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.scopes.pop()

    def _enter_comprehension(self, node: cst.BaseComp) -> None:
        scope = _Scope(self.scope)
        for_in: cst.CompFor | None = node.for_in
        while for_in is not None:
            for name in _target_names(for_in.target):
                scope.bind(name, _Binding(scope))
            for_in = for_in.inner_for_in
        self.scopes.append(scope)

    def _leave_comprehension(self, node: cst.BaseComp) -> None:
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _enter_comprehension
    leave_ListComp = leave_SetComp = leave_GeneratorExp = leave_DictComp = _leave_comprehension

    # -- guards -----------------------------------------------------------------------------------

    # The guarded body of a try, and the fallback in an `except ImportError` handler (it runs only when
    # the first import failed); the `else` and `finally` branches are not guarded.
    def visit_Try_body(self, node: cst.Try) -> None:
        if any(_handler_guards(h) for h in node.handlers):
            self.guard_depth += 1

    def leave_Try_body(self, node: cst.Try) -> None:
        if any(_handler_guards(h) for h in node.handlers):
            self.guard_depth -= 1

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        if _catches_import_error(node):
            self.guard_depth += 1
            self.import_fallback_depth += 1

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        if _catches_import_error(node):
            self.guard_depth -= 1
            self.import_fallback_depth -= 1

    # `with contextlib.suppress(ImportError, ...):` swallows what a guarded use may raise.
    def visit_With_body(self, node: cst.With) -> None:
        if _suppresses(node):
            self.guard_depth += 1

    def leave_With_body(self, node: cst.With) -> None:
        if _suppresses(node):
            self.guard_depth -= 1

    # Both branches of a feature or version test: each runs only where its side of the test holds.
    def visit_If(self, node: cst.If) -> None:
        if self._is_guard(node.test):
            self.guard_depth += 1
            self.guarding_ifs.add(id(node))

    def leave_If(self, node: cst.If) -> None:
        if id(node) in self.guarding_ifs:
            self.guard_depth -= 1

    def visit_If_body(self, node: cst.If) -> None:
        if _is_type_checking(node.test):
            self.scope.type_checking += 1

    def leave_If_body(self, node: cst.If) -> None:
        if _is_type_checking(node.test):
            self.scope.type_checking -= 1

    def _is_guard(self, test: cst.BaseExpression) -> bool:
        if _is_guard_test(test):
            return True
        names = {n.value for n in _names_in(test)}
        return bool(names & (self.version_names | self.fallback_names))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in _NAME_MAKERS:
            stars = self.module_scope.star_modules = self.module_scope.star_modules or []
            stars.append(None)  # names bound by code: a name bound nowhere may still exist
        if _dotted(node.func) == "isinstance" and node.args and isinstance(node.args[0].value, cst.Name):
            self.scope.narrowed.add(node.args[0].value.value)  # its annotated type no longer holds
        self._candidate("call", node)

    # -- bindings ---------------------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            dotted = _dotted(alias.name)
            if dotted is None:
                continue
            if alias.asname is not None:
                name = _name_of(alias.asname.name)
                if name:
                    self.scope.bind(name, _Binding(self.scope, value=ModuleRef(dotted)))
            else:
                top = dotted.split(".")[0]
                self.scope.bind(top, _Binding(self.scope, value=ModuleRef(top)))
            if dotted.split(".")[0] in self.upstream_names:
                self._candidate("import-module", alias, dotted)
        return False  # the dotted names inside are not attribute uses

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = _dotted(node.module) if node.module is not None else None
        upstream = not node.relative and module is not None and module.split(".")[0] in self.upstream_names
        if upstream:
            self._candidate("import-from-module", node, module)
        if isinstance(node.names, cst.ImportStar):
            nested = any(isinstance(p, _BLOCKS) for p in self.parents)
            stars = self.module_scope.star_modules = self.module_scope.star_modules or []
            stars.append(module if upstream and not nested else None)
            return False
        for alias in node.names:
            name = _name_of(alias.name)
            if name is None:
                continue
            local = _name_of(alias.asname.name) if alias.asname is not None else name
            value = AttrRef(ModuleRef(module), name) if upstream and module else None
            if local:
                self.scope.bind(local, _Binding(self.scope, value=value))
            if upstream:
                self._candidate("import-name", alias, module)
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, node.value)
            if self.import_fallback_depth:
                self.fallback_names.update(n.value for n in _names_in(target.target))
        # `sqla_14 = _vers >= (1, 4)` where `_vers` came from `__version__`: a version flag.
        if self._is_guard(node.value) or _VERSIONISH.search(cst.Module([]).code_for_node(node.value)):
            for target in node.targets:
                self.version_names.update(n.value for n in _names_in(target.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.scope.bind(node.target.value, _Binding(self.scope, annotation=node.annotation.annotation))
        else:
            self._bind_target(node.target, None, node.annotation.annotation)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target, None)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self.scope.bind(node.target.value, _Binding(self.scope, expression=node.value))

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, None)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind_target(node.name.name, None)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self.scope.bind(item.name.value, _Binding(self.scope))  # rebound elsewhere: not followed

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self.scope.bind(item.name.value, _Binding(self.scope))

    def visit_Del(self, node: cst.Del) -> None:
        self._bind_target(node.target, None)

    def _bind_target(
        self,
        target: cst.BaseExpression,
        value: cst.BaseExpression | None,
        annotation: cst.BaseExpression | None = None,
    ) -> None:
        if isinstance(target, cst.Attribute):
            self.stored.add(id(target))
        if isinstance(target, cst.Name):
            self.scope.bind(target.value, _Binding(self.scope, expression=value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_target(element.value, None)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, None)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and self.method_self:
            current = self.method_self[-1]
            if current is not None and target.value.value == current[0]:
                attrs = current[1].self_attributes.setdefault(target.attr.value, [])
                attrs.append(_Binding(self.scope, expression=value, annotation=annotation))

    # -- use sites --------------------------------------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> None:
        parent = self.parents[-1] if self.parents else None
        if isinstance(parent, cst.Call) and parent.func is node:
            return
        if id(node) in self.stored:
            return  # `x.attr = ...` sets the attribute: no use of an existing one
        if isinstance(parent, cst.Attribute) and parent.value is node and id(parent) not in self.stored:
            return  # the outer attribute covers this one
        self._candidate("attribute", node)


class _Evaluator:
    """Turns expressions into `Ref`s through the collected bindings; memoized, cycle-safe."""

    def __init__(self, bound_anywhere: frozenset[str] = frozenset()) -> None:
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
        if stars and None not in stars and name not in self.bound_anywhere and not _is_builtin(name):
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

    def expression(self, node: cst.BaseExpression, scope: _Scope) -> _Value:
        if isinstance(node, cst.Name):
            return self.name(node.value, scope)
        if isinstance(node, cst.Attribute):
            return self.attribute(self.expression(node.value, scope), node.attr.value)
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
    ) -> tuple[Ref, _Forwarding | None] | None:
        """The upstream class whose constructor `cls(...)` runs: no class on the way defines one, except
        one `__init__(self, ..., **kwargs)` that hands its extra keywords on to `super().__init__`."""
        current: _ClassScope | None = cls
        forwarding: _Forwarding | None = None
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
    ) -> tuple[Ref, _Forwarding] | None:
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
        if found is None:
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
                parsed = cst.parse_expression(node.evaluated_value)  # type: ignore[arg-type]
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


_REFS = (ModuleRef, AttrRef, CallRef, InstanceRef, StarRef)
# Decorators under which a method keeps the signature the upstream calls it with.
_OVERRIDE_DECORATORS = frozenset({"classmethod", "staticmethod", "override", "abstractmethod", "final"})


def scan_source(path: str, source: str, upstream_names: frozenset[str]) -> FileScan:
    """Find the use sites of one file. Raises libcst.ParserSyntaxError on a file it cannot parse."""
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    collector = _Collector(upstream_names)
    wrapper.visit(collector)
    positions = wrapper.resolve(PositionProvider)
    stars = collector.module_scope.star_modules
    evaluator = _Evaluator(_bound_names(source) if stars and None not in stars else frozenset())
    lines = tuple(source.splitlines())
    sites: list[UseSite] = []
    for candidate in collector.candidates:
        if candidate.kind == "class":
            assert isinstance(candidate.scope, _ClassScope)
            sites.extend(_override_sites(candidate.scope, evaluator, positions, upstream_names, lines))
            continue
        site = _site(candidate, evaluator, positions, upstream_names, lines)
        if site is not None:
            sites.append(site)
    return FileScan(path, tuple(sites), lines)


_BLOCKS = tuple(
    getattr(cst, n)
    for n in ("If", "Try", "TryStar", "With", "For", "While", "FunctionDef", "ClassDef", "Match")
    if hasattr(cst, n)
)
_NAME_MAKERS = frozenset({"globals", "vars", "locals", "exec", "eval", "__import__"})


# Builtins of other Python versions than the one running, and names tools install into builtins.
_OTHER_BUILTINS = frozenset(
    {
        "ExceptionGroup",
        "BaseExceptionGroup",
        "EncodingWarning",
        "aiter",
        "anext",
        "PythonFinalizationError",
        "_IncompleteInputError",
        "WindowsError",
        "unicode",
        "basestring",
        "long",
        "xrange",
        "unichr",
        "raw_input",
        "reduce",
        "file",
        "execfile",
        "reload",
        "cmp",
        "buffer",
        "reveal_type",
        "reveal_locals",
        "display",
        "get_ipython",
    }
)


def _is_builtin(name: str) -> bool:
    """A builtin (of any Python version), a dunder, or a private name (`_` is gettext's, installed into
    builtins): never taken for a name a star import binds."""
    return hasattr(builtins, name) or name in _OTHER_BUILTINS or name.startswith("_")


def _bound_names(source: str) -> frozenset[str]:
    """Every name a file binds anywhere, in any way (assignments, parameters of defs and lambdas,
    comprehension and match targets, imports, handlers, `global`): a name outside this set, and no
    builtin, can only come from a star import."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset({"*"})
    names: set[str] = {"*"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        elif type(node).__name__ in ("TypeVar", "ParamSpec", "TypeVarTuple"):
            names.add(node.name)  # type: ignore[attr-defined]
    return frozenset(names)


def _override_sites(
    cls: _ClassScope,
    evaluator: _Evaluator,
    positions: Mapping[cst.CSTNode, CodeRange],
    upstream_names: frozenset[str],
    lines: tuple[str, ...],
) -> list[UseSite]:
    """One site per method that overrides a method of the class's upstream base: the upstream calls it."""
    base = evaluator.upstream_base(cls, upstream_names)
    if base is None:
        return []
    sites = []
    for name, function in cls.methods.items():
        if name.startswith("__") and name.endswith("__"):
            continue
        decorators = {(_dotted(d.decorator) or "?").rsplit(".", 1)[-1] for d in function.decorators}
        if decorators - _OVERRIDE_DECORATORS or _defined_between(cls, name, evaluator):
            continue
        signature = _signature_of(function)
        if "staticmethod" not in decorators:
            signature = signature.bound()
        span = _span(positions[function.name])
        sites.append(
            UseSite(
                SiteKind.OVERRIDE,
                AttrRef(InstanceRef(base), name),
                span,
                f"def {name}(...)",
                signature=signature,
            )
        )
    return sites


def _defined_between(cls: _ClassScope, name: str, evaluator: _Evaluator) -> bool:
    """Whether a downstream class between `cls` and its upstream base already defines `name`."""
    parent = evaluator.single_base(cls)
    while isinstance(parent, _DownClass):
        if name in parent.cls.methods:
            return True
        parent = evaluator.single_base(parent.cls)
    return False


def _signature_of(function: cst.FunctionDef) -> Signature:
    code = cst.Module([]).code_for_node
    params: list[Parameter] = []

    def add(param: cst.Param, kind: ParamKind) -> None:
        default = code(param.default) if param.default is not None else None
        annotation = code(param.annotation.annotation) if param.annotation is not None else None
        params.append(Parameter(param.name.value, kind, param.default is not None, default, annotation))

    for param in function.params.posonly_params:
        add(param, ParamKind.POSITIONAL_ONLY)
    for param in function.params.params:
        add(param, ParamKind.POSITIONAL_OR_KEYWORD)
    if isinstance(function.params.star_arg, cst.Param):
        add(function.params.star_arg, ParamKind.VAR_POSITIONAL)
    for param in function.params.kwonly_params:
        add(param, ParamKind.KEYWORD_ONLY)
    if isinstance(function.params.star_kwarg, cst.Param):
        add(function.params.star_kwarg, ParamKind.VAR_KEYWORD)
    return Signature(tuple(params))


@dataclass(frozen=True)
class _Candidate:
    kind: str
    node: cst.CSTNode
    scope: _Scope
    guarded: bool
    module: str | None = None  # for imports: the module imported from


def _site(
    candidate: _Candidate,
    evaluator: _Evaluator,
    positions: Mapping[cst.CSTNode, CodeRange],
    upstream_names: frozenset[str],
    lines: tuple[str, ...],
) -> UseSite | None:
    node, guarded = candidate.node, candidate.guarded
    span = _span(positions[node])
    if candidate.kind == "import-module" and candidate.module:
        return UseSite(
            SiteKind.IMPORT, ModuleRef(candidate.module), span, _code(lines, span), guarded=guarded
        )
    if candidate.kind == "import-from-module" and candidate.module:
        assert isinstance(node, cst.ImportFrom) and node.module is not None
        return UseSite(
            SiteKind.IMPORT,
            ModuleRef(candidate.module),
            _span(positions[node.module]),
            _code(lines, span),
            guarded=guarded,
        )
    if candidate.kind == "import-name" and candidate.module:
        assert isinstance(node, cst.ImportAlias)
        name = _name_of(node.name) or ""
        ref = AttrRef(ModuleRef(candidate.module), name)
        return UseSite(SiteKind.IMPORT, ref, _span(positions[node.name]), _code(lines, span), guarded=guarded)
    if candidate.kind == "call":
        assert isinstance(node, cst.Call)
        func = evaluator.expression(node.func, candidate.scope)
        shape, keyword_spans = _shape(node, positions)
        forwarded: tuple[str, ...] = ()
        through_init = False
        if isinstance(func, _DownClass):  # a downstream subclass that keeps its upstream base's constructor
            inherited = evaluator.inherited_constructor(func.cls, upstream_names)
            if inherited is None:
                inherited = evaluator.wrapped_constructor(func.cls, upstream_names)  # or a wrapper of one
            if inherited is None:
                return None
            func, forwarding = inherited
            if forwarding is not None:
                handed_on = forwarding.shape_for(shape)
                if handed_on is None:
                    return None
                shape, forwarded = handed_on
                through_init = (
                    True  # even handing on nothing: a parameter the upstream now requires is missing
                )
                keyword_spans = tuple((k, s) for k, s in keyword_spans if k in forwarded)
        if not isinstance(func, _REFS) or root_module(func) not in upstream_names:
            return None
        return UseSite(
            SiteKind.CALL,
            func,
            span,
            _code(lines, span),
            shape,
            keyword_spans,
            guarded,
            forwarded=forwarded,
            through_init=through_init,
        )
    if candidate.kind == "attribute":
        assert isinstance(node, cst.Attribute)
        ref = evaluator.expression(node, candidate.scope)
        if not isinstance(ref, AttrRef) or root_module(ref) not in upstream_names:
            return None
        return UseSite(SiteKind.ATTRIBUTE, ref, span, _code(lines, span), guarded=guarded)
    return None


def _shape(
    node: cst.Call, positions: Mapping[cst.CSTNode, CodeRange]
) -> tuple[CallShape, tuple[tuple[str, Span], ...]]:
    positional = 0
    keywords: list[str] = []
    spans: list[tuple[str, Span]] = []
    star_args = star_kwargs = False
    for arg in node.args:
        if arg.star == "*":
            star_args = True
        elif arg.star == "**":
            star_kwargs = True
        elif arg.keyword is not None:
            keywords.append(arg.keyword.value)
            spans.append((arg.keyword.value, _span(positions[arg])))
        else:
            positional += 1
    return CallShape(positional, tuple(keywords), star_args, star_kwargs), tuple(spans)


def _span(position: CodeRange) -> Span:
    return Span(position.start.line, position.start.column + 1, position.end.line, position.end.column + 1)


def _code(lines: tuple[str, ...], span: Span) -> str:
    if 0 < span.line <= len(lines):
        line = lines[span.line - 1]
        end = span.end_column - 1 if span.end_line == span.line else len(line)
        return line[span.column - 1 : end].strip() or line.strip()
    return ""


def _dotted(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _name_of(node: cst.BaseExpression) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def _target_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


def _decorator_name(decorator: cst.Decorator) -> str | None:
    return _dotted(decorator.decorator)


def _handler_guards(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    names = []
    for item in types:
        expression = item.value if isinstance(item, cst.Element) else item
        dotted = _dotted(expression)
        if dotted:
            names.append(dotted.split(".")[-1])
    return any(n in GUARD_EXCEPTIONS for n in names)


@dataclass(frozen=True)
class _Forwarding:
    """`def __init__(self, own..., **kwargs): ...; super().__init__(args..., **kwargs)`."""

    own: Signature  # the downstream __init__, self bound
    kwargs: str  # the name of its `**kwargs`
    super_shape: CallShape  # what the super() call itself passes, besides **kwargs

    def shape_for(self, call: CallShape) -> tuple[CallShape, tuple[str, ...]] | None:
        """The upstream call a `Cls(...)` call makes, and the keywords it hands on; None if unknowable."""
        verdict = bind(call, self.own)
        if not isinstance(verdict, Ok):
            return None  # the call fails (or may) on the downstream's own signature: not ours to report
        forwarded = tuple(
            k for k, param in verdict.assignments if isinstance(k, str) and param == self.kwargs
        )
        keywords = self.super_shape.keywords + forwarded
        return CallShape(
            self.super_shape.positional, keywords, self.super_shape.star_args, call.star_kwargs
        ), forwarded


def _forwarding(init: cst.FunctionDef) -> _Forwarding | None:
    star_kwarg = init.params.star_kwarg
    if not isinstance(star_kwarg, cst.Param):
        return None
    kwargs = star_kwarg.name.value
    supers: list[cst.Call] = []
    uses = 0

    class _Find(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and func.attr.value == "__init__"
                and isinstance(func.value, cst.Call)
                and _dotted(func.value.func) == "super"
            ):
                supers.append(call)

        def visit_Name(self, name: cst.Name) -> None:
            nonlocal uses
            if name.value == kwargs:
                uses += 1

    init.body.visit(_Find())
    if len(supers) != 1 or uses != 1:
        return None  # kwargs read or changed elsewhere, or several super() calls: not certain
    return _handed_on(init, kwargs, supers[0])


def _kwargs_call(init: cst.FunctionDef) -> tuple[cst.Call, _Forwarding] | None:
    """The one call of `__init__`'s own body (not in a nested def, not under a branch or a loop) that
    receives its `**kwargs` unchanged, the mapping used nowhere else; no `super()` call at all."""
    star_kwarg = init.params.star_kwarg
    if not isinstance(star_kwarg, cst.Param) or not isinstance(init.body, cst.IndentedBlock):
        return None
    kwargs = star_kwarg.name.value
    calls: list[cst.Call] = []
    uses = 0
    nested = False

    class _Find(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            nonlocal nested
            if _dotted(call.func) == "super":
                nested = True
            if any(
                a.star == "**" and isinstance(a.value, cst.Name) and a.value.value == kwargs
                for a in call.args
            ):
                calls.append(call)

        def visit_Name(self, name: cst.Name) -> None:
            nonlocal uses
            if name.value == kwargs:
                uses += 1

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            nonlocal nested
            nested = True
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            nonlocal nested
            nested = True
            return False

    init.body.visit(_Find())
    if len(calls) != 1 or uses != 1 or nested:
        return None
    call = calls[0]
    top = [stmt for stmt in init.body.body if isinstance(stmt, cst.SimpleStatementLine)]
    if not any(call in _calls_in(stmt) for stmt in top):
        return None  # under an `if`, a loop or a `try`: the call may not be made
    forwarding = _handed_on(init, kwargs, call)
    return (call, forwarding) if forwarding is not None else None


def _assigns_name(function: cst.FunctionDef, dotted: str) -> bool:
    head = dotted.split(".")[0]
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    if any(p.name.value == head for p in every):
        return True
    found = False

    class _Find(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            nonlocal found
            found = found or any(n.value == head for n in _names_in(node.target))

        def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
            nonlocal found
            local = node.asname.name if node.asname is not None else node.name
            found = found or any(n.value == head for n in _names_in(local))

    function.body.visit(_Find())
    return found


def _handed_on(init: cst.FunctionDef, kwargs: str, call: cst.Call) -> _Forwarding | None:
    passes = [
        a for a in call.args if a.star == "**" and isinstance(a.value, cst.Name) and a.value.value == kwargs
    ]
    if len(passes) != 1 or any(a.star == "**" and a not in passes for a in call.args):
        return None
    positional = sum(1 for a in call.args if not a.star and a.keyword is None)
    keywords = tuple(a.keyword.value for a in call.args if a.keyword is not None)
    star_args = any(a.star == "*" for a in call.args)
    return _Forwarding(_signature_of(init).bound(), kwargs, CallShape(positional, keywords, star_args, False))


def _method_owner(scope: _Scope) -> _ClassScope | None:
    current: _Scope | None = scope
    while current is not None:
        if current.owner is not None:
            return current.owner
        current = current.parent
    return None


def _is_trivial_base(node: cst.BaseExpression) -> bool:
    """`object`, `Generic[T]`, `Protocol`: bases that add nothing to what is inherited."""
    head = node.value if isinstance(node, cst.Subscript) else node
    name = (_dotted(head) or "").rsplit(".", 1)[-1]
    return name in ("object", "Generic", "Protocol")


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.append(name)

    node.visit(_Names())
    return found


def _calls_in(node: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            found.append(call)

    node.visit(_Calls())
    return found


def _suppresses(node: cst.With) -> bool:
    for item in node.items:
        call = item.item
        if isinstance(call, cst.Call) and (_dotted(call.func) or "").rsplit(".", 1)[-1] == "suppress":
            names = {(_dotted(a.value) or "").rsplit(".", 1)[-1] for a in call.args}
            if names & GUARD_EXCEPTIONS:
                return True
    return False


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    names = {(_dotted(t.value if isinstance(t, cst.Element) else t) or "").split(".")[-1] for t in types}
    return bool(names & {"ImportError", "ModuleNotFoundError"})


# Names that tell a feature or version test: `sqla_14`, `PY38`, `HAS_FOO`, `_vers`, `IS_PYDANTIC_V2`...
_VERSIONISH = re.compile(
    r"(?i)(__version__|version_info|version|\b_?vers\b|\b(?:py|sqla|sa|np|pd|v|is_py|pydantic_v)_?\d+\b|\bhas_\w+|_available\b)"
)


def _is_type_checking(test: cst.BaseExpression) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:` alone: its body never runs."""
    dotted = _dotted(test)
    return bool(dotted) and dotted.split(".")[-1] == "TYPE_CHECKING"  # type: ignore[union-attr]


def _is_guard_test(test: cst.BaseExpression) -> bool:
    """`if TYPE_CHECKING:`, `hasattr(...)`, a version or feature flag, or a boolean combination with one."""
    if isinstance(test, cst.BooleanOperation):
        return _is_guard_test(test.left) or _is_guard_test(test.right)
    if isinstance(test, cst.UnaryOperation):
        return _is_guard_test(test.expression)
    dotted = _dotted(test)
    if dotted and dotted.split(".")[-1] == "TYPE_CHECKING":
        return True
    if any(_dotted(call.func) in ("hasattr", "getattr") for call in _calls_in(test)):
        return (
            True  # `hasattr(m, "x")`, `callable(getattr(m, "x", None))`, `getattr(m, "x", None) is not None`
        )
    return bool(_VERSIONISH.search(cst.Module([]).code_for_node(test)))
