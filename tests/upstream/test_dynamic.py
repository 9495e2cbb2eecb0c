"""The static `__getattr__` evaluator, with CPython as the oracle: each synthetic module below is also
run for real (these are the tests' own snippets, never analysed upstream code), and every certain answer
must match what calling its `__getattr__` does."""

from __future__ import annotations

import ast
import sys
import textwrap
import types
import warnings
from pathlib import Path

import pytest

from apidrift.auditor.upstream.dynamic import (
    NotServed,
    Served,
    Undecided,
    defines_getattr,
    evaluate,
    getattr_helpers,
    program_source,
)

# (module source, names to ask); every answer that is not Undecided is checked against CPython.
CERTAIN = {
    "equality": (
        """
        import warnings

        def new_name(x):
            return x

        def __getattr__(name):
            if name == "old_name":
                warnings.warn("old_name is deprecated, use new_name", DeprecationWarning, stacklevel=2)
                return new_name
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        """,
        ["old_name", "other", "new_name"],
    ),
    "table_with_messages": (
        """
        import warnings
        _msg = "`np.{n}` was a deprecated alias for the builtin `{n}`."
        _type_info = [("object", ""), ("bool", ""), ("float", ""), ("int", "")]
        __former_attrs__ = {n: _msg.format(n=n) + extra for n, extra in _type_info}
        __expired__ = {"in1d": "Use `np.isin` instead."}

        def __getattr__(attr):
            if attr in __former_attrs__:
                raise AttributeError(__former_attrs__[attr])
            if attr in __expired__:
                raise AttributeError(f"`np.{attr}` was removed in the NumPy 2.0 release. {__expired__[attr]}")
            if attr.startswith("_private"):
                raise AttributeError("private")
            raise AttributeError("module {!r} has no attribute {!r}".format(__name__, attr))
        """,
        ["float", "in1d", "_private_x", "whatever"],
    ),
    # numpy 1.24's shape: the whole module under `if __NUMPY_SETUP__: ... else:`, whose flag only the
    # package's own build puts into builtins; a table built empty, then changed in place at import from
    # helper names deleted afterwards, with values a star import binds.
    "branch_of_an_injected_flag_and_a_table_changed_in_place": (
        """
        import warnings
        from math import *

        try:
            __MYPKG_SETUP__
        except NameError:
            __MYPKG_SETUP__ = False

        if __MYPKG_SETUP__:
            import sys
            sys.stderr.write("running from the source tree")
        else:
            __deprecated_attrs__ = {}
            _msg = "`m.{n}` is a deprecated alias for `{an}`."
            _type_info = [("tau0", tau, "m.tau"), ("e0", e, "m.e")]
            __future_scalars__ = {"bool", "str"}
            __deprecated_attrs__.update({n: (alias, _msg.format(n=n, an=an)) for n, alias, an in _type_info})
            __deprecated_attrs__["old"] = (1, "`m.old` is deprecated.")
            del __deprecated_attrs__["e0"]
            del _msg, _type_info

            def __getattr__(attr):
                try:
                    val, msg = __deprecated_attrs__[attr]
                except KeyError:
                    pass
                else:
                    warnings.warn(msg, DeprecationWarning, stacklevel=2)
                    return val
                if attr in __future_scalars__:
                    warnings.warn(f"In the future `m.{attr}` will be defined.", FutureWarning, stacklevel=2)
                raise AttributeError("module {!r} has no attribute {!r}".format(__name__, attr))
        """,
        ["float", "bool", "old", "e0", "_msg"],
    ),
    # pydantic 2.5's migration messages link the docs of `version_short()`:
    # `".".join(VERSION.split(".")[:2])`; slices with negative and missing bounds alike.
    "message_built_from_a_slice_of_the_version": (
        """
        VERSION = "2.5.3"

        def version_short():
            return ".".join(VERSION.split(".")[:2])

        def __getattr__(attr):
            if attr == "tail":
                raise AttributeError(VERSION[-3:] + VERSION[::2])
            raise AttributeError(f"`{attr}` moved, see https://docs.example/{version_short()}/migration/")
        """,
        ["BaseSettings", "tail"],
    ),
    "try_except_else": (
        """
        import warnings
        _deprecated = {"old": (1, "old is deprecated"), "older": (2, "older is deprecated")}

        def __getattr__(name):
            try:
                value, message = _deprecated[name]
            except KeyError:
                pass
            else:
                warnings.warn(message, DeprecationWarning)
                return value
            raise AttributeError(name)
        """,
        ["old", "older", "new"],
    ),
    "sets_and_tuples": (
        """
        _A = {"x", "y"}
        _B = ("z",)
        _C = frozenset(["w"]) | {"v"}
        _D = [n.upper() for n in ("p", "q") if n != "q"]

        def __getattr__(name):
            if name in _A or name in _B:
                return 1
            if name in _C:
                return 2
            if name not in _D:
                raise AttributeError(name)
            return 3
        """,
        ["x", "z", "w", "v", "P", "q", "Q"],
    ),
    "factory_closure": (
        """
        MOVED = {"m:a": "m2:a"}
        REMOVED = {f"m:{n}" for n in ("b", "c")}

        def make(module):
            def wrapper(name):
                path = f"{module}:{name}"
                if path in MOVED.keys():
                    return MOVED[path]
                if path in REMOVED:
                    raise ImportError(f"`{path}` has been removed")
                raise AttributeError(name)
            return wrapper

        __getattr__ = make("m")
        """,
        ["a", "b", "c", "d"],
    ),
    "for_loop_and_walrus": (
        """
        _GROUPS = (("a", ("x1", "x2")), ("b", ("y1",)))

        def __getattr__(name):
            for group, names in _GROUPS:
                if name in names:
                    return group
            if (n := len(name)) > 10:
                raise AttributeError("long " + str(n))
            raise AttributeError(name)
        """,
        ["x2", "y1", "abcdefghijkl", "z"],
    ),
    "keyword_defaults": (
        """
        def attach(package_name, submodules=None, submod_attrs=None):
            submod_attrs = submod_attrs or {}
            submodules = set(submodules or ())
            attr_to_modules = {attr: mod for mod, attrs in submod_attrs.items() for attr in attrs}

            def __getattr__(name):
                if name in submodules:
                    return "module " + name
                elif name in attr_to_modules:
                    return attr_to_modules[name]
                else:
                    raise AttributeError(f"No {package_name} attribute {name}")

            return __getattr__, list(submodules | attr_to_modules.keys())

        __getattr__, __all__ = attach(__name__, submod_attrs={"io": ["imread", "imsave"]}, submodules=["data"])
        """,
        ["imread", "data", "filters"],
    ),
}


