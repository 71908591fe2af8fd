"""Create/update requests per second through an API server replica and its watch cache, fanned out to 10 watchers.

Three figures:

* ``replica``: the replica driven by hand (no loop, no network): each request goes through the pipeline and
  the store, etcd's watch response is handed straight back to the replica, and the watch cache fans it out
  to 10 watchers into an `Out` (the sends are built, not delivered).
* ``cache``: only the replica's side of a write: etcd watch responses applied to the watch cache and fanned
  out to 10 watchers.
* ``loop``: the whole hot path in kmodel.loop: a load generator sends each request over the network, the
  replica handles it, etcd's work sends the watch response, the replica's cache fans out, and 10 watcher
  components receive every event.

Every figure is of a mix: half the requests create pods, the other half update each created pod (a label
changed, with its resourceVersion). ``replica`` and ``loop`` also print each half's own rate.

Run: python benchmarks/bench_fanout.py [requests] [--distinct-specs] [--best-of N] [--diagnose]

Each figure is the best of `--best-of` runs (default 5), followed by every run's figure: the work is the same
on every run, so the best is the code's figure and the spread is the machine's (see below).

``--diagnose`` also prints, for each timed phase of ``replica``, where its time went: process CPU time per
request (and the kernel's share), the collector's collections and time per generation, and minor page faults.
The work of a phase is the same on every run (same requests, same bytecodes, and the same collections: 95
young and 8 middle-generation ones for the creates, 81 and 7 for the updates, no full collection), so when
two runs' figures differ, these lines tell a slower machine (more CPU time for the same work) from a change
in the work. On a shared machine the CPU time of the very same phase can differ by half between runs (and
between the phases of one run) while the collector's and the kernel's shares stay small: the spread of
single runs is the machine's speed, not warm-up or the collector.

Each figure is printed twice: with Python's default GC settings, and with `kmodel.runtime.tune_gc()` (as the
CLI runs). Under the default settings the cyclic collector's full collections walk every object still
alive, and the model keeps its records for ever: what matters is how many tracked objects each write leaves
behind (about 6 now; 20 before the store's history, the replica's etcd_received log and the audit log kept
their per-write records compact, and the watch cache its window flat, when full collections were most of the
cost of a write; now none falls inside a timed phase, see --diagnose). The harness keeps to that too: it reads the stored pods back without store requests, and drops the
sends of each response once counted.
"""

from __future__ import annotations

import gc
import resource
import sys
import time
from typing import Any, Callable

import attrs

from kmodel.apiserver.bootstrap_policy import bootstrap_policy
from kmodel.component.registry import builtin_controller_roles
from kmodel.apiserver.etcd_endpoint import EtcdServer
from kmodel.apiserver.pipeline import Pipeline
from kmodel.apiserver.replica import APIServerReplica
from kmodel.apiserver.resources import object_key, resource_of
from kmodel.apiserver.storeview import current_value
from kmodel.apiserver.wire import Request, Response, WatchEvent
from kmodel.component import Component, Out
from kmodel.loop import Loop
from kmodel.network import Message, Network
from kmodel.objects import Container, Namespace, ObjectMeta, Pod, PodSpec
from kmodel.runtime import restore_gc, tune_gc
from kmodel.store import Store

WATCHERS = 10


def booted() -> Store:
    store = Store()
    for obj in [*bootstrap_policy(builtin_controller_roles()), Namespace(metadata=ObjectMeta(name="default"))]:
        store.put(object_key(resource_of(obj), obj.metadata.namespace, obj.metadata.name), obj)
    return store


DISTINCT_SPECS = False  # --distinct-specs: every pod body carries its own (equal) PodSpec object


