"""kube-controller-manager's shared informers (kmodel.controllers.shared_informers, kmodel.client.shared_informer):
one list and one watch per resource for the whole process, handlers in registration order, a crash forgets the
caches, controllers wait for the caches they use, the lists go through the "shared-informers" client's bucket."""

from __future__ import annotations

from collections import Counter

from kmodel.apiserver.wire import Request
from kmodel.checker.actions import deployment_manifest
from kmodel.client.informer import Listener
from kmodel.client.rate_limiter import RateLimit
from kmodel.client.shared_informer import SharedInformerFactory
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Apply
from kmodel.component import Out
from kmodel.controllers.shared_informers import SHARED_INFORMERS

from tests.client.harness import Cluster as ClientCluster, Probe, pod

KCM = "kube-controller-manager"


def _restart_and_lead(c: Cluster) -> None:
    """Restart the crashed controller manager and run until it leads again and its controllers and shared
    informers have started (OnStartedLeading): the new process is a new candidate, which acquires the Lease once
    its last holder's (the crashed process's) lease has run out."""
    c.restart(KCM)
    deadline = c.now + 40_000
    members = [c.loop.components[name] for name in c.processes[KCM]]
    while any(getattr(m, "awaiting_leader", False) for m in members):  # event by event, to stop as they start
        assert c.now < deadline, "the restarted kube-controller-manager did not lead within 40 s"
        c.run(deadline, max_events=1)


def _tapped(cluster: Cluster) -> list:
    sent: list = []

    def tap(msg) -> None:
        if isinstance(msg.payload, Request):
            sent.append((msg.src, msg.payload.verb, msg.payload.resource, msg.payload.namespace))

    cluster.loop.set_delivery_tap(tap)
    return sent


def test_the_process_lists_and_watches_each_resource_once_whatever_the_number_of_its_controllers():
    c = Cluster(ClusterConfig(nodes=2))
    sent = _tapped(c)
    c.submit(Apply(deployment_manifest("web", 2, 0, False)))
    c.run(30_000)
    informers = c.loop.components[SHARED_INFORMERS]
    identities = [inf.identity for inf in informers.informers]
    assert len(identities) == len(set(identities))
    # pods, for instance, feed the Deployment, ReplicaSet, StatefulSet, garbage collector, pod GC, taint eviction,
    # node lifecycle and endpoints controllers: one informer, one list, one watch
    pods = informers.factory.informers[("pods", "", "", "")]
    owners = [listener.owner for listener in pods.listeners]
    assert len(owners) >= 7 and len(set(owners)) == len(owners)
    assert pods.lists == 1 and pods.has_synced
    controllers = set(c.controller_manager) - {SHARED_INFORMERS}
    assert not [s for s in sent if s[0] in controllers and s[1] == "watch"]  # no controller watches
    # the process's watches: one per informer (none ended in 30 s), none per controller
    watches = Counter((r, ns) for src, verb, r, ns in sent if src == SHARED_INFORMERS and verb == "watch")
    assert set(watches.values()) == {1} and len(watches) == len(identities)


def test_listeners_are_called_in_registration_order_and_a_new_life_takes_its_place_back():
    p = Probe("probe", ["apiserver-0"])
    factory = SharedInformerFactory(p.client)
    calls: list = []

    def handlers(owner: str) -> dict:
        return {"on_add": lambda now, obj, out: calls.append((owner, "add", obj.metadata.name)),
                "on_update": lambda now, old, new, out: calls.append((owner, "update", new.metadata.name))}

    for owner in ("a", "b", "c"):
        factory.informer_for(owner, "pods", **handlers(owner))
    inf = factory.informer_for("b", "nodes", **handlers("b"))
    assert len(factory.informers) == 2 and inf is factory.informers[("nodes", "", "", "")]
    factory.forget("b")  # b starts a new life and registers again: after a, before c
    pods = factory.informer_for("b", "pods", **handlers("b"))
    assert [listener.owner for listener in pods.listeners] == ["a", "b", "c"]
    assert [listener.owner for listener in inf.listeners] == []
    p.informers.extend(factory.informers.values())
    c = ClientCluster(1, probes=[p])
    c.run()
    assert pods.has_synced and calls == []
    c.act(p, lambda now, out: p.client.create(now, out, "pods", pod("x"), on_done=p.record))
    c.run()
    assert calls == [("a", "add", "x"), ("b", "add", "x"), ("c", "add", "x")]


def test_a_listener_of_another_component_acts_as_that_component():
    p = Probe("probe", ["apiserver-0"])
    factory = SharedInformerFactory(p.client)
    inf = factory.informer_for("controller/x", "pods", on_add=lambda now, obj, out: out.set_timer("x/queue", 5))
    out = Out()
    inf.listeners[0].on_add(0, pod("x"), out)
    assert [(type(e).__name__, e.owner, [t.name for t in e.effects]) for e in out.effects] == \
        [("ActFor", "controller/x", ["x/queue"])]


