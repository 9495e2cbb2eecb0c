"""`apidrift impact RELEASE`: whom does the release break, over a list of dependents (or those discovered).

Exit status: 0 no dependent broken at or above `--fail-on`; 1 some are; 2 bad usage or input.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from apidrift.auditor.cli.options import (
    EXIT_FINDINGS,
    EXIT_OK,
    FAIL_ON,
    InputError,
    fetch_options,
    quiet_option,
    write_report,
)
from apidrift.auditor.cli.progress import DependentsProgress, is_tty, show_log_records
from apidrift.auditor.core.wording import first_line

IMPACT_FORMATS = ("text", "markdown", "html", "json")
_RANK = {"error": 3, "warning": 2, "info": 1}


def _outputs(formats: tuple[str, ...]) -> list[tuple[str, Path | None]]:
    outputs = []
    for item in formats or ("text",):
        fmt, sep, path = item.partition(":")
        fmt = fmt.strip().lower()
        if fmt not in IMPACT_FORMATS:
            raise InputError(
                f"unknown format {fmt!r} in --format {item!r}; choose from {', '.join(IMPACT_FORMATS)}"
            )
        if sep and not path:
            raise InputError(f"--format {item!r}: no path after the colon")
        target = Path(path) if path else None
        if target is not None and not target.resolve().parent.is_dir():
            raise InputError(f"cannot write {target}: folder {target.resolve().parent} does not exist")
        outputs.append((fmt, target))
    if sum(1 for _, p in outputs if p is None) > 1:
        raise InputError(
            "only one --format can go to standard output; give the others a path (--format FMT:PATH)"
        )
    return outputs


@click.command()
@click.argument("release")
@click.option(
    "--from",
    "old",
    metavar="UPSTREAM",
    help="The version the dependents were written for (default: the release before RELEASE on the index).",
)
@click.option(
    "--dependents",
    "dependents",
    type=click.Path(exists=True, path_type=Path),
    multiple=True,
    help="A file with one spec or local folder per line (a bare name: its latest release), or a folder with one project per sub-folder; repeatable.",
)
@click.option(
    "--discover",
    "discover",
    metavar="FILE|FOLDER|cached",
    help="Candidates to audit when they require the upstream, each at its last release before --as-of: a file of names (NAME, or NAME==VERSION); a folder of requirements and lock files (the names they list); or `cached`, the projects whose listing the cache holds.",
)
@click.option(
    "--as-of",
    "as_of",
    metavar="DATE|release|latest",
    default="release",
    show_default=True,
    help="With --discover, which release of a bare candidate name is audited: its last before DATE (YYYY-MM-DD or an ISO time, UTC), before the upload of RELEASE (`release`: what its users ran when it came out; the latest when the index gives no upload time), or its latest (`latest`).",
)
@click.option(
    "--format",
    "formats",
    metavar="FMT[:PATH]",
    multiple=True,
    help=f"Summary format, repeatable: {', '.join(IMPACT_FORMATS)}; with :PATH written to that file (default: text to stdout).",
)
@click.option(
    "--results",
    "results_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("apidrift-impact"),
    show_default=True,
    help="Folder for the rows: dependents and findings as JSON Lines and Parquet.",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Skip dependents whose result for the same versions is already in --results.",
)
@click.option(
    "--jobs",
    "-j",
    "workers",
    type=click.IntRange(min=1),
    help="Worker processes of the local pool (default: the CPU count).",
)
@click.option(
    "--executor",
    type=click.Choice(["process", "dask"]),
    default="process",
    show_default=True,
    help="Where jobs run: this machine's process pool, or Dask (a local cluster unless --scheduler).",
)
@click.option(
    "--scheduler", metavar="ADDRESS", help="A Dask scheduler (e.g. tcp://host:8786); implies --executor dask."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=600.0,
    show_default=True,
    help="Seconds one dependent's audit may take.",
)
@click.option(
    "--memory-limit",
    "memory_mb",
    type=click.IntRange(min=0),
    default=4096,
    show_default=True,
    help="Address space one dependent's audit may use, in MB (0: no limit).",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="error",
    show_default=True,
    help="Lowest severity of a finding caused by the release that fails the run (exit 1).",
)
@fetch_options(cache_note=", shared by every job")
@quiet_option()
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Show the libraries' log records (silent otherwise: they would break the progress line).",
)
def impact(
    release: str,
    old: str | None,
    dependents: tuple[Path, ...],
    discover: str | None,
    as_of: str,
    formats: tuple[str, ...],
    results_dir: Path,
    resume: bool,
    workers: int | None,
    executor: str,
    scheduler: str | None,
    timeout: float,
    memory_mb: int,
    fail_on: str,
    cache_dir: Path | None,
    offline: bool,
    index_url: str | None,
    quiet: bool,
    verbose: bool,
) -> None:
    """Audit RELEASE (NAME==VER, a wheel, an sdist or a project folder, or NAME@PATH) against many dependents."""
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.cache import Cache
    from apidrift.auditor.impact.inputs import CACHED, Dependent, candidate_names, read_dependents
    from apidrift.auditor.impact.inputs import discover as run_discovery
    from apidrift.auditor.impact.run import ImpactRequest, release_spec, run_impact
    from apidrift.auditor.sources.locate import locate
    from apidrift.auditor.sources.specs import SourceError, SpecError

    outputs = _outputs(formats)
    if verbose and not quiet:
        show_log_records()
    if not dependents and discover is None:
        raise InputError("no dependents: give --dependents FILE (or DIR/) or --discover FILE")
    try:
        release = release_spec(release, cache_dir)
        found: list[Dependent] = []
        for source in dependents:
            found += read_dependents(source)
        dropped: list[dict[str, Any]] = []
        notes: list[str] = []
        if discover is not None:
            cache = Cache(cache_dir)
            tree = locate(release, role="upstream", cache=cache, index_url=index_url, offline=offline)
            moment, said = _as_of(as_of, tree, cache, index_url, offline)
            if said:
                notes.append(said)
            candidates: Path | list[str] = Path(discover)
            if discover == CACHED or Path(discover).is_dir():
                names = candidate_names(discover, tree.name, cache, index_url)
                notes.append(_candidates_said(discover, len(names), tree.name))
                candidates = names
            elif not Path(discover).is_file():
                raise InputError(f"--discover {discover}: no such file or folder (or `cached`)")
            for item in run_discovery(candidates, tree.name, tree.version, cache, index_url, offline, moment):
                if item.dependent is not None:
                    found.append(item.dependent)
                else:
                    dropped.append({"name": item.name, "version": item.version, "reason": item.reason})
        unique = {d.key_text: d for d in reversed(found)}
        request = ImpactRequest(
            release, tuple(reversed(unique.values())), old=old, results_dir=results_dir, resume=resume,
            executor=executor, scheduler=scheduler, workers=workers, timeout=timeout,
            memory_mb=memory_mb or None, cache_dir=cache_dir, offline=offline, index_url=index_url,
            dropped=tuple(dropped),
        )  # fmt: skip
        if not request.dependents:
            raise InputError("no dependent to audit (discovery kept none)")
        show = DependentsProgress(sys.stderr) if not quiet and is_tty(sys.stderr) else None
        try:
            result = run_impact(request, show)
            result.notes[:0] = notes
        finally:
            if show is not None:
                show.close()
    except (SpecError, SourceError, RuntimeError) as error:
        raise InputError(first_line(error, strip=False)) from None
    for fmt, path in outputs:
        report = render_impact(result, fmt)
        if path is None:
            click.echo(report, nl=False)
            continue
        write_report(path, report)
        if not quiet:
            click.echo(f"apidrift: wrote the {fmt} summary to {path}", err=True)
    raise SystemExit(impact_exit_status(result, fail_on))


def _candidates_said(source: str, count: int, upstream: str) -> str:
    """The note saying where discovery's candidates came from."""
    where = (
        "the projects whose listing the cache holds"
        if source == "cached"
        else f"the requirements and lock files under {source}"
    )
    return f"candidates: {count} names from {where} ({upstream} left out); those that require {upstream} are audited"


