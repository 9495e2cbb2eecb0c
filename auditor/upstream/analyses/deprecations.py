"""Deprecations a function or class declares in its source.

Input: a `def` or `class` node. Output: the message of a PEP 702 `@deprecated(...)`, of a
`warnings.warn(..., DeprecationWarning)` at the top of its body, or of a top-level `.. deprecated::`
docstring directive; None when it declares none.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from apidrift.auditor.upstream.analyses.nodes import _last_name

DEPRECATION_CATEGORIES = ("DeprecationWarning", "PendingDeprecationWarning", "FutureWarning")


def _deprecation(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str | None:
    """The message of a deprecation declared by PEP 702 `@deprecated(...)`, a `warnings.warn(...,
    DeprecationWarning)` at the top of the body, or a `.. deprecated::` docstring directive."""
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call) and _last_name(decorator.func) == "deprecated" and decorator.args:
            return _message(decorator.args[0])
    body = node.body
    docstring = ast.get_docstring(node) if not isinstance(node, ast.ClassDef) or body else None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not isinstance(node, ast.ClassDef):
        for index, stmt in enumerate(body[:3]):
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if not isinstance(call, ast.Call) or _last_name(call.func) != "warn" or not call.args:
                continue
            category = (
                call.args[1]
                if len(call.args) > 1
                else next((k.value for k in call.keywords if k.arg == "category"), None)
            )
            if category is not None and _last_name(category) in DEPRECATION_CATEGORIES:
                return _message(call.args[0], body[:index])
    if docstring and ".. deprecated::" in docstring:
        # Only a directive at the docstring's top level deprecates the object; one nested under a
        # parameter's description deprecates that parameter.
        lines = docstring.splitlines()
        for index, line in enumerate(lines):
            if line.startswith(".. deprecated::"):
                rest = [
                    line[len(".. deprecated::") :].strip(),
                    *(following.strip() for following in lines[index + 1 : index + 3]),
                ]
                message = " ".join(part for part in rest if part) or "deprecated"
                return None if _deprecates_a_use(message, node) else message
    return None


_SUBJECT_WORDS = ("keyword", "argument", "parameter", "default", "option")


def _deprecates_a_use(message: str, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """A top-level directive that deprecates one way of using the object, not the object: its first
    sentence is about doing something ("Passing json literal strings is deprecated.", "Returning a
    tuple from a callable is deprecated."), about a parameter ("The axis keyword is deprecated.",
    "``convert_dtype`` has been deprecated."), about a feature it supports ("Docutils 0.4-style
    (function based) directives support is deprecated."), not about the object ("Use new_api instead.",
    "Series.ravel is deprecated.")."""
    sentence = re.sub(r"^\d+(\.\d+)*\s*", "", message).split(". ")[0]  # the version first
    words = sentence.replace("`", "").split()
    if not words:
        return False
    first = words[0].strip(",:;")
    if first.endswith("ing") and first[:1].isupper() and first.lower() != node.name.lower():
        return True
    if first.lower() == "the" and any(w.strip(",.").lower() in _SUBJECT_WORDS for w in words[1:4]):
        return True
    before = [
        w.strip(",.()").lower()
        for w in words[: next((i for i, w in enumerate(words) if "deprecat" in w.lower()), 0)]
    ]
    if "support" in before:
        # a feature the object serves: "Docutils 0.4-style (function based) directives support is
        # deprecated." (Sphinx's `add_directive`), "Support for tuples is deprecated."
        return True
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        return first.strip("'\"") in params and first.strip("'\"") not in ("self", "cls")
    return False


def _message(node: ast.expr, before: Sequence[ast.stmt] = ()) -> str:
    """The text of a deprecation message: a literal, literals joined with `+`, an f-string (its
    replacement fields as `…`), or a local name the statements `before` bind to one of those
    (scipy's `msg = ("'scipy.integrate.simps' is deprecated ..."); warnings.warn(msg, ...)`)."""
    if isinstance(node, ast.Name):
        for stmt in reversed(before):
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id == node.id
            ):
                return _message(stmt.value)
        return "deprecated"  # a name bound elsewhere: its text is not known
    text = _literal_text(node)
    return text if text is not None else ast.unparse(node)


def _literal_text(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal_text(node.left), _literal_text(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(part.value) if isinstance(part, ast.Constant) else "\u2026" for part in node.values
        )
    return None
