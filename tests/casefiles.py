"""Case files shared by the test modules: named sections of files, written out as trees.

A case file holds sections `[KIND PATH]` (e.g. `[old pkg/mod.py]`, `[new pkg/mod.py]`,
`[downstream app.py]`); each section's lines are that file's text.
"""

from __future__ import annotations

import re
from pathlib import Path


def parse_case(
    path: Path, kinds: tuple[str, ...] = ("old", "new", "downstream")
) -> dict[str, dict[str, str]]:
    section = re.compile(rf"^\[({'|'.join(kinds)}) ([^\]]+)\]\s*$")
    sections: dict[str, dict[str, str]] = {kind: {} for kind in kinds}
    current: tuple[str, str] | None = None
    for line in path.read_text().splitlines(keepends=True):
        match = section.match(line)
        if match:
            current = (match.group(1), match.group(2).strip())
            sections[current[0]][current[1]] = ""
        elif current is not None:
            sections[current[0]][current[1]] += line
    return sections


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def trees_agree(text: str, libcst_may_refuse: bool = False) -> str | None:
    """Whether LibCST's tree of `text`, converted (`cst_to_ast`), is CPython's tree of it, node for
    node and position for position. None when they agree or when CPython refuses the text (or
    LibCST does, if `libcst_may_refuse`: it refuses a few odd texts CPython reads), else what differs."""
    import ast

    import libcst

    from apidrift.auditor.downstream.cst_to_ast import parse

    try:
        expected = ast.dump(ast.parse(text), include_attributes=True, indent=0)
    except (SyntaxError, ValueError):
        return None
    try:
        converted = parse(text)
    except (libcst.ParserSyntaxError, libcst.CSTValidationError) as error:
        return None if libcst_may_refuse else f"LibCST refuses it: {error}"
    got = ast.dump(converted, include_attributes=True, indent=0)
    if got == expected:
        return None
    for number, (want, have) in enumerate(zip(expected.splitlines(), got.splitlines()), 1):
        if want != have:
            return f"dump line {number}: CPython {want!r}, converted {have!r}"
    return "the dumps differ in length"
