"""The kubelet as a component in a small cluster: pods run with IPs from the podCIDR, probes, leases, static
pods and mirror pods, termination, crash/restart adoption and partitions."""

from __future__ import annotations

import attrs

from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import Delete
from kmodel.kubelet.runtime import ContainerState
from kmodel.objects import ObjectMeta, Pod
from kmodel.objects.core import Container, ExecAction, PodSpec, Probe

NODE = "node-1"
NODE_IP = "172.18.0.2"
CIDR = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}, "spec": {"podCIDR": "10.244.1.0/24"}}


def pod(name: str, *, node: str = NODE, host_network: bool = False, liveness: bool = False,
        readiness: bool = False) -> Pod:
    probe = Probe(exec=ExecAction(command=("true",)), period_seconds=10, failure_threshold=3)
    c = Container(name="app", image="nginx", liveness_probe=probe if liveness else None,
                  readiness_probe=probe if readiness else None)
    return Pod(metadata=ObjectMeta(name=name, namespace="default"),
               spec=PodSpec(node_name=node, host_network=host_network, containers=(c,)))


def cluster(*, cidr: bool = True, **kw) -> Cluster:
    c = Cluster(ClusterConfig(nodes=1, components=("kubelet",), **kw))
    c.run(500)
    if cidr:
        c.apply([CIDR])
        c.run_for(500)
    return c


def kubelet(c: Cluster):
    return next(x for x in c.components if x.name == f"kubelet/{NODE}")


def get(c: Cluster, name: str, namespace: str = "default"):
    return c.get("pods", namespace, name)


def cond(p: Pod, typ: str) -> str:
    return next(x.status for x in p.status.conditions if x.type == typ)


