"""Real packages from the index: clean pairs give no error, real breaks are found.

Each downstream is audited against the upstream release of its time (`--from none`: no drift labels
needed). Every error on a clean pair is either a proven bug in the downstream or a false alarm to
fix, so the expected count is zero. Coverage figures are printed in the test summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from apidrift import AuditRequest, audit
from apidrift.auditor.core.results import AuditResult, Classification, FixKind

pytestmark = pytest.mark.network

CLEAN_PAIRS = [
    ("pytest==8.3.4", "pluggy==1.5.0"),
    ("fastapi==0.115.6", "starlette==0.41.3"),
    ("celery==5.4.0", "kombu==5.3.7"),
    ("typer==0.15.1", "click==8.1.8"),
    ("alembic==1.14.0", "sqlalchemy==2.0.36"),
    ("transformers==4.46.0", "huggingface_hub==0.26.1"),
    ("scrapy==2.11.0", "twisted==23.10.0"),
    ("django-filter==23.5", "django==5.0"),
]


# Proven downstream bugs on an otherwise clean pair, each confirmed by running it under the upstream:
# transformers 4.46.0's VAN conversion script imports `cached_download`, which huggingface_hub 0.26
# removed from its lazy-import table ("ImportError: cannot import name 'cached_download' from
# 'huggingface_hub'"); the call of it two screens later is the same break and goes with the import.
PROVEN_BREAKS = {
    ("transformers==4.46.0", "huggingface_hub==0.26.1"): {
        "src/transformers/models/deprecated/van/convert_van_to_pytorch.py:29 AD002",
    },
}


README = Path(__file__).resolve().parents[2] / "README.md"


def _label(spec: str) -> str:
    """`pytest==8.3.4` -> `pytest 8.3.4`, as the README's accuracy table names a release."""
    name, _, version = spec.partition("==")
    return f"{name} {version}".lower()


def readme_accuracy_rows() -> dict[tuple[str, str], list[str]]:
    """The README's "How accurate is it" table: (downstream, upstream) labels -> its five cells."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## How accurate is it", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0] not in ("downstream", "---"):
            upstream = cells[1].split(" (", 1)[0]  # `numpy 2.1.2 (also --from ...)`
            rows[(cells[0].lower(), upstream.lower())] = cells
    return rows


# Sites only the value model finds and cannot follow (a value that may be an upstream object, an
# element of an unannotated container): counted as not checkable, and left out of the share a pair
# must keep, which the name-reached sites set before the value model.
VALUE_REASONS = ("receiver-unknown", "item-unknown")


def by_name(coverage: Any) -> int:
    """The sites found, less those the value model counts as not followable."""
    followed = sum(n for reason, n in coverage.not_checkable.items() if reason.startswith(VALUE_REASONS))
    return int(coverage.found - followed)


def accuracy_row(downstream: str, upstream: str, errors: int, found: int, checked: int) -> str:
    """A row of the README's accuracy table, as the measured figures write it."""
    share = f"{checked / found:.0%}" if found else "-"
    label = f"{errors} (proven)" if errors else "0"
    return f"| {_label(downstream)} | {_label(upstream)} | {label} | {found:,} | {checked:,} ({share}) |"


def check_readme(downstream: str, upstream: str, result: AuditResult, coverage_report: list[str]) -> None:
    """The README's figures for this pair are the ones measured here (the test prints its row)."""
    coverage = result.coverage[0]
    errors = sum(f.severity.value == "error" for f in result.findings)
    measured = accuracy_row(downstream, upstream, errors, coverage.found, coverage.checked)
    coverage_report.append(f"{measured}   {coverage.summary()}")
    cells = readme_accuracy_rows().get((_label(downstream), _label(upstream)))
    if cells is None:
        return  # a pair the README does not list
    written = (cells[2].split()[0], cells[3].replace(",", ""), cells[4].split()[0].replace(",", ""))
    assert written == (str(errors), str(coverage.found), str(coverage.checked)), (
        f"README.md's accuracy table says {cells}; measured: {measured}"
    )


def run(downstream: str, upstream: str, cache: Path, coverage_report: list[str]) -> AuditResult:
    result = audit(AuditRequest(downstream, upstream, old="none", cache_dir=cache))
    check_readme(downstream, upstream, result, coverage_report)
    return result


@pytest.mark.parametrize(("downstream", "upstream"), CLEAN_PAIRS, ids=[f"{d}-{u}" for d, u in CLEAN_PAIRS])
def test_clean_pair_has_no_error(
    downstream: str, upstream: str, index_cache: Path, coverage_report: list[str]
) -> None:
    result = run(downstream, upstream, index_cache, coverage_report)
    errors = {
        f"{f.location.path}:{f.location.line} {f.code}"
        for f in result.findings
        if f.severity.value == "error"
    }
    assert errors == PROVEN_BREAKS.get((downstream, upstream), set())
    coverage = result.coverage[0]
    assert coverage.found >= 50
    assert coverage.checked >= COVERAGE_FLOOR.get((downstream, upstream), 0.8) * by_name(coverage), (
        coverage.not_checkable
    )


# Pairs whose share of checked uses is lower for a reason of their own: django-filter's 42 calls of
# `_ = gettext_lazy` (`lazy(gettext, str)`, whose wrapper hands its arguments to a proxy and binds
# nothing until the string is used) are not checkable (`not-callable`); scikit-image's 130 calls of
# scipy functions under `@docfiller` (`_doccer.filldoc(docdict)`, a decorator made by a call) and
# `@_dispatch` (scipy.fft's uarray dispatch), whose result the model does not follow.
# pytest's values reached across its own modules (`config.hook`, `config.trace`, `Config`'s attributes
# holding pluggy objects, set in `_pytest/config/__init__.py` and read in a dozen modules) are sites
# since values are followed across a downstream's modules: 50 of them meet pluggy's `HookRelay.__getattr__`
# (`class-getattr`) or its tracer's untyped attributes (`callee-unresolved`), counted, not checked.
COVERAGE_FLOOR = {
    ("django-filter==23.5", "django==5.0"): 0.75,
    ("scikit-image==0.22.0", "scipy==1.11.3"): 0.65,
    ("pytest==8.3.4", "pluggy==1.5.0"): 0.6,
}


def test_typer_against_click_8_2_finds_the_make_metavar_break(
    index_cache: Path, coverage_report: list[str]
) -> None:
    result = run("typer==0.15.1", "click==8.2.0", index_cache, coverage_report)
    errors = {
        (f.location.path, f.location.line, f.code) for f in result.findings if f.severity.value == "error"
    }
    # TyperArgument.make_metavar(self) overrides click's make_metavar(self, ctx), which click 8.2 calls with ctx.
    assert ("typer/core.py", 381, "AD106") in errors
    # typer's own calls that click 8.2 broke: ParamType.get_metavar(param, ctx) and Option.make_metavar(ctx).
    assert ("typer/core.py", 389, "AD102") in errors
    assert ("typer/core.py", 504, "AD102") in errors
    assert len(errors) == 3
    # click 8.2's click.parser serves split_arg_string through its __getattr__ with a DeprecationWarning
    # ("Importing 'parser.split_arg_string' is deprecated ..."), confirmed by importing it under 8.2.0.
    deprecations = {(f.location.path, f.location.line) for f in result.findings if f.code == "AD203"}
    assert {("typer/_completion_classes.py", line) for line in (36, 73, 124, 178)} <= deprecations


# Real breaks behind a module `__getattr__`, each confirmed by running the failing import or call in a
# throwaway environment with the old and the new release installed (the old works, the new raises as
# quoted below). The downstreams are a few lines written here; the upstreams are the real releases.


def local_downstream(root: Path, source: str) -> str:
    package = root / "downstream" / "app"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(source)
    return str(package)


def errors_of(result: AuditResult) -> dict[tuple[int, str], object]:
    return {(f.location.line, f.code): f for f in result.findings if f.severity.value == "error"}


def test_lazily_loaded_name_removed_from_huggingface_hub(tmp_path: Path, index_cache: Path) -> None:
    # 0.26.0: ImportError: cannot import name 'cached_download' from 'huggingface_hub'. The package
    # serves its names through a copy of lazy_loader's attach() over the table `_SUBMOD_ATTRS`.
    downstream = local_downstream(
        tmp_path, "from huggingface_hub import cached_download\nfrom huggingface_hub import hf_hub_download\n"
    )
    result = audit(
        AuditRequest(
            downstream, "huggingface_hub==0.26.0", old="huggingface_hub==0.25.2", cache_dir=index_cache
        )
    )
    errors = errors_of(result)
    assert set(errors) == {(1, "AD002")}
    finding = errors[(1, "AD002")]
    assert finding.classification is Classification.DRIFT
    assert "No huggingface_hub attribute cached_download" in finding.hint


