"""A small cluster for tests: etcd, API server replicas, and probe components that use kmodel.client."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from kmodel.apiserver.bootstrap_policy import bootstrap_policy
from kmodel.component.registry import builtin_controller_roles
from kmodel.apiserver.etcd_endpoint import EtcdServer
from kmodel.apiserver.pipeline import Pipeline
from kmodel.apiserver.replica import APIServerReplica
from kmodel.apiserver.resources import object_key, resource_of
from kmodel.apiserver.watchcache import WatchCacheConfig
from kmodel.client import ApiClient, ClientComponent, Informer
from kmodel.component import Out
from kmodel.loop import Loop
from kmodel.network import Message, Network
from kmodel.objects import Container, Namespace, ObjectMeta, Pod, PodSpec
from kmodel.store import Store


def install(store: Store, obj: Any) -> None:
    res = resource_of(obj)
    store.put(object_key(res, obj.metadata.namespace, obj.metadata.name), obj)


def booted_store() -> Store:
    store = Store()
    for obj in bootstrap_policy(builtin_controller_roles()):
        install(store, obj)
    for ns in ("default", "kube-system"):
        install(store, Namespace(metadata=ObjectMeta(name=ns)))
    return store


def pod(name: str, namespace: str = "default", *, node: str = "", labels: Optional[dict] = None) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace=namespace, labels=labels or {}),
               spec=PodSpec(containers=(Container(name="c", image="nginx"),), node_name=node))


class Draws:
    """A stand-in random source that gives `values` in turn, then the last one for ever."""

    def __init__(self, *values: float) -> None:
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0) if len(self.values) > 1 else self.values[0]


class Probe(ClientComponent):
    """A component that owns an ApiClient and any informers; records every answer it gets. Its client draws 0
    from its random source unless `draws` says otherwise: backoffs without jitter (800, 1,600 ms ...) and watch
    timeouts of 300 s, so tests can name exact times (tests/client/test_informer.py checks the jitter)."""

    def __init__(self, name: str, endpoints: Sequence[str], *, token: str = "admin-token",
                 draws: Sequence[float] = (0.0,), **client_options):
        super().__init__(name)
        self.client = ApiClient(name, endpoints, token=token, **client_options)
        self.client.rng = Draws(*draws)  # type: ignore[assignment]
        self.informers: list[Informer] = []
        self.answers: list = []
        self.started = False

    def informer(self, resource: str, **options) -> Informer:
        inf = Informer(self.client, resource, **options)
        self.informers.append(inf)
        return inf

    def record(self, now: int, response, out: Out) -> None:
        self.answers.append(response)

    def start(self, now: int, out: Out) -> None:
        self.started = True
        for inf in self.informers:
            inf.start(now, out)

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        self.client.on_message(now, msg, out)

    def on_timer(self, now: int, name: str, out: Out) -> None:
        self.client.on_timer(now, name, out)

    def crash(self) -> None:
        self.client.reset()
        for inf in self.informers:
            inf.reset()


class Cluster:
    """etcd + `replicas` API servers (+ probes) in one Loop."""

    def __init__(self, replicas: int = 2, *, probes: Sequence[Probe] = (), store: Optional[Store] = None,
                 cache_config: WatchCacheConfig = WatchCacheConfig()) -> None:
        self.store = store if store is not None else booted_store()
        self.network = Network()
        self.etcd = EtcdServer(self.store, self.network)
        self.replicas = []
        for i in range(replicas):
            name = f"apiserver-{i}"
            handle = self.etcd.handle_for(name)
            self.replicas.append(APIServerReplica(name, Pipeline(handle), handle, cache_config=cache_config))
        self.loop = Loop(self.network, components=[self.etcd, *self.replicas, *probes])
        self.etcd.attach(self.loop)
        self.loop.notify_work("etcd")

    def run(self, until_ms: Optional[int] = None, max_events: int = 200_000) -> int:
        until = self.loop.now + 10_000 if until_ms is None else until_ms
        return self.loop.run_fair(until, max_events=max_events)

    def act(self, probe: Probe, fn) -> None:
        """Run `fn(now, out)` inside `probe` (an input from outside the model) and apply its effects."""
        out = Out()
        fn(self.loop.now, out)
        self.loop._apply(probe.name, out.effects)  # noqa: SLF001 (test-only injection of an outside input)
        self.loop.notify_work(probe.name)
