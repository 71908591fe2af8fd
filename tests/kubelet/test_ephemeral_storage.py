"""The node's ephemeral storage: the kubelet reports its root filesystem as the Node's ephemeral-storage capacity
and allocatable (nodestatus/setters.go MachineInfo, with LocalStorageCapacityIsolation, on by default since
1.25), so a pod requesting ephemeral storage is fitted against it as against cpu and memory: it runs when the
node holds the request beside what its pods requested, and is refused OutOfephemeral-storage when not."""

from __future__ import annotations

from kmodel.kubelet.admission import admit
from kmodel.kubelet.config import KubeletConfig
from kmodel.kubelet.node_status import initial_node
from kmodel.objects import ObjectMeta, Pod
from kmodel.objects.core import Container, PodSpec, ResourceRequirements
from kmodel.objects.quantity import parse_quantity
from kmodel.scheduler.framework import NodeInfo
from kmodel.scheduler.plugins import noderesources

CONFIG = KubeletConfig(node="node-1", node_ip="172.18.0.2", ephemeral_storage="10Gi")


def scratch(name: str, size: str) -> Pod:
    """A pod whose container asks for `size` of ephemeral storage (its scratch space and logs)."""
    c = Container(name="app", image="nginx",
                  resources=ResourceRequirements(requests={"ephemeral-storage": parse_quantity(size)}))
    return Pod(metadata=ObjectMeta(name=name, namespace="default", uid=f"uid-{name}"),
               spec=PodSpec(node_name="node-1", containers=(c,)))


def test_the_node_reports_its_ephemeral_storage_as_capacity_and_allocatable():
    node = initial_node(CONFIG, 0)
    assert str(node.status.capacity["ephemeral-storage"]) == "10Gi"
    assert str(node.status.allocatable["ephemeral-storage"]) == "10Gi"
    assert "ephemeral-storage" in initial_node(KubeletConfig(node="n", node_ip="172.18.0.3"), 0).status.allocatable


def test_a_pod_asking_for_ephemeral_storage_fits_while_the_node_holds_it():
    node = initial_node(CONFIG, 0)
    assert admit(scratch("a", "6Gi"), [], node) is None
    assert noderesources.filter(scratch("a", "6Gi"), NodeInfo(node, [])) is None
    refused = admit(scratch("b", "6Gi"), [scratch("a", "6Gi")], node)
    assert (refused.reason, refused.message) == (
        "OutOfephemeral-storage", "Node didn't have enough resource: ephemeral-storage, requested: 6442450944, "
                                  "used: 6442450944, capacity: 10737418240")
    status = noderesources.filter(scratch("b", "6Gi"), NodeInfo(node, [scratch("a", "6Gi")]))
    assert status is not None and status.reasons == ("Insufficient ephemeral-storage",)