def test_deprecation_shim_removed_from_flask(tmp_path: Path, index_cache: Path) -> None:
    # 2.3.3: DeprecationWarning "'flask.Markup' is deprecated and will be removed in Flask 2.4. ...";
    # 3.0.0: ImportError: cannot import name 'Markup' from 'flask' (its __getattr__ serves only __version__).
    downstream = local_downstream(tmp_path, "from flask import Flask\nfrom flask import Markup\n")
    result = audit(AuditRequest(downstream, "flask==3.0.0", old="flask==2.3.3", cache_dir=index_cache))
    errors = errors_of(result)
    assert set(errors) == {(2, "AD002")}
    finding = errors[(2, "AD002")]
    assert finding.classification is Classification.DRIFT
    assert (
        "flask==2.3.3 deprecated it: \u201c'flask.markup' is deprecated and will be removed in flask 2.4."
        in finding.hint.lower()
    )
    before = audit(AuditRequest(downstream, "flask==2.3.3", old="none", cache_dir=index_cache))
    deprecations = [(f.location.line, f.code) for f in before.findings if f.severity.value == "warning"]
    assert deprecations == [(2, "AD203")]
    assert not [f for f in before.findings if f.severity.value == "error"]


def test_migration_shim_of_pydantic_2(tmp_path: Path, index_cache: Path) -> None:
    # 2.5.3: pydantic.errors.PydanticImportError: `BaseSettings` has been moved to the `pydantic-settings`
    # package. See https://docs.pydantic.dev/2.5/migration/#basesettings-has-moved-to-pydantic-settings
    # for more details. (raised by pydantic._migration.getattr_migration's wrapper; pydantic 2.5.3
    # installed in a throwaway venv).
    downstream = local_downstream(
        tmp_path, "from pydantic import BaseModel\nfrom pydantic import BaseSettings\n"
    )
    result = audit(
        AuditRequest(downstream, "pydantic==2.5.3", old="pydantic==1.10.13", cache_dir=index_cache)
    )
    errors = errors_of(result)
    assert set(errors) == {(2, "AD002")}
    finding = errors[(2, "AD002")]
    assert finding.classification is Classification.DRIFT
    # the whole message CPython shows, the docs link computed by pydantic.version.version_short()
    assert (
        "`BaseSettings` has been moved to the `pydantic-settings` package. See https://docs.pydantic.dev/"
        "2.5/migration/#basesettings-has-moved-to-pydantic-settings for more details."
    ) in finding.hint


def test_override_called_with_a_new_optional_argument_by_click_8(tmp_path: Path, index_cache: Path) -> None:
    # click 8.0.0, `--help` of a command using this option: TypeError: EnvOption.get_default() got an
    # unexpected keyword argument 'call' (Option.get_help_record calls self.get_default(ctx, call=False)).
    source = (
        "import click\n\n\n"
        "class EnvOption(click.Option):\n"
        "    def get_default(self, ctx):\n"
        "        return super().get_default(ctx)\n"
    )
    downstream = local_downstream(tmp_path, source)
    result = audit(AuditRequest(downstream, "click==8.0.0", old="click==7.1.2", cache_dir=index_cache))
    errors = errors_of(result)
    assert set(errors) == {(5, "AD106")}
    finding = errors[(5, "AD106")]
    assert finding.classification is Classification.DRIFT
    assert (
        "self.get_default(ctx, call=False)" in finding.message and "Option.get_help_record" in finding.message
    )


# Large downstreams that construct and subclass upstream classes heavily and meet stubs of compiled
# code (numpy's `.pyi`, pandas' `_libs` stubs), each against an upstream release its requirements
# accept: xarray 2024.10.0 (pandas>=2.1), scikit-learn 1.5.2 (scipy>=1.6.0, LinearOperator's factory
# `__new__`; numpy>=1.19.5, built for numpy 2; numpy's `percentile` stub omits the `interpolation=`
# its Python source still takes).
# Downstreams first audited as a stranger would, each against the upstream release current when it was
# released (upload times on the index): seaborn 0.13.2 (2024-01-25) / matplotlib 3.8.2 (2023-11-17, the
# stubs of 3.8 beside their sources), djangorestframework 3.15.1 (2024-03-22) / Django 5.0.3
# (2024-03-04), httpx 0.27.0 / httpcore 1.0.4 (released together, 2024-02-21). No error on any. The
# share checked is lower than on the pairs above and says where breaks could hide: in DRF mostly
# `unittest.TestCase` methods behind Django's test cases (293 sites), `_()` = `gettext_lazy` built by
# `lazy()` (341), `django.conf.settings` behind its `__getattr__` (189) and `@deconstructible`
# validators (50); in seaborn pyplot functions behind `_copy_docstring_and_deprecators` (41).
# plotnine 0.13.6 (2024-05) / matplotlib 3.8.4 (2024-04-03) gave three false errors, all from reading
# 3.8's stubs as the whole class: `TextArea._text` (set in `offsetbox.py`'s `__init__`, absent from
# `offsetbox.pyi`) twice, and an AD106 on an override of `AnchoredOffsetbox.get_offset`, which the
# source defines as `(self, bbox, renderer)` and the stub leaves to `OffsetBox`'s two overloads. A
# name the source class binds is now not missing (`not-in-stub`).
STRANGER_PAIRS = [
    ("seaborn==0.13.2", "matplotlib==3.8.2", 450, 0.8),
    ("plotnine==0.13.6", "matplotlib==3.8.4", 600, 0.85),
    ("djangorestframework==3.15.1", "django==5.0.3", 3000, 0.6),
    ("httpx==0.27.0", "httpcore==1.0.4", 30, 0.8),
    # seaborn 0.13.2 `_compat.get_colormap` falls back to `mpl.cm.get_cmap` (gone in 3.9.0) only in an
    # `except AttributeError:` after `mpl.colormaps[name]`, which 3.9 has: two false errors before.
    ("seaborn==0.13.2", "matplotlib==3.9.0", 450, 0.8),
    # marshmallow-jsonapi 0.20.0 (November 2018) against the marshmallow of its time; `iteritems` of
    # `marshmallow.compat` is a lambda, bound as a function
    ("marshmallow-jsonapi==0.20.0", "marshmallow==2.16.3", 150, 0.5),
    # flask-profiler 1.8.1 (November 2018) against the pymongo of its time (3.7.2, October 2018): its
    # collection, `MongoClient(url)[db][name]`, held on `self`; four deprecation warnings, no error
    ("flask-profiler==1.8.1", "pymongo==3.7.2", 25, 0.75),
    # 2022 releases against the upstream of their upload day: pip's internals (pip-tools), an ORM's
    # migration tool, a pytest plugin
    ("pip-tools==6.8.0", "pip==22.1.2", 400, 0.85),
    ("alembic==1.8.1", "sqlalchemy==1.4.39", 2200, 0.6),
    ("pytest-django==4.5.2", "pytest==7.1.2", 55, 0.8),
    # 2022-2024 releases against the upstream of their upload day. pydantic-extra-types 2.7.0 gave ten
    # false AD108: `handler(schema)` on a parameter annotated `GetJsonSchemaHandler`, whose `__call__`
    # raises NotImplementedError; pydantic hands over a subclass that defines it
    ("pydantic-extra-types==2.7.0", "pydantic==2.7.0", 55, 0.8),
    ("instructor==1.2.0", "openai==1.17.1", 90, 0.75),
    ("respx==0.21.1", "httpx==0.27.0", 170, 0.85),
    ("aiohttp-retry==2.8.3", "aiohttp==3.8.1", 22, 0.8),
    ("celery-redbeat==2.2.0", "redis==5.0.1", 15, 0.7),
    ("arq==0.25.0", "redis==4.3.5", 30, 0.85),
    ("sphinx-design==0.5.0", "sphinx==7.1.0", 350, 0.4),
    ("myst-parser==2.0.0", "sphinx==7.0.1", 250, 0.5),
    ("django-celery-beat==2.5.0", "django==4.1.7", 580, 0.6),
    ("django-redis==5.3.0", "redis==4.5.5", 45, 0.4),
    ("s3fs==2024.3.1", "aiobotocore==2.12.1", 12, 0.35),
    ("django-import-export==3.3.1", "django==4.2.5", 250, 0.7),
    ("mkdocstrings-python==1.7.3", "griffe==0.36.4", 35, 0.8),
    # Downstream releases against the upstream release current on their upload day (2023), chosen
    # across ORMs and their plugins, HTTP clients and SDKs, Sphinx, pytest, Flask and Django extensions
    # and click apps; each audit with --from the release before gives no error either.
    ("sqlmodel==0.0.14", "sqlalchemy==2.0.23", 375, 0.95),
    ("flask-sqlalchemy==3.1.1", "sqlalchemy==2.0.20", 160, 0.85),
    ("flask-migrate==4.0.5", "alembic==1.12.0", 90, 0.90),
    ("requests-toolbelt==1.0.0", "requests==2.29.0", 150, 0.65),
    ("requests==2.31.0", "urllib3==2.0.2", 84, 0.85),
    ("sphinx-autodoc-typehints==1.23.0", "sphinx==6.1.3", 88, 0.65),
    ("pytest-mock==3.11.1", "pytest==7.3.2", 11, 0.50),
    ("pytest-asyncio==0.21.1", "pytest==7.4.0", 55, 0.70),
    ("flask-wtf==1.2.1", "wtforms==3.0.1", 49, 0.95),
    ("flask-cors==4.0.0", "flask==2.3.2", 22, 0.45),
    ("django-crispy-forms==2.1", "django==4.2.6", 175, 0.85),
    ("django-debug-toolbar==4.2.0", "django==4.2.4", 470, 0.75),
    ("rich-click==1.7.0", "click==8.1.7", 245, 0.85),
    ("cattrs==23.1.2", "attrs==23.1.0", 64, 0.80),
    ("pydantic-settings==2.0.3", "pydantic==2.1.1", 48, 0.70),
    ("sphinx-copybutton==0.5.2", "sphinx==6.1.3", 5, 0.75),
    ("pytest-timeout==2.2.0", "pytest==7.4.2", 19, 0.55),
    ("django-environ==0.11.2", "django==4.2.4", 4, 0.95),
    ("flask-caching==2.1.0", "flask==3.0.0", 42, 0.45),
    ("sphinx-autoapi==3.0.0", "sphinx==7.2.6", 145, 0.75),
    ("nbsphinx==0.9.3", "sphinx==7.2.3", 61, 0.75),
    ("aiobotocore==2.5.0", "botocore==1.29.76", 1195, 0.75),
    ("httpie==3.2.2", "requests==2.30.0", 93, 0.80),
    ("flask-restx==1.1.0", "flask==2.2.3", 110, 0.55),
    # its backends derive from `BaseStorage` (another module), whose `__init__` sets attributes by
    # computed name (`setattr(self, name, value)`): 73 reads of them, met since values cross modules,
    # are counted `attribute-of-annotated-type` (the upstream `Storage` lacks them), not checked
    ("django-storages==1.14", "django==4.2.5", 145, 0.60),
    ("factory-boy==3.3.0", "sqlalchemy==2.0.19", 4, 0.95),
    ("motor==3.3.1", "pymongo==4.5.0", 64, 0.90),
    ("boto3==1.28.57", "botocore==1.31.57", 290, 0.75),
    ("sphinx-design==0.5.0", "sphinx==7.1.0", 345, 0.45),
    ("pytest-benchmark==4.0.0", "pytest==7.2.0", 63, 0.55),
    # typer 0.9.0 imports `_completion_click7.py` (`import click._bashcomplete`, gone in click 8) only
    # under `if _get_click_major() < 8:`, the helper returning `int(click.__version__.split(".")[0])`:
    # under click 8.1.3 it is never imported (run: `typer.completion.completion_init()` loads
    # `_completion_click8` only); its 27 uses are `module-not-imported`, no longer a false error
    ("typer==0.9.0", "click==8.1.3", 440, 0.80),
]


