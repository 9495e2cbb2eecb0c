"""Where a finding lives: the role of a downstream file in its distribution.

A break in code the distribution installs (`shipped`) reaches its users; one in its test suite
(`tests`), its examples or documentation (`examples`), or its build and task scripts (`build`) reaches
only its own developers; `other` is a file the distribution does not install and no convention names
(`scripts/`, `tools/`). Decided from the path below the tree's import root and the distribution's
import names (top_level.txt or RECORD when the metadata says them, else the layout), then by the test
runners' conventions (pytest collects `test_*.py`, `*_test.py` and `conftest.py`; `tests/` folders):
nothing is imported or run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

ROLES = ("shipped", "tests", "examples", "build", "other")
SHIPPED = "shipped"

# Folders holding a project's own tests: anywhere outside its packages; inside a package only `tests`
# (a shipped `pkg/test/` or `pkg/testing/` is often an API for the users' tests: django.test).
_TEST_FOLDERS = frozenset({"tests", "test", "testing", "unittests", "unit_tests", "integration_tests",
                           "functional_tests", "testsuite", "test_suite", "e2e"})  # fmt: skip
_EXAMPLE_FOLDERS = frozenset({"examples", "example", "docs", "doc", "documentation", "docs_src", "demo",
                              "demos", "samples", "sample", "tutorial", "tutorials", "cookbook", "recipes",
                              "notebooks", "benchmarks", "benchmark", "bench", "asv_bench"})  # fmt: skip
_BUILD_MODULES = frozenset({"setup", "noxfile", "toxfile", "tasks", "fabfile", "dodo", "versioneer",
                            "hatch_build", "build", "build_backend", "pavement", "make", "release",
                            "runtests", "run_tests"})  # fmt: skip
_BUILD_FOLDERS = frozenset({"ci", ".ci", ".github", "build_tools", "_build_tools", "packaging"})


def is_test_file(name: str) -> bool:
    """pytest's default collection: `test_*.py`, `*_test.py`, and its `conftest.py`."""
    stem = name.rsplit(".", 1)[0]
    return name == "conftest.py" or stem.startswith("test_") or stem.endswith("_test") or stem == "tests"


def file_role(path: str, import_names: Iterable[str]) -> str:
    """The role of `path` (POSIX, relative to the folder the distribution's packages are in)."""
    parts = PurePosixPath(path).parts
    if not parts:
        return "other"
    name, folders = parts[-1], parts[:-1]
    stem = name.rsplit(".", 1)[0]
    top = folders[0] if folders else stem
    if top in frozenset(import_names):
        if is_test_file(name) or "tests" in folders:
            return "tests"
        return SHIPPED
    if is_test_file(name) or any(f.lower() in _TEST_FOLDERS for f in folders):
        return "tests"
    if any(f.lower() in _EXAMPLE_FOLDERS for f in folders):
        return "examples"
    if (not folders and stem in _BUILD_MODULES) or (folders and folders[0].lower() in _BUILD_FOLDERS):
        return "build"
    return "other"


def parse_roles(values: Iterable[str]) -> frozenset[str]:
    """`--role shipped,tests` (repeatable) as a set; raises ValueError naming an unknown role."""
    roles = {part.strip().lower() for value in values for part in value.split(",") if part.strip()}
    unknown = sorted(roles - set(ROLES))
    if unknown:
        raise ValueError(f"unknown role {unknown[0]!r}; choose from {', '.join(ROLES)}")
    return frozenset(roles)
