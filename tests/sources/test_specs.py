"""Spec strings -> Spec values, and the one-line SpecError for everything else."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from apidrift.auditor.sources.specs import (
    DirectorySpec,
    IndexSpec,
    NameSpec,
    PathSpec,
    SpecError,
    normalize_name,
    parse_spec,
)


def test_exact_pin() -> None:
    spec = parse_spec("vllm==0.16.0")
    assert isinstance(spec, IndexSpec)
    assert spec.name == "vllm" and spec.key == "vllm"
    assert spec.pinned == Version("0.16.0")


def test_short_pin_means_full_version() -> None:
    spec = parse_spec("vllm==0.16")
    assert isinstance(spec, IndexSpec)
    assert spec.pinned == Version("0.16.0")
    assert spec.specifier.contains("0.16.0")


@pytest.mark.parametrize("text", ["vllm~=0.16.0", "vllm>=0.11,<0.12", "vllm==0.16.*", "vllm!=0.16.0"])
def test_ranges_are_not_pins(text: str) -> None:
    spec = parse_spec(text, "upstream")
    assert isinstance(spec, IndexSpec)
    assert spec.pinned is None


def test_arbitrary_equality_is_a_pin() -> None:
    spec = parse_spec("foo===1.0")
    assert isinstance(spec, IndexSpec) and spec.pinned == Version("1.0")


@pytest.mark.parametrize(
    ("text", "allowed"),
    [("x==1.0rc1", True), ("x>=2.0b1", True), ("x~=1.0", False), ("x!=1.0rc1", False), ("x>=1,<2", False)],
)
def test_prereleases_only_when_named(text: str, allowed: bool) -> None:
    spec = parse_spec(text)
    assert isinstance(spec, IndexSpec)
    assert spec.allows_prereleases is allowed


def test_extras_are_ignored_but_markers_refused() -> None:
    spec = parse_spec("vllm[audio]==0.16.0")
    assert isinstance(spec, IndexSpec) and spec.name == "vllm"
    with pytest.raises(SpecError, match="markers"):
        parse_spec('vllm==0.16.0; python_version > "3"')


def test_name_at_path(tmp_path: Path) -> None:
    spec = parse_spec(f"speculators@{tmp_path}")
    assert spec == PathSpec(name="speculators", path=tmp_path, text=f"speculators@{tmp_path}")
    home = parse_spec("foo@~/x.whl")
    assert isinstance(home, PathSpec) and home.path == Path("~/x.whl").expanduser()


def test_bare_name_keeps_spelling() -> None:
    spec = parse_spec("PyYAML", "upstream")
    assert isinstance(spec, NameSpec)
    assert spec.name == "PyYAML" and spec.key == "pyyaml"
    assert normalize_name("Scikit_Learn") == "scikit-learn"


@pytest.mark.parametrize("text", [".", "./src", "../proj", "~/code/proj", "some/dir", "/abs/dir"])
def test_directories_are_downstream_only(text: str) -> None:
    spec = parse_spec(text, "downstream")
    assert isinstance(spec, DirectorySpec)
    assert spec.path == Path(text).expanduser()
    with pytest.raises(SpecError, match="upstream"):
        parse_spec(text, "upstream")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "vllm==",
        "vllm=>1",
        "vllm==0.16.0 extra",
        "foo@",
        "bad name!@x.whl",
        "foo@https://h/x.whl",
        "foo@/tmp/a\x00b",
        "down\x00stream",
        "vllm==1.0\nrm -rf /",
        "foo\x1b[31m",
    ],
)
def test_errors_are_one_line_value_errors(text: str) -> None:
    with pytest.raises(SpecError) as info:
        parse_spec(text, "upstream")
    assert isinstance(info.value, ValueError)
    assert "\n" not in str(info.value) and str(info.value)


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("speculators=0.3.0", "speculators==0.3.0"),
        ("vllm = 0.16.0", "vllm==0.16.0"),
        ("vllm[audio]=0.16", "vllm[audio]==0.16"),
    ],
)
def test_a_single_equals_sign_suggests_the_pin(text: str, meant: str) -> None:
    for role in ("downstream", "upstream"):
        with pytest.raises(SpecError) as info:
            parse_spec(text, role)  # type: ignore[arg-type]
        assert (
            str(info.value)
            == f"cannot parse {text!r}: a version is pinned with `==`; did you mean {meant!r}?"
        )
    assert parse_spec(meant, "upstream").pinned is not None  # type: ignore[union-attr]
    with pytest.raises(SpecError, match="cannot parse 'vllm=>0.16'") as info:
        parse_spec("vllm=>0.16", "upstream")  # not a pin: packaging's own message
    assert "did you mean" not in str(info.value)
