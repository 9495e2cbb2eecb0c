"""The composite action's mode choice (action.yml): its audit step run under bash as the runner would,
with real inputs, in real git repositories whose base and head commits differ."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from apidrift.auditor.sources.lockfiles import _main as lockfiles_main
from apidrift.auditor.sources.lockfiles import changed_lock_files, is_read_by_bump

ROOT = Path(__file__).resolve().parents[2]
BUMP_DATA = Path(__file__).parents[1] / "data" / "bump"

NEW_PKG = "def get_config(vllm_config, available_memory):\n    return None\n"
CODE = "import pkg\n\npkg.get_config(1, 2, kv_cache_specs=3)\n"


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}  # fmt: skip
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def _repo(root: Path, *, lock_changes: bool, code: str = CODE) -> tuple[Path, str]:
    """A project whose base commit pins the old uv.lock and whose head commit changes its code and, when
    `lock_changes`, its uv.lock (click 8.1.8 -> 8.2.0, idna 3.7 -> 3.6, six removed, attrs added).
    Returns the project and the base commit."""
    project = root / "project"
    (project / "app").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[project]\nname = "app"\nversion = "1.0"\n')
    (project / "app" / "__init__.py").write_text("")
    shutil.copy(BUMP_DATA / "old" / "uv.lock", project / "uv.lock")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")
    base = _git(project, "rev-parse", "HEAD")
    _git(project, "checkout", "-q", "-b", "topic")
    (project / "app" / "__init__.py").write_text(code)
    (project / "docs").mkdir()
    (project / "docs" / "requirements.txt").write_text("sphinx==8.0.0\n")  # not a file bump reads
    if lock_changes:
        shutil.copy(BUMP_DATA / "new" / "uv.lock", project / "uv.lock")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "head")
    return project, base


class _StrictLoader(yaml.SafeLoader):
    """YAML as GitHub reads action.yml: a key given twice is an error (PyYAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
        twice = sorted({str(k) for k in keys if keys.count(k) > 1})
        if twice:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate keys {twice}", node.start_mark)
        return super().construct_mapping(node, deep=deep)


def _action() -> dict:
    return yaml.load((ROOT / "action.yml").read_text(), Loader=_StrictLoader)


def test_action_inputs_and_outputs() -> None:
    action = _action()
    assert action["inputs"]["mode"]["default"] == "auto" and action["inputs"]["base"]["default"] == ""
    assert action["outputs"]["mode"]["value"] == "${{ steps.audit.outputs.mode }}"
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == "audit"]
    assert step["env"]["MODE"] == "${{ inputs.mode }}" and step["env"]["BASE"] == "${{ inputs.base }}"
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate keys"):
        yaml.load("a: 1\na: 2\n", Loader=_StrictLoader)


def _step() -> dict:
    action = _action()
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == "audit"]
    return step


def _env(tmp: Path, project: Path, *, event: str, base: str | None, **inputs: str) -> dict[str, str]:
    runner_temp = tmp / "runner"
    (runner_temp / "apidrift-venv" / "bin").mkdir(parents=True, exist_ok=True)
    installed = Path(sys.executable).parent / "apidrift"
    assert installed.exists(), "the apidrift console script is not installed beside this Python"
    # as the action's own virtual environment: its apidrift and its python (a wrapper, so that the
    # environment's packages stay importable)
    for name, target in (("apidrift", installed), ("python", Path(sys.executable))):
        wrapper = runner_temp / "apidrift-venv" / "bin" / name
        wrapper.write_text(f'#!/bin/sh\nexec "{target}" "$@"\n')
        wrapper.chmod(0o755)
    payload = tmp / "event.json"
    payload.write_text(json.dumps({"pull_request": {"base": {"sha": base, "ref": "main"}}} if base else {}))
    for name in ("summary.md", "output"):
        (tmp / name).unlink(missing_ok=True)
    (tmp / "apidrift.sarif").unlink(missing_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("GITHUB_")}
    env.update({
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
        "GITHUB_OUTPUT": str(tmp / "output"),
        "GITHUB_WORKSPACE": str(project),
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(payload),
        "GITHUB_BASE_REF": "main" if event == "pull_request" else "",
        "MODE": "auto", "BASE": "", "DOWNSTREAM": str(project), "AGAINST": "", "FROM": "", "FAIL_ON": "",
        "BASELINE": "", "SARIF_FILE": str(tmp / "apidrift.sarif"), "HTML_FILE": "",
        "EXTRA_ARGS": f"--offline --cache-dir '{tmp / 'cache'}' --quiet",
    })  # fmt: skip
    env.update(inputs)
    return env


