"""`apidrift bump`: audit the project against every package its lock or pin files move (auditor/bump.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from apidrift.auditor.cli.options import (
    EXIT_OK,
    EXIT_USAGE,
    FORMATS,
    InputError,
    color_option,
    config_options,
    exit_status,
    fail_on_option,
    fetch_options,
    parse_outputs,
    parse_role_option,
    pre_existing_option,
    quiet_option,
    read_config,
    report_options,
    role_option,
    selection,
    selection_options,
    write_report,
)
from apidrift.auditor.cli.progress import Messages, spinner, want_color


@click.command()
@click.argument("project", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--base",
    metavar="REF",
    help="Git revision of the old side (e.g. origin/main); the new side is the work tree. Read with git show, never checked out.",
)
@click.option(
    "--old",
    "old_file",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Lock or pin file of the old side (with --new).",
)
@click.option(
    "--new",
    "new_file",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Lock or pin file of the new side (with --old).",
)
@report_options(FORMATS)
@fail_on_option()
@pre_existing_option()
@config_options(owner="project")
@selection_options(owner="project")
@role_option()
@click.option(
    "--no-learn-imports",
    is_flag=True,
    help="Never download a release only to learn its import names; such packages are listed as not audited.",
)
@fetch_options()
@color_option()
@quiet_option()
def bump(
    project: Path,
    base: str | None,
    old_file: Path | None,
    new_file: Path | None,
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
    no_learn_imports: bool,
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
    color: str,
    quiet: bool,
) -> None:
    """Audit PROJECT (default: .) against every package whose pinned version a change moves.

    The old side is `--base REF` (git, the new side being the work tree) or `--old FILE` with
    `--new FILE`. Reads uv.lock, poetry.lock, pdm.lock, Pipfile.lock, pylock.toml, requirements*.txt
    and exact pins in pyproject.toml. Exit status as `audit`: 0 clean, 1 findings at or above
    --fail-on, 2 bad usage or input (also: a used package whose release could not be had).
    """
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.bump import BumpError, BumpRequest, run_bump
    from apidrift.auditor.engine import AuditRequest
    from apidrift.reports.bump import render

    if base is None and (old_file is None or new_file is None):
        raise InputError("give --base REF (compare with a git revision), or both --old FILE and --new FILE")
    if base is not None and (old_file is not None or new_file is not None):
        raise InputError("give either --base REF or --old FILE --new FILE, not both")
    outputs = parse_outputs(formats, output)
    say = Messages(quiet=quiet)
    config = read_config(str(project), config_path, no_config)
    template = AuditRequest(
        str(project),
        "",
        cache_dir=cache_dir,
        offline=offline,
        index_url=index_url,
        **selection(config, ignore, exclude, ignore_symbols, severity),
        roles=parse_role_option(roles),
    )
    fail_on = fail_on or config.fail_on or "error"
    request = BumpRequest(
        project,
        base,
        old_file,
        new_file,
        replace(template),
        cache_dir,
        offline,
        index_url,
        not no_learn_imports,
    )
    try:
        with spinner(f"checking the dependency bump of {project}", quiet=quiet):
            result = run_bump(request)
    except BumpError as error:
        raise InputError(str(error)) from None
    read = [
        f"{f.side} {f.where}: {f.path}" if not f.where.endswith(f.path) else f"{f.side} {f.where}"
        for f in result.files_read
    ]
    say("read " + (", ".join(read) or "no lock or pin file"))
    for out in outputs:
        use_color = out.fmt == "text" and out.path is None and want_color(color)
        report = render(result, out.fmt, color=use_color)
        if out.path is None:
            click.echo(report, nl=not report.endswith("\n"), color=use_color)
            continue
        write_report(out.path, report)
    status = exit_status(result.audit, fail_on, pre_existing=fail_on_pre_existing)
    failed = result.failed()
    if failed and status == EXIT_OK:
        # As `audit` exits 2 when an upstream cannot be had: a bump that could not be checked does not pass.
        names = ", ".join(c.label for c in failed)
        click.echo(f"apidrift: error: not audited, a release could not be had: {names}", err=True)
        status = EXIT_USAGE
    raise SystemExit(status)
