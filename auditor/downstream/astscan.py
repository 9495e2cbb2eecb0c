"""Scan one downstream file with the standard library's `ast`: every import, attribute use and call that reaches an upstream.

Input: a file's text and the upstream's top-level import names. Output: a `FileScan` value holding
`UseSite`s, each with a version-independent `Ref` (see `refs`), the call's shape and exact positions.
Local data flow is followed where it is unambiguous: imports and aliases, `x = Cls(...)`,
`self.x = ...` in any method, annotations of parameters and variables, and return annotations.
A name bound more than one way in a scope is not followed (no guessing).

CPython's own parser builds the tree (no concrete syntax tree: this scan only reads). Its columns
count UTF-8 bytes; every position here is converted to characters (as SARIF and editors count). The
few positions `ast` does not record (the module of `from m import x`, an imported name, a function's
name) are found in the text right after the node's start. The file is visited in source order, as
written, so that every choice that depends on what came before (version flags, evaluation order) is
the one a reader would make.

Memory stays bounded on large files: a large file is parsed in pieces that end where a top-level
statement ends (each piece's tree is dropped once visited), and what is kept for the evaluation at
the end is a compact form of each expression, not the tree.
"""

from __future__ import annotations

import ast
import builtins
import gc
import io
import re
import sys
import tokenize
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

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
from apidrift.auditor.pysource import _LONG_SPAN, _QUOTES, MAX_NESTING
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
# Python frames the visitor may use: a file within pysource.MAX_NESTING needs at most two per level.
_RECURSION_LIMIT = 8_000
# Files larger than this (characters) are parsed in pieces of about this size: CPython's parser holds
# the whole tree twice while it builds it (about 450 bytes a node: 900 MiB for 180,000 calls).
CHUNK_CHARS = 128 * 1024


class TooDeep(ValueError):
    """The file nests deeper than `MAX_NESTING` levels (as LibCST would nest it)."""

    def __init__(self, depth: int) -> None:
        super().__init__(f"nesting too deep to parse ({depth} levels, at most {MAX_NESTING})")
        self.depth = depth


# A compact expression, all the evaluation needs of one: ("n", name), ("a", base, attribute),
# ("c", function) for a call, ("s",) for `super()`, _NONE for `None`; None for anything else.
_Expr = Union[tuple, None]  # type: ignore[type-arg]
_NONE = ("none",)
_SUPER = ("s",)


def _compact(node: ast.AST) -> _Expr:
    kind = type(node)
    if kind is ast.Name:
        return ("n", node.id)  # type: ignore[attr-defined]
    if kind is ast.Attribute:
        return ("a", _compact(node.value), node.attr)  # type: ignore[attr-defined]
    if kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        if not node.args and not node.keywords and type(func) is ast.Name and func.id == "super":  # type: ignore[attr-defined]
            return _SUPER
        return ("c", _compact(func))
    if kind is ast.NamedExpr:
        return _compact(node.value)  # type: ignore[attr-defined]
    if kind is ast.Constant and node.value is None:  # type: ignore[attr-defined]
        return _NONE
    return None


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
_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]


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
    forwarding: _Forwarding | None = None  # for `__init__(self, ..., **kwargs)`
    # For an `__init__(self, ..., **kwargs)` without super() call that hands its `**kwargs` to one call:
    # that call's function, whether `__init__` rebinds the name it is read through, and the forwarding.
    wraps: tuple[_Expr, bool, _Forwarding] | None = None


@dataclass(eq=False)
class _Binding:
    """How a name got its value: a ready value, an expression to evaluate, or an annotation."""

    scope: _Scope
    value: _Value = None
    expression: _Expr = None
    annotation: ast.expr | None = None
    type_checking: bool = False  # made under `if TYPE_CHECKING:`: never runs


class _Candidate:
    """A use site to evaluate once the whole file is read: where it is and what it names."""

    __slots__ = ("expression", "extra", "guarded", "keyword_spans", "kind", "scope", "shape", "span")

    def __init__(
        self, kind: str, expression: _Expr, scope: _Scope, guarded: bool, span: Span | None, extra: object = None,
        shape: CallShape | None = None, keyword_spans: tuple[tuple[str, Span], ...] = (),
    ) -> None:  # fmt: skip
        self.kind = kind
        self.expression = expression  # calls: the function; attributes: the attribute
        self.scope = scope
        self.guarded = guarded
        self.span = span
        self.extra = extra  # imports: (module, name or None, code span)
        self.shape = shape
        self.keyword_spans = keyword_spans


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_GAP = r"(?:[ \t\f]|\\\r?\n|\\\r)"  # what may separate two tokens on one logical line
_FROM_MODULE = re.compile(rf"from{_GAP}+(\w+(?:{_GAP}*\.{_GAP}*\w+)*)")
_DEF_NAME = re.compile(rf"(?:async{_GAP}+)?def{_GAP}+(\w+)")
_IDENTIFIER = re.compile(r"\w+")


