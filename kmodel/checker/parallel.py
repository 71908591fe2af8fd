"""A campaign on several processes or machines: `kmodel check --workers N` and `--scheduler ADDRESS`, on Dask.

`run_parallel` splits the campaign into shards (kmodel.checker.shards: a seed and a share of the budget each,
the same whatever the worker count, several so that the work balances), runs each as one Dask task (`shard_task`, on a worker thread;
one thread per worker process, since a shard is pure Python), gathers the outcomes, and merges them
(kmodel.checker.merge); the caller writes the reports as for a single run. Without `--scheduler` the command starts a LocalCluster of `workers` processes on this
machine and stops it when done; with one, it submits to that cluster (``dask scheduler`` and ``dask worker``
processes on any machines that have kmodel installed: a task names `shard_task` by module, and its outcome is
plain data).

A LocalCluster's worker processes are forked from this one where the platform can fork (`local_start_method`):
kmodel is imported here already, so a forked worker starts in a fraction of a second, where a spawned one
imports Python, Dask and kmodel again (seconds, a large share of a dev run on two workers). The seconds until
the cluster answers are the run's `startup_seconds`, reported apart from the shards'.

The workers talk to each other through the scheduler's metadata, under keys of this run's id:

* progress: each shard publishes its examples, steps and whether it has failed (at most every
  PROGRESS_SECONDS), which the caller sums for its progress bar;
* stop: with `stop_on_first`, the first shard to see a violation sets the run's stop flag, and every other
  shard, asking as each example starts (at most every PROGRESS_SECONDS), ends its campaign there
  (run_campaign's `stop`), while the one that found it shrinks and minimizes it. Where the others stop depends
  on timing, so such a run's merged digest does too; without it (the campaign profile's default) every shard
  runs its whole budget and the merged digest is a function of the seed and the budget.

`run_in_turn` is `--workers 1`: the same shards one after another in this process, merged the same way, so
that its digest is that of any worker count. Dask is what the parallel run needs and nothing else: a run on
one worker never imports it.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
import uuid
import warnings
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

import attrs

from kmodel.checker.example_db import Saved, save_found
from kmodel.checker.run import CampaignResult, CheckOptions
from kmodel.checker.stats import Stats
from kmodel.checker.shards import Shard, ShardOutcome, plan_shards, run_shard
from kmodel.errors import KmodelUsageError
from kmodel.checker.merge import distinct_violations, merge_outcomes

#: how often, at most, a shard publishes its progress and asks whether to stop
PROGRESS_SECONDS = 0.5


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


@attrs.frozen
class Progress:
    """The whole run's progress, summed over the shards' last reports."""

    examples: int
    steps: int
    failing: int  # shards that have seen a violation


@attrs.define
class ParallelRun:
    result: CampaignResult  # merged
    outcomes: list[ShardOutcome]
    #: one (trace, shrink record, report fields) per distinct violation (kmodel.checker.merge)
    found: list
    saved: Saved  # what the example database took (kmodel.checker.example_db.save_found)
    address: str  # the scheduler's (a LocalCluster's own when the command started one)
    workers: int  # the worker count that ran the shards
    startup_seconds: float  # from the start to a client of a cluster that answers (a LocalCluster started)
    in_turn: bool = False  # whether the shards ran one after another in this process (run_in_turn)


def _key(run_id: str, what: str) -> str:
    return f"kmodel-{run_id}-{what}"


def shard_task(options: CheckOptions, shard: Shard, database: Optional[str], run_id: str,
               stop_on_first: bool) -> ShardOutcome:
    """One shard on a Dask worker (see the module docstring)."""
    from distributed import get_client, get_worker

    client = get_client()
    progress_key, stop_key = _key(run_id, f"progress-{shard.index}"), _key(run_id, "stop")
    last = {"published": 0.0, "asked": 0.0, "signalled": False}

    def on_example(stats: Any) -> None:
        failing = stats.first_failure_at is not None or stats.violating_examples > 0  # (keep-going: the latter)
        if failing and stop_on_first and not last["signalled"]:
            client.set_metadata(stop_key, True)
            last["signalled"] = True
        now = time.monotonic()
        if now - last["published"] >= PROGRESS_SECONDS:
            last["published"] = now
            client.set_metadata(progress_key, [stats.examples, stats.steps, failing])

    def stop(stats: Any) -> bool:
        now = time.monotonic()
        if now - last["asked"] < PROGRESS_SECONDS:
            return False
        last["asked"] = now
        return bool(client.get_metadata(stop_key, default=False))

    with warnings.catch_warnings():
        # Dask's own threads in this process use the random module while Hypothesis runs an example, which
        # Hypothesis warns about; nothing kmodel draws comes from it (the model's choices are seeded)
        warnings.filterwarnings("ignore", message="Do not use the `random` module inside strategies")
        outcome = run_shard(options, shard, database, stop=stop if stop_on_first else None,
                            on_example=on_example, worker=get_worker().address)
    client.set_metadata(progress_key, [outcome.examples, outcome.steps, outcome.failure is not None])
    return outcome


def _all_done(futures: list) -> bool:
    """Whether every future is done, waiting at most PROGRESS_SECONDS for it (returning as soon as they are, so
    that the run does not idle to the end of a progress period)."""
    from distributed import wait

    try:
        wait(futures, timeout=PROGRESS_SECONDS)
    except TimeoutError:
        return False
    return True


#: a LocalCluster's workers run without Dask's statistical profiler, which samples every thread's stack every
#: 10 ms on a thread of its own, taking the GIL from the shard's thread, for a dashboard a local run does not
#: serve (a shard's process CPU time on a worker: 9 % less without it)
LOCAL_WORKER_CONFIG = {"distributed.worker.profile.enabled": False}


def local_start_method() -> str:
    """How a LocalCluster starts its worker processes: forked from this process where the platform can (see the
    module docstring), else spawned (Dask's default)."""
    return "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"


@contextmanager
def dask_client(workers: int, scheduler: Optional[str]) -> Iterator[Any]:
    """A client of the cluster at `scheduler`, or of a LocalCluster of `workers` processes started now and
    stopped on leaving; a usage error when the scheduler cannot be reached."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - a dependency of kmodel
        raise KmodelUsageError("--workers/--scheduler: needs dask.distributed; install kmodel with its "
                               "dependencies (pip install kmodel)") from None
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=15)
        except (OSError, TimeoutError) as exc:
            raise KmodelUsageError(f"--scheduler {scheduler}: no Dask scheduler answers there ({exc}); start one "
                                   f"with `dask scheduler` and give its tcp:// address") from None
        with client:
            yield client
        return
    import dask

    with dask.config.set({**LOCAL_WORKER_CONFIG, "distributed.worker.multiprocessing-method": local_start_method()}), \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                         memory_limit=0, silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client


def cluster_threads(client: Any) -> int:
    """The worker threads of the cluster `client` is connected to (what `--workers auto` uses with --scheduler)."""
    return max(1, sum(client.nthreads().values()))


def run_parallel(options: CheckOptions, workers: Optional[int], *, scheduler: Optional[str] = None,
                 stop_on_first: bool = True, database: Optional[str] = None,
                 on_progress: Optional[Callable[[Progress], None]] = None) -> ParallelRun:
    """Run the campaign of `options` in `workers` shards (None: one per core here, or per worker thread of the
    cluster at `scheduler`) and merge them; `database`: the example database's spec (kmodel.checker.example_db),
    None for none. `on_progress` is called with the run's progress about every PROGRESS_SECONDS."""
    started = time.perf_counter()
    with dask_client(workers or available_cores(), scheduler) as client:
        startup = time.perf_counter() - started
        count = workers if workers is not None else cluster_threads(client)
        shards = plan_shards(options)
        run_id = uuid.uuid4().hex  # names this run's metadata only; nothing explored depends on it
        futures = [client.submit(shard_task, options, shard, database, run_id, stop_on_first, pure=False,
                                 key=_key(run_id, f"shard-{shard.index}")) for shard in shards]
        while not _all_done(futures):
            if on_progress is not None:
                reports = [client.get_metadata(_key(run_id, f"progress-{s.index}"), default=None) for s in shards]
                reports = [r for r in reports if r]
                on_progress(Progress(sum(r[0] for r in reports), sum(r[1] for r in reports),
                                     sum(1 for r in reports if r[2])))
        outcomes: list[ShardOutcome] = client.gather(futures)
        address = client.scheduler.address
    saved = save_found(database, [o.saved for o in outcomes])
    result = merge_outcomes(options, outcomes, time.perf_counter() - started)
    return ParallelRun(result, sorted(outcomes, key=lambda o: o.shard.index), distinct_violations(outcomes),
                       saved, address, count, startup)


def run_in_turn(options: CheckOptions, *, stop_on_first: bool = True, database: Optional[str] = None,
                on_progress: Optional[Callable[[Progress], None]] = None,
                on_shrink: Optional[Callable[[Stats], None]] = None,
                on_replay: Optional[Callable[[int, int, int], None]] = None) -> ParallelRun:
    """`--workers 1`: the shards `run_parallel` would run, one after another in this process (no Dask), merged
    the same way, so that the merged digest and report are those of any worker count. With `stop_on_first`, the
    shards after one that found a violation stop as their first example starts, as a worker told to stop does
    (without waiting on a clock: which shards stop is a function of the seed). `on_progress` is told of the
    whole run's exploring, `on_shrink(stats)` of a shard's examples while it shrinks a violation, `on_replay` of
    minimization's replays."""
    started = time.perf_counter()
    outcomes: list[ShardOutcome] = []
    before = Progress(0, 0, 0)

    def on_example(stats: Any) -> None:
        failing = stats.first_failure_at is not None or stats.violating_examples > 0
        if stats.first_failure_at is not None and on_shrink is not None:
            on_shrink(stats)
        elif on_progress is not None:
            on_progress(Progress(before.examples + stats.examples, before.steps + stats.steps,
                                 before.failing + failing))

    def stop(stats: Any) -> bool:
        return any(o.failure is not None or o.violating_examples > 0 for o in outcomes)

    for shard in plan_shards(options):
        outcome = run_shard(options, shard, database, stop=stop if stop_on_first else None,
                            on_example=on_example, on_replay=on_replay)
        outcomes.append(outcome)
        before = Progress(before.examples + outcome.examples, before.steps + outcome.steps,
                          before.failing + (outcome.failure is not None or outcome.violating_examples > 0))
    saved = save_found(database, [o.saved for o in outcomes])
    result = merge_outcomes(options, outcomes, time.perf_counter() - started)
    return ParallelRun(result, outcomes, distinct_violations(outcomes), saved, "", 1, 0.0, in_turn=True)
