"""The command line: thin commands that build a request, call the engine, render, and pick the exit status.

Exit status: 0 nothing at or above `--fail-on`; 1 findings at or above it; 2 bad usage or input;
3 nothing was checked (the downstream does not use the upstream, or none of its uses could be checked).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from apidrift.auditor.cli.bump import bump as bump_command
from apidrift.auditor.cli.impact import impact as impact_command
from apidrift.auditor.cli.options import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    FORMATS,
    InputError,
    build_request,
    color_option,
    config_options,
    exit_status,
    fail_on_option,
    fetch_options,
    output_option,
    parse_outputs,
    parse_role_option,
    parse_severities,
    pre_existing_option,
    quiet_option,
    read_config,
    report_options,
    role_option,
    selection_options,
    target_options,
    write_report,
)
from apidrift.auditor.cli.plan import plan_command
from apidrift.auditor.cli.progress import (
    CacheSnapshot,
    Messages,
    describe_run,
    on_terminal,
    quiet_libraries,
    show_log_records,
    spinner,
    want_color,
)
from apidrift.auditor.cli.upgrade import upgrade as upgrade_command
from apidrift.auditor.core.results import AuditResult, Severity
from apidrift.auditor.core.version import __version__
from apidrift.auditor.core.wording import first_line, plural
from apidrift.reports import render
from apidrift.rules.registry import FAMILIES, all_rules, get_rule


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="apidrift")
def cli() -> None:
    """Find the call sites in a downstream package that a new upstream version breaks."""


@cli.command()
@click.argument("downstream")
@target_options(verb="check")
@report_options(FORMATS)
@fail_on_option()
@pre_existing_option()
@config_options()
@selection_options()
@role_option()
@click.option(
    "--warn-unused-ignores", is_flag=True, help="Note `# apidrift: ignore` comments that silenced nothing."
)
@click.option(
    "--baseline",
    "baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Accepted-findings file: fail only on findings not in it.",
)
@click.option(
    "--write-baseline",
    "write_baseline",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Record today's findings as accepted in this file.",
)
@click.option(
    "--history",
    is_flag=True,
    help="Give each finding its history over the upstream's releases from the --from one to --against: the release where it first appeared, where its target was deprecated, the migration window (as `apidrift plan` does).",
)
@fetch_options()
@color_option()
@quiet_option()
@click.option(
    "--verbose", "-v", is_flag=True, help="Say what was fetched, from where, and what came from the cache."
)
@click.option(
    "--show-unchecked",
    is_flag=True,
    help="List, in the text report, each use site that could not be checked, under its reason (JSON and HTML always list them).",
)
def audit(
    downstream: str,
    against: str | None,
    old: str | None,
    python: Path | None,
    formats: tuple[str, ...],
    output: Path | None,
    fail_on: str | None,
    fail_on_pre_existing: bool,
    config_path: Path | None,
    no_config: bool,
    ignore: tuple[str, ...],
    severity: tuple[str, ...],
    exclude: tuple[str, ...],
    ignore_symbols: tuple[str, ...],
    roles: tuple[str, ...],
    warn_unused_ignores: bool,
    baseline: Path | None,
    write_baseline: Path | None,
    history: bool,
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
    color: str,
    quiet: bool,
    verbose: bool,
    show_unchecked: bool,
) -> None:
    """Audit DOWNSTREAM (NAME==VER, a folder, or an installed NAME) against an upstream version.

    \b
    Examples:
      apidrift audit speculators==0.3.0 --against vllm==0.16.0
      apidrift audit . --against vllm==0.16.0 --format html:report.html --format sarif:report.sarif

    \b
    Exit status:
      0  nothing at or above --fail-on (default: error); with an old version, findings it already
         had (pre-existing) do not count unless --fail-on-pre-existing
      1  findings at or above --fail-on
      2  bad usage or input (one line on stderr)
      3  nothing was checked: the downstream does not use the upstream, or none of its uses could be checked
    """
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.baseline import BaselineError, apply_baseline, read_baseline, record_baseline
    from apidrift.auditor.engine import audit as run_audit
    from apidrift.auditor.sources.specs import SourceError, SpecError

    started = time.time()
    outputs = parse_outputs(formats, output)
    say = Messages(quiet=quiet)
    if verbose and not quiet:
        show_log_records()

    config = read_config(downstream, config_path, no_config)
    if verbose and config.found:
        say(f"configuration: [tool.apidrift] in {config.path}")
    request = build_request(
        config,
        downstream,
        against,
        old,
        cache_dir,
        offline,
        index_url,
        ignore,
        exclude,
        ignore_symbols,
        severities=parse_severities(severity),
        warn_unused_ignores=warn_unused_ignores,
        verb="audit",
        python=python,
        roles=parse_role_option(roles),
    )
    fail_on = fail_on or config.fail_on or "error"

    accepted = None
    if baseline is not None and write_baseline is None:
        try:
            accepted = read_baseline(baseline)  # before the audit: a bad file should not cost a run
        except BaselineError as error:
            raise InputError(str(error)) from None

    cache_before = CacheSnapshot.take(cache_dir) if verbose else None
    try:
        with spinner(f"auditing {downstream} against {request.against}", quiet=quiet):
            result = run_audit(request)
    except (SpecError, SourceError) as error:
        raise InputError(str(error)) from None
    if history:
        # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
        from apidrift.auditor.plan import audit_history

        result = audit_history(request, result, progress=on_terminal(say))

    if write_baseline is not None:
        try:
            written = record_baseline(result, write_baseline)
        except BaselineError as error:
            raise InputError(str(error)) from None
        say(f"wrote {plural(written, 'accepted finding')} to {write_baseline}")
    elif accepted is not None and baseline is not None:
        apply_baseline(result, accepted, baseline)

    if cache_before is not None:
        for line in describe_run(result, request, cache_before):
            say(line)

    result.run = run_info(started, config)
    for out in outputs:
        use_color = out.fmt == "text" and out.path is None and want_color(color)
        report = render(result, out.fmt, color=use_color, show_unchecked=show_unchecked)
        if out.path is None:
            click.echo(report, nl=not report.endswith("\n"), color=use_color)
            continue
        write_report(out.path, report)
        if verbose:
            say(f"wrote the {out.fmt} report to {out.path}")
    if all(out.path is not None for out in outputs):  # nothing on stdout: say where it went, and the gist
        say(f"wrote {', '.join(str(out.path) for out in outputs)} ({_gist(result)})")
    raise SystemExit(exit_status(result, fail_on, pre_existing=fail_on_pre_existing))


_ARGV: list[str] | None = None  # the command line `main` was given, for the reports' "how made" line


def run_info(started: float, config: Any) -> dict[str, Any]:
    """How this report was produced: when, by which command and configuration, in how long."""
    argv = _ARGV if _ARGV is not None else sys.argv[1:]
    settings = {}
    if config.found:
        for key in ("against", "old", "fail_on", "ignore", "severity", "exclude", "ignore_symbols"):
            value = getattr(config, key)
            if value:
                name = {"old": "from", "fail_on": "fail-on", "ignore_symbols": "ignore-symbols"}.get(key, key)
                settings[name] = value if isinstance(value, (str, dict)) else list(value)
    return {
        "date": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
        "command": "apidrift " + shlex.join(argv),
        "config": str(config.path) if config.found else None,
        "settings": settings,
        "seconds": round(time.time() - started, 3),
    }


def _gist(result: AuditResult) -> str:
    if not result.findings:
        return "nothing checked" if result.unchecked else "no findings"
    counts = [(result.count(s), s.value) for s in Severity]
    return ", ".join(plural(n, word, "info" if word == "info" else None) for n, word in counts if n)


@cli.command()
@click.argument("code", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules(code: str | None, fmt: str) -> None:
    """List the rules, a family's rules (`apidrift rules calls`), or print one rule's docs (by code or name)."""
    selected = sorted(all_rules(), key=lambda r: r.code)
    family = code.strip().lower() if code else None
    if code is not None and family not in FAMILIES:
        rule = get_rule(code)
        if rule is None:
            raise InputError(
                f"no rule, rule name or family {code!r}; `apidrift rules` lists them (families: {', '.join(FAMILIES)})"
            )
        if fmt == "json":
            click.echo(json.dumps(_rule_data(rule, docs=True), indent=2))
        else:
            click.echo(
                f"# {rule.code} {rule.name} ({rule.severity.value}, family {rule.family.value})\n\n{rule.docs}"
                + _fixes_section(rule)
            )
        return
    if family is not None:
        selected = [r for r in selected if r.family == family]
    if fmt == "json":
        click.echo(json.dumps([_rule_data(rule) for rule in selected], indent=2))
        return
    rows = [(rule.code, rule.name, rule.severity.value, rule.family.value, rule.summary) for rule in selected]
    widths = [
        max((len(row[i]) for row in rows), default=0) for i in range(4)
    ]  # each column as wide as its widest
    for rule, row in zip(selected, rows):
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[4])
        if rule.fixes:
            offers = ", ".join(
                dict.fromkeys(
                    "manual step" if o.kind.value == "manual" else f"{o.applicability.value} {o.kind.value}"
                    for o in rule.fixes
                )
            )
            click.echo(f"{'':7}fixes: {offers}")


def _fixes_section(rule: Any) -> str:
    """What `apidrift fix` can do for a rule's findings, and on what evidence."""
    if not rule.fixes:
        return "\n\n## Fixes `apidrift fix` makes\nNone: the finding's hint says what to do."
    lines = [
        f"- manual step: {o.when}"
        if o.kind.value == "manual"
        else f"- {o.applicability.value} `{o.kind.value}`: {o.when}"
        for o in rule.fixes
    ]
    return "\n\n## Fixes `apidrift fix` makes\n" + "\n".join(lines)