class _Text:
    """The source as CPython numbers it: lines split at \\n, \\r\\n and \\r; byte columns to characters."""

    def __init__(self, source: str) -> None:
        self.source = source
        starts = [0]
        starts.extend(m.end() for m in _LINE_BREAK.finditer(source))
        self.starts = starts
        self.ascii = source.isascii()
        self._encoded: dict[int, bytes] = {}

    def line(self, lineno: int) -> str:
        starts = self.starts
        start = starts[lineno - 1]
        end = starts[lineno] if lineno < len(starts) else len(self.source)
        return self.source[start:end]

    def column(self, lineno: int, byte_column: int) -> int:
        """The character column of a UTF-8 byte column on line `lineno` (1-based)."""
        if self.ascii:
            return byte_column
        line = self.line(lineno)
        if line.isascii():
            return byte_column
        encoded = self._encoded.get(lineno)
        if encoded is None:
            encoded = self._encoded[lineno] = line.encode("utf-8", "surrogatepass")
        return len(encoded[:byte_column].decode("utf-8", "replace"))

    def offset(self, lineno: int, byte_column: int) -> int:
        return self.starts[lineno - 1] + self.column(lineno, byte_column)

    def position(self, offset: int) -> tuple[int, int]:
        """(line, 0-based character column) of a character offset."""
        index = bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index]

    def span(self, node: ast.AST) -> Span:
        line, end_line = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        assert end_line is not None
        return Span(
            line,
            self.column(line, node.col_offset) + 1,
            end_line,
            self.column(end_line, node.end_col_offset) + 1,
        )  # type: ignore[attr-defined,arg-type]

    def bounds(self, node: ast.AST) -> tuple[int, int]:
        """The node's character offsets [start, end)."""
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined,arg-type]

    def segment(self, node: ast.AST) -> str:
        start, end = self.bounds(node)
        return self.source[start:end]

    def parenthesized(self, node: ast.AST, indent: str) -> str:
        """The node's text with the brackets that group it (`(1)` for a default written `=(1)`), as
        LibCST prints a node on its own: continuation lines lose the block's `indent`, except inside
        a string literal.

        Only for an expression right after `=` or `:` (a default, an annotation), where every `(`
        between that sign and the expression groups the expression itself."""
        start, end = self.bounds(node)
        source = self.source
        opened = 0
        at = start
        while at > 0:
            char = source[at - 1]
            if char == "(":
                opened += 1
                start = at - 1
            elif not char.isspace() and char != "\\":
                break
            at -= 1
        at = end
        while opened and at < len(source):
            char = source[at]
            if char == ")":
                opened -= 1
                end = at + 1
            elif not char.isspace() and char != "\\":
                break
            at += 1
        code = source[start:end]
        if indent and ("\n" in code or "\r" in code):
            code = _dedent(code, indent)
        return code

    def span_of(self, start: int, end: int) -> Span:
        line, column = self.position(start)
        end_line, end_column = self.position(end)
        return Span(line, column + 1, end_line, end_column + 1)


def _dedent(code: str, indent: str) -> str:
    """`code` without `indent` at the start of its continuation lines, except lines inside a string."""
    lines = code.splitlines(keepends=True)
    inside: set[int] = set()  # 0-based numbers of lines that start within a string literal
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                inside.update(
                    range(token.start[0], token.end[0])
                )  # rows are 1-based: the lines after the first
    except (tokenize.TokenError, SyntaxError):
        pass
    return "".join(
        line[len(indent) :] if number and number not in inside and line.startswith(indent) else line
        for number, line in enumerate(lines)
    )


