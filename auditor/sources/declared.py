"""The dependencies a local project declares, with the specifier each declaration gives.

Read, each bounded as lock files are (`lockfiles.folder_reader`: at most 8 MiB, never outside the
project): `pyproject.toml` (PEP 621 dependencies and extras, PEP 735 groups, Poetry's tables),
`requirements*.txt` and `requirements/*.txt`, `setup.cfg` (`[options] install_requires` and
`[options.extras_require]`), `setup.py` (the literal lists and dicts given to `setup(...)` as
`install_requires` and `extras_require`, or bound to a name once at module level: read with `ast`,
never run) and a conda `environment.yml`'s `pip:` section (conda's own packages are no releases of the
package index). Versions pinned exactly are read by `lockfiles`; this module says what is declared
at all, and within which range.
"""

from __future__ import annotations

import ast
import configparser
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from apidrift.auditor.sources.lockfiles import LockError, Reader, folder_reader, logical_lines

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

MAX_DECLARED = 2_000  # requirements read from one project
_ENVIRONMENT_FILES = ("environment.yml", "environment.yaml")


@dataclass(frozen=True)
class Declared:
    name: str  # PEP 503 normalized
    display: str  # as the file spells it
    specifier: str  # "" when the declaration gives none
    path: str  # the file declaring it
    marker: str | None = None


@dataclass
class Declarations:
    requirements: list[Declared] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # files read
    notes: list[str] = field(default_factory=list)

    def by_name(self) -> dict[str, list[Declared]]:
        found: dict[str, list[Declared]] = {}
        for declared in self.requirements:
            found.setdefault(declared.name, []).append(declared)
        return found

    def add(self, text: str, path: str) -> None:
        text = text.strip()
        if not text or text.startswith(("-", "#")):
            return
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            self.notes.append(f"{path}: {text[:80]!r} is not a requirement; left out")
            return
        if requirement.url:
            self.notes.append(f"{path}: {requirement.name} is a URL, not a release; left out")
            return
        if len(self.requirements) >= MAX_DECLARED:
            raise LockError(f"more than {MAX_DECLARED} declared requirements; not read")
        self.requirements.append(
            Declared(
                canonicalize_name(requirement.name),
                requirement.name,
                str(requirement.specifier),
                path,
                str(requirement.marker) if requirement.marker else None,
            )
        )


def declared_requirements(project: Path, named: tuple[str, ...] = ()) -> Declarations:
    """Every dependency the project's files declare (bounded reads; nothing is run); `named`: files
    of other names (relative to the project) read as requirements files."""
    read = folder_reader(project)
    found = Declarations()
    names = sorted(p.name for p in project.iterdir() if p.is_file()) if project.is_dir() else []
    names += [n for n in named if n not in names]
    folder = project / "requirements"
    if folder.is_dir() and not folder.is_symlink():
        names += sorted(f"requirements/{p.name}" for p in folder.iterdir() if p.suffix == ".txt")
    for name in names[:10_000]:
        base = name.rsplit("/", 1)[-1]
        reader = _READERS.get(base)
        if reader is None and (
            re.fullmatch(r"requirements[\w.-]*\.txt", base)
            or name.startswith("requirements/")
            or name in named
        ):
            reader = _requirements
        if reader is None:
            continue
        data = read(name)
        if data is None:
            continue
        found.files.append(name)
        try:
            reader(data.decode("utf-8", "replace"), name, found)
        except (ValueError, SyntaxError, RecursionError, MemoryError, configparser.Error) as error:
            found.notes.append(f"{name}: cannot be read ({type(error).__name__}); left out")
    return found


def _pyproject(text: str, path: str, found: Declarations) -> None:
    doc = tomllib.loads(text)
    project = _table(doc, "project")
    strings: list[object] = list(project.get("dependencies") or [])
    extras = project.get("optional-dependencies")
    if isinstance(extras, dict):
        for group in extras.values():
            strings += group if isinstance(group, list) else []
    groups = doc.get("dependency-groups")
    if isinstance(groups, dict):
        for group in groups.values():
            strings += group if isinstance(group, list) else []
    for item in strings:
        if isinstance(item, str):
            found.add(item, path)
    poetry = _table(_table(doc, "tool"), "poetry")
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    poetry_groups = _table(poetry, "group")
    tables += [g.get("dependencies") for g in poetry_groups.values() if isinstance(g, dict)]
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, spec in table.items():
            if not isinstance(name, str) or name.lower() == "python":
                continue
            if isinstance(spec, dict):
                spec = spec.get("version")
            found.add(f"{name}{_poetry_specifier(spec) if isinstance(spec, str) else ''}", path)


