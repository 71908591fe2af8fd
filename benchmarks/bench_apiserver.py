"""API requests per second through the whole pipeline (Pipeline.handle) on a store with watchers attached.

Run: python benchmarks/bench_apiserver.py [--pods N] [--watchers W] [--profile]

Figures are taken with `kmodel.runtime.tune_gc()` applied after setup (as the CLI runs), and, unless
--profile, also with Python's default GC settings.

Measures creates, then updates (a status update of each pod, as a kubelet does), of pods with typed bodies
(as components send them), by the admin identity and by a node identity (Node authorizer + NodeRestriction),
with W store watchers on the pods prefix (the watch cache helper may replace them with watch-cache fan-out:
extend `attach_watchers`). Prints requests per second; no assertions.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import attrs  # noqa: E402

from kmodel.apiserver.bootstrap_policy import bootstrap_policy  # noqa: E402
from kmodel.component.registry import builtin_controller_roles  # noqa: E402
from kmodel.apiserver.pipeline import Pipeline  # noqa: E402
from kmodel.apiserver.resources import key_prefix, object_key, resource_of  # noqa: E402
from kmodel.apiserver.wire import Request  # noqa: E402
from kmodel.runtime import restore_gc, tune_gc  # noqa: E402
from kmodel.objects import Container, Namespace, ObjectMeta, Pod, PodSpec  # noqa: E402
from kmodel.store import Store, prefix_end  # noqa: E402


def boot() -> Store:
    store = Store()
    for obj in bootstrap_policy(builtin_controller_roles()) + [Namespace(metadata=ObjectMeta(name="bench"))]:
        store.put(object_key(resource_of(obj), obj.metadata.namespace, obj.metadata.name), obj)
    return store


def attach_watchers(store: Store, n: int) -> list[int]:
    prefix = key_prefix("pods")
    return [store.watch(prefix, prefix_end(prefix)) for _ in range(n)]


def drain(store: Store, watch_ids: list[int]) -> None:
    for w in watch_ids:
        store.take_watch_responses(w)


def run(pods: int, watchers: int) -> dict:
    store = boot()
    api = Pipeline(store)
    ids = attach_watchers(store, watchers)
    template = Pod(metadata=ObjectMeta(namespace="bench"),
                   spec=PodSpec(node_name="n1", containers=(Container(name="c", image="nginx"),)))
    bodies = [attrs.evolve(template, metadata=attrs.evolve(template.metadata, name=f"p{i}")) for i in range(pods)]
    t0 = time.perf_counter()
    created = []
    for i, body in enumerate(bodies):
        r = api.handle(Request(i, "create", "pods", "bench", body=body, token="admin-token"), now=i)
        created.append(r.body)
        if i % 100 == 0:
            drain(store, ids)
    t1 = time.perf_counter()
    # the kubelet's bodies are built before the clock restarts: this times the API server, not the client
    running_bodies = [attrs.evolve(pod, status=attrs.evolve(pod.status, phase="Running")) for pod in created]
    t1b = time.perf_counter()
    for i, pod in enumerate(created):
        running = running_bodies[i]
        r = api.handle(Request(i, "update", "pods", "bench", pod.metadata.name, subresource="status",
                               body=running, token="node-n1-token"), now=pods + i)
        assert r.code == 200, r.body
        if i % 100 == 0:
            drain(store, ids)
    t2 = time.perf_counter()
    return {"creates_per_s": pods / (t1 - t0), "status_updates_per_s": pods / (t2 - t1b),
            "overall_per_s": 2 * pods / ((t1 - t0) + (t2 - t1b))}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=20_000)
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if args.profile:
        tune_gc()
        cProfile.runctx("run(args.pods, args.watchers)", globals(), {"run": run, "args": args}, "/tmp/bench_apiserver.prof")
        pstats.Stats("/tmp/bench_apiserver.prof").sort_stats("tottime").print_stats(25)
        return
    print(f"pods={args.pods} watchers={args.watchers}")
    for label, tuned in (("default GC", False), ("kmodel.runtime.tune_gc()", True)):
        previous = tune_gc() if tuned else None
        figures = run(args.pods, args.watchers)
        if previous is not None:
            restore_gc(previous)
        print(f"-- {label}")
        for k, v in figures.items():
            print(f"  {k:<22} {v:>10,.0f}")


if __name__ == "__main__":
    main()