# Famous breaks, each confirmed under CPython 3.11 with the upstream release installed in a throwaway
# venv: httpx 0.28.0 `httpx.Client(proxies=...)` raises "TypeError: Client.__init__() got an
# unexpected keyword argument 'proxies'" (openai 1.55.0 builds every client through a subclass that
# forwards **kwargs after setdefault, `_base_client.py:857` and `:1438`); Jinja 3.1.0 `from jinja2
# import Markup` and itsdangerous 2.1.0 `from itsdangerous import json` raise ImportError (flask
# 1.1.4); MarkupSafe 2.1.0 `from markupsafe import soft_unicode` raises ImportError (Jinja 2.11.3);
# click 8.1.0 dropped `click._unicodefun`, and `black --version` (black 22.1.0) stops with "ImportError:
# cannot import name '_unicodefun' from 'click'": its `except ModuleNotFoundError:` does not catch it.
FAMOUS_BREAKS = [
    (
        "openai==1.55.0",
        "httpx==0.28.0",
        {
            # the calls' first lines, where CPython 3.11 raises (httpx 0.28.0, each statement run)
            "src/openai/_base_client.py:857 AD101",
            "src/openai/_base_client.py:1438 AD101",
            "src/openai/cli/_cli.py:179 AD101",
        },
    ),
    (
        "flask==1.1.4",
        "jinja2==3.1.0",
        {
            "flask/__init__.py:14 AD002",
            "flask/__init__.py:15 AD002",
            "flask/json/__init__.py:16 AD002",
            "flask/json/tag.py:49 AD002",
        },
    ),
    ("flask==1.1.4", "itsdangerous==2.1.0", {"flask/json/__init__.py:15 AD002"}),
    ("black==22.1.0", "click==8.1.0", {"black/__init__.py:1409 AD002"}),
    # scipy 1.9 removed `linalg.pinv2` (ImportError under CPython with scipy 1.9.3); `scipy.linalg`
    # also star-imports the compiled `_decomp_update`, whose Cython source's `__all__` rules it out
    ("scikit-learn==0.24.2", "scipy==1.9.3", {"sklearn/cross_decomposition/_pls.py:12 AD002"}),
    (
        "jinja2==2.11.3",
        "markupsafe==2.1.0",
        # the third inside `jinja2.utils.soft_unicode`'s own body: it fails when that function is called
        {"jinja2/filters.py:13 AD002", "jinja2/runtime.py:9 AD002", "jinja2/utils.py:729 AD002"},
    ),
    # pandas 2.1.0 added `ExtensionArray.interpolate(*, method, axis, index, ...)` and calls it for
    # `Series.interpolate()`; geopandas 0.14.0's `GeometryArray.interpolate(self, distance,
    # normalized=False)` (linear referencing) now overrides it: `pd.Series(geometry_array).interpolate()`
    # raises "TypeError: GeometryArray.interpolate() got an unexpected keyword argument 'method'"
    # (pandas 2.1.0, shapely 2.0.1, CPython 3.11)
    ("geopandas==0.14.0", "pandas==2.1.0", {"geopandas/array.py:711 AD106"}),
]


@pytest.mark.parametrize(
    ("downstream", "upstream", "expected"), FAMOUS_BREAKS, ids=[f"{d}-{u}" for d, u, _ in FAMOUS_BREAKS]
)
def test_famous_break_is_found_once(
    downstream: str, upstream: str, expected: set[str], index_cache: Path
) -> None:
    result = audit(AuditRequest(downstream, upstream, cache_dir=index_cache))
    errors = {
        f"{f.location.path}:{f.location.line} {f.code}": f
        for f in result.findings
        if f.severity.value == "error"
    }
    assert set(errors) == expected
    if upstream == "jinja2==3.1.0":  # the old version re-exported MarkupSafe's object: say so
        assert (
            "it was `markupsafe.Markup`, re-exported from another distribution"
            in errors["flask/json/tag.py:49 AD002"].hint
        )
    if upstream == "itsdangerous==2.1.0":  # eight uses of `_json` go with the one import
        assert (
            "8 uses of it in this file go with this import" in errors["flask/json/__init__.py:15 AD002"].hint
        )
    if upstream == "click==8.1.0":  # the handler around the import is named with what it lets through
        assert (
            "it raises `ImportError`, which the `except ModuleNotFoundError:` around it does not catch"
            in errors["black/__init__.py:1409 AD002"].hint
        )
    if upstream == "markupsafe==2.1.0":  # a stale private stub is no new home
        assert all(
            "_speedups" not in (f.hint or "") and "moved to" not in (f.hint or "") for f in errors.values()
        )
        # `soft_unicode`, bound by a compiled twin (its stub) or the Python fallback that warns "'soft_unicode'
        # has been renamed to 'soft_str'": replaced by `soft_str`, never moved
        assert all(
            f.fix is not None and f.fix.kind is FixKind.REPLACE_NAME and "`soft_str`" in f.fix.description
            for f in errors.values()
        )


