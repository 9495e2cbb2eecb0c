"""Python's standard library as an upstream: `python==3.13` -> a `SourceTree` of that version's stubs.

The standard library of every version is described at once by typeshed's `stdlib` stubs: its `VERSIONS`
file gives each module's first and last version, and `if sys.version_info >= (3, 12):` branches in the
stubs say which names and signatures each version has. They are read from a pinned release of a
distribution that ships them (mypy's pure wheel, `TYPESHED_CARRIER`), fetched from the package index
and cached like any release. One version's view is materialized once per carrier release: the modules
`VERSIONS` gives that version, each stub with its `sys.version_info` tests decided (the branch that
version takes is kept, the others dropped). Tests on `sys.platform` are left as they are: a module or
name that exists only on another platform is still there, never reported removed.

What the materialized tree is evidence of: a module the newer version lacks and the older one has is
outside its `VERSIONS` range; a name or a signature that differs between the two versions' trees comes
from a `sys.version_info` branch. A name both versions lack is only a stub's silence (the engine makes
it not checkable, `Reason.NOT_IN_STDLIB_STUBS`).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from apidrift.auditor.safe_read import read_bounded
from apidrift.auditor.sources.specs import SourceError

# The distribution whose release carries typeshed's stdlib stubs, pinned: a given version of Python is
# always described by the same stubs. mypy's pure wheel (2.4 MB) ships them under mypy/typeshed/stdlib.
TYPESHED_CARRIER = ("mypy", "1.18.2")
STUBS_FOLDER = ("mypy", "typeshed", "stdlib")
# The versions the pinned stubs describe: their oldest `sys.version_info` test is `< (3, 10)` (typeshed
# dropped 3.8's branches), their newest `>= (3, 14)`. Outside, a version is read as the nearest one.
OLDEST = (3, 9)
NEWEST = (3, 14)
DISTRIBUTION = "python"  # how the upstream is named in reports
MATERIALIZED_FORMAT = "2"
# Stubs typeshed keeps beside the standard library's for the stubs' own use: materialized (the stubs
# import them) but not the standard library's import names (typing_extensions is a distribution).
NOT_STDLIB = frozenset(
    {"typing_extensions", "mypy_extensions"}
)  # bump when the materialized trees change shape
_MAX_STUB_BYTES = 2 * 1024 * 1024
_VERSION_LINE = re.compile(r"^([A-Za-z0-9_.]+):\s*(\d+)\.(\d+)-(?:(\d+)\.(\d+))?\s*(?:#.*)?$")

Version2 = tuple[int, int]


@dataclass(frozen=True)
class PythonVersion:
    """The version asked for (`3.13` or `3.13.1`) and the one the stubs are read as."""

    text: str
    major_minor: Version2
    read_as: Version2
    note: str | None = None


def python_version(text: str) -> PythonVersion:
    """`3.13` / `3.13.1` -> a `PythonVersion`; raise `SourceError` for anything else."""
    match = re.fullmatch(r"3\.(\d{1,2})(?:\.(\d{1,3}))?", text.strip())
    if not match:
        raise SourceError(f"python=={text}: give a version of Python 3 as 3.X or 3.X.Y")
    wanted = (3, int(match.group(1)))
    read_as = min(max(wanted, OLDEST), NEWEST)
    note = None
    if read_as != wanted:
        carrier = "{}=={}".format(*TYPESHED_CARRIER)
        note = (
            f"the standard library's stubs (typeshed in {carrier}) describe Python "
            f"{_dotted(OLDEST)} to {_dotted(NEWEST)}: Python {text} is read as {_dotted(read_as)}"
        )
    return PythonVersion(text.strip(), wanted, read_as, note)


def running_python() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def _dotted(version: Version2) -> str:
    return f"{version[0]}.{version[1]}"


def parse_versions(text: str) -> dict[str, tuple[Version2, Version2 | None]]:
    """typeshed's `VERSIONS`: module -> (first version, last version or None for "still there")."""
    table: dict[str, tuple[Version2, Version2 | None]] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = _VERSION_LINE.match(line)
        if not match:
            continue
        first = (int(match.group(2)), int(match.group(3)))
        last = (int(match.group(4)), int(match.group(5))) if match.group(4) else None
        table[match.group(1)] = (first, last)
    return table


