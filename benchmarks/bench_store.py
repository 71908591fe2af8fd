"""Throughput of kmodel.store: puts (with and without a watcher), ranges, txns, fan-out.

Run by hand: ``python benchmarks/bench_store.py``. Prints operations per second; the
best of a few repeats, to damp noise. Wall-clock time is fine here, never in kmodel/.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from kmodel.runtime import restore_gc, tune_gc  # noqa: E402
from kmodel.store import Compare, PutOp, RangeOp, Store, prefix_end  # noqa: E402

N = 200_000
REPEATS = 3


def best_rate(run, n: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        elapsed = run()
        best = min(best, elapsed)
    return n / best


def puts(watchers: str) -> float:
    """Single-key puts; watchers' queues are drained every 100 puts, as a consumer would."""
    keys = [f"/registry/pods/default/pod-{i % 1000}" for i in range(N)]

    def run() -> float:
        store = Store()
        ids = []
        if watchers == "one":
            ids.append(store.watch("/registry/pods/", prefix_end("/registry/pods/")))
        elif watchers == "many-exact":
            for i in range(1000):
                store.watch(f"/registry/nodes/node-{i}")
            ids.append(store.watch("/registry/pods/", prefix_end("/registry/pods/")))
        put = store.put
        take = store.take_watch_responses
        start = time.perf_counter()
        for i, key in enumerate(keys):
            put(key, i)
            if i % 100 == 99:
                for watch_id in ids:
                    take(watch_id)
        return time.perf_counter() - start

    return best_rate(run, N)


def ranges() -> tuple[float, float]:
    store = Store()
    for i in range(10_000):
        store.put(f"/registry/pods/ns{i % 10}/pod-{i}", i)
    n_single = 100_000
    single = [f"/registry/pods/ns{i % 10}/pod-{i % 10_000}" for i in range(n_single)]

    def run_single() -> float:
        start = time.perf_counter()
        for key in single:
            store.range(key)
        return time.perf_counter() - start

    n_list = 200
    prefix = "/registry/pods/ns3/"

    def run_list() -> float:
        start = time.perf_counter()
        for _ in range(n_list):
            store.range(prefix, prefix_end(prefix))
        return time.perf_counter() - start

    return best_rate(run_single, n_single), best_rate(run_list, n_list)


def txns() -> float:
    n = 100_000
    keys = [f"/registry/pods/default/pod-{i % 1000}" for i in range(n)]

    def run() -> float:
        store = Store()
        store.watch("/registry/pods/", prefix_end("/registry/pods/"))
        mod = {}
        start = time.perf_counter()
        for i, key in enumerate(keys):
            # the API server's optimistic update: compare mod_revision, put, else read
            r = store.txn(
                [Compare(key, "MOD", "EQUAL", mod.get(key, 0))], [PutOp(key, i)], [RangeOp(key)]
            )
            mod[key] = r.header_revision
        return time.perf_counter() - start

    return best_rate(run, n)


def main() -> None:
    print(f"python {sys.version.split()[0]}, {N:,} puts per run, best of {REPEATS}")
    for label, tuned in (("default GC", False), ("kmodel.runtime.tune_gc()", True)):
        # Most of a put's cost beyond the model itself is the cyclic GC walking the growing
        # history; tune_gc() is the process-wide, opt-in answer the CLI uses.
        previous = tune_gc() if tuned else None
        print(f"-- {label}")
        print(f"puts/s, no watcher:                 {puts('none'):>10,.0f}")
        print(f"puts/s, one prefix watcher:         {puts('one'):>10,.0f}")
        print(f"puts/s, 1000 exact + 1 prefix:      {puts('many-exact'):>10,.0f}")
        single, listing = ranges()
        print(f"ranges/s, single key (10k keys):    {single:>10,.0f}")
        print(f"ranges/s, prefix of 1000 keys:      {listing:>10,.0f}")
        print(f"txns/s, compare+put, one watcher:   {txns():>10,.0f}")
        if previous is not None:
            restore_gc(previous)


if __name__ == "__main__":
    main()