# Flask 3.0.0 against two extensions of Flask 2.2's time, never tuned to, each confirmed in throwaway
# venvs (Flask 2.2.5 + Werkzeug 2.2.3 works; Flask 3.0.0 + Werkzeug 3.0.0 raises as quoted):
# - flask-restful 0.3.9 `Api.handle_error` reads `current_app.propagate_exceptions` (a property Flask
#   3.0 removed): "AttributeError: 'Flask' object has no attribute 'propagate_exceptions'", reached
#   through a value (`current_app`, the proxy flask.globals annotates as `Flask`); its caller's
#   `except Exception: pass` then answers every API error with Flask's HTML page instead of JSON.
# - flask-debugtoolbar 0.13.1 `from flask.globals import _request_ctx_stack` raises ImportError; the
#   request read from it (`req = _request_ctx_stack.top.request`) and its uses go with that import.
FLASK_3_VALUE_BREAKS = [
    ("flask-restful==0.3.9", {"flask_restful/__init__.py:283 AD004"}),
    (
        "flask-debugtoolbar==0.13.1",
        {"src/flask_debugtoolbar/__init__.py:5 AD002", "src/flask_debugtoolbar/utils.py:23 AD002"},
    ),
]


@pytest.mark.parametrize(
    ("downstream", "expected"), FLASK_3_VALUE_BREAKS, ids=[d for d, _ in FLASK_3_VALUE_BREAKS]
)
def test_flask_3_breaks_reached_through_values_are_found_once(
    downstream: str, expected: set[str], index_cache: Path
) -> None:
    result = audit(AuditRequest(downstream, "flask==3.0.0", old="flask==2.2.5", cache_dir=index_cache))
    errors = {
        f"{f.location.path}:{f.location.line} {f.code}": f
        for f in result.findings
        if f.severity.value == "error"
    }
    assert set(errors) == expected
    if downstream.startswith("flask-debugtoolbar"):  # one break, one finding: the request's uses go with it
        assert errors["src/flask_debugtoolbar/__init__.py:5 AD002"].hint.endswith(
            "5 uses of what it gives in this file (through a name or value bound from it) fail with it "
            "(lines 127, 130, 139, 140, 142)"
        )


def test_pandas_2_method_gone_behind_getattr_is_a_warning_with_pandas_own_message(index_cache: Path) -> None:
    """finta 1.3 `TA.KAMA` iterates `sc.iteritems()` (finta.py:292): it runs under pandas 1.5.3 (with
    "FutureWarning: iteritems is deprecated ...") and raises "AttributeError: 'Series' object has no
    attribute 'iteritems'" under pandas 2.0.0, both confirmed in throwaway venvs. Only
    `NDFrame.__getattr__` (serving data by name) could still answer the name: a warning, not silence."""
    result = audit(AuditRequest("finta==1.3", "pandas==2.0.0", old="pandas==1.5.3", cache_dir=index_cache))
    gone = [f for f in result.findings if f.code == "AD204" and f.location.line == 292]
    assert gone and all(f.severity.value == "warning" for f in gone)
    assert "iteritems is deprecated and will be removed in a future version. Use .items instead." in (
        gone[0].hint or ""
    )
    assert not [f for f in result.findings if f.severity.value == "error"]


def test_django_2_1_calls_widget_render_with_renderer_a_warning_on_an_old_override(index_cache: Path) -> None:
    """django-tinymce 2.6.0 `TinyMCE.render(self, name, value, attrs=None)`: Django 1.11.15 renders it
    with "RemovedInDjango21Warning: Add the `renderer` argument to the render() method"; Django 2.1's
    `BoundField.as_widget` calls `widget.render(..., renderer=...)` and raises "TypeError: render() got
    an unexpected keyword argument 'renderer'" (both run under pyenv's CPython 3.6/3.7). The widget is
    a value Django does not type: a warning, at the override, as drift."""
    result = audit(
        AuditRequest("django-tinymce==2.6.0", "django==2.1", old="django==1.11.15", cache_dir=index_cache)
    )
    (render,) = [f for f in result.findings if f.code == "AD106" and f.location.path == "tinymce/widgets.py"]
    assert (render.location.line, render.severity.value) == (72, "warning")
    assert "widget.render(name=..., value=..., attrs=..., renderer=...)" in render.message
    assert render.classification.value == "drift"
    # Django 2.1 calls `formfield_for_dbfield` only through `partial(self.formfield_for_dbfield,
    # request=request)`: the test app's `formfield_for_dbfield(self, db_field, **kwargs)` takes it (three
    # false AD106 before, from the shape the signature implies). The one error is the test app's
    # `models.ForeignKey(TestPage)` without `on_delete`, required since Django 2.0.
    errors = {
        f"{f.location.path}:{f.location.line} {f.code}"
        for f in result.findings
        if f.severity.value == "error"
    }
    assert errors == {"testtinymce/testapp/models.py:9 AD102"}


# Clean pairs audited against the upstream release of their time, from the release before it (the
# upgrade a user makes): no error, drift or pre-existing. flask-sqlalchemy 2.5.1 calls
# `scoped_session(...).commit()`, a method SQLAlchemy 1.4's `@create_proxy_methods(Session, ...,
# methods=[..., "commit", ...])` sets on the class (a false AD004 before).
# GeoAlchemy2 0.14.0 (subclasses SQLAlchemy's types, functions and comparators) imports SQLAlchemy 1's
# `with_metaclass` in a `try` whose `except ImportError:` is the SQLAlchemy 2 branch, and calls it in
# that `try` (a false AD003 before: the import raises first).
# django-filter 23.2 reads `self.field.choices` in `MultipleChoiceFilter`, whose `field_class`
# overrides the base's `forms.Field` (a false AD004 before: the base's value read through `self`).
# Sphinx extensions (myst-parser, breathe) call `app.add_directive`, whose docstring deprecates
# function-based directives' support, not the method (a false AD203 warning before); the test asserts
# errors only.
UPGRADE_PAIRS = [
    ("flask-sqlalchemy==2.5.1", "sqlalchemy==1.4.0", "sqlalchemy==1.3.24"),
    ("geoalchemy2==0.14.0", "sqlalchemy==2.0.16", "sqlalchemy==2.0.15"),
    ("sqlalchemy-continuum==1.4.0", "sqlalchemy==2.0.17", "sqlalchemy==2.0.16"),
    ("pytest-bdd==6.1.1", "pytest==7.2.0", "pytest==7.1.3"),
    ("myst-parser==2.0.0", "sphinx==7.0.1", "sphinx==7.0.0"),
    ("breathe==4.35.0", "sphinx==6.1.3", "sphinx==6.1.2"),
    ("django-extensions==3.2.3", "django==4.2.2", "django==4.2.1"),
    ("django-filter==23.2", "django==4.2.2", "django==4.2.1"),
]


@pytest.mark.parametrize(
    ("downstream", "upstream", "old"), UPGRADE_PAIRS, ids=[f"{d}-{u}" for d, u, _ in UPGRADE_PAIRS]
)
def test_upgrade_of_its_time_has_no_error(
    downstream: str, upstream: str, old: str, index_cache: Path
) -> None:
    result = audit(AuditRequest(downstream, upstream, old=old, cache_dir=index_cache))
    errors = [
        f"{f.location.path}:{f.location.line} {f.code} {f.message}"
        for f in result.findings
        if f.severity.value == "error"
    ]
    assert errors == []
    assert result.coverage[0].checked >= 50, result.coverage[0].not_checkable


def test_pytest_8_1_removed_hook_implemented_by_a_plugin_is_found_once(index_cache: Path) -> None:
    """pymtl3 3.1.16's pytest plugin (`pytest_plugin/pytest_pymtl3.py`, its `pytest11` entry point)
    defines `pytest_cmdline_preparse(config, args)`; pytest 8.1 removed that hook (8.0 deprecated it
    with `warn_on_impl`). Confirmed under CPython 3.11: with pytest 8.0.2 a trivial test passes, with
    8.1.1 "PluginValidationError: unknown hook 'pytest_cmdline_preparse' in plugin <module
    'pytest_plugin.pytest_pymtl3' ...>". Against 8.0.0 (from 7.4.4) the deprecation is a warning."""
    result = audit(
        AuditRequest("pymtl3==3.1.16", "pytest==8.1.1", old="pytest==8.0.2", cache_dir=index_cache)
    )
    hooks = [f for f in result.findings if f.code == "AD109"]
    assert [(f.location.path, f.location.line, f.severity.value) for f in hooks] == [
        ("pytest_plugin/pytest_pymtl3.py", 69, "error")
    ]
    assert "unknown hook 'pytest_cmdline_preparse'" in hooks[0].message
    assert "pytest_load_initial_conftests" in (hooks[0].hint or "")
    assert hooks[0].classification is Classification.DRIFT
    result = audit(
        AuditRequest("pymtl3==3.1.16", "pytest==8.0.0", old="pytest==7.4.4", cache_dir=index_cache)
    )
    hooks = [f for f in result.findings if f.code == "AD109"]
    assert [(f.location.line, f.severity.value) for f in hooks] == [(69, "warning")]


