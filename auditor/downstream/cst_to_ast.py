"""A LibCST module as the `ast.Module` CPython would build for the same text: one scanner for every file.

The downstream scan (`astscan`) reads CPython's tree. A file this Python's parser refuses (a newer
grammar: PEP 695 type parameters and `type` statements, PEP 701 f-strings, 3.13 type-parameter
defaults; or invalid code, which LibCST locates) is parsed with LibCST instead and converted here,
so that it gets the same value model as every other file.

The tree is the one CPython 3.11 builds, position for position: `lineno`/`end_lineno` and
`col_offset`/`end_col_offset` in UTF-8 bytes; a parenthesised expression's range leaves its
parentheses out (a tuple's or a generator's own pair is kept); a definition starts at `def`/`class`,
not at its decorators, and ends where its last statement ends; `a or b or c` is one `BoolOp`;
implicitly concatenated strings are one `Constant` or `JoinedStr`; `True`/`False`/`None` and `...`
are constants; in an f-string the literal parts and the `FormattedValue`s take the whole string's
range while the expressions inside keep their own (as CPython 3.11 reports them).

Newer syntax becomes the nearest node this Python's `ast` has:
- type parameters (`def f[T]()`, `class C[T]`) are dropped where `ast` has no `type_params` field
  (before 3.12), kept otherwise (a 3.13 default only where `ast` knows defaults);
- `type X[T] = v` is the assignment `X = v` (where `ast` has `TypeAlias`, that node);
- `except*` is a `Try` where `ast` has no `TryStar` (3.10);
- PEP 701 f-strings (nested quotes, comments and backslashes inside `{}`) become the `JoinedStr`
  an older f-string of the same meaning gives.

Positions come from LibCST's own code generation (`_Tokens`): the module is printed once with a
state that records where every token lands and which tokens each node printed, so a node's range is
that of its first and last significant token (whitespace and comments are not). Whitespace LibCST
leaves out when it prints (a form feed at column 0, a space before a colon) is mapped back; a line
printed otherwise changed raises `Unfaithful` when a position on or after it is needed. LibCST
recurses once per nesting level: the caller checks the nesting first (`pysource.nesting_problem`)
and bounds the size (`walk.LIBCST_MAX_CHARS`). The codegen state is LibCST's internal
`CodegenState`: tests/test_scanner_parity.py (converted tree == `ast.parse`'s on every case file,
this repository and two installed packages) catches a LibCST release that changes it.
"""

from __future__ import annotations

import ast
import re
import sys
import unicodedata
import warnings
from dataclasses import dataclass, field
from typing import Any, TypeVar

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")
_BLANKS = frozenset(" \t\x0c")
_FSTRING_TUPLE_QUIRK = sys.version_info < (3, 12)  # see `_parts`
_WHITESPACE = frozenset(
    {
        cst.SimpleWhitespace,
        cst.ParenthesizedWhitespace,
        cst.TrailingWhitespace,
        cst.EmptyLine,
        cst.Newline,
        cst.Comment,
    }
)
_HAS_TYPE_PARAMS = hasattr(ast, "TypeVar")
_Node = TypeVar("_Node", bound=ast.AST)
_RECURSION_LIMIT = 8_000  # Python frames: a few per nesting level within pysource.MAX_NESTING
_NEWER_AST: Any = ast  # nodes of 3.12+ (type parameters), read only where they exist


class Unfaithful(ValueError):
    """LibCST's tree of the text does not print back as the text, so it gives no exact positions."""


