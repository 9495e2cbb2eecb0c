"""Old vs new signature, parameter by parameter, from the rendered signature strings a `Finding` carries.

`Signature.render()` writes `(a, b: int = 1, /, *args, c, **kw) -> R`; this reads that back into
parameters (name, kind, annotation, default) and marks each one added, removed, changed or unchanged.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

_OPEN, _CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class Param:
    text: str  # as rendered, e.g. "block_size: int"
    name: str
    kind: str  # "positional-only", "positional-or-keyword", "keyword-only", "var-positional", "var-keyword"
    annotation: str | None
    default: str | None

    @property
    def required(self) -> bool:
        return self.default is None and not self.kind.startswith("var-")


@dataclass(frozen=True)
class Row:
    """One parameter of the old or new side: its status and, for a change, what changed."""

    param: Param
    status: str  # "added", "removed", "changed" or "same"
    changes: tuple[str, ...] = ()


@dataclass(frozen=True)
class SignatureDiff:
    old: tuple[Row, ...]
    new: tuple[Row, ...]
    old_returns: str | None
    new_returns: str | None

    @property
    def added(self) -> list[str]:
        return [row.param.name for row in self.new if row.status == "added"]

    @property
    def removed(self) -> list[str]:
        return [row.param.name for row in self.old if row.status == "removed"]

    @property
    def changed(self) -> list[str]:
        return [row.param.name for row in self.new if row.status == "changed"]

    @property
    def returns_changed(self) -> bool:
        return self.old_returns != self.new_returns


def _outside_strings(text: str) -> Iterator[tuple[int, str, int]]:
    """(index, character, bracket depth after it) for every character outside string literals."""
    depth = 0
    quote: str | None = None
    i = 0
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        else:
            if char in _OPEN:
                depth += 1
            elif char in _CLOSE:
                depth -= 1
            yield i, char, depth
        i += 1


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """Split at `separator` outside brackets and string literals."""
    parts: list[str] = []
    start = 0
    for i, char, depth in _outside_strings(text):
        if char == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _closing_paren(text: str) -> int:
    """Index of the `)` matching the `(` at text[0], or -1."""
    return next((i for i, char, depth in _outside_strings(text) if char in _CLOSE and depth == 0), -1)


def _find_top_level(text: str, needle: str) -> int:
    return next(
        (
            i
            for i, char, depth in _outside_strings(text)
            if depth == 0 and char not in _CLOSE and text.startswith(needle, i)
        ),
        -1,
    )


def parse_signature(text: str) -> tuple[list[Param], str | None] | None:
    """`(params) -> returns` into parameters and the return annotation; None if it does not look like one."""
    text = text.strip()
    if not text.startswith("("):
        return None
    end = _closing_paren(text)
    if end < 0:
        return None
    inner, rest = text[1:end], text[end + 1 :].strip()
    returns = rest[2:].strip() if rest.startswith("->") else None
    pieces = [p.strip() for p in split_top_level(inner)] if inner.strip() else []
    params: list[Param] = []
    keyword_only = False
    for piece in pieces:
        if piece == "/":
            params = [Param(p.text, p.name, "positional-only", p.annotation, p.default) for p in params]
            continue
        if piece == "*":
            keyword_only = True
            continue
        kind = "keyword-only" if keyword_only else "positional-or-keyword"
        body = piece
        if body.startswith("**"):
            kind, body = "var-keyword", body[2:]
        elif body.startswith("*"):
            kind, body = "var-positional", body[1:]
            keyword_only = True
        default: str | None = None
        eq = _find_top_level(body, "=")
        if eq >= 0:
            default = body[eq + 1 :].strip()
            body = body[:eq].strip()
        annotation: str | None = None
        colon = _find_top_level(body, ":")
        if colon >= 0:
            annotation = body[colon + 1 :].strip()
            body = body[:colon].strip()
        params.append(Param(piece, body.strip(), kind, annotation, default))
    return params, returns


def _changes(old: Param, new: Param) -> tuple[str, ...]:
    changes = []
    if old.kind != new.kind:
        changes.append(f"kind: {old.kind} \u2192 {new.kind}")
    if normal_annotation(old.annotation) != normal_annotation(new.annotation):
        changes.append(f"type: {old.annotation or 'none'} \u2192 {new.annotation or 'none'}")
    if old.default != new.default:
        if new.default is None:
            changes.append("now required (default removed)")
        elif old.default is None:
            changes.append(f"now optional (default {new.default})")
        else:
            changes.append(f"default: {old.default} \u2192 {new.default}")
    return tuple(changes)


def diff_signatures(old: str, new: str) -> SignatureDiff | None:
    """Parameter-wise diff, matched by name; None when either string cannot be read back."""
    parsed_old, parsed_new = parse_signature(old), parse_signature(new)
    if parsed_old is None or parsed_new is None:
        return None
    old_params, old_returns = parsed_old
    new_params, new_returns = parsed_new
    old_by_name = {p.name: p for p in old_params}
    new_by_name = {p.name: p for p in new_params}
    old_rows = []
    for param in old_params:
        other = new_by_name.get(param.name)
        if other is None:
            old_rows.append(Row(param, "removed"))
        else:
            changes = _changes(param, other)
            old_rows.append(Row(param, "changed" if changes else "same", changes))
    new_rows = []
    for param in new_params:
        other = old_by_name.get(param.name)
        if other is None:
            new_rows.append(Row(param, "added"))
        else:
            changes = _changes(other, param)
            new_rows.append(Row(param, "changed" if changes else "same", changes))
    return SignatureDiff(tuple(old_rows), tuple(new_rows), old_returns, new_returns)


def single_side(signature: str) -> tuple[Row, ...] | None:
    """The parameters of one signature, all unchanged, for a finding that has only one side."""
    parsed = parse_signature(signature)
    if parsed is None:
        return None
    return tuple(Row(param, "same") for param in parsed[0])


_SPELLINGS = {
    "List": "list",
    "Dict": "dict",
    "Tuple": "tuple",
    "Set": "set",
    "FrozenSet": "frozenset",
    "Type": "type",
}


def normal_annotation(text: str | None) -> str | None:
    """One spelling per type, so that a rewrite is not a change: `Optional[int]` and `int | None`,
    `Union[A, B]` and `A | B`, `List[str]` and `list[str]`, `typing.X` and `X` all compare equal."""
    if text is None:
        return None
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return text.replace(" ", "")
    return _spell(tree)


def _spell(node: ast.expr) -> str:
    if isinstance(node, ast.Subscript):
        head = ast.unparse(node.value).removeprefix("typing.").removeprefix("typing_extensions.")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Optional":
            return _union([_spell(items[0]), "None"])
        if head == "Union":
            return _union([_spell(i) for i in items])
        return f"{_SPELLINGS.get(head, head)}[{', '.join(_spell(i) for i in items)}]"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([_spell(node.left), _spell(node.right)])
    text = ast.unparse(node).removeprefix("typing.").removeprefix("typing_extensions.")
    return _SPELLINGS.get(text, text)


def _union(parts: list[str]) -> str:
    flat = sorted({p for part in parts for p in part.split(" | ")})
    return " | ".join(flat)
