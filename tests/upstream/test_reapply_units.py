"""The shapes read as "a decorator re-applying what a registry holds for another function" and as "a
decorator registering its own wrapper", each as matplotlib's releases write them, and shapes that are
not read (tests for `auditor/upstream/analyses/decorators/registries.py`)."""

from __future__ import annotations

import ast
import textwrap

from apidrift.auditor.upstream.analyses.decorators import (
    _container_stores,
    _reapplies_registered,
    _registers_self,
)


def _def(source: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(source)).body[-1]
    assert isinstance(node, ast.FunctionDef)
    return node


# matplotlib 3.5.0 pyplot.py:88
COPY_35 = """
def _copy_docstring_and_deprecators(method, func=None):
    if func is None:
        return functools.partial(_copy_docstring_and_deprecators, method)
    decorators = [docstring.copy(method)]
    while getattr(method, "__wrapped__", None) is not None:
        decorator = _api.deprecation.DECORATORS.get(method)
        if decorator:
            decorators.append(decorator)
        method = method.__wrapped__
    for decorator in decorators[::-1]:
        func = decorator(func)
    return func
"""

# matplotlib 3.9.0 pyplot.py:162 (3.8 the same without the note)
COPY_39 = """
def _copy_docstring_and_deprecators(
    method: Any,
    func: Callable[_P, _R] | None = None
) -> Callable[[Callable[_P, _R]], Callable[_P, _R]] | Callable[_P, _R]:
    if func is None:
        return cast('Callable[[Callable[_P, _R]], Callable[_P, _R]]',
                    functools.partial(_copy_docstring_and_deprecators, method))
    decorators: list[Callable[[Callable[_P, _R]], Callable[_P, _R]]] = [
        _docstring.copy(method)
    ]
    while hasattr(method, "__wrapped__"):
        potential_decorator = _api.deprecation.DECORATORS.get(method)
        if potential_decorator:
            decorators.append(potential_decorator)
        method = method.__wrapped__
    for decorator in decorators[::-1]:
        func = decorator(func)
    _add_pyplot_note(func, method)
    return func
"""


def test_reapplying_shapes_of_three_releases_are_read() -> None:
    expected = {"registry": "_api.deprecation.DECORATORS", "initial": ["docstring.copy"]}
    assert _reapplies_registered(_def(COPY_35)) == expected
    assert _reapplies_registered(_def(COPY_39)) == {**expected, "initial": ["_docstring.copy"]}
    without_note = COPY_39.replace("    _add_pyplot_note(func, method)\n", "")
    assert _reapplies_registered(_def(without_note)) == {**expected, "initial": ["_docstring.copy"]}


def test_reapplying_shapes_that_change_more_are_not_read() -> None:
    # the function is rebound by something else than the listed decorators
    rebound = COPY_35.replace("    return func", "    func = wrap(func)\n    return func")
    assert _reapplies_registered(_def(rebound)) is None
    # the walk does not follow __wrapped__
    assert (
        _reapplies_registered(_def(COPY_35.replace("method = method.__wrapped__", "method = other"))) is None
    )
    # the list applied is not the one filled
    assert _reapplies_registered(_def(COPY_35.replace("in decorators[::-1]", "in extra[::-1]"))) is None
    # applied in source order, not reversed: not the shape read
    assert _reapplies_registered(_def(COPY_35.replace("decorators[::-1]", "decorators"))) is None
    # an initial decorator not called with the method
    assert (
        _reapplies_registered(_def(COPY_35.replace("docstring.copy(method)", "docstring.copy(func)"))) is None
    )
    # an expression statement that rebinds through a walrus
    walrus = COPY_35.replace("    return func", "    note(func := wrap(func))\n    return func")
    assert _reapplies_registered(_def(walrus)) is None


# matplotlib 3.5.0 _api/deprecation.py:416 (shortened)
MAKE_KEYWORD_ONLY = """
def make_keyword_only(since, name, func=None):
    decorator = functools.partial(make_keyword_only, since, name)
    if func is None:
        return decorator
    signature = inspect.signature(func)
    names = [*signature.parameters]
    name_idx = names.index(name)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if len(args) > name_idx:
            warn_deprecated(since, message="...")
        return func(*args, **kwargs)

    DECORATORS[wrapper] = decorator
    return wrapper
"""


def test_a_decorator_registering_its_own_wrapper() -> None:
    node = _def(MAKE_KEYWORD_ONLY)
    assert _registers_self(node) == "DECORATORS"
    assert _container_stores(node) == []  # its own store is the one recognized
    # a partial that does not re-apply the same decorator (an argument left out)
    other = MAKE_KEYWORD_ONLY.replace(
        "partial(make_keyword_only, since, name)", "partial(make_keyword_only, since)"
    )
    assert _registers_self(_def(other)) is None
    assert _container_stores(_def(other)) == ["DECORATORS"]
    # registering what it was given rather than its own wrapper
    given = MAKE_KEYWORD_ONLY.replace("DECORATORS[wrapper] = decorator", "DECORATORS[func] = decorator")
    assert _registers_self(_def(given)) is None
    assert _container_stores(_def(given)) == ["DECORATORS"]


def test_container_stores_are_every_keyed_store() -> None:
    node = _def(
        """
        def deco(func):
            REGISTRY.update({func: 1})
            mod.TABLE[func.__name__] = func
            seen = {}
            seen[func] = 1
            HOOKS |= {func}
            return func
        """
    )
    assert _container_stores(node) == ["HOOKS", "REGISTRY", "mod.TABLE", "seen"]
