"""The text, JSON and SARIF renderers against committed snapshots of one hand-built `AuditResult`.

Set APIDRIFT_UPDATE_SNAPSHOTS=1 to (re)write tests/snapshots/ after an intended change; review the diff.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from apidrift.auditor.core.results import (
    SCHEMA_VERSION,
    AuditResult,
    Classification,
    Coverage,
    FileOutcome,
    FileStatus,
    Finding,
    InputInfo,
    Location,
    Severity,
    UncheckedSite,
)
from apidrift.reports import RENDERERS, render
from apidrift.reports import json as json_report
from apidrift.reports import sarif as sarif_report
from apidrift.reports import text as text_report
from apidrift.rules.registry import all_rules, get_rule

SNAPSHOTS = Path(__file__).parents[1] / "snapshots"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

GENERATOR = "speculators/data_generation/vllm_hidden_states_generator.py"
NEW, OLD = "vllm==0.16.0", "vllm==0.15.1"
KV_CONFIG_NEW = "(vllm_config: VllmConfig, kv_cache_groups: list[KVCacheGroupSpec], available_memory: int) -> KVCacheConfig"
KV_CONFIG_OLD = (
    "(vllm_config: VllmConfig, kv_cache_groups: list[KVCacheGroupSpec], kv_cache_specs: dict[str, KVCacheSpec], "
    "available_memory: int) -> KVCacheConfig"
)
SCHEDULER_NEW = (
    "(vllm_config: VllmConfig, kv_cache_config: KVCacheConfig, structured_output_manager: StructuredOutputManager, "
    "block_size: int, mm_registry: MultiModalRegistry = MULTIMODAL_REGISTRY, include_finished_set: bool = False, "
    "log_stats: bool = False) -> None"
)


def at(
    path: str, line: int, column: int, source: str, end_column: int | None = None, end_line: int | None = None
) -> Location:
    """A location whose span defaults to the rest of the line's text from `column`."""
    return Location(
        path=path,
        line=line,
        column=column,
        end_line=end_line or line,
        end_column=end_column or len(source.rstrip()) + 1,
        source_line=source,
    )


def finding(code: str, message: str, location: Location, symbol: str, **details: Any) -> Finding:
    rule = get_rule(code)
    assert rule is not None, code
    details.setdefault("classification", Classification.DRIFT)
    return Finding(
        code=code,
        rule=rule.name,
        severity=details.pop("severity", rule.severity),
        message=message,
        location=location,
        symbol=symbol,
        upstream="vllm",
        **details,
    )