def _run(source: str, name: str) -> tuple[str, object, str | None]:
    """What CPython does: ("served", value, warning) or ("raised", exception class name, message)."""
    module = types.ModuleType("m")
    # The oracle: the test's own synthetic shim run by CPython (never a real package's code).
    exec(compile(textwrap.dedent(source), "m.py", "exec"), module.__dict__)  # noqa: S102
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = module.__getattr__(name)
        except Exception as error:
            return "raised", type(error).__name__, str(error)
    return "served", value, str(caught[0].message) if caught else None


def _evaluate(source: str, name: str, extra: dict[str, str] | None = None) -> object:
    files = {"m": textwrap.dedent(source), **{k: textwrap.dedent(v) for k, v in (extra or {}).items()}}

    def sources(dotted: str) -> tuple[str, bool] | None:
        return (files[dotted], False) if dotted in files else None

    return evaluate("m", files["m"], name, sources)


@pytest.mark.parametrize("case", sorted(CERTAIN))
def test_certain_answers_match_cpython(case: str) -> None:
    source, names = CERTAIN[case]
    for name in names:
        answer = _evaluate(source, name)
        kind, value, message = _run(source, name)
        assert not isinstance(answer, Undecided), (name, answer)
        if kind == "raised":
            assert isinstance(answer, NotServed), (name, answer)
            assert answer.message == message and answer.exception == value
        else:
            assert isinstance(answer, Served), (name, answer)
            assert answer.warning == message


def test_served_names_its_target() -> None:
    helpers = {"pkg.core": "def download(repo):\n    return repo\n"}
    source = """
    import importlib
    _TABLE = {"download": "pkg.core", "sub": None}

    def __getattr__(name):
        if name not in _TABLE:
            raise AttributeError(name)
        if _TABLE[name] is None:
            return importlib.import_module(f".{name}", package="pkg")
        return getattr(importlib.import_module(_TABLE[name]), name)
    """
    files = {"pkg": textwrap.dedent(source), **helpers}
    sources = lambda dotted: (files[dotted], dotted == "pkg") if dotted in files else None  # noqa: E731
    assert evaluate("pkg", files["pkg"], "download", sources, is_package=True) == Served("pkg.core.download")
    assert evaluate("pkg", files["pkg"], "sub", sources, is_package=True) == Served("pkg.sub")
    assert evaluate("pkg", files["pkg"], "other", sources, is_package=True) == NotServed("other")


