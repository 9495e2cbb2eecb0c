"""`apidrift impact`: one upstream release audited against many dependents.

inputs: the release, the old version, the dependents (a list, a folder of projects, or discovery
through the index's core metadata). jobs: one dependent = one audit in a child process with a time
and a memory limit. run: the jobs on a `concurrent.futures.Executor` (the standard library's process
pool, or a Dask cluster), with retries when a worker dies. results: one row per dependent and per
finding, JSON Lines and Parquet, resumable, and the summary grouped by upstream symbol.
"""
