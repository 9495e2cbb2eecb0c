"""The entry points a downstream declares, read from its metadata and project files without running them."""

from __future__ import annotations

from pathlib import Path

from apidrift.auditor.sources.entry_points import entry_point_modules


def test_each_format_names_its_modules(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project.entry-points.pytest11]\nmine = "mine.plugin"\n'
        '[tool.poetry.plugins."pytest11"]\npoetic = "mine.poetic:hooks"\n'
    )
    (tmp_path / "setup.cfg").write_text(
        "[options.entry_points]\npytest11 =\n    cfg = mine.cfg_plugin\nconsole_scripts =\n    x = mine.cli:main\n"
    )
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\nsetup(entry_points={'pytest11': ['lit = mine.literal [extra]']})\n"
    )
    info = tmp_path / "mine-1.0.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[pytest11]\nwheel = mine.from_wheel\n")
    found = entry_point_modules([tmp_path, tmp_path])
    assert found["pytest11"] == {
        "mine.plugin",
        "mine.poetic",
        "mine.cfg_plugin",
        "mine.literal",
        "mine.from_wheel",
    }
    assert found["console_scripts"] == {"mine.cli"}


def test_unreadable_files_and_links_out_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project.entry-points.pytest11\n")  # not TOML
    (tmp_path / "setup.py").write_text("setup(entry_points=ENTRY)\n")  # not literal: nothing read
    outside = tmp_path.parent / "outside.cfg"
    outside.write_text("[options.entry_points]\npytest11 =\n    evil = evil.mod\n")
    (tmp_path / "setup.cfg").symlink_to(outside)
    assert entry_point_modules([tmp_path]) == {}
