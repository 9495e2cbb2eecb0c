"""The codemod on one file's text, as LibCST transforms: pure, text in and text out. A call or import
is found by the finding's exact position and the name it names; everything else is reproduced byte
for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from apidrift.auditor.core.results import (
    Finding,
    ManualStep,
    MoveImport,
    MoveImports,
    PositionalToKeyword,
    RemoveKeyword,
    RenameAttribute,
    RenameKeyword,
    ReplaceName,
)
from apidrift.auditor.core.signature import ParamKind
from apidrift.auditor.fix.model import EDIT_KINDS


@dataclass
class FileFixes:
    """The codemod's result on one file: the new text and, per finding in the order given, why its fix
    was not applied (None: applied) and, for a dropped keyword, the source of the value it passed."""

    code: str
    reasons: list[str | None]
    dropped_values: list[str | None]


def apply_fixes(source: str, findings: Sequence[Finding]) -> FileFixes:
    """Apply the edit fixes of `findings` (all in this file) to `source`.

    Raises `libcst.ParserSyntaxError` when LibCST cannot parse `source`.
    """
    reasons: list[str | None] = [None] * len(findings)
    values: list[str | None] = [None] * len(findings)
    if not findings:
        return FileFixes(source, reasons, values)
    wrapper = MetadataWrapper(cst.parse_module(source))
    locator = _Locator()
    wrapper.visit(locator)
    edits = _Edits(locator)
    for number, finding in enumerate(findings):
        fix = finding.fix
        if fix is None or fix.kind not in EDIT_KINDS or isinstance(fix.data, ManualStep):
            reasons[number] = "no fix to apply"
            continue
        where = (finding.location.line, finding.location.column)
        data = fix.data
        if isinstance(data, RenameAttribute):
            reasons[number] = edits.rename_attribute(data, where)
        elif isinstance(data, MoveImport):
            reasons[number] = edits.move_import(data, where)
        elif isinstance(data, MoveImports):
            reasons[number] = edits.move_imports(data, where)
        elif isinstance(data, PositionalToKeyword):
            reasons[number], values[number] = edits.positional_to_keyword(data)
        elif isinstance(data, ReplaceName):
            reasons[number] = edits.replace_name(data, where)
        else:  # a keyword renamed or removed
            reasons[number], values[number] = edits.keyword(data, where)
    if edits.call_edits or edits.import_edits or edits.import_renames or edits.attribute_edits:
        source = wrapper.module.visit(
            _Rewriter(edits.call_edits, edits.import_edits, edits.import_renames, edits.attribute_edits)
        ).code
    return FileFixes(source, reasons, values)


class _Edits:
    """The edits planned on one module's tree, per kind of fix; each method gives why a fix cannot be
    applied (None: planned)."""

    def __init__(self, locator: _Locator) -> None:
        self.locator = locator
        self.empty = cst.Module([])
        self.call_edits: dict[cst.Call, dict[int, tuple[str, str]]] = {}
        self.import_edits: dict[cst.ImportFrom, dict[int, str]] = {}
        self.import_renames: dict[cst.ImportFrom, dict[int, str]] = {}
        self.attribute_edits: dict[cst.Attribute, str] = {}

    def rename_attribute(self, data: RenameAttribute, where: tuple[int, int]) -> str | None:
        attribute = self.locator.attributes.get((*where, data.old))
        imported = self.locator.aliases.get((*where, data.old))
        if not data.new.isidentifier():
            return f"`{data.new}` is not a name"
        if attribute is not None:
            self.attribute_edits[attribute] = data.new
        elif imported is not None:  # `from m import old` -> `from m import new as old`: uses unchanged
            self.import_renames.setdefault(imported[0], {})[imported[1]] = data.new
        else:
            return f"no `{data.old}` at {where[0]}:{where[1]} (already fixed?)"
        return None

    def move_import(self, data: MoveImport, where: tuple[int, int]) -> str | None:
        name, new_module = data.name, data.new_module
        found = self.locator.aliases.get((*where, name))
        module = data.module
        if found is None or (
            module and found[0].module is not None and self.empty.code_for_node(found[0].module) != module
        ):
            return f"no import of `{name}` from `{module or '?'}` at {where[0]}:{where[1]} (already fixed?)"
        if not _is_dotted(new_module):
            return f"`{new_module}` is not a module path"
        statement, index = found
        self.import_edits.setdefault(statement, {})[index] = new_module
        return None

    def move_imports(self, data: MoveImports, where: tuple[int, int]) -> str | None:
        """`from gone import A, B as C`, found by where its module is written: every name moves."""
        statement = self.locator.from_modules.get(where)
        if (
            statement is None
            or statement.module is None
            or self.empty.code_for_node(statement.module) != data.module
            or isinstance(statement.names, cst.ImportStar)
        ):
            return f"no import from `{data.module}` at {where[0]}:{where[1]} (already fixed?)"
        homes = {move.name: move.new_module for move in data.moves}
        if not all(_is_dotted(module) for module in homes.values()):
            return "a new home is not a module path"
        planned = {}
        for index, alias in enumerate(statement.names):
            name = alias.name.value if isinstance(alias.name, cst.Name) else None
            if name not in homes:
                return f"`{self.empty.code_for_node(alias.name)}` has no new home: the import is not the one audited"
            planned[index] = homes[name]
        self.import_edits.setdefault(statement, {}).update(planned)
        return None

    def positional_to_keyword(self, data: PositionalToKeyword) -> tuple[str | None, str | None]:
        """The reason it cannot be applied (or None), and the text of the values it drops, if any."""
        found = self.locator.calls.get(data.call)
        if not found:
            return f"no call at {data.call[0]}:{data.call[1]} (already fixed?)", None
        # of the calls starting there (a chain: `df.resample(...).sum()`), the one whose positional
        # arguments the edits name; none or more than one: not applied
        fitting = [c for c in found if _fits(c, data)]
        if len(fitting) != 1:
            return "the call's positional arguments are not the ones audited (already fixed?)", None
        call = fitting[0]
        plain = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]
        edits = self.call_edits.setdefault(call, {})
        for index, name in data.arguments:
            edits[plain[index]] = ("keyword", name)
        for index, name in data.dropped:
            edits[plain[index]] = ("remove", name)
        if not data.dropped:
            return None, None
        return None, ", ".join(
            self.empty.code_for_node(call.args[plain[index]].value) for index, _ in data.dropped
        )

    def replace_name(self, data: ReplaceName, where: tuple[int, int]) -> str | None:
        if not data.new.isidentifier():
            return f"`{data.new}` is not a name"
        if data.module is not None:
            found = self.locator.aliases.get((*where, data.old))
            if found is None or (
                found[0].module is not None and self.empty.code_for_node(found[0].module) != data.module
            ):
                return f"no import of `{data.old}` from `{data.module}` at {where[0]}:{where[1]} (already fixed?)"
            self.import_renames.setdefault(found[0], {})[found[1]] = data.new
            return None
        attribute = self.locator.attributes.get((*where, data.old))
        if attribute is None:
            return f"no attribute `{data.old}` at {where[0]}:{where[1]} (already fixed?)"
        self.attribute_edits[attribute] = data.new
        return None

    def keyword(
        self, data: RenameKeyword | RemoveKeyword, where: tuple[int, int]
    ) -> tuple[str | None, str | None]:
        """A keyword renamed or removed: (why not, the source of the value a removed keyword passed)."""
        keyword = data.old if isinstance(data, RenameKeyword) else data.name
        where = data.at or where  # the keyword as written (the finding is where the call fails)
        found_arg = self.locator.keywords.get((*where, keyword))
        if found_arg is None:
            return f"no keyword argument `{keyword}=` at {where[0]}:{where[1]} (already fixed?)", None
        call, index = found_arg
        edits = self.call_edits.setdefault(call, {})
        if not isinstance(data, RenameKeyword):
            edits[index] = ("remove", keyword)
            return None, self.empty.code_for_node(call.args[index].value)
        new = data.new
        passed = {a.keyword.value for a in call.args if a.keyword is not None}
        if not new.isidentifier():
            return f"`{new}` is not a parameter name", None
        if new in passed or ("rename", new) in edits.values():
            return f"the call already passes `{new}=`: merge the two by hand", None
        if data.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD):
            return f"`{new}` is {data.kind.value} now: pass the value by position", None
        edits.setdefault(index, ("rename", new))
        return None, None


def _is_dotted(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def _fits(call: cst.Call, data: PositionalToKeyword) -> bool:
    """Whether `call` has the plain positional arguments a positional fix names (and no `*args`)."""
    plain = [a for a in call.args if a.keyword is None and not a.star]
    return (
        not any(a.star == "*" for a in call.args)
        and all(index < len(plain) and name.isidentifier() for index, name in data.arguments)
        and all(index < len(plain) for index, _ in data.dropped)
    )


class _Locator(cst.CSTVisitor):
    """Every keyword argument, every imported name and every attribute (`a.b.name`, by the position
    where its expression starts, and by its name's where that is on a later line), by the position
    the scanner reported."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.keywords: dict[tuple[int, int, str], tuple[cst.Call, int]] = {}
        self.aliases: dict[tuple[int, int, str], tuple[cst.ImportFrom, int]] = {}
        self.from_modules: dict[tuple[int, int], cst.ImportFrom] = {}  # by where the module is written
        self.attributes: dict[tuple[int, int, str], cst.Attribute] = {}
        # every call starting there: `df.resample(...).sum()` starts two calls at one position
        self.calls: dict[tuple[int, int], list[cst.Call]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        start = self.get_metadata(PositionProvider, node).start
        self.calls.setdefault((start.line, start.column + 1), []).append(node)
        for index, arg in enumerate(node.args):
            if arg.keyword is not None and not arg.star:
                start = self.get_metadata(PositionProvider, arg).start
                self.keywords[(start.line, start.column + 1, arg.keyword.value)] = (node, index)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        start = self.get_metadata(PositionProvider, node).start
        self.attributes[(start.line, start.column + 1, node.attr.value)] = node  # the innermost wins
        name = self.get_metadata(PositionProvider, node.attr).start
        if name.line != start.line:  # written over lines: its findings are at the name (UseSite.at)
            self.attributes[(name.line, name.column + 1, node.attr.value)] = node

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or isinstance(node.names, cst.ImportStar):
            return
        if node.module is not None:
            start = self.get_metadata(PositionProvider, node.module).start
            self.from_modules[(start.line, start.column + 1)] = node
        for index, alias in enumerate(node.names):
            if isinstance(alias.name, cst.Name):
                start = self.get_metadata(PositionProvider, alias.name).start
                self.aliases[(start.line, start.column + 1, alias.name.value)] = (node, index)


class _Rewriter(cst.CSTTransformer):
    def __init__(
        self,
        call_edits: dict[cst.Call, dict[int, tuple[str, str]]],
        import_edits: dict[cst.ImportFrom, dict[int, str]],
        import_renames: dict[cst.ImportFrom, dict[int, str]] | None = None,
        attribute_edits: dict[cst.Attribute, str] | None = None,
    ) -> None:
        super().__init__()
        self.call_edits = call_edits
        self.import_edits = import_edits
        self.import_renames = import_renames or {}
        self.attribute_edits = attribute_edits or {}
        # New imports (with the comments that travel with their names), per enclosing statement line.
        # A moved name is edited here by hand, not with LibCST's AddImportsVisitor/RemoveImportsVisitor
        # (libcst.codemod.visitors), which do not give the same output (tests/fix_cases/imports.case):
        # AddImportsVisitor adds one merged `from new import A, B as b` after the module's top-level
        # imports (never after the statement it replaces, nor inside the function that imported the
        # name, and without the comment on the name's line), and RemoveImportsVisitor removes a name
        # only where nothing uses it, while a moved name is still used.
        self.pending: list[list[tuple[cst.ImportFrom, list[cst.Comment]]]] = []

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        edits = self.call_edits.get(original_node)
        if not edits:
            return updated_node
        # removals first (a positional argument dropped after one made a keyword would otherwise
        # sit, for a moment, after a keyword: LibCST rejects that), then the edits, shifted
        removed = sorted((i for i, (action, _) in edits.items() if action == "remove"), reverse=True)
        call = updated_node
        for index in removed:
            call = _remove_arg(call, index)
        args = list(call.args)
        for original, (action, name) in edits.items():
            index = original - sum(1 for r in removed if r < original)
            if action == "rename":
                arg = args[index]
                assert arg.keyword is not None
                args[index] = arg.with_changes(keyword=arg.keyword.with_changes(value=name))
            elif action == "keyword":
                args[index] = args[index].with_changes(
                    keyword=cst.Name(name),
                    equal=cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
                    ),
                )
        return call.with_changes(args=args)

    # Statements that may hold an import: new `from new import X` statements go right after them.
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.pending.append([])

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.BaseStatement]:
        added = self.pending.pop()
        if not added:
            return updated_node
        return cst.FlattenSentinel(
            [updated_node, *(_statement_line(statement, comments) for statement, comments in added)]
        )

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self.pending.append([])

    def leave_SimpleStatementSuite(
        self, original_node: cst.SimpleStatementSuite, updated_node: cst.SimpleStatementSuite
    ) -> cst.SimpleStatementSuite:
        added = self.pending.pop()
        if not added:
            return updated_node
        body = list(updated_node.body)
        body[-1] = body[-1].with_changes(semicolon=cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated_node.with_changes(
            body=[*body, *(statement for statement, _ in added)]
        )  # one line: no comments

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        new = self.attribute_edits.get(original_node)
        if new is None:
            return updated_node
        return updated_node.with_changes(attr=updated_node.attr.with_changes(value=new))

    def leave_ImportFrom(self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom) -> cst.ImportFrom:
        renames = self.import_renames.get(original_node)
        if renames and not isinstance(updated_node.names, cst.ImportStar):
            names = list(updated_node.names)
            for index, new in renames.items():
                alias = names[index]
                assert isinstance(alias.name, cst.Name)
                # the local name stays: `from m import new as old`, so every use in the file follows
                asname = alias.asname or cst.AsName(name=cst.Name(alias.name.value))
                names[index] = alias.with_changes(name=cst.Name(new), asname=asname)
            updated_node = updated_node.with_changes(names=names)
        edits = self.import_edits.get(original_node)
        if not edits or isinstance(updated_node.names, cst.ImportStar):
            return updated_node
        names = list(updated_node.names)
        groups: dict[str, list[int]] = {}
        for index in sorted(edits):
            groups.setdefault(edits[index], []).append(index)
        statement = updated_node
        if len(edits) == len(names):
            # Every name moves: the statement itself takes the first new module, in place.
            first, *others = groups
            statement = statement.with_changes(module=_dotted_node(first))
            del groups[first]
            moved_away = [i for module in others for i in groups[module]]
        else:
            moved_away = sorted(edits)
        comments: dict[int, cst.Comment] = {}
        for index in sorted(moved_away, reverse=True):
            statement, comment = _remove_alias(statement, index)
            if comment is not None:
                comments[index] = comment  # the comment on a moved name's own line moves with it
        if groups and self.pending:
            self.pending[-1].extend(
                (
                    _import_statement(module, [names[i] for i in indices]),
                    [comments[i] for i in indices if i in comments],
                )
                for module, indices in groups.items()
            )
        return statement


def _dotted_node(dotted: str) -> cst.Attribute | cst.Name:
    node = cst.parse_expression(dotted)
    assert isinstance(node, (cst.Attribute, cst.Name))
    return node


def _statement_line(statement: cst.ImportFrom, comments: list[cst.Comment]) -> cst.SimpleStatementLine:
    """A new import line; one carried comment trails it, several go on their own lines above it."""
    if len(comments) == 1:
        trailing = cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=comments[0])
        return cst.SimpleStatementLine(body=[statement], trailing_whitespace=trailing)
    leading = [cst.EmptyLine(comment=comment) for comment in comments]
    return cst.SimpleStatementLine(body=[statement], leading_lines=leading)