def test_helper_in_another_module_of_the_package() -> None:
    main = """
    from ._migration import getattr_migration
    __getattr__ = getattr_migration(__name__)
    """
    migration = """
    REMOVED = {"m:gone"}

    def getattr_migration(module):
        from .errors import MigrationError

        def wrapper(name):
            if f"{module}:{name}" in REMOVED:
                raise MigrationError(f"`{module}:{name}` has been removed in V2.")
            raise AttributeError(name)
        return wrapper
    """
    files = {"m": textwrap.dedent(main), "_migration": textwrap.dedent(migration)}
    sources = lambda dotted: (files[dotted], False) if dotted in files else None  # noqa: E731
    assert evaluate("m", files["m"], "gone", sources) == NotServed(
        "`m:gone` has been removed in V2.", "errors.MigrationError"
    )


UNDECIDED = {
    "globals": "def __getattr__(name):\n    return globals()['_' + name]\n",
    "environment": "import os\ndef __getattr__(name):\n    if name in os.environ:\n        return 1\n    raise AttributeError(name)\n",
    "mutated_table": "T = {}\ndef reg(k):\n    T[k] = 1\ndef __getattr__(name):\n    if name in T:\n        return T[name]\n    raise AttributeError(name)\n",
    "bound_twice": "T = {'a': 1}\nif X:\n    T = {'b': 2}\ndef __getattr__(name):\n    if name in T:\n        return 1\n    raise AttributeError(name)\n",
    "conditional": "import sys\nif sys.version_info < (3, 7):\n    def __getattr__(name):\n        raise AttributeError(name)\n",
    "unknown_call_result": "import plugins\ndef __getattr__(name):\n    return plugins.load(name)\n",
    "unknown_effect": "import plugins\ndef __getattr__(name):\n    plugins.install()\n    return 1\n",
    "decorated": "import functools\n@functools.lru_cache\ndef __getattr__(name):\n    raise AttributeError(name)\n",
    "while_loop": "def __getattr__(name):\n    while True:\n        pass\n",
    "recursion": "def f(n):\n    return f(n)\ndef __getattr__(name):\n    if f(name):\n        return 1\n    raise AttributeError(name)\n",
    "no_getattr": "x = 1\n",
    "big": "T = [i for i in range(10**9)]\ndef __getattr__(name):\n    raise AttributeError(name)\n",
}


@pytest.mark.parametrize("case", sorted(UNDECIDED))
def test_what_cannot_be_followed_is_undecided(case: str) -> None:
    answer = _evaluate(UNDECIDED[case], "a")
    if case == "big":  # `range` is not modelled: the table is unknown, yet the raise is unconditional
        assert answer == NotServed("a")
        return
    assert isinstance(answer, Undecided), answer


def test_steps_are_bounded() -> None:
    letters = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    source = (
        f"S = {letters!r}\nA = tuple(c + d for c in S for d in S)\nT = [(a, b) for a in A for b in A]\n"
        "def __getattr__(name):\n    if name in T:\n        return 1\n    raise AttributeError(name)\n"
    )
    answer = _evaluate(source, "a")
    assert isinstance(answer, Undecided) and "steps" in answer.why


def test_deep_nesting_is_undecided_not_a_crash() -> None:
    source = "def __getattr__(name):\n    return " + "(" * 50 + "1" + ")" * 50 + "\n"
    assert isinstance(_evaluate(source, "a"), (Served, Undecided))
    chain = (
        "".join(f"def f{i}(x):\n    return f{i + 1}(x)\n" for i in range(40)) + "def f40(x):\n    return 1\n"
    )
    source = chain + "def __getattr__(name):\n    if f0(name):\n        raise AttributeError(name)\n"
    assert isinstance(_evaluate(source, "a"), Undecided)


def test_nothing_is_executed(monkeypatch: pytest.MonkeyPatch) -> None:
    source = "import os\nos.system('exit 1')\ndef __getattr__(name):\n    open('/tmp/x', 'w')\n    raise AttributeError(name)\n"
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    assert isinstance(_evaluate(source, "a"), Undecided)  # `open` is not a builtin the evaluator models


def test_loader_helpers() -> None:
    tree = ast.parse(textwrap.dedent(CERTAIN["keyword_defaults"][0]))
    assert defines_getattr(tree)
    assert getattr_helpers(tree) == {"attach"}
    assert not defines_getattr(ast.parse("def f():\n    __getattr__ = 1\n"))
    pruned = program_source(
        ast.parse('class C:\n    """doc"""\n    x = 1\ndef f():\n    """doc"""\n    return 1\n')
    )
    assert "doc" not in pruned and "x = 1" not in pruned and "class C" in pruned


