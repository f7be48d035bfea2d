"""Where a study's runs execute: this process, a local process pool, or a Dask cluster.

Each executor takes the configurations left to run and yields ``(config, future)`` as runs
finish, so the caller caches each result the moment it exists (``docs/studies.md``,
"Executors").
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Iterator
from typing import Any

from ..runs._config import RunConfig
from ..runs._config_run import run_config

__all__ = ["Executor", "local_pool", "serial", "dask_cluster", "executor", "MAX_WORKERS"]

#: most local worker processes a study or tuning run starts (each is a Python process of
#: its own; a Dask cluster brings its own workers)
MAX_WORKERS = 256

#: the configurations to run -> (config, its future) as each finishes
Executor = Callable[[list[RunConfig]], Iterator[tuple[RunConfig, Any]]]


def executor(workers: int, dask: str | None) -> Executor:
    """``dask`` (``"local"`` or a scheduler address) or, without it, a process pool of
    ``workers`` (this process alone for one)."""
    return dask_cluster(dask, workers) if dask else local_pool(workers) if workers > 1 \
        else serial


def local_pool(workers: int) -> Callable[[list[RunConfig]], Iterator[tuple[RunConfig, Any]]]:
    def run(todo: list[RunConfig]) -> Iterator[tuple[RunConfig, Any]]:
        # forkserver, not fork: a process that has used torch (its thread pools) can hang
        # a forked worker; the server starts clean and forks workers from there
        import multiprocessing

        ctx = multiprocessing.get_context("forkserver")
        # never more processes than runs: each one costs a Python process's memory
        pool = cf.ProcessPoolExecutor(max_workers=max(1, min(workers, len(todo))),
                                      mp_context=ctx)
        try:
            futures = {pool.submit(run_config, c): c for c in todo}
            for fut in cf.as_completed(futures):
                yield futures[fut], fut
        except BaseException:  # interrupted (Ctrl-C, SIGTERM): stop, do not drain the queue
            workers_now = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in workers_now:
                proc.terminate()
            for proc in workers_now:
                proc.join(timeout=5)
            raise
        pool.shutdown()
    return run


def serial(todo: list[RunConfig]) -> Iterator[tuple[RunConfig, Any]]:
    """One worker is this process: no pool to fork (safe after torch started threads)."""
    for cfg in todo:
        fut: cf.Future = cf.Future()
        try:
            fut.set_result(run_config(cfg))
        except Exception as exc:  # noqa: BLE001 - reported like a crashed worker
            fut.set_exception(exc)
        yield cfg, fut


def dask_cluster(address: str, workers: int) -> Callable[[list[RunConfig]],
                                                   Iterator[tuple[RunConfig, Any]]]:
    def run(todo: list[RunConfig]) -> Iterator[tuple[RunConfig, Any]]:
        import dask
        from distributed import Client, LocalCluster, as_completed

        cluster = None
        if address == "local":
            # non-daemonic workers: the SystemC backend runs each simulation in a forked
            # child, which a daemonic process may not have (docs/studies.md, "Executors")
            with dask.config.set({"distributed.worker.daemon": False}):
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1,
                                       dashboard_address=None)
        try:
            with Client(cluster if cluster is not None else address) as client:
                futures = {client.submit(run_config, c, pure=False): c for c in todo}
                for fut in as_completed(futures):
                    yield futures[fut], fut
        finally:
            if cluster is not None:
                cluster.close()
    return run
