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

Run: python benchmarks/bench_fanout.py [requests] [--distinct-specs]

Each figure is printed twice: with Python's default GC settings, and with `kmodel.runtime.tune_gc()` (as the
CLI runs).
"""

from __future__ import annotations

import gc
import sys
import time

import attrs

from kmodel.apiserver.bootstrap_policy import bootstrap_policy
from kmodel.apiserver.etcd_endpoint import EtcdServer
from kmodel.apiserver.pipeline import Pipeline
from kmodel.apiserver.replica import APIServerReplica
from kmodel.apiserver.resources import object_key, resource_of
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
    for obj in [*bootstrap_policy(), Namespace(metadata=ObjectMeta(name="default"))]:
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
    return [store.range(f"/registry/pods/default/p{i}").kvs[0].value for i in range(n)]


def bench_replica(n: int) -> float:
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
    elapsed = 0.0
    for phase in ("create", "update"):
        reqs = creates(half) if phase == "create" else updates(stored_pods(store, half), half + 1)
        # the load generator's messages are built before the clock starts, like its requests; the two `Out`s
        # are the harness's and are emptied after each request rather than built anew
        messages = [Message(0, "load", "apiserver-0", req) for req in reqs]
        out, etcd_out = Out(), Out()
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
        elapsed += time.perf_counter() - started
    assert fanned == WATCHERS * 2 * half, fanned
    return 2 * half / elapsed


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
    started = time.perf_counter()
    for msg in messages:
        replica.on_message(0, msg, out)
    elapsed = time.perf_counter() - started
    assert len(out.effects) == WATCHERS * 2 * half
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


def bench_loop(n: int) -> float:
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
    started = time.perf_counter()
    loop.run_fair(0)
    elapsed = time.perf_counter() - started
    load.reqs, load.next = updates(stored_pods(store, half), half + 1), 0
    loop.notify_work("load")
    started = time.perf_counter()
    loop.run_fair(0)
    elapsed += time.perf_counter() - started
    assert load.ok == 2 * half and all(w.events == 2 * half for w in watchers), (load.ok, watchers[0].events)
    return 2 * half / elapsed


def main() -> None:
    global DISTINCT_SPECS
    args = [a for a in sys.argv[1:] if a != "--distinct-specs"]
    DISTINCT_SPECS = "--distinct-specs" in sys.argv[1:]
    n = int(args[0]) if args else 20_000
    print(f"{n:,} requests, pods {'with distinct specs' if DISTINCT_SPECS else 'sharing a template spec'}")
    for label, tuned in (("default GC", False), ("kmodel.runtime.tune_gc()", True)):
        # Each figure starts from a heap without the previous figure's garbage (its store, replica and
        # loop form cycles): otherwise freeing them lands in the next figure's timing (default GC), or
        # tune_gc's freeze() keeps them forever.
        gc.collect()
        previous = tune_gc() if tuned else None
        print(f"-- {label}")
        print(f"replica + watch cache, fan-out to {WATCHERS} watchers: {bench_replica(n):,.0f} requests/s")
        gc.collect()
        print(f"watch cache alone (apply + fan-out to {WATCHERS}):       {bench_cache(n):,.0f} events/s")
        gc.collect()
        print(f"through the loop, {WATCHERS} watchers receiving:       {bench_loop(n):,.0f} requests/s")
        if previous is not None:
            restore_gc(previous)


if __name__ == "__main__":
    main()
