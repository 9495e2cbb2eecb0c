"""Case files shared by the test modules: named sections of files, written out as trees.

A case file holds sections `[KIND PATH]` (e.g. `[old pkg/mod.py]`, `[new pkg/mod.py]`,
`[downstream app.py]`); each section's lines are that file's text. Before the first section, lines
`# flags: ARGS` and `# exit: N` set the command line's options and its expected exit status.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
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


@dataclass(frozen=True)
class CaseOptions:
    """What a case's description sets: `# flags: --fail-on warning` (options of `apidrift audit`, as a
    shell splits them) and `# exit: 1` (the exit status expected); with neither, the case runs
    through the library's `audit` instead of the command line."""

    flags: tuple[str, ...] = ()
    exit: int | None = None

    @property
    def command_line(self) -> bool:
        return bool(self.flags) or self.exit is not None


_OPTION = re.compile(r"^#\s*(flags|exit):\s*(.*?)\s*$")


def case_options(path: Path) -> CaseOptions:
    """The `# flags:` and `# exit:` lines before the first section (each at most once)."""
    found: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.startswith("["):
            break
        match = _OPTION.match(line)
        if match:
            if match.group(1) in found:
                raise ValueError(f"{path.name}: `# {match.group(1)}:` given twice")
            found[match.group(1)] = match.group(2)
    return CaseOptions(
        tuple(shlex.split(found.get("flags", ""))), int(found["exit"]) if "exit" in found else None
    )


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
