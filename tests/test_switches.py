"""Switches (variant, fixes) reach every component's client at construction, as one value."""

from __future__ import annotations

from kmodel.client import ApiClient
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.components import ClusterContext, switches_of
from kmodel.fixes import REFLECTOR_CONSISTENT_FIRST_LIST
from kmodel.switches import DEFAULT_SWITCHES, Switches
from kmodel.variants import DEFAULT, PESSIMISTIC_LOCKING, POLLING


def test_a_client_reads_its_switches_when_it_is_built():
    plain = ApiClient("probe", ["apiserver-0"], token="sa-x-token")
    assert (plain.variant, plain.consistent_first_list, plain.takes_locks) == (DEFAULT, False, False)
    switched = ApiClient("probe", ["apiserver-0"], token="sa-x-token", switches=Switches(
        PESSIMISTIC_LOCKING, frozenset({REFLECTOR_CONSISTENT_FIRST_LIST}), frozenset({"sa-x-token"})))
    assert (switched.variant, switched.consistent_first_list, switched.takes_locks) == (PESSIMISTIC_LOCKING, True, True)
    assert DEFAULT_SWITCHES == Switches() and not DEFAULT_SWITCHES.on(REFLECTOR_CONSISTENT_FIRST_LIST)


def test_every_component_of_a_cluster_is_built_with_the_cluster_switches():
    config = ClusterConfig(nodes=1, controller_managers=2, variant=POLLING, fixes=(REFLECTOR_CONSISTENT_FIRST_LIST,))
    switches = ClusterContext(config, ("apiserver-0",)).switches
    assert switches == switches_of(config) and switches.variant == POLLING
    assert "sa-replicaset-controller-token" in switches.lock_holders
    cluster = Cluster(config)
    clients = {c.name: c.client for c in cluster.components if getattr(c, "client", None) is not None}
    assert {"controller/replicaset", "controller-2/shared-informers", "kube-controller-manager-2", "scheduler",
            "kubelet/node-1", "proxy/node-1"} <= set(clients)
    assert {(n, c.variant, c.consistent_first_list) for n, c in clients.items()} == {
        (n, POLLING, True) for n in clients}


def test_a_default_cluster_switches_nothing_on():
    cluster = Cluster(ClusterConfig(nodes=1))
    clients = [c.client for c in cluster.components if getattr(c, "client", None) is not None]
    assert clients and all(c.variant == DEFAULT and not c.consistent_first_list for c in clients)