def test_pytest_8_1_0_removed_hook_argument_taken_by_a_plugin(index_cache: Path) -> None:
    """pytest-mypy-testing 0.1.2 defines `pytest_collect_file(file_path, path, parent)` under `else:`
    of `if PYTEST_VERSION_INFO < (7,):` (the other branch, `(path, parent)`, does not run with pytest
    8); pytest 8.1.0 removed the `path` argument from the spec. Confirmed under CPython 3.11: with
    pytest 8.0.2 a trivial test passes, with 8.1.0 "PluginValidationError: Plugin 'mypy-testing' for
    hook 'pytest_collect_file' ... Argument(s) {'path'} are declared in the hookimpl but can not be
    found in the hookspec"."""
    result = audit(
        AuditRequest(
            "pytest-mypy-testing==0.1.2", "pytest==8.1.0", old="pytest==8.0.2", cache_dir=index_cache
        )
    )
    hooks = [f for f in result.findings if f.code == "AD109"]
    assert [(f.location.path, f.location.line, f.severity.value) for f in hooks] == [
        ("pytest_mypy_testing/plugin.py", 225, "error")
    ]
    assert "Argument(s) {'path'}" in hooks[0].message


# Large pytest plugins of early 2024 that work with pytest 8.0 and 8.1 (their `pytest11` modules
# implement 17 of pytest's hooks between them): no hook finding.
HOOK_CLEAN_PAIRS = [
    (d, new, old)
    for d in ("pytest-xdist==3.5.0", "pytest-cov==4.1.0", "pytest-django==4.8.0")
    for new, old in (("pytest==8.0.0", "pytest==7.4.4"), ("pytest==8.1.1", "pytest==8.0.2"))
]


@pytest.mark.parametrize(
    ("downstream", "upstream", "old"), HOOK_CLEAN_PAIRS, ids=[f"{d}-{u}" for d, u, _ in HOOK_CLEAN_PAIRS]
)
def test_pytest_plugin_of_its_time_has_no_hook_finding(
    downstream: str, upstream: str, old: str, index_cache: Path
) -> None:
    result = audit(AuditRequest(downstream, upstream, old=old, cache_dir=index_cache))
    assert [
        f"{f.location.path}:{f.location.line} {f.code}"
        for f in result.findings
        if f.severity.value == "error"
    ] == []
    assert [f for f in result.findings if f.code == "AD109"] == []


def test_pymongo_4_removed_collection_methods_reached_through_values_of_kombu(index_cache: Path) -> None:
    """kombu 5.1.0's MongoDB transport calls `self.messages.insert(...)`, `.update`, `.remove`,
    `.find_and_modify` on collections reached through its own cached properties over
    `MongoClient(**conf)[dbname][name]`. pymongo 4.0 removed those methods; `Collection.__getattr__`
    then hands back a sub-collection, whose `__call__` always raises. Confirmed under CPython 3.11:
    with 3.12.0 `insert` reaches for the server (ServerSelectionTimeoutError), with 4.0 "TypeError:
    'Collection' object is not callable. If you meant to call the 'insert' method on a 'Collection'
    object it is failing because no such method exists." `Cursor.count` (line 191) is on a cursor
    whose class writes attributes at run time: a warning."""
    result = audit(AuditRequest("kombu==5.1.0", "pymongo==4.0", old="pymongo==3.12.0", cache_dir=index_cache))
    errors = {f.location.line for f in result.findings if f.severity.value == "error" and f.code == "AD108"}
    assert errors == {154, 168, 203, 206, 215, 248, 251, 254, 462, 464}
    assert [
        f.code for f in result.findings if f.severity.value == "error" and f.location.line not in errors
    ] == []
    insert = next(f for f in result.findings if f.location.line == 203)
    assert "insert is deprecated. Use insert_one or insert_many instead." in (insert.hint or "")


def test_pymongo_4_removed_collection_methods_reached_through_self_of_flask_profiler(
    index_cache: Path,
) -> None:
    """flask-profiler 1.8.1's MongoDB storage keeps `self.collection = self.db[self.collection_name]`
    over `self.db = self.client[...]`, `self.client = pymongo.MongoClient(url)`, then calls
    `self.collection.ensure_index(...)` (in a closure of `__init__`), `.insert(...)` and `.remove(...)`.
    Confirmed under CPython 3.8 with flask-profiler's own `Mongo` methods and no server: with 3.7.2
    each reaches for the server (ServerSelectionTimeoutError), with 4.0 each raises "TypeError:
    'Collection' object is not callable. If you meant to call the 'insert' method on a 'Collection'
    object ..." at mongo.py lines 23, 89, 95 and 101: one finding each, at those lines."""
    result = audit(
        AuditRequest("flask-profiler==1.8.1", "pymongo==4.0", old="pymongo==3.7.2", cache_dir=index_cache)
    )
    errors = [
        f"{f.location.path}:{f.location.line} {f.code}"
        for f in result.findings
        if f.severity.value == "error"
    ]
    assert sorted(errors) == sorted(f"flask_profiler/storage/mongo.py:{n} AD108" for n in (23, 89, 95, 101))


def test_griffe_1_removed_modules_each_one_finding_in_mkdocstrings_python(index_cache: Path) -> None:
    """griffe 1.0.0 removed its submodules (`griffe.loader`, `griffe.extensions`, ...; everything is
    exported by `griffe`). mkdocstrings-python 1.7.3 imports six of them in `handler.py` (lines 14-19);
    CPython 3.11 with griffe 1.0.0: "ModuleNotFoundError: No module named 'griffe.collections'" at line
    14 (0.36.4: the module imports). The uses of what they bind (`loader = GriffeLoader(...)`, then
    `loader.load_module(...)`, a local name spelled like the module) go with the imports: ten errors
    for six breaks before."""
    result = audit(
        AuditRequest(
            "mkdocstrings-python==1.7.3", "griffe==1.0.0", old="griffe==0.36.4", cache_dir=index_cache
        )
    )
    errors = [
        f"{f.location.path}:{f.location.line} {f.code}"
        for f in result.findings
        if f.severity.value == "error"
    ]
    assert sorted(errors) == [f"src/mkdocstrings_handlers/python/handler.py:{n} AD001" for n in range(14, 20)]
    loader = next(f for f in result.findings if f.location.line == 18)
    assert "4 uses of what it gives in this file" in (loader.hint or "")
    assert "`GriffeLoader` -> `griffe.GriffeLoader`" in (loader.hint or "")
    assert "import them as `from griffe import GriffeLoader`" in (loader.hint or "")


def test_pip_23_1_internals_broke_pip_tools_through_an_annotated_parameter(index_cache: Path) -> None:
    """pip 23.1 made `WheelCache(cache_dir)` take one argument and dropped
    `InstallRequirement.install_options`. pip-tools 6.8.0 (fine with pip 22.1.2, its time) calls
    `WheelCache(self._cache_dir, self.options.format_control)` in both resolvers and reads
    `template.install_options` on its parameter `template: InstallRequirement`. Confirmed under CPython
    3.11 with pip 23.1: `pip-compile --rebuild --resolver=legacy` raises "TypeError:
    WheelCache.__init__() takes 2 positional arguments but 3 were given" at pypi.py:249,
    `--resolver=backtracking` the same at resolver.py:562, and `copy_install_requirement(...)` raises
    "AttributeError: 'InstallRequirement' object has no attribute 'install_options'" at utils.py:473;
    all three run with pip 22.1.2."""
    result = audit(AuditRequest("pip-tools==6.8.0", "pip==23.1", old="pip==22.1.2", cache_dir=index_cache))
    errors = [
        f"{f.location.path}:{f.location.line} {f.code}"
        for f in result.findings
        if f.severity.value == "error"
    ]
    assert sorted(errors) == [
        "piptools/repositories/pypi.py:249 AD103",
        "piptools/resolver.py:562 AD103",
        "piptools/utils.py:473 AD004",
    ]