def test_pods_run_with_ips_from_the_pod_cidr_starting_at_2():
    c = cluster()
    c.apply([pod("a"), pod("b"), pod("c")])
    c.run_for(3000)
    ips = []
    for name in "abc":
        p = get(c, name)
        assert p.status.phase == "Running"
        assert p.status.host_ip == NODE_IP
        assert [cond(p, t) for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")] == ["True"] * 4
        assert p.status.container_statuses[0].state.running is not None
        assert p.status.start_time is not None
        ips.append(p.status.pod_ip)
    assert ips == ["10.244.1.2", "10.244.1.3", "10.244.1.4"]
    assert len(kubelet(c).runtime.sandboxes) == 3


def test_pods_wait_for_the_pod_cidr_but_host_network_pods_do_not():
    c = cluster(cidr=False)
    c.apply([pod("net"), pod("host", host_network=True)])
    c.run_for(15_000)
    waiting, host = get(c, "net"), get(c, "host")
    assert host.status.phase == "Running" and host.status.pod_ip == NODE_IP
    assert waiting.status.phase == "Pending" and waiting.status.pod_ip == ""
    assert waiting.status.container_statuses[0].state.waiting.reason == "ContainerCreating"
    assert any(e.reason == "NetworkNotReady" and e.message.startswith("network is not ready")
               for e in c.objects("events", "default"))
    c.apply([CIDR])
    c.run_for(12_000)  # the failed sync is retried after the 10 s backoff period
    p = get(c, "net")
    assert p.status.phase == "Running" and p.status.pod_ip == "10.244.1.2"


def test_deletion_stops_the_pod_releases_its_ip_and_deletes_it_with_grace_0():
    c = cluster()
    c.apply([pod("a"), pod("b")])
    c.run_for(2000)
    c.submit(Delete("pods", "default", "a"))
    c.run_for(2000)
    assert get(c, "a") is None
    k = kubelet(c)
    assert "10.244.1.2" not in k.runtime.cni.reserved()
    assert all(x.labels["io.kubernetes.pod.name"] != "a" for x in k.runtime.sandboxes.values())
    # the kubelet wrote the final status, then made the final delete itself
    assert any(r.verb == "delete" and r.name == "a" and r.user == "system:node:node-1" and r.code == 200
               for r in c.audit.records)
    c.apply([pod("c")])
    c.run_for(2000)
    assert get(c, "c").status.pod_ip == "10.244.1.4"  # host-local: round robin, .2 only after a wrap


def test_liveness_failure_restarts_the_container_and_bumps_restart_count():
    c = cluster()
    c.apply([pod("live", liveness=True)])
    c.run_for(2000)
    k = kubelet(c)
    first = k.container_id("default", "live", "app")
    k.fail_probe("default", "live", "app", "liveness")
    c.run_for(35_000)  # three failed probes 10 s apart
    p = get(c, "live")
    cs = p.status.container_statuses[0]
    assert cs.restart_count == 1
    assert cs.state.running is not None
    assert cs.last_state.terminated is not None and cs.last_state.terminated.exit_code == 137
    assert k.container_id("default", "live", "app") != first
    assert k.runtime.containers[first].state == ContainerState.CONTAINER_EXITED
    assert p.status.pod_ip == "10.244.1.2"  # same sandbox, same IP


def test_readiness_failure_flips_ready_and_back():
    c = cluster()
    c.apply([pod("r", readiness=True)])
    c.run_for(2000)
    assert cond(get(c, "r"), "Ready") == "True"
    k = kubelet(c)
    k.fail_probe("default", "r", "app", "readiness")
    c.run_for(35_000)
    p = get(c, "r")
    assert cond(p, "Ready") == "False" and cond(p, "ContainersReady") == "False"
    assert next(x for x in p.status.conditions if x.type == "Ready").message == "containers with unready status: [app]"
    assert p.status.container_statuses[0].restart_count == 0
    k.fail_probe("default", "r", "app", "readiness", healthy=True)
    c.run_for(12_000)
    assert cond(get(c, "r"), "Ready") == "True"


def test_crashed_container_restarts_with_backoff():
    c = cluster()
    c.apply([pod("crash")])
    c.run_for(2000)
    k = kubelet(c)
    k.fail_container("default", "crash", "app", 1, now=c.now)
    c.loop.notify_work(k.name)
    c.run_for(1000)
    assert get(c, "crash").status.container_statuses[0].restart_count == 1  # the first restart is immediate
    k.fail_container("default", "crash", "app", 1, now=c.now)
    c.loop.notify_work(k.name)
    c.run_for(5000)
    cs = get(c, "crash").status.container_statuses[0]
    assert cs.state.waiting is not None and cs.state.waiting.reason == "CrashLoopBackOff"
    assert cs.state.waiting.message.startswith("back-off 10s restarting failed container=app pod=crash_default(")
    c.run_for(6000)
    cs = get(c, "crash").status.container_statuses[0]
    assert cs.restart_count == 2 and cs.state.running is not None


def ready_condition(c: Cluster):
    return next(x for x in c.get("nodes", "", NODE).status.conditions if x.type == "Ready")


def test_the_next_node_status_sync_starts_10_s_after_the_last_one_ended():
    # kubelet.Run: wait.JitterUntil(syncNodeStatus, nodeStatusUpdateFrequency, 0.04, sliding=true). A sync whose
    # write is answered 3 s late (the 5-minute report at 310 s) puts the next one at 323 s, not 320 s.
    c = cluster()
    k = kubelet(c)
    starts = []
    post = k._post_node_status

    def recorded(now, out, try_number=0):
        if try_number == 0:
            starts.append(now)
        post(now, out, try_number)

    k._post_node_status = recorded
    c.run_for(309_000 - c.now)
    assert starts[-2:] == [290_000, 300_000]  # the unchanged status is not written: each sync ends at once
    c.network.hold_link("apiserver-0", k.name, 313_000)
    c.run_for(40_000)
    assert starts[-4:] == [310_000, 323_000, 333_000, 343_000]
    assert ready_condition(c).last_heartbeat_time == 310_000


def test_lease_renewed_every_10s_and_an_unchanged_node_status_written_every_5_min():
    c = cluster()
    lease = c.get("leases", "kube-node-lease", NODE)
    assert lease.spec.holder_identity == NODE and lease.spec.lease_duration_seconds == 40
    assert lease.metadata.owner_references[0].kind == "Node"
    renewals = []
    for _ in range(4):
        c.run_for(10_000)
        renewals.append(c.get("leases", "kube-node-lease", NODE).spec.renew_time)
    assert [b - a for a, b in zip(renewals, renewals[1:])] == [10_000] * 3
    # The status is recomputed every 10 s but written only when it changed (the podCIDR arriving was the last
    # change: it made the node Ready, written at once by the fast status update when the podCIDR reached the
    # kubelet at 500 ms) or 5 min after the last write (nodeStatusReportFrequency), at the first sync after it.
    heartbeats = []
    for _ in range(34):
        heartbeats.append(ready_condition(c).last_heartbeat_time)
        c.run_for(10_000)
    written = sorted(set(heartbeats))
    assert written == [500, 310_000]
    node = c.get("nodes", "", NODE)
    ready = ready_condition(c)
    assert (ready.status, ready.reason, ready.message) == ("True", "KubeletReady", "kubelet is posting ready status")
    assert ready.last_transition_time == 500  # registered NotReady (no podCIDR yet), Ready once it came
    assert node.metadata.labels["kubernetes.io/hostname"] == NODE
    assert [(a.type, a.address) for a in node.status.addresses] == [("InternalIP", NODE_IP), ("Hostname", NODE)]
    assert str(node.status.allocatable["pods"]) == "110"


def test_a_node_status_that_differs_from_the_kubelets_is_written_at_the_next_sync():
    """The node lifecycle controller marks the silent node Ready=Unknown; once the kubelet's informer shows it
    that, its next 10-s sync writes Ready=True (a change, so it does not wait for the 5-min report)."""
    c = Cluster(ClusterConfig(nodes=1, components=("kubelet", "nodeipam", "nodelifecycle")))
    c.run(30_000)
    c.partition(f"kubelet/{NODE}")
    c.run_for(60_000)
    assert ready_condition(c).status == "Unknown"
    c.heal(f"kubelet/{NODE}")
    healed = c.now
    c.run_for(12_000)
    ready = ready_condition(c)
    assert ready.status == "True" and healed < ready.last_transition_time <= healed + 12_000


def test_static_pods_run_without_api_and_get_mirror_pods_when_it_is_back():
    manifest = Pod(metadata=ObjectMeta(name="etcd", namespace="kube-system"),
                   spec=PodSpec(host_network=True, containers=(Container(name="etcd", image="etcd"),)))
    c = Cluster(ClusterConfig(nodes=1, components=("kubelet",), static_pods=((NODE, (manifest,)),)))
    c.crash("apiserver-0")
    c.run(20_000)
    k = kubelet(c)
    assert [x.labels["io.kubernetes.pod.name"] for x in k.runtime.running()] == ["etcd-node-1"]
    assert c.get("pods", "kube-system", "etcd-node-1") is None
    c.restart("apiserver-0")
    c.run(80_000)  # requests sent while it was down time out (60 s) before the kubelet tries again
    mirror = c.get("pods", "kube-system", "etcd-node-1")
    assert mirror is not None
    assert mirror.metadata.annotations["kubernetes.io/config.mirror"] == \
        mirror.metadata.annotations["kubernetes.io/config.hash"]
    owner = mirror.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.controller) == ("Node", NODE, True)
    assert mirror.status.phase == "Running" and mirror.status.pod_ip == NODE_IP
    # deleted by someone: the kubelet recreates it, and the static pod never stopped
    c.submit(Delete("pods", "kube-system", "etcd-node-1"))
    c.run_for(70_000)
    again = c.get("pods", "kube-system", "etcd-node-1")
    assert again is not None and again.metadata.uid != mirror.metadata.uid
    assert len(k.runtime.running()) == 1 and len(k.runtime.containers) == 1