def test_a_getattr_too_deep_to_copy_leaves_the_module_unknowable(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apidrift.auditor.upstream import loader
    from apidrift.auditor.upstream.analyses import namespace

    code = "def __getattr__(name):\n    raise AttributeError(name)\n"
    (tmp_path / "m.py").write_text(code)
    assert loader.load_module("m", tmp_path / "m.py", code, tmp_path).getattr_source is not None

    def refuse(node: object) -> object:
        raise RecursionError

    monkeypatch.setattr(namespace.copy, "deepcopy", refuse)
    info = loader.load_module("m", tmp_path / "m.py", code, tmp_path)
    assert info.getattr_source is None and info.dynamic_namespace


def test_a_served_value_a_star_import_binds_is_not_a_miss() -> None:
    """`tau0` is served (CPython hands back `math.tau`); the analysis does not know that value, so
    its answer may be undecided, never "not served"."""
    source = CERTAIN["branch_of_an_injected_flag_and_a_table_changed_in_place"][0]
    kind, _, _ = _run(source, "tau0")
    assert kind != "raised"
    assert not isinstance(_evaluate(source, "tau0"), NotServed)


_PACKAGE_WITH_A_TABLE = {
    "__init__": """
    from ._expired import EXPIRED
    from ._expired import RENAMED
    from ._expired import VERSION, OLDEST

    def __getattr__(attr):
        if attr in EXPIRED:
            raise AttributeError(f"`pkg.{attr}` was removed in {VERSION}. {EXPIRED[attr]}")
        if attr == OLDEST:
            raise AttributeError("`pkg." + attr + "` went in " + VERSION)
        new = RENAMED.get(attr)
        if new is not None:
            raise AttributeError(f"`pkg.{attr}` is now `pkg.{new}`")
        raise AttributeError("module {!r} has no attribute {!r}".format(__name__, attr))
    """,
    "_expired": """
    EXPIRED = {"NaN": "Use `pkg.nan` instead.", "float_": "Use `pkg.float64` instead."}
    RENAMED = {"product": "prod"}
    VERSION = "2.0"
    OLDEST = "asscalar"
    """,
}


def _package_answers(tmp_path: Path, files: dict[str, str], names: list[str]) -> list[tuple[object, object]]:
    """(the evaluator's answer, what CPython's import of the written package does) for each name."""
    texts = {k: textwrap.dedent(v) for k, v in files.items()}
    root = tmp_path / "pkg"
    root.mkdir()
    for module, text in texts.items():
        (root / f"{module}.py").write_text(text)

    def sources(dotted: str) -> tuple[str, bool] | None:
        module = dotted.removeprefix("pkg.") if dotted != "pkg" else "__init__"
        return (texts[module], module == "__init__") if module in texts else None

    sys.path.insert(0, str(tmp_path))
    try:
        package = __import__("pkg")
        answers = []
        for name in names:
            try:
                getattr(package, name)
                real: object = "served"
            except AttributeError as error:
                real = str(error)
            answers.append((evaluate("pkg", texts["__init__"], name, sources, is_package=True), real))
        return answers
    finally:
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
            del sys.modules[module]


def test_a_table_imported_from_another_module_is_read_as_data(tmp_path: Path) -> None:
    """numpy 2.0's `from ._expired_attrs_2_0 import __expired_attributes__`: `attr in TABLE`,
    `TABLE[attr]` and `TABLE.get(attr)` read the value the other module binds."""
    for answer, real in _package_answers(
        tmp_path, _PACKAGE_WITH_A_TABLE, ["NaN", "float_", "product", "other"]
    ):
        assert isinstance(answer, NotServed) and answer.message == real, (answer, real)


def test_an_imported_table_changed_where_it_is_imported_is_not_read(tmp_path: Path) -> None:
    files = dict(_PACKAGE_WITH_A_TABLE)
    files["__init__"] = files["__init__"] + "\n    EXPIRED.pop('NaN')\n"
    ((answer, real),) = _package_answers(tmp_path, files, ["NaN"])
    assert real == "module 'pkg' has no attribute 'NaN'"  # CPython: the entry is gone
    assert isinstance(answer, Undecided), answer


_MIGRATION_SHIM = {
    "__init__": """
    import typing

    from ._migration import getattr_migration

    if typing.TYPE_CHECKING:
        from ._errors import *

    kept = 1
    __getattr__ = getattr_migration(__name__)
    """,
    "_errors": """
    class SomeError(Exception):
        pass
    """,
    "_migration": """
    import sys

    REMOVED = {"pkg:Required"}


    def getattr_migration(module):
        def wrapper(name):
            if name == "__path__":
                raise AttributeError(f"module {module!r} has no attribute {name!r}")
            import_path = f"{module}:{name}"
            if import_path in REMOVED:
                raise ImportError(f"`{import_path}` has been removed in V2.")
            globals = sys.modules[module].__dict__
            if name in globals:
                return globals[name]
            raise AttributeError(f"module {module!r} has no attribute {name!r}")

        return wrapper
    """,
}


def test_a_shim_reading_its_module_s_namespace_through_sys_modules(tmp_path: Path) -> None:
    """pydantic 2's `getattr_migration` ends `globals = sys.modules[module].__dict__; if name in
    globals: return globals[name]; raise AttributeError(...)`: for the package's own module, what it
    binds at top level (its star imports under `if typing.TYPE_CHECKING:` never run)."""
    for answer, real in _package_answers(tmp_path, _MIGRATION_SHIM, ["nosuch", "SomeError"]):
        assert isinstance(answer, NotServed) and answer.message == real, (answer, real)


# -- bounds: a bound reached is never read as the module raising (issue 36, items 1 and 3) -----------

_SERVE = "    if name == 'x':\n        return name\n    raise AttributeError(name)\n"
# Each builds, before serving `x` (as CPython does, given the memory), a value larger than the evaluator
# follows: it must be refused before it is built, and the answer is undecided, never "not served".
BOUNDS = {
    "join": f"_L = {[f'name_{i:05d}' for i in range(12_000)]!r}\ndef __getattr__(name):\n    d = ', '.join(_L)\n",
    "concatenation": f"_S = {'x' * 60_000!r}\ndef __getattr__(name):\n    d = _S + _S\n",
    "format_width": "def __getattr__(name):\n    d = '{:>3000000000}'.format(name)\n",
    "nested_format_width": "def __getattr__(name):\n    d = '{:>{}}'.format(name, 3000000000)\n",
    "percent_width": "def __getattr__(name):\n    d = '%3000000000s' % name\n",
    "percent_star": "def __getattr__(name):\n    d = '%*s' % (3000000000, name)\n",
    "fstring": f"_S = {'x' * 60_000!r}\ndef __getattr__(name):\n    d = f'{{_S}}{{_S}}'\n",
    "fstring_repr": f"_S = {chr(0) * 30_000!r}\ndef __getattr__(name):\n    d = f'{{_S!r}}'\n",
    "replace": f"_S = {'a' * 60_000!r}\ndef __getattr__(name):\n    d = _S.replace('a', 'bb')\n",
    "list_concatenation": f"_L = {['x'] * 60_000!r}\ndef __getattr__(name):\n    d = _L + _L\n",
    "starred": f"_L = {['x'] * 60_000!r}\ndef __getattr__(name):\n    d = [*_L, *_L]\n",
    "repr_of_shared_rows": f"_L = {['x'] * 1000!r}\n_M = [_L for _ in _L]\ndef __getattr__(name):\n    d = str(_M)\n",
    "message_doubled": "def __getattr__(name):\n    m = name\n    for c in 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz':\n        m = m + m\n",
    # 526 s for two names when only steps were counted
    "sorted_in_a_loop": f"_S = {''.join(chr(97 + i % 26) for i in range(100_000))!r}\n"
    "def __getattr__(name):\n    for c in _S:\n        t = sorted(_S)\n",
    "membership_in_a_loop": f"_L = {[f'n{i}' for i in range(100_000)]!r}\n"
    "def __getattr__(name):\n    for c in _L:\n        t = name in _L\n",
}


@pytest.mark.parametrize("case", sorted(BOUNDS))
def test_a_bound_reached_is_undecided_never_not_served(case: str) -> None:
    import time

    started = time.monotonic()
    answer = _evaluate(BOUNDS[case] + _SERVE, "x")
    assert isinstance(answer, Undecided) and answer.limit, answer
    assert time.monotonic() - started < 10


def test_a_module_raising_with_a_message_too_long_to_build_is_still_undecided() -> None:
    answer = _evaluate(
        "def __getattr__(name):\n    raise AttributeError('{:>3000000000}'.format(name))\n", "x"
    )
    assert isinstance(answer, Undecided) and answer.limit, answer


def test_time_is_bounded_per_name_and_per_module(monkeypatch: pytest.MonkeyPatch) -> None:
    from apidrift.auditor.upstream import dynamic

    source = "def __getattr__(name):\n" + _SERVE
    monkeypatch.setattr(dynamic, "MAX_NAME_SECONDS", -1.0)  # a deadline already past
    answer = _evaluate(source, "x")
    assert isinstance(answer, Undecided) and answer.limit and "time" in answer.why, answer
    monkeypatch.setattr(dynamic, "MAX_NAME_SECONDS", 5.0)
    monkeypatch.setattr(dynamic, "MAX_MODULE_SECONDS", 0.0)
    evaluator = dynamic.Evaluator(lambda dotted: (source, False) if dotted == "m" else None)
    answer = evaluator.evaluate("m", source, "x")
    assert isinstance(answer, Undecided) and answer.limit and "time" in answer.why, answer


def test_memory_exhausted_while_building_is_undecided(tmp_path: Path) -> None:
    """Without the size estimate (disabled here), `'{:>3000000000}'.format(name)` runs out of a 512 MiB
    address space: the MemoryError is a bound of the analysis, not the module raising."""
    import subprocess

    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent("""
        import resource
        from apidrift.auditor.upstream import dynamic
        dynamic._Interpreter.method_bound = lambda *args: 0
        dynamic.limits.MAX_SIZE = dynamic.expressions.MAX_SIZE = 10**10
        source = "def __getattr__(name):\\n    d = '{:>3000000000}'.format(name)\\n    return name\\n"
        resource.setrlimit(resource.RLIMIT_AS, (512 << 20, 512 << 20))
        print(dynamic.evaluate("m", source, "x", lambda d: None))
    """)
    )
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert run.stdout.strip().startswith("Undecided(") and "limit=True" in run.stdout, (
        run.stdout,
        run.stderr,
    )


