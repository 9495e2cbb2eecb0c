"""`apidrift upgrade`: every declared dependency the project imports, from the version it is on to its
latest release, in one report; and the requirement sources it reads (auditor/sources/declared.py).

The end-to-end tests serve synthetic releases from a package index on 127.0.0.1 (tests/localindex.py);
CPython is the oracle of which release breaks the project's calls (`inspect.signature(...).bind` on
each release's own source). The real project is in the network tier.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from casefiles import write_tree
from localindex import LocalIndex, wheel_bytes

from apidrift.auditor.cli.main import main
from apidrift.auditor.sources.declared import declared_requirements
from apidrift.auditor.upgrade import BREAKS, NOT_CHECKABLE, NOT_USED, SAFE, UpgradeRequest, run_upgrade

RELEASES = {
    "liba": {
        "1.0": "def old_api(x):\n    return x\n",
        "2.0": "def old_api(x):\n    return x\n\n\ndef new_api(x):\n    return x\n",
        "3.0": "def new_api(x):\n    return x\n",
    },
    "libb": {v: "def f(a, b=1):\n    return a\n" for v in ("1.0", "2.0", "3.0")},
    "libc": {v: "def unused():\n    return 0\n" for v in ("1.0", "2.0")},
    "libd": {
        "1.0": "def g(a, b):\n    return a\n",
        "1.5": "def g(a, b):\n    return a\n",
        "2.0": "def g(a):\n    return a\n",
    },
}

PROJECT = {
    "pyproject.toml": '[project]\nname = "app"\nversion = "0.1"\ndependencies = ["liba>=1.0"]\n',
    "requirements.txt": "liba==1.0\nlibb==1.0  # pinned\n",
    "setup.py": 'from setuptools import setup\n\nREQUIRES = ["libb>=1.0"]\nsetup(name="app", install_requires=REQUIRES)\n',
    "setup.cfg": "[options]\ninstall_requires =\n    libc>=1.0\n",
    "environment.yml": "name: app\ndependencies:\n  - python=3.11\n  - numpy\n  - pip:\n    - libd>=1.5\n",
    "app/__init__.py": "",
    "app/main.py": "import liba\nimport libb\n\nliba.old_api(1)\nlibb.f(1, b=2)\n",
}
NOTEBOOK_CELLS = ["%matplotlib inline\nimport libd", "libd.g(1, 2)"]


def binds(name: str, version: str, function: str, *args: Any, **kwargs: Any) -> bool:
    """CPython's verdict on a call of `function` in that release's own source."""
    namespace: dict[str, Any] = {}
    exec(compile(RELEASES[name][version], f"{name}-{version}", "exec"), namespace)  # noqa: S102 (the test's own releases)
    if function not in namespace:
        return False
    try:
        inspect.signature(namespace[function]).bind(*args, **kwargs)
    except TypeError:
        return False
    return True


@pytest.fixture
def index(tmp_path: Path) -> Iterator[LocalIndex]:
    with LocalIndex(tmp_path / "index") as served:
        for name, versions in RELEASES.items():
            for version, source in versions.items():
                data = wheel_bytes(name, version, {f"{name}/__init__.py": source}, [])
                served.add(name, f"{name}-{version}-py3-none-any.whl", data)
        yield served


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = write_tree(tmp_path / "project", PROJECT)
    book = nbformat.v4.new_notebook()
    book.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    book.cells = [nbformat.v4.new_code_cell(source) for source in NOTEBOOK_CELLS]
    nbformat.write(book, str(root / "analysis.ipynb"))
    return root


def test_the_oracle() -> None:
    assert binds("liba", "2.0", "old_api", 1) and not binds("liba", "3.0", "old_api", 1)
    assert all(binds("libb", v, "f", 1, b=2) for v in RELEASES["libb"])
    assert binds("libd", "1.5", "g", 1, 2) and not binds("libd", "2.0", "g", 1, 2)


def test_every_dependency_at_once(index: LocalIndex, project: Path, tmp_path: Path) -> None:
    started = time.perf_counter()
    result = run_upgrade(UpgradeRequest(project, cache_dir=tmp_path / "cache", index_url=index.url, jobs=2))
    seconds = time.perf_counter() - started
    found = {d.name: (d.status, d.start, d.latest, d.safe) for d in result.dependencies}
    assert found == {
        "liba": (BREAKS, "1.0", "3.0", "2.0"),  # pinned in requirements.txt; old_api is gone in 3.0
        "libb": (SAFE, "1.0", "3.0", "3.0"),
        "libc": (NOT_USED, None, None, None),  # declared in setup.cfg, imported nowhere
        "libd": (BREAKS, "1.5", "2.0", "1.5"),  # the lowest `>=1.5` allows; the notebook's call breaks in 2.0
    }
    by_name = {d.name: d for d in result.dependencies}
    assert by_name["liba"].start_from == "requirements.txt"
    assert by_name["libd"].start_from == "lowest allowed by >=1.5"
    assert [f.location.where for f in by_name["liba"].errors] == ["app/main.py:4:1"]
    assert [f.location.where for f in by_name["libd"].errors] == ["analysis.ipynb:cell 2:1:1"]
    assert sorted(result.files_read) == [
        "environment.yml",
        "pyproject.toml",
        "requirements.txt",
        "setup.cfg",
        "setup.py",
    ]
    # Each verdict is CPython's: the project's calls bind in the release said safe, not in the latest.
    assert binds("liba", "2.0", "old_api", 1) and not binds("liba", "3.0", "old_api", 1)
    assert binds("libd", "1.5", "g", 1, 2) and not binds("libd", "2.0", "g", 1, 2)
    assert seconds < 120


def test_cli_formats_and_exit_status(
    index: LocalIndex, project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--cache-dir", str(tmp_path / "cache"), "--index-url", index.url, "--quiet"]
    outputs = {fmt: tmp_path / f"upgrade.{fmt}" for fmt in ("json", "sarif", "markdown", "html", "github")}
    args = ["upgrade", str(project), *common, "--format", "text"]
    args += [a for fmt, path in outputs.items() for a in ("--format", f"{fmt}:{path}")]
    assert main(args) == 1
    text = capsys.readouterr().out
    assert "liba 1.0 -> 3.0: breaks (1 error); highest safe release 2.0" in text
    assert "libb 1.0 -> 3.0: safe to upgrade" in text
    assert "libc ?: not used (the project imports none of its modules)" in text
    data = json.loads(outputs["json"].read_text())
    assert data["upgrade"]["breaks"] == ["liba", "libd"] and data["upgrade"]["safe"] == ["libb"]
    assert {f["upstream"] for f in data["findings"] if f["severity"] == "error"} == {"liba", "libd"}
    sarif = json.loads(outputs["sarif"].read_text())
    assert len(sarif["runs"][0]["results"]) == len(data["findings"])
    assert "| liba | 1.0 | 3.0 | :x: breaks (1 error) | 2.0 |" in outputs["markdown"].read_text()
    assert "analysis.ipynb" in outputs["html"].read_text()
    assert (
        "::notice title=apidrift upgrade::libb 1.0 -> 3.0: safe to upgrade" in outputs["github"].read_text()
    )
    # Only the safe one: exit 0, as `audit` exits clean.
    assert main(["upgrade", str(project), *common, "--only", "libb"]) == 0
    assert "libb 1.0 -> 3.0: safe to upgrade" in capsys.readouterr().out


def test_nothing_checkable_exits_3(
    index: LocalIndex, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_tree(tmp_path / "p", {"requirements.txt": "libc==1.0\n", "main.py": "import os\n"})
    common = ["--cache-dir", str(tmp_path / "cache"), "--index-url", index.url, "--quiet"]
    assert main(["upgrade", str(root), *common]) == 3
    assert "libc 1.0: not used" in capsys.readouterr().out


def test_a_release_that_cannot_be_had_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_tree(
        tmp_path / "p",
        {"requirements.txt": "nosuchpkg-xyz==1.0\n", "main.py": "import nosuchpkg_xyz\nnosuchpkg_xyz.f()\n"},
    )
    status = main(["upgrade", str(root), "--cache-dir", str(tmp_path / "cache"), "--offline", "--quiet"])
    assert status == 2
    assert "not checked, a release could not be had: nosuchpkg-xyz" in capsys.readouterr().err


def test_the_installed_version_when_nothing_pins_it(index: LocalIndex, tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "p", {"requirements.txt": "libd\n", "main.py": "import libd\nlibd.g(1, 2)\n"}
    )
    env = tmp_path / "env"
    write_tree(
        env,
        {
            "lib/python3.11/site-packages/libd-1.5.dist-info/METADATA": "Metadata-Version: 2.1\nName: libd\nVersion: 1.5\n"
        },
    )
    result = run_upgrade(UpgradeRequest(root, cache_dir=tmp_path / "cache", index_url=index.url, python=env))
    (dependency,) = result.dependencies
    assert (dependency.status, dependency.start, dependency.safe) == (BREAKS, "1.5", "1.5")
    assert dependency.start_from.startswith("installed (--python ")
    # Neither pinned, installed nor bounded: no version to start from, said so.
    bare = run_upgrade(UpgradeRequest(root, cache_dir=tmp_path / "cache", index_url=index.url))
    assert bare.dependencies[0].status == NOT_CHECKABLE
    assert "no version to start from" in (bare.dependencies[0].reason or "")


def test_readme_shows_upgrade() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert "## Upgrade every dependency at once" in readme and "apidrift upgrade ." in readme
    assert "`auditor/upgrade.py` runs `apidrift upgrade`" in readme


# ---- the requirement sources


def test_declared_sources(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\ndependencies = ["a>=1"]\n[project.optional-dependencies]\nx = ["b<2"]\n'
            '[tool.poetry.dependencies]\npython = "^3.10"\nc = "^1.2.3"\nd = {version = "~2.1"}\ne = "0.3"\n',
            "setup.cfg": "[options]\ninstall_requires =\n    f>=1  # comment\n[options.extras_require]\ndev =\n    g\n",
            "setup.py": 'from setuptools import setup\nsetup(install_requires=["h==1.0"], extras_require={"t": ["i>2"]})\n'
            "setup(install_requires=compute())\n",
            "environment.yaml": "dependencies:\n  - pip\n  - pip: [j==1, 'k>=2']\n",
            "requirements/dev.txt": "l==3 --hash=sha256:00\n-e ./local\n",
        },
    )
    found = declared_requirements(root)
    got = sorted((d.name, d.specifier, d.path) for d in found.requirements)
    assert got == [
        ("a", ">=1", "pyproject.toml"),
        ("b", "<2", "pyproject.toml"),
        ("c", "<2,>=1.2.3", "pyproject.toml"),
        ("d", "<2.2,>=2.1", "pyproject.toml"),
        ("e", "==0.3", "pyproject.toml"),
        ("f", ">=1", "setup.cfg"),
        ("g", "", "setup.cfg"),
        ("h", "==1.0", "setup.py"),
        ("i", ">2", "setup.py"),
        ("j", "==1", "environment.yaml"),
        ("k", ">=2", "environment.yaml"),
        ("l", "==3", "requirements/dev.txt"),
    ]
    assert "setup.py: `install_requires` is computed, not a literal; not read" in found.notes


def test_a_setup_py_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    root = write_tree(
        tmp_path / "p",
        {
            "setup.py": f"open({str(marker)!r}, 'w').close()\nfrom setuptools import setup\nsetup(install_requires=['a'])\n"
        },
    )
    assert [d.name for d in declared_requirements(root).requirements] == ["a"]
    assert not marker.exists()


@pytest.mark.network
def test_real_project_def_hacks(index_cache: Path, tmp_path: Path) -> None:
    """yliu1021/def_hacks (a 2016 hackathon app, commit bfdbb39df06a88d3b3248ad15e3653fb736d321f): its
    req.txt pins Flask 0.10.1 and Werkzeug 0.11.8 (three majors behind) and oauth2client 2.0.2 (two).
    Its req.txt and web.py are copied here as the commit has them, and the first 12 lines of its
    ImageRecognition.py (Python 2: `print api` does not parse, as in the whole file).

    Confirmed by running (Python 3.11, throwaway venvs): `from werkzeug import secure_filename` imports
    with Werkzeug 0.11.8 and 0.16.1 and raises ImportError with 1.0.0 and 3.1.9; web.py's Flask imports
    (`from flask import Flask, render_template, request, flash, redirect, make_response`) import with
    Flask 3.1.3.
    """
    root = write_tree(tmp_path / "def_hacks", DEF_HACKS)
    result = run_upgrade(
        UpgradeRequest(
            root,
            cache_dir=index_cache,
            requirements=(root / "req.txt",),
            only=("flask", "werkzeug", "oauth2client"),
        )
    )
    found = {d.name: (d.status, d.start, d.safe) for d in result.dependencies}
    assert found["werkzeug"][:3] == (BREAKS, "0.11.8", "0.16.1")
    assert found["flask"][:2] == (SAFE, "0.10.1")
    assert found["oauth2client"][0] == NOT_CHECKABLE  # imported only by the file that does not parse
    (error,) = next(d for d in result.dependencies if d.name == "werkzeug").errors
    assert (error.code, error.location.where) == ("AD002", "web.py:2:22")


DEF_HACKS = {  # the files as the commit has them (ImageRecognition.py: its first 12 lines)
    "req.txt": "Flask==0.10.1\ngoogle-api-python-client==1.5.0\nhttplib2==0.9.2\nitsdangerous==0.24\nJinja2==2.8\nMarkupSafe==0.23\noauth2client==2.0.2\nPillow==3.2.0\npyasn1==0.1.9\npyasn1-modules==0.0.8\nrsa==3.4.2\nsimplejson==3.8.2\nsix==1.10.0\nuritemplate==0.6\nWerkzeug==0.11.8\n",
    "web.py": "from flask import Flask, render_template, request, flash, redirect, make_response\nfrom werkzeug import secure_filename\nimport os\nimport ImageRecognition\n\nimport json\n\nUPLOAD_FOLDER = 'static/'\nALLOWED_EXTENSIONS = ['jpg', 'png', 'jpeg', 'gif']\n\napp = Flask(__name__)\napp.config['UPLOAD_FOLDER'] = UPLOAD_FOLDER\n\n    \n@app.route('/' , methods = ['GET','POST'])\ndef home():\n    if request.method == 'POST':\n        f = request.files['file']\n        filename = secure_filename(f.filename)\n        filepath = os.path.join(app.config['UPLOAD_FOLDER'], filename)\n        f.save(filepath)\n        \n        r = ImageRecognition.getResponse(filepath,\n            ImageRecognition.labelFeature,\n            ImageRecognition.textFeature,\n            ImageRecognition.faceFeature,\n            ImageRecognition.landmarkFeature,\n            ImageRecognition.logoFeature\n            )\n        response = make_response(json.dumps(r), 200)\n        response.headers['Content-Type'] = 'application/json'\n        return response\n    else:\n        return render_template('index.html')\n\nif __name__ == '__main__':\n   app.run(debug = True)",
    "ImageRecognition.py": 'import argparse\nimport base64\nimport httplib2\n\nfrom googleapiclient import discovery\nfrom oauth2client.client import GoogleCredentials\n\nimport WikiParser\n\nwith open("../priv/apiKey.txt") as f:\n    api = f.read()\n    print api\n',
}