class _Collector:
    """One pass over the tree in source order: scopes, bindings, guards and the candidate use sites."""

    def __init__(self, upstream_names: frozenset[str], text: _Text) -> None:
        self.upstream_names = upstream_names
        self.text = text
        self.module_scope = _Scope(None)
        self.scopes: list[_Scope] = [self.module_scope]
        self.candidates: list[_Candidate] = []
        self.guard_depth = 0
        self.method_self: list[tuple[str, _ClassScope] | None] = []
        self.version_names: set[str] = set()  # names computed from a version or feature test
        # Names an `except ImportError:` fallback binds (`f = None`, `HAS_X = False`): a test of one
        # (`if f is not None:`) guards what it holds, as the code handles the import's failure there.
        self.fallback_names: set[str] = set()
        self.import_fallback_depth = 0
        self.stored: set[int] = set()  # attributes assigned or deleted: no use of an existing one
        self.try_star = False  # inside the handlers of `try: ... except* E:`
        self.depth = 0  # nesting, counted as LibCST nests (see pysource.nesting_problem)
        self.lines: list[str] | None = None
        self.interned: dict[object, object] = {}  # equal expressions and shapes are kept once

    def _intern(self, value):  # type: ignore[no-untyped-def]
        return self.interned.setdefault(value, value)

    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    def _candidate(self, kind: str, expression: _Expr, span: Span | None, extra: object = None) -> None:
        self.candidates.append(
            _Candidate(kind, expression, self.scopes[-1], self.guard_depth > 0, span, extra)
        )

    # -- traversal --------------------------------------------------------------------------------

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        outer = self.depth
        depth = outer + 1
        if kind is ast.BoolOp:
            depth += len(node.values) - 1  # type: ignore[attr-defined]  # LibCST nests one level per operand
        elif kind is ast.Constant or kind is ast.JoinedStr:
            depth += self._string_depth(node)
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

    def _string_depth(self, node: ast.AST) -> int:
        """Implicitly joined string literals nest one level per two parts in LibCST (as pysource counts)."""
        value = getattr(node, "value", "")
        if not isinstance(value, (str, bytes)):
            return 0
        end = node.end_lineno  # type: ignore[attr-defined]
        if end is None or (end == node.lineno and node.end_col_offset - node.col_offset <= _LONG_SPAN):  # type: ignore[attr-defined,operator]
            return 0
        if self.lines is None:
            self.lines = self.text.source.splitlines()
        segment = "\n".join(self.lines[node.lineno - 1 : end])  # type: ignore[attr-defined]
        if len(segment) > _LONG_SPAN or end - node.lineno > 50:  # type: ignore[attr-defined]
            return len(_QUOTES.findall(segment)) // 2
        return 0

    def visit_all(self, nodes: list) -> None:  # type: ignore[type-arg]
        for node in nodes:
            if node is not None:
                self.visit(node)

    # -- structure --------------------------------------------------------------------------------

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        scope = self.scope
        written = [b.value if isinstance(b, ast.Starred) else b for b in node.bases]
        bases = tuple(self._intern(_compact(b)) for b in written if not _is_trivial_base(b))
        keywords = any(k.arg is not None for k in node.keywords)
        cls = _ClassScope(
            scope, is_class=True, bases=bases, keywords=keywords, any_keywords=bool(node.keywords),
            decorated=bool(node.decorator_list),
        )  # fmt: skip
        scope.bind(node.name, _Binding(scope, value=_DownClass(cls)))
        self.scopes.append(cls)
        self.visit_all(node.decorator_list)
        self.visit_all(node.bases)  # then the keywords (`**extra` among them), as LibCST lists them
        self.visit_all(node.keywords)
        self.visit_all(node.body)
        self.scopes.pop()
        self.candidates.append(_Candidate("class", None, cls, self.guard_depth > 0, None))

    def visit_FunctionDef(self, node: _Function) -> None:
        outer = self.scope
        outer.bind(node.name, _Binding(outer))
        # Names in a function resolve in enclosing functions and the module, never in a class body.
        parent = outer
        while parent.is_class and parent.parent is not None:
            parent = parent.parent
        is_method = isinstance(outer, _ClassScope)
        scope = _Scope(parent, owner=outer if is_method else None)  # type: ignore[arg-type]
        args = node.args
        ordered = [*args.posonlyargs, *args.args]
        is_static = any(_dotted(d) == "staticmethod" for d in node.decorator_list)
        if is_method:
            line = self.text.line(node.lineno)
            indent = line[: len(line) - len(line.lstrip(" \t\f"))]  # the block the method is defined in
            method = _Method(
                frozenset((_dotted(d) or "?").rsplit(".", 1)[-1] for d in node.decorator_list), args, indent,
                _name_span(node, self.text),
            )  # fmt: skip
            if node.name == "__init__" and args.kwarg is not None:
                method.forwarding = _forwarding(node, method, self.text)
                if method.forwarding is None:
                    method.wraps = self._kwargs_call(node, method)
            outer.methods[node.name] = method  # type: ignore[union-attr]
        for index, param in enumerate([*ordered, *args.kwonlyargs]):
            if index == 0 and is_method and not is_static and ordered:
                scope.bind(param.arg, _Binding(scope, value=_SelfOf(outer)))  # type: ignore[arg-type]
                self.method_self.append((param.arg, outer))  # type: ignore[arg-type]
            elif param.annotation is not None:
                scope.bind(param.arg, _Binding(outer, annotation=param.annotation))
            else:
                scope.bind(param.arg, _Binding(scope))
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
            self.visit(node.returns)
        self.visit_all(node.body)
        self.method_self.pop()
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _kwargs_call(self, init: _Function, method: _Method) -> tuple[_Expr, bool, _Forwarding] | None:
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
                self.visit(param.annotation)
            if default is not None:
                self.visit(default)
        if args.vararg is not None and args.vararg.annotation is not None:
            self.visit(args.vararg.annotation)
        for param, default in zip(args.kwonlyargs, args.kw_defaults):
            if param.annotation is not None:
                self.visit(param.annotation)
            if default is not None:
                self.visit(default)
        if args.kwarg is not None and args.kwarg.annotation is not None:
            self.visit(args.kwarg.annotation)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        scope = _Scope(self.scope)
        for param in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            scope.bind(param.arg, _Binding(scope))
        self.scopes.append(scope)
        self._visit_arguments(node.args)
        self.visit(node.body)
        self.scopes.pop()

    def _visit_comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        scope = _Scope(self.scope)
        for generator in node.generators:
            for name in _target_names(generator.target):
                scope.bind(name, _Binding(scope))
        self.scopes.append(scope)
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

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.visit(node.body)
        self.visit(node.test)
        self.visit(node.orelse)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        for key, pattern in zip(node.keys, node.patterns):
            self.visit(key)
            self.visit(pattern)

    # -- guards -----------------------------------------------------------------------------------

    # The guarded body of a try, and the fallback in an `except ImportError` handler (it runs only when
    # the first import failed); the `else` and `finally` branches are not guarded.
    def visit_Try(self, node: ast.Try) -> None:
        guards = any(_handler_guards(h) for h in node.handlers)
        self.guard_depth += guards
        self.visit_all(node.body)
        self.guard_depth -= guards
        star, self.try_star = self.try_star, False
        self.visit_all(node.handlers)
        self.try_star = star
        self.visit_all(node.orelse)
        self.visit_all(node.finalbody)

    def visit_TryStar(self, node: ast.AST) -> None:  # `except*` handlers neither guard nor bind here
        self.visit_all(node.body)  # type: ignore[attr-defined]
        star, self.try_star = self.try_star, True
        self.visit_all(node.handlers)  # type: ignore[attr-defined]
        self.try_star = star
        self.visit_all(node.orelse)  # type: ignore[attr-defined]
        self.visit_all(node.finalbody)  # type: ignore[attr-defined]

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
        guards = _catches_import_error(node)
        self.guard_depth += guards
        self.import_fallback_depth += guards
        self.visit_all(node.body)
        self.guard_depth -= guards
        self.import_fallback_depth -= guards

    # `with contextlib.suppress(ImportError, ...):` swallows what a guarded use may raise.
    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, None)
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self.visit(item.optional_vars)
        guards = _suppresses(node)
        self.guard_depth += guards
        self.visit_all(node.body)
        self.guard_depth -= guards

    visit_AsyncWith = visit_With

    # Both branches of a feature or version test: each runs only where its side of the test holds.
    def visit_If(self, node: ast.If) -> None:
        guards = self._is_guard(node.test)
        self.guard_depth += guards
        self.visit(node.test)
        type_checking = _is_type_checking(node.test)
        scope = self.scope
        scope.type_checking += type_checking
        self.visit_all(node.body)
        scope.type_checking -= type_checking
        self.visit_all(node.orelse)
        self.guard_depth -= guards

    def _is_guard(self, test: ast.expr) -> bool:
        if _is_guard_test(test, self.text):
            return True
        if not self.version_names and not self.fallback_names:
            return False
        names = set(_identifiers(test))
        return not (names.isdisjoint(self.version_names) and names.isdisjoint(self.fallback_names))

    def visit_Call(self, node: ast.Call) -> None:
        if type(node.func) is ast.Name and node.func.id in _NAME_MAKERS:
            stars = self.module_scope.star_modules = self.module_scope.star_modules or []
            stars.append(None)  # names bound by code: a name bound nowhere may still exist
        first = _first_argument(node)
        if first is not None and isinstance(first, ast.Name) and _dotted(node.func) == "isinstance":
            self.scope.narrowed.add(first.id)  # its annotated type no longer holds
        text = self.text
        self.candidates.append(
            _Candidate("call", self._intern(_compact(node.func)), self.scopes[-1], self.guard_depth > 0, text.span(node),
                       None, *_shape(node, text, self.interned))
        )  # fmt: skip
        func = node.func
        if isinstance(func, ast.Attribute):
            self._visit_attribute(func, candidate=False)
        else:
            self.visit(func)
        args, keywords = node.args, node.keywords
        if keywords and args and _position(keywords[0]) < _position(args[-1]):
            self.visit_all(_in_source_order([*args, *keywords]))  # `f(a, k=1, *rest)`
        else:
            self.visit_all(args)
            self.visit_all(keywords)

    # -- bindings ---------------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            dotted = alias.name
            if alias.asname is not None:
                self.scope.bind(alias.asname, _Binding(self.scope, value=ModuleRef(dotted)))
            else:
                top = dotted.split(".")[0]
                self.scope.bind(top, _Binding(self.scope, value=ModuleRef(top)))
            if dotted.split(".")[0] in self.upstream_names:
                span = self.text.span(alias)
                self._candidate("import-module", None, span, (dotted, None, span))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module
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
        for alias in node.names:
            name = alias.name
            local = alias.asname if alias.asname is not None else name
            value = AttrRef(ModuleRef(module), name) if upstream and module else None
            self.scope.bind(local, _Binding(self.scope, value=value))
            if upstream:
                start = text.offset(alias.lineno, alias.col_offset)
                match = _IDENTIFIER.match(text.source, start)
                alias_span = text.span(alias)
                name_span = text.span_of(start, match.end()) if match else alias_span
                self._candidate("import-name", None, name_span, (module, name, alias_span))

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._bind_target(target, node.value)
            if self.import_fallback_depth:
                self.fallback_names.update(_identifiers(target))
        # `sqla_14 = _vers >= (1, 4)` where `_vers` came from `__version__`: a version flag.
        if self._is_guard(node.value) or _VERSIONISH.search(self.text.segment(node.value)):
            for target in node.targets:
                self.version_names.update(_identifiers(target))
        self.visit_all(node.targets)
        self.visit(node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name):
            self.scope.bind(node.target.id, _Binding(self.scope, annotation=node.annotation))
        else:
            self._bind_target(node.target, None, node.annotation)
        self.visit(node.target)
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._bind_target(node.target, None)
        self.visit(node.target)
        self.visit(node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        if isinstance(node.target, ast.Name):
            self.scope.bind(
                node.target.id, _Binding(self.scope, expression=self._intern(_compact(node.value)))
            )
        self.visit(node.target)
        self.visit(node.value)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self._bind_target(node.target, None)
        self.visit(node.target)
        self.visit(node.iter)
        self.visit_all(node.body)
        self.visit_all(node.orelse)

    visit_AsyncFor = visit_For

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        for name in node.names:
            self.scope.bind(name, _Binding(self.scope))  # rebound elsewhere: not followed

    visit_Nonlocal = visit_Global

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._bind_target(target, None)
        self.visit_all(node.targets)

    def _bind_target(
        self, target: ast.expr, value: ast.expr | None, annotation: ast.expr | None = None
    ) -> None:
        if isinstance(target, ast.Name):
            expression = self._intern(_compact(value)) if value is not None else None
            self.scope.bind(target.id, _Binding(self.scope, expression=expression))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind_target(element, None)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None)
        elif isinstance(target, ast.Attribute):
            self.stored.add(id(target))
            if isinstance(target.value, ast.Name) and self.method_self:
                current = self.method_self[-1]
                if current is not None and target.value.id == current[0]:
                    attrs = current[1].self_attributes.setdefault(target.attr, [])
                    expression = self._intern(_compact(value)) if value is not None else None
                    attrs.append(_Binding(self.scope, expression=expression, annotation=annotation))

    # -- use sites --------------------------------------------------------------------------------

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._visit_attribute(node, candidate=True)

    def _visit_attribute(self, node: ast.Attribute, *, candidate: bool) -> None:
        stored = id(node) in self.stored
        if candidate and not stored:  # `x.attr = ...` sets the attribute: no use of an existing one
            self._candidate("attribute", self._intern(_compact(node)), self.text.span(node))
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