def _run(env: dict[str, str], cwd: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    # as the runner runs a composite action's bash step
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _step()["run"]], env=env,
                          cwd=cwd, capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    output = Path(env["GITHUB_OUTPUT"])
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines()) if output.exists() else {}
    return done, outputs


def _upstream(tmp: Path) -> str:
    (tmp / "new" / "pkg").mkdir(parents=True, exist_ok=True)
    (tmp / "new" / "pkg" / "__init__.py").write_text(NEW_PKG)
    return f"pkg@{tmp / 'new'}"


def test_a_pull_request_changing_a_lock_file_runs_bump(tmp_path: Path) -> None:
    project, base = _repo(tmp_path, lock_changes=True, code="import os\n")
    env = _env(tmp_path, project, event="pull_request", base=base, AGAINST=_upstream(tmp_path))
    done, outputs = _run(env, project)
    assert done.returncode == 0, done.stderr
    assert outputs == {"mode": "bump", "exit-code": "0"}
    assert (
        "::notice title=apidrift::the pull request changes uv.lock: checking the dependency bump"
        in done.stdout
    )
    assert "::notice title=apidrift::the against input applies to audit mode" in done.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("### apidrift: dependency bump of ")
    assert "click" in summary and "8.1.8" in summary and "8.2.0" in summary
    sarif = json.loads((tmp_path / "apidrift.sarif").read_text())
    assert sarif["runs"][0]["results"] == []
    # the bump compared with the base commit, from git, without checking it out
    assert _git(project, "rev-parse", "--abbrev-ref", "HEAD") == "topic"


def test_the_base_branch_is_used_when_the_payload_has_no_base_commit(tmp_path: Path) -> None:
    project, _ = _repo(tmp_path, lock_changes=True, code="import os\n")
    _git(project, "update-ref", "refs/remotes/origin/main", "main")  # what fetching the base branch gives
    done, outputs = _run(_env(tmp_path, project, event="pull_request", base=None), project)
    assert done.returncode == 0, done.stderr
    assert outputs == {"mode": "bump", "exit-code": "0"}


def test_a_shallow_checkout_of_the_merge_commit_fetches_the_base(tmp_path: Path) -> None:
    """As actions/checkout leaves a pull request: only its merge commit, one deep, the base commit absent
    (here fetched from a local `origin`, so no network)."""
    origin, base = _repo(tmp_path, lock_changes=True, code="import os\n")
    _git(origin, "checkout", "-q", "-b", "merge", "main")
    _git(origin, "merge", "-q", "--no-ff", "-m", "merge", "topic")
    merge = _git(origin, "rev-parse", "HEAD")
    _git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")
    work = tmp_path / "work"
    work.mkdir()
    _git(work, "init", "-q")
    _git(work, "remote", "add", "origin", f"file://{origin}")
    _git(work, "fetch", "-q", "--no-tags", "--depth=1", "origin", f"+{merge}:refs/remotes/pull/1/merge")
    _git(work, "checkout", "-q", "--detach", merge)
    assert subprocess.run(
        ["git", "cat-file", "-e", f"{base}^{{commit}}"], cwd=work, capture_output=True, check=False
    ).returncode
    env = _env(tmp_path, work, event="pull_request", base=base)
    done, outputs = _run(env, work)
    assert done.returncode == 0, done.stderr
    assert outputs == {"mode": "bump", "exit-code": "0"}
    assert "the pull request changes uv.lock" in done.stdout
    assert "click" in (tmp_path / "summary.md").read_text()


