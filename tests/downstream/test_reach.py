"""What the downstream does with the instances of one of its classes (`downstream/reach.py`), and what an
upstream method does with `self` (`analyses/calls.py:_self_uses`): the two halves of an override's reach.

Each downstream below is run under CPython against a tiny upstream where its verdict depends on what
the code does: the names it uses are those CPython looks up, and every shape it gives up on is one
where an instance reaches code the analysis does not read."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from apidrift.auditor.downstream.reach import ClassReach, Downstream
from apidrift.auditor.upstream.analyses.calls import _self_uses

UPSTREAM = """
KEPT = []


class Base:
    def __init__(self):
        self.seen = []

    def m(self, x):
        self.seen.append(x)

    def read(self, x):
        return self.m(x)

    def other(self):
        return len(self.seen)

    def keep(self):
        KEPT.append(self)


def process(obj):
    obj.read(1)
    return obj.seen
"""

HEAD = """
import pkg


class Mine(pkg.Base):
    def m(self, x):
        self.seen.append(("mine", x))
"""


def _run(tmp_path: Path, body: str) -> tuple[ClassReach | str, list[object]]:
    """The reach of `Mine` in a downstream `HEAD + body`, and what `main()` makes `Mine.m` see when run."""
    (tmp_path / "up" / "pkg").mkdir(parents=True)
    (tmp_path / "up" / "pkg" / "__init__.py").write_text(UPSTREAM)
    down = tmp_path / "down"
    down.mkdir()
    (down / "app.py").write_text(HEAD + textwrap.dedent(body))
    script = (
        "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
        "import app, pkg\n"
        "seen = []\n"
        "orig = app.Mine.m\n"
        "def spy(self, x): seen.append(x); return orig(self, x)\n"
        "app.Mine.m = spy\n"
        "app.main()\n"
        "[p.read(2) for p in pkg.KEPT]\n"
        "print(repr(seen))\n"
    )
    run = subprocess.run(
        [sys.executable, "-I", "-c", script, str(tmp_path / "up"), str(down)],
        capture_output=True,
        text=True,
        check=True,
    )
    return Downstream(down).class_reach("app.py", 6, "m"), ast.literal_eval(run.stdout.strip())


def test_an_instance_used_only_through_its_methods_is_followed(tmp_path: Path) -> None:
    reach, seen = _run(tmp_path, "def main():\n    d = Mine()\n    d.other()\n    return d.seen\n")
    assert seen == []  # the upstream never calls `m`
    assert isinstance(reach, ClassReach)
    assert reach.uses == {"other", "seen"} and reach.read == {"seen"} and reach.defined == {"m"}


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ("def main():\n    return pkg.process(Mine())\n", "an instance is handed on"),
        ("def main():\n    d = Mine()\n    return pkg.process(d)\n", "an instance is handed on"),
        ("def main():\n    d = Mine()\n    f = d.read\n    f(3)\n", None),  # `read` itself is used
        ("def main():\n    holder = [Mine()]\n    holder[0].read(3)\n", "an instance is handed on"),
        ("def main():\n    d = Mine()\n    getattr(d, 'read')(3)\n", "an instance is handed on"),
        ("def main():\n    name = 'read'\n    d = Mine()\n    d.keep()\n    getattr(pkg, 'x', None)\n", None),
        ("def main():\n    cls = getattr(__import__('app'), 'Mi' + 'ne')\n    cls().read(3)\n", "run time"),
        ("def main():\n    k = Mine\n    k().read(3)\n", "the class is handed on"),
    ],
)
def test_an_instance_or_the_class_reaching_code_not_read_is_not_followed(
    tmp_path: Path, body: str, why: str | None
) -> None:
    reach, seen = _run(tmp_path, body)
    assert seen  # CPython calls the override from the upstream's `read`
    if why is None:
        # followed, and the names used lead to the upstream's `read` (or to `keep`, which hands `self` on)
        assert isinstance(reach, ClassReach) and reach.uses & {"read", "keep"}
    else:
        assert isinstance(reach, str) and why in reach


def test_a_class_the_downstream_never_builds_is_not_followed(tmp_path: Path) -> None:
    reach, seen = _run(tmp_path, "def main():\n    return None\n")
    assert seen == [] and isinstance(reach, str) and "never builds" in reach


def test_upstream_self_uses_name_what_a_method_runs_of_its_instance() -> None:
    tree = ast.parse(
        textwrap.dedent(
            """
            class Base(Parent):
                def run(self, x):
                    return self.read(x) + super().run(x)

                def store(self):
                    self.value = 1

                def hand(self):
                    register(self)

                def kind(self):
                    return self.__class__()

                @functools.lru_cache
                def cached(self):
                    return 1

                @staticmethod
                def tool(x):
                    return x

                @property
                def size(self):
                    return len(self.items)

                def lam(self):
                    return lambda: self.read(1)
            """
        )
    )
    uses = _self_uses(tree.body[0])  # type: ignore[arg-type]
    assert uses == {
        "run": ["read", "run"],
        "store": ["value"],
        "hand": None,
        "kind": None,
        "cached": None,
        "tool": [],
        "size": ["items"],
        "lam": ["read"],
    }
