"""The linking's cache (`downstream.linking`): a warm run reuses what the last run resolved across the
downstream's modules only where every summary is unchanged, and an edit to a module that hands out an
upstream value is seen at once in the modules that use it. The oracle is a run on an empty cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from casefiles import write_tree

from apidrift import AuditRequest, audit
from apidrift.auditor.downstream import linking
from apidrift.auditor.downstream import walk as downstream

UPSTREAM = {
    "pkg/__init__.py": (
        "class Table:\n"
        "    def insert(self, row):\n"
        "        return row\n"
        "\n"
        "\n"
        "class Other:\n"
        "    def insert(self, row):\n"
        "        return row\n"
        "\n"
        "    def gone(self):\n"
        "        return None\n"
    ),
}
HELPERS_WORKING = "import pkg\n\n\ndef get():\n    return pkg.Other()\n"
HELPERS_BROKEN = "import pkg\n\n\ndef get():\n    return pkg.Table()\n"
MAIN = "from app.helpers import get\n\nget().insert(1)\nget().gone()\n"


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    up = write_tree(tmp_path / "up", UPSTREAM)
    down = write_tree(
        tmp_path / "down",
        {"app/__init__.py": "", "app/helpers.py": HELPERS_WORKING, "app/main.py": MAIN},
    )
    return up, down


def findings(up: Path, down: Path, cache: Path) -> list[tuple[str, int, str, str]]:
    result = audit(AuditRequest(str(down), f"pkg@{up}", None, cache_dir=cache, offline=True))
    return sorted((f.location.path, f.location.line, f.code.value, f.message) for f in result.findings)


class LinkerCount:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made = 0
        real = linking.Linker

        def made(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.made += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(linking, "Linker", made)


def test_an_edited_module_that_hands_out_an_upstream_value_is_relinked(
    tree: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    up, down = tree
    cache = tmp_path / "cache"
    assert findings(up, down, cache) == []  # pkg.Other has gone()

    linkers = LinkerCount(monkeypatch)
    assert findings(up, down, cache) == []
    assert linkers.made == 0, "an unchanged tree is linked from the cache"

    (down / "app/helpers.py").write_text(HELPERS_BROKEN)  # what get() hands out changed
    broken = findings(up, down, cache)
    assert [(path, line) for path, line, _, _ in broken] == [("app/main.py", 4)]
    assert "gone" in broken[0][3]
    assert linkers.made >= 1
    # the same as a run on an empty cache
    assert broken == findings(up, down, tmp_path / "empty")

    made = linkers.made
    assert findings(up, down, cache) == broken
    assert linkers.made == made, "unchanged again: from the cache"

    (down / "app/helpers.py").write_text(HELPERS_WORKING)  # back: the first state's cache serves
    assert findings(up, down, cache) == []
    assert linkers.made == made


def test_an_edited_user_of_an_unchanged_module_is_linked_alone(
    tree: tuple[Path, Path], tmp_path: Path
) -> None:
    up, down = tree
    cache = tmp_path / "cache"
    (down / "app/helpers.py").write_text(HELPERS_BROKEN)
    assert [line for _, line, _, _ in findings(up, down, cache)] == [4]
    (down / "app/main.py").write_text("# moved down\n" + MAIN)  # the summaries are the same
    moved = findings(up, down, cache)
    assert [line for _, line, _, _ in moved] == [5]
    assert moved == findings(up, down, tmp_path / "empty")
    state = [json.loads(p.read_text()) for p in (cache / "scan" / "link").glob("*.json")]
    # one entry per file with sites kept aside: the old main.py's is gone from the rewritten state
    assert any(len(s) == 1 and "reaching" not in s for s in state)


def summary(scans: list) -> list[tuple[str, tuple]]:
    return [(scan.path, scan.sites) for scan in scans]


def test_sites_come_back_in_the_scanners_order_and_a_bad_entry_is_scanned_again(tmp_path: Path) -> None:
    down = write_tree(
        tmp_path / "down",
        {
            "app/__init__.py": "",
            "app/helpers.py": HELPERS_BROKEN,
            "app/main.py": "import pkg\nfrom app.helpers import get\n\npkg.Table()\nget().insert(1)\npkg.Other()\nget().gone()\n",
        },
    )
    names = frozenset({"pkg"})
    oracle, _ = downstream.scan_downstream(down, names, tmp_path / "oracle")
    cache = tmp_path / "cache"
    first, _ = downstream.scan_downstream(down, names, cache)
    assert summary(first) == summary(oracle)
    main = next(scan for scan in oracle if scan.path == "app/main.py")
    assert [site.code for site in main.sites if site.kind.value != "import"][:4] == [
        "pkg.Table()",
        "get().insert(1)",
        "pkg.Other()",
        "get().gone()",
    ]
    assert all(scan.aside is None and scan.exports is None for scan in first)
    # every entry's aside and summary lines damaged, and the linking's own cache gone
    for entry in cache.glob("??/*.jsonl"):
        head = entry.read_text().split("\n", 1)[0]
        entry.write_text(head + "\n{not json\n[[0, {}]]")
    for state in (cache / "link").glob("*.json"):
        state.unlink()
    again, _ = downstream.scan_downstream(down, names, cache)
    assert summary(again) == summary(oracle)


SUMMARY_OF = """
import json, sys
from apidrift.auditor.downstream.linking import exports_to_data
from apidrift.auditor.downstream.walk import _scan_text
scan = _scan_text("app/m.py", sys.stdin.read(), frozenset({"pkg"}), (), (frozenset({"app"}), "app.m", "app"))
print(json.dumps(exports_to_data(scan.exports)))
"""


def test_a_summary_is_written_the_same_by_every_process() -> None:
    """The linking's cache is keyed by the summaries' text: a set in it must not come out in the
    order of one process's string hashes (a file edited without changing its summary would relink
    every file)."""
    source = "import pkg\n\n\nclass Sub(pkg.Table):\n" + "".join(f"    a{i} = {i}\n" for i in range(12))
    written = {
        subprocess.run(
            [sys.executable, "-c", SUMMARY_OF],
            input=source,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in (1, 2, 3, 4)
    }
    assert len(written) == 1
    assert '"a11"' in written.pop()


def test_the_search_for_files_naming_a_reaching_module_is_kept_for_an_unchanged_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    up = write_tree(tmp_path / "up", UPSTREAM)
    unrelated = "import os\n\nprint(os.sep)\n"
    down = write_tree(
        tmp_path / "down",
        {
            "app/__init__.py": "",
            "app/helpers.py": HELPERS_BROKEN,
            "app/main.py": MAIN,
            "app/other.py": unrelated,
        },
    )
    cache = tmp_path / "cache"
    reads: list[str] = []
    real = downstream._read_text

    def counted(path: Path, relative: str):  # type: ignore[no-untyped-def]
        reads.append(relative)
        return real(path, relative)

    monkeypatch.setattr(downstream, "_read_text", counted)
    first = findings(up, down, cache)
    assert [f[0] for f in first] == ["app/main.py"]  # pkg.Table has no gone(): reached through app.helpers
    assert reads.count("app/other.py") >= 2  # read, then searched for the names each round finds
    reads.clear()
    assert findings(up, down, cache) == first
    assert reads.count("app/other.py") == 1  # read once: each round's search came from the cache
    assert reads.count("app/main.py") == 2  # a file the search named is read for its scan
    # an unchanged module edited to use the reaching value: found at once, as on an empty cache
    (down / "app/other.py").write_text("from app.helpers import get\n\nget().gone()\n")
    edited = findings(up, down, cache)
    assert edited == findings(up, down, tmp_path / "empty")
    assert [f[0] for f in edited] == ["app/main.py", "app/other.py"]


BASE = {"pkg/__init__.py": "class Base:\n    def __init__(self, name=None):\n        self.name = name\n"}
MODELS_INHERIT = "import pkg\n\n\nclass Client(pkg.Base):\n    pass\n"
MODELS_OWN = "import pkg\n\n\nclass Client(pkg.Base):\n    def __init__(self, **options):\n        pass\n"
USER = "from app.models import Client\n\nClient(name=1)\nClient(removed_kw=1)\n"


class ParseCount:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parsed: list[str] = []
        real = downstream._scan_text

        def parsed(relative, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.parsed.append(relative)
            return real(relative, *args, **kwargs)

        monkeypatch.setattr(downstream, "_scan_text", parsed)


def test_an_edit_of_another_modules_subclass_constructor_is_relinked_and_rescanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Client(...)` in main.py runs `pkg.Base.__init__` while Client defines no constructor of its own
    (main.py is scanned again keeping those calls); once it does, the call runs Client's own. A warm
    run of an unchanged tree parses no file and builds no Linker; each state is the same as a run on an
    empty cache."""
    up = write_tree(tmp_path / "up", BASE)
    down = write_tree(
        tmp_path / "down", {"app/__init__.py": "", "app/models.py": MODELS_INHERIT, "app/main.py": USER}
    )
    cache = tmp_path / "cache"
    inherit = findings(up, down, cache)
    assert [(path, line, code) for path, line, code, _ in inherit] == [("app/main.py", 4, "AD101")]
    assert inherit == findings(up, down, tmp_path / "empty1")

    linkers = LinkerCount(monkeypatch)
    parses = ParseCount(monkeypatch)
    assert findings(up, down, cache) == inherit
    assert (linkers.made, parses.parsed) == (0, []), "an unchanged tree: nothing parsed, nothing linked"

    (down / "app/models.py").write_text(MODELS_OWN)  # Client's call now runs its own __init__
    assert findings(up, down, cache) == []
    assert parses.parsed == ["app/models.py"], "main.py's scan without the calls is cached"
    assert findings(up, down, tmp_path / "empty2") == []

    (down / "app/models.py").write_text(MODELS_INHERIT)  # back: every scan and link cached
    parses.parsed.clear()
    made = linkers.made
    assert findings(up, down, cache) == inherit
    assert (linkers.made, parses.parsed) == (made, [])