# -- a table changed where the evaluator does not look (issue 36, item 2) ----------------------------

_GETATTR_IN = """
def __getattr__(name):
    if name in {table}:
        return name
    raise AttributeError(f"no {{name}}")
"""
# Each changes the table the `__getattr__` reads, not through its own name: CPython serves `old`.
CHANGED_ELSEWHERE = {
    "alias": ("_TABLE = {'a': 1}\n_ALIAS = _TABLE\n_ALIAS['old'] = 2\n", "_TABLE"),
    "container": ("_TABLE = {'a': 1}\n_HOLDER = [_TABLE]\n_HOLDER[0]['old'] = 2\n", "_TABLE"),
    "container_of_literals": ("_HOLDER = [{'a': 1}]\n_HOLDER[0]['old'] = 2\n", "_HOLDER[0]"),
    "helper": (
        "_TABLE = {'a': 1}\n\ndef _add(table, **names):\n    table.update(names)\n\n_add(_TABLE, old=2)\n",
        "_TABLE",
    ),
    "helper_by_keyword": (
        "_TABLE = {'a': 1}\n\ndef _add(key, table=None):\n    table[key] = 1\n\n_add('old', table=_TABLE)\n",
        "_TABLE",
    ),
    "alias_setdefault": ("_TABLE = {'a': 1}\n_ALIAS = _TABLE\n_ALIAS.setdefault('old', 2)\n", "_TABLE"),
    "alias_update": ("_TABLE = {'a': 1}\n_ALIAS = _TABLE\n_ALIAS.update(old=2)\n", "_TABLE"),
    "element_through_a_name": (
        "_TABLE = {'names': ['a']}\n_NAMES = _TABLE['names']\n_NAMES.append('old')\n",
        "_TABLE['names']",
    ),
    "element_in_place": ("_TABLE = {'names': ['a']}\n_TABLE['names'].append('old')\n", "_TABLE['names']"),
    "loop_variable": (
        "_TABLE = {'names': ['a']}\nfor _k, _v in _TABLE.items():\n    _v.append('old')\n",
        "_TABLE['names']",
    ),
    "returned_by_a_helper": (
        "_TABLE = {'a': 1}\n\ndef _table():\n    return _TABLE\n\n_table()['old'] = 2\n",
        "_TABLE",
    ),
    "original_changed_after_an_alias": (
        "_TABLE = {'a': 1}\n_ALIAS = _TABLE\n_TABLE['old'] = 2\n",
        "_ALIAS",
    ),
    "original_updated_after_an_alias": (
        "_TABLE = {'a': 1}\n_ALIAS = _TABLE\n_TABLE.update(old=2)\n",
        "_ALIAS",
    ),
    "imported_library_function": (
        "from operator import setitem\n_TABLE = {'a': 1}\nsetitem(_TABLE, 'old', 2)\n",
        "_TABLE",
    ),
    "library_function": (
        "import operator\n_TABLE = {'a': 1}\noperator.setitem(_TABLE, 'old', 2)\n",
        "_TABLE",
    ),
    "starred_into_a_helper": (
        "_TABLE = {'a': 1}\n\ndef _add(*tables):\n    for t in tables:\n        t['old'] = 2\n\n_add(_TABLE)\n",
        "_TABLE",
    ),
}


