"""The one pass over a file's tree, in source order: scopes, bindings, guards and the candidate use sites."""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar, cast

from apidrift.auditor.core.refs import AttrRef, ModuleRef, root_module
from apidrift.auditor.core.sites import Span
from apidrift.auditor.downstream.astscan.forwarding import _assigns_name, _forwarding, _kwargs_call
from apidrift.auditor.downstream.astscan.guards import (
    _catches_attribute_error,
    _catches_import_error,
    _handler_guards,
    _handler_names,
    _hasattr_tests,
    _introspection,
    _is_guard_test,
    _is_type_checking,
    _skip_condition,
    _suppressed,
    _suppresses,
    _try_catches,
)
from apidrift.auditor.downstream.astscan.nodes import (
    _child_fields,
    _dotted,
    _first_argument,
    _identifiers,
    _in_source_order,
    _is_trivial_base,
    _position,
    _target_names,
)
from apidrift.auditor.downstream.astscan.sites import _shape
from apidrift.auditor.downstream.astscan.text import _FROM_MODULE, _IDENTIFIER, _name_span, _Text
from apidrift.auditor.downstream.astscan.values import (
    _NONE,
    _attribute_names,
    _Binding,
    _CallSite,
    _Candidate,
    _ClassScope,
    _compact,
    _DownClass,
    _DownFunction,
    _Expr,
    _Function,
    _Import,
    _item_of,
    _joined,
    _merged,
    _Method,
    _Reach,
    _Region,
    _root_name,
    _Scope,
    _SelfOf,
    _Test,
)
from apidrift.auditor.downstream.shared import (
    NAME_MAKERS,
    VERSIONISH,
    Forwarding,
    chain_attributes,
    handles,
    holds_no_upstream,
    may_override,
    unalias,
)
from apidrift.auditor.pysource import _LONG_SPAN, _QUOTES, MAX_NESTING

# Builtins whose arguments must be values of a kind (numbers, sized or iterable objects): a bound
# method there raises TypeError (`str()` and `format()` take any object).
_NEEDS_VALUE = frozenset(
    {"int", "float", "complex", "round", "abs", "divmod", "pow", "len", "sum", "min", "max", "sorted",
     "list", "tuple", "set", "frozenset", "iter", "bytes", "hex", "oct", "bin", "chr"}
)  # fmt: skip


_DEF = re.compile(r"def\s+(\w+)")  # two patterns, each found by its literal start (fast)
_CLASS = re.compile(r"class\s+(\w+)")
_BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
# The calls kept of one callee name (see _CallSite): a function called more often than this is not
# followed through its parameters (`receiver-unknown:too-many-callers`).
_MAX_CALLS = 32


class TooDeep(ValueError):
    """The file nests deeper than `MAX_NESTING` levels (as LibCST would nest it)."""

    def __init__(self, depth: int) -> None:
        super().__init__(f"nesting too deep to parse ({depth} levels, at most {MAX_NESTING})")
        self.depth = depth


_T = TypeVar("_T")