def test_pymongo_4_removed_database_method_and_gridfs_keyword_of_eve(index_cache: Path) -> None:
    """eve 1.1.5: `db = MongoClient(**kw)[dbname]` then `db.authenticate(username, password, **kw)`;
    pymongo 4.0 removed `Database.authenticate`, so the name gives a `Collection` whose call raises
    (CPython 3.11, pymongo 4.0: "TypeError: 'Collection' object is not callable. If you meant to call
    the 'authenticate' method on a 'Database' object ..."; 3.12.0 reaches for the server). And
    `GridFS(..., disable_md5=True)`, a keyword 4.0 removed."""
    result = audit(AuditRequest("eve==1.1.5", "pymongo==4.0", old="pymongo==3.12.0", cache_dir=index_cache))
    errors = {
        f"{f.location.path}:{f.location.line} {f.code}"
        for f in result.findings
        if f.severity.value == "error"
    }
    assert errors == {"eve/io/mongo/flask_pymongo.py:97 AD108", "eve/io/mongo/media.py:62 AD101"}


def test_sqlalchemy_2_table_methods_reached_through_a_property_of_dataset(index_cache: Path) -> None:
    """dataset 1.6.0 reaches its SQLAlchemy `Table` through its own property (`self.table`, returning
    `self._table = SQLATable(...)`). SQLAlchemy 2.0 made `TableClause.insert/update/delete/select` take
    no argument; `insert` is decorated with `@util.preload_module(...)`, a bound method of a module-level
    registry. Confirmed under CPython 3.11: with 1.4.46, `dataset.connect(...)["t"].insert(...)` and
    `.find(...)` work; with 2.0.0 `MetaData(bind=)` raises first (database.py:109), and with that line
    mended, "TypeError: TableClause.insert() takes 1 positional argument but 2 were given" at
    table.py:119. update/delete/select with `whereclause=` raise "got an unexpected keyword argument"."""
    result = audit(
        AuditRequest("dataset==1.6.0", "sqlalchemy==2.0.0", old="sqlalchemy==1.4.46", cache_dir=index_cache)
    )
    errors = {
        f"{f.location.path}:{f.location.line} {f.code}"
        for f in result.findings
        if f.severity.value == "error"
    }
    assert errors == {
        "dataset/database.py:109 AD101",
        "dataset/table.py:119 AD103",  # self.table.insert(row): through the property
        "dataset/table.py:209 AD101",
        # `stmt = self.table.update(\n whereclause=...,\n values=...)`: both keywords' findings at the
        # call's line, where CPython 3.11 raises (SQLAlchemy 2.0.0, the statement run: 244:24)
        "dataset/table.py:244 AD101",
        "dataset/table.py:296 AD101",
        "dataset/table.py:628 AD101",
    }
    drift = {
        f.location.line for f in result.findings if f.classification and f.classification.value == "drift"
    }
    assert {119, 209, 296} <= drift  # the old version resolves Table's methods (through `Visitable = ...`)
    assert not [f for f in result.findings if f.code == "AD206"]  # `table.c` is a descriptor, not a method


def test_marshmallow_3_keyword_only_many_reached_through_super_of_marshmallow_jsonapi(
    index_cache: Path,
) -> None:
    """marshmallow-jsonapi 0.20.0 overrides `_do_load` and calls `super(Schema, self)._do_load(data,
    many, **kwargs)`; marshmallow 3.0.0 made `many` keyword-only. Confirmed under CPython 3.11 with
    marshmallow 3.0.0 (its removed `marshmallow.compat` put back by hand so the package imports):
    "TypeError: BaseSchema._do_load() takes 2 positional arguments but 3 positional arguments (and 3
    keyword-only arguments) were given" at schema.py:235. The three imports of `marshmallow.compat`
    fail first (ModuleNotFoundError, also confirmed). The old binding is unknown (`**kwargs` might
    repeat `many`): the break is `unknown-before`, an error all the same."""
    result = audit(
        AuditRequest(
            "marshmallow-jsonapi==0.20.0",
            "marshmallow==3.0.0",
            old="marshmallow==2.15.0",
            cache_dir=index_cache,
        )
    )
    errors = sorted(
        f"{f.location.path}:{f.location.line} {f.code}"
        for f in result.findings
        if f.severity.value == "error"
    )
    assert errors == [
        "marshmallow_jsonapi/fields.py:8 AD001",
        "marshmallow_jsonapi/schema.py:235 AD103",
        "marshmallow_jsonapi/schema.py:5 AD001",
        "marshmallow_jsonapi/utils.py:9 AD001",
    ]


def test_sqlalchemy_2_engine_methods_reached_through_another_module_of_calitp(index_cache: Path) -> None:
    """calitp 0.0.16 makes its engine in one module (`calitp/sql.py`: `def get_engine(...): return
    create_engine(...)`) and uses it in others: `calitp/tables.py` keeps `AutoTable(get_engine(), ...)`'s
    engine in `self._engine` and calls `self._engine.table_names()` (run at import: `tbl._init()`), its
    tests call `get_engine().execute(...)`. SQLAlchemy 2.0 removed `Engine.table_names` and
    `Engine.execute`. Confirmed under CPython 3.11 with calitp's own code (its BigQuery URL pointed at
    SQLite, the dialect not installed): with 1.4.52 `import calitp.tables` and `get_engine().execute(...)`
    work; with 2.0.30 "AttributeError: 'Engine' object has no attribute 'table_names'" at tables.py:48
    and "'Engine' object has no attribute 'execute'". The two in `sql.py` itself were found before."""
    result = audit(
        AuditRequest("calitp==0.0.16", "sqlalchemy==2.0.30", old="sqlalchemy==1.4.52", cache_dir=index_cache)
    )
    errors = {
        f"{f.location.path}:{f.location.line} {f.code}"
        for f in result.findings
        if f.severity.value == "error"
    }
    assert errors == {
        "calitp/sql.py:62 AD101",
        "calitp/sql.py:144 AD004",
        "calitp/tables.py:48 AD004",  # self._engine = get_engine() of calitp/sql.py
        "calitp/tests/test_tables.py:77 AD004",  # get_engine().execute(...), imported from calitp.sql
    }
    # `get_table()` returns a Table or a DataFrame: its uses elsewhere are counted, not checked
    assert result.coverage[0].not_checkable.get("receiver-unknown:returns-disagree") == 4


@pytest.mark.parametrize(
    ("downstream", "upstream", "found", "share"),
    STRANGER_PAIRS,
    ids=[f"{d}-{u}" for d, u, _, _ in STRANGER_PAIRS],
)
def test_pair_of_its_time_has_no_error(
    downstream: str, upstream: str, found: int, share: float, index_cache: Path, coverage_report: list[str]
) -> None:
    result = run(downstream, upstream, index_cache, coverage_report)
    errors = [
        f"{f.location.path}:{f.location.line} {f.code} {f.message}"
        for f in result.findings
        if f.severity.value == "error"
    ]
    assert errors == []
    coverage = result.coverage[0]
    assert coverage.found >= found
    assert coverage.checked >= share * by_name(coverage), coverage.not_checkable


def test_test_helper_removed_behind_an_outside_base_is_a_warning(tmp_path: Path, index_cache: Path) -> None:
    """Django 5.1 removed `assertQuerysetEqual` (deprecated in 4.2 for `assertQuerySetEqual`) from its test
    cases, which derive from `unittest.TestCase`; under 5.1 `hasattr(TestCase, "assertQuerysetEqual")` is
    False (checked in a throwaway environment), under 5.0.3 it is a method of `TransactionTestCase`.
    apidrift does not read `unittest`, so the miss is a warning with that evidence, not an error."""
    source = (
        "from django.test import TestCase\n\n\n"
        "class T(TestCase):\n"
        "    def test_it(self):\n"
        "        self.assertQuerysetEqual([], [])\n"
        "        self.assertQuerySetEqual([], [])\n"
        "        self.assertEqual(1, 1)\n"
    )
    downstream = local_downstream(tmp_path, source)
    result = audit(AuditRequest(downstream, "django==5.1", old="django==5.0.3", cache_dir=index_cache))
    found = [(f.location.line, f.code, f.severity.value, f.classification) for f in result.findings]
    assert found == [(6, "AD204", "warning", Classification.DRIFT)]
    assert "django.test.testcases.TransactionTestCase.assertQuerysetEqual" in result.findings[0].message
    assert "unittest.TestCase" in result.findings[0].message


