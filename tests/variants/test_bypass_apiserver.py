"""Variant bypass-apiserver: an operator's etcdctl writes a pod straight into etcd."""

from __future__ import annotations

from kmodel.apiserver.etcd_endpoint import ETCD, EtcdCall, EtcdReply, EtcdServer
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.component import Out, Send, SetTimer
from kmodel.network import Message, Network
from kmodel.store import Store
from kmodel.variants import BYPASS_APISERVER, variant
from kmodel.etcdctl import PERIOD_MS, POD_NAME, TICK_TIMER, Etcdctl, hand_written_pod, pod_key
from kmodel.invariants.registry import REGISTRY

S = 1000


def test_the_variant_is_registered_where_the_switch_is():
    v = variant(BYPASS_APISERVER)
    assert v.where == "kmodel/etcdctl.py"
    assert v.expect == ("api-single-contract", "admission-enforced")


def test_etcdctl_exists_only_under_the_variant():
    assert "etcdctl" not in Cluster(ClusterConfig(nodes=1)).loop.components
    cluster = Cluster(ClusterConfig(nodes=1, variant=BYPASS_APISERVER))
    assert isinstance(cluster.loop.components["etcdctl"], Etcdctl)
    assert cluster.components[-1].name == "etcdctl"


def test_the_job_gets_the_key_on_a_timer_and_puts_a_hand_written_pod_only_when_it_is_absent():
    job = Etcdctl("node-1")
    out = Out()
    job.start(0, out)  # runs at once, then on the timer
    assert out.effects == [SetTimer(TICK_TIMER, PERIOD_MS), Send(ETCD, EtcdCall(1, "range", (pod_key(),)))]
    store = Store()
    out = Out()
    job.on_message(0, Message(1, ETCD, "etcdctl", EtcdReply(1, store.range(pod_key()))), out)
    [put] = out.effects
    assert put.dst == ETCD and put.payload.method == "put" and put.payload.args[0] == pod_key()
    pod = put.payload.args[1]
    assert (pod.metadata.name, pod.spec.node_name) == (POD_NAME, "node-1")
    # hand-written: nothing the API server would have added
    assert pod.metadata.uid == "" and pod.metadata.creation_timestamp is None and pod.spec.tolerations == ()
    store.put(pod_key(), pod)
    out = Out()
    job.on_timer(PERIOD_MS, TICK_TIMER, out)
    assert out.effects == [SetTimer(TICK_TIMER, PERIOD_MS), Send(ETCD, EtcdCall(3, "range", (pod_key(),)))]
    out = Out()
    job.on_message(PERIOD_MS, Message(2, ETCD, "etcdctl", EtcdReply(3, store.range(pod_key()))), out)
    assert out.effects == [] and job.puts == 1


def test_etcd_serves_a_call_from_anyone_and_no_api_server_handle_records_it():
    store, network = Store(), Network()
    for name in (ETCD, "etcdctl"):
        network.add_endpoint(name)
    server = EtcdServer(store, network)
    handle = server.handle_for("apiserver-0")
    out = Out()
    server.on_message(0, Message(1, "etcdctl", ETCD, EtcdCall(7, "put", (pod_key(), hand_written_pod("n")))), out)
    [reply] = out.effects
    assert reply.dst == "etcdctl" and reply.payload.id == 7 and reply.payload.error is None
    assert store.range(pod_key()).kvs[0].value == hand_written_pod("n")
    assert handle.written == []
    out = Out()
    server.on_message(0, Message(2, "etcdctl", ETCD, EtcdCall(8, "range", ("",))), out)
    assert out.effects[0].payload.error is not None  # etcd's own refusal (empty key), answered


def test_both_expected_invariants_catch_the_put_and_the_default_shows_neither():
    for name, expect_failure in (("default", False), (BYPASS_APISERVER, True)):
        cluster = Cluster(ClusterConfig(nodes=2, variant=name))
        cluster.run(1 * S)
        found = {inv: list(REGISTRY[inv].check(cluster, {})) for inv in ("api-single-contract", "admission-enforced")}
        if not expect_failure:
            assert found == {"api-single-contract": [], "admission-enforced": []}
            continue
        contract = found["api-single-contract"]
        assert any("etcdctl sent" in m and "only API servers talk to etcd" in m for m in contract)
        assert any(f"put {pod_key()}) was written straight into etcd" in m for m in contract)
        assert any("has no uid" in m for m in found["admission-enforced"])
        assert any("does not tolerate" in m for m in found["admission-enforced"])
        pod = cluster.get("pods", "default", POD_NAME)
        assert pod.spec.node_name == "node-1" and pod.metadata.uid == ""