_HANDLERS = {
    getattr(ast, name[len("visit_") :]): function
    for name, function in vars(_Collector).items()
    if name.startswith("visit_") and hasattr(ast, name[len("visit_") :])
}
_NO_NODES = frozenset({"ctx", "op", "ops", "type_comment", "type_ignores"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in _NO_NODES)  # type: ignore[attr-defined]
    return fields


def _position(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def _in_source_order(nodes: list) -> list:  # type: ignore[type-arg]
    return sorted(nodes, key=_position)


def _first_argument(node: ast.Call) -> ast.expr | None:
    """The value of a call's first argument as written (`*a` and `**k` give `a` and `k`)."""
    first: ast.AST | None = None
    if node.args:
        first = node.args[0]
    if node.keywords and (first is None or _position(node.keywords[0]) < _position(first)):
        first = node.keywords[0]
    if first is None:
        return None
    if isinstance(first, (ast.Starred, ast.keyword)):
        return first.value
    return first  # type: ignore[return-value]


class _Evaluator:
    """Turns expressions into `Ref`s through the collected bindings; memoized, cycle-safe."""

    def __init__(self, text: _Text, bound_anywhere: frozenset[str] = frozenset()) -> None:
        self.text = text
        self.bound_anywhere = bound_anywhere  # every name the file binds, however (for star imports)
        self._active: set[int] = set()
        self._memo: dict[int, _Value] = {}  # binding -> its value: each binding is evaluated once
        self._refs: dict[Ref, Ref] = {}

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
            if binding.expression == _NONE:
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

    def expression(self, expression: _Expr, scope: _Scope) -> _Value:
        if expression is None:
            return None
        tag = expression[0]
        if tag == "n":
            return self.name(expression[1], scope)
        if tag == "a":
            return self.attribute(self.expression(expression[1], scope), expression[2])
        if tag == "c":
            func = self.expression(expression[1], scope)
            if isinstance(func, _DownClass):
                return _SelfOf(func.cls)
            if func is None or isinstance(func, (_SelfOf, _SuperOf)):
                return None
            return self._ref(CallRef(func))
        if tag == "s":
            owner = _method_owner(scope)
            return _SuperOf(owner) if owner is not None else None
        return None

    def _ref(self, ref: Ref) -> Ref:
        """One object per distinct reference (a large file names the same few thousands of times)."""
        return self._refs.setdefault(ref, ref)

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
        return self._ref(AttrRef(base, name))  # type: ignore[arg-type]

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
        assert cls.parent is not None
        if len(cls.bases) != 1 or cls.keywords:
            return None
        value = self.expression(cls.bases[0], cls.parent)
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
    ) -> tuple[Ref, _Forwarding] | None:
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

    def annotation(self, node: ast.expr, scope: _Scope, text: _Text | None = None) -> Ref | _DownClass | None:
        """The class an annotation names: `C`, `mod.C`, `"C"`, `Optional[C]`, `C | None`."""
        if isinstance(node, ast.Constant):
            if not isinstance(node.value, str) or not _single_string((text or self.text).segment(node)):
                return None
            if node.value[:1].isspace():
                return None  # not an expression on its own
            try:
                parsed = ast.parse(node.value, mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            return self.annotation(parsed, scope, _Text(node.value))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            sides = [
                s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)
            ]
            return self.annotation(sides[0], scope, text) if len(sides) == 1 else None
        if isinstance(node, ast.Subscript):
            head = _dotted(node.value)
            if head in ("Optional", "typing.Optional", "t.Optional") and not isinstance(
                node.slice, (ast.Tuple, ast.Slice)
            ):
                return self.annotation(node.slice, scope, text)
            return None
        if isinstance(node, (ast.Name, ast.Attribute)):
            value = self.expression(_compact(node), scope)
            return value if isinstance(value, (ModuleRef, AttrRef, _DownClass)) else None
        return None


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


_REFS = (ModuleRef, AttrRef, CallRef, InstanceRef, StarRef)
# Decorators under which a method keeps the signature the upstream calls it with.
_OVERRIDE_DECORATORS = frozenset({"classmethod", "staticmethod", "override", "abstractmethod", "final"})


def scan_source(path: str, source: str, upstream_names: frozenset[str]) -> FileScan:
    """Find the use sites of one file. Raises SyntaxError (or ValueError for null bytes) on a file
    CPython cannot parse, TooDeep on one nested deeper than MAX_NESTING."""
    text = _Text(source)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_LIMIT))
    collecting = gc.isenabled()
    gc.disable()  # the scan allocates many small objects and frees none until it returns: no cycle hunts meanwhile
    try:
        collector = _Collector(upstream_names, text)
        bound: set[str] | None = set() if _MAY_IMPORT_STAR.search(source) else None
        for module in _parse(source):
            collector.visit_all(module.body)
            if bound is not None:
                _add_bound_names(module, bound)
            collector.stored.clear()  # ids of this piece's nodes: free to be reused once it is dropped
            del module
        stars = collector.module_scope.star_modules
        evaluator = _Evaluator(
            text, frozenset(bound) if bound is not None and stars and None not in stars else frozenset()
        )
        lines = tuple(source.splitlines())
        sites: list[UseSite] = []
        candidates = collector.candidates
        collector.candidates = []
        for index, candidate in enumerate(candidates):
            candidates[index] = None  # type: ignore[call-overload]  # freed as they become sites
            if candidate.kind == "class":
                assert isinstance(candidate.scope, _ClassScope)
                sites.extend(_override_sites(candidate.scope, evaluator, text, upstream_names))
                continue
            site = _site(candidate, evaluator, upstream_names, lines)
            if site is not None:
                sites.append(site)
    finally:
        sys.setrecursionlimit(limit)
        if collecting:
            gc.enable()
    return FileScan(path, tuple(sites), lines)