def pods(n: int) -> list[Pod]:
    """Pod bodies as a ReplicaSet controller sends them: each pod its own metadata, all sharing the one spec
    object of the template (so per-spec work, defaulting and validation, is done once per template, as the
    pipeline's identity memos intend). With --distinct-specs each pod gets its own equal spec instead (as
    if every pod were decoded from its own manifest): the pessimistic case."""
    template = PodSpec(containers=(Container(name="c", image="nginx"),))
    return [Pod(metadata=ObjectMeta(name=f"p{i}", namespace="default", labels={"app": "web"}),
                spec=PodSpec(containers=(Container(name="c", image="nginx"),)) if DISTINCT_SPECS else template)
            for i in range(n)]


def creates(n: int) -> list[Request]:
    return [Request(i + 1, "create", "pods", "default", body=p, token="admin-token") for i, p in enumerate(pods(n))]


def updates(stored: list[Pod], first_id: int) -> list[Request]:
    """An update of each stored pod (as a controller sends it: the object read back, one label changed)."""
    out = []
    for i, p in enumerate(stored):
        changed = attrs.evolve(p, metadata=attrs.evolve(p.metadata, labels={"app": "web", "v": "2"}))
        out.append(Request(first_id + i, "update", "pods", "default", p.metadata.name, body=changed,
                           token="admin-token"))
    return out


def stored_pods(store: Store, n: int) -> list[Pod]:
    """The stored pods, as the load generator's informer cache holds them: read without a store request (a
    Range here would put 10,000 reads that no API server made on etcd's history, and their records on the
    heap the collector walks while the updates are timed)."""
    return [current_value(store, f"/registry/pods/default/p{i}") for i in range(n)]


def settle() -> None:
    """Collect the setup's garbage and young objects before the clock starts (as main does between figures):
    what the harness just built (thousands of requests, or the store writes whose watch responses are about
    to be applied) would otherwise make the collector's next full collection fall inside the timed part,
    which would then pay for objects it did not make. The timed part still pays for the collections its own
    allocations cause, under whatever GC settings are in force."""
    gc.collect()


DIAGNOSE = False  # --diagnose: print a Probe line for each timed phase of bench_replica


class Probe:
    """Where one timed phase's time went (see --diagnose): CPU time, GC collections by generation, page faults.
    Used as a context manager around the timed part; its gc callback runs only at collections."""

    def __init__(self, label: str, requests: int) -> None:
        self.label, self.requests = label, requests
        self.collections = [[0, 0.0], [0, 0.0], [0, 0.0]]  # per generation: count, seconds
        self._since = 0.0

    def _on_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._since = time.perf_counter()
        else:
            entry = self.collections[info["generation"]]
            entry[0] += 1
            entry[1] += time.perf_counter() - self._since

    def __enter__(self) -> "Probe":
        gc.callbacks.append(self._on_gc)
        self._usage = resource.getrusage(resource.RUSAGE_SELF)
        self._cpu = time.process_time()
        return self

    def __exit__(self, *exc: Any) -> None:
        cpu = time.process_time() - self._cpu
        usage = resource.getrusage(resource.RUSAGE_SELF)
        gc.callbacks.remove(self._on_gc)
        per = 1e6 / self.requests
        collections = ", ".join(f"gen{g} {n}x {t * 1e3:.0f} ms" for g, (n, t) in enumerate(self.collections))
        print(f"    {self.label}: CPU {cpu * per:.1f} us/request (kernel {(usage.ru_stime - self._usage.ru_stime) * per:.1f}),"
              f" GC {collections}, {usage.ru_minflt - self._usage.ru_minflt} minor faults")


def rates(half: int, seconds: dict[str, float]) -> tuple[float, float, float]:
    """(the mix's requests/s, the creates', the updates')."""
    return 2 * half / sum(seconds.values()), half / seconds["create"], half / seconds["update"]