def _import_statement(module: str, aliases: Iterable[cst.ImportAlias]) -> cst.ImportFrom:
    names = [alias.with_changes(comma=cst.MaybeSentinel.DEFAULT) for alias in aliases]
    spaced = [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for a in names[:-1]]
    return cst.ImportFrom(module=_dotted_node(module), names=[*spaced, names[-1]])


_Whitespace = cst.BaseParenthesizableWhitespace


def _gap(lead: _Whitespace, trail: _Whitespace, *, closing: bool) -> tuple[_Whitespace, cst.Comment | None]:
    """The whitespace left where an item was, from the whitespace before it (`lead`) and after its
    comma (`trail`); `closing` when the item was the last one, before the closing bracket. Also the
    comment dropped with the item, if any.

    An item on its own line takes its line with it, the comment on that line included; comment
    lines above and below it stay. An item sharing its line with the previous one leaves that line
    (and its comment) as it was. The next item, or the closing bracket, keeps its indentation.
    """
    if isinstance(trail, cst.ParenthesizedWhitespace):
        if isinstance(lead, cst.ParenthesizedWhitespace):
            merged = cst.ParenthesizedWhitespace(
                first_line=lead.first_line,
                empty_lines=[*lead.empty_lines, *trail.empty_lines],
                indent=trail.indent,
                last_line=trail.last_line,
            )
            return merged, trail.first_line.comment
        return trail, None
    if not closing:
        return lead, None
    if isinstance(lead, cst.ParenthesizedWhitespace) and _has_comment_lines(lead):
        # `)` followed the item on its line; the comment lines above it stay, `)` goes on a line of its own
        return lead.with_changes(indent=True, last_line=cst.SimpleWhitespace("")), None
    return trail, None


