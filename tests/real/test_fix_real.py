"""`apidrift fix` on real releases from the index, each fix proven by running the fixed code.

Every fix kind the upstream's evidence allows is applied (`fix --write`) to a small downstream, then
the fixed code runs in a throwaway virtualenv (under the system temporary folder) holding the real
new release, installed by pip from the configured index, with every DeprecationWarning an error: a
fix onto a name that still warns is no fix. The re-audit of the fixed code has none of the fixed
findings and no new one. The click 8.2.0 case (a parameter added where a removed one was) gets no
rename in any output.
"""

from __future__ import annotations

import json
import subprocess
import venv
from collections import Counter
from pathlib import Path

import pytest

from apidrift import AuditRequest, audit
from apidrift.auditor.cli.main import main
from apidrift.auditor.core.results import Applicability, AuditResult, FixKind

pytestmark = pytest.mark.network

_VENVS: dict[str, Path] = {}


def release_python(spec: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interpreter of a throwaway virtualenv holding the real release `spec` (pip, default index)."""
    if spec not in _VENVS:
        folder = tmp_path_factory.mktemp("venv-" + spec.replace("=", "-"))
        venv.create(folder, with_pip=True)
        python = folder / "bin" / "python"
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *spec.split()],
            check=True,
            capture_output=True,
            timeout=600,
        )
        _VENVS[spec] = python
    return _VENVS[spec]


def run_under(
    python: Path, folder: Path, code: str, *, strict: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run `code` in `folder` with the venv's Python; `strict`: every DeprecationWarning is an error."""
    return subprocess.run(
        [str(python), *(["-W", "error::DeprecationWarning"] if strict else []), "-c", code],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def downstream(root: Path, source: str) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(source)
    return root


def keys(result: AuditResult) -> Counter[tuple[str, str]]:
    return Counter((f.code, f.message) for f in result.findings)


def fix_and_reaudit(
    folder: Path, against: str, old: str, cache: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[str, AuditResult, AuditResult]:
    before = audit(AuditRequest(str(folder), against, old, cache_dir=cache))
    main(
        [
            "fix",
            str(folder),
            "--against",
            against,
            "--from",
            old,
            "--cache-dir",
            str(cache),
            "--no-config",
            "--write",
        ]
    )
    out = capsys.readouterr().out
    after = audit(AuditRequest(str(folder), against, old, cache_dir=cache))
    return out, before, after


# ---- a guess is never a fix: click 8.1.8 -> 8.2.0


def test_click_added_parameter_is_no_rename_in_any_output(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    source = "from click.testing import CliRunner\n\nrunner = CliRunner(mix_stderr=False)\n"
    folder = downstream(tmp_path / "down", source)
    # CPython with click 8.2.0: TypeError: CliRunner.__init__() got an unexpected keyword argument 'mix_stderr'
    python = release_python("click==8.2.0", tmp_path_factory)
    ran = run_under(python, folder, "import app")
    assert "unexpected keyword argument 'mix_stderr'" in ran.stderr
    common = [
        "--against",
        "click==8.2.0",
        "--from",
        "click==8.1.8",
        "--cache-dir",
        str(index_cache),
        "--no-config",
    ]
    outputs = {}
    for fmt in ("text", "json", "sarif", "markdown", "github"):
        main(["audit", str(folder), *common, "--format", fmt])
        outputs[fmt] = capsys.readouterr().out
    main(["fix", str(folder), *common])
    outputs["fix"] = capsys.readouterr().out
    main(["fix", str(folder), *common, "--unsafe-fixes"])
    outputs["fix --unsafe-fixes"] = capsys.readouterr().out
    for name, text in outputs.items():
        assert "mix_stderr" in text, name
        assert "catch_exceptions=" not in text and "renamed to" not in text, name
    for name in ("text", "json", "sarif", "markdown", "github"):
        assert "they may differ in meaning" in outputs[name], name
    finding = json.loads(outputs["json"])["findings"][0]
    assert finding["fix"]["kind"] == "remove-keyword" and finding["fix"]["applicability"] == "unsafe"
    assert "rename" not in outputs["fix"] and "drop `mix_stderr=`" in outputs["fix"]
    assert "+runner = CliRunner()" in outputs["fix --unsafe-fixes"]  # the removal, labelled unsafe
    assert "UNSAFE: changes behaviour" in outputs["fix --unsafe-fixes"]


# ---- a name a module `__getattr__` serves by handing back another module's object


def test_click_8_2_deprecated_import_moves_to_the_object_it_serves(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # click 8.2.0 `click/parser.py:521`: `if name == "split_arg_string": from .shell_completion import
    # split_arg_string; warnings.warn("Importing 'parser.split_arg_string' is deprecated, ...")`
    source = "from click.parser import split_arg_string\n\nwords = split_arg_string('a \"b c\"')\n"
    folder = downstream(tmp_path / "down", source)
    python = release_python("click==8.2.0", tmp_path_factory)
    assert "DeprecationWarning" in run_under(python, folder, "import app").stderr  # the warning, before
    out, before, after = fix_and_reaudit(folder, "click==8.2.0", "click==8.1.8", index_cache, capsys)
    assert (folder / "app.py").read_text().startswith("from click.shell_completion import split_arg_string\n")
    assert "hands back `click.shell_completion.split_arg_string` itself" in out
    assert (
        "3:9 AD203 resolved: the fixes in this file resolve it (checked again)" in out
    )  # the use goes with it
    ran = run_under(python, folder, "import app; print(app.words)")
    assert ran.returncode == 0, ran.stderr  # no warning left: DeprecationWarning is an error here
    assert ran.stdout.strip() == "['a', 'b c']"
    assert [f.code for f in before.findings] == ["AD203", "AD203"] and after.findings == []


# ---- a rename the old version proves


def test_matplotlib_renamed_parameter_is_renamed_on_the_old_versions_evidence(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # matplotlib 3.7.3: `@_api.rename_parameter("3.6", "transOffset", "offset_transform") def
    # set_offset_transform(self, offset_transform)`; 3.8.0 dropped the decorator: `transOffset=` raises
    # "TypeError: Collection.set_offset_transform() got an unexpected keyword argument 'transOffset'"
    source = (
        "from matplotlib.collections import Collection\n"
        "from matplotlib.transforms import IdentityTransform\n\n"
        "c = Collection()\n"
        "c.set_offset_transform(transOffset=IdentityTransform())\n"
    )
    folder = downstream(tmp_path / "down", source)
    python = release_python("matplotlib==3.8.0", tmp_path_factory)
    assert (
        "unexpected keyword argument 'transOffset'"
        in run_under(python, folder, "import app", strict=False).stderr
    )
    out, before, after = fix_and_reaudit(
        folder, "matplotlib==3.8.0", "matplotlib==3.7.3", index_cache, capsys
    )
    assert "c.set_offset_transform(offset_transform=IdentityTransform())\n" in (folder / "app.py").read_text()
    assert (
        "evidence: matplotlib==3.7.3 accepts both spellings: its decorator passes `transOffset=` on as" in out
    )
    # matplotlib's own import warns under the pyparsing pip picks: not the fixed code's warning
    ran = run_under(python, folder, "import app; print(app.c.get_offset_transform())", strict=False)
    assert ran.returncode == 0, ran.stderr
    assert [f for f in after.findings if f.severity.value == "error"] == []
    fixed = Counter((f.code, f.message) for f in before.findings if f.code in ("AD101", "AD102"))
    assert keys(after) == keys(before) - fixed


# ---- replacements the upstream names, run under the new release


JINJA = (
    "from jinja2 import contextfunction, environmentfilter\n"
    "import jinja2\n\n\n"
    "@contextfunction\n"
    "def hello(ctx, name):\n"
    "    return 'hello ' + name\n\n\n"
    "@environmentfilter\n"
    "def shout(env, value):\n"
    "    return value.upper()\n\n\n"
    "@jinja2.evalcontextfilter\n"
    "def same(ctx, value):\n"
    "    return value\n"
)
RENDER = (
    "import app, jinja2\n"
    "env = jinja2.Environment()\n"
    "env.globals['hello'] = app.hello\n"
    "env.filters.update(shout=app.shout, same=app.same)\n"
    'print(env.from_string(\'{{ hello("x") }} {{ "y"|shout }} {{ "z"|same }}\').render())\n'
)


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [("2.11.3", "3.0.0", "AD203"), ("3.0.3", "3.1.0", "AD002")],
    ids=["deprecated-in-3.0", "removed-in-3.1"],
)
def test_jinja2_renamed_decorators_are_fixed_and_run(
    old: str,
    new: str,
    kind: str,
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = downstream(tmp_path / "down", JINJA)
    out, before, after = fix_and_reaudit(folder, f"jinja2=={new}", f"jinja2=={old}", index_cache, capsys)
    fixed = [f for f in before.findings if f.fix is not None and f.fix.kind is FixKind.REPLACE_NAME]
    assert sorted((f.location.line, f.code) for f in fixed) == sorted(
        [(1, kind), (1, kind), (15, "AD003" if kind == "AD002" else "AD203")]
    )
    assert all("names `pass_" in (f.fix.evidence or "") for f in fixed)  # type: ignore[union-attr]
    text = (folder / "app.py").read_text()
    assert text.startswith(
        "from jinja2 import pass_context as contextfunction, pass_environment as environmentfilter\n"
    )
    assert "@jinja2.pass_eval_context\n" in text
    ran = run_under(release_python(f"Jinja2=={new}", tmp_path_factory), folder, RENDER)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "hello x Y z"
    gone = Counter((f.code, f.message) for f in fixed)
    assert keys(after) == keys(before) - gone, "none of the fixed findings and no new one"
    assert "evidence:" in out


def test_jinja2_2_to_3_1_rests_on_the_last_release_that_named_the_replacements(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # 2.11.3 did not deprecate contextfunction & co., 3.1.0 removed them; 3.0.3 (the last release before
    # 3.1.0) warns that each "is renamed to 'pass_...'": the fixes rest on its words, and say so
    folder = downstream(tmp_path / "down", JINJA)
    out, before, after = fix_and_reaudit(folder, "jinja2==3.1.0", "jinja2==2.11.3", index_cache, capsys)
    assert "note: 3 fixes rest on Jinja2==3.0.3, the last release before Jinja2==3.1.0" in out
    assert out.count("evidence: Jinja2==3.0.3 names `pass_") == 3
    text = (folder / "app.py").read_text()
    assert text.startswith(
        "from jinja2 import pass_context as contextfunction, pass_environment as environmentfilter\n"
    )
    ran = run_under(release_python("Jinja2==3.1.0", tmp_path_factory), folder, RENDER)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "hello x Y z"
    assert [f for f in after.findings if f.severity.value == "error"] == []
    assert len([f for f in before.findings if f.severity.value == "error"]) == 3


def test_jinja2_markup_reexported_from_markupsafe_is_imported_from_there(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # Jinja2 2.11.3 `from markupsafe import Markup` in jinja2/__init__.py; 3.1.0 dropped it
    folder = downstream(tmp_path / "down", "from jinja2 import Markup, Template\n\nsafe = Markup('<b>')\n")
    out, before, after = fix_and_reaudit(folder, "jinja2==3.1.0", "jinja2==2.11.3", index_cache, capsys)
    assert (
        (folder / "app.py")
        .read_text()
        .startswith("from jinja2 import Template\nfrom markupsafe import Markup\n")
    )
    assert "was `markupsafe.Markup`, re-exported: the same object" in out
    # the downstream declares no dependency: the distribution the fixed code now imports is named
    assert (
        "note: the fixed code imports `markupsafe`, which the downstream does not declare: add `MarkupSafe` "
        "(the old upstream required it) to its dependencies"
    ) in out
    declared = downstream(tmp_path / "declared", "from jinja2 import Markup\n")
    (declared / "pyproject.toml").write_text(
        '[project]\nname = "d"\nversion = "1"\ndependencies = ["markupsafe"]\n'
    )
    main(
        [
            "fix",
            str(declared),
            "--against",
            "jinja2==3.1.0",
            "--from",
            "jinja2==2.11.3",
            "--cache-dir",
            str(index_cache),
        ]
    )
    out = capsys.readouterr().out
    assert "+from markupsafe import Markup" in out and "note:" not in out
    ran = run_under(
        release_python("Jinja2==3.1.0", tmp_path_factory),
        folder,
        "import app; print(type(app.safe).__module__)",
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "markupsafe"
    assert not [f for f in after.findings if f.severity.value == "error"]
    assert keys(after) == keys(before) - Counter(
        (f.code, f.message) for f in before.findings if f.code == "AD002"
    )


def test_numpy_2_expired_names_are_fixed_and_run(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    source = (
        "import numpy as np\n\nx = np.float_(1.5)\ny = np.NaN\nz = np.Inf\nw = np.NINF\nv = np.round_(1.46, 1)\n"
        "p = np.product([2, 3], axis=0)\nq = np.cumproduct([2, 3])\nr = np.alltrue([True, False])\n"
        "s = np.sometrue([True, False])\n"
    )
    folder = downstream(tmp_path / "down", source)
    out, before, after = fix_and_reaudit(folder, "numpy==2.0.0", "numpy==1.26.4", index_cache, capsys)
    assert (folder / "app.py").read_text() == (
        "import numpy as np\n\nx = np.float64(1.5)\ny = np.nan\nz = np.inf\nw = np.NINF\nv = np.round(1.46, 1)\n"
        "p = np.prod([2, 3], axis=0)\nq = np.cumprod([2, 3])\nr = np.all([True, False])\n"
        "s = np.any([True, False])\n"
    )  # `np.NINF`: "Use `-np.inf` instead" names an expression, not a name: no fix
    assert "names `np.float64` as the replacement" in out
    # `round = around` in numpy 2.0's stub: one function under two names, so the call binds
    assert "`round` is `around` (`round = around` in `numpy._core.fromnumeric`" in out
    # numpy 2.0 says nothing of `product`; 1.26.4's own source does: a def that only returns
    # `prod(*args, **kwargs)`, both wrapped by `array_function_dispatch`
    assert (
        "numpy==1.26.4's `product` (numpy.core.fromnumeric, fromnumeric.py:3833) only returns "
        "`prod(*args, **kwargs)` (both wrapped by `array_function_dispatch`)" in out
    )
    # what cannot be fixed mechanically is a manual step quoting the upstream
    assert (
        "replace `NINF` as numpy==2.0.0 says: \u201c`np.NINF` was removed in the NumPy 2.0 release. Use `-np.inf` instead.\u201d"
        in out
    )
    ran = run_under(
        release_python("numpy==2.0.0", tmp_path_factory),
        folder,
        "src = open('app.py').read().replace('w = np.NINF', '')\n"
        "ns = {}\nexec(compile(src, 'app.py', 'exec'), ns)\n"  # the fixed lines, without the one left
        "print(type(ns['x']).__name__, ns['y'] != ns['y'], ns['z'], ns['v'], ns['p'], ns['q'].tolist(), ns['r'], ns['s'])",
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == ["float64", "True", "inf", "1.5", "6", "[2,", "6]", "False", "True"]
    fixed = Counter(
        (f.code, f.message)
        for f in before.findings
        if f.fix is not None and f.fix.kind is FixKind.REPLACE_NAME
    )
    assert sum(fixed.values()) == 8
    assert keys(after) == keys(before) - fixed


# ---- a removed parameter passed its old default: networkx 2.8.8 -> 3.0 `union(..., name=None)`

NX_UNION = """import networkx as nx

G = nx.path_graph(3)
H = nx.path_graph(2)
a = nx.union(G, H, ("G-", "H-"), None)
b = nx.union(G, H, rename=("G-", "H-"), name=None)
c = nx.union(G, H, rename=("G-", "H-"), name="joined")
print(sorted(a.edges()), sorted(b.edges()), a.graph, b.graph)
"""


def test_networkx_3_removed_parameter_passed_its_old_default_is_dropped_safely(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """networkx 3.0 removed `union(name=)`; 2.8.8's undecorated `union` has `name=None`, so a call
    passing `None` ran as one without it: dropping it is safe (by keyword, AD101, and by position,
    AD103). `name="joined"` is another value: its drop stays unsafe, not applied. The original runs
    under 2.8.8 and the fixed file under 3.0, printing the same graphs."""
    folder = downstream(tmp_path / "down", NX_UNION)
    out, before, after = fix_and_reaudit(folder, "networkx==3.0", "networkx==2.8.8", index_cache, capsys)
    assert (folder / "app.py").read_text() == NX_UNION.replace(", None)\nb", ")\nb").replace(
        ", name=None)", ")"
    )
    safe = [f for f in before.findings if f.fix is not None and f.fix.applicability is Applicability.SAFE]
    assert sorted(f.code for f in safe) == ["AD101", "AD103"]
    assert all("networkx==2.8.8's default for `name`" in (f.fix.evidence or "") for f in safe)  # type: ignore[union-attr]
    assert "drop `name=`: its value is no longer passed anywhere" in out  # the "joined" one: unsafe, listed
    # the original under the old release and the fixed code under the new print the same (the
    # unsafe line removed from both: the new release rejects it, and no fix for it is claimed)
    original = NX_UNION.replace('c = nx.union(G, H, rename=("G-", "H-"), name="joined")\n', "")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "app.py").write_text(original)
    script = "src = open('app.py').read().replace('c = nx.union(G, H, rename=(\"G-\", \"H-\"), name=\"joined\")\\n', '')\nexec(compile(src, 'app.py', 'exec'), {})"
    was = run_under(
        release_python("networkx==2.8.8", tmp_path_factory), tmp_path / "old", script, strict=False
    )
    now = run_under(release_python("networkx==3.0", tmp_path_factory), folder, script)
    assert was.returncode == 0, was.stderr
    assert now.returncode == 0, now.stderr
    assert now.stdout == was.stdout and "('G-0', 'G-1')" in now.stdout
    gone = Counter((f.code, f.message) for f in safe)
    assert keys(after) == keys(before) - gone, "none of the fixed findings and no new one"


PANDAS_CSV = (
    "import pandas as pd\n\n"
    "df = pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']})\n"
    "print(repr(df.to_csv(index=False, line_terminator='|')))\n"
)


def test_pandas_2_deprecate_kwarg_rename_is_fixed_and_runs(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """pandas 1.5.3's `NDFrame.to_csv` (with `@overload`s, its implementation decorated
    `@deprecate_kwarg(old_arg_name="line_terminator", new_arg_name="lineterminator")`) took both
    spellings; 2.0.0 removed the old one. The rename rests on the wrapper's code (the value popped and
    stored unchanged under the new name when no `mapping` is given; `lineterminator` defaults to None, so
    an explicit None is the same either way). The original under 1.5.3 and the fixed file under 2.0.0
    print the same text; the re-audit has none of the fixed findings and no new one."""
    folder = downstream(tmp_path / "down", PANDAS_CSV)
    new = release_python("pandas==2.0.0 numpy<2", tmp_path_factory)
    assert (
        "unexpected keyword argument 'line_terminator'"
        in run_under(new, folder, "import app", strict=False).stderr
    )
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "app.py").write_text(PANDAS_CSV)
    was = run_under(
        release_python("pandas==1.5.3 numpy<2", tmp_path_factory),
        tmp_path / "old",
        "import app",
        strict=False,
    )
    assert was.returncode == 0, was.stderr
    out, before, after = fix_and_reaudit(folder, "pandas==2.0.0", "pandas==1.5.3", index_cache, capsys)
    assert "df.to_csv(index=False, lineterminator='|')" in (folder / "app.py").read_text()
    assert "its decorator passes `line_terminator=` on as `lineterminator=`" in out
    now = run_under(new, folder, "import app", strict=False)
    assert now.returncode == 0, now.stderr
    assert now.stdout == was.stdout == "'a,b|1,x|2,y|'\n"
    fixed = [f for f in before.findings if f.code == "AD101" and f.fix is not None]
    assert [f.fix.applicability for f in fixed] == [Applicability.SAFE]  # type: ignore[union-attr]
    assert keys(after) == keys(before) - keys_of(fixed), "none of the fixed findings and no new one"


def keys_of(findings: list) -> Counter[tuple[str, str]]:  # type: ignore[type-arg]
    return Counter((f.code, f.message) for f in findings)


MARKUPSAFE = (
    "import markupsafe\n"
    "from markupsafe import soft_unicode\n\n"
    "print(repr(soft_unicode(1)), repr(soft_unicode('<a>')), repr(soft_unicode(markupsafe.Markup('<b>'))))\n"
)


def test_markupsafe_2_1_soft_unicode_renamed_in_both_twins_is_fixed_and_runs(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """MarkupSafe 2.0.1 binds `soft_unicode` (and `soft_str`) by `try: from ._speedups import ...
    except ImportError: from ._native import ...`; the compiled twin is declared by `_speedups.pyi`, the
    Python one warns "'soft_unicode' has been renamed to 'soft_str'" with the same parameters. 2.1.0
    removed the old name. The import becomes `from markupsafe import soft_str as soft_unicode`: the
    original under 2.0.1 and the fixed file under 2.0.1's successor print the same, every
    DeprecationWarning an error under 2.1.0; the re-audit has none of the fixed findings, no new one."""
    folder = downstream(tmp_path / "down", MARKUPSAFE)
    new = release_python("MarkupSafe==2.1.0", tmp_path_factory)
    assert "cannot import name 'soft_unicode'" in run_under(new, folder, "import app").stderr
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "app.py").write_text(MARKUPSAFE)
    was = run_under(
        release_python("MarkupSafe==2.0.1", tmp_path_factory), tmp_path / "old", "import app", strict=False
    )
    assert was.returncode == 0, was.stderr
    out, before, after = fix_and_reaudit(
        folder, "markupsafe==2.1.0", "markupsafe==2.0.1", index_cache, capsys
    )
    assert "from markupsafe import soft_str as soft_unicode\n" in (folder / "app.py").read_text()
    assert "names `soft_str` as the replacement" in out
    now = run_under(new, folder, "import app")
    assert now.returncode == 0, now.stderr
    assert now.stdout == was.stdout == "'1' '<a>' Markup('<b>')\n"
    fixed = [f for f in before.findings if f.code == "AD002" and f.fix is not None]
    assert [f.fix.applicability for f in fixed] == [Applicability.SAFE]  # type: ignore[union-attr]
    assert keys(after) == keys(before) - keys_of(fixed), "none of the fixed findings and no new one"


PYJWT = (
    "import jwt\n\n"
    "try:\n"
    "    jwt.decode(jwt.encode({'exp': 1}, 'k', algorithm='HS256'), 'k', algorithms=['HS256'])\n"
    "except jwt.ExpiredSignature as error:\n"
    "    print(type(error).__name__)\n"
)


def test_pyjwt_2_alias_removed_is_renamed_and_runs(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """PyJWT 1.7.1 bound `ExpiredSignature = ExpiredSignatureError`; 2.0.0 dropped the alias. The use
    is renamed (the same object): the original under 1.7.1 and the fixed file under 2.0.0 both catch
    the expired token and print the same; the re-audit has none of the fixed findings, no new one."""
    folder = downstream(tmp_path / "down", PYJWT)
    new = release_python("PyJWT==2.0.0", tmp_path_factory)
    assert "has no attribute 'ExpiredSignature'" in run_under(new, folder, "import app", strict=False).stderr
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "app.py").write_text(PYJWT)
    was = run_under(
        release_python("PyJWT==1.7.1", tmp_path_factory), tmp_path / "old", "import app", strict=False
    )
    assert was.returncode == 0, was.stderr
    out, before, after = fix_and_reaudit(folder, "pyjwt==2.0.0", "pyjwt==1.7.1", index_cache, capsys)
    assert "except jwt.ExpiredSignatureError as error:\n" in (folder / "app.py").read_text()
    assert "`ExpiredSignature` was its alias" in out
    now = run_under(new, folder, "import app")
    assert now.returncode == 0, now.stderr
    assert now.stdout == was.stdout == "ExpiredSignatureError\n"
    fixed = [f for f in before.findings if f.fix is not None and f.fix.kind is FixKind.RENAME_ATTRIBUTE]
    assert [f.fix.applicability for f in fixed] == [Applicability.SAFE]  # type: ignore[union-attr]
    assert keys(after) == keys(before) - keys_of(fixed), "none of the fixed findings and no new one"


# ---- a removed module whose names moved: griffe 0.36.4 -> 1.0.0

GRIFFE_IMPORTS = (  # mkdocstrings-python 1.7.3 `handler.py`, lines 14-19
    "from griffe.collections import LinesCollection, ModulesCollection\n"
    "from griffe.docstrings.parsers import Parser\n"
    "from griffe.exceptions import AliasResolutionError\n"
    "from griffe.extensions import load_extensions\n"
    "from griffe.loader import GriffeLoader\n"
    "from griffe.logger import patch_loggers\n"
)


def test_griffe_1_removed_modules_names_move_to_griffe_and_import(
    tmp_path: Path,
    index_cache: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """griffe 1.0.0 removed its submodules; every name is exported by `griffe` (defined in `_griffe`).
    Each statement of mkdocstrings-python 1.7.3's is one AD001 whose fix moves it to `from griffe
    import ...`: safe only for `AliasResolutionError` (the same code in `_griffe.exceptions`), unsafe
    for the five whose definitions changed. CPython 3.11 with griffe 1.0.0: the original raises
    "No module named 'griffe.collections'"; the fixed file imports, and the re-audit has no AD001."""
    folder = downstream(tmp_path / "down", GRIFFE_IMPORTS)
    new = release_python("griffe==1.0.0", tmp_path_factory)
    assert "No module named 'griffe.collections'" in run_under(new, folder, "import app").stderr
    common = ["--against", "griffe==1.0.0", "--from", "griffe==0.36.4", "--cache-dir", str(index_cache)]
    before = audit(AuditRequest(str(folder), "griffe==1.0.0", "griffe==0.36.4", cache_dir=index_cache))
    assert [f.code for f in before.findings] == ["AD001"] * 6
    fixes = [f.fix.applicability.value for f in before.findings if f.fix is not None]
    assert fixes == ["unsafe", "unsafe", "safe", "unsafe", "unsafe", "unsafe"]
    assert "`GriffeLoader` -> `griffe.GriffeLoader`" in (before.findings[4].hint or "")

    main(["fix", str(folder), *common, "--no-config", "--write"])
    safe = (folder / "app.py").read_text()
    assert "from griffe import AliasResolutionError\n" in safe and "from griffe.loader import" in safe
    main(["fix", str(folder), *common, "--no-config", "--write", "--unsafe-fixes"])
    capsys.readouterr()
    fixed = (folder / "app.py").read_text()
    assert fixed == (
        "from griffe import LinesCollection, ModulesCollection\n"
        "from griffe import Parser\n"
        "from griffe import AliasResolutionError\n"
        "from griffe import load_extensions\n"
        "from griffe import GriffeLoader\n"
        "from griffe import patch_loggers\n"
    )
    ran = run_under(new, folder, "import app; print(app.GriffeLoader.__module__)")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "_griffe.loader"
    after = audit(AuditRequest(str(folder), "griffe==1.0.0", "griffe==0.36.4", cache_dir=index_cache))
    assert after.findings == []