def flagship() -> AuditResult:
    """speculators 0.3.0 against vLLM 0.16.0 (written for 0.15.1): every rule fires once, AD102 twice."""
    findings = [
        finding(
            "AD101",
            f"get_kv_cache_config_from_groups() got an unexpected keyword argument `kv_cache_specs` in {NEW}",
            at(GENERATOR, 139, 13, "            kv_cache_specs=kv_cache_spec,", end_column=27),
            "vllm.v1.core.kv_cache_utils.get_kv_cache_config_from_groups",
            new_signature=KV_CONFIG_NEW,
            old_signature=KV_CONFIG_OLD,
            hint=f"remove `kv_cache_specs=`: {NEW} has no parameter of that name",
        ),
        finding(
            "AD102",
            f"Scheduler() is missing required argument `block_size` in {NEW}",
            # A call spanning several lines: the caret runs to the end of its first line.
            at(GENERATOR, 148, 26, "        self.scheduler = Scheduler(", end_line=153, end_column=10),
            "vllm.v1.core.sched.scheduler.Scheduler",
            new_signature=SCHEDULER_NEW,
            hint="pass `block_size: int`",
        ),
        finding(
            "AD102",
            f"SchedulerConfig() is missing required argument `is_encoder_decoder` in {NEW}",
            at(
                GENERATOR,
                194,
                32,
                "        scheduler_config = SchedulerConfig(max_num_seqs=1, max_model_len=max_len)",
            ),
            "vllm.config.scheduler.SchedulerConfig",
            new_signature="(max_model_len: int, is_encoder_decoder: bool, max_num_seqs: int = 128, **kwargs: Any) -> None",
            hint="pass `is_encoder_decoder: bool`",
        ),
        finding(
            "AD002",
            f"cannot import name `get_open_port` from `vllm.utils` ({NEW})",
            at(GENERATOR, 22, 24, "from vllm.utils import get_open_port"),
            "vllm.utils.get_open_port",
            hint="`get_open_port` is no longer defined in `vllm.utils`: import it from its new place",
        ),
        finding(
            "AD004",
            f"`GPUModelRunner` instances have no attribute `_dummy_sampler_run` in {NEW}",
            at(
                GENERATOR,
                231,
                9,
                "        self.model_runner._dummy_sampler_run(hidden_states)",
                end_column=46,
            ),
            "vllm.v1.worker.gpu_model_runner.GPUModelRunner._dummy_sampler_run",
            hint="`GPUModelRunner` no longer defines `_dummy_sampler_run` (nor do its bases)",
            classification=Classification.PRE_EXISTING,
        ),
        finding(
            "AD105",
            f"initialize_model() gets multiple values for `vllm_config` in {NEW}",
            at(
                GENERATOR,
                117,
                22,
                "        model = initialize_model(self.vllm_config, vllm_config=self.vllm_config)",
                end_column=81,
            ),
            "vllm.model_executor.model_loader.utils.initialize_model",
            new_signature="(vllm_config: VllmConfig, *, prefix: str = '', model_class: type[nn.Module] | None = None) -> nn.Module",
            old_signature="(*, vllm_config: VllmConfig, prefix: str = '', model_class: type[nn.Module] | None = None) -> nn.Module",
            hint="pass these arguments by keyword",
        ),
        finding(
            "AD001",
            f"module `vllm.worker.worker_base` does not exist in {NEW} (guarded: the code handles its absence)",
            at(
                "speculators/data_generation/compat.py",
                9,
                10,
                "    from vllm.worker.worker_base import WorkerWrapperBase",
                end_column=34,
            ),
            "vllm.worker.worker_base",
            severity=Severity.INFO,  # inside try/except ImportError
            hint=f"find where `vllm.worker.worker_base`'s contents moved in {NEW}, or pin the old version",
        ),
        finding(
            "AD003",
            f"module `vllm.envs` has no attribute `VLLM_USE_V1` in {NEW}",
            at("speculators/utils/vllm_utils.py", 17, 8, "    if envs.VLLM_USE_V1:", end_column=24),
            "vllm.envs.VLLM_USE_V1",
            hint="`VLLM_USE_V1` was removed from `vllm.envs` or moved elsewhere",
        ),
        finding(
            "AD103",
            f"KVCacheManager() gets too many positional arguments in {NEW}: takes 3, 4 given",
            at(
                "speculators/utils/vllm_utils.py",
                42,
                21,
                "    kv_cache_manager = KVCacheManager(config, max_len, True, caching_hash_fn)",
            ),
            "vllm.v1.core.kv_cache_manager.KVCacheManager",
            new_signature="(kv_cache_config: KVCacheConfig, max_model_len: int, *, enable_caching: bool = True) -> None",
            hint="pass the surplus arguments by keyword",
        ),
        finding(
            "AD104",
            f"get_tokenizer() takes `tokenizer_name` by position only in {NEW}",
            at(
                "speculators/utils/vllm_utils.py",
                58,
                29,
                "    tokenizer = get_tokenizer(tokenizer_name=model_path, trust_remote_code=True)",
                end_column=43,
            ),
            "vllm.transformers_utils.tokenizer.get_tokenizer",
            new_signature="(tokenizer_name: str | Path, /, *args: Any, **kwargs: Any) -> AnyTokenizer",
            hint="pass `tokenizer_name` positionally",
        ),
        finding(
            "AD106",
            f"`make_metavar` overrides `vllm.config.Param.make_metavar`, which {NEW} calls with (ctx: Context); "
            "the override takes ()",
            at("speculators/utils/vllm_utils.py", 71, 9, "    def make_metavar(self) -> str:", end_column=21),
            "vllm.config.Param.make_metavar",
            new_signature="(ctx: Context) -> str",
            hint="accept the new parameters: def make_metavar(self, ctx: Context, ...)",
        ),
        finding(
            "AD107",
            f"SamplingParams() raises ValueError in {NEW} when both `n` and `best_of` are passed, as here: "
            "'best_of is not supported' (`vllm.sampling_params._verify`, line 212)",
            at(
                "speculators/utils/vllm_utils.py",
                84,
                14,
                "    params = SamplingParams(n=1, best_of=1)",
                end_column=44,
            ),
            "vllm.sampling_params.SamplingParams",
            new_signature="(n=_UNSET, best_of=_UNSET)",
            hint="pass only one of `n`, `best_of`; an argument that repeats the old default can be left out",
        ),
        finding(
            "AD005",
            f"importing `vllm.entrypoints.cli` raises ImportError in {NEW} unless `fastapi` is installed, "
            "which the downstream's requirements do not provide: 'the CLI needs extra dependencies: "
            'pip install "vllm[cli]"\' (`vllm.entrypoints.cli`, line 12)',
            at("speculators/utils/vllm_utils.py", 9, 1, "import vllm.entrypoints.cli", end_column=28),
            "vllm.entrypoints.cli",
            hint="require `vllm[cli]`",
        ),
        finding(  # made up for the reports (a rule each): speculators assigns no such property
            "AD006",
            f"`vllm.v1.core.sched.scheduler.Scheduler.waiting_count` is a property without a setter in {NEW}: "
            "assigning it raises AttributeError",
            at(GENERATOR, 236, 9, "        self.scheduler.waiting_count = 0", end_column=37),
            "vllm.v1.core.sched.scheduler.Scheduler.waiting_count",
            hint="it could be set in vllm==0.15.1; set what the property reads instead, or stop assigning "
            "`waiting_count`",
        ),
        finding(
            "AD108",
            f"init_logger() always raises RuntimeError in {NEW}: 'init_logger() was removed; use "
            "vllm.logger.get_logger()' (`vllm.logger.init_logger`, line 41)",
            at(
                "speculators/utils/vllm_utils.py", 88, 14, "    logger = init_logger(__name__)", end_column=35
            ),
            "vllm.logger.init_logger",
            new_signature="(name)",
            hint="move to the replacement the message names",
        ),
        finding(
            "AD109",
            "`pytest_cmdline_preparse` in a `conftest.py` implements pytest's hook `pytest_cmdline_preparse`, "
            "which pytest==8.0.2 specified as `pytest_cmdline_preparse(config, args)` (`_pytest.hookspec`) and "
            "pytest==8.1.1 no longer does: registering the plugin raises PluginValidationError (unknown hook "
            "'pytest_cmdline_preparse')",
            at("tests/conftest.py", 12, 5, "def pytest_cmdline_preparse(config, args):", end_column=28),
            "_pytest.hookspec.pytest_cmdline_preparse",
            hint="implement the hook that replaces it ('Please use pytest_load_initial_conftests hook instead.')",
        ),
        finding(
            "AD201",
            f"resize(): positional arguments land in other parameters in {NEW} (argument 2 went to `size`, now to `scale`)",
            at("speculators/utils/vllm_utils.py", 80, 5, "    resize(image, 64)", end_column=22),
            "vllm.multimodal.image.resize",
            new_signature="(img, scale=1.0, size=None)",
            old_signature="(img, size, scale=1.0)",
            hint="pass `size=` by keyword to keep the old behaviour",
        ),
        finding(
            "AD202",
            f"CacheConfig(): the default of `enable_prefix_caching` changed from None to True in {NEW}",
            at(GENERATOR, 166, 24, "        cache_config = CacheConfig(", end_column=35),
            "vllm.config.CacheConfig",
            hint="pass `enable_prefix_caching=None` to keep the old behaviour",
        ),
        finding(
            "AD203",
            f"`vllm.v1.request.Request.eos_token_id` is deprecated in {NEW}: will be removed in v0.18",
            at(GENERATOR, 250, 13, "            request.eos_token_id", end_column=33),
            "vllm.v1.request.Request.eos_token_id",
            hint="move to the replacement the deprecation names",
        ),
        finding(
            "AD204",
            f"method `assertHiddenEqual` (vllm.testing.VllmTestCase.assertHiddenEqual in {OLD}) is defined by no vllm"
            f" class in {NEW}; only `unittest.TestCase`, outside vllm, could still provide it",
            at("tests/test_generator.py", 12, 9, "        self.assertHiddenEqual(a, b)", end_column=31),
            "vllm.testing.VllmTestCase.assertHiddenEqual",
            hint="use its replacement, or check that `unittest.TestCase` provides `assertHiddenEqual`",
        ),
        finding(
            "AD205",
            f"LLM() passes keyword-only parameter `tokenizer` positionally in {NEW}: this runs only through"
            " the decorator `vllm.utils.deprecate_args`, which warns (DeprecationWarning)",
            at("tests/test_generator.py", 20, 15, '        llm = LLM("model", "tok")', end_column=34),
            "vllm.entrypoints.llm.LLM",
            hint="pass `tokenizer` by keyword (tokenizer=...)",
        ),
        finding(
            "AD206",
            f"`num_tokens` is a method in {NEW}, no longer a value: the code uses it as a value of a kind,"
            " which a bound method is not (TypeError)",
            at(GENERATOR, 240, 20, "        total += request.num_tokens * 2", end_column=38),
            "vllm.v1.request.Request.num_tokens",
            classification=Classification.DRIFT,
            hint="call it: `request.num_tokens()`",
        ),
        finding(
            "AD301",
            "uses the private upstream name `_get_kv_cache_groups_uniform_spec` of `vllm.v1.core.kv_cache_utils`",
            at(GENERATOR, 16, 5, "    _get_kv_cache_groups_uniform_spec,", end_column=38),
            "vllm.v1.core.kv_cache_utils._get_kv_cache_groups_uniform_spec",
            classification=Classification.PRE_EXISTING,
            hint="private names carry no compatibility promise: prefer a public API or pin the upstream",
        ),
        finding(
            "AD302",
            f"`fused_add` is bound by nothing but `from vllm._C import *`, a compiled module whose names cannot be read ({NEW})",
            at("speculators/utils/vllm_utils.py", 90, 5, "    fused_add(x, y)", end_column=14),
            "vllm._C.fused_add",
            hint="import it by name: from vllm._C import fused_add",
        ),
        finding(
            "AD901",
            "cannot be parsed, so its uses of the upstream are not checked: SyntaxError: invalid syntax",
            at("speculators/legacy/broken.py", 12, 9, "    def (:", end_column=9),
            "",
            classification=None,
            hint="repair the file, or exclude it if it is not Python source",
        ),
    ]
    return AuditResult(
        downstream=InputInfo(
            "speculators",
            "0.3.0",
            "index",
            "speculators-0.3.0-py3-none-any.whl",
            sha256="ab" * 32,
            import_names=("speculators",),
        ),
        upstream=InputInfo(
            "vllm",
            "0.16.0",
            "index",
            "vllm-0.16.0-cp38-abi3-manylinux1_x86_64.whl",
            sha256="cd" * 32,
            import_names=("vllm",),
        ),
        old_upstream=InputInfo(
            "vllm",
            "0.15.1",
            "index",
            "vllm-0.15.1-cp38-abi3-manylinux1_x86_64.whl",
            sha256="ef" * 32,
            import_names=("vllm",),
            note="the version speculators 0.3.0 pins",
        ),
        # Deliberately out of order: the renderers sort.
        findings=findings,
        coverage=[
            Coverage(
                upstream="vllm",
                found=52,
                resolved=49,
                checked=47,
                not_checkable={"star-arguments": 2, "external-base:msgspec.Struct": 3},
                sites=[
                    UncheckedSite("speculators/train.py", 40, 5, "star-arguments", "Scheduler(*args, **kw)"),
                    UncheckedSite("speculators/train.py", 58, 9, "star-arguments", "build(**options)"),
                    UncheckedSite(
                        "speculators/config.py", 12, 7, "external-base:msgspec.Struct", "cfg.block_size"
                    ),
                    UncheckedSite(
                        "speculators/config.py", 30, 7, "external-base:msgspec.Struct", "cfg.dtype"
                    ),
                    UncheckedSite("speculators/config.py", 31, 7, "external-base:msgspec.Struct", "cfg.seed"),
                ],
            )
        ],
        files=[
            FileOutcome(GENERATOR, FileStatus.SCANNED, use_sites=31),
            FileOutcome("speculators/utils/vllm_utils.py", FileStatus.SCANNED, use_sites=14),
            FileOutcome("speculators/data_generation/compat.py", FileStatus.SCANNED, use_sites=7),
            FileOutcome("speculators/__init__.py", FileStatus.SKIPPED, "does not mention the upstream"),
            FileOutcome("speculators/models/eagle3.py", FileStatus.SKIPPED, "does not mention the upstream"),
            FileOutcome(
                "speculators/legacy/broken.py", FileStatus.FAILED, "syntax error: Syntax Error @ 12:5."
            ),
        ],
        notes=[
            (
                f"{NEW}: module vllm.model_executor.layers.fused_moe.configs could not be parsed (invalid syntax); "
                "its names are not checked"
            )
        ],
        timings={"fetch": 1.5, "scan": 0.25, "resolve": 0.75, "rules": 0.125},
        tool_version="0.1.0",
    )


