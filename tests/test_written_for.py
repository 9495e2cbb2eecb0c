"""Which upstream version the downstream was written for, when `--from` does not say."""

from __future__ import annotations

from apidrift.auditor.sources.written_for import choose_old


def test_a_pin_in_an_extra_is_the_old_version() -> None:
    choice = choose_old(None, "vllm", "speculators==0.3.0", ('vllm==0.11.0; extra == "datagen"',), "0.16.0")
    assert choice.spec == "vllm==0.11.0"
    assert "pins `vllm==0.11.0" in choice.note and "extra `datagen`" in choice.note


def test_a_range_gives_its_highest_version_below_the_target() -> None:
    choice = choose_old(None, "huggingface_hub", "transformers==4.57.1", ("huggingface-hub<1.0,>=0.34.0",), "0.35.3")
    assert choice.spec == "huggingface_hub<1.0,>=0.34.0,<0.35.3"
    assert "below 0.35.3" in choice.note


def test_explicit_and_none() -> None:
    assert choose_old("pkg==1.0", "pkg", "down", (), "2.0").spec == "pkg==1.0"
    assert choose_old("none", "pkg", "down", ("pkg==1.0",), "2.0").spec is None


def test_no_requirement_and_not_installed_means_no_old_version() -> None:
    choice = choose_old(None, "surely-not-installed-anywhere", "down", ("other==1.0",), "2.0")
    assert choice.spec is None and "declares no requirement" in choice.note