COMPILED_CLEAN_PAIRS = [
    ("xarray==2024.10.0", "pandas==2.2.3"),
    ("scikit-learn==1.5.2", "scipy==1.14.1"),
    ("scikit-learn==1.5.2", "numpy==2.1.2"),
    # scikit-image 0.22.0 patches `umfpack.UmfpackContext` in the `try` whose
    # `from scipy.sparse.linalg.dsolve.linsolve import umfpack` raises ModuleNotFoundError under scipy
    # 1.11.3 (`dsolve` is a plain module there), handled by its `except ImportError:`: two false errors
    # before on the uses below the import
    ("scikit-image==0.22.0", "scipy==1.11.3"),
    ("scikit-image==0.22.0", "numpy==1.26.0"),  # of its time too (13,005 sites)
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("downstream", "upstream"), COMPILED_CLEAN_PAIRS, ids=[f"{d}-{u}" for d, u in COMPILED_CLEAN_PAIRS]
)
def test_clean_pair_with_compiled_upstream_has_no_error(
    downstream: str, upstream: str, index_cache: Path, coverage_report: list[str]
) -> None:
    test_clean_pair_has_no_error(downstream, upstream, index_cache, coverage_report)


@pytest.mark.slow
@pytest.mark.parametrize("old", ["none", "numpy==2.0.2"])
def test_pandas_against_numpy_has_no_error(old: str, index_cache: Path, coverage_report: list[str]) -> None:
    """pandas 2.2.3 (numpy>=1.26 on Python 3.12) against numpy 2.1.2, which it supports: thousands of
    calls into numpy's stubs (overloaded constructors such as `datetime64`, `arange` overloads stricter
    than the runtime), with no old version and with numpy 2.0.2 as the one it was written for."""
    result = audit(AuditRequest("pandas==2.2.3", "numpy==2.1.2", old=old, cache_dir=index_cache))
    coverage = result.coverage[0]
    if old == "none":  # the README's row; with --from numpy==2.0.2 it says only "also" (no error either)
        check_readme("pandas==2.2.3", "numpy==2.1.2", result, coverage_report)
    else:
        coverage_report.append(f"pandas==2.2.3 against numpy==2.1.2 (--from {old}): {coverage.summary()}")
    errors = [
        f"{f.location.path}:{f.location.line} {f.code} {f.message}"
        for f in result.findings
        if f.severity.value == "error"
    ]
    assert errors == []
    assert coverage.found >= 30_000
    assert coverage.checked >= 0.9 * by_name(coverage), coverage.not_checkable
    # The stubs' strictness the runtime does not share is graded down, not dropped: still in the report.
    assert {f.code for f in result.findings if f.severity.value == "warning"} >= {"AD101"}
    assert coverage.not_checkable.get("stub-signature", 0) >= 1


@pytest.mark.slow
def test_astropy_6_1_against_numpy_2_has_no_error(index_cache: Path, coverage_report: list[str]) -> None:
    """astropy 6.1.0 supports numpy 2.0 and keeps the numpy 1 spellings behind `NUMPY_LT_2_0`, which
    every file imports from `astropy.utils.compat.numpycompat` (`not minversion(np, "2.0.dev")`):
    `if NUMPY_LT_2_0: ... np.product`, `{np.asfarray} if NUMPY_LT_2_0 else set()`,
    `@pytest.mark.skipif(not NUMPY_LT_2_0, ...)`. It calls `np.rec.find_duplicate` (numpy 2.0's stub
    leaves it out; `numpy/rec/__init__.py` star-imports it, and it runs) and overrides
    `recarray.field(attr, val=None)` with `field(self, key)`. No error; the guarded sites are info."""
    result = audit(AuditRequest("astropy==6.1.0", "numpy==2.0.0", old="numpy==1.26.4", cache_dir=index_cache))
    coverage = result.coverage[0]
    coverage_report.append(f"astropy==6.1.0 against numpy==2.0.0: {coverage.summary()}")
    errors = [
        f"{f.location.path}:{f.location.line} {f.code} {f.message}"
        for f in result.findings
        if f.severity.value == "error"
    ]
    assert errors == []
    guarded = {
        (f.location.path, f.location.line)
        for f in result.findings
        if f.severity.value == "info" and f.code == "AD003"
    }
    assert ("astropy/units/quantity_helper/function_helpers.py", 109) in guarded  # np.product under the flag
    assert (
        "astropy/units/quantity_helper/function_helpers.py",
        212,
    ) in guarded  # in a conditional expression
    assert ("astropy/units/tests/test_quantity_non_ufuncs.py", 325) in guarded  # in a skipped test
    assert coverage.found >= 20_000


@pytest.mark.slow
def test_statsmodels_against_scipy_1_14_finds_the_real_breaks(
    index_cache: Path, coverage_report: list[str]
) -> None:
    """statsmodels 0.14.4 (scipy>=1.8) against scipy 1.14.1: its `rv_continuous`/`rv_discrete` subclasses
    override `_pdf(self, x, *args)` and the like with their shape parameters (silent: scipy passes them),
    but its sandbox still calls what scipy 1.14 removed, each confirmed under CPython with scipy 1.14.1:
    `integrate.trapz` (removed in 1.14.0), `ndimage.var` (never defined: `variance` is), and the
    `extradoc` keyword of `rv_continuous.__init__` (removed in 1.9); its compat copy of
    `multivariate_t` calls `scipy.stats.mvn.mvnun`, which 1.14's deprecated `mvn` shim no longer serves
    (`AttributeError: scipy.stats.mvn has no attribute mvnun`, its `__getattr__` over an empty
    `__all__`); and its `TransfTwo_gen._rvs(self, *args)` overrides, which scipy's `rv_generic.rvs`
    calls as `self._rvs(*args, size=size, random_state=random_state)` (`squarenormalg.rvs(size=3)`:
    `TypeError: TransfTwo_gen._rvs() got an unexpected keyword argument 'size'`); and
    `TableDist.poly2d` builds `interp2d(...)`, whose `__init__` only raises in 1.14 (`NotImplementedError:
    interp2d has been removed in SciPy 1.14.0`, confirmed with statsmodels 0.14.4 and scipy 1.14.0)."""
    result = run("statsmodels==0.14.4", "scipy==1.14.1", index_cache, coverage_report)
    errors = {
        (f.location.path, f.location.line, f.code) for f in result.findings if f.severity.value == "error"
    }
    assert errors == {
        # `igamma_gen(a=0.0, ...,\n    shapes=..., extradoc=...)`: the call's first line, where CPython 3.11
        # raises (scipy 1.14.1, the statement run: 49:10)
        ("statsmodels/sandbox/examples/bayesprior.py", 49, "AD101"),
        ("statsmodels/sandbox/nonparametric/densityorthopoly.py", 447, "AD003"),
        ("statsmodels/sandbox/nonparametric/densityorthopoly.py", 451, "AD003"),
        ("statsmodels/sandbox/regression/try_catdata.py", 99, "AD003"),
        ("statsmodels/compat/_scipy_multivariate_t.py", 542, "AD003"),
        ("statsmodels/sandbox/distributions/extras.py", 784, "AD106"),
        ("statsmodels/sandbox/distributions/transformed.py", 336, "AD106"),
        ("statsmodels/stats/tabledist.py", 121, "AD108"),
    }
    assert result.coverage[0].not_checkable.get("override-requires-optional", 0) >= 50


