"""The Dask path for real: a `distributed.LocalCluster` with 2 worker processes, started here.

Same rows as the process pool; and a worker killed (SIGKILL) while it audits a dependent loses
nothing: the scheduler gives the job to a worker again, and its row arrives.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import distributed
import pytest
from test_impact import big_dependent, buckets, expected_with_big, kill_when_started, request
from test_impact import world as world

from apidrift.auditor.impact.inputs import read_dependents
from apidrift.auditor.impact.run import job_key, prepare, run_impact


@pytest.fixture
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # any free port: two runs at once must not collide on 8787
        silence_logs=logging.CRITICAL,
    ) as local:
        yield local


def test_dask_gives_the_process_pool_s_rows(world: Path, tmp_path: Path, cluster: Any) -> None:
    pooled = run_impact(request(world, results_dir=tmp_path / "pool"))
    dasked = run_impact(request(world, results_dir=tmp_path / "dask", scheduler=cluster.scheduler_address))
    assert dasked.executor.startswith(f"Dask at {cluster.scheduler_address}, 2 threads")
    assert buckets(dasked.rows) == buckets(pooled.rows)
    keep = ("status", "errors", "warnings", "by_rule", "pin", "found", "checked", "error")
    assert [{k: r[k] for k in keep} for r in dasked.rows] == [{k: r[k] for k in keep} for r in pooled.rows]
    assert sorted(json.dumps(f, sort_keys=True) for f in dasked.findings()) == sorted(
        json.dumps(f, sort_keys=True) for f in pooled.findings()
    )


def test_a_dask_worker_killed_mid_run_loses_no_dependent(world: Path, tmp_path: Path, cluster: Any) -> None:
    big_dependent(world / "deps" / "big0")
    trace = tmp_path / "trace"
    trace.mkdir()
    keys = {
        job_key(d, prepare(request(world)))
        for d in read_dependents(world / "deps")
        if d.label.startswith("big")
    }
    killed: list[dict[str, object]] = []
    thread = kill_when_started(trace, keys, killed)
    result = run_impact(request(world, scheduler=cluster.scheduler_address, trace_dir=trace))
    thread.join()
    assert killed, "no worker was killed"
    starts = [json.loads(p.read_text()) for p in trace.iterdir()]
    again = [s for s in starts if s["key"] == killed[0]["key"]]
    assert len(again) >= 2 and any(s["pid"] != killed[0]["pid"] for s in again)  # run again, elsewhere
    assert buckets(result.rows) == expected_with_big(1)
