"""The LibCST visitor that walks a file once: scopes, bindings, guards and the candidate use sites."""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import PositionProvider

from apidrift.auditor.downstream.refs import AttrRef, ModuleRef
from apidrift.auditor.downstream.scan.guards import (
    _catches_attribute_error,
    _catches_import_error,
    _handler_guards,
    _hasattr_tests,
    _is_guard_test,
    _is_type_checking,
    _skip_condition,
    _suppressed,
    _suppresses,
    _try_catches,
)
from apidrift.auditor.downstream.scan.nodes import (
    _BLOCKS,
    _decorator_name,
    _dotted,
    _name_of,
    _names_in,
    _target_names,
)
from apidrift.auditor.downstream.scan.values import (
    _attribute_names,
    _Binding,
    _Candidate,
    _ClassScope,
    _DownClass,
    _Scope,
    _SelfOf,
)
from apidrift.auditor.downstream.shared import (
    NAME_MAKERS,
    VERSIONISH,
    chain_attributes,
    holds_no_upstream,
    may_override,
    unalias,
)


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, upstream_names: frozenset[str], aliases: tuple[tuple[str, str], ...] = ()) -> None:
        self.upstream_names = upstream_names
        self.aliases = aliases  # modules other modules register upstream modules under
        self.module_scope = _Scope(None)
        self.scopes: list[_Scope] = [self.module_scope]
        self.candidates: list[_Candidate] = []
        self.parents: list[cst.CSTNode] = []
        self.guard_depth = 0
        # The builtin exception classes the `try` statements around the code catch (see astscan's).
        self.caught: frozenset[str] = frozenset()
        self.outer_caught: list[frozenset[str]] = []
        self.method_self: list[tuple[str, _ClassScope] | None] = []
        self.version_names: set[str] = set()  # names computed from a version or feature test
        # Names an `except ImportError:` fallback binds (`f = None`, `HAS_X = False`): a test of one
        # (`if f is not None:`) guards what it holds, as the code handles the import's failure there.
        self.fallback_names: set[str] = set()
        self.import_fallback_depth = 0
        # Attributes assigned or deleted (targets are seen before their children are visited), kept
        # here rather than asking LibCST's expression-context pass, which costs a quarter of a scan.
        self.stored: set[int] = set()
        # (scope, base chain, attribute) of every attribute the file assigns or deletes (see astscan)
        self.attribute_stores: set[tuple[int, tuple[object, ...], str]] = set()
        self.guarding_ifs: set[int] = set()
        # The attribute names each enclosing `if hasattr(x, "a"):` tests, where `x` holds no upstream
        # object: it guards only the uses that go through one of them.
        self.attr_guards: list[frozenset[str]] = []
        self.attr_guard_ifs: set[int] = set()

    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    @property
    def guard(self) -> bool | frozenset[str]:
        return True if self.guard_depth > 0 else (self.caught or False)

    def _candidate(self, kind: str, node: cst.CSTNode, extra: str | None = None) -> None:
        self.candidates.append(_Candidate(kind, node, self.scope, self._guard_of(node), extra))

    def _guard_of(self, node: cst.CSTNode) -> bool | frozenset[str]:
        """How a use of `node` here is guarded, `hasattr()` tests of other objects included."""
        guard = self.guard
        if guard is True or not self.attr_guards:
            return guard
        return True if chain_attributes(_attribute_names(node), self.attr_guards) else guard

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
        self.candidates.append(_Candidate("class", node, cls, self.guard))

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
        overriding = isinstance(outer, _ClassScope) and may_override(
            node.name.value,
            frozenset((_dotted(d.decorator) or "?").rsplit(".", 1)[-1] for d in node.decorators),
        )
        for index, param in enumerate([*ordered, *params.kwonly_params]):
            if index == 0 and isinstance(outer, _ClassScope) and not is_static and param in ordered:
                scope.bind(param.name.value, _Binding(scope, value=_SelfOf(outer)))
                self.method_self.append((param.name.value, outer))
            elif param.annotation is not None:
                scope.bind(param.name.value, _Binding(outer, annotation=param.annotation.annotation))
            elif overriding and isinstance(outer, _ClassScope) and ordered and index > 0:
                place = index - 1 if index < len(ordered) else -1
                hook = (outer, node.name.value, param.name.value, place)
                scope.bind(param.name.value, _Binding(scope, parameter=True, hook_param=hook))
            else:
                scope.bind(param.name.value, _Binding(scope, parameter=True))
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

    def _leave_comprehension(self, original_node: cst.BaseComp) -> None:
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _enter_comprehension
    leave_ListComp = leave_SetComp = leave_GeneratorExp = leave_DictComp = _leave_comprehension

    # -- guards -----------------------------------------------------------------------------------

    # The guarded body of a try, and the fallback in an `except ImportError` or `except AttributeError`
    # handler (it runs only when the body failed); the `else` and `finally` branches are not guarded.
    def visit_Try_body(self, node: cst.Try) -> None:
        caught = _try_catches(node.handlers)
        if caught is None and any(_handler_guards(h) for h in node.handlers):
            self.guard_depth += 1
        self.outer_caught.append(self.caught)
        self.caught = self.caught | caught if caught else self.caught

    def leave_Try_body(self, node: cst.Try) -> None:
        if _try_catches(node.handlers) is None and any(_handler_guards(h) for h in node.handlers):
            self.guard_depth -= 1
        self.caught = self.outer_caught.pop()

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        if _catches_import_error(node):
            self.guard_depth += 1
            self.import_fallback_depth += 1
        elif _catches_attribute_error(node):
            self.guard_depth += 1

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        if _catches_import_error(node):
            self.guard_depth -= 1
            self.import_fallback_depth -= 1
        elif _catches_attribute_error(node):
            self.guard_depth -= 1

    # `with contextlib.suppress(ImportError, ...):` swallows what a guarded use may raise.
    def visit_With_body(self, node: cst.With) -> None:
        caught = _suppressed(node)
        if caught is None and _suppresses(node):
            self.guard_depth += 1
        self.outer_caught.append(self.caught)
        self.caught = self.caught | caught if caught else self.caught

    def leave_With_body(self, node: cst.With) -> None:
        if _suppressed(node) is None and _suppresses(node):
            self.guard_depth -= 1
        self.caught = self.outer_caught.pop()

    # Both branches of a feature or version test: each runs only where its side of the test holds.
    def visit_If(self, node: cst.If) -> None:
        self._enter_test(node, node.test)

    def leave_If(self, node: cst.If) -> None:
        self._leave_test(node)

    def _enter_test(self, node: cst.CSTNode, test: cst.BaseExpression) -> None:
        """A guarding test; `hasattr(x, "a")` tests of names that hold no upstream object (a parameter,
        `self`, another distribution's module) guard only the uses that go through a tested name."""
        if not self._is_guard(test):
            return
        tests = _hasattr_tests(test)
        if (
            tests is not None
            and not {n.value for n in _names_in(test)} & (self.version_names | self.fallback_names)
            and all(holds_no_upstream(self._visible(name), self.upstream_names) for name, _ in tests)
        ):
            self.attr_guards.append(frozenset(attribute for _, attribute in tests))
            self.attr_guard_ifs.add(id(node))
            return
        self.guard_depth += 1
        self.guarding_ifs.add(id(node))

    def _leave_test(self, node: cst.CSTNode) -> None:
        if id(node) in self.guarding_ifs:
            self.guard_depth -= 1
        elif id(node) in self.attr_guard_ifs:
            self.attr_guards.pop()

    def _visible(self, name: str) -> list[_Binding] | None:
        """The bindings of `name` so far in the nearest scope that has one (class bodies only their own)."""
        scope: _Scope | None = self.scope
        first = True
        while scope is not None:
            if (first or not scope.is_class) and name in scope.bindings:
                return scope.bindings[name]
            first = False
            scope = scope.parent
        return None

    def visit_If_body(self, node: cst.If) -> None:
        if _is_type_checking(node.test):
            self.scope.type_checking += 1

    def leave_If_body(self, node: cst.If) -> None:
        if _is_type_checking(node.test):
            self.scope.type_checking -= 1

    # A conditional expression on a version or feature test (`{np.asfarray} if NUMPY_LT_2_0 else set()`).
    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._enter_test(node, node.test)

    def leave_IfExp(self, node: cst.IfExp) -> None:
        self._leave_test(node)

    # A test skipped on a version or feature test (`@pytest.mark.skipif(not NUMPY_LT_2_0, ...)`): its
    # body runs only on one side of it.
    def _skipped(self, decorators: Sequence[cst.Decorator]) -> bool:
        return any((c := _skip_condition(d)) is not None and self._is_guard(c) for d in decorators)

    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        if self._skipped(node.decorators):
            self.guard_depth += 1
            self.guarding_ifs.add(id(node))

    def leave_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        if id(node) in self.guarding_ifs:
            self.guard_depth -= 1

    def visit_ClassDef_body(self, node: cst.ClassDef) -> None:
        if self._skipped(node.decorators):
            self.guard_depth += 1
            self.guarding_ifs.add(id(node))

    def leave_ClassDef_body(self, node: cst.ClassDef) -> None:
        if id(node) in self.guarding_ifs:
            self.guard_depth -= 1

    def _is_guard(self, test: cst.BaseExpression) -> bool:
        if _is_guard_test(test):
            return True
        names = {n.value for n in _names_in(test)}
        return bool(names & (self.version_names | self.fallback_names))

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in NAME_MAKERS:
            stars = self.module_scope.star_modules = self.module_scope.star_modules or []
            stars.append(None)  # names bound by code: a name bound nowhere may still exist
        if _dotted(node.func) == "isinstance" and node.args and isinstance(node.args[0].value, cst.Name):
            self.scope.narrowed.add(node.args[0].value.value)  # its annotated type no longer holds
        self._candidate("call", node)

    # -- bindings ---------------------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            written = _dotted(alias.name)
            if written is None:
                continue
            dotted = unalias(written, self.aliases) if self.aliases else written
            if alias.asname is not None:
                name = _name_of(alias.asname.name)
                if name:
                    self.scope.bind(name, _Binding(self.scope, value=ModuleRef(dotted)))
            else:
                top = written.split(".")[0]
                self.scope.bind(top, _Binding(self.scope, value=ModuleRef(top)))
            if dotted.split(".")[0] in self.upstream_names:
                self._candidate("import-module", alias, dotted)
        return False  # the dotted names inside are not attribute uses

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        module = _dotted(node.module) if node.module is not None else None
        if self.aliases and module is not None and not node.relative:
            module = unalias(module, self.aliases)
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
        if self._is_guard(node.value) or VERSIONISH.search(cst.Module([]).code_for_node(node.value)):
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
            base = _chain(target.value)
            if base is not None:  # the downstream sets it: reading it back is no use of the upstream's
                self.attribute_stores.add((id(self._store_scope(target.value)), base, target.attr.value))
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

    def _store_scope(self, base: cst.BaseExpression) -> _Scope:
        """Where a store on `base` is seen: the class for `self.x.y = ...` in a method, else here."""
        root = base
        while isinstance(root, (cst.Attribute, cst.Subscript)):
            root = root.value
        current = self.method_self[-1] if self.method_self else None
        if current is not None and isinstance(root, cst.Name) and root.value == current[0]:
            return current[1]
        return self.scope

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


def _chain(node: cst.BaseExpression) -> tuple[object, ...] | None:
    """A name or attribute chain as astscan's compact form writes it (`("a", ("n", "r"), "x")`)."""
    if isinstance(node, cst.Name):
        return ("n", node.value)
    if isinstance(node, cst.Attribute):
        base = _chain(node.value)
        return ("a", base, node.attr.value) if base is not None else None
    return None