@pytest.mark.parametrize("case", sorted(CHANGED_ELSEWHERE))
def test_a_table_changed_through_another_name_is_not_read(case: str, tmp_path: Path) -> None:
    code, table = CHANGED_ELSEWHERE[case]
    files = {"__init__": code + _GETATTR_IN.format(table=table)}
    ((answer, real),) = _package_answers(tmp_path, files, ["old"])
    assert real == "served"  # CPython: the change made elsewhere added it
    assert isinstance(answer, Undecided), answer


def test_a_table_only_read_stays_certain(tmp_path: Path) -> None:
    """Reading a table, handing its immutable elements on (a warning's message), copying it or
    passing it to the module's own helper that only reads it: its literal is still what runs."""
    code = """
    import warnings

    _TABLE = {"a": ("pkg.a", "a is deprecated"), "b": ("pkg.b", "b is deprecated")}
    _NAMES = sorted(_TABLE)
    _COPY = dict(_TABLE)
    _COPY["zz"] = ("pkg.zz", "")


    def _known(table, name):
        return name in table and len(table) > 0


    def __getattr__(name):
        if _known(_TABLE, name):
            target, message = _TABLE[name]
            warnings.warn(message, DeprecationWarning)
            return target
        raise AttributeError(f"no {name} in {', '.join(_NAMES)}")
    """
    for answer, real in _package_answers(tmp_path, {"__init__": code}, ["zz", "other"]):
        assert isinstance(answer, NotServed) and answer.message == real, (answer, real)