_NAME_MAKERS = frozenset({"globals", "vars", "locals", "exec", "eval", "__import__"})
# Text without which a file has no star import (it may match a comment or a string: then names are collected for nothing).
_MAY_IMPORT_STAR = re.compile(rf"import{_GAP}*\*")

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


def _add_bound_names(tree: ast.AST, names: set[str]) -> None:
    """Every name a piece of the file binds anywhere, in any way (assignments, parameters of defs and
    lambdas, comprehension and match targets, imports, handlers, `global`): a name outside the file's
    set, and no builtin, can only come from a star import."""
    names.add("*")
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


# Where a top-level statement may start: a line that begins with code, and not with a clause that
# continues the statement before it.
_STATEMENT_START = re.compile(r"^(?=[^\s#)\]}])(?!(?:else|elif|except|finally)\b)", re.MULTILINE)


def _parse(source: str) -> Iterator[ast.Module]:
    """The file's tree, in pieces of about CHUNK_CHARS for a large file.

    A piece ends before a line that starts at column 0 and only where the text before parses: then
    the tokenizer is at the top level there (no string, bracket or continuation is open, since the
    piece would not parse), so the pieces' statements are exactly the file's. Each piece is parsed
    after as many empty lines as precede it, so line numbers are the file's.
    """
    if len(source) <= CHUNK_CHARS:
        yield ast.parse(source)
        return
    start = 0
    lines_before = 0
    while start < len(source):
        size = CHUNK_CHARS
        while True:
            boundary = _STATEMENT_START.search(source, start + size) if start + size < len(source) else None
            end = boundary.start() if boundary is not None else len(source)
            try:
                module = ast.parse("\n" * lines_before + source[start:end])
                break
            except SyntaxError as error:
                if end >= len(source) or _is_nesting_error(error):
                    raise
                size *= 2  # the piece ends inside a string, brackets or a decorated definition: go on
        yield module
        del module
        lines_before += source.count("\n", start, end) + _lone_returns(source, start, end)
        start = end