def _has_comment_lines(whitespace: _Whitespace) -> bool:
    return isinstance(whitespace, cst.ParenthesizedWhitespace) and (
        whitespace.first_line.comment is not None
        or any(line.comment is not None for line in whitespace.empty_lines)
    )


def _remove_arg(call: cst.Call, index: int) -> cst.Call:
    args = list(call.args)
    arg = args.pop(index)
    previous = args[index - 1] if index > 0 else None
    lead = (
        previous.comma.whitespace_after
        if isinstance(previous, cst.Arg) and isinstance(previous.comma, cst.Comma)
        else call.whitespace_before_args
    )
    has_comma = isinstance(arg.comma, cst.Comma)
    trail = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else arg.whitespace_after_arg
    last = index == len(args)
    gap, _ = _gap(lead, trail, closing=last)
    if not args:
        return call.with_changes(
            args=(), whitespace_before_args=gap if _has_comment_lines(gap) else cst.SimpleWhitespace("")
        )
    if previous is None:
        return call.with_changes(args=args, whitespace_before_args=gap)
    if last and not has_comma:  # the previous argument is now the last: it loses its comma
        args[index - 1] = previous.with_changes(comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=gap)
    else:
        assert isinstance(previous.comma, cst.Comma)
        args[index - 1] = previous.with_changes(comma=previous.comma.with_changes(whitespace_after=gap))
    return call.with_changes(args=args)