# -- names a module binds through globals() or setattr on itself (issue 32, computed namespaces) -------

COMPUTED = {
    "table_loop": "_T = {'a': 1, 'b': 2}\nfor _k, _v in _T.items():\n    globals()[_k] = _v\n",
    "filtered_loop": "_T = ['a', '_b', 'c']\nfor _k in _T:\n    if _k.startswith('_'):\n        continue\n    _name = _k.upper()\n    globals()[_name] = 1\n",
    "update_dict": "globals().update({'x': 1}, y=2)\n",
    "update_comprehension": "globals().update({f'float{b}': b for b in (16, 32)})\n",
    "update_pairs": "globals().update([('p', 1), ('q', 2)])\n",
    "enum_members": "import enum\nclass C(enum.Enum):\n    A = 1\n    B = 2\n    ALIAS = 1\n    def f(self):\n        return 1\nglobals().update(C.__members__)\n",
    "setattr_over_enum": "import sys\nfrom enum import IntEnum\nclass C(IntEnum):\n    A = 1\n    B = 2\n    ALIAS = 2\nmodule = sys.modules[__name__]\nfor item in C:\n    setattr(module, item.name, item.value)\n",
    "setattr_direct": "import sys\nfor _n in ('u', 'v'):\n    setattr(sys.modules[__name__], _n, 0)\n",
}
NOT_READ = {
    "unknown_table": "import os\nfor _k in os.environ:\n    globals()[_k] = 1\n",
    "alias_used_elsewhere": "import sys\nmodule = sys.modules[__name__]\nmodule.extra = 1\nfor _n in ('u',):\n    setattr(module, _n, 0)\n",
    "flag_iterated": "import sys\nfrom enum import Flag\nclass F(Flag):\n    A = 1\n    B = 2\n    AB = 3\nfor item in F:\n    setattr(sys.modules[__name__], item.name, 1)\n",
    "enum_with_private_name": "import enum\nclass C(enum.Enum):\n    A = 1\n    _B = 2\nglobals().update(C.__members__)\n",
    "key_from_a_call": "def _name(i):\n    return 'n' + str(i)\nfor _i in (1, 2):\n    globals()[_name(_i) + input()] = 1\n",
}