# When the value itself changes under the same name and signature: each pair audited against the
# upstream release that changed it, from the release of its time (`old`). Every error and AD206
# warning below was confirmed under CPython 3.11 in throwaway venvs with both releases installed:
# - PyJWT 2.0.0's `jwt.encode()` returns `str` (1.7.1: bytes, from `super().encode()` and a
#   `b".".join(...)` literal): djangorestframework-jwt 1.11.0's `.decode('utf-8')` raises
#   "AttributeError: 'str' object has no attribute 'decode'"; the other four are the removed
#   `jwt.ExpiredSignature` (AttributeError) and `decode(token, key, verify)` (DecodeError: the third
#   positional is now `algorithms`; TypeError with `algorithms=` also passed).
# - arrow 1.0.0 made the `Arrow.timestamp` property a method (0.17.0 did not annotate `utcnow()`):
#   jesse 0.13.2's `arrow.utcnow().timestamp * 1000` raises "TypeError: unsupported operand type(s) for
#   *: 'method' and 'int'" at each of the nine lines; and at a tenth reached through a parameter:
#   `def arrow_to_timestamp(arrow_time): return arrow_time.timestamp * 1000` (helpers.py:21), which
#   every call of it in helpers.py passes `arrow.get(date, 'YYYY-MM-DD')` (line 102; the same
#   TypeError under arrow 1.0.0, 1609459200000 under 0.17.0).
# - discord.py 2.0.0 made `Bot.load_extension` and `Bot.add_cog` coroutine functions: jishaku 2.2.0's
#   dropped `bot.add_cog(Jishaku(bot=bot))` returns a coroutine that is never awaited (the cog is not
#   added; RuntimeWarning), a warning; and `commands.Bot(commands.when_mentioned)` raises "TypeError:
#   BotBase.__init__() missing 1 required keyword-only argument: 'intents'".
# - python-telegram-bot 20.0 made `Message.reply_text` a coroutine function and annotates what a
#   `CommandHandler` calls its callback with (`HandlerCallback[Update, CCT, RT]`, a generic alias of
#   `Callable[[UT, CCT], ...]`); 12.8 annotated neither. roomie-bot 0.1.1's untyped callbacks
#   (`def start(update, context)`, registered as `CommandHandler("start", start)`) drop
#   `update.message.reply_text(...)` at ten lines: under 12.8 each sends its text (run with a real
#   `telegram.Update` whose bot records what it is sent), under 20.0 nothing is sent ("coroutine
#   'Message.reply_text' was never awaited"; the handler's `await self.callback(...)` then raises
#   TypeError). Also `Updater(TOKEN, use_context=True)` (TypeError) and a dropped `start_polling()`.
VALUE_CHANGES = [
    (
        "djangorestframework-jwt==1.11.0",
        "pyjwt==2.0.0",
        "pyjwt==1.7.1",
        {
            # `return jwt.encode(\n ...\n ).decode('utf-8')`: CPython 3.11 fails on the `.decode` line
            "rest_framework_jwt/utils.py:96 AD004",
            "rest_framework_jwt/authentication.py:34 AD003",
            "rest_framework_jwt/serializers.py:87 AD003",
            "rest_framework_jwt/utils.py:104 AD201",
            "rest_framework_jwt/utils.py:106 AD105",
        },
        set(),
    ),
    (
        "jesse==0.13.2",
        "arrow==1.0.0",
        "arrow==0.17.0",
        {
            f"jesse/{where} AD206"
            for where in (
                "helpers.py:21",
                "helpers.py:362",
                "helpers.py:625",
                "modes/backtest_mode/__init__.py:86",
                "modes/import_candles_mode/__init__.py:23",
                "modes/import_candles_mode/__init__.py:70",
                "modes/import_candles_mode/__init__.py:193",
                "research/get_candles.py:34",
                "services/required_candles.py:26",
                # `jh.get_arrow(...).floor('day').timestamp * 1000`: an Arrow returned by jesse.helpers
                # (CPython, arrow 1.0.0: "TypeError: unsupported operand type(s) for *: 'method' and 'int'")
                "services/required_candles.py:34",
                "store/state_app.py:5",
            )
        },
        set(),
    ),
    (
        "jishaku==2.2.0",
        "discord.py==2.0.0",
        "discord.py==1.7.3",
        {"jishaku/__main__.py:40 AD102"},
        # management.py:83: `self.bot.unload_extension(...)`, `self.bot: commands.Bot` declared by the
        # base class in jishaku/features/baseclass.py (an async def in discord.py 2.0.0)
        {
            "jishaku/__main__.py:41 AD206",
            "jishaku/cog.py:55 AD206",
            "jishaku/features/management.py:83 AD206",
        },
    ),
    (
        "roomie-bot==0.1.1",
        "python-telegram-bot==20.0",
        "python-telegram-bot==12.8",
        {"roomie_bot/__main__.py:121 AD101"},
        {f"roomie_bot/__main__.py:{line} AD206" for line in (22, 34, 42, 77, 82, 90, 92, 99, 101, 105, 138)},
    ),
]
# - docker 2.0.0 (renamed from docker-py; `docker.from_env()` now builds a `DockerClient`, where
#   docker-py 1.10.6's built a `Client`) made `containers`, `images`, ... properties whose getters build a
#   collection (`return ImageCollection(client=self)`), where `Client` had methods; the collections'
#   `Collection.__call__` raises TypeError. dockertest 1.0.6's `Container()` makes
#   `client = docker.from_env(assert_hostname=False)` and hands it (through `run_container`) to
#   `_locate_image`, whose `for image in client.images():` (base.py:81) lists the images under 1.10.6
#   and raises "TypeError: 'ImageCollection' object is not callable. You might be trying to use the old
#   (pre-2.0) API - use docker.APIClient if so." under 2.0.0 (run with the daemon's HTTP answer faked).
#   Reported once, as AD108 (the value's `__call__` always raises), unknown-before: 1.10.6's `Client`
#   has `requests.Session` (outside the code read) before its API mixins, so its `images` is not known.
VALUE_CHANGES.append(
    ("dockertest==1.0.6", "docker==2.0.0", "docker-py==1.10.6", {"src/dockertest/base.py:81 AD108"}, set())
)
# The same upstreams against downstreams written for them: no error, no AD206 warning.
VALUE_CLEAN_PAIRS = [
    ("djangorestframework-simplejwt==5.3.1", "pyjwt==2.8.0", "none", 50),
    ("jesse==0.16.0", "arrow==1.0.0", "arrow==0.17.0", 60),
    ("jishaku==2.5.1", "discord.py==2.0.0", "none", 450),
    ("ptb-state-handler==0.2.0", "python-telegram-bot==20.0", "none", 25),
    ("python-telegram-broadcast==0.9.7", "python-telegram-bot==21.1.1", "none", 60),
    # written for docker ~=2.0: `self._client.images.get(name)`, `.containers.create(**params)` on
    # `docker.from_env(...)`, followed through the properties' collections
    ("docker-build-tool==0.13.0", "docker==2.0.0", "none", 18),
]


@pytest.mark.parametrize(
    ("downstream", "upstream", "old", "errors", "warnings"),
    VALUE_CHANGES,
    ids=[f"{d}-{u}" for d, u, *_ in VALUE_CHANGES],
)
def test_value_change_is_found_once(
    downstream: str, upstream: str, old: str, errors: set[str], warnings: set[str], index_cache: Path
) -> None:
    result = audit(AuditRequest(downstream, upstream, old=old, cache_dir=index_cache))
    found = {f"{f.location.path}:{f.location.line} {f.code}": f for f in result.findings}
    assert {k for k, f in found.items() if f.severity.value == "error"} == errors
    assert {k for k, f in found.items() if f.severity.value == "warning" and f.code == "AD206"} == warnings


@pytest.mark.parametrize(
    ("downstream", "upstream", "old", "sites"),
    VALUE_CLEAN_PAIRS,
    ids=[f"{d}-{u}" for d, u, *_ in VALUE_CLEAN_PAIRS],
)
def test_value_clean_pair_has_no_error(
    downstream: str, upstream: str, old: str, sites: int, index_cache: Path
) -> None:
    result = audit(AuditRequest(downstream, upstream, old=old, cache_dir=index_cache))
    flagged = [
        f"{f.location.path}:{f.location.line} {f.code} {f.message}"
        for f in result.findings
        if f.severity.value == "error" or f.code == "AD206"
    ]
    assert flagged == []
    assert result.coverage[0].found >= sites


# python-telegram-bot 20.0 made every method of `Bot` and the shortcuts of `Message` coroutine functions.
# efb-telegram-master 2.3.1 (written for ~=13.11) uses two results of `Message.reply_text` as a message:
# `message.reply_text(...).message_id` (chat_binding.py:221) and `tg_err_msg = message.reply_text(...)`
# whose `.message_id` is read three lines later (master_message.py:197; reported at the call, which makes
# the coroutine). Both raise "AttributeError: 'coroutine' object has no attribute 'message_id'" under
# 20.0 and give the sent message's id under 13.11 (run with real `telegram.Message` objects, the bot's
# `send_message` replaced by one returning a `Message`). `message` is typed by the downstream's own
# annotations (`message: Message = update.effective_message`, `rtm: Message`).
def test_coroutine_result_used_as_a_value_is_an_error(index_cache: Path) -> None:
    result = audit(
        AuditRequest(
            "efb-telegram-master==2.3.1",
            "python-telegram-bot==20.0",
            old="python-telegram-bot==13.11",
            cache_dir=index_cache,
        )
    )
    found: dict[str, list[Any]] = {}
    for f in result.findings:
        found.setdefault(f"{f.location.path}:{f.location.line} {f.code}", []).append(f)
    for where in ("efb_telegram_master/chat_binding.py:221", "efb_telegram_master/master_message.py:197"):
        (finding,) = found[f"{where} AD206"]
        assert finding.severity.value == "error"
        assert "reply_text() is a coroutine function" in finding.message
