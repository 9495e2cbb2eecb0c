"""Module-level functions a plugin host may take as hook implementations by their name.

pytest takes every function of a plugin module whose name starts with `pytest_` as a hook
implementation (marked `@pytest.hookimpl(...)` or not) and validates it against its hook
specifications when the plugin is registered. The scanner records one site per such function at the
top level of the file (also inside a top-level `if`/`try`), named by an upstream import name
(`pytest_...` where `pytest` is the upstream's). Whether the file is a plugin at all is decided later:
a `conftest.py` always is; another module only where the downstream's entry points name it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from apidrift.auditor.core.refs import AttrRef, ModuleRef
from apidrift.auditor.core.sites import SiteKind, UseSite
from apidrift.auditor.downstream.astscan.nodes import _dotted
from apidrift.auditor.downstream.astscan.signatures import _signature_of
from apidrift.auditor.downstream.astscan.text import _name_span, _Text


def hook_sites(
    body: list[ast.stmt], text: _Text, upstream_names: frozenset[str], path: str
) -> Iterator[UseSite]:
    prefixes = {f"{n}_": n for n in upstream_names if n.isidentifier() and not n.startswith("_")}
    if not prefixes:
        return
    place = "conftest" if path.replace("\\", "/").rsplit("/", 1)[-1] == "conftest.py" else "module"
    for node in _top_level_defs(body):
        root = next((r for p, r in prefixes.items() if node.name.startswith(p)), None)
        if root is None or node.name == f"{root}_plugins":
            continue
        flags = ""
        for decorator in node.decorator_list:
            call = decorator if isinstance(decorator, ast.Call) else None
            name = _dotted(call.func if call is not None else decorator) or ""
            if name.rsplit(".", 1)[-1] != "hookimpl":
                flags += "+decorated"
                break
            for keyword in call.keywords if call is not None else ():
                if keyword.arg == "optionalhook" and not (
                    isinstance(keyword.value, ast.Constant) and keyword.value.value is False
                ):
                    flags += "+optional"
        yield UseSite(
            SiteKind.HOOK,
            AttrRef(ModuleRef(root), node.name),
            _name_span(node, text),
            f"def {node.name}(...)",
            signature=_signature_of(node.args, "", text),
            hook=place + flags,
        )


def _top_level_defs(body: list[ast.stmt]) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield stmt
        elif isinstance(stmt, ast.If):
            yield from _top_level_defs([*stmt.body, *stmt.orelse])
        elif isinstance(stmt, ast.Try):
            yield from _top_level_defs([*stmt.body, *stmt.orelse, *stmt.finalbody])
