"""The command line: thin commands that build a request, call the engine, render, and pick the exit status.

Exit status: 0 nothing at or above `--fail-on`; 1 findings at or above it; 2 bad usage or input.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from apidrift import __version__
from apidrift.auditor.results import AuditResult, Severity

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "json", "sarif")


class InputError(click.ClickException):
    """A spec, a source or an option that cannot be used: one line, exit status 2."""

    exit_code = EXIT_USAGE

    def show(self, file: object = None) -> None:
        click.echo(f"apidrift: error: {self.format_message()}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="apidrift")
def cli() -> None:
    """Find the call sites in a downstream package that a new upstream version breaks."""


@cli.command()
@click.argument("downstream")
@click.option("--against", "against", required=True, metavar="UPSTREAM", help="Upstream version to check against: NAME==VER, NAME@PATH or NAME.")
@click.option("--from", "old", metavar="UPSTREAM", help="Upstream version the downstream was written for.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the report here instead of stdout.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info", "never"]), default="error", show_default=True)
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), help="Cache folder (default: the user cache dir).")
@click.option("--offline", is_flag=True, help="Use only the cache; never touch the network.")
@click.option("--index-url", metavar="URL", help="Package index (PEP 503/691); default: PIP_INDEX_URL, else the public index.")
@click.option("--verbose", "-v", is_flag=True, help="Say what is fetched and cached.")
def audit(
    downstream: str,
    against: str,
    old: str | None,
    fmt: str,
    output: Path | None,
    fail_on: str,
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
    verbose: bool,
) -> None:
    """Audit DOWNSTREAM (NAME==VER, a folder, or an installed NAME) against an upstream version."""
    from apidrift.auditor.engine import AuditRequest, audit as run_audit
    from apidrift.auditor.specs import SourceError, SpecError
    from apidrift.reports import render

    if verbose:
        logging.basicConfig(level=logging.INFO, format="apidrift: %(message)s")
    request = AuditRequest(downstream, against, old, cache_dir, offline, index_url)
    try:
        result = run_audit(request)
    except (SpecError, SourceError) as error:
        raise InputError(str(error)) from None
    report = render(result, fmt)
    if output is not None:
        try:
            output.write_text(report, encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write {output}: {error.strerror}") from None
    else:
        click.echo(report, nl=not report.endswith("\n"))
    raise SystemExit(exit_status(result, fail_on))


@cli.command()
@click.argument("code", required=False)
def rules(code: str | None) -> None:
    """List the rules, or print one rule's docs (by code or name)."""
    from apidrift.rules.registry import all_rules, get_rule

    if code is None:
        for rule in all_rules():
            click.echo(f"{rule.code}  {rule.name:<28} {rule.severity.value:<8} {rule.summary}")
        return
    rule = get_rule(code)
    if rule is None:
        raise InputError(f"no rule {code!r}; `apidrift rules` lists them")
    click.echo(f"# {rule.code} {rule.name} ({rule.severity.value}, family {rule.family})\n\n{rule.docs}")


def exit_status(result: AuditResult, fail_on: str) -> int:
    if fail_on == "never":
        return EXIT_OK
    threshold = Severity(fail_on).rank
    return EXIT_FINDINGS if any(f.severity.rank >= threshold for f in result.findings) else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI in-process and return the exit status (tests call this)."""
    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="apidrift", standalone_mode=False)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else EXIT_USAGE
    except click.exceptions.Abort:
        click.echo("apidrift: aborted", err=True)
        return EXIT_USAGE
    except click.ClickException as error:
        if isinstance(error, InputError):
            error.show()
        else:
            click.echo(f"apidrift: error: {error.format_message()}", err=True)
        return EXIT_USAGE
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