def _rule_data(rule: Any, *, docs: bool = False) -> dict[str, Any]:
    data = {"code": rule.code, "name": rule.name, "severity": rule.severity.value, "family": rule.family.value,
            "summary": rule.summary, "since": rule.since}  # fmt: skip
    data["fixes"] = [o.as_dict() for o in rule.fixes]
    if docs:
        data["docs"] = rule.docs
    return data


@cli.command()
@click.argument("old")
@click.argument("new")
@click.option(
    "--used-by",
    metavar="DOWNSTREAM",
    help="Only the changes that touch what this downstream uses, with its use sites.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@output_option(single=True)
@click.option("--fail-on-breaking", is_flag=True, help="Exit 1 when a breaking change is listed.")
@fetch_options()
def diff(
    old: str,
    new: str,
    used_by: str | None,
    fmt: str,
    output: Path | None,
    fail_on_breaking: bool,
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
) -> None:
    """List the API changes between two upstream versions OLD and NEW (NAME==VER or NAME@PATH).

    \b
    Labels:
      BREAKING  breaks some callers (with --used-by: one of the downstream's use sites, listed)
      not here  with --used-by: breaks some callers, but none of the downstream's
      changed   breaks no caller (a new optional parameter, a changed default, a deprecation)
    With --used-by, uses are listed as audit reports them: path:line, relative to the
    downstream's project root, at the line where CPython fails.
    """
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.engine import DiffRequest, diff_versions
    from apidrift.auditor.sources.specs import SourceError, SpecError
    from apidrift.reports.diff import render as render_diff

    try:
        result = diff_versions(DiffRequest(old, new, used_by, cache_dir, offline, index_url))
    except (SpecError, SourceError) as error:
        raise InputError(str(error)) from None
    report = render_diff(result, fmt)
    if output is not None:
        write_report(output, report)
    else:
        click.echo(report, nl=False)
    breaking = any(change.breaking for change in result.changes)
    raise SystemExit(EXIT_FINDINGS if fail_on_breaking and breaking else EXIT_OK)


@cli.command()
@click.argument("downstream")
@target_options(verb="fix", from_note=" (renames are recognised against it)")
@click.option(
    "--diff",
    "mode",
    flag_value="diff",
    default=True,
    help="Print the fixes as a unified diff (the default); change nothing.",
)
@click.option(
    "--write", "mode", flag_value="write", help="Apply the fixes to the files of a local DOWNSTREAM folder."
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="Also apply fixes that change behaviour (drop a keyword whose parameter was removed).",
)
@config_options()
@selection_options(fixing=True, severity=False)
@fetch_options()
@quiet_option()
def fix(
    downstream: str,
    against: str | None,
    old: str | None,
    python: Path | None,
    mode: str,
    unsafe_fixes: bool,
    config_path: Path | None,
    no_config: bool,
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    ignore_symbols: tuple[str, ...],
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
    quiet: bool,
) -> None:
    """Fix DOWNSTREAM's call sites that the upstream's new version breaks, where the fix is mechanical.

    Prints a unified diff (--diff, the default) or applies it (--write, local folders only), and
    lists what is left to do by hand. Exit status: 0 nothing left to do, 1 changes to apply or
    errors left that need a manual step, 2 bad usage or input.
    """
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.fix.codemods import FixError, run_fix, write_changes
    from apidrift.auditor.sources.specs import SourceError, SpecError
    from apidrift.reports.fix import render as render_fix

    writing = mode == "write"
    if writing:
        _refuse_write_early(downstream)
    config = read_config(downstream, config_path, no_config)
    request = build_request(
        config,
        downstream,
        against,
        old,
        cache_dir,
        offline,
        index_url,
        ignore,
        exclude,
        ignore_symbols,
        verb="fix",
        python=python,
    )
    try:
        with spinner(f"fixing {downstream} against {request.against}", quiet=quiet):
            result = run_fix(request, unsafe=unsafe_fixes)
    except (SpecError, SourceError) as error:
        raise InputError(str(error)) from None
    if not writing:
        click.echo(render_fix(result), nl=False)
        pending = bool(result.changes) or bool(result.remaining_errors)
        raise SystemExit(EXIT_FINDINGS if pending else EXIT_OK)
    try:
        written = write_changes(result)
    except FixError as error:
        raise InputError(str(error)) from None
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror or error}") from None
    click.echo(render_fix(result, written=written), nl=False)
    Messages(quiet=quiet)(f"wrote {plural(len(written), 'file')}")
    raise SystemExit(EXIT_FINDINGS if result.remaining_errors else EXIT_OK)


