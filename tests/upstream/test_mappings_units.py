"""The loader's readings of keyword mappings and of the names a decorator adds (analyses/mappings.py):
the shapes read, and the shapes that must stay unread (so the checks stay silent)."""

from __future__ import annotations

import ast
import textwrap

from apidrift.auditor.upstream.analyses.mappings import (
    added_names,
    checked_keys,
    expand_names,
    mapping_handovers,
)


def _def(source: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


ALIASES = """
def define_aliases(alias_d, cls=None):
    for prop, aliases in alias_d.items():
        for prefix in ["get_", "set_"]:
            for alias in aliases:
                setattr(cls, prefix + alias, None)
    cls._alias_map = alias_d
    return cls
"""


def test_added_names_expand_from_the_literal_argument() -> None:
    patterns = added_names(_def(ALIASES))
    assert patterns is not None
    names = expand_names(patterns, {"alias_d": {"linewidth": ["lw"], "edgecolor": ["ec"]}})
    assert names == {"get_lw", "set_lw", "get_ec", "set_ec", "_alias_map"}


def test_added_names_unknown_without_a_literal_or_with_an_unreadable_name() -> None:
    patterns = added_names(_def(ALIASES))
    assert patterns is not None
    assert expand_names(patterns, {}) is None  # `@define_aliases(ALIAS_TABLE)`: not a literal
    assert expand_names(patterns, {"alias_d": {"linewidth": [1]}}) is None  # not a string
    computed = _def(
        """
        def deco(cls):
            for name in dir(cls):
                setattr(cls, name.upper(), None)
            return cls
        """
    )
    assert added_names(computed) is None
    rebound = _def(
        """
        def deco(cls, names):
            for name in ["a"]:
                name = name + "_x"
                setattr(cls, name, None)
            return cls
        """
    )
    assert added_names(rebound) is None  # a loop variable bound again may hold anything


def test_added_names_of_a_factory_read_from_its_returned_decorator() -> None:
    # SQLAlchemy 1.4 `create_proxy_methods`: the factory's lists, one loop variable used by two loops
    factory = _def(
        """
        def create_proxy_methods(target_cls, name, methods=(), attributes=(), classmethods=()):
            def decorate(cls):
                def instrument(name):
                    return getattr(target_cls, name)

                for meth in methods:
                    setattr(cls, meth, instrument(meth))
                for prop in attributes:
                    setattr(cls, prop, None)
                for prop in classmethods:
                    setattr(cls, prop, classmethod(instrument(prop)))
                return cls

            return decorate
        """
    )
    patterns = added_names(factory)
    assert patterns is not None
    names = expand_names(
        patterns, {"methods": ["commit"], "attributes": ["bind"], "classmethods": ["close_all"]}
    )
    assert names == {"commit", "bind", "close_all"}
    assert expand_names(patterns, {"attributes": ["bind"], "classmethods": []}) is None  # `methods=METHODS`
    # a parameter of the decorator shadowing the factory's list: the name is not the factory's argument
    shadowed = _def(
        """
        def factory(methods):
            def decorate(cls, methods=("x",)):
                for meth in methods:
                    setattr(cls, meth, None)
                return cls

            return decorate
        """
    )
    assert added_names(shadowed) is None
    # a nested helper's parameter may be the class: its names are not read
    helper = _def(
        """
        def factory(methods):
            def add(target, name):
                setattr(target, name, None)

            def decorate(cls):
                for meth in methods:
                    add(cls, meth)
                return cls

            return decorate
        """
    )
    assert added_names(helper) is None


def test_checked_keys_reads_the_setter_lookup_and_its_exemptions() -> None:
    found = checked_keys(
        _def(
            """
            def _update_props(self, props, errfmt):
                with ctx(self):
                    for k, v in props.items():
                        if k != k.lower():
                            raise ValueError(k)
                        if k == "axes":
                            setattr(self, k, v)
                        else:
                            func = getattr(self, f"set_{k}", None)
                            if not callable(func):
                                raise AttributeError(errfmt.format(k))
                            func(v)
            """
        )
    )
    assert found == {"param": "props", "index": 0, "prefix": "set_", "suffix": "", "exempt": ["axes"]}


def test_checked_keys_not_read_where_a_key_may_skip_the_check() -> None:
    skipping = _def(
        """
        def update(self, props):
            for k, v in props.items():
                if k.startswith("_"):
                    continue
                func = getattr(self, f"set_{k}", None)
                if not callable(func):
                    raise AttributeError(k)
        """
    )
    assert checked_keys(skipping) is None
    returning = _def(
        """
        def update(self, props):
            if not props:
                return None
            for k, v in props.items():
                func = getattr(self, "set_" + k, None)
                if func is None:
                    raise AttributeError(k)
        """
    )
    assert checked_keys(returning) is None  # a return before the loop
    other_object = _def(
        """
        def update(self, props):
            for k, v in props.items():
                func = getattr(self.target, f"set_{k}", None)
                if not callable(func):
                    raise AttributeError(k)
        """
    )
    assert checked_keys(other_object) is None


def test_mapping_handover_needs_one_call_that_certainly_runs() -> None:
    plain = _def(
        """
        def __init__(self, *, edgecolor=None, **kwargs):
            kwargs.setdefault("joinstyle", "round")
            if len(kwargs):
                self._internal_update(kwargs)
        """
    )
    assert mapping_handovers(plain) == {
        "kwargs": {"target": "self._internal_update", "index": 0, "consumed": []}
    }
    spread = _def(
        """
        def __init__(self, patch, **kwargs):
            self.update({"alpha": 0.5, **kwargs})
        """
    )
    assert mapping_handovers(spread)["kwargs"]["target"] == "self.update"
    conditional = _def(
        """
        def __init__(self, strict=False, **kwargs):
            if strict:
                self._internal_update(kwargs)
        """
    )
    assert "kwargs" not in mapping_handovers(conditional)
    early = _def(
        """
        def __init__(self, **kwargs):
            if self.frozen:
                return
            self._internal_update(kwargs)
        """
    )
    assert "kwargs" not in mapping_handovers(early)
    filtered = _def(
        """
        def __init__(self, **kwargs):
            kwargs = {k: v for k, v in kwargs.items() if v is not None}
            self._internal_update(kwargs)
        """
    )
    assert "kwargs" not in mapping_handovers(filtered)
    twice = _def(
        """
        def __init__(self, **kwargs):
            self.first(kwargs)
            self.second(kwargs)
        """
    )
    assert "kwargs" not in mapping_handovers(twice)


def test_expansion_is_bounded() -> None:
    patterns = [[["arg", "a", "iter"], ["arg", "b", "iter"]]]
    wide = [f"n{i}" for i in range(100)]
    assert expand_names(patterns, {"a": wide, "b": wide}) is None  # 10,000 names: too many to list
    assert expand_names(patterns, {"a": ["x"], "b": ["1", "2"]}) == {"x1", "x2"}