def module_range(
    dotted: str, table: dict[str, tuple[Version2, Version2 | None]]
) -> tuple[Version2, Version2 | None] | None:
    """The range of the most specific `VERSIONS` entry for a module (a submodule not listed lives as
    long as its parent); None when neither it nor a parent is listed."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        entry = table.get(".".join(parts[:end]))
        if entry is not None:
            return entry
    return None


def in_range(version: Version2, entry: tuple[Version2, Version2 | None]) -> bool:
    first, last = entry
    return first <= version and (last is None or version <= last)


# --- deciding `sys.version_info` tests -----------------------------------------------------------


def _is_version_info(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "version_info"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def _literal_version(node: ast.expr) -> tuple[int, ...] | None:
    if isinstance(node, ast.Tuple) and node.elts and len(node.elts) <= 3:
        values = [e.value for e in node.elts if isinstance(e, ast.Constant) and type(e.value) is int]
        if len(values) == len(node.elts):
            return tuple(int(v) for v in values)
    return None


_COMPARE = {
    ast.GtE: lambda a, b: a >= b,
    ast.Gt: lambda a, b: a > b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}


def decide(test: ast.expr, version: Version2) -> bool | None:
    """The value of an `if` test that depends only on `sys.version_info` (compared with a literal tuple,
    possibly through `[:2]`), combined with `and`/`or`/`not`; None when it depends on anything else
    (`sys.platform`, a name) or on the micro version. As Python compares: `sys.version_info == (3, 12)`
    is always false (a 5-tuple), `sys.version_info > (3, 12)` true from 3.12.0 on."""
    if isinstance(test, ast.BoolOp):
        values = [decide(v, version) for v in test.values]
        if isinstance(test.op, ast.And):
            if any(v is False for v in values):
                return False
            return True if all(v is True for v in values) else None
        if any(v is True for v in values):
            return True
        return False if all(v is False for v in values) else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = decide(test.operand, version)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARE:
        literal = _literal_version(test.comparators[0])
        if literal is None:
            return None
        left = test.left
        value: tuple[int, ...]
        if _is_version_info(left):
            # The whole 5-tuple (3, 13, micro, level, serial): beyond the minor version it is unknown but
            # there, so it compares as any longer tuple with that start, unless the micro is compared.
            if len(literal) > 2 and literal[:2] == version:
                return None
            value = (*version, 0)
        elif _is_version_info_prefix(left):
            value = version  # `sys.version_info[:2]`
        else:
            return None
        return bool(_COMPARE[type(test.ops[0])](value, literal))
    return None


def _is_version_info_prefix(node: ast.expr) -> bool:
    """`sys.version_info[:2]`."""
    if not (isinstance(node, ast.Subscript) and _is_version_info(node.value)):
        return False
    part = node.slice
    return (
        isinstance(part, ast.Slice)
        and part.lower is None
        and part.step is None
        and isinstance(part.upper, ast.Constant)
        and part.upper.value == 2
    )


class _Decider(ast.NodeTransformer):
    """Replaces each `if` whose test is decided by its taken branch; keeps the others, decided inside."""

    def __init__(self, version: Version2) -> None:
        self.version = version

    def _body(self, statements: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in statements:
            result = self.visit(statement)
            if result is None:
                continue
            out.extend(result if isinstance(result, list) else [result])
        return out

    def visit_If(self, node: ast.If) -> ast.stmt | list[ast.stmt]:
        value = decide(node.test, self.version)
        if value is True:
            return self._body(node.body)
        if value is False:
            return self._body(node.orelse)
        node.body = self._body(node.body) or [ast.Pass()]
        node.orelse = self._body(node.orelse)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.body = self._body(node.body) or [ast.Expr(ast.Constant(...))]
        return node

    def visit_Try(self, node: ast.Try) -> ast.Try:
        node.body = self._body(node.body) or [ast.Pass()]
        node.orelse = self._body(node.orelse)
        node.finalbody = self._body(node.finalbody)
        return node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        return node  # functions, expressions: nothing inside decides a module's names


def materialize_stub(text: str, version: Version2) -> str:
    """A stub's text with its `sys.version_info` tests decided for `version`."""
    tree = ast.parse(text, type_comments=False)
    decider = _Decider(version)
    tree.body = decider._body(tree.body)
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# --- the materialized tree of one version --------------------------------------------------------


def stubs_folder(carrier_root: Path) -> Path:
    folder = carrier_root.joinpath(*STUBS_FOLDER)
    if not (folder / "VERSIONS").is_file():
        carrier = "{}=={}".format(*TYPESHED_CARRIER)
        raise SourceError(f"{carrier} holds no typeshed stdlib stubs at {'/'.join(STUBS_FOLDER)}")
    return folder


def materialize(stubs: Path, version: Version2, dest: Path) -> tuple[str, ...]:
    """Write `version`'s view of the stubs under `dest` (once; later calls read it) and return the
    top-level modules that version has."""
    marker = dest / ".apidrift-stdlib"
    if marker.is_file():
        return tuple(marker.read_text(encoding="utf-8").split())
    table = parse_versions(read_bounded(stubs / "VERSIONS", _MAX_STUB_BYTES).decode("utf-8"))
    dest.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=".building-", dir=dest.parent))
    tops: set[str] = set()
    try:
        for folder, dirs, files in os.walk(stubs):
            dirs[:] = sorted(d for d in dirs if d.isidentifier())
            relative = Path(folder).relative_to(stubs)
            for filename in sorted(files):
                if not filename.endswith(".pyi") or os.path.islink(os.path.join(folder, filename)):
                    continue
                parts = [*relative.parts, filename[: -len(".pyi")]]
                if parts[-1] == "__init__":
                    parts.pop()
                dotted = ".".join(parts)
                entry = module_range(dotted, table)
                if entry is None or not in_range(version, entry):
                    continue  # not a module of this version (or `_typeshed`-like stub-only helpers)
                data = read_bounded(Path(folder) / filename, _MAX_STUB_BYTES, within=stubs)
                try:
                    text = materialize_stub(data.decode("utf-8"), version)
                except (SyntaxError, ValueError, RecursionError):
                    text = data.decode("utf-8", "replace")  # kept as is: the loader says what it cannot read
                out = building / relative / filename
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(text, encoding="utf-8")
                tops.add(parts[0])
        tops -= NOT_STDLIB
        (building / ".apidrift-stdlib").write_text("\n".join(sorted(tops)) + "\n", encoding="utf-8")
        try:
            os.rename(building, dest)
        except OSError:  # another run materialized it first
            if not marker.is_file():
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return tuple(marker.read_text(encoding="utf-8").split())
