"""Unit tests of the resolver (auditor/upstream/resolve.py): a few upstream files in, one reference's
resolution out. The long stories are in tests/cases; these point at the step that broke."""

from __future__ import annotations

from pathlib import Path

import pytest

from apidrift.auditor.core.reasons import Reason, Unknown
from apidrift.auditor.core.refs import AttrRef, CallRef, InstanceRef, ModuleRef, StarRef
from apidrift.auditor.upstream.api_index import ApiIndex
from apidrift.auditor.upstream.resolve import (
    ClassValue,
    FunctionValue,
    Missing,
    ModuleValue,
    Resolver,
    ServedValue,
    reason_of,
)

PACKAGE = {
    "zzr/__init__.py": (
        "from zzr._impl import Thing as Thing\nfrom zzr import _impl\nfrom zzr._impl import *\n\n"
        "def __getattr__(name):\n"
        "    if name == 'Old':\n"
        "        return _impl.Thing\n"
        "    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')\n"
    ),
    "zzr/_impl.py": "__all__ = ['Thing', 'helper']\n\nclass Thing:\n    def method(self, a): ...\n\ndef helper(): ...\n",
    "zzr/sub.py": "VALUE = 1\n",
    "zzg/__init__.py": "from elsewhere import make\n\ndef __getattr__(name):\n    return make(name)\n",
    "zzi/__init__.py": "import importlib\n\ndef __getattr__(name):\n    return importlib.import_module('.' + name, __name__)\n",
    "zzx/__init__.py": "exec('made = 1')\nlocals()['also'] = 2\n\ndef real(): ...\n",
    "zzc/__init__.py": "class Open:\n    exec('y = 2')\n\nclass Closed:\n    x = 1\n",
}


@pytest.fixture(scope="module")
def resolver(tmp_path_factory: pytest.TempPathFactory) -> Resolver:
    root = tmp_path_factory.mktemp("up")
    for relative, text in PACKAGE.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Resolver(ApiIndex(Path(root), ["zzr", "zzg", "zzi", "zzx", "zzc"]))


def attr(dotted: str) -> AttrRef | ModuleRef:
    head, *names = dotted.split(".")
    ref: AttrRef | ModuleRef = ModuleRef(head)
    for name in names:
        ref = AttrRef(ref, name)
    return ref


def test_a_name_resolves_through_its_re_export(resolver: Resolver) -> None:
    value = resolver.resolve(attr("zzr.Thing"))
    assert isinstance(value, ClassValue) and value.info.path == "zzr._impl.Thing"


def test_a_method_of_an_instance_the_call_builds(resolver: Resolver) -> None:
    value = resolver.resolve(AttrRef(CallRef(attr("zzr.Thing")), "method"))
    assert isinstance(value, FunctionValue)
    assert value.path == "zzr._impl.Thing.method" and value.via == "instance"


def test_a_submodule_is_a_module_value(resolver: Resolver) -> None:
    value = resolver.resolve(ModuleRef("zzr.sub"))
    assert isinstance(value, ModuleValue) and value.info.path == "zzr.sub"


def test_a_name_behind_a_module_getattr(resolver: Resolver) -> None:
    value = resolver.resolve(attr("zzr.Old"))
    assert isinstance(value, ClassValue) and value.info.path == "zzr._impl.Thing"


def test_a_name_the_module_getattr_refuses_is_missing_with_its_message(resolver: Resolver) -> None:
    assert resolver.resolve(attr("zzr.Gone")) == Missing(
        "zzr", "Gone", "module", message="module 'zzr' has no attribute 'Gone'"
    )


def test_a_module_getattr_the_analysis_cannot_decide_makes_any_name_unknown(resolver: Resolver) -> None:
    found = resolver.resolve(attr("zzg.anything"))  # `return make(name)`, make from another package
    assert found == Unknown(Reason.MODULE_GETATTR)
    assert isinstance(found, Unknown) and "module __getattr__" in found.reason.text


def test_a_module_getattr_that_imports_a_submodule_serves_it(resolver: Resolver) -> None:
    assert resolver.resolve(attr("zzi.part")) == ServedValue("zzi.part", "zzi.part")


def test_a_star_imported_name_comes_from_the_last_module_that_exports_it(resolver: Resolver) -> None:
    value = resolver.resolve(StarRef(("zzr._impl",), "helper"))
    assert isinstance(value, FunctionValue) and value.path == "zzr._impl.helper"
    assert resolver.resolve(StarRef(("zzr._impl",), "nothing")) == Missing("zzr._impl", "nothing", "star")


def test_an_instance_known_by_annotation_misses_inexactly(resolver: Resolver) -> None:
    built = resolver.resolve(AttrRef(CallRef(attr("zzr.Thing")), "nope"))
    annotated = resolver.resolve(AttrRef(InstanceRef(attr("zzr.Thing")), "nope"))
    assert built == Missing("zzr._impl.Thing", "nope", "instance", exact=True)
    assert annotated == Missing("zzr._impl.Thing", "nope", "instance", exact=False)


def test_an_unknown_comes_with_its_reason_and_text(resolver: Resolver) -> None:
    found = resolver.resolve(attr("zzc.Open.z"))  # the class body calls exec(): any name may exist
    assert found == Unknown(Reason.DYNAMIC_BINDING)
    assert isinstance(found, Unknown)
    assert found.label == "dynamic-binding" and found.reason.text.startswith("the module binds the name")
    assert resolver.resolve(attr("zzc.Closed.z")) == Missing("zzc.Closed", "z", "class", True)


def test_a_module_whose_top_level_code_binds_names_itself_misses_nothing(resolver: Resolver) -> None:
    # exec() and locals() at the top level open the module's namespace (the loader records it as
    # open_namespace): a name the analysis does not see is unknown there, never certainly missing.
    assert resolver.resolve(attr("zzx.made")) == Unknown(Reason.DYNAMIC_BINDING)
    assert resolver.resolve(attr("zzx.also")) == Unknown(Reason.DYNAMIC_BINDING)
    assert isinstance(resolver.resolve(attr("zzx.real")), FunctionValue)


def test_a_module_outside_the_upstream_is_unknown(resolver: Resolver) -> None:
    assert resolver.resolve(attr("numpy.array")) == Unknown(Reason.NOT_UPSTREAM)
    assert resolver.resolve(AttrRef(attr("zzr.nothing"), "deeper")) == Unknown(Reason.PARENT_MISSING)


def test_reason_of_finds_every_reason_by_its_code() -> None:
    assert all(reason_of(reason.code) is reason for reason in Reason)
    assert reason_of("dynamic-binding") is Reason.DYNAMIC_BINDING is Reason("dynamic-binding")
    with pytest.raises(ValueError):
        reason_of("no-such-reason")
