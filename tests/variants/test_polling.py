"""The `polling` variant: informers list on a period and diff instead of watching; and the cost meter."""

from __future__ import annotations

import json

import attrs

from kmodel.apiserver.resources import RESOURCES
from kmodel.apiserver.wire import ListResult, Request, Response, WatchEvent
from kmodel.client import DeletedFinalStateUnknown
from kmodel.client.informer import POLL_PERIOD_MS
from kmodel.cluster import Cluster as FullCluster
from kmodel.cluster import ClusterConfig
from kmodel.network import Message
from kmodel.objects import ObjectMeta, frozen_map
from kmodel.objects.codec import dump
from kmodel.variants import DEFAULT, POLLING, variant
from kmodel.principles import costs
from kmodel.principles.costs import Meter, Sizer, percentile, request_path
from tests.client.harness import Cluster, Probe, pod


def test_the_variant_is_registered_where_it_switches():
    v = variant(POLLING)
    assert v.where == "kmodel/client/informer.py"


# -- the informer -------------------------------------------------------------------------------------------

def polling_probe() -> tuple[Probe, Probe, list]:
    """A writer, and a reader whose pods informer polls; returns (writer, reader, the events it raised)."""
    writer = Probe("writer", ["apiserver-0"])
    reader = Probe("reader", ["apiserver-0"])
    reader.client.variant = POLLING
    events: list = []
    reader.informer("pods",
                    on_add=lambda now, obj, out: events.append(("add", obj.metadata.name)),
                    on_update=lambda now, old, new, out: events.append(
                        ("update", new.metadata.name, old.metadata.labels.get("v"), new.metadata.labels.get("v"))),
                    on_delete=lambda now, obj, out: events.append(
                        ("delete", obj.key if isinstance(obj, DeletedFinalStateUnknown) else obj.metadata.name)))
    return writer, reader, events


def write(cluster: Cluster, probe: Probe, fn) -> None:
    cluster.act(probe, fn)


def test_a_polling_informer_diffs_successive_lists_and_never_watches():
    writer, reader, events = polling_probe()
    c = Cluster(1, probes=[writer, reader])
    sent: list[Request] = []
    c.loop.set_delivery_tap(lambda m: sent.append(m.payload) if m.src == "reader" else None)
    inf = reader.informers[0]
    c.run(1)
    assert inf.has_synced and events == [] and inf.poll_period_ms == POLL_PERIOD_MS

    # Between two polls: a and b created, and d created then deleted (a poller never sees d).
    write(c, writer, lambda now, out: writer.client.create(now, out, "pods", pod("a", labels={"v": "1"})))
    write(c, writer, lambda now, out: writer.client.create(now, out, "pods", pod("b")))
    write(c, writer, lambda now, out: writer.client.create(now, out, "pods", pod("d")))
    c.run(c.loop.now + 1)
    write(c, writer, lambda now, out: writer.client.delete(now, out, "pods", "d", namespace="default"))
    c.run(c.loop.now + 1)
    assert events == []  # nothing until the next poll
    c.run(c.loop.now + POLL_PERIOD_MS)
    assert events == [("add", "a"), ("add", "b")]

    # A poll that finds nothing changed raises nothing.
    c.run(c.loop.now + POLL_PERIOD_MS)
    assert events == [("add", "a"), ("add", "b")]

    # a updated twice (the poller sees only the last state), b deleted, c created.
    a = inf.get("default", "a")
    for v in ("2", "3"):  # unconditional updates (no resourceVersion)
        new = attrs.evolve(a, metadata=attrs.evolve(a.metadata, labels=frozen_map({"v": v}), resource_version=""))
        write(c, writer, lambda now, out, new=new: writer.client.update(now, out, "pods", new))
        c.run(c.loop.now + 1)
    write(c, writer, lambda now, out: writer.client.delete(now, out, "pods", "b", namespace="default"))
    write(c, writer, lambda now, out: writer.client.create(now, out, "pods", pod("c")))
    c.run(c.loop.now + POLL_PERIOD_MS)
    assert events[2:] == [("delete", "default/b"), ("update", "a", "1", "3"), ("add", "c")]
    assert sorted(inf.indexer.items) == ["default/a", "default/c"]

    verbs = [r.verb for r in sent if isinstance(r, Request)]
    assert "watch" not in verbs and reader.client.open_watches == []
    # one list at start, then one per period: the runs reached 3 periods and 5 ms
    assert verbs.count("list") == 4 and inf.lists == 4


