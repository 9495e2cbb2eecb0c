"""The distribution installs everything under the single `apidrift` namespace (`pip install .`)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = ("auditor", "rules", "reports")


def package_folders() -> list[Path]:
    """Every folder under auditor/, rules/ and reports/ that holds Python modules, relative to the root."""
    found = {
        path.parent.relative_to(ROOT)
        for folder in SOURCE_FOLDERS
        for path in (ROOT / folder).rglob("*.py")
        if "__pycache__" not in path.parts
    }
    return sorted(found)


def test_every_package_folder_is_a_listed_package() -> None:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = package_folders()
    assert Path("auditor/downstream/astscan") in folders  # the list is read from the file system
    for folder in folders:
        assert (ROOT / folder / "__init__.py").is_file(), f"{folder} has modules but no __init__.py"
        assert "apidrift." + ".".join(folder.parts) in listed, (
            f"{folder} is missing from pyproject.toml's packages"
        )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--verbose", "--no-deps", "--wheel-dir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    (out / "build.log").write_text(done.stdout + done.stderr)
    return next(out.glob("apidrift-*.whl"))


@pytest.mark.network
def test_the_build_warns_about_nothing_in_the_project_table(wheel: Path) -> None:
    log = (wheel.parent / "build.log").read_text()
    assert "setuptools" in log  # the build's own output is in the log
    assert "project.license" not in log and "SetuptoolsDeprecationWarning" not in log, log[-3000:]
    assert "absent from the `packages` configuration" not in log, log[-3000:]  # every data folder is listed
    metadata = (
        zipfile.ZipFile(wheel)
        .read(next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith("METADATA")))
        .decode()
    )
    assert "License-Expression: MIT" in metadata


@pytest.mark.network  # the isolated build fetches setuptools from the index
def test_wheel_holds_only_the_apidrift_namespace(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_levels = {name.split("/")[0] for name in names}
    assert top_levels == {
        "apidrift",
        wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info",
    }
    for module in (
        "auditor/engine.py",
        "auditor/upstream/loader.py",
        "auditor/upstream/analyses/decorators/__init__.py",
        "auditor/sources/locate.py",
        "auditor/downstream/cst_to_ast.py",
        "auditor/downstream/astscan/collector.py",
        "auditor/core/bind.py",
        "auditor/fix/codemods.py",
        "auditor/fix/rewriting.py",
        "auditor/cli/main.py",
        "rules/registry.py",
        "rules/unexpected_keyword.py",
    ):
        assert f"apidrift/{module}" in names
    for folder in package_folders():  # every module of every package folder, a new package included
        for module in (ROOT / folder).glob("*.py"):
            assert f"apidrift/{folder.as_posix()}/{module.name}" in names
    assert not any(name.startswith("apidrift/tests/") for name in names)
    entry_points = (
        zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    )
    assert "apidrift = apidrift.auditor.cli.main:main" in entry_points


@pytest.mark.network
def test_installed_wheel_imports_from_anywhere(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    code = (
        "import apidrift, apidrift.rules.registry, apidrift.auditor.cli.main, importlib.util;"
        "print(apidrift.__file__);"
        "print(importlib.util.find_spec('rules'), importlib.util.find_spec('reports'), importlib.util.find_spec('auditor'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(target)},
        capture_output=True,
        text=True,
        check=True,
    )
    first, second = done.stdout.splitlines()
    assert first.startswith(str(target))
    assert second == "None None None"


def test_subpackages_live_inside_the_apidrift_package() -> None:
    import apidrift
    import apidrift.reports
    import apidrift.rules.registry

    package = Path(apidrift.__file__).resolve().parent
    assert Path(apidrift.rules.registry.__file__).resolve().parent == package / "rules"
    assert Path(apidrift.reports.__file__).resolve().parent == package / "reports"