def test_kubelet_restart_adopts_running_containers_without_a_new_ip():
    c = cluster()
    c.apply([pod("a"), pod("b")])
    c.run_for(2000)
    k = kubelet(c)
    before = dict(k.runtime.sandboxes), dict(k.runtime.containers)
    ips = {n: get(c, n).status.pod_ip for n in "ab"}
    c.crash(f"kubelet/{NODE}")
    c.run_for(5000)
    c.restart(f"kubelet/{NODE}")
    c.run_for(5000)
    c.apply([pod("d")])
    c.run_for(3000)
    assert {n: get(c, n).status.pod_ip for n in "ab"} == ips
    assert {sid: k.runtime.sandboxes[sid] for sid in before[0]} == before[0]  # same sandboxes, untouched
    assert all(k.runtime.containers[cid] == cont for cid, cont in before[1].items())
    assert get(c, "d").status.pod_ip == "10.244.1.4"  # the reservations survived: no IP handed out twice
    assert len(k.runtime.sandboxes) == 3


def test_partitioned_node_keeps_running_a_deleted_pod_until_it_hears_of_it():
    c = cluster()
    c.apply([pod("a")])
    c.run_for(2000)
    k = kubelet(c)
    c.partition(NODE)
    c.submit(Delete("pods", "default", "a"))
    c.run_for(60_000)
    assert get(c, "a").metadata.deletion_timestamp is not None
    assert len(k.runtime.running()) == 1  # cut off: still running
    c.heal(NODE)
    c.run_for(60_000)
    assert k.runtime.running() == []
    assert get(c, "a") is None
    assert k.runtime.cni.reserved() == {}


def test_an_api_pod_named_as_a_static_pod_is_not_taken_for_its_mirror():
    """The pod manager keeps a pod without the mirror annotation apart from the static pod: the kubelet neither
    deletes it nor replaces it (the mirror's create meets AlreadyExists, which syncPod ignores); once it is gone,
    the mirror is made."""
    manifest = Pod(metadata=ObjectMeta(name="etcd", namespace="kube-system"),
                   spec=PodSpec(host_network=True, containers=(Container(name="etcd", image="etcd"),)))
    c = Cluster(ClusterConfig(nodes=1, components=("kubelet",), static_pods=((NODE, (manifest,)),)))
    c.crash("apiserver-0")
    c.run(20_000)
    c.restart("apiserver-0")
    own = Pod(metadata=ObjectMeta(name="etcd-node-1", namespace="kube-system"),
              spec=PodSpec(node_name=NODE, containers=(Container(name="app", image="nginx"),)))
    c.apply([own])
    c.run(100_000)
    kept = c.get("pods", "kube-system", "etcd-node-1")
    assert kept is not None and kept.metadata.deletion_timestamp is None
    assert "kubernetes.io/config.mirror" not in kept.metadata.annotations
    c.submit(Delete("pods", "kube-system", "etcd-node-1"))
    c.run_for(70_000)
    mirror = c.get("pods", "kube-system", "etcd-node-1")
    assert mirror is not None and mirror.metadata.uid != kept.metadata.uid
    assert "kubernetes.io/config.mirror" in mirror.metadata.annotations
