"""Atomic writes: the new file whole or the old one, never a torn one nor a leftover temporary file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from apidrift.auditor.files import atomic_write_bytes, atomic_write_text


def test_atomic_write_creates_folders_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.json"
    atomic_write_text(target, "é")
    assert target.read_bytes() == "é".encode()
    atomic_write_bytes(target, b"second")
    assert target.read_bytes() == b"second"
    assert [p.name for p in target.parent.iterdir()] == ["out.json"]


def test_atomic_write_sets_the_mode_and_names_the_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "code.py"
    target.write_text("old", encoding="utf-8")
    seen: list[str] = []
    real_replace = os.replace

    def replace(source: str, destination: Path) -> None:
        seen.append(Path(source).name)
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", replace)
    atomic_write_bytes(target, b"new", mode=0o640, suffix=".apidrift-fix")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert len(seen) == 1 and seen[0].startswith(".code.py.") and seen[0].endswith(".apidrift-fix")


def test_a_failed_atomic_write_keeps_the_old_file_and_removes_the_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "keep.txt"
    target.write_bytes(b"old")

    def refuse(source: str, destination: Path) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError, match="Permission denied"):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