def _static_names(source: str) -> set[str]:
    """Names the module's statements bind by name (not inside classes or functions)."""
    names: set[str] = set()
    stack: list[ast.AST] = list(ast.parse(source).body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _computed(source: str) -> object:
    from apidrift.auditor.upstream import dynamic

    tree = ast.parse(source)
    assert dynamic.namespace_writes(tree), "not recognised as a namespace write"
    program = program_source(ast.parse(source))
    evaluator = dynamic.Evaluator(lambda dotted: (program, False) if dotted == "m" else None)
    return dynamic.namespace_names(evaluator, "m", program, dynamic.enum_members(tree))


@pytest.mark.parametrize("case", sorted(COMPUTED))
def test_names_bound_through_the_namespace_match_cpython(case: str) -> None:
    source = COMPUTED[case]
    module = types.ModuleType("m")
    sys.modules["m"] = module
    try:
        exec(compile(source, "m.py", "exec"), module.__dict__)  # noqa: S102  # the tests' own snippets
    finally:
        del sys.modules["m"]
    real = (
        set(module.__dict__)
        - _static_names(source)
        - {"__builtins__", "__name__", "__doc__", "__package__", "__loader__", "__spec__"}
    )
    assert _computed(source) == frozenset(real), real


@pytest.mark.parametrize("case", sorted(NOT_READ))
def test_names_bound_through_the_namespace_unread_stay_open(case: str) -> None:
    from apidrift.auditor.upstream import dynamic

    source = NOT_READ[case]
    if case == "alias_used_elsewhere":  # `module.extra = 1`: the alias is not only used by the writes
        assert not dynamic.namespace_writes(ast.parse(source))  # not taken for a write it reads: stays open
        return
    assert isinstance(_computed(source), Undecided)


def test_a_lazy_table_whose_names_are_handed_on_stays_certain(tmp_path: Path) -> None:
    """huggingface_hub 0.26's `_attach` (a copy of lazy_loader's): the table's strings go to
    `getattr(submod, name)`, into `pkg.__dict__` and through an eager loop over `__all__`; a function's
    local `attr` is not the module's `attr`. Nothing changes the table: a name not in it is certain."""
    code = """
    import importlib
    import os
    import sys

    _SUBMOD_ATTRS = {"core": ["download", "upload"], "tools": ["helper"]}


    def _attach(package_name, submodules=None, submod_attrs=None):
        if submod_attrs is None:
            submod_attrs = {}
        submodules = set(submodules) if submodules is not None else set()
        attr_to_modules = {attr: mod for mod, attrs in submod_attrs.items() for attr in attrs}
        __all__ = list(submodules | attr_to_modules.keys())

        def __getattr__(name):
            if name in attr_to_modules:
                submod = importlib.import_module(f"{package_name}.{attr_to_modules[name]}")
                attr = getattr(submod, name)
                if name == attr_to_modules[name]:
                    pkg = sys.modules[package_name]
                    pkg.__dict__[name] = attr
                return attr
            raise AttributeError(f"No {package_name} attribute {name}")

        def __dir__():
            return __all__

        return __getattr__, __dir__, list(__all__)


    __getattr__, __dir__, __all__ = _attach(__name__, submodules=[], submod_attrs=_SUBMOD_ATTRS)

    if os.environ.get("PKG_EAGER_IMPORT_NEVER_SET", ""):
        for attr in __all__:
            __getattr__(attr)
    """
    for answer, real in _package_answers(tmp_path, {"__init__": code}, ["cached_download"]):
        assert isinstance(answer, NotServed) and answer.message == real, (answer, real)


def test_a_table_handed_to_another_module_s_function(tmp_path: Path) -> None:
    """scipy 1.14's deprecated-module shims: `__getattr__` hands `__all__` to a helper of another module
    (`_sub_module_deprecation(all=__all__, attribute=name)`) that only tests `attribute not in all`:
    the table is still its literal. A helper there that changes its argument makes it unknown."""
    shim = """
    from ._helpers import {helper}

    __all__ = ["kept"]
    {helper}(table=__all__, name="x")


    def __getattr__(name):
        return _deprecated(all=__all__, attribute=name)


    def _deprecated(*, all, attribute):
        if attribute not in all:
            raise AttributeError(f"no attribute {{attribute}}")
        return 1
    """
    helpers = """
    def reads(table, name):
        if name in table:
            return 1
        return 0


    def adds(table, name):
        table.append(name)
    """
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ((answer, real),) = _package_answers(
        tmp_path / "a", {"__init__": shim.format(helper="reads"), "_helpers": helpers}, ["x"]
    )
    ((added, served),) = _package_answers(
        tmp_path / "b", {"__init__": shim.format(helper="adds"), "_helpers": helpers}, ["x"]
    )
    assert isinstance(answer, NotServed) and answer.message == real == "no attribute x", (answer, real)
    assert served == "served" and isinstance(added, Undecided), (added, served)