def empty_result() -> AuditResult:
    return AuditResult(
        downstream=InputInfo("mypkg", None, "directory", "/home/user/src/mypkg"),
        upstream=InputInfo("vllm", "0.16.0", "index", "vllm-0.16.0.tar.gz"),
        coverage=[Coverage(upstream="vllm", found=3, resolved=3, checked=3)],
        files=[FileOutcome("mypkg/core.py", FileStatus.SCANNED, use_sites=3)],
        tool_version="0.1.0",
    )


def check_snapshot(name: str, actual: str) -> None:
    """Compare with tests/snapshots/<name>, or rewrite it when APIDRIFT_UPDATE_SNAPSHOTS=1."""
    path = SNAPSHOTS / name
    if os.environ.get("APIDRIFT_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual, encoding="utf-8", newline="\n")
        return
    if not path.exists():
        pytest.fail(f"no snapshot {path}; create it with APIDRIFT_UPDATE_SNAPSHOTS=1")
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, (
        f"{name} differs from its snapshot; if intended, rerun with APIDRIFT_UPDATE_SNAPSHOTS=1"
    )


@pytest.fixture(scope="module")
def result() -> AuditResult:
    return flagship()


def test_fixture_exercises_every_rule(result: AuditResult) -> None:
    assert {f.code for f in result.findings} == {rule.code for rule in all_rules()}
    assert any(f.severity is Severity.INFO for f in result.findings)
    assert any(f.old_signature and f.classification for f in result.findings)
    assert any(f.status == "failed" for f in result.files)


# ---- snapshots and the registry


@pytest.mark.parametrize(
    ("fmt", "snapshot"), [("text", "flagship.txt"), ("json", "flagship.json"), ("sarif", "flagship.sarif")]
)
def test_snapshot(result: AuditResult, fmt: str, snapshot: str) -> None:
    check_snapshot(snapshot, render(result, fmt))


def test_text_lists_each_unchecked_site_under_its_reason_when_asked(result: AuditResult) -> None:
    plain = render(result, "text")
    assert "speculators/train.py:40:5" not in plain  # only counted, by default
    listed = render(result, "text", show_unchecked=True)
    block = listed[listed.index("  not checkable:") :]
    assert (
        "  external-base:msgspec.Struct (3):\n"
        "    speculators/config.py:12:7  cfg.block_size\n"
        "    speculators/config.py:30:7  cfg.dtype\n"
        "    speculators/config.py:31:7  cfg.seed\n"
        "  star-arguments (2):\n"
        "    speculators/train.py:40:5  Scheduler(*args, **kw)\n"
        "    speculators/train.py:58:9  build(**options)\n"
    ) in block


def test_html_and_json_list_each_unchecked_site(result: AuditResult) -> None:
    page = render(result, "html")
    assert "Where the 5 not-checkable uses of vllm are" in page
    assert "<code>speculators/config.py:12:7</code> <code>cfg.block_size</code>" in page
    data = json.loads(render(result, "json"))
    assert data["coverage"][0]["sites"][0] == {
        "path": "speculators/train.py",
        "line": 40,
        "column": 5,
        "reason": "star-arguments",
        "code": "Scheduler(*args, **kw)",
        "cell": None,
    }


def test_snapshot_text_in_color(result: AuditResult) -> None:
    check_snapshot("flagship-color.txt", text_report.render(result, color=True))


def test_snapshot_text_without_findings() -> None:
    check_snapshot("clean.txt", render(empty_result(), "text"))


def test_registry() -> None:
    assert set(RENDERERS) >= {"text", "json", "sarif", "html", "github", "markdown"}
    assert RENDERERS["json"] is json_report.render
    with pytest.raises(ValueError, match="unknown report format 'xml'"):
        render(empty_result(), "xml")


def test_renderers_are_pure(result: AuditResult) -> None:
    before = json.dumps(result.as_dict())
    for renderer in RENDERERS.values():
        assert renderer(result) == renderer(result)
        assert renderer(result).endswith("\n")
    assert json.dumps(result.as_dict()) == before


# ---- text


def test_text_header_and_caret(result: AuditResult) -> None:
    lines = render(result, "text").splitlines()
    header = f"{GENERATOR}:139:13: AD101 [error, drift] get_kv_cache_config_from_groups() got an unexpected keyword"
    i = next(i for i, line in enumerate(lines) if line.startswith(header))
    assert lines[i + 1] == "   139 |             kv_cache_specs=kv_cache_spec,"
    assert lines[i + 2] == "       |             " + "^" * len("kv_cache_specs")
    assert lines[i + 3] == f"  new: {KV_CONFIG_NEW}"
    assert lines[i + 4] == f"  old: {KV_CONFIG_OLD}"
    assert lines[i + 5].startswith("  hint: remove `kv_cache_specs=`")


def test_text_multiline_span_marks_to_end_of_line(result: AuditResult) -> None:
    lines = render(result, "text").splitlines()
    i = lines.index("   148 |         self.scheduler = Scheduler(")
    assert lines[i + 1] == "       |" + " " * 26 + "^" * len("Scheduler(")
    assert lines[i + 2].startswith("  new: ")
    assert lines[i + 3].startswith("  hint: ")  # no old signature: no `old:` line


def test_text_order_grouped_by_file(result: AuditResult) -> None:
    headers = [
        line.split(" ", 1)[0]
        for line in render(result, "text").splitlines()
        if re.match(r"\S+:\d+:\d+: AD", line)
    ]
    keys = [(path, int(line), int(col)) for path, line, col, _ in (h.split(":") for h in headers)]
    assert keys == sorted(keys)
    assert len(keys) == len(result.findings)


def test_text_summary(result: AuditResult) -> None:
    out = render(result, "text")
    assert "  downstream:   speculators==0.3.0 (index: speculators-0.3.0-py3-none-any.whl)" in out
    assert (
        "  old upstream: vllm==0.15.1 (index: vllm-0.15.1-cp38-abi3-manylinux1_x86_64.whl): the version"
        in out
    )
    assert "Findings: 18 errors, 5 warnings, 2 info (drift 22, pre-existing 2)" in out
    assert "  note: vllm==0.16.0: module vllm.model_executor.layers.fused_moe.configs" in out
    assert "Coverage of vllm: 52 use sites found, 49 resolved, 47 checked, 5 not checkable" in out
    assert "  not checkable: external-base:msgspec.Struct 3, star-arguments 2" in out  # most frequent first
    assert "Files: 3 scanned, 2 skipped, 1 failed" in out
    assert "  failed: speculators/legacy/broken.py: syntax error: Syntax Error @ 12:5." in out
    assert "[info, drift] module `vllm.worker.worker_base` does not exist" in out
    assert out.endswith("\nFound 18 errors (5 warnings, 2 info).\n")


def test_text_input_note_said_once() -> None:
    noted = empty_result()
    noted.downstream = replace(noted.downstream, note="no version given: audited the folder as it is")
    assert "mypkg (directory: /home/user/src/mypkg): no version given" in render(noted, "text")
    noted.notes.append("no version given: audited the folder as it is")  # as the engine does
    out = render(noted, "text")
    assert out.count("no version given") == 1 and "  note: no version given" in out


def test_text_plain_unless_color(result: AuditResult) -> None:
    plain = render(result, "text")
    colored = text_report.render(result, color=True)
    assert "\x1b[" not in plain
    assert "\x1b[31m" in colored
    assert ANSI.sub("", colored) == plain
    assert render(result, "text", color=True) == colored


def test_text_clean_and_singular() -> None:
    clean = empty_result()
    assert render(clean, "text").endswith("\nNo breaking changes found.\n")
    one = flagship()
    one.findings = one.findings[:1]
    assert render(one, "text").endswith("\nFound 1 error (0 warnings, 0 info).\n")


def test_caret_keeps_tabs_and_stays_in_the_line() -> None:
    tabbed = Location("a.py", 3, 3, 3, 6, "\t\tfoo(x)")
    assert text_report.caret_line(tabbed) == "\t\t^^^"
    past_end = Location("a.py", 1, 5, 1, 99, "abc = 1")
    assert text_report.caret_line(past_end) == "    ^^^"
    empty_span = Location("a.py", 1, 2, 1, 2, "x(y)")
    assert text_report.caret_line(empty_span) == " ^"


# ---- JSON


def test_json_round_trips(result: AuditResult) -> None:
    data = json.loads(render(result, "json"))
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["tool"] == {"name": "apidrift", "version": "0.1.0"}
    assert [f["code"] for f in data["findings"]] == [f.code for f in result.findings]
    assert data["findings"] == [f.as_dict() for f in result.findings]
    assert data["summary"] == {"error": 18, "warning": 5, "info": 2}
    assert data["coverage"][0]["not_checkable"] == {"star-arguments": 2, "external-base:msgspec.Struct": 3}
    assert {k: v for k, v in data.items() if k != "rules"} == json.loads(json.dumps(result.as_dict()))


def test_json_rules_are_those_that_fired(result: AuditResult) -> None:
    rules = json.loads(render(result, "json"))["rules"]
    assert [r["code"] for r in rules] == [r.code for r in all_rules()]  # registry order
    assert all(set(r) == {"code", "name", "severity", "summary", "family"} for r in rules)
    assert json.loads(render(empty_result(), "json"))["rules"] == []


# ---- SARIF


@pytest.fixture(scope="module")
def log(result: AuditResult) -> dict[str, Any]:
    return json.loads(render(result, "sarif"))


def test_sarif_run_and_rules(log: dict[str, Any]) -> None:
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("apidrift", "0.1.0")
    assert driver["informationUri"].startswith("https://")
    assert len(driver["rules"]) == len(all_rules())
    for descriptor, rule in zip(driver["rules"], all_rules()):
        assert descriptor["id"] == rule.code and descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"] == rule.section("What it does") != ""
        assert descriptor["help"]["markdown"] == rule.docs
        assert descriptor["helpUri"].endswith(f"#rule-{rule.code.lower()}")
        level = {"error": "error", "warning": "warning", "info": "note"}[rule.severity.value]
        assert descriptor["defaultConfiguration"]["level"] == level
        assert rule.family.value in descriptor["properties"]["tags"]
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is True
    levels = [n["level"] for n in invocation["toolExecutionNotifications"]]
    assert levels == ["note", "warning"]  # the note, then the failed file
    assert run["properties"]["coverage"][0]["notCheckable"] == {
        "external-base:msgspec.Struct": 3,
        "star-arguments": 2,
    }
    assert run["properties"]["files"] == {"scanned": 3, "skipped": 2, "failed": 1}
    assert "SRCROOT" in run["originalUriBaseIds"]


def test_sarif_results(result: AuditResult, log: dict[str, Any]) -> None:
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert len(run["results"]) == len(result.findings)
    for sarif_result, finding in zip(run["results"], result.findings):
        assert rules[sarif_result["ruleIndex"]]["id"] == sarif_result["ruleId"] == finding.code
        assert (
            sarif_result["level"]
            == {"error": "error", "warning": "warning", "info": "note"}[finding.severity.value]
        )
        assert sarif_result["message"]["text"].startswith(finding.message)
        assert f"Hint: {finding.hint}" in sarif_result["message"]["text"]
        physical = sarif_result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": finding.location.path, "uriBaseId": "SRCROOT"}
        region = physical["region"]
        loc = finding.location
        assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == (
            loc.line,
            loc.column,
            loc.end_line,
            loc.end_column,
        )
        assert sarif_result["properties"]["symbol"] == finding.symbol
        assert sarif_result["properties"]["sourceLine"] == loc.source_line
        assert sarif_result["partialFingerprints"]["apidriftFingerprint/v1"].endswith(":1")
    first = run["results"][0]
    assert first["locations"][0]["physicalLocation"]["region"]["snippet"] == {"text": "kv_cache_specs"}
    assert first["locations"][0]["physicalLocation"]["contextRegion"]["snippet"] == {
        "text": "            kv_cache_specs=kv_cache_spec,"
    }
    assert first["properties"]["classification"] == "drift"
    assert first["properties"]["oldSignature"] == KV_CONFIG_OLD
    assert "oldSignature" not in run["results"][1]["properties"]


def test_sarif_fingerprints(result: AuditResult) -> None:
    original = result.findings[0]
    moved_loc = replace(
        original.location, line=original.location.line + 7, end_line=original.location.end_line + 7
    )
    moved = replace(original, location=moved_loc)
    other_symbol = replace(original, symbol="vllm.v1.core.kv_cache_utils.get_kv_cache_configs")
    assert sarif_report.fingerprint(moved) == sarif_report.fingerprint(original)
    assert sarif_report.fingerprint(other_symbol) != sarif_report.fingerprint(original)
    # The same line twice in one file: distinct fingerprints, numbered in file order.
    twin = replace(original, location=moved_loc)
    assert sarif_report.fingerprints_of([twin, original]) == [
        f"{sarif_report.fingerprint(original)}:2",
        f"{sarif_report.fingerprint(original)}:1",
    ]


def test_sarif_uris_are_relative_and_encoded() -> None:
    assert sarif_report.artifact_location("pkg/my module.py") == {
        "uri": "pkg/my%20module.py",
        "uriBaseId": "SRCROOT",
    }
    assert sarif_report.artifact_location("/abs/x.py")["uri"] == "abs/x.py"
    srcroot = json.loads(render(empty_result(), "sarif"))["runs"][0]["originalUriBaseIds"]["SRCROOT"]
    assert srcroot["uri"] == "file:///home/user/src/mypkg/"


def test_sarif_region_guards() -> None:
    whole_line = sarif_report.physical_location(Location("a.py", 1, 1, 1, 9, "import x"))
    assert whole_line["region"]["snippet"] == {"text": "import x"}
    assert "contextRegion" not in whole_line  # it must be strictly larger than the region
    inverted = sarif_report.physical_location(Location("a.py", 4, 9, 2, 3, "code"))["region"]
    assert inverted["endLine"] >= inverted["startLine"] and inverted["endColumn"] >= inverted["startColumn"]


# ---- SARIF structure by hand: the required properties of the 2.1.0 schema that we emit

LEVELS = {"none", "note", "warning", "error"}
URI_REFERENCE = re.compile(r"^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$")


def _message(obj: dict[str, Any]) -> None:
    assert isinstance(obj["text"], str) and obj["text"]


def _region(region: dict[str, Any]) -> None:
    for key in ("startLine", "startColumn", "endLine", "endColumn"):
        assert isinstance(region[key], int) and region[key] >= 1, key
    assert region["endLine"] >= region["startLine"]
    if region["endLine"] == region["startLine"]:
        assert region["endColumn"] >= region["startColumn"]


def _artifact_location(location: dict[str, Any], base_ids: dict[str, Any]) -> None:
    uri = location["uri"]
    assert URI_REFERENCE.match(uri) and not uri.startswith("/") and ":" not in uri.split("/")[0], uri
    assert location["uriBaseId"] in base_ids


def test_sarif_required_properties(log: dict[str, Any]) -> None:
    assert set(log) == {"$schema", "version", "runs"}
    for run in log["runs"]:
        driver = run["tool"]["driver"]
        assert driver["name"]
        ids = [rule["id"] for rule in driver["rules"]]
        assert len(ids) == len(set(ids))
        for rule in driver["rules"]:
            assert rule["id"] != rule["name"]  # SARIF1001
            assert rule["defaultConfiguration"]["level"] in LEVELS
            for key in ("shortDescription", "fullDescription", "help"):
                _message(rule[key])
            assert rule["helpUri"].startswith("https://")
        base_ids = run["originalUriBaseIds"]
        for entry in base_ids.values():
            assert "uriBaseId" not in entry
            assert "uri" not in entry or (entry["uri"].startswith("file:///") and entry["uri"].endswith("/"))
        for invocation in run["invocations"]:
            assert isinstance(invocation["executionSuccessful"], bool)
            for notification in invocation.get("toolExecutionNotifications", []):
                _message(notification["message"])
                assert notification["level"] in LEVELS
                for location in notification.get("locations", []):
                    _artifact_location(location["physicalLocation"]["artifactLocation"], base_ids)
        for result in run["results"]:
            _message(result["message"])
            assert result["message"]["text"].endswith(".")
            assert result["level"] in LEVELS
            assert 0 <= result["ruleIndex"] < len(ids) and ids[result["ruleIndex"]] == result["ruleId"]
            assert all(isinstance(v, str) for v in result["partialFingerprints"].values())
            for location in result["locations"]:
                physical = location["physicalLocation"]
                _artifact_location(physical["artifactLocation"], base_ids)
                _region(physical["region"])
                if "contextRegion" in physical:
                    _region(physical["contextRegion"])


def test_sarif_against_official_schema(log: dict[str, Any]) -> None:
    """Only where the schema file is at hand: APIDRIFT_SARIF_SCHEMA=/path/to/sarif-schema-2.1.0.json."""
    schema_file = Path(os.environ.get("APIDRIFT_SARIF_SCHEMA") or "/nonexistent")
    if not schema_file.is_file():
        pytest.skip("APIDRIFT_SARIF_SCHEMA does not name the SARIF 2.1.0 schema file")
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:10])
