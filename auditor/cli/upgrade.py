"""`apidrift upgrade`: every dependency the project declares and imports, audited to its latest release (auditor/upgrade.py)."""

from __future__ import annotations

from pathlib import Path

import click

from apidrift.auditor.cli.options import (
    EXIT_OK,
    EXIT_UNCHECKED,
    EXIT_USAGE,
    FORMATS,
    InputError,
    color_option,
    config_options,
    exit_status,
    fail_on_option,
    fetch_options,
    parse_outputs,
    quiet_option,
    read_config,
    report_options,
    selection,
    selection_options,
    write_report,
)
from apidrift.auditor.cli.progress import Messages, spinner, want_color


@click.command()
@click.argument("project", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--only",
    "only",
    metavar="NAME",
    multiple=True,
    help="Check this dependency only (repeatable); default: every declared one the project imports.",
)
@click.option(
    "--python",
    "python",
    type=click.Path(path_type=Path),
    help="The project's own interpreter (or environment folder): the version installed there is the one it is on, for a dependency no lock or pin file pins.",
)
@click.option(
    "--requirements",
    "requirements",
    metavar="FILE",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A requirements file of another name (req.txt), read as requirements*.txt are; repeatable.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 64),
    default=None,
    help="Dependencies walked at once (default: 2).",
)
@report_options(FORMATS)
@fail_on_option()
@config_options(owner="project")
@selection_options(owner="project")
@fetch_options()
@color_option()
@quiet_option()
def upgrade(
    project: Path,
    only: tuple[str, ...],
    python: Path | None,
    requirements: tuple[Path, ...],
    jobs: int | None,
    formats: tuple[str, ...],
    output: Path | None,
    fail_on: str | None,
    config_path: Path | None,
    no_config: bool,
    ignore: tuple[str, ...],
    severity: tuple[str, ...],
    exclude: tuple[str, ...],
    ignore_symbols: tuple[str, ...],
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
    color: str,
    quiet: bool,
) -> None:
    """What breaks if PROJECT (default: .) upgrades every dependency to its latest release, and what is safe.

    Reads the dependencies declared in pyproject.toml, requirements*.txt, setup.cfg, setup.py (literals,
    never run) and environment.yml's pip section; each one the project's code imports is walked as
    `apidrift plan` walks it, from the version the project is on (lock and pin files first, as `bump`
    reads them; else the one installed with --python; else the lowest its specifier allows) to its
    latest release. Exit status as `audit`: 0 clean, 1 findings at or above --fail-on, 2 bad usage or
    input (also: a dependency whose releases could not be had), 3 nothing could be checked.
    """
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.engine import AuditRequest
    from apidrift.auditor.upgrade import DEFAULT_JOBS, UpgradeError, UpgradeRequest, run_upgrade
    from apidrift.reports.upgrade import render

    if python is not None and not python.exists():
        raise InputError(f"--python {python}: no such interpreter or folder")
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
    )
    fail_on = fail_on or config.fail_on or "error"
    request = UpgradeRequest(
        project, template, cache_dir, offline, index_url, python, jobs or DEFAULT_JOBS, only, requirements
    )
    try:
        with spinner(f"checking every dependency of {project} against its latest release", quiet=quiet):
            result = run_upgrade(request)
    except UpgradeError as error:
        raise InputError(str(error)) from None
    say("read " + (", ".join(result.files_read) or "no requirement file"))
    for out in outputs:
        use_color = out.fmt == "text" and out.path is None and want_color(color)
        report = render(result, out.fmt, color=use_color)
        if out.path is None:
            click.echo(report, nl=not report.endswith("\n"), color=use_color)
            continue
        write_report(out.path, report)
    status = exit_status(result.audit, fail_on)
    failed = [d for d in result.dependencies if d.failed]
    if failed and status in (EXIT_OK, EXIT_UNCHECKED):  # as `audit` exits 2 when an upstream cannot be had
        names = ", ".join(d.display for d in failed)
        click.echo(f"apidrift: error: not checked, a release could not be had: {names}", err=True)
        status = EXIT_USAGE
    raise SystemExit(status)
