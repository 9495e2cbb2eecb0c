"""Type aliases of a module, and annotations with them written out.

Input: a module's AST. Output: `{name: source text}` for each module-level type alias bound once
(`X = Literal["lazy", "eager"]`, `X: TypeAlias = ...`, `type X = ...`), and, for an annotation's text,
the same text with those names replaced by what they stand for (`SafetensorsLoadStrategy | None` ->
`Literal['lazy', 'eager'] | None`), so that a judgement on the annotation (does the old default fit
it?) reads the type itself. A name bound more than once, by an import, in a block, or to anything but
a type expression is never replaced.
"""

from __future__ import annotations

import ast

from apidrift.auditor.upstream.analyses.nodes import _module_statements, _own_nodes

_MAX_TEXT = 10_000  # an alias or an annotation longer than this is not written out
_MAX_DEPTH = 8  # aliases of aliases followed this deep
_TYPE_HEADS = frozenset({"Literal", "Union", "Optional", "Annotated"})
_TYPE_ALIAS = getattr(ast, "TypeAlias", None)  # `type X = ...`, Python 3.12 and later


def type_aliases(module: ast.Module) -> dict[str, str]:
    """Module-level type aliases bound exactly once in the module: name -> the type's source text."""
    counts = _binding_counts(module)
    found: dict[str, str] = {}
    for stmt in module.body:
        name, value = _alias_statement(stmt)
        if name is None or value is None or counts.get(name) != 1 or not _type_like(value, 0):
            continue
        text = ast.unparse(value)
        if len(text) <= _MAX_TEXT:
            found[name] = text
    return found


def _alias_statement(stmt: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    if (
        isinstance(stmt, ast.AnnAssign)
        and isinstance(stmt.target, ast.Name)
        and stmt.value is not None
        and _head(stmt.annotation) == "TypeAlias"
    ):
        return stmt.target.id, stmt.value
    if _TYPE_ALIAS is not None and isinstance(stmt, _TYPE_ALIAS) and not getattr(stmt, "type_params", None):
        return stmt.name.id, stmt.value
    return None, None


def _binding_counts(module: ast.Module) -> dict[str, int]:
    """How many statements bind each module-level name (imports, defs, classes, assignments in any
    block, `global` in a function)."""
    counts: dict[str, int] = {}

    def add(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    for stmt in _module_statements(module):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(stmt.name)
            functions = [stmt] if not isinstance(stmt, ast.ClassDef) else [
                f for f in stmt.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]  # fmt: skip
            for function in functions:
                for inner in _own_nodes(function):
                    if isinstance(inner, ast.Global):
                        for name in inner.names:
                            add(name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                add(alias.asname or alias.name.split(".")[0])
        else:
            for field in ("targets", "target", "name", "items", "value", "test", "iter"):
                value = getattr(stmt, field, None)
                parts = value if isinstance(value, list) else [value]
                for part in parts:
                    if isinstance(part, ast.AST):
                        for inner in ast.walk(part):
                            if isinstance(inner, ast.Name) and isinstance(inner.ctx, (ast.Store, ast.Del)):
                                add(inner.id)
    return counts


def _head(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _type_like(node: ast.expr, depth: int) -> bool:
    """Whether an expression is written as a type (nothing it evaluates can run code of the module)."""
    if depth > 20:
        return False
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, str)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _head(node) is not None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _type_like(node.left, depth + 1) and _type_like(node.right, depth + 1)
    if isinstance(node, ast.Subscript):
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if _head(node.value) == "Literal":
            return all(_literal(item) for item in items)
        return _head(node.value) is not None and all(_type_like(item, depth + 1) for item in items)
    return False


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def expand(
    annotation: str | None, aliases: dict[str, str], shadowed: frozenset[str] = frozenset()
) -> str | None:
    """`annotation` with the module's type aliases written out; None when there is nothing to replace
    (or the text is not an expression, or too large). `shadowed`: names the scope binds (a class body)."""
    if not annotation or not aliases or len(annotation) > _MAX_TEXT:
        return None
    usable = {name: text for name, text in aliases.items() if name not in shadowed}
    try:
        tree = ast.parse(annotation.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    before = ast.unparse(tree)  # the transformer changes the tree in place
    expanded = _Expander(usable).visit(tree)
    if not isinstance(expanded, ast.expr):
        return None
    text = ast.unparse(expanded)
    return text if text != before and len(text) <= _MAX_TEXT else None


class _Expander(ast.NodeTransformer):
    def __init__(self, aliases: dict[str, str], depth: int = 0) -> None:
        self.aliases, self.depth = aliases, depth

    def visit_Name(self, node: ast.Name) -> ast.AST:
        text = self.aliases.get(node.id)
        if text is None or self.depth >= _MAX_DEPTH:
            return node
        try:
            value = ast.parse(text, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return node
        inner = {name: alias for name, alias in self.aliases.items() if name != node.id}  # no cycles
        return _Expander(inner, self.depth + 1).visit(value)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if _head(node.value) == "Literal":
            return node  # `Literal["X"]`: values, not names
        return self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if not isinstance(node.value, str) or self.depth >= _MAX_DEPTH:
            return node
        try:  # a forward reference: "X | None"
            value = ast.parse(node.value.strip(), mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return node
        before = ast.unparse(value)
        visited = _Expander(self.aliases, self.depth + 1).visit(value)
        return visited if ast.unparse(visited) != before else node