class _Collector:
    """One pass over the tree in source order: scopes, bindings, guards and the candidate use sites."""

    def __init__(
        self,
        upstream_names: frozenset[str],
        text: _Text,
        aliases: tuple[tuple[str, str], ...] = (),
        local: tuple[frozenset[str], str | None] = (frozenset(), None),
    ) -> None:
        self.upstream_names = upstream_names
        # The top-level names of the downstream's own modules, and the package this file is in (for
        # relative imports; None where it is in none): an import of one of them binds a reference
        # rooted at that module, followed across the downstream's modules once every file is scanned
        # (`downstream.linking`).
        self.local_names, self.package = local
        self.reaching_names = upstream_names | self.local_names
        self.aliases = aliases  # modules other modules register upstream modules under
        self.text = text
        self.module_scope = _Scope(None)
        self.scopes: list[_Scope] = [self.module_scope]
        self.candidates: list[_Candidate] = []
        self.guard_depth = 0
        # The attribute names each enclosing `if hasattr(x, "a"):` tests, where `x` holds no upstream
        # object: it guards only the uses that go through one of them.
        self.attr_guards: list[frozenset[str]] = []
        # The introspection tests of the branches around the code (`if "x" in
        # inspect.signature(f).parameters:`): read against each upstream version when a use is checked.
        self.intro: list[_Test] = []
        # Calls handing one name to a callable (`up.pass_context(f)`): (callee, name, scope), read once
        # the file is read (a downstream function handed there gets its first parameter typed by it).
        self.handed: list[tuple[_Expr, str, _Scope, str]] = []  # and the slot (see _DownFunction)
        # In an `except TypeError:` handler: a test per callable its `try` body calls (see
        # _type_error_fallback); a call of one of them there carries it.
        self.type_fallbacks: list[_Test] = []
        # The builtin exception classes the `try` statements around the code catch, where each of
        # their handlers names only such classes: what a use there may raise and still be handled.
        self.caught: frozenset[str] = frozenset()
        # Per `try` around the code whose handlers catch ImportError: the bindings the imports of its
        # body made so far. A use of a name only they bind, in that body, never runs where the name is
        # missing: the import raised first, and was handled (`UseSite.import_caught`).
        self.try_imports: list[set[int]] = []
        self.method_self: list[tuple[str, _ClassScope] | None] = []
        self.version_names: set[str] = set()  # names computed from a version or feature test
        # Names an `except ImportError:` fallback binds (`f = None`, `HAS_X = False`): a test of one
        # (`if f is not None:`) guards what it holds, as the code handles the import's failure there.
        self.fallback_names: set[str] = set()
        self.import_fallback_depth = 0
        self.stored: set[int] = set()  # attributes assigned or deleted: no use of an existing one
        # (scope, base expression, attribute) of every attribute the file assigns or deletes: the scope
        # of the function (or module) where it is set, or the class for one set through `self`
        self.attribute_stores: set[tuple[int, _Expr, str]] = set()
        self.used: dict[int, str] = {}  # node -> how its value is used (UseSite.use), set by its parent
        # isinstance() calls whose narrowing the collector can place: call -> the lines it narrows
        self.placed_tests: dict[int, tuple[int, int]] = {}
        self.try_star = False  # inside the handlers of `try: ... except* E:`
        self.depth = 0  # nesting, counted as LibCST nests (see pysource.nesting_problem)
        self.lines: list[str] | None = None
        self.interned: dict[Any, Any] = {}  # equal expressions and shapes are kept once
        self.functions: list[_DownFunction | None] = []  # the functions being visited (None: a lambda)
        self.escaping: set[str] = set()  # names a `global` or `nonlocal` statement names
        # What a downstream function's callers pass (see _Evaluator.from_callers): the calls whose callee
        # is a name or an attribute, by that last name (at most _MAX_CALLS each: `overflowing` names
        # have more); the names read as values (not called: handed on, stored, decorating, or spelled
        # in a string, `getattr(self, "name")`), the attribute names read so; the classes of the file,
        # how many of them define a method of each name; and whether some code constructs an instance
        # of a class it computes (`type(self)(...)`, `self.__class__(...)`).
        self.calls: dict[str, list[_CallSite]] = {}
        # Calls not kept, as a cost saving, because their callee cannot be the file's: a builtin's name,
        # an attribute of a module (`os.getenv(...)`), each with the name and scope to confirm that by
        # once the file is read (the name bound so, or unbound, in the end)
        self.skipped_calls: dict[str, list[tuple[str, _Scope]]] = {}
        self.overflowing: set[str] = set()
        # The names the file defines functions and classes under (as spelled: `def name`, `class
        # Name`): a call of any other name cannot call one of them, and is not kept
        source = text.source
        self.defined = frozenset(_DEF.findall(source)) | frozenset(_CLASS.findall(source)) | {"__init__"}
        self.value_names: set[str] = set()
        self.value_attributes: set[str] = set()
        self.classes: list[tuple[str, _ClassScope]] = []
        self.method_names: dict[str, int] = {}
        self.computed_class_call = False
        self.annotating = 0  # inside an annotation, a class's bases or isinstance()'s classes
        self.decorated: dict[str, _DownFunction] = {}  # module-level functions under decorators not followed

    def _intern(self, value: _T) -> _T:
        return self.interned.setdefault(value, value)

    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    @property
    def guard(self) -> bool | frozenset[str]:
        """How the code here is guarded: True (a guard of any failure), the exception classes the
        `try` statements around it catch, or False."""
        return True if self.guard_depth > 0 else (self.caught or False)

    def _guard_of(self, expression: _Expr) -> bool | frozenset[str]:
        """How a use of `expression` here is guarded, `hasattr()` tests of other objects included."""
        guard = self.guard
        if guard is True or not self.attr_guards:
            return guard
        return True if chain_attributes(_attribute_names(expression), self.attr_guards) else guard

    def _candidate(
        self, kind: str, expression: _Expr, span: Span | None, extra: _Import | None = None, use: str = "",
        at: Span | None = None,
    ) -> None:  # fmt: skip
        candidate = _Candidate(
            kind,
            expression,
            self.scopes[-1],
            self._guard_of(expression),
            span,
            extra,
            use=use,
            tests=tuple(self.intro),
        )
        candidate.at = at
        if expression is not None:
            candidate.reach = self._reach_of(expression)
            candidate.import_caught = self._import_caught(expression, candidate.reach)
        self.candidates.append(candidate)

    def _import_caught(self, expression: _Expr, reach: _Reach | None) -> int | None:
        """Whether the expression is a name that only imports in the body of a `try` around it bind,
        that `try` catching ImportError (`try: from up import f; f(...)`), or such a name's attributes
        (`f.a.b`): how many attribute names follow the name (None: it is not such an expression)."""
        if not self.try_imports or reach is None or not reach.bindings:
            return None
        attributes = 0
        while isinstance(expression, tuple) and expression and expression[0] == "a" and attributes < 1000:
            expression = expression[1]
            attributes += 1
        if not (isinstance(expression, tuple) and expression and expression[0] == "n"):
            return None
        made = set().union(*self.try_imports)
        return attributes if all(id(b) in made for b in reach.bindings) else None

    def _reach_of(self, expression: _Expr) -> _Reach | None:
        """The bindings that reach here of the name the expression starts from, in the scope whose flow
        holds here (through comprehensions, which run where they are written)."""
        name = _root_name(expression)
        if name is None:
            return None
        scope = self.scope
        while scope.inline and scope.parent is not None:
            if name in scope.bindings:
                return None
            scope = scope.parent
        return scope.reach(name)

    def _bound(self, expression: _Expr, **fields: Any) -> _Binding:
        """A binding of the current scope to an expression, with the bindings that reach its name."""
        return _Binding(self.scope, expression=expression, reach=self._reach_of(expression), **fields)

    # -- traversal --------------------------------------------------------------------------------

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        outer = self.depth
        depth = outer + 1
        if kind is ast.BoolOp:
            depth += len(node.values) - 1  # type: ignore[attr-defined]  # LibCST nests one level per operand
        elif kind is ast.Constant or kind is ast.JoinedStr:
            depth += self._string_depth(cast(ast.expr, node))
        if depth > MAX_NESTING:
            raise TooDeep(depth)
        self.depth = depth
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, node)
        else:
            for name in _child_fields(kind):
                child = getattr(node, name)
                if child is None:
                    continue
                if isinstance(child, list):
                    for item in child:
                        if isinstance(item, ast.AST):
                            self.visit(item)
                elif isinstance(child, ast.AST):
                    self.visit(child)
        self.depth = outer

    def _string_depth(self, node: ast.expr) -> int:
        """Implicitly joined string literals nest one level per two parts in LibCST (as pysource counts)."""
        value = getattr(node, "value", "")
        if not isinstance(value, (str, bytes)):
            return 0
        end, end_column = node.end_lineno, node.end_col_offset
        if (
            end is None
            or end_column is None
            or (end == node.lineno and end_column - node.col_offset <= _LONG_SPAN)
        ):
            return 0
        if self.lines is None:
            self.lines = self.text.source.splitlines()
        segment = "\n".join(self.lines[node.lineno - 1 : end])
        if len(segment) > _LONG_SPAN or end - node.lineno > 50:
            return len(_QUOTES.findall(segment)) // 2
        return 0

    def visit_all(self, nodes: Iterable[ast.AST | None]) -> None:
        raised = 0
        for node in nodes:
            if node is not None:
                self.visit(node)
                if type(node) is ast.If and self._early_exit_guard(node):
                    # `if click_version_ge_8_2: return arg.make_metavar(ctx)` then the old spelling:
                    # what follows runs only where the version or feature test fails, its `else`
                    self.guard_depth += 1
                    raised += 1
        self.guard_depth -= raised

    def _early_exit_guard(self, node: ast.If) -> bool:
        """An `if` on a version or feature flag (`click_version_ge_8_2`, `PY3`, a name bound from a version
        test), without `else`, whose body never goes on past its end."""
        if node.orelse or not _leaves(node.body):
            return False
        return self._flag_test(node.test)

    def _flag_test(self, test: ast.expr) -> bool:
        """A test made only of version or feature flags (`PY3`, `not HAS_X`, `sys.version_info >= (3,)`,
        `a or b` of such): where it fails, every flag in it does. `a and b` fails where either does, so
        what follows it is no flag's `else`; an attribute test of an object says nothing of versions."""
        if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            return self._flag_test(test.operand)
        if type(test) is ast.BoolOp:
            return type(test.op) is ast.Or and all(self._flag_test(v) for v in test.values)
        if type(test) not in (ast.Name, ast.Attribute, ast.Compare):
            return False
        if any(type(n) is ast.Call for n in ast.walk(test)):
            return False  # `hasattr(o, "x")`, `is_dataclass(o)`: a test of an object, not of a version
        names = set(_identifiers(test))
        return bool(VERSIONISH.search(self.text.segment(test))) or not names.isdisjoint(
            self.version_names | self.fallback_names
        )

    # -- structure --------------------------------------------------------------------------------

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        scope = self.scope
        written = [b.value if isinstance(b, ast.Starred) else b for b in node.bases]
        bases = tuple(
            self._intern(_compact(b))
            for b in written
            if not (_is_trivial_base(b) and not self._upstream_base(b))
        )
        keywords = any(k.arg is not None for k in node.keywords)
        cls = _ClassScope(
            scope, is_class=True, bases=bases, keywords=keywords, any_keywords=bool(node.keywords),
            decorated=bool(node.decorator_list),
        )  # fmt: skip
        scope.bind(node.name, _Binding(scope, value=_DownClass(cls)))
        self.classes.append((node.name, cls))
        self.scopes.append(cls)
        self.visit_all(node.decorator_list)
        self.annotating += 1  # a base class in the file: its constructor's callers are read through it
        self.visit_all(node.bases)  # then the keywords (`**extra` among them), as LibCST lists them
        self.annotating -= 1
        self.visit_all(node.keywords)
        skipped = self._skipped(node.decorator_list)
        self.guard_depth += skipped
        self.visit_all(node.body)
        self.guard_depth -= skipped
        self.scopes.pop()
        self.candidates.append(_Candidate("class", None, cls, self.guard, None))

    def visit_FunctionDef(self, node: _Function) -> None:
        outer = self.scope
        # Names in a function resolve in enclosing functions and the module, never in a class body.
        parent = outer
        while parent.is_class and parent.parent is not None:
            parent = parent.parent
        cls = outer if isinstance(outer, _ClassScope) else None  # the class of a method
        is_method = cls is not None
        scope = _Scope(parent, owner=cls)
        function = _DownFunction(
            scope,
            decorators=frozenset((_dotted(d) or "?").rsplit(".", 1)[-1] for d in node.decorator_list),
            is_async=isinstance(node, ast.AsyncFunctionDef),
        )
        outer.bind(node.name, _Binding(outer, value=function if function.followed else None))
        if not function.followed and outer is self.module_scope:
            self.decorated[node.name] = function  # what it returns is not followed: counted (see exports)
        args = node.args
        ordered = [*args.posonlyargs, *args.args]
        is_static = any(_dotted(d) == "staticmethod" for d in node.decorator_list)
        if cls is not None:
            line = self.text.line(node.lineno)
            indent = line[: len(line) - len(line.lstrip(" \t\f"))]  # the block the method is defined in
            method = _Method(
                frozenset((_dotted(d) or "?").rsplit(".", 1)[-1] for d in node.decorator_list), args, indent,
                _name_span(node, self.text), function=function,
            )  # fmt: skip
            if node.name == "__init__" and args.kwarg is not None:
                method.forwarding = _forwarding(node, method, self.text)
                if method.forwarding is None:
                    method.wraps = self._kwargs_call(node, method)
            cls.methods[node.name] = method
            self.method_names[node.name] = self.method_names.get(node.name, 0) + 1
        function.name = node.name
        function.positional = tuple(p.arg for p in ordered)
        function.keyword_only = tuple(p.arg for p in args.kwonlyargs)
        function.method_of = cls
        written = [*zip(ordered[len(ordered) - len(args.defaults) :], args.defaults)]
        written += [(p, d) for p, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for param, default in written:  # evaluated where the `def` is, when it runs
            expression = _compact(default)
            if expression != _NONE:  # a default of None: what it holds is no use of anything
                if function.defaults is None:
                    function.defaults = {}
                function.defaults[param.arg] = (
                    self._bound(self._intern(expression)) if expression is not None else None
                )
        overriding = cls is not None and may_override(node.name, function.decorators)
        for index, param in enumerate([*ordered, *args.kwonlyargs]):
            if index == 0 and cls is not None and not is_static and ordered:
                scope.bind(param.arg, _Binding(scope, value=_SelfOf(cls)))
                self.method_self.append((param.arg, cls))
            elif param.annotation is not None:
                scope.bind(param.arg, _Binding(outer, annotation=param.annotation))
            elif overriding and cls is not None and ordered and index > 0:
                place = index - 1 if index < len(ordered) else -1
                hook = (cls, node.name, param.arg, place)
                binding = _Binding(scope, parameter=True, hook_param=hook, param_of=(function, param.arg))
                scope.bind(param.arg, binding)
            else:
                first = function if index < len(ordered) and cls is None else None
                binding = _Binding(
                    scope, parameter=True, first_of=first, handed_place=index, param_of=(function, param.arg)
                )
                scope.bind(param.arg, binding)
        if cls is None and ordered and node.decorator_list:
            innermost = node.decorator_list[-1]
            if isinstance(innermost, (ast.Name, ast.Attribute)):
                function.handed.append((self._intern(_compact(innermost)), outer, ""))
            elif isinstance(innermost, ast.Call) and isinstance(innermost.func, (ast.Name, ast.Attribute)):
                function.handed.append((self._intern(_compact(innermost)), outer, "()"))  # `@bus.on("evt")`
        for star in (args.vararg, args.kwarg):
            if star is not None:
                scope.bind(star.arg, _Binding(scope))
        if not (ordered and is_method and not is_static):
            self.method_self.append(None)
        self.scopes.append(scope)
        # As written: decorators, parameters (annotation, then default), return annotation, body.
        self.visit_all(node.decorator_list)
        self._visit_arguments(args)
        if node.returns is not None:
            self.annotating += 1
            self.visit(node.returns)
            self.annotating -= 1
        skipped = self._skipped(node.decorator_list)
        self.guard_depth += skipped
        self.functions.append(function)
        self.visit_all(node.body)
        self.functions.pop()
        self.guard_depth -= skipped
        self.method_self.pop()
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _kwargs_call(self, init: _Function, method: _Method) -> tuple[_Expr, bool, Forwarding] | None:
        found = _kwargs_call(init, method, self.text)
        if found is None:
            return None
        call, forwarding = found
        return self._intern(_compact(call.func)), _assigns_name(init, _dotted(call.func) or ""), forwarding

    def _visit_arguments(self, args: ast.arguments) -> None:
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(
            args.defaults
        )
        for param, default in zip(positional, defaults):
            if param.annotation is not None:
                self._visit_annotation(param.annotation)
            if default is not None:
                self.visit(default)
        if args.vararg is not None and args.vararg.annotation is not None:
            self._visit_annotation(args.vararg.annotation)
        for param, default in zip(args.kwonlyargs, args.kw_defaults):
            if param.annotation is not None:
                self._visit_annotation(param.annotation)
            if default is not None:
                self.visit(default)
        if args.kwarg is not None and args.kwarg.annotation is not None:
            self._visit_annotation(args.kwarg.annotation)

    def _visit_annotation(self, node: ast.expr) -> None:
        """An annotation: the names in it are not read as values (a class named there is not handed on)."""
        self.annotating += 1
        self.visit(node)
        self.annotating -= 1

    def visit_Lambda(self, node: ast.Lambda) -> None:
        scope = _Scope(self.scope)
        for param in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            scope.bind(param.arg, _Binding(scope))
        self.scopes.append(scope)
        self._visit_arguments(node.args)
        self.functions.append(None)
        self.visit(node.body)
        self.functions.pop()
        self.scopes.pop()

    # What a function returns and whether it yields (a class body's own code belongs to no function).
    def visit_Return(self, node: ast.Return) -> None:
        function = self.functions[-1] if self.functions else None
        if function is not None and not self.scope.is_class:
            value = node.value
            returned = self._intern(_compact(value)) if value is not None else _NONE
            function.returns.append(returned)
            function.reaches.append(self._reach_of(returned) if value is not None else None)
        if node.value is not None:
            self.visit(node.value)

    def visit_Yield(self, node: ast.Yield | ast.YieldFrom) -> None:
        function = self.functions[-1] if self.functions else None
        if function is not None:
            function.generator = True
        if node.value is not None:
            self.visit(node.value)

    visit_YieldFrom = visit_Yield

    def _visit_comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        scope = _Scope(self.scope, inline=True)
        self.scopes.append(scope)
        for generator in node.generators:
            if isinstance(generator.target, ast.Name) and not generator.is_async:
                self._bind_item(generator.target.id, generator.iter, "iter")
            else:
                for name in _target_names(generator.target):
                    scope.bind(name, _Binding(scope))
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        for generator in node.generators:
            self.visit(generator.target)
            self.visit(generator.iter)
            self.visit_all(generator.ifs)
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension

    # Children that `ast` keeps in other fields than the order they are written in.
    def visit_Dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values):
            if key is not None:
                self.visit(key)
            self.visit(value)

    # As written (body, test, orelse); both branches of a version or feature test are guarded
    # (`{np.asfarray} if NUMPY_LT_2_0 else set()`).
    def visit_IfExp(self, node: ast.IfExp) -> None:
        guards, tested = self._guard_kind(node.test)
        branches = None if tested else self._introspected(node.test)
        if branches is not None:
            self._under(branches[0], [node.body])
            self.guard_depth += guards  # the test itself, as any feature test
            self.visit(node.test)
            self.guard_depth -= guards
            self._under(branches[1], [node.orelse])
            return
        self.guard_depth += guards
        self.attr_guards += tested
        self.visit(node.body)
        self.visit(node.test)
        self.visit(node.orelse)
        self.guard_depth -= guards
        del self.attr_guards[len(self.attr_guards) - len(tested) :]

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        for key, pattern in zip(node.keys, node.patterns):
            self.visit(key)
            self.visit(pattern)

    # -- guards -----------------------------------------------------------------------------------

    # The guarded body of a try, and the fallback in an `except ImportError` or `except AttributeError`
    # handler (it runs only when the body failed); the `else` and `finally` branches are not guarded.
    def visit_Try(self, node: ast.Try) -> None:
        caught = _try_catches(node.handlers)
        guards = caught is None and any(_handler_guards(h) for h in node.handlers)
        self.guard_depth += guards
        outer = self.caught
        self.caught = outer | caught if caught else outer
        scope = self.scope
        region = scope.open_region()
        imports = guards or (caught is not None and handles(caught, "ImportError"))
        if imports:
            self.try_imports.append(set())
        self.visit_all(node.body)
        if imports:
            self.try_imports.pop()
        self.caught = outer
        self.guard_depth -= guards
        star, self.try_star = self.try_star, False
        self._try_rest(node, region, node.handlers)
        self.try_star = star

    def _try_rest(self, node: ast.AST, region: _Region, handlers: Sequence[ast.AST]) -> None:
        """A handler runs from any point of the body (what reaches it: what reached the `try` or was
        bound in the body); `else` from the body's end; `finally` and what follows from any of them."""
        scope = self.scope
        body_end = scope.flow
        start = {**region.before, **{n: _merged(region.before.get(n, ()), m) for n, m in region.made.items()}}
        for handler in handlers:
            scope.flow = dict(start)
            fallback = (
                self._type_error_fallback(node, handler)
                if isinstance(node, ast.Try) and isinstance(handler, ast.ExceptHandler)
                else []
            )
            self.type_fallbacks += fallback
            self.visit(handler)
            del self.type_fallbacks[len(self.type_fallbacks) - len(fallback) :]
        scope.flow = body_end
        self.visit_all(node.orelse)  # type: ignore[attr-defined]
        scope.close_region(region, loop=False)
        self.visit_all(node.finalbody)  # type: ignore[attr-defined]

    # `except*` handlers neither guard nor bind here. ast.TryStar is 3.11's (mypy reads 3.10's ast):
    # its fields are read with `type: ignore[attr-defined]`.
    def visit_TryStar(self, node: ast.AST) -> None:
        region = self.scope.open_region()
        self.visit_all(node.body)  # type: ignore[attr-defined]
        star, self.try_star = self.try_star, True
        self._try_rest(node, region, node.handlers)  # type: ignore[attr-defined]
        self.try_star = star

    def _type_error_fallback(self, node: ast.Try, handler: ast.ExceptHandler) -> list[_Test]:
        """For `try: f(x=1)` / `except TypeError: f()`: a test per callable the `try` body calls (the
        handler's calls of one of them run only where that call raised TypeError, as a call the
        version rejects does: see sites.Introspected, kind "type-error")."""
        if handler.type is None or "TypeError" not in _handler_names(handler):
            return []
        callees: dict[_Expr, None] = {}
        budget = 2_000
        for stmt in node.body:
            for inner in ast.walk(stmt):
                budget -= 1
                if budget < 0:
                    return []
                if isinstance(inner, ast.Call):
                    expression = _compact(inner.func)
                    if expression is not None:
                        callees.setdefault(self._intern(expression), None)
        return [("type-error", c, "", True, self.scope, node.lineno) for c in list(callees)[:16]]

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if self.try_star:
            if node.type is not None:
                self.visit(node.type)
            self.visit_all(node.body)
            return
        if node.name is not None:
            self.scope.bind(node.name, _Binding(self.scope))
        if node.type is not None:
            self.visit(node.type)
        fallback = _catches_import_error(node)
        guards = fallback or _catches_attribute_error(node)
        self.guard_depth += guards
        self.import_fallback_depth += fallback
        self.visit_all(node.body)
        self.guard_depth -= guards
        self.import_fallback_depth -= fallback

    # `with contextlib.suppress(ImportError, ...):` swallows what a guarded use may raise.
    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        scope = self.scope
        region = scope.open_region()  # `__exit__` may swallow what the body raised: it may stop anywhere
        for item in node.items:
            settles = scope.defer()
            if isinstance(node, ast.With) and isinstance(item.optional_vars, ast.Name):
                self._bind_item(item.optional_vars.id, item.context_expr, "enter")
            elif item.optional_vars is not None:
                self._bind_target(item.optional_vars, None)
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit(item.optional_vars)
            if settles:
                scope.settle()
        caught = _suppressed(node)
        guards = caught is None and _suppresses(node)
        self.guard_depth += guards
        outer = self.caught
        self.caught = outer | caught if caught else outer
        self.visit_all(node.body)
        self.caught = outer
        self.guard_depth -= guards
        scope.close_region(region, loop=False)

    visit_AsyncWith = visit_With

    # Both branches of a feature or version test: each runs only where its side of the test holds.
    def _place_tests(self, test: ast.expr, first: int, last: int) -> None:
        """`isinstance(x, T)` as the test, or one of an `and` chain: x is narrowed in lines first..last."""
        parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
        for part in parts:
            if isinstance(part, ast.Call) and _dotted(part.func) == "isinstance":
                self.placed_tests[id(part)] = (first, last)

    def visit_Assert(self, node: ast.Assert) -> None:
        self._place_tests(node.test, node.lineno, 1 << 30)  # from here on (to the end of the scope)
        self.visit(node.test)
        if node.msg is not None:
            self.visit(node.msg)

    def visit_If(self, node: ast.If) -> None:
        if node.body:
            self._place_tests(node.test, node.lineno, node.body[-1].end_lineno or node.body[-1].lineno)
        guards, tested = self._guard_kind(node.test)
        branches = None if tested else self._introspected(node.test)
        if branches is not None:
            self.guard_depth += guards  # the test itself, as any feature test
            self.visit(node.test)
            self.guard_depth -= guards
            scope = self.scope
            before = dict(scope.flow)
            self._under(branches[0], node.body)
            body_end, scope.flow = scope.flow, before
            self._under(branches[1], node.orelse)
            # Where the branches meet, as for any `if` (a test's answer differs between versions)
            ends = [
                end for end, block in ((body_end, node.body), (scope.flow, node.orelse)) if not _leaves(block)
            ]
            scope.flow = _joined(ends or [body_end, scope.flow])
            return
        self.guard_depth += guards
        self.attr_guards += tested
        self.visit(node.test)
        type_checking = _is_type_checking(node.test)
        scope = self.scope
        before = dict(scope.flow)
        scope.type_checking += type_checking
        self.visit_all(node.body)
        scope.type_checking -= type_checking
        body_end, scope.flow = scope.flow, before
        self.visit_all(node.orelse)
        # Where the branches meet: what reaches through each branch that goes on past the `if`
        ends = [
            end for end, block in ((body_end, node.body), (scope.flow, node.orelse)) if not _leaves(block)
        ]
        scope.flow = _joined(ends or [body_end, scope.flow])
        self.guard_depth -= guards
        del self.attr_guards[len(self.attr_guards) - len(tested) :]

    def _introspected(self, test: ast.expr) -> tuple[list[_Test] | None, list[_Test] | None] | None:
        """For a test made only of introspection tests of objects (see guards._introspection): the
        tests each branch runs under (None: a branch whose tests cannot be told apart, guarded as a
        whole); None for any other test."""
        found = _introspection(test)
        if found is None or not set(_identifiers(test)).isdisjoint(self.version_names | self.fallback_names):
            return None
        atoms, joined_by_or = found
        body: list[_Test] = []
        for kind, of, name, positive in atoms:
            expression = _compact(of)
            if expression is None:
                return None
            body.append((kind, self._intern(expression), name, positive, self.scope, test.lineno))
        orelse = [(kind, of, name, not holds, scope, line) for kind, of, name, holds, scope, line in body]
        if joined_by_or:  # the body runs where any holds, the other branch where none does
            return None, orelse
        return body, orelse if len(body) == 1 else None

    def _call_tests(self, func_expression: _Expr) -> tuple[_Test, ...]:
        """The introspection tests around a call, with the `except TypeError:` fallback of a callable
        its `try` body called."""
        fallback = [t for t in self.type_fallbacks if t[1] == func_expression][:1]
        return (*self.intro, *fallback)

    def _under(self, tests: list[_Test] | None, nodes: list[ast.stmt] | list[ast.expr]) -> None:
        """Visit a branch under its introspection tests (None: guarded as a whole)."""
        if tests is None:
            self.guard_depth += 1
            self.visit_all(nodes)
            self.guard_depth -= 1
            return
        self.intro += tests
        self.visit_all(nodes)
        del self.intro[len(self.intro) - len(tests) :]

    def _guard_kind(self, test: ast.expr) -> tuple[bool, list[frozenset[str]]]:
        """Whether a test guards what it holds, or, for `hasattr(x, "a")` tests of names that hold no
        upstream object (a parameter, `self`, another distribution's module), the attribute names it
        tests: a use is guarded by it only where it goes through one of them."""
        if not self._is_guard(test):
            return False, []
        tests = _hasattr_tests(test, self.text)
        if tests is None or not set(_identifiers(test)).isdisjoint(self.version_names | self.fallback_names):
            return True, []
        if all(holds_no_upstream(self._visible(name), self.reaching_names) for name, _ in tests):
            return False, [frozenset(attribute for _, attribute in tests)]
        return True, []

    def _upstream_base(self, base: ast.expr) -> bool:
        """A base whose first name is bound to an upstream import (Twisted's `Protocol`, which only
        shares its last name with `typing.Protocol`)."""
        root = base.value if isinstance(base, ast.Subscript) else base
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        return any(
            isinstance(b.value, (ModuleRef, AttrRef)) and root_module(b.value) in self.upstream_names
            for b in self._visible(root.id) or ()
        )

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

    def _skipped(self, decorators: list[ast.expr]) -> bool:
        """A test skipped on a version or feature test (`@pytest.mark.skipif(not NUMPY_LT_2_0, ...)`):
        its body runs only on one side of it."""
        return any((c := _skip_condition(d)) is not None and self._is_guard(c) for d in decorators)

    def _is_guard(self, test: ast.expr) -> bool:
        if _is_guard_test(test, self.text):
            return True
        if not self.version_names and not self.fallback_names:
            return False
        names = set(_identifiers(test))
        return not (names.isdisjoint(self.version_names) and names.isdisjoint(self.fallback_names))

    def visit_Call(self, node: ast.Call) -> None:
        if type(node.func) is ast.Name and node.func.id in NAME_MAKERS:
            stars = self.module_scope.star_modules = self.module_scope.star_modules or []
            stars.append(None)  # names bound by code: a name bound nowhere may still exist
        first = _first_argument(node)
        if first is not None and isinstance(first, ast.Name) and _dotted(node.func) == "isinstance":
            region = self.placed_tests.pop(id(node), None)
            regions = self.scope.narrowed.setdefault(first.id, [])
            if regions is not None:
                if region is None:  # a test that cannot be placed: from here on, what x is is unknown
                    regions.append((node.lineno, 1 << 30, None))
                else:  # only where the test holds, where x is an instance of the class tested
                    tested = node.args[1] if len(node.args) == 2 else None
                    cls = _compact(tested) if isinstance(tested, (ast.Name, ast.Attribute)) else None
                    regions.append((*region, self._intern(cls)))
        text = self.text
        func_expression = self._intern(_compact(node.func))
        if len(node.args) == 1 and not node.keywords and type(node.args[0]) is ast.Name:
            self.handed.append((func_expression, node.args[0].id, self.scope, ""))  # `up.pass_context(f)`
        elif node.args or node.keywords:  # `bus.on("evt", handler)`, `up.register(callback=f)`
            self._handed_among(node, func_expression)
        candidate = _Candidate(
            "call", func_expression, self.scopes[-1], self._guard_of(func_expression), text.span(node),
            None, *_shape(node, text, self.interned), use=self.used.pop(id(node), ""),
            tests=self._call_tests(func_expression),
        )  # fmt: skip
        candidate.at = text.failing_at(node)
        candidate.reach = self._reach_of(func_expression)
        candidate.import_caught = self._import_caught(func_expression, candidate.reach)
        self.candidates.append(candidate)
        if type(node.func) is ast.Name and node.func.id in _NEEDS_VALUE:
            for argument in node.args:
                self.used[id(argument)] = "value"
        func = node.func
        self._call_site(node, func_expression, candidate.reach)
        if isinstance(func, ast.Attribute):
            self._visit_attribute(func, candidate=False, called=True)
        elif type(func) is not ast.Name:  # a name called is not read as a value
            self.visit(func)
        args, keywords = node.args, node.keywords
        if type(func) is ast.Name and func.id in ("isinstance", "issubclass") and len(args) == 2:
            self.visit(args[0])
            self._visit_annotation(args[1])  # the classes tested are not handed on
        elif keywords and args and _position(keywords[0]) < _position(args[-1]):
            self.visit_all(_in_source_order([*args, *keywords]))  # `f(a, k=1, *rest)`
        else:
            self.visit_all(args)
            self.visit_all(keywords)

    def _call_site(self, node: ast.Call, func_expression: _Expr, reach: _Reach | None) -> None:
        """Keep a call that may call a downstream function, with its arguments (see _CallSite)."""
        func = node.func
        kind = type(func)
        if kind is ast.Name:
            key = func.id  # type: ignore[attr-defined]
            if key not in self.defined:
                return
            if key in _BUILTINS and self._visible(key) is None:
                self.skipped_calls.setdefault(key, []).append((key, self.scope))
                return
        elif kind is ast.Attribute:
            key = func.attr  # type: ignore[attr-defined]
            if key == "__class__":
                self.computed_class_call = True  # `self.__class__(...)`: constructs a class computed
            if key not in self.defined:
                return
            base = func.value  # type: ignore[attr-defined]
            if type(base) is ast.Name:
                visible = self._visible(base.id)
                if visible and all(type(b.value) is ModuleRef for b in visible):
                    self.skipped_calls.setdefault(key, []).append((base.id, self.scope))
                    return
        else:
            if kind is ast.Call and _dotted(func.func) == "type":  # type: ignore[attr-defined]
                self.computed_class_call = True  # `type(self)(...)`
            return
        if key in self.overflowing:
            return
        sites = self.calls.setdefault(key, [])
        if len(sites) >= _MAX_CALLS:
            self.overflowing.add(key)
            del self.calls[key]
            return
        star = any(type(a) is ast.Starred for a in node.args) or any(k.arg is None for k in node.keywords)
        args = tuple(self._argument(a) for a in node.args if type(a) is not ast.Starred)
        keywords = tuple((k.arg, self._argument(k.value)) for k in node.keywords if k.arg is not None)
        sites.append(_CallSite(func_expression, self.scope, reach, args, keywords, star))

    def _handed_among(self, node: ast.Call, func_expression: _Expr) -> None:
        """A name of the file's functions passed among other arguments: handed at that place."""
        for index, argument in enumerate(node.args):
            if type(argument) is ast.Starred:
                break  # the places after it are unknown
            if type(argument) is ast.Name and argument.id in self.defined:
                self.handed.append((func_expression, argument.id, self.scope, f"@{index}" if index else ""))
        for keyword in node.keywords:
            value = keyword.value
            if keyword.arg is not None and type(value) is ast.Name and value.id in self.defined:
                self.handed.append((func_expression, value.id, self.scope, f"={keyword.arg}"))

    def _argument(self, node: ast.expr) -> _Binding | None:
        expression = self._intern(_compact(node))
        return self._bound(expression) if expression is not None else None

    def visit_Name(self, node: ast.Name) -> None:
        if not self.annotating and type(node.ctx) is ast.Load:
            self.value_names.add(node.id)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if type(value) is str and value.isidentifier():  # `getattr(self, "name")`, `__all__ = ["name"]`
            self.value_names.add(value)
            self.value_attributes.add(value)

    # -- how values are used ------------------------------------------------------------------------

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self.used[id(node.left)] = self.used[id(node.right)] = "value"
        self.visit(node.left)
        self.visit(node.right)

    def visit_Compare(self, node: ast.Compare) -> None:
        # An ordering needs values of a kind; `==`, `is` work on any object; `in` needs a container.
        operands = (node.left, *node.comparators)
        for index, op in enumerate(node.ops):
            if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
                self.used[id(operands[index])] = self.used[id(operands[index + 1])] = "value"
            elif isinstance(op, (ast.In, ast.NotIn)):
                self.used[id(operands[index + 1])] = "value"
        self.visit(node.left)
        self.visit_all(node.comparators)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if not isinstance(node.op, ast.Not):  # `not x` works on any object
            self.used[id(node.operand)] = "value"
        self.visit(node.operand)

    def visit_FormattedValue(self, node: ast.FormattedValue) -> None:
        self.used[id(node.value)] = "format"  # any object formats (a bound method too): no failure
        self.visit(node.value)
        if node.format_spec is not None:
            self.visit(node.format_spec)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if isinstance(node.ctx, ast.Load):
            self.used[id(node.value)] = "value"
        self.visit(node.value)
        self.visit(node.slice)

    def visit_Await(self, node: ast.Await) -> None:
        self.used[id(node.value)] = "await"
        self.visit(node.value)

    def visit_Expr(self, node: ast.Expr) -> None:
        self.used[id(node.value)] = "discard"
        self.visit(node.value)

    # -- bindings ---------------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            dotted = unalias(alias.name, self.aliases) if self.aliases else alias.name
            if alias.asname is not None:
                binding = _Binding(self.scope, value=ModuleRef(dotted))
                self.scope.bind(alias.asname, binding)
            else:
                top = alias.name.split(".")[0]
                binding = _Binding(self.scope, value=ModuleRef(top))
                self.scope.bind(top, binding)
            if self.try_imports:
                self.try_imports[-1].add(id(binding))
            if dotted.split(".")[0] in self.upstream_names:
                span = self.text.span(alias)
                self._candidate("import-module", None, span, (dotted, None, span))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module
        if self.aliases and module is not None and not node.level:
            module = unalias(module, self.aliases)
        upstream = not node.level and module is not None and module.split(".")[0] in self.upstream_names
        text = self.text
        span = text.span(node) if upstream else None
        if upstream:
            start = text.offset(node.lineno, node.col_offset)
            match = _FROM_MODULE.match(text.source, start)
            module_span = text.span_of(match.start(1), match.end(1)) if match else span
            self._candidate("import-from-module", None, module_span, (module, None, span))
        if len(node.names) == 1 and node.names[0].name == "*":
            nested = self.depth > 1  # a statement of the module's own body is visited at depth 1
            stars = self.module_scope.star_modules = self.module_scope.star_modules or []
            stars.append(module if upstream and not nested else None)
            return
        if not upstream:
            module = self._own_module(module, node.level)
        for alias in node.names:
            name = alias.name
            local = alias.asname if alias.asname is not None else name
            value = AttrRef(ModuleRef(module), name) if module and (upstream or self.local_names) else None
            binding = _Binding(self.scope, value=value)
            self.scope.bind(local, binding)
            if self.try_imports:
                self.try_imports[-1].add(id(binding))
            if upstream:
                start = text.offset(alias.lineno, alias.col_offset)
                match = _IDENTIFIER.match(text.source, start)
                alias_span = text.span(alias)
                name_span = text.span_of(start, match.end()) if match else alias_span
                self._candidate("import-name", None, name_span, (module, name, alias_span))

    def _own_module(self, module: str | None, level: int) -> str | None:
        """The downstream's own module a `from` import reads (a relative one made absolute), or None."""
        if level:
            if self.package is None:
                return None
            parts = self.package.split(".")
            if level - 1 >= len(parts):
                return None
            base = ".".join(parts[: len(parts) - (level - 1)])
            module = f"{base}.{module}" if module else base
        if module is None or module.split(".")[0] not in self.local_names:
            return None
        return module

    def visit_Assign(self, node: ast.Assign) -> None:
        settles = self.scope.defer()
        for target in node.targets:
            self._bind_target(target, node.value)
            if self.import_fallback_depth:
                self.fallback_names.update(_identifiers(target))
        # `sqla_14 = _vers >= (1, 4)` where `_vers` came from `__version__`: a version flag.
        if self._is_guard(node.value) or VERSIONISH.search(self.text.segment(node.value)):
            for target in node.targets:
                self.version_names.update(_identifiers(target))
        self.visit_all(node.targets)
        self.visit(node.value)
        if settles:
            self.scope.settle()

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        settles = self.scope.defer()
        if isinstance(node.target, ast.Name):
            self.scope.bind(node.target.id, _Binding(self.scope, annotation=node.annotation))
        else:
            self._bind_target(node.target, None, node.annotation)
        self.visit(node.target)
        self._visit_annotation(node.annotation)
        if node.value is not None:
            self.visit(node.value)
        if settles:
            self.scope.settle()

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        settles = self.scope.defer()
        self._bind_target(node.target, None)
        self.visit(node.target)
        self.visit(node.value)
        if settles:
            self.scope.settle()

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        if isinstance(node.target, ast.Name):  # may not happen (`a and (x := f())`): joins what reaches
            self.scope.bind(node.target.id, self._bound(self._intern(_compact(node.value))), maybe=True)
        self.visit(node.target)
        self.visit(node.value)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        if isinstance(node, ast.For):
            self.used[id(node.iter)] = "value"  # iterated
        scope = self.scope
        region = scope.open_region()
        settles = scope.defer()
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            self._bind_item(node.target.id, node.iter, "iter")
        else:
            self._bind_target(node.target, None)
        self.visit(node.target)
        self.visit(node.iter)
        if settles:
            scope.settle()
        self.visit_all(node.body)
        self.visit_all(node.orelse)
        scope.close_region(region, loop=True)

    def visit_While(self, node: ast.While) -> None:
        scope = self.scope
        region = scope.open_region()
        self.visit(node.test)
        self.visit_all(node.body)
        self.visit_all(node.orelse)
        scope.close_region(region, loop=True)

    def visit_Match(self, node: ast.Match) -> None:
        """Each case from what reaches the `match`; after it, what reaches through any case or none."""
        self.visit(node.subject)
        scope = self.scope
        before = dict(scope.flow)
        ends = [before]
        for case in node.cases:
            scope.flow = dict(before)
            self.visit(case)
            ends.append(scope.flow)
        scope.flow = _joined(ends)

    visit_AsyncFor = visit_For

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        for name in node.names:
            self.scope.bind(name, _Binding(self.scope))  # rebound elsewhere: not followed
            self.escaping.add(name)  # another scope rebinds it: no flow of its own is certain

    visit_Nonlocal = visit_Global

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._bind_target(target, None)
        self.visit_all(node.targets)

    def _bind_item(self, name: str, container: ast.expr, via: str) -> None:
        """`for name in container`, `with container as name`: what the protocol hands out."""
        self.scope.bind(name, self._bound(self._intern(_item_of(_compact(container), via))))

    def _bind_target(
        self, target: ast.expr, value: ast.expr | None, annotation: ast.expr | None = None
    ) -> None:
        if isinstance(target, ast.Name):
            expression = self._intern(_compact(value)) if value is not None else None
            self.scope.bind(target.id, self._bound(expression))
        elif isinstance(target, (ast.Tuple, ast.List)):
            star = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)), None)
            literal = isinstance(value, (ast.Tuple, ast.List)) and not any(
                isinstance(e, ast.Starred) for e in value.elts
            )
            whole = self._intern(_compact(value)) if value is not None and not literal else None
            for index, element in enumerate(target.elts):
                if value is None or (star is not None and (index >= star or literal)):
                    self._bind_target(element, None)  # past a `*rest`, places count from the end
                elif literal:  # `a, b = up.A(), up.B()`: each its own value
                    assert isinstance(value, (ast.Tuple, ast.List))
                    own = value.elts[index] if len(value.elts) == len(target.elts) else None
                    self._bind_target(element, own)
                elif isinstance(element, ast.Name):  # `fig, ax = up.pair()`: what unpacking hands out
                    self.scope.bind(element.id, self._bound(self._intern(_item_of(whole, f"unpack:{index}"))))
                else:
                    self._bind_target(element, None)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None)
        elif isinstance(target, ast.Attribute):
            self.stored.add(id(target))
            base = _compact(target.value)
            if base is not None:  # the downstream sets it: reading it back is no use of the upstream's
                self.attribute_stores.add(
                    (id(self._store_scope(target.value)), self._intern(base), target.attr)
                )
            if isinstance(target.value, ast.Name) and self.method_self:
                current = self.method_self[-1]
                if current is not None and target.value.id == current[0]:
                    attrs = current[1].self_attributes.setdefault(target.attr, [])
                    expression = self._intern(_compact(value)) if value is not None else None
                    attrs.append(self._bound(expression, annotation=annotation))

    def _store_scope(self, base: ast.expr) -> _Scope:
        """Where a store on `base` is seen: the class for `self.x.y = ...` in a method, else here."""
        root = base
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        current = self.method_self[-1] if self.method_self else None
        if current is not None and isinstance(root, ast.Name) and root.id == current[0]:
            return current[1]
        return self.scope

    # -- use sites --------------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._visit_attribute(node, candidate=True)

    def _visit_attribute(self, node: ast.Attribute, *, candidate: bool, called: bool = False) -> None:
        if not called and not self.annotating:
            self.value_attributes.add(node.attr)  # read as a value (a method handed on: `self.on_done`)
        stored = id(node) in self.stored
        if candidate and not stored:  # `x.attr = ...` sets the attribute: no use of an existing one
            use = self.used.pop(id(node), "")
            self._candidate(
                "attribute", self._intern(_compact(node)), self.text.span(node), use=use,
                at=self.text.failing_at(node),
            )  # fmt: skip
        elif candidate and type(node.ctx) is ast.Store:  # but a store of its own (see SiteKind.STORE)
            self._candidate(
                "store", self._intern(_compact(node)), self.text.span(node), at=self.text.failing_at(node)
            )
        value = node.value
        if isinstance(value, ast.Attribute) and not stored:
            outer = self.depth
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise TooDeep(self.depth)
            self._visit_attribute(value, candidate=False)  # the outer attribute covers this one
            self.depth = outer
        else:
            self.visit(value)


def _leaves(block: list[ast.stmt]) -> bool:
    """Whether a block never goes on past its end (it ends in `return`, `raise`, `break`, `continue`)."""
    return bool(block) and isinstance(block[-1], (ast.Return, ast.Raise, ast.Break, ast.Continue))


_HANDLERS = {
    getattr(ast, name[len("visit_") :]): function
    for name, function in vars(_Collector).items()
    if name.startswith("visit_") and hasattr(ast, name[len("visit_") :])
}