def _lone_returns(source: str, start: int, end: int) -> int:
    """Line breaks in source[start:end] written as a lone \\r (CPython counts them as lines)."""
    returns = source.count("\r", start, end)
    return returns - source.count("\r\n", start, end) if returns else 0


def _is_nesting_error(error: SyntaxError) -> bool:
    return any(
        marker in str(error.msg)
        for marker in ("too many nested", "too many levels", "too many statically", "too complex")
    )


def _override_sites(
    cls: _ClassScope, evaluator: _Evaluator, text: _Text, upstream_names: frozenset[str]
) -> list[UseSite]:
    """One site per method that overrides a method of the class's upstream base: the upstream calls it."""
    base = evaluator.upstream_base(cls, upstream_names)
    if base is None:
        return []
    sites = []
    for name, method in cls.methods.items():
        if name.startswith("__") and name.endswith("__"):
            continue
        if method.decorators - _OVERRIDE_DECORATORS or _defined_between(cls, name, evaluator):
            continue
        signature = _signature_of(method.args, method.indent, text)
        if "staticmethod" not in method.decorators:
            signature = signature.bound()
        sites.append(
            UseSite(
                SiteKind.OVERRIDE,
                AttrRef(InstanceRef(base), name),
                method.name_span,
                f"def {name}(...)",
                signature=signature,
            )
        )
    return sites


def _name_span(function: _Function, text: _Text) -> Span:
    """Where a function's name is written: after `def` (ast records where `def` starts)."""
    start = text.offset(function.lineno, function.col_offset)
    match = _DEF_NAME.match(text.source, start)
    if match is None:  # not reached: the parser saw `def NAME` here
        return text.span(function)
    return text.span_of(match.start(1), match.end(1))


def _defined_between(cls: _ClassScope, name: str, evaluator: _Evaluator) -> bool:
    """Whether a downstream class between `cls` and its upstream base already defines `name`."""
    parent = evaluator.single_base(cls)
    while isinstance(parent, _DownClass):
        if name in parent.cls.methods:
            return True
        parent = evaluator.single_base(parent.cls)
    return False


def _signature_of(args: ast.arguments, indent: str, text: _Text) -> Signature:
    params: list[Parameter] = []

    def add(param: ast.arg, kind: ParamKind, default: ast.expr | None = None) -> None:
        code = text.parenthesized(default, indent) if default is not None else None
        annotation = text.parenthesized(param.annotation, indent) if param.annotation is not None else None
        params.append(Parameter(param.arg, kind, default is not None, code, annotation))

    positional = [(p, ParamKind.POSITIONAL_ONLY) for p in args.posonlyargs] + [
        (p, ParamKind.POSITIONAL_OR_KEYWORD) for p in args.args
    ]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for (param, kind), default in zip(positional, defaults):
        add(param, kind, default)
    if args.vararg is not None:
        add(args.vararg, ParamKind.VAR_POSITIONAL)
    for param, default in zip(args.kwonlyargs, args.kw_defaults):
        add(param, ParamKind.KEYWORD_ONLY, default)
    if args.kwarg is not None:
        add(args.kwarg, ParamKind.VAR_KEYWORD)
    return Signature(tuple(params))