def test_an_informer_a_handler_asks_for_is_started_after_it_and_only_then_the_factory_starts_again():
    p = Probe("probe", ["apiserver-0"])
    factory = SharedInformerFactory(p.client)
    asked = []

    def on_add(now, obj, out):
        if not asked:
            asked.append(factory.informer_for("controller/gc", "widgets"))

    inf = factory.informer_for("controller/gc", "pods", on_add=on_add)
    factory.start(0, Out())
    assert inf.started and not factory.added_since_start
    out = Out()
    inf.listeners[0].on_add(0, pod("x"), out)
    assert asked[0].started and not factory.added_since_start
    lists = [e for e in out.effects if type(e).__name__ == "Send"]
    assert [(e.payload.verb, e.payload.resource) for e in lists] == [("list", "widgets")]
    out = Out()
    inf.listeners[0].on_add(0, pod("y"), out)  # nothing new asked for: nothing more started, nothing sent
    assert out.effects == []


def test_after_an_input_the_loop_looks_again_at_the_controllers_whose_handlers_ran_or_all_when_a_cache_synced():
    from kmodel.controllers.shared_informers import SharedInformers

    shared = SharedInformers(SHARED_INFORMERS, ["apiserver-0"])
    woken: list = []
    shared.wake = woken.append
    pods = shared.factory.informer_for("controller/a", "pods", on_add=lambda now, obj, out: None)
    shared.factory.informer_for("controller/b", "nodes", on_add=lambda now, obj, out: None)
    shared.factory.informer_for("controller/c", "pods", on_add=lambda now, obj, out: None)
    shared._wake_listeners()
    assert woken == []  # nothing ran, nothing synced
    pods.listeners[1].on_add(0, pod("x"), Out())
    pods.listeners[0].on_add(0, pod("x"), Out())
    shared._wake_listeners()
    assert woken == ["controller/a", "controller/c"]  # rank order
    woken.clear()
    pods.has_synced = True
    shared._wake_listeners()
    assert woken == ["controller/a", "controller/b", "controller/c"]  # a cache synced: every controller
    woken.clear()
    shared.crash()
    shared._wake_listeners()
    pods.has_synced = True  # the new life's list
    shared._wake_listeners()
    assert woken == ["controller/a", "controller/b", "controller/c"]


def test_a_listener_registered_on_a_filled_cache_gets_an_add_of_each_object():
    p = Probe("probe", ["apiserver-0"])
    factory = SharedInformerFactory(p.client)
    inf = factory.informer_for("probe", "pods")
    p.informers.append(inf)
    c = ClientCluster(1, probes=[p])
    for name in ("b", "a"):
        c.act(p, lambda now, out, name=name: p.client.create(now, out, "pods", pod(name), on_done=p.record))
    c.run()
    added: list = []
    inf.add_listener(Listener("late", lambda now, obj, out: added.append(obj.metadata.name), None, None))
    factory.replay("late", 0, Out())
    assert added == ["a", "b"]


def test_a_crash_forgets_the_shared_caches_and_the_restarted_process_lists_again():
    c = Cluster(ClusterConfig(nodes=1))
    c.run(20_000)
    informers = c.loop.components[SHARED_INFORMERS]
    nodes = informers.factory.informers[("nodes", "", "", "")]
    owners = [listener.owner for listener in nodes.listeners]
    assert nodes.has_synced and len(nodes.indexer) == 1 and len(owners) >= 4
    c.crash(KCM)
    assert not nodes.has_synced and len(nodes.indexer) == 0 and nodes.watch_stream is None
    assert [listener.owner for listener in nodes.listeners] == owners  # every controller registered anew
    _restart_and_lead(c)
    c.run(c.now + 5_000)
    assert nodes.has_synced and nodes.lists == 1 and len(nodes.indexer) == 1  # a new life, one list


def test_controllers_wait_for_the_shared_caches_they_use_before_working():
    # without leader election the restarted process starts its controllers and informers at once, where this
    # test looks (with it, they start once the new process leads: _restart_and_lead)
    c = Cluster(ClusterConfig(nodes=1, leader_elect=False))
    c.run(20_000)
    c.crash(KCM)
    c.restart(KCM)
    replicaset = c.loop.components["controller/replicaset"]
    replicaset.queue.add("default/anything")
    assert replicaset.informers and not replicaset.synced() and not replicaset.has_work()
    c.run(c.now + 5_000)
    assert replicaset.synced()


def test_the_shared_informers_lists_take_tokens_from_their_own_client_s_bucket():
    c = Cluster(ClusterConfig(nodes=1, leader_elect=False))  # lists sent as the restart happens (see above)
    c.run(20_000)
    informers = c.loop.components[SHARED_INFORMERS]
    assert informers.client.rate_limit == RateLimit(qps=20, burst=30)  # --kube-api-qps, --kube-api-burst
    informers.client.rate_limit = RateLimit(qps=1, burst=2)  # the next life's bucket: two lists at once
    c.crash(KCM)
    c.restart(KCM)
    sent_now = [m for a in c.config.apiserver_names() for m in c.network.in_flight(SHARED_INFORMERS, a)
                if isinstance(m.payload, Request) and m.payload.verb == "list"]
    assert len(informers.informers) > 2 and len(sent_now) == 2  # the others wait for their tokens
    c.run(c.now + len(informers.informers) * 1_000)  # a token a second: every list sent by then
    assert all(inf.has_synced for inf in informers.informers)