def bench_replica(n: int) -> tuple[float, float, float]:
    store = booted()
    net = Network()
    for name in ("etcd", "apiserver-0", "load", *[f"w{i}" for i in range(WATCHERS)]):
        net.add_endpoint(name)
    etcd = EtcdServer(store, net)
    handle = etcd.handle_for("apiserver-0")
    replica = APIServerReplica("apiserver-0", Pipeline(handle), handle)
    out = Out()
    replica.start(0, out)
    for i in range(WATCHERS):
        replica.on_message(0, Message(0, f"w{i}", "apiserver-0", Request(i, "watch", "pods", token="admin-token"),
                                      f"w{i}/watch"), out)
    half = n // 2
    fanned = 0
    seconds = {}
    for phase in ("create", "update"):
        reqs = creates(half) if phase == "create" else updates(stored_pods(store, half), half + 1)
        # the load generator's messages are built before the clock starts, like its requests; the two `Out`s
        # are the harness's and are emptied after each request rather than built anew
        messages = [Message(0, "load", "apiserver-0", req) for req in reqs]
        out, etcd_out = Out(), Out()
        settle()
        probe = Probe(phase, half) if DIAGNOSE else None
        if probe is not None:
            probe.__enter__()
        started = time.perf_counter()
        for message in messages:
            replica.on_message(0, message, out)
            if etcd.has_work():
                etcd.work(0, etcd_out)
            for send in etcd_out.effects:
                replica.on_message(0, Message(0, "etcd", "apiserver-0", send.payload, send.stream), out)
            fanned += len(out.effects) - 1
            out.effects.clear()
            etcd_out.effects.clear()
        seconds[phase] = time.perf_counter() - started
        if probe is not None:
            probe.__exit__()
    assert fanned == WATCHERS * 2 * half, fanned
    return rates(half, seconds)


def bench_cache(n: int) -> float:
    """Only the replica's side of the fan-out: etcd watch responses (creates, then updates, written straight
    into the store) applied to the watch cache and sent to 10 watchers."""
    store = booted()
    net = Network()
    etcd = EtcdServer(store, net)
    handle = etcd.handle_for("apiserver-0")
    replica = APIServerReplica("apiserver-0", Pipeline(handle), handle)
    out = Out()
    replica.start(0, out)
    for i in range(WATCHERS):
        replica.on_message(0, Message(0, f"w{i}", "apiserver-0", Request(i, "watch", "pods", token="admin-token"),
                                      f"w{i}/watch"), out)
    half = n // 2
    made = pods(half)
    for labels in ({"app": "web"}, {"v": "2"}):  # stored with resourceVersion set, as the pipeline stores them
        for p in made:
            meta = attrs.evolve(p.metadata, labels=labels, resource_version=str(store.revision + 1))
            handle.put(f"/registry/pods/default/{p.metadata.name}", attrs.evolve(p, metadata=meta))
    etcd_out = Out()
    etcd.work(0, etcd_out)
    messages = [Message(0, "etcd", "apiserver-0", send.payload, send.stream) for send in etcd_out.effects]
    out = Out()
    fanned = 0
    settle()
    started = time.perf_counter()
    for msg in messages:
        replica.on_message(0, msg, out)
        # counted and dropped after each response, as in bench_replica (a loop applies a handler's sends and
        # lets them go): kept, 220,000 of them would be on the heap the collector walks while this is timed
        fanned += len(out.effects)
        out.effects.clear()
    elapsed = time.perf_counter() - started
    assert fanned == WATCHERS * 2 * half, fanned
    return 2 * half / elapsed


class Load(Component):
    def __init__(self, reqs: list[Request]) -> None:
        super().__init__("load")
        self.reqs = reqs
        self.next = 0
        self.ok = 0

    def has_work(self) -> bool:
        return self.next < len(self.reqs)

    def work(self, now: int, out: Out) -> None:
        out.send("apiserver-0", self.reqs[self.next])
        self.next += 1

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        if type(msg.payload) is Response and msg.payload.code < 300:
            self.ok += 1


class Watcher(Component):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.events = 0

    def start(self, now: int, out: Out) -> None:
        out.send("apiserver-0", Request(0, "watch", "pods", token="admin-token"), f"{self.name}/watch")

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        if type(msg.payload) is WatchEvent:
            self.events += 1


