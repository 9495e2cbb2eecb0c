"""The loader's reading of raising guards (auditor/upstream/analyses/guards.py), one rule per test."""

from __future__ import annotations

import ast

from apidrift.auditor.upstream.analyses.guards import raising_guards


def guards(code: str, name: str = "f") -> list[list[object]]:
    module = ast.parse(code)
    function = next(s for s in module.body if isinstance(s, ast.FunctionDef) and s.name == name)
    return [g["tests"] for g in raising_guards(function, module)]


def test_a_guard_on_passed_arguments() -> None:
    code = (
        "S = object()\ndef f(a=S, b=S):\n    if a is not S and b is not S:\n        raise ValueError('x')\n"
    )
    assert guards(code) == [[["a", "S", True, True], ["b", "S", True, True]]]


def test_a_guard_on_an_omitted_argument() -> None:
    assert guards("def f(x, epochs=None):\n    if epochs is None:\n        raise ValueError\n") == [
        [["epochs", "None", True, False]]
    ]


def test_nothing_after_a_statement_that_may_return_or_loop() -> None:
    for before in (
        "if x: return 1",
        "for i in x: pass",
        "while x: x -= 1",
        "with x: pass",
        "try:\n        pass\n    except E:\n        pass",
    ):
        code = f"def f(x, epochs=None):\n    {before}\n    if epochs is None:\n        raise ValueError\n"
        assert guards(code) == [], before


def test_a_rebound_parameter_is_no_longer_the_argument() -> None:
    code = "def f(epochs=None):\n    epochs = epochs or 1\n    if epochs is None:\n        raise ValueError\n"
    assert guards(code) == []


def test_a_generator_runs_nothing_when_called() -> None:
    assert (
        guards("def f(epochs=None):\n    if epochs is None:\n        raise ValueError\n    yield 1\n") == []
    )


def test_a_helper_of_the_module_handed_the_parameters() -> None:
    code = (
        "S = object()\n"
        "def f(a=S, b=S):\n    kw = locals().copy()\n    out = _check(1, a, b=b)\n    return out\n"
        "def _check(n, a, b):\n    if n and a:\n        raise TypeError\n    if a is not S and b is not S:\n        raise ValueError\n"
    )
    assert guards(code) == [[["a", "S", True, True], ["b", "S", True, True]]]


def test_a_helper_bound_twice_is_not_followed() -> None:
    code = (
        "S = object()\n"
        "def f(a=S, b=S):\n    _check(a, b)\n"
        "def _check(a, b):\n    if a is not S and b is not S:\n        raise ValueError\n"
        "_check = other\n"
    )
    assert guards(code) == []


def test_a_condition_other_than_identity_tests_is_not_a_guard() -> None:
    assert guards("def f(a=None, b=None):\n    if a and b is not None:\n        raise ValueError\n") == []