def _remove_alias(statement: cst.ImportFrom, index: int) -> tuple[cst.ImportFrom, cst.Comment | None]:
    assert not isinstance(statement.names, cst.ImportStar)
    names = list(statement.names)
    alias = names.pop(index)
    assert names, "the last name of an import is never removed"
    previous = names[index - 1] if index > 0 else None
    if previous is not None and isinstance(previous.comma, cst.Comma):
        lead = previous.comma.whitespace_after
    elif statement.lpar is not None:
        lead = statement.lpar.whitespace_after
    else:
        lead = statement.whitespace_after_import
    has_comma = isinstance(alias.comma, cst.Comma)
    if isinstance(alias.comma, cst.Comma):
        trail = alias.comma.whitespace_after
    elif statement.rpar is not None:
        trail = statement.rpar.whitespace_before
    else:
        trail = cst.SimpleWhitespace("")
    last = index == len(names)
    gap, dropped = _gap(lead, trail, closing=last)
    if previous is None:
        if statement.lpar is not None:
            return statement.with_changes(
                names=names, lpar=statement.lpar.with_changes(whitespace_after=gap)
            ), dropped
        if not isinstance(gap, cst.SimpleWhitespace) or not gap.value:
            gap = cst.SimpleWhitespace(" ")  # `from x import` needs its space
        return statement.with_changes(names=names, whitespace_after_import=gap), dropped
    if last and not has_comma:
        names[index - 1] = previous.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        if statement.rpar is not None:
            return statement.with_changes(
                names=names, rpar=statement.rpar.with_changes(whitespace_before=gap)
            ), dropped
        return statement.with_changes(names=names), dropped
    if (
        last and statement.rpar is None
    ):  # `from x import a, b,` is not Python: no trailing comma without parentheses
        names[index - 1] = previous.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return statement.with_changes(names=names), dropped
    assert isinstance(previous.comma, cst.Comma)
    names[index - 1] = previous.with_changes(comma=previous.comma.with_changes(whitespace_after=gap))
    return statement.with_changes(names=names), dropped