def test_the_default_informer_watches_and_does_not_poll():
    reader = Probe("reader", ["apiserver-0"])
    inf = reader.informer("pods")
    c = Cluster(1, probes=[reader])
    c.run(3 * POLL_PERIOD_MS)
    assert reader.client.variant == DEFAULT and inf.poll_period_ms is None
    assert inf.lists == 1 and len(reader.client.open_watches) == 1


def test_a_poll_scheduled_before_a_crash_is_dropped():
    writer, reader, events = polling_probe()
    c = Cluster(1, probes=[writer, reader])
    c.run(1)
    inf = reader.informers[0]
    inf.reset()  # the old poll is still on the client's timer (the harness's crash resets the client too)
    c.run(c.loop.now + 2 * POLL_PERIOD_MS)
    assert inf.lists == 0 and not inf.has_synced


# -- a whole cluster ----------------------------------------------------------------------------------------

def test_a_small_cluster_under_polling_converges_and_opens_no_watch():
    from kmodel.principles.costs import deployment

    c = FullCluster(ClusterConfig(nodes=2, variant=POLLING))
    watches = []
    c.loop.set_delivery_tap(lambda m: watches.append(m) if getattr(m.payload, "verb", "") == "watch" else None)
    c.run(20_000)
    c.apply([deployment("web", 2)])
    # deployment -> replicaset -> scheduler -> kubelet: at most four polls, then a status write
    c.run(c.now + 5 * POLL_PERIOD_MS)
    running = [p for p in c.objects("pods", "default") if p.status.phase == "Running"]
    assert len(running) == 2
    assert watches == []
    assert all(not comp.client.open_watches for comp in c.components if hasattr(comp, "client"))


# -- the cost meter -----------------------------------------------------------------------------------------

class FakeLoop:
    now = 0


def compact(obj) -> int:
    return len(json.dumps(dump(obj), separators=(",", ":")))


def test_the_meter_counts_requests_bytes_and_delays_of_a_hand_made_exchange():
    loop = FakeLoop()
    m = Meter(loop, ["apiserver-0"])
    p = pod("p1")
    created = p.__class__(metadata=ObjectMeta(name="p1", namespace="default", uid="u1", resource_version="5"),
                          spec=p.spec)

    def deliver(src, dst, payload, stream=None, at=None):
        if at is not None:
            loop.now = at
        m.tap(Message(0, src, dst, payload, stream))

    create = Request(1, "create", "pods", "default", body=p)
    deliver("controller/replicaset", "apiserver-0", create, at=1_000)
    deliver("apiserver-0", "controller/replicaset", Response(1, 201, created))
    bind = Request(7, "create", "pods", "default", "p1", "binding")
    deliver("scheduler", "apiserver-0", bind, at=4_000)
    deliver("apiserver-0", "scheduler", Response(7, 201, None))
    listing = Request(2, "list", "pods", field_selector="spec.nodeName=n1", resource_version="5")
    deliver("kubelet/n1", "apiserver-0", listing, at=6_000)
    deliver("apiserver-0", "kubelet/n1", Response(2, 200, ListResult((created,), "5")))
    status = Request(3, "update", "pods", "default", "p1", "status", body=created)
    deliver("kubelet/n1", "apiserver-0", status, at=6_500)
    deliver("apiserver-0", "kubelet/n1", Response(3, 200, created))
    deliver("apiserver-0", "proxy/n1", WatchEvent("ADDED", created), stream="proxy/n1/watch-1")
    # between a replica and etcd: not API traffic
    deliver("apiserver-0", "etcd", Request(9, "list", "pods"))
    deliver("etcd", "apiserver-0", Response(9, 200, ListResult((created,), "5")))

    assert m.requests == {"create": 2, "list": 1, "update": 1}
    assert m.watch_events == 1
    size = compact(created)
    assert Sizer().obj(created) == size
    assert request_path(listing) == "/api/v1/pods?fieldSelector=spec.nodeName=n1&resourceVersion=5"
    assert m.bytes_to == (len("POST /api/v1/namespaces/default/pods") + compact(p)
                          + len("POST /api/v1/namespaces/default/pods/p1/binding")
                          + len("GET /api/v1/pods?fieldSelector=spec.nodeName=n1&resourceVersion=5")
                          + len("PUT /api/v1/namespaces/default/pods/p1/status") + size)
    envelope = len('{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"5"},"items":[]}')
    assert m.bytes_from == size + 0 + (envelope + size) + size + len('{"type":"ADDED","object":}') + size
    assert m.delays() == ([3_000], [2_500])