def _site(
    candidate: _Candidate, evaluator: _Evaluator, upstream_names: frozenset[str], lines: tuple[str, ...]
) -> UseSite | None:
    kind, guarded, span = candidate.kind, candidate.guarded, candidate.span
    assert span is not None
    if kind == "call":
        func = evaluator.expression(candidate.expression, candidate.scope)
        if func is None:
            return None
        shape, keyword_spans = candidate.shape, candidate.keyword_spans
        assert shape is not None
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
    if kind == "attribute":
        ref = evaluator.expression(candidate.expression, candidate.scope)
        if not isinstance(ref, AttrRef) or root_module(ref) not in upstream_names:
            return None
        return UseSite(SiteKind.ATTRIBUTE, ref, span, _code(lines, span), guarded=guarded)
    module, name, code_span = candidate.extra  # type: ignore[misc]
    code = _code(lines, code_span)
    if kind == "import-name":
        return UseSite(SiteKind.IMPORT, AttrRef(ModuleRef(module), name), span, code, guarded=guarded)
    return UseSite(SiteKind.IMPORT, ModuleRef(module), span, code, guarded=guarded)


def _shape(
    node: ast.Call, text: _Text, interned: dict[object, object]
) -> tuple[CallShape, tuple[tuple[str, Span], ...]]:
    positional = 0
    star_args = star_kwargs = False
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            star_args = True
        else:
            positional += 1
    keywords: list[str] = []
    spans: list[tuple[str, Span]] = []
    for keyword in node.keywords:
        if keyword.arg is None:
            star_kwargs = True
        else:
            keywords.append(keyword.arg)
            spans.append((keyword.arg, text.span(keyword)))
    shape = CallShape(positional, tuple(keywords), star_args, star_kwargs)
    return interned.setdefault(shape, shape), tuple(spans)  # type: ignore[return-value]


def _code(lines: tuple[str, ...], span: Span) -> str:
    if 0 < span.line <= len(lines):
        line = lines[span.line - 1]
        end = span.end_column - 1 if span.end_line == span.line else len(line)
        return line[span.column - 1 : end].strip() or line.strip()
    return ""


def _dotted(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _target_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _target_names(e)]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _identifiers(node: ast.AST) -> Iterator[str]:
    """Every identifier written in `node`: names, attribute names, keyword and parameter names, the
    constants `None`, `True` and `False`, and the names a statement defines, imports or declares."""
    for child in ast.walk(node):
        kind = type(child)
        if kind is ast.Name:
            yield child.id  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            yield child.attr  # type: ignore[attr-defined]
        elif kind is ast.Constant:
            value = child.value  # type: ignore[attr-defined]
            if value is None or value is True or value is False:
                yield str(value)
        elif kind is ast.keyword or kind is ast.arg:
            if child.arg is not None:  # type: ignore[attr-defined]
                yield child.arg  # type: ignore[attr-defined]
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            yield child.name  # type: ignore[attr-defined]
        elif kind is ast.alias:
            if child.name != "*":  # type: ignore[attr-defined]
                yield from child.name.split(".")  # type: ignore[attr-defined]
            if child.asname is not None:  # type: ignore[attr-defined]
                yield child.asname  # type: ignore[attr-defined]
        elif kind is ast.ImportFrom:
            if child.module:  # type: ignore[attr-defined]
                yield from child.module.split(".")  # type: ignore[attr-defined]
        elif kind in (ast.Global, ast.Nonlocal):
            yield from child.names  # type: ignore[attr-defined]
        elif kind is ast.ExceptHandler or kind in (ast.MatchAs, ast.MatchStar):
            if child.name is not None:  # type: ignore[attr-defined]
                yield child.name  # type: ignore[attr-defined]
        elif kind is ast.MatchMapping:
            if child.rest is not None:  # type: ignore[attr-defined]
                yield child.rest  # type: ignore[attr-defined]
        elif kind is ast.MatchClass:
            yield from child.kwd_attrs  # type: ignore[attr-defined]