def test_a_pull_request_without_a_lock_change_runs_the_audit(tmp_path: Path) -> None:
    project, base = _repo(tmp_path, lock_changes=False)
    env = _env(tmp_path, project, event="pull_request", base=base, AGAINST=_upstream(tmp_path))
    done, outputs = _run(env, project)
    assert done.returncode == 0, done.stderr  # findings do not fail this step: the action's last step does
    assert outputs == {"mode": "audit", "exit-code": "1"}
    assert "::error file=app/__init__.py,line=3," in done.stdout and "kv_cache_specs" in done.stdout
    assert (tmp_path / "summary.md").read_text().startswith("### apidrift: app==1.0 against pkg")
    assert [
        r["ruleId"] for r in json.loads((tmp_path / "apidrift.sarif").read_text())["runs"][0]["results"]
    ] == ["AD101"]


def test_nothing_to_check_is_a_notice_not_a_failure(tmp_path: Path) -> None:
    project, base = _repo(tmp_path, lock_changes=False)
    done, outputs = _run(_env(tmp_path, project, event="pull_request", base=base), project)
    assert done.returncode == 0, done.stderr
    assert outputs == {"exit-code": "0", "mode": "none"}
    assert "no lock or pin file changed and no against is configured" in done.stdout
    assert not (tmp_path / "apidrift.sarif").exists()
    action = _action()
    upload = next(s for s in action["runs"]["steps"] if s.get("name") == "Upload SARIF to code scanning")
    assert "steps.audit.outputs.mode != 'none'" in upload["if"]
    # configured in [tool.apidrift]: the audit runs as before
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "app"\nversion = "1.0"\n\n[tool.apidrift]\nagainst = "{_upstream(tmp_path)}"\n'
    )
    done, outputs = _run(_env(tmp_path, project, event="pull_request", base=base), project)
    assert outputs == {"mode": "audit", "exit-code": "1"}, done.stderr


def test_mode_audit_and_push_events_audit_even_when_a_lock_file_changed(tmp_path: Path) -> None:
    project, base = _repo(tmp_path, lock_changes=True)
    upstream = _upstream(tmp_path)
    for event, mode in (("pull_request", "audit"), ("push", "auto")):
        done, outputs = _run(
            _env(tmp_path, project, event=event, base=base, MODE=mode, AGAINST=upstream), project
        )
        assert done.returncode == 0, done.stderr
        assert outputs == {"mode": "audit", "exit-code": "1"}, (event, mode)
        assert (tmp_path / "summary.md").read_text().startswith("### apidrift: app==1.0 against pkg")


def test_mode_bump_needs_a_base_and_bad_modes_exit_2(tmp_path: Path) -> None:
    project, base = _repo(tmp_path, lock_changes=True, code="import os\n")
    done, _ = _run(_env(tmp_path, project, event="push", base=None, MODE="bump"), project)
    assert done.returncode == 2 and "bump mode needs the base input" in done.stderr
    done, outputs = _run(_env(tmp_path, project, event="push", base=None, MODE="bump", BASE=base), project)
    assert done.returncode == 0 and outputs == {"mode": "bump", "exit-code": "0"}, done.stderr
    done, _ = _run(_env(tmp_path, project, event="push", base=None, MODE="Bump"), project)
    assert done.returncode == 2 and "the mode input is audit, bump or auto" in done.stderr


def test_args_are_never_glob_expanded_in_bump_mode(tmp_path: Path) -> None:
    project, base = _repo(tmp_path, lock_changes=True, code="import os\n")
    (project / "app" / "x.py").write_text("")
    env = _env(tmp_path, project, event="pull_request", base=base)
    env["EXTRA_ARGS"] += " --format 'json:" + str(tmp_path / "out*.json") + "' --exclude app/*"
    done, outputs = _run(env, project)
    assert outputs == {"mode": "bump", "exit-code": "0"}, done.stderr
    assert json.loads((tmp_path / "out*.json").read_text())["bump"]["old"]  # the name as written