def test_sizes_match_the_compact_json_of_every_object_of_a_cluster():
    c = FullCluster(ClusterConfig(nodes=2))
    c.apply([costs.deployment("web", 2)])
    c.run(15_000)
    sizer = Sizer()
    objects = [o for res in sorted(RESOURCES) if res != "bindings" for o in c.objects(res)]
    assert {type(o).__name__ for o in objects} >= {"Pod", "Node", "Lease", "Deployment", "ReplicaSet", "Event"}
    assert [sizer.obj(o) for o in objects] == [compact(o) for o in objects]


def test_percentile_is_nearest_rank():
    assert percentile([], 50) == 0
    assert percentile([5, 1, 3], 50) == 3
    assert percentile(list(range(1, 101)), 99) == 99
    assert percentile([7], 99) == 7


def test_plot_png_says_why_it_cannot_draw_without_matplotlib(monkeypatch, tmp_path, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    assert costs.plot_png([], str(tmp_path / "x.png")) is False
    assert "matplotlib" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_the_table_shows_polling_against_watch():
    rows = [costs.CostRow(mode=mode, variant=v, nodes=10, seconds=60, deployments=1,
                          requests=(("list", 600 if mode == "polling" else 0), ("update", 120)),
                          watch_events=0 if mode == "polling" else 300, bytes_to=60_000, bytes_from=120_000,
                          schedule_ms=(0, 0) if mode == "watch" else (5_000, 9_000), start_ms=(0, 0),
                          pods=4, scheduled=4, started=4, boot_ms=1_000, loop_events=1, wall_s=0.1, cpu_s=0.1)
            for mode, v in costs.MODES]
    table = costs.table_markdown(rows)
    assert "| 10 | polling | 12.0 |" in table and "6.0, 1.0" in table
    # (drawing is left to benchmarks/bench_polling.py: importing matplotlib alone takes seconds)


# -- what polling cannot see --------------------------------------------------------------------------------

def cidrs_leaked_after_a_quick_removal(variant_name: str) -> list[str]:
    """A node joins, gets its podCIDR, and is removed at once; what no-cidr-leak says 30 s later."""
    from kmodel.invariants.liveness import no_cidr_leak

    c = FullCluster(ClusterConfig(nodes=1, components=("nodeipam", "kubelet"), variant=variant_name))
    c.run(15_000)
    node = c.add_node()
    for _ in range(100):
        obj = c.get("nodes", "", node)
        if obj is not None and obj.spec.pod_cidr:
            break
        c.run_for(200)
    assert obj is not None and obj.spec.pod_cidr
    c.remove_node(node)
    c.run_for(3 * POLL_PERIOD_MS)
    assert c.get("nodes", "", node) is None
    return list(no_cidr_leak(c, {}))


def test_polling_hides_the_state_nodeipams_delete_handler_releases():
    # nodeipam releases the podCIDRs of the last state its informer saw of a deleted Node (upstream's
    # DeleteFunc). A watch delivers the state with the podCIDR before the deletion; a poll that comes after
    # both only finds the node gone, and the last state it saw has no podCIDR: the block leaks.
    assert cidrs_leaked_after_a_quick_removal(DEFAULT) == []
    assert cidrs_leaked_after_a_quick_removal(POLLING) == ["node IPAM holds 10.244.1.0/24, which no node has"]
