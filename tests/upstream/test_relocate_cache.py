"""The relocation search's index of definitions (`upstream.relocate`): for a release tree kept in the
cache (never changed) it is read from the tree once and kept; a folder of the user's is read each run.
The oracle is the search on a fresh index."""

from __future__ import annotations

from pathlib import Path

import pytest

from apidrift.auditor.upstream import relocate
from apidrift.auditor.upstream.api_index import ApiIndex
from apidrift.auditor.upstream.resolve import Resolver

TREE = {
    "up/__init__.py": "from up.b import moved\n",
    "up/a.py": "def stays():\n    pass\n",
    "up/b.py": "def moved(x):\n    return x\n\n\nclass Kept:\n    pass\n",
}


def tree(root: Path) -> Path:
    for relative, text in TREE.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def found(root: Path, cache: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    finder = relocate.Relocator(Resolver(ApiIndex(root, ["up"], cache_dir=cache)))
    return finder.find("moved", "function", "up.a"), finder.find("Kept", "class", "up.a")


def test_a_release_trees_definitions_are_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache" / "api"
    release = tree(tmp_path / "cache" / "sources" / "up-1.0")  # where fetched releases are kept
    first = found(release, cache)
    assert first[0] and first[1]
    assert list(cache.rglob("*.definitions.json"))
    reads: list[Path] = []
    real = relocate.read_bounded

    def counted(path: Path, *args, **kwargs):  # type: ignore[no-untyped-def]
        reads.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(relocate, "read_bounded", counted)
    assert found(release, cache) == first
    assert reads == []  # the index came from the cache
    # a torn entry is read again from the tree
    for entry in cache.rglob("*.definitions.json"):
        entry.write_text('{"moved": ')
    assert found(release, cache) == first
    assert reads


def test_a_users_folder_is_read_each_run(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "api"
    folder = tree(tmp_path / "work")
    first = found(folder, cache)
    assert not list(cache.rglob("*.definitions.json"))
    (folder / "up/b.py").write_text("def other():\n    pass\n")
    (folder / "up/c.py").write_text("def moved(x):\n    return x\n")
    assert found(folder, cache) != first
