"""The flagship case of FLAGSHIP.md, for real: speculators 0.3.0 against vLLM from the package index.

Runs as a user would (`apidrift audit ... --format json`), in-process through the CLI's `main`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apidrift.auditor.cli.main import main

pytestmark = [pytest.mark.network, pytest.mark.flagship]

GENERATOR = "src/speculators/data_generation/vllm_hidden_states_generator.py"  # relative to the sdist's root


@pytest.fixture(scope="module")
def cache_dir(index_cache: Path) -> Path:
    return index_cache


def run_audit(cache_dir: Path, tmp_path: Path, against: str, *extra: str) -> tuple[int, dict]:
    output = tmp_path / "report.json"
    status = main(
        [
            "audit",
            "speculators==0.3.0",
            "--against",
            against,
            "--format",
            "json",
            "--output",
            str(output),
            "--cache-dir",
            str(cache_dir),
            *extra,
        ]
    )
    return status, json.loads(output.read_text())


def errors(report: dict) -> list[tuple[str, int, str, str]]:
    return sorted(
        (f["location"]["path"], f["location"]["line"], f["code"], f["message"])
        for f in report["findings"]
        if f["severity"] == "error"
    )


def test_vllm_0_16_breaks_three_call_sites(cache_dir: Path, tmp_path: Path) -> None:
    status, report = run_audit(cache_dir, tmp_path, "vllm==0.16.0")
    assert status == 1
    found = errors(report)
    assert [(path, line, code) for path, line, code, _ in found] == [
        # kv_cache_specs= (line 139) of the call get_kv_cache_config_from_groups( at 136, where CPython
        # 3.11 to 3.13 raise the TypeError (checked on this file's own statement)
        (GENERATOR, 136, "AD101"),
        (GENERATOR, 148, "AD102"),  # Scheduler(...) lacks block_size
        (GENERATOR, 194, "AD102"),  # SchedulerConfig(...) lacks is_encoder_decoder
    ]
    messages = " ".join(message for *_, message in found)
    for name in ("kv_cache_specs", "block_size", "is_encoder_decoder"):
        assert f"`{name}`" in messages
    by_line = {f["location"]["line"]: f for f in report["findings"]}
    assert "block_size: int" in by_line[148]["new_signature"]
    assert "block_size: int" in by_line[148]["hint"]
    assert "kv_cache_specs" not in by_line[136]["new_signature"]
    assert (
        by_line[136]["location"]["source_line"].strip()
        == "kv_cache_config = get_kv_cache_config_from_groups("
    )
    assert report["upstream"]["version"] == "0.16.0" and report["upstream"]["sha256"]
    coverage = report["coverage"][0]
    assert coverage["found"] >= 50 and coverage["checked"] >= 0.9 * coverage["found"]


def test_old_version_is_inferred_and_the_breaks_are_drift(cache_dir: Path, tmp_path: Path) -> None:
    _, report = run_audit(cache_dir, tmp_path, "vllm==0.16.0")
    assert report["old_upstream"]["version"] == "0.11.0"
    assert any("vllm==0.11.0" in note and "datagen" in note for note in report["notes"])
    breaks = [f for f in report["findings"] if f["severity"] == "error"]
    assert [f["classification"] for f in breaks] == ["drift", "drift", "drift"]
    by_line = {f["location"]["line"]: f for f in breaks}
    assert "kv_cache_specs" in by_line[136]["old_signature"]
    assert "block_size" not in by_line[148]["old_signature"]
    assert "after `structured_output_manager`" in by_line[148]["hint"]


def test_vllm_0_17_adds_the_eos_token_id_keyword(cache_dir: Path, tmp_path: Path) -> None:
    status, report = run_audit(cache_dir, tmp_path, "vllm==0.17.0")
    assert status == 1
    assert [(line, code) for _, line, code, _ in errors(report)] == [
        (136, "AD101"),
        (148, "AD102"),
        (194, "AD102"),
        (234, "AD101"),  # eos_token_id= (line 241) of `req = Request(` at 234
    ]
    assert "`eos_token_id`" in errors(report)[-1][3]


def test_vllm_0_11_the_version_it_was_built_for_is_clean(cache_dir: Path, tmp_path: Path) -> None:
    status, report = run_audit(cache_dir, tmp_path, "vllm==0.11.0")
    assert status == 0
    assert errors(report) == []


def test_second_run_needs_no_network(cache_dir: Path, tmp_path: Path) -> None:
    run_audit(cache_dir, tmp_path, "vllm==0.16.0")
    status, report = run_audit(
        cache_dir, tmp_path, "vllm==0.16.0", "--offline", "--index-url", "http://127.0.0.1:9/"
    )
    assert status == 1
    assert len(errors(report)) == 3