@dataclass
class _Tokens(CodegenState):
    """A code generation state that records every significant token's position and each node's tokens."""

    line: int = 1
    column: int = 0
    starts: list[tuple[int, int]] = field(default_factory=list)
    ends: list[tuple[int, int]] = field(default_factory=list)
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)
    _open: list[int] = field(default_factory=list)
    _quiet: int = 0

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self._advance(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if self._quiet or not value:
            self._advance(value)
            return
        self.starts.append((self.line, self.column))
        self._advance(value)
        self.ends.append((self.line, self.column))

    def _advance(self, value: str) -> None:
        segments = _NEWLINE.split(value)
        if len(segments) == 1:
            self.column += len(value)
        else:
            self.line += len(segments) - 1
            self.column = len(segments[-1])

    def before_codegen(self, node: cst.CSTNode) -> None:
        if type(node) in _WHITESPACE:
            self._quiet += 1
        self._open.append(len(self.starts))

    def after_codegen(self, node: cst.CSTNode) -> None:
        first = self._open.pop()
        if type(node) in _WHITESPACE:
            self._quiet -= 1
            return
        self.spans[id(node)] = (first, len(self.starts))


class _Positions:
    """Token ranges to CPython positions (columns in UTF-8 bytes)."""

    def __init__(
        self, source: str, tokens: _Tokens, shifts: dict[int, dict[int, int]], unfaithful: int
    ) -> None:
        self.lines = _NEWLINE.split(source)
        self.tokens = tokens
        self.shifts = shifts
        self.unfaithful = unfaithful  # the first line LibCST does not print back (0: none)
        self._ascii: dict[int, bool] = {}

    def column(self, line: int, column: int, end: bool = False) -> int:
        """The byte column of a token's start (or of its `end`), from LibCST's character column."""
        if self.unfaithful and line >= self.unfaithful:
            raise Unfaithful(
                f"LibCST's tree of this file does not reproduce line {line}; positions would be wrong"
            )
        if self.shifts and line in self.shifts:
            column = self.shifts[line][column - 1] + 1 if end else self.shifts[line][column]
        text = self.lines[line - 1] if line - 1 < len(self.lines) else ""
        plain = self._ascii.get(line)
        if plain is None:
            plain = self._ascii[line] = text.isascii()
        return column if plain else len(text[:column].encode("utf-8", "surrogatepass"))

    def span(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.tokens.spans[id(node)]

    def set(self, target: _Node, first: int, last: int) -> _Node:
        """Give `target` the range from token `first` to token `last` (inclusive)."""
        line, column = self.tokens.starts[first]
        end_line, end_column = self.tokens.ends[last]
        node: Any = target
        node.lineno = line
        node.col_offset = self.column(line, column)
        node.end_lineno = end_line
        node.end_col_offset = self.column(end_line, end_column, end=True)
        return target


_BINARY: dict[type, type[ast.operator]] = {
    cst.Add: ast.Add,
    cst.Subtract: ast.Sub,
    cst.Multiply: ast.Mult,
    cst.Divide: ast.Div,
    cst.FloorDivide: ast.FloorDiv,
    cst.Modulo: ast.Mod,
    cst.Power: ast.Pow,
    cst.LeftShift: ast.LShift,
    cst.RightShift: ast.RShift,
    cst.BitOr: ast.BitOr,
    cst.BitAnd: ast.BitAnd,
    cst.BitXor: ast.BitXor,
    cst.MatrixMultiply: ast.MatMult,
}
_AUGMENTED: dict[type, type[ast.operator]] = {
    cst.AddAssign: ast.Add,
    cst.SubtractAssign: ast.Sub,
    cst.MultiplyAssign: ast.Mult,
    cst.DivideAssign: ast.Div,
    cst.FloorDivideAssign: ast.FloorDiv,
    cst.ModuloAssign: ast.Mod,
    cst.PowerAssign: ast.Pow,
    cst.LeftShiftAssign: ast.LShift,
    cst.RightShiftAssign: ast.RShift,
    cst.BitOrAssign: ast.BitOr,
    cst.BitAndAssign: ast.BitAnd,
    cst.BitXorAssign: ast.BitXor,
    cst.MatrixMultiplyAssign: ast.MatMult,
}
_COMPARE: dict[type, type[ast.cmpop]] = {
    cst.Equal: ast.Eq,
    cst.NotEqual: ast.NotEq,
    cst.LessThan: ast.Lt,
    cst.LessThanEqual: ast.LtE,
    cst.GreaterThan: ast.Gt,
    cst.GreaterThanEqual: ast.GtE,
    cst.Is: ast.Is,
    cst.IsNot: ast.IsNot,
    cst.In: ast.In,
    cst.NotIn: ast.NotIn,
}
_UNARY: dict[type, type[ast.unaryop]] = {
    cst.Plus: ast.UAdd,
    cst.Minus: ast.USub,
    cst.BitInvert: ast.Invert,
    cst.Not: ast.Not,
}
_CONSTANT_NAMES = {"True": True, "False": False, "None": None}
_LOAD = ast.Load()
_STORE = ast.Store()
_DEL = ast.Del()


def convert(module: cst.Module, source: str) -> ast.Module:
    """The `ast.Module` CPython builds for `source`, from LibCST's `module` of the same text."""
    tokens = _Tokens(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(tokens)
    generated = "".join(tokens.tokens)
    shifts, unfaithful = _shifts(source, generated) if generated != source else ({}, 0)
    return _Converter(_Positions(source, tokens, shifts, unfaithful)).module(module)


def _shifts(source: str, generated: str) -> tuple[dict[int, dict[int, int]], int]:
    """Where LibCST's tree prints a line with less whitespace than the source (a form feed at column
    0, a space before an `except` clause's colon, the spaces after an f-string's `!r` in the 3.12
    grammar): for each such line, the source column of every other character of the printed line.
    And the first line from which the print differs otherwise: a position there would be wrong, so
    asking for one raises `Unfaithful` (a difference after the last token costs nothing)."""
    shifts: dict[int, dict[int, int]] = {}
    written = _NEWLINE.split(source)
    printed = _NEWLINE.split(generated)
    for number, (line, got) in enumerate(zip(written, printed), 1):
        if line == got:
            continue
        kept = [index for index, character in enumerate(line) if character not in _BLANKS]
        shown = [index for index, character in enumerate(got) if character not in _BLANKS]
        if len(kept) != len(shown) or any(line[k] != got[s] for k, s in zip(kept, shown)):
            return shifts, number
        shifts[number] = dict(zip(shown, kept))
    if len(written) != len(printed):
        return shifts, min(len(written), len(printed)) + 1
    return shifts, len(written) + 1


def parse(source: str) -> ast.Module:
    """LibCST's parse of `source` as CPython's tree; raises what `libcst.parse_module` raises,
    `Unfaithful`, or SyntaxError for what LibCST reads and CPython refuses (a bad escape).

    LibCST's printing and this conversion recurse a few Python frames per nesting level: the caller
    bounds the nesting first (`pysource.nesting_problem`, MAX_NESTING levels) and the limit is raised
    meanwhile as `astscan` raises it."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, _RECURSION_LIMIT))
    try:
        return convert(cst.parse_module(source), source)
    finally:
        sys.setrecursionlimit(limit)


class _Converter:
    def __init__(self, positions: _Positions) -> None:
        self.at = positions
        self.semicolons: dict[int, ast.stmt] = {}  # a statement written with `;`: where the `;` is

    # --- ranges -------------------------------------------------------------------------------

    def _inner(self, node: cst.CSTNode, keep_own: bool = False) -> tuple[int, int]:
        """The node's token range without its parentheses (keeping the innermost pair if `keep_own`)."""
        first, end = self.at.span(node)
        lpar = len(getattr(node, "lpar", ()))
        rpar = len(getattr(node, "rpar", ()))
        if keep_own and lpar:
            lpar -= 1
            rpar -= 1
        return first + lpar, end - 1 - rpar

    def _place(self, target: _Node, node: cst.CSTNode, keep_own: bool = False) -> _Node:
        first, last = self._inner(node, keep_own)
        return self.at.set(target, first, last)

    def _outer(self, node: cst.CSTNode) -> tuple[int, int]:
        first, end = self.at.span(node)
        return first, end - 1

    # --- module and statements ------------------------------------------------------------------

    def module(self, module: cst.Module) -> ast.Module:
        return ast.Module(body=self.body(module.body), type_ignores=[])

    def body(self, statements: Any) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in statements:
            if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                out.extend(self.small(small) for small in statement.body)
            else:
                out.append(self.compound(statement))
        return out

    def block(self, block: cst.BaseSuite) -> list[ast.stmt]:
        if isinstance(block, cst.SimpleStatementSuite):
            return [self.small(small) for small in block.body]
        return self.body(block.body)

    def small(self, node: cst.BaseSmallStatement) -> ast.stmt:
        result = self._small(node)
        first, end = self.at.span(node)
        if isinstance(getattr(node, "semicolon", None), cst.Semicolon):
            # the statement ends before its `;`; a block it ends, after it (CPython 3.11)
            self.semicolons[id(result)] = self.at.set(ast.Pass(), end - 1, end - 1)
            end -= 1
        return self.at.set(result, first, end - 1)

    def _small(self, node: cst.BaseSmallStatement) -> ast.stmt:
        if isinstance(node, cst.Expr):
            return ast.Expr(value=self.expr(node.value))
        if isinstance(node, cst.Assign):
            return ast.Assign(
                targets=[self.expr(target.target, _STORE) for target in node.targets],
                value=self.expr(node.value),
                type_comment=None,
            )
        if isinstance(node, cst.AnnAssign):
            target = node.target
            simple = int(isinstance(target, cst.Name) and not target.lpar)
            return ast.AnnAssign(
                target=self.target(target),
                annotation=self.expr(node.annotation.annotation),
                value=self.expr(node.value) if node.value is not None else None,
                simple=simple,
            )
        if isinstance(node, cst.AugAssign):
            return ast.AugAssign(
                target=self.target(node.target),
                op=_AUGMENTED[type(node.operator)](),
                value=self.expr(node.value),
            )
        if isinstance(node, cst.Return):
            return ast.Return(value=self.expr(node.value) if node.value is not None else None)
        if isinstance(node, cst.Pass):
            return ast.Pass()
        if isinstance(node, cst.Break):
            return ast.Break()
        if isinstance(node, cst.Continue):
            return ast.Continue()
        if isinstance(node, cst.Raise):
            return ast.Raise(
                exc=self.expr(node.exc) if node.exc is not None else None,
                cause=self.expr(node.cause.item) if node.cause is not None else None,
            )
        if isinstance(node, cst.Assert):
            return ast.Assert(
                test=self.expr(node.test), msg=self.expr(node.msg) if node.msg is not None else None
            )
        if isinstance(node, cst.Del):
            deleted = node.target
            if isinstance(deleted, cst.Tuple) and not deleted.lpar:
                return ast.Delete(targets=[self.expr(element.value, _DEL) for element in deleted.elements])
            return ast.Delete(targets=[self.expr(deleted, _DEL)])
        if isinstance(node, cst.Global):
            return ast.Global(names=[_id(item.name.value) for item in node.names])
        if isinstance(node, cst.Nonlocal):
            return ast.Nonlocal(names=[_id(item.name.value) for item in node.names])
        if isinstance(node, cst.Import):
            return ast.Import(names=[self.alias(name) for name in node.names])
        if isinstance(node, cst.ImportFrom):
            return self.import_from(node)
        if isinstance(node, cst.TypeAlias):
            return self.type_alias(node)
        raise SyntaxError(f"unsupported statement {type(node).__name__}")

    def alias(self, node: cst.ImportAlias) -> ast.alias:
        name = _dotted(node.name)
        asname = node.asname
        result = ast.alias(name=name, asname=_name_value(asname.name) if asname is not None else None)
        first, _ = self._outer(node.name)
        last = self._outer(asname.name)[1] if asname is not None else self._outer(node.name)[1]
        return self.at.set(result, first, last)

    def import_from(self, node: cst.ImportFrom) -> ast.ImportFrom:
        level = len(node.relative)
        names: list[ast.alias] = []
        if isinstance(node.names, cst.ImportStar):
            star = ast.alias(name="*", asname=None)
            names.append(self.at.set(star, *self._outer(node.names)))
        else:
            names = [self.alias(name) for name in node.names]
        return ast.ImportFrom(
            module=_dotted(node.module) if node.module is not None else None, names=names, level=level
        )

    def type_alias(self, node: cst.TypeAlias) -> ast.stmt:
        name = self._place(ast.Name(id=_id(node.name.value), ctx=_STORE), node.name)
        value = self.expr(node.value)
        type_alias = getattr(ast, "TypeAlias", None)
        if type_alias is not None:
            return type_alias(name=name, type_params=self.type_params(node.type_parameters), value=value)
        return ast.Assign(targets=[name], value=value, type_comment=None)

    def type_params(self, node: cst.TypeParameters | None) -> list[Any]:
        if node is None:
            return []
        out = []
        for item in node.params:
            param = item.param
            written: cst.BaseExpression | None = getattr(item, "default", None)
            default = self.expr(written) if written is not None else None
            keywords: dict[str, Any] = {}
            if default is not None and "default_value" in _NEWER_AST.TypeVar._fields:
                keywords["default_value"] = default
            if isinstance(param, cst.TypeVar):
                bound = self.expr(param.bound) if param.bound is not None else None
                result = _NEWER_AST.TypeVar(name=_id(param.name.value), bound=bound, **keywords)
            elif isinstance(param, cst.TypeVarTuple):
                result = _NEWER_AST.TypeVarTuple(name=_id(param.name.value), **keywords)
            else:
                result = _NEWER_AST.ParamSpec(name=_id(param.name.value), **keywords)
            first, end = self.at.span(item)
            last = end - 1 - (1 if isinstance(item.comma, cst.Comma) else 0)
            out.append(self.at.set(result, first, last))
        return out

    def _start(self, node: cst.CSTNode, decorators: Any = ()) -> int:
        first, _ = self.at.span(node)
        if decorators:
            first = self.at.span(decorators[-1])[1]
        return first

    def _finish(self, result: Any, first: int, last_statement: ast.AST) -> Any:
        line, column = self.at.tokens.starts[first]
        result.lineno = line
        result.col_offset = self.at.column(line, column)
        last_statement = self.semicolons.get(id(last_statement), last_statement)
        result.end_lineno = last_statement.end_lineno  # type: ignore[attr-defined]
        result.end_col_offset = last_statement.end_col_offset  # type: ignore[attr-defined]
        return result

    def compound(self, node: cst.BaseCompoundStatement) -> ast.stmt:
        if isinstance(node, cst.FunctionDef):
            return self.function(node)
        if isinstance(node, cst.ClassDef):
            return self.class_def(node)
        if isinstance(node, cst.If):
            return self.if_(node)
        if isinstance(node, cst.For):
            body = self.block(node.body)
            orelse = self.block(node.orelse.body) if node.orelse is not None else []
            kind = ast.AsyncFor if node.asynchronous is not None else ast.For
            result = kind(
                target=self.expr(node.target, _STORE),
                iter=self.expr(node.iter),
                body=body,
                orelse=orelse,
                type_comment=None,
            )
            return self._finish(result, self._start(node), (orelse or body)[-1])
        if isinstance(node, cst.While):
            body = self.block(node.body)
            orelse = self.block(node.orelse.body) if node.orelse is not None else []
            loop = ast.While(test=self.expr(node.test), body=body, orelse=orelse)
            return self._finish(loop, self._start(node), (orelse or body)[-1])
        if isinstance(node, cst.With):
            return self.with_(node)
        if isinstance(node, (cst.Try, cst.TryStar)):
            return self.try_(node)
        if isinstance(node, cst.Match):
            return self.match(node)
        raise SyntaxError(f"unsupported statement {type(node).__name__}")

    def function(self, node: cst.FunctionDef) -> ast.stmt:
        decorators = [self.expr(decorator.decorator) for decorator in node.decorators]
        arguments = self.arguments(node.params)
        returns = self.expr(node.returns.annotation) if node.returns is not None else None
        body = self.block(node.body)
        kind = ast.AsyncFunctionDef if node.asynchronous is not None else ast.FunctionDef
        extra: dict[str, Any] = {}
        if _HAS_TYPE_PARAMS:
            extra["type_params"] = self.type_params(node.type_parameters)
        result = kind(
            name=_id(node.name.value),
            args=arguments,
            body=body,
            decorator_list=decorators,
            returns=returns,
            type_comment=None,
            **extra,
        )
        return self._finish(result, self._start(node, node.decorators), body[-1])

    def class_def(self, node: cst.ClassDef) -> ast.stmt:
        decorators = [self.expr(decorator.decorator) for decorator in node.decorators]
        bases, keywords = self.call_arguments([*node.bases, *node.keywords])
        body = self.block(node.body)
        extra: dict[str, Any] = {}
        if _HAS_TYPE_PARAMS:
            extra["type_params"] = self.type_params(node.type_parameters)
        result = ast.ClassDef(
            name=_id(node.name.value),
            bases=bases,
            keywords=keywords,
            body=body,
            decorator_list=decorators,
            **extra,
        )
        return self._finish(result, self._start(node, node.decorators), body[-1])

    def if_(self, node: cst.If) -> ast.stmt:
        body = self.block(node.body)
        orelse: list[ast.stmt] = []
        if isinstance(node.orelse, cst.If):
            orelse = [self.if_(node.orelse)]
        elif isinstance(node.orelse, cst.Else):
            orelse = self.block(node.orelse.body)
        result = ast.If(test=self.expr(node.test), body=body, orelse=orelse)
        return self._finish(result, self._start(node), (orelse or body)[-1])

    def with_(self, node: cst.With) -> ast.stmt:
        items = []
        for item in node.items:
            asname = item.asname
            items.append(
                ast.withitem(
                    context_expr=self.expr(item.item),
                    optional_vars=self.expr(asname.name, _STORE) if asname is not None else None,
                )
            )
        body = self.block(node.body)
        kind = ast.AsyncWith if node.asynchronous is not None else ast.With
        result = kind(items=items, body=body, type_comment=None)
        return self._finish(result, self._start(node), body[-1])

    def try_(self, node: cst.Try | cst.TryStar) -> ast.stmt:
        body = self.block(node.body)
        handlers = []
        for handler in node.handlers:
            handler_body = self.block(handler.body)
            caught = ast.ExceptHandler(
                type=self.expr(handler.type) if handler.type is not None else None,
                name=_name_value(handler.name.name) if handler.name is not None else None,
                body=handler_body,
            )
            handlers.append(self._finish(caught, self._start(handler), handler_body[-1]))
        orelse = self.block(node.orelse.body) if node.orelse is not None else []
        finalbody = self.block(node.finalbody.body) if node.finalbody is not None else []
        kind = getattr(ast, "TryStar", ast.Try) if isinstance(node, cst.TryStar) else ast.Try
        result = kind(body=body, handlers=handlers, orelse=orelse, finalbody=finalbody)
        last = (finalbody or orelse or (handlers[-1].body if handlers else body))[-1]
        return self._finish(result, self._start(node), last)

    def match(self, node: cst.Match) -> ast.stmt:
        cases = []
        for case in node.cases:
            cases.append(
                ast.match_case(
                    pattern=self.pattern(case.pattern),
                    guard=self.expr(case.guard) if case.guard is not None else None,
                    body=self.block(case.body),
                )
            )
        result = ast.Match(subject=self.expr(node.subject), cases=cases)
        return self._finish(result, self._start(node), cases[-1].body[-1])

    # --- patterns ----------------------------------------------------------------------------

    def pattern(self, node: cst.MatchPattern) -> ast.pattern:
        result = self._pattern(node)
        if isinstance(node, (cst.MatchTuple, cst.MatchList)) and not isinstance(node, cst.MatchList):
            if node.lpar:
                return self._place(result, node, keep_own=True)
            first, end = self.at.span(node)
            return self.at.set(result, first, end - 1)
        return self._place(result, node)

    def _pattern(self, node: cst.MatchPattern) -> ast.pattern:
        if isinstance(node, cst.MatchValue):
            value = node.value
            if isinstance(value, cst.Name) and value.value in _CONSTANT_NAMES:
                return ast.MatchSingleton(value=_CONSTANT_NAMES[value.value])
            return ast.MatchValue(value=self.expr(value))
        if isinstance(node, cst.MatchSingleton):
            return ast.MatchSingleton(value=_CONSTANT_NAMES[node.value.value])
        if isinstance(node, (cst.MatchList, cst.MatchTuple)):
            return ast.MatchSequence(patterns=[self._sequence_element(element) for element in node.patterns])
        if isinstance(node, cst.MatchMapping):
            return ast.MatchMapping(
                keys=[self.expr(element.key) for element in node.elements],
                patterns=[self.pattern(element.pattern) for element in node.elements],
                rest=_id(node.rest.value) if node.rest is not None else None,
            )
        if isinstance(node, cst.MatchClass):
            return ast.MatchClass(
                cls=self.expr(node.cls),
                patterns=[self._sequence_element(element) for element in node.patterns],
                kwd_attrs=[_id(element.key.value) for element in node.kwds],
                kwd_patterns=[self.pattern(element.pattern) for element in node.kwds],
            )
        if isinstance(node, cst.MatchAs):
            name = _id(node.name.value) if node.name is not None else None
            return ast.MatchAs(
                pattern=self.pattern(node.pattern) if node.pattern is not None else None,
                name=None if name == "_" else name,
            )
        if isinstance(node, cst.MatchOr):
            return ast.MatchOr(patterns=[self.pattern(element.pattern) for element in node.patterns])
        raise SyntaxError(f"unsupported pattern {type(node).__name__}")

    def _sequence_element(self, element: cst.MatchSequenceElement | cst.MatchStar) -> ast.pattern:
        if isinstance(element, cst.MatchStar):
            name = _id(element.name.value) if element.name is not None else None
            result = ast.MatchStar(name=None if name == "_" else name)
            first, end = self.at.span(element)
            last = end - 1 - (1 if isinstance(element.comma, cst.Comma) else 0)
            return self.at.set(result, first, last)
        return self.pattern(element.value)

    # --- parameters and arguments ------------------------------------------------------------

    def arguments(self, node: cst.Parameters) -> ast.arguments:
        posonly = [self.arg(param) for param in node.posonly_params]
        args = [self.arg(param) for param in node.params]
        defaults = [
            self.expr(param.default)
            for param in (*node.posonly_params, *node.params)
            if param.default is not None
        ]
        star = node.star_arg
        vararg = self.arg(star) if isinstance(star, cst.Param) else None
        kwonly = [self.arg(param) for param in node.kwonly_params]
        kw_defaults: list[ast.expr | None] = [
            self.expr(param.default) if param.default is not None else None for param in node.kwonly_params
        ]
        kwarg = self.arg(node.star_kwarg) if node.star_kwarg is not None else None
        return ast.arguments(
            posonlyargs=posonly,
            args=args,
            vararg=vararg,
            kwonlyargs=kwonly,
            kw_defaults=kw_defaults,
            kwarg=kwarg,
            defaults=defaults,
        )

    def arg(self, node: cst.Param) -> ast.arg:
        annotation = node.annotation
        result = ast.arg(
            arg=_id(node.name.value),
            annotation=self.expr(annotation.annotation) if annotation is not None else None,
            type_comment=None,
        )
        first, _ = self._outer(node.name)
        last = self._outer(annotation.annotation)[1] if annotation is not None else first
        return self.at.set(result, first, last)

    def call_arguments(self, arguments: Any) -> tuple[list[ast.expr], list[ast.keyword]]:
        args: list[ast.expr] = []
        keywords: list[ast.keyword] = []
        for argument in arguments:
            value = self.expr(argument.value)
            first = self.at.span(argument)[0]
            last = self._outer(argument.value)[1]
            if argument.keyword is not None:
                keywords.append(
                    self.at.set(ast.keyword(arg=_id(argument.keyword.value), value=value), first, last)
                )
            elif argument.star == "**":
                keywords.append(self.at.set(ast.keyword(arg=None, value=value), first, last))
            elif argument.star == "*":
                args.append(self.at.set(ast.Starred(value=value, ctx=_LOAD), first, last))
            else:
                args.append(value)
        return args, keywords

    # --- expressions ---------------------------------------------------------------------------

    def expr(self, node: cst.BaseExpression, ctx: ast.expr_context = _LOAD) -> ast.expr:
        if isinstance(node, cst.Tuple):
            elements = [self.element(element, ctx) for element in node.elements]
            result: Any = ast.Tuple(elts=elements, ctx=ctx)
            if node.lpar:
                return self._place(result, node, keep_own=True)
            first, end = self.at.span(node)
            return self.at.set(result, first, end - 1)
        if isinstance(node, cst.GeneratorExp):
            result = ast.GeneratorExp(elt=self.expr(node.elt), generators=self.comprehension(node.for_in))
            return self._place(result, node, keep_own=bool(node.lpar))
        return self._place(self._expr(node, ctx), node)

    def target(self, node: cst.BaseExpression) -> Any:
        """An assignment target (`ast` types these as a name, an attribute or a subscript)."""
        return self.expr(node, _STORE)

    def element(self, element: cst.BaseElement, ctx: ast.expr_context) -> ast.expr:
        if isinstance(element, cst.StarredElement):
            result = ast.Starred(value=self.expr(element.value, ctx), ctx=ctx)
            first = self._inner(element)[0]
            return self.at.set(result, first, self._outer(element.value)[1])
        return self.expr(element.value, ctx)

    def _expr(self, node: cst.BaseExpression, ctx: ast.expr_context) -> ast.expr:
        if isinstance(node, cst.Name):
            if node.value in _CONSTANT_NAMES:
                return ast.Constant(value=_CONSTANT_NAMES[node.value], kind=None)
            return ast.Name(id=_id(node.value), ctx=ctx)
        if isinstance(node, cst.Attribute):
            return ast.Attribute(value=self.expr(node.value), attr=_id(node.attr.value), ctx=ctx)
        if isinstance(node, cst.Call):
            args, keywords = self.call_arguments(node.args)
            if len(node.args) == 1 and isinstance(node.args[0].value, cst.GeneratorExp) and args:
                if not node.args[
                    0
                ].value.lpar:  # `f(x for x in y)`: the call's parentheses are the generator's
                    first = self.at.span(node.args[0])[0] - 1
                    self.at.set(args[0], first, self._inner(node)[1])
            return ast.Call(func=self.expr(node.func), args=args, keywords=keywords)
        if isinstance(node, cst.Subscript):
            return ast.Subscript(value=self.expr(node.value), slice=self.subscript(node), ctx=ctx)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return self.string(node)
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
            return ast.Constant(value=ast.literal_eval(node.value), kind=None)
        if isinstance(node, cst.Ellipsis):
            return ast.Constant(value=..., kind=None)
        if isinstance(node, cst.BinaryOperation):
            return ast.BinOp(
                left=self.expr(node.left), op=_BINARY[type(node.operator)](), right=self.expr(node.right)
            )
        if isinstance(node, cst.BooleanOperation):
            return self.boolean(node)
        if isinstance(node, cst.Comparison):
            return ast.Compare(
                left=self.expr(node.left),
                ops=[_COMPARE[type(target.operator)]() for target in node.comparisons],
                comparators=[self.expr(target.comparator) for target in node.comparisons],
            )
        if isinstance(node, cst.UnaryOperation):
            return ast.UnaryOp(op=_UNARY[type(node.operator)](), operand=self.expr(node.expression))
        if isinstance(node, cst.IfExp):
            return ast.IfExp(
                test=self.expr(node.test), body=self.expr(node.body), orelse=self.expr(node.orelse)
            )
        if isinstance(node, cst.Lambda):
            return ast.Lambda(args=self.arguments(node.params), body=self.expr(node.body))
        if isinstance(node, cst.List):
            return ast.List(elts=[self.element(element, ctx) for element in node.elements], ctx=ctx)
        if isinstance(node, cst.Set):
            return ast.Set(elts=[self.element(element, _LOAD) for element in node.elements])
        if isinstance(node, cst.Dict):
            keys: list[ast.expr | None] = []
            values: list[ast.expr] = []
            for element in node.elements:
                if isinstance(element, cst.StarredDictElement):
                    keys.append(None)
                else:
                    assert isinstance(element, cst.DictElement)
                    keys.append(self.expr(element.key))
                values.append(self.expr(element.value))
            return ast.Dict(keys=keys, values=values)
        if isinstance(node, cst.ListComp):
            return ast.ListComp(elt=self.expr(node.elt), generators=self.comprehension(node.for_in))
        if isinstance(node, cst.SetComp):
            return ast.SetComp(elt=self.expr(node.elt), generators=self.comprehension(node.for_in))
        if isinstance(node, cst.DictComp):
            return ast.DictComp(
                key=self.expr(node.key),
                value=self.expr(node.value),
                generators=self.comprehension(node.for_in),
            )
        if isinstance(node, cst.Await):
            return ast.Await(value=self.expr(node.expression))
        if isinstance(node, cst.Yield):
            value = node.value
            if isinstance(value, cst.From):
                return ast.YieldFrom(value=self.expr(value.item))
            return ast.Yield(value=self.expr(value) if value is not None else None)
        if isinstance(node, cst.NamedExpr):
            return ast.NamedExpr(target=self.target(node.target), value=self.expr(node.value))
        if isinstance(node, cst.StarredElement):
            return ast.Starred(value=self.expr(node.value, ctx), ctx=ctx)
        raise SyntaxError(f"unsupported expression {type(node).__name__}")

    def boolean(self, node: cst.BooleanOperation) -> ast.expr:
        kind = type(node.operator)
        operands: list[cst.BaseExpression] = []
        current: cst.BaseExpression = node
        while (
            isinstance(current, cst.BooleanOperation)
            and type(current.operator) is kind
            and (current is node or not current.lpar)
        ):
            operands.append(current.right)
            current = current.left
        operands.append(current)
        operands.reverse()
        op = ast.And() if kind is cst.And else ast.Or()
        return ast.BoolOp(op=op, values=[self.expr(operand) for operand in operands])

    def comprehension(self, node: cst.CompFor | None) -> list[ast.comprehension]:
        out = []
        while node is not None:
            out.append(
                ast.comprehension(
                    target=self.expr(node.target, _STORE),
                    iter=self.expr(node.iter),
                    ifs=[self.expr(condition.test) for condition in node.ifs],
                    is_async=int(node.asynchronous is not None),
                )
            )
            node = node.inner_for_in
        return out

    def subscript(self, node: cst.Subscript) -> ast.expr:
        elements = node.slice
        if len(elements) == 1 and not isinstance(elements[0].comma, cst.Comma):
            if not (isinstance(elements[0].slice, cst.Index) and elements[0].slice.star is not None):
                return self.slice_item(elements[0])
        result = ast.Tuple(elts=[self.slice_item(element) for element in elements], ctx=_LOAD)
        first = self.at.span(elements[0])[0]
        last = self.at.span(elements[-1])[1] - 1
        return self.at.set(result, first, last)

    def slice_item(self, element: cst.SubscriptElement) -> ast.expr:
        item = element.slice
        if isinstance(item, cst.Index):
            if item.star is not None:
                result = ast.Starred(value=self.expr(item.value), ctx=_LOAD)
                first = self.at.span(item)[0]
                return self.at.set(result, first, self._outer(item.value)[1])
            return self.expr(item.value)
        assert isinstance(item, cst.Slice)
        result2 = ast.Slice(
            lower=self.expr(item.lower) if item.lower is not None else None,
            upper=self.expr(item.upper) if item.upper is not None else None,
            step=self.expr(item.step) if item.step is not None else None,
        )
        return self.at.set(result2, *self._outer(item))

    # --- strings -----------------------------------------------------------------------------

    def string(self, node: cst.BaseString) -> ast.expr:
        parts: list[cst.BaseString] = []
        _flatten_strings(node, parts)
        if not any(isinstance(part, cst.FormattedString) for part in parts):
            values = [_literal(part) for part in parts]  # type: ignore[arg-type]
            first = parts[0]
            kind = "u" if isinstance(first, cst.SimpleString) and first.prefix.lower() == "u" else None
            if len({type(value) for value in values}) > 1:
                raise SyntaxError("cannot mix bytes and nonbytes literals")
            if isinstance(values[0], bytes):
                return ast.Constant(value=b"".join(v for v in values if isinstance(v, bytes)), kind=None)
            return ast.Constant(value="".join(v for v in values if isinstance(v, str)), kind=kind)
        first_token, last_token = self._inner(node)
        pieces: list[ast.expr] = []
        text: list[str] = []
        for part in parts:
            if isinstance(part, cst.SimpleString):
                value = _literal(part)
                if isinstance(value, bytes):
                    raise SyntaxError("cannot mix bytes and nonbytes literals")
                text.append(value)
            else:
                self._formatted(part, pieces, text, first_token, last_token)  # type: ignore[arg-type]
        self._flush(pieces, text, first_token, last_token)
        return ast.JoinedStr(values=pieces)

    def _flush(self, pieces: list[ast.expr], text: list[str], first: int, last: int) -> None:
        joined = "".join(text)
        text.clear()
        if joined:
            pieces.append(self.at.set(ast.Constant(value=joined, kind=None), first, last))

    def _formatted(
        self, node: cst.FormattedString, pieces: list[ast.expr], text: list[str], first: int, last: int
    ) -> None:
        token = self._inner(node)  # a format spec takes the range of the f-string it is written in
        self._parts(
            node.parts, node.prefix.lower().replace("f", ""), node.end, pieces, text, first, last, token
        )

    def _parts(
        self,
        parts: Any,
        prefix: str,
        quote: str,
        pieces: list[ast.expr],
        text: list[str],
        first: int,
        last: int,
        token: tuple[int, int],
    ) -> None:
        for part in parts:
            if isinstance(part, cst.FormattedStringText):
                text.append(_fragment(part.value, prefix, quote))
                continue
            assert isinstance(part, cst.FormattedStringExpression)
            conversion = -1
            if part.equal is not None:
                text.append(self._debug_text(part))
                if part.conversion is None and part.format_spec is None:
                    conversion = ord("r")
            if part.conversion is not None:
                conversion = ord(part.conversion)
            self._flush(pieces, text, first, last)
            spec = None
            if part.format_spec is not None:
                spec_pieces: list[ast.expr] = []
                spec_text: list[str] = []
                # CPython 3.11 places a spec's parts at the whole string, unless the spec is only text
                within = (
                    token
                    if all(isinstance(p, cst.FormattedStringText) for p in part.format_spec)
                    else (first, last)
                )
                self._parts(part.format_spec, prefix, quote, spec_pieces, spec_text, *within, token)
                self._flush(spec_pieces, spec_text, *within)
                spec = self.at.set(ast.JoinedStr(values=spec_pieces), *token)
            inner = self.expr(part.expression)
            if _FSTRING_TUPLE_QUIRK and isinstance(part.expression, cst.Tuple) and not part.expression.lpar:
                # CPython 3.11 parses `{a, b}` as `(a, b)` written over the braces: from `{` to `}`
                brace = self.at.span(part)[0]
                closing = self.at.span(part.expression)[1]
                line, column = self.at.tokens.starts[closing]
                self.at.set(inner, brace, brace)
                inner.end_lineno = line
                inner.end_col_offset = self.at.column(line, column) + 1
            value = ast.FormattedValue(value=inner, conversion=conversion, format_spec=spec)
            pieces.append(self.at.set(value, first, last))

    def _debug_text(self, part: cst.FormattedStringExpression) -> str:
        """`f"{x = }"` prints its own text: the expression as written, with the spaces and the `=`."""
        pieces = [
            _code(part.whitespace_before_expression),
            _code(part.expression),
            _code(part.whitespace_after_expression),
            _code(part.equal) if part.equal is not None else "",
        ]
        return "".join(pieces)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _flatten_strings(node: cst.BaseExpression, out: list[cst.BaseString]) -> None:
    if isinstance(node, cst.ConcatenatedString):
        _flatten_strings(node.left, out)
        _flatten_strings(node.right, out)
    else:
        out.append(node)  # type: ignore[arg-type]


def _literal(node: cst.SimpleString) -> str | bytes:
    return ast.literal_eval(node.value)


def _fragment(value: str, prefix: str, quote: str) -> str:
    """The text of one literal part of an f-string (`{{` is `{`; escapes decoded unless raw)."""
    value = value.replace("{{", "{").replace("}}", "}")
    if "r" in prefix or "\\" not in value:
        return value
    delimiter = quote[0] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an invalid escape stays as written, as CPython keeps it
        decoded = ast.literal_eval(f"{delimiter}{value} {delimiter}")
    return decoded[:-1]


def _id(name: str) -> str:
    """An identifier as CPython keeps it: NFKC-normalised (PEP 3131)."""
    return name if name.isascii() else unicodedata.normalize("NFKC", name)


def _name_value(node: cst.BaseExpression) -> str:
    assert isinstance(node, cst.Name)
    return _id(node.value)


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{_id(node.attr.value)}"
    assert isinstance(node, cst.Name)
    return _id(node.value)