def test_changed_lock_files_are_those_bump_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert [p for p in ("uv.lock", "requirements/dev.txt", "requirements-dev.txt", "pyproject.toml", "pylock.ci.toml")
            if is_read_by_bump(p)] == ["uv.lock", "requirements/dev.txt", "requirements-dev.txt", "pyproject.toml",
                                       "pylock.ci.toml"]  # fmt: skip
    assert not any(
        is_read_by_bump(p) for p in ("docs/requirements.txt", "a/b/uv.lock", "README.md", "uv.lock.bak")
    )
    project, base = _repo(tmp_path, lock_changes=True)
    assert changed_lock_files(project, base) == ["uv.lock"]  # docs/requirements.txt changed too, not read
    assert changed_lock_files(project, base, base) == []
    assert lockfiles_main(["changed", str(project), base]) == 0 and capsys.readouterr().out == "uv.lock\n"
    assert lockfiles_main(["changed", str(project), "HEAD", "HEAD"]) == 0 and capsys.readouterr().out == ""
    assert (
        lockfiles_main(["changed", str(project), "nope"]) == 2 and "no such commit" in capsys.readouterr().err
    )
    # a project in a subfolder: paths relative to it, the rest of the repository ignored
    sub = project / "svc"
    sub.mkdir()
    (sub / "requirements.txt").write_text("idna==3.7\n")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "svc")
    assert changed_lock_files(sub, "HEAD~1") == ["requirements.txt"]
    assert changed_lock_files(project, "HEAD~1") == []  # svc/requirements.txt is not the top project's


CLICK_PROJECT = "from click.testing import CliRunner\n\nrunner = CliRunner(mix_stderr=False)\n"


@pytest.mark.network
def test_a_real_bump_through_the_action_gates_like_an_audit(tmp_path: Path, index_cache: Path) -> None:
    """click 8.2.0 removed CliRunner's `mix_stderr` (as in test_bump's real bump, checked there against
    both releases' sources): the action's bump mode annotates it, fails on it and writes it to SARIF."""
    project, base = _repo(tmp_path, lock_changes=True, code=CLICK_PROJECT)
    env = _env(
        tmp_path, project, event="pull_request", base=base, EXTRA_ARGS=f"--cache-dir '{index_cache}' -q"
    )
    done, outputs = _run(env, project)
    assert done.returncode == 0, done.stderr
    assert outputs == {"mode": "bump", "exit-code": "1"}
    assert "::error file=app/__init__.py,line=3," in done.stdout and "mix_stderr" in done.stdout
    assert "click 8.1.8 -\\> 8.2.0: 1 call site breaks" in (tmp_path / "summary.md").read_text()
    sarif = json.loads((tmp_path / "apidrift.sarif").read_text())
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["AD101"]


def test_nothing_checked_fails_the_job_after_the_sarif_upload(tmp_path: Path) -> None:
    """Exit status 3 (the code does not use the upstream): the audit step passes, so that the SARIF
    upload runs, and the last step fails the job with its own message."""
    project, base = _repo(tmp_path, lock_changes=False, code="import os\n")
    env = _env(tmp_path, project, event="push", base=base, MODE="audit", AGAINST=_upstream(tmp_path))
    done, outputs = _run(env, project)
    assert done.returncode == 0, done.stderr
    assert outputs == {"mode": "audit", "exit-code": "3"}
    assert json.loads((tmp_path / "apidrift.sarif").read_text())["runs"][0]["results"] == []
    steps = _action()["runs"]["steps"]
    upload = next(s for s in steps if s.get("name") == "Upload SARIF to code scanning")
    last = steps[-1]
    assert steps.index(upload) < steps.index(last) and "exit-code != '2'" in upload["if"]
    assert last["if"] == "steps.audit.outputs.exit-code == '1' || steps.audit.outputs.exit-code == '3'"
    for status, message in (("3", "apidrift checked nothing"), ("1", "apidrift found breaking changes")):
        ran = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", last["run"]],
                             env={**os.environ, "STATUS": status}, capture_output=True, text=True, check=False)  # fmt: skip
        assert ran.returncode == 1 and ran.stdout.startswith(message)
    assert last["env"]["STATUS"] == "${{ steps.audit.outputs.exit-code }}"
    # documented where the exit statuses are
    description = _action()["outputs"]["exit-code"]["description"]
    assert "3 nothing checked" in description
    assert "`3` nothing was checked" in (ROOT / "docs" / "ci.md").read_text()