def bench_loop(n: int) -> tuple[float, float, float]:
    store = booted()
    net = Network()
    etcd = EtcdServer(store, net)
    handle = etcd.handle_for("apiserver-0")
    replica = APIServerReplica("apiserver-0", Pipeline(handle), handle)
    watchers = [Watcher(f"w{i}") for i in range(WATCHERS)]
    loop = Loop(net, components=[etcd, replica, *watchers])
    etcd.attach(loop)
    loop.run_fair(0)
    half = n // 2
    load = Load(creates(half))
    loop.add_component(load)
    seconds = {}
    settle()
    started = time.perf_counter()
    loop.run_fair(0)
    seconds["create"] = time.perf_counter() - started
    load.reqs, load.next = updates(stored_pods(store, half), half + 1), 0
    loop.notify_work("load")
    settle()
    started = time.perf_counter()
    loop.run_fair(0)
    seconds["update"] = time.perf_counter() - started
    assert load.ok == 2 * half and all(w.events == 2 * half for w in watchers), (load.ok, watchers[0].events)
    return rates(half, seconds)


def split(figures: tuple[float, float, float]) -> str:
    mix, created, updated = figures
    return f"{mix:,.0f} requests/s (creates {created:,.0f}/s, updates {updated:,.0f}/s)"


def best(figure: Callable[[int], Any], n: int, repeat: int) -> tuple[Any, list[float]]:
    """The best of `repeat` runs of `figure` (each on a fresh cluster, from a collected heap), and every run's
    headline figure: the work is the same on every run, and on a shared machine other load only ever makes a
    run slower, so the best is the figure of the code (as timeit reports the minimum) and the spread is the
    machine's."""
    results = []
    for _ in range(repeat):
        gc.collect()
        results.append(figure(n))
    key = (lambda r: r[0]) if isinstance(results[0], tuple) else (lambda r: r)
    return max(results, key=key), sorted(key(r) for r in results)


def spread(figures: list[float]) -> str:
    return "" if len(figures) < 2 else f"  [{len(figures)} runs: {' / '.join(f'{f:,.0f}' for f in figures)}]"


def main() -> None:
    global DISTINCT_SPECS, DIAGNOSE
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requests", nargs="?", type=int, default=20_000, help="requests per figure (default 20000)")
    parser.add_argument("--best-of", type=int, default=5, metavar="N",
                        help="runs per figure; the best is printed, then every run's figure (default 5)")
    parser.add_argument("--distinct-specs", action="store_true", help="every pod body its own PodSpec object")
    parser.add_argument("--diagnose", action="store_true", help="where each timed phase of the replica figure "
                                                                  "spent its time")
    args = parser.parse_args()
    if args.requests < 2 or args.best_of < 1:
        parser.error("requests must be at least 2 and --best-of at least 1")
    DISTINCT_SPECS, DIAGNOSE = args.distinct_specs, args.diagnose
    n, repeat = args.requests, args.best_of
    print(f"{n:,} requests, pods {'with distinct specs' if DISTINCT_SPECS else 'sharing a template spec'}"
          + (f", best of {repeat} runs" if repeat > 1 else ""))
    for label, tuned in (("default GC", False), ("kmodel.runtime.tune_gc()", True)):
        # Each figure starts from a heap without the previous figure's garbage (its store, replica and
        # loop form cycles): otherwise freeing them lands in the next figure's timing (default GC), or
        # tune_gc's freeze() keeps them forever.
        gc.collect()
        previous = tune_gc() if tuned else None
        print(f"-- {label}")
        top, runs = best(bench_replica, n, repeat)
        print(f"replica + watch cache, fan-out to {WATCHERS} watchers: {split(top)}{spread(runs)}")
        top, runs = best(bench_cache, n, repeat)
        print(f"watch cache alone (apply + fan-out to {WATCHERS}):       {top:,.0f} events/s{spread(runs)}")
        top, runs = best(bench_loop, n, repeat)
        print(f"through the loop, {WATCHERS} watchers receiving:       {split(top)}{spread(runs)}")
        if previous is not None:
            restore_gc(previous)


if __name__ == "__main__":
    main()
