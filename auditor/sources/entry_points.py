"""The entry points a downstream declares, by group: the modules a plugin host loads by name.

A pluggy host loads its plugins from an entry point group (pytest: `pytest11`), so the module an entry
point names is a plugin module. Read, bounded as declared requirements are (`folder_reader`: never
outside the folder, each file at most 8 MiB), from the release's own metadata and the project's files:
`*.dist-info/entry_points.txt` and `*.egg-info/entry_points.txt` (at the top or under `src/`),
`pyproject.toml` (`[project.entry-points.<group>]`, Poetry's `[tool.poetry.plugins.<group>]`),
`setup.cfg` (`[options.entry_points]`), and `setup.py`'s literal `entry_points={...}` (read with
`ast`, never run). An entry point's value `module:attr` names the module `module`.
"""

from __future__ import annotations

import ast
import configparser
import sys
from pathlib import Path
from typing import Any

from apidrift.auditor.sources.lockfiles import LockError, folder_reader

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_MAX_LISTED = 2_000  # folder entries looked at for metadata folders


def entry_point_modules(folders: list[Path]) -> dict[str, set[str]]:
    """group -> the modules its entry points name, from every folder given (deduplicated)."""
    found: dict[str, set[str]] = {}
    seen: set[Path] = set()
    for folder in folders:
        if folder in seen or not folder.is_dir():
            continue
        seen.add(folder)
        read = folder_reader(folder)
        names = ["pyproject.toml", "setup.cfg", "setup.py"]
        for sub in ("", "src/"):
            try:
                listed = sorted((folder / sub).iterdir())[:_MAX_LISTED] if (folder / sub).is_dir() else []
            except OSError:
                continue
            names += [
                f"{sub}{p.name}/entry_points.txt"
                for p in listed
                if p.suffix in (".dist-info", ".egg-info") and not p.is_symlink()
            ]
        for name in names:
            try:
                data = read(name)
            except LockError:
                continue
            if data is None:
                continue
            text = data.decode("utf-8", "replace")
            try:
                if name.endswith(".txt") or name == "setup.cfg":
                    groups = _ini(text, name == "setup.cfg")
                elif name == "pyproject.toml":
                    groups = _pyproject(text)
                else:
                    groups = _setup_py(text)
            except (ValueError, SyntaxError, RecursionError, MemoryError, configparser.Error):
                continue
            for group, values in groups.items():
                found.setdefault(group, set()).update(_module(v) for v in values if _module(v))
    return found


def _module(value: str) -> str:
    """`name = pkg.mod:attr [extra]` or `pkg.mod:attr` -> `pkg.mod`."""
    value = value.split("=", 1)[-1] if "=" in value else value
    module = value.split(":", 1)[0].split("[", 1)[0].strip()
    return module if all(part.isidentifier() for part in module.split(".")) else ""


def _ini(text: str, setup_cfg: bool) -> dict[str, list[str]]:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keep names as written
    parser.read_string(text)
    if not setup_cfg:
        return {group: list(parser[group].values()) for group in parser.sections()}
    if not parser.has_section("options.entry_points"):
        return {}
    found: dict[str, list[str]] = {}
    for group, lines in parser["options.entry_points"].items():
        found[group] = [line.strip() for line in lines.splitlines() if line.strip()]
    return found


def _pyproject(text: str) -> dict[str, list[str]]:
    doc = tomllib.loads(text)
    found: dict[str, list[str]] = {}
    tables: list[Any] = [
        doc.get("project", {}).get("entry-points", {}),
        doc.get("tool", {}).get("poetry", {}).get("plugins", {}),
    ]
    for table in tables:
        if not isinstance(table, dict):
            continue
        for group, points in table.items():
            if isinstance(points, dict):
                found.setdefault(group, []).extend(str(v) for v in points.values() if isinstance(v, str))
    return found


def _setup_py(text: str) -> dict[str, list[str]]:
    tree = ast.parse(text)
    found: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg != "entry_points" or not isinstance(keyword.value, ast.Dict):
                continue
            for key, value in zip(keyword.value.keys, keyword.value.values):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    continue
                items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
                found.setdefault(key.value, []).extend(
                    e.value for e in items if isinstance(e, ast.Constant) and isinstance(e.value, str)
                )
    return found
