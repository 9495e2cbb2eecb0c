"""`apidrift bump`: audit the project against every package its lock or pin files move (auditor/bump.py)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import click

from apidrift.auditor.cli.main import (
    EXIT_OK,
    EXIT_USAGE,
    FAIL_ON,
    FORMATS,
    InputError,
    Messages,
    _is_tty,
    _rule_selectors,
    _severities,
    _want_color,
    cli,
    exit_status,
    parse_outputs,
    progress,
    read_config,
    symbol_patterns,
)


@cli.command()
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
@click.option(
    "--format",
    "formats",
    metavar="FMT[:PATH]",
    multiple=True,
    help=f"Report format, repeatable: {', '.join(FORMATS)}; with :PATH written to that file (default: text to stdout).",
)
@click.option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the (single) report here instead of stdout.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    help="Lowest severity that fails the run (exit 1). Default: `fail-on` in [tool.apidrift], else error.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Read [tool.apidrift] from this file instead of the project's pyproject.toml.",
)
@click.option("--no-config", is_flag=True, help="Ignore any [tool.apidrift] configuration.")
@click.option(
    "--ignore",
    "ignore",
    metavar="RULE",
    multiple=True,
    help="Never report this rule (code, name or family); repeatable.",
)
@click.option(
    "--severity",
    "severity",
    metavar="RULE=LEVEL",
    multiple=True,
    help="Re-grade a rule to error, warning or info; repeatable.",
)
@click.option(
    "--exclude",
    "exclude",
    metavar="GLOB",
    multiple=True,
    help="Do not scan project paths matching this glob; repeatable.",
)
@click.option(
    "--ignore-symbol",
    "ignore_symbols",
    metavar="PATTERN",
    multiple=True,
    help="Do not report uses of this upstream dotted path (globs allowed); repeatable.",
)
@click.option(
    "--no-learn-imports",
    is_flag=True,
    help="Never download a release only to learn its import names; such packages are listed as not audited.",
)
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Cache folder (default: the user cache dir).",
)
@click.option("--offline", is_flag=True, help="Use only the cache; never touch the network.")
@click.option(
    "--index-url",
    metavar="URL",
    help="Package index (PEP 503/691); default: PIP_INDEX_URL, else the public index.",
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the text report.",
)
@click.option(
    "--quiet", "-q", is_flag=True, help="No progress display and no messages on stderr (errors excepted)."
)
def bump(
    project: Path,
    base: str | None,
    old_file: Path | None,
    new_file: Path | None,
    formats: tuple[str, ...],
    output: Path | None,
    fail_on: str | None,
    config_path: Path | None,
    no_config: bool,
    ignore: tuple[str, ...],
    severity: tuple[str, ...],
    exclude: tuple[str, ...],
    ignore_symbols: tuple[str, ...],
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
        ignore_rules=frozenset(config.ignore) | frozenset(_rule_selectors(ignore, "--ignore")),
        severities={**config.severity, **_severities(severity)},
        exclude=tuple(config.exclude) + tuple(exclude),
        ignore_symbols=symbol_patterns(tuple(config.ignore_symbols) + tuple(ignore_symbols)),
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
        with progress(
            f"checking the dependency bump of {project}", enabled=not quiet and _is_tty(sys.stderr)
        ):
            result = run_bump(request)
    except BumpError as error:
        raise InputError(str(error)) from None
    read = [
        f"{f.side} {f.where}: {f.path}" if not f.where.endswith(f.path) else f"{f.side} {f.where}"
        for f in result.files_read
    ]
    say("read " + (", ".join(read) or "no lock or pin file"))
    for out in outputs:
        use_color = out.fmt == "text" and out.path is None and _want_color(color)
        report = render(result, out.fmt, color=use_color)
        if out.path is None:
            click.echo(report, nl=not report.endswith("\n"), color=use_color)
            continue
        try:
            out.path.write_text(report, encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write {out.path}: {error.strerror}") from None
    status = exit_status(result.audit, fail_on)
    failed = result.failed()
    if failed and status == EXIT_OK:
        # As `audit` exits 2 when an upstream cannot be had: a bump that could not be checked does not pass.
        names = ", ".join(c.label for c in failed)
        click.echo(f"apidrift: error: not audited, a release could not be had: {names}", err=True)
        status = EXIT_USAGE
    raise SystemExit(status)