def _handler_guards(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = []
    for item in types:
        dotted = _dotted(item.value if isinstance(item, ast.Starred) else item)
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


def _forwarding(init: _Function, method: _Method, text: _Text) -> _Forwarding | None:
    if init.args.kwarg is None:
        return None
    kwargs = init.args.kwarg.arg
    supers: list[ast.Call] = []
    uses = 0
    for statement in init.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                func = node.func
                if (
                    isinstance(func, ast.Attribute)
                    and func.attr == "__init__"
                    and isinstance(func.value, ast.Call)
                    and _dotted(func.value.func) == "super"
                ):
                    supers.append(node)
        uses += sum(1 for name in _identifiers(statement) if name == kwargs)
    if len(supers) != 1 or uses != 1:
        return None  # kwargs read or changed elsewhere, or several super() calls: not certain
    return _handed_on(init, kwargs, supers[0], method, text)


# Statements with a body of their own: a call under one of them may not be made.
_COMPOUND = tuple(
    getattr(ast, n)
    for n in ("If", "For", "AsyncFor", "While", "Try", "TryStar", "With", "AsyncWith", "FunctionDef",
              "AsyncFunctionDef", "ClassDef", "Match")
    if hasattr(ast, n)
)  # fmt: skip


def _kwargs_call(init: _Function, method: _Method, text: _Text) -> tuple[ast.Call, _Forwarding] | None:
    """The one call of `__init__`'s own body (not in a nested def, not under a branch or a loop) that
    receives its `**kwargs` unchanged, the mapping used nowhere else; no `super()` call at all."""
    if init.args.kwarg is None or not init.body:
        return None
    first = init.body[0]
    if text.line(first.lineno)[: text.column(first.lineno, first.col_offset)].strip():
        return None  # `def __init__(self, **kw): ...` on one line (LibCST's statement suite): not followed
    kwargs = init.args.kwarg.arg
    calls: list[ast.Call] = []
    uses = 0
    for statement in init.body:
        for node in ast.walk(statement):
            kind = type(node)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
                return None  # a nested function
            if kind is ast.Call:
                if _dotted(node.func) == "super":  # type: ignore[attr-defined]
                    return None
                if any(
                    k.arg is None and isinstance(k.value, ast.Name) and k.value.id == kwargs
                    for k in node.keywords  # type: ignore[attr-defined]
                ):
                    calls.append(node)  # type: ignore[arg-type]
        uses += sum(1 for name in _identifiers(statement) if name == kwargs)
    if len(calls) != 1 or uses != 1:
        return None
    call = calls[0]
    top = [stmt for stmt in init.body if not isinstance(stmt, _COMPOUND)]
    if not any(node is call for stmt in top for node in ast.walk(stmt)):
        return None  # under an `if`, a loop or a `try`: the call may not be made
    forwarding = _handed_on(init, kwargs, call, method, text)
    return (call, forwarding) if forwarding is not None else None


def _assigns_name(function: _Function, dotted: str) -> bool:
    """Whether the function binds the first name of `dotted`: a parameter, an assignment target or an
    imported name (names as LibCST writes them: the attribute names of a target count)."""
    head = dotted.split(".")[0]
    args = function.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    every += [p for p in (args.vararg, args.kwarg) if p is not None]
    if any(p.arg == head for p in every):
        return True
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Assign):
                if any(name == head for target in node.targets for name in _identifiers(target)):
                    return True
            elif isinstance(node, ast.alias):
                local = [node.asname] if node.asname is not None else node.name.split(".")
                if head in local:
                    return True
    return False


def _handed_on(
    init: _Function, kwargs: str, call: ast.Call, method: _Method, text: _Text
) -> _Forwarding | None:
    double = [k for k in call.keywords if k.arg is None]
    passes = [k for k in double if isinstance(k.value, ast.Name) and k.value.id == kwargs]
    if len(passes) != 1 or len(double) != 1:
        return None
    positional = sum(1 for a in call.args if not isinstance(a, ast.Starred))
    keywords = tuple(k.arg for k in call.keywords if k.arg is not None)
    star_args = any(isinstance(a, ast.Starred) for a in call.args)
    return _Forwarding(
        _signature_of(init.args, method.indent, text).bound(),
        kwargs,
        CallShape(positional, keywords, star_args, False),
    )


def _method_owner(scope: _Scope) -> _ClassScope | None:
    current: _Scope | None = scope
    while current is not None:
        if current.owner is not None:
            return current.owner
        current = current.parent
    return None


def _is_trivial_base(node: ast.expr) -> bool:
    """`object`, `Generic[T]`, `Protocol`: bases that add nothing to what is inherited."""
    head = node.value if isinstance(node, ast.Subscript) else node
    name = (_dotted(head) or "").rsplit(".", 1)[-1]
    return name in ("object", "Generic", "Protocol")


def _suppresses(node: ast.With | ast.AsyncWith) -> bool:
    for item in node.items:
        call = item.context_expr
        if isinstance(call, ast.Call) and (_dotted(call.func) or "").rsplit(".", 1)[-1] == "suppress":
            values = [a.value if isinstance(a, ast.Starred) else a for a in call.args] + [
                k.value for k in call.keywords
            ]
            names = {(_dotted(v) or "").rsplit(".", 1)[-1] for v in values}
            if names & GUARD_EXCEPTIONS:
                return True
    return False


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    names = {(_dotted(t.value if isinstance(t, ast.Starred) else t) or "").split(".")[-1] for t in types}
    return bool(names & {"ImportError", "ModuleNotFoundError"})


# Names that tell a feature or version test: `sqla_14`, `PY38`, `HAS_FOO`, `_vers`, `IS_PYDANTIC_V2`...
_VERSIONISH = re.compile(
    r"(?i)(__version__|version_info|version|\b_?vers\b|\b(?:py|sqla|sa|np|pd|v|is_py|pydantic_v)_?\d+\b|\bhas_\w+|_available\b)"
)


def _is_type_checking(test: ast.expr) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:` alone: its body never runs."""
    dotted = _dotted(test)
    return bool(dotted) and dotted.split(".")[-1] == "TYPE_CHECKING"  # type: ignore[union-attr]


def _is_guard_test(test: ast.expr, text: _Text) -> bool:
    """`if TYPE_CHECKING:`, `hasattr(...)`, a version or feature flag, or a boolean combination with one."""
    if isinstance(test, ast.BoolOp):
        return any(_is_guard_test(value, text) for value in test.values)
    if isinstance(test, ast.UnaryOp):
        return _is_guard_test(test.operand, text)
    dotted = _dotted(test)
    if dotted and dotted.split(".")[-1] == "TYPE_CHECKING":
        return True
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and _dotted(node.func) in ("hasattr", "getattr"):
            return True  # `hasattr(m, "x")`, `callable(getattr(m, "x", None))`, `getattr(m, "x", None) is not None`
    return bool(_VERSIONISH.search(text.segment(test)))