def _refuse_write_early(downstream: str) -> None:
    """`--write` only into a local folder the user named: say so before anything is fetched."""
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.sources.specs import DirectorySpec, IndexSpec, NameSpec, SpecError, parse_spec

    try:
        spec = parse_spec(downstream, "downstream")
    except SpecError as error:
        raise InputError(str(error)) from None
    if isinstance(spec, DirectorySpec) or (isinstance(spec, NameSpec) and Path(spec.name).is_dir()):
        return
    what = (
        "a release from the package index"
        if isinstance(spec, IndexSpec)
        else "not a local folder (an installed distribution or a release)"
    )
    raise InputError(
        f"--write: {downstream!r} is {what}; apidrift writes only into a local source tree you name (use --diff to see the fixes)"
    )


# The commands kept in their own modules, which import nothing from this one.
for _command in (bump_command, impact_command, plan_command, upgrade_command):
    cli.add_command(_command)


EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports a command it interrupted


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return the exit status (tests call this)."""
    global _ARGV
    _ARGV = list(argv) if argv is not None else None
    quiet_libraries()
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="apidrift", standalone_mode=False)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else EXIT_USAGE
    except KeyboardInterrupt:
        click.echo("apidrift: interrupted", err=True)
        return EXIT_INTERRUPTED
    except click.exceptions.Abort as abort:
        if isinstance(abort.__cause__ or abort.__context__, KeyboardInterrupt):  # Ctrl-C, as a shell says it
            click.echo("apidrift: interrupted", err=True)
            return EXIT_INTERRUPTED
        click.echo("apidrift: aborted", err=True)
        return EXIT_USAGE
    except click.ClickException as error:
        if isinstance(error, InputError):
            error.show()
        else:
            click.echo(f"apidrift: error: {error.format_message()}", err=True)
        return EXIT_USAGE
    except Exception as error:  # a bug of ours: one line for the user, the traceback on request
        if os.environ.get("APIDRIFT_DEBUG"):
            raise
        first = first_line(error, default="", strip=False)
        click.echo(
            f"apidrift: internal error: {type(error).__name__}: {first} (set APIDRIFT_DEBUG=1 for the traceback)",
            err=True,
        )
        return EXIT_USAGE
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