def _as_of(
    value: str, tree: Any, cache: Any, index_url: str | None, offline: bool
) -> tuple[datetime | None, str | None]:
    """`--as-of`: the moment bare candidates are taken at, and a note saying which."""
    # lazy: a command's own modules load when it runs; --help, --version and rules stay quick (the engine: 0.15 s)
    from apidrift.auditor.impact.inputs import upload_time
    from apidrift.auditor.sources.index_client import IndexClient
    from apidrift.auditor.sources.specs import SourceError

    text = value.strip().lower()
    if text == "latest":
        return None, None
    if text != "release":
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InputError(
                f"--as-of {value!r}: give a date (YYYY-MM-DD), an ISO time, `release` or `latest`"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment, f"candidates taken at their last release before {moment.isoformat()}"
    if tree.origin != "index":
        return (
            None,
            f"candidates taken at their latest release: {tree.name} is not a release of the index (--as-of DATE sets a moment)",
        )
    try:
        with IndexClient(cache, index_url, offline=offline) as client:
            uploaded = upload_time(client.project(tree.name), tree.version)
    except SourceError as error:
        return (
            None,
            f"candidates taken at their latest release: the upload time of {tree.name} {tree.version} could not be read ({first_line(error)})",
        )
    if uploaded is None:
        return (
            None,
            f"candidates taken at their latest release: the index gives no upload time for {tree.name} {tree.version}",
        )
    return (
        uploaded,
        f"candidates taken at their last release before {tree.name} {tree.version} ({uploaded.isoformat()})",
    )


def render_impact(result: Any, fmt: str) -> str:
    # lazy: jinja2 (47 ms, with the HTML report) loads only for `apidrift impact`
    from apidrift.reports import impact_html, impact_json, impact_markdown, impact_text

    renderers = {
        "text": impact_text.render,
        "markdown": impact_markdown.render,
        "html": impact_html.render,
        "json": impact_json.render,
    }
    return renderers[fmt](result)


def impact_exit_status(result: Any, fail_on: str) -> int:
    """1 when a dependent that is affected now has a finding the release causes at or above `fail_on`."""
    if fail_on == "never":
        return EXIT_OK
    threshold = _RANK[fail_on]
    for row in result.rows:
        if row["status"] not in ("broken", "at-risk", "clean"):
            continue
        for finding in row.get("findings", ()):
            if (
                finding.get("classification") != "pre-existing"
                and _RANK.get(finding["severity"], 0) >= threshold
            ):
                return EXIT_FINDINGS
    return EXIT_OK
