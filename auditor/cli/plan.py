"""`apidrift plan`: audit a downstream against every upstream release up to a target, and say how far it can go.

Exit status: 0 the plan was made (and, with --fail-if-latest-unreachable, the target has no errors);
1 with --fail-if-latest-unreachable, the target release has errors; 2 bad usage or input.
"""

from __future__ import annotations

from pathlib import Path

import click

from apidrift.auditor.cli.options import (
    EXIT_FINDINGS,
    EXIT_OK,
    InputError,
    Output,
    config_options,
    fetch_options,
    output_option,
    quiet_option,
    read_config,
    selection,
    selection_options,
    write_report,
)
from apidrift.auditor.cli.progress import Messages, on_terminal
from apidrift.reports import render_plan
from apidrift.reports.plan import PLAN_FORMATS


def parse_plan_outputs(formats: tuple[str, ...], output: Path | None) -> list[Output]:
    """`--format FMT[:PATH]` (repeatable) for the plan's formats; one of them may go to stdout."""
    outputs = []
    for item in formats or ("text",):
        fmt, sep, path = item.partition(":")
        fmt = fmt.strip().lower()
        if fmt not in PLAN_FORMATS:
            raise InputError(
                f"unknown format {fmt!r} in --format {item!r}; a plan is written as {', '.join(PLAN_FORMATS)}"
            )
        if sep and not path:
            raise InputError(f"--format {item!r}: no path after the colon")
        outputs.append(Output(fmt, Path(path) if path else None))
    if output is not None:
        if len(outputs) != 1 or outputs[0].path is not None:
            raise InputError("--output takes one report; with several formats use --format FMT:PATH for each")
        outputs = [Output(outputs[0].fmt, output)]
    if sum(1 for o in outputs if o.path is None) > 1:
        raise InputError(
            "only one --format can go to standard output; give the others a path (--format FMT:PATH)"
        )
    for target in (o.path for o in outputs if o.path is not None):
        if not target.resolve().parent.is_dir():
            raise InputError(f"cannot write {target}: folder {target.resolve().parent} does not exist")
    return outputs


@click.command("plan")
@click.argument("downstream")
@click.option(
    "--upstream",
    "upstream",
    required=True,
    metavar="NAME",
    help="The upstream's distribution name; its releases are read from the index.",
)
@click.option(
    "--from",
    "old",
    metavar="VERSION",
    help="The release the downstream was written for. Default: inferred as `audit` does (its pin or range).",
)
@click.option(
    "--to",
    "to",
    metavar="VERSION",
    help="The last release to plan for. Default: the latest final release (with --pre: the latest release).",
)
@click.option("--pre", is_flag=True, help="Include pre-releases in the walk.")
@click.option(
    "--every",
    is_flag=True,
    help="Audit every release instead of skipping the releases between two with the same findings.",
)
@click.option(
    "--format",
    "formats",
    metavar="FMT[:PATH]",
    multiple=True,
    help=f"Report format, repeatable: {', '.join(PLAN_FORMATS)}; with :PATH written to that file (default: text to stdout).",
)
@output_option()
@click.option(
    "--fail-if-latest-unreachable",
    "fail_unreachable",
    is_flag=True,
    help="Exit 1 when the target release has errors.",
)
@config_options()
@selection_options()
@fetch_options()
@quiet_option()
def plan_command(
    downstream: str,
    upstream: str,
    old: str | None,
    to: str | None,
    pre: bool,
    every: bool,
    formats: tuple[str, ...],
    output: Path | None,
    fail_unreachable: bool,
    config_path: Path | None,
    no_config: bool,
    ignore: tuple[str, ...],
    severity: tuple[str, ...],
    exclude: tuple[str, ...],
    ignore_symbols: tuple[str, ...],
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
    quiet: bool,
) -> None:
    """Audit DOWNSTREAM against the upstream's releases from the one it was written for to --to.

    Prints, release by release, the errors, warnings and use sites checked; the highest release without
    errors; and for each finding of the target the release where it first appeared, where its target was
    deprecated, and the releases that accept both the old and the new way. Releases between two with the
    same findings are not audited (bisection; --every audits them all); the report says which.

    Exit status: 0 the plan was made; 1 with --fail-if-latest-unreachable, the target release has
    errors; 2 bad usage or input.
    """
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.plan import PlanError, PlanRequest, plan
    from apidrift.auditor.sources.specs import SourceError, SpecError

    outputs = parse_plan_outputs(formats, output)
    config = read_config(downstream, config_path, no_config)
    request = PlanRequest(
        downstream,
        upstream,
        old or config.old,
        to,
        pre,
        every,
        cache_dir,
        offline,
        index_url,
        **selection(config, ignore, exclude, ignore_symbols, severity),
    )
    say = Messages(quiet=quiet)
    try:
        result = plan(request, progress=on_terminal(say))
    except (SpecError, SourceError, PlanError) as error:
        raise InputError(str(error)) from None
    for out in outputs:
        report = render_plan(result, out.fmt)
        if out.path is None:
            click.echo(report, nl=False)
            continue
        write_report(out.path, report)
        say(f"wrote the {out.fmt} plan to {out.path}")
    raise SystemExit(EXIT_FINDINGS if fail_unreachable and not result.target_reachable else EXIT_OK)