def _table(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    return value if isinstance(value, dict) else {}


def _poetry_specifier(spec: str) -> str:
    """Poetry's `^1.2`, `~1.2`, `1.2.*`, `1.2` and PEP 440 ranges, as a PEP 440 specifier."""
    spec = spec.strip()
    if spec in ("", "*"):
        return ""
    if spec[0] in "^~" and spec[1:2] != "=":
        parts = [p for p in spec[1:].strip().split(".") if p.isdigit()]
        if not parts:
            return ""
        low = ".".join(parts)
        if spec[0] == "^":
            index = next((i for i, p in enumerate(parts) if p != "0"), len(parts) - 1)
        else:
            index = min(1, len(parts) - 1) if len(parts) > 1 else 0
        upper = [*parts[:index], str(int(parts[index]) + 1)]
        return f">={low},<{'.'.join(upper)}"
    if re.fullmatch(r"\d[\w.]*", spec):
        return f"=={spec}"
    return spec


def _requirements(text: str, path: str, found: Declarations) -> None:
    for line in logical_lines(text):
        found.add(re.split(r"\s--?\w", line, maxsplit=1)[0], path)


def _setup_cfg(text: str, path: str, found: Declarations) -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    if parser.has_option("options", "install_requires"):
        for line in parser.get("options", "install_requires").splitlines():
            found.add(line.split("#", 1)[0], path)
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            for line in value.splitlines():
                found.add(line.split("#", 1)[0], path)


def _setup_py(text: str, path: str, found: Declarations) -> None:
    """The literal `install_requires` and `extras_require` of `setup(...)`, or the module-level name
    bound once to a literal that they name. Anything computed is said in a note, never run."""
    tree = ast.parse(text)
    assigned: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned.setdefault(node.targets[0].id, []).append(node.value)
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and _callee(call.func) == "setup"):
            continue
        for keyword in call.keywords:
            if keyword.arg not in ("install_requires", "extras_require"):
                continue
            value = keyword.value
            if isinstance(value, ast.Name) and len(assigned.get(value.id, [])) == 1:
                value = assigned[value.id][0]
            try:
                literal: Any = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                found.notes.append(f"{path}: `{keyword.arg}` is computed, not a literal; not read")
                continue
            items = literal.values() if isinstance(literal, dict) else [literal]
            for item in items:
                for text_item in (
                    [item] if isinstance(item, str) else item if isinstance(item, (list, tuple)) else []
                ):
                    if isinstance(text_item, str):
                        for line in text_item.splitlines():
                            found.add(line, path)


def _callee(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


_YAML_ITEM = re.compile(r"^(\s*)-\s*(.*?)\s*$")


def _environment(text: str, path: str, found: Declarations) -> None:
    """The `pip:` list of a conda environment file: the items indented under `- pip:` (block style)
    or written inline (`- pip: [a, b]`). Conda's own packages are not the index's releases."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = _YAML_ITEM.match(lines[index])
        index += 1
        if not match or not match.group(2).startswith("pip:"):
            continue
        inline = match.group(2)[4:].split("#", 1)[0].strip()
        if inline.startswith("["):
            for item in inline.strip("[]").split(","):
                found.add(_unquoted(item), path)
            continue
        indent = len(match.group(1))
        while index < len(lines):
            line = lines[index]
            if not line.strip() or line.lstrip().startswith("#"):
                index += 1
                continue
            item = _YAML_ITEM.match(line)
            if item is None or len(item.group(1)) <= indent:
                break
            found.add(_unquoted(item.group(2).split(" #", 1)[0]), path)
            index += 1


def _unquoted(text: str) -> str:
    text = text.strip()
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"" else text


_READERS = {
    "pyproject.toml": _pyproject,
    "setup.cfg": _setup_cfg,
    "setup.py": _setup_py,
    **dict.fromkeys(_ENVIRONMENT_FILES, _environment),
}

__all__ = ["Declarations", "Declared", "Reader", "declared_requirements"]