def _comment_step() -> dict:
    (step,) = [s for s in _action()["runs"]["steps"] if s.get("name") == "Comment on the pull request"]
    return step


def test_comment_input_posts_the_bump_report_with_its_suggestion_blocks(tmp_path: Path) -> None:
    """`comment: true` on a pull request: the bump's Markdown report also goes to a file, and the
    comment step posts it (a `gh api` stand-in records the calls), or updates the comment it posted
    before. The safe fix (libq 1.0's `f(a, b=0)` passed its default, so dropping `b=0` changed nothing)
    is a suggestion block with its evidence."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from localindex import LocalIndex, wheel_bytes

    project = tmp_path / "project"
    (project / "app").mkdir(parents=True)
    (project / "app" / "__init__.py").write_text("import libq\n\nlibq.f(1, b=0)\n")
    (project / "requirements.txt").write_text("libq==1.0\n")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")
    base = _git(project, "rev-parse", "HEAD")
    (project / "requirements.txt").write_text("libq==2.0\n")
    _git(project, "commit", "-q", "-am", "bump")
    with LocalIndex(tmp_path / "index") as served:
        for version, source in (
            ("1.0", "def f(a, b=0):\n    return a\n"),
            ("2.0", "def f(a):\n    return a\n"),
        ):
            served.add(
                "libq",
                f"libq-{version}-py3-none-any.whl",
                wheel_bytes("libq", version, {"libq/__init__.py": source}, []),
            )
        extra = f"--index-url {served.url} --cache-dir '{tmp_path / 'cache'}' -q"
        env = _env(tmp_path, project, event="pull_request", base=base, EXTRA_ARGS=extra, COMMENT="true")
        done, outputs = _run(env, project)
    assert done.returncode == 0, done.stderr
    assert outputs == {"mode": "bump", "exit-code": "1"}
    report = Path(env["RUNNER_TEMP"]) / "apidrift-comment.md"
    assert "  ```suggestion\n  libq.f(1)\n  ```\n" in report.read_text()
    assert "libq==1.0's default for `b`" in report.read_text()
    step = _comment_step()
    assert "inputs.comment == 'true'" in step["if"] and "exit-code != '2'" in step["if"]
    assert step["env"]["GH_TOKEN"] == "${{ github.token }}"
    for existing, expected in (
        ("", "--method POST repos/o/r/issues/7/comments"),
        ("41\n", "--method PATCH repos/o/r/issues/comments/41"),
    ):
        calls = tmp_path / "gh-calls"
        calls.unlink(missing_ok=True)
        fake = tmp_path / "bin"
        fake.mkdir(exist_ok=True)
        (fake / "gh").write_text(
            "#!/bin/sh\n"
            f'printf "%s\\0" "$@" >> "{calls}"; printf "\\n" >> "{calls}"\n'
            f'case "$*" in *--paginate*) printf "{existing}" ;; esac\n'
        )
        (fake / "gh").chmod(0o755)
        ran = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                             env={**env, "PATH": f"{fake}:{os.environ['PATH']}", "REPOSITORY": "o/r", "NUMBER": "7"},
                             capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        recorded = [line.split("\0") for line in calls.read_text().split("\0\n") if line]
        assert len(recorded) == 2, recorded
        assert " ".join(recorded[1][1:4]) == expected
        body = recorded[1][-1]
        assert body.startswith("body=<!-- apidrift report -->\n") and "```suggestion\n  libq.f(1)\n" in body
