"""Which upstream version the downstream was written for, when `--from` does not say."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from apidrift.auditor.sources.written_for import choose_old, downstream_environment


def test_a_pin_in_an_extra_is_the_old_version() -> None:
    choice = choose_old(None, "vllm", "speculators==0.3.0", ('vllm==0.11.0; extra == "datagen"',), "0.16.0")
    assert choice.spec == "vllm==0.11.0"
    assert "pins `vllm==0.11.0" in choice.note and "extra `datagen`" in choice.note


def test_a_range_gives_its_highest_version_below_the_target() -> None:
    choice = choose_old(
        None, "huggingface_hub", "transformers==4.57.1", ("huggingface-hub<1.0,>=0.34.0",), "0.35.3"
    )
    assert choice.spec == "huggingface_hub<1.0,>=0.34.0,<0.35.3"
    assert "below 0.35.3" in choice.note


def test_explicit_and_none() -> None:
    assert choose_old("pkg==1.0", "pkg", "down", (), "2.0").spec == "pkg==1.0"
    assert choose_old("none", "pkg", "down", ("pkg==1.0",), "2.0").spec is None


def test_no_requirement_and_not_installed_means_no_old_version() -> None:
    choice = choose_old(None, "surely-not-installed-anywhere", "down", ("other==1.0",), "2.0")
    assert choice.spec is None and "declares no requirement" in choice.note


def _fake_env(prefix: Path, name: str, version: str) -> Path:
    """A virtualenv-shaped folder with one installed distribution's metadata (nothing importable)."""
    info = prefix / "lib" / "python3.12" / "site-packages" / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (prefix / "bin").mkdir()
    (prefix / "bin" / "python").write_text("")
    return prefix


def test_apidrifts_own_environment_is_never_the_version_written_for(monkeypatch: pytest.MonkeyPatch) -> None:
    # click is apidrift's own dependency, installed where this runs: it says nothing about the downstream
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    choice = choose_old(None, "click", "down", (), "8.2.0", downstream_environment(None))
    assert choice.spec is None and "no old version known" in choice.note
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # apidrift's own venv, activated
    assert downstream_environment(None) is None


def test_the_downstreams_environment_gives_the_version_but_never_the_target_or_newer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _fake_env(tmp_path / "venv", "click", "8.1.7")
    choice = choose_old(None, "click", "down", (), "8.2.0", downstream_environment(env / "bin" / "python"))
    assert choice.spec == "click==8.1.7" and "--python" in choice.note
    monkeypatch.setenv("VIRTUAL_ENV", str(env))
    choice = choose_old(None, "click", "down", (), "8.2.0", downstream_environment(None))
    assert choice.spec == "click==8.1.7" and "active virtualenv" in choice.note
    newer = _fake_env(tmp_path / "newer", "click", "8.5.1")
    choice = choose_old(None, "click", "down", (), "8.2.0", downstream_environment(newer))
    assert choice.spec is None and "not older than the target 8.2.0" in choice.note


def test_a_pin_equal_to_the_target_is_no_old_version() -> None:
    choice = choose_old(None, "pkg", "down", ("pkg==2.0",), "2.0")
    assert choice.spec is None and "not older than the target" in choice.note
