"""The kubelet's pod admission: a pod that does not fit beside what the node runs never runs, is reported
Failed with upstream's reason and message, and, after a restart, the older of two conflicting pods keeps the
node."""

from __future__ import annotations

import attrs

from kmodel.cluster.kubectl import Delete
from kmodel.kubelet.admission import admission_order, admit
from kmodel.kubelet.node_status import initial_node
from kmodel.kubelet.config import KubeletConfig
from kmodel.objects import ObjectMeta, Pod, Taint
from kmodel.objects.core import Container, ContainerPort, PodSpec, ResourceRequirements, Toleration
from kmodel.objects.quantity import parse_quantity
from tests.kubelet.test_kubelet_component import NODE, cluster, get, kubelet

CONFIG = KubeletConfig(node=NODE, node_ip="172.18.0.2", cpu="2", memory="4Gi", max_pods=3)


def web(name: str, *, host_port: int = 0, cpu: str = "", created: int = 0, **spec) -> Pod:
    ports = (ContainerPort(container_port=80, host_port=host_port),) if host_port else ()
    requests = ResourceRequirements(requests={"cpu": parse_quantity(cpu)}) if cpu else ResourceRequirements()
    c = Container(name="app", image="nginx", ports=ports, resources=requests)
    return Pod(metadata=ObjectMeta(name=name, namespace="default", uid=f"uid-{name}", creation_timestamp=created),
               spec=PodSpec(node_name=spec.pop("node_name", NODE), containers=(c,), **spec))


def test_admit_reports_the_first_failure_with_upstreams_reason_and_message():
    node = initial_node(CONFIG, 0)
    assert admit(web("a", host_port=8080), [], node) is None
    ports = admit(web("b", host_port=8080), [web("a", host_port=8080)], node)
    assert (ports.reason, ports.message) == (
        "NodePorts", "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports")
    cpu = admit(web("big", cpu="1500m"), [web("a", cpu="1")], node)
    assert (cpu.reason, cpu.message) == (
        "OutOfcpu", "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000")
    full = admit(web("d"), [web("a"), web("b"), web("c")], node)
    assert full.reason == "OutOfpods"
    assert admit(web("x", node_selector={"disk": "ssd"}), [], node).reason == "NodeAffinity"
    assert admit(web("y", node_name="node-9"), [], node).reason == "NodeName"


def test_admit_refuses_an_untolerated_no_execute_taint_but_not_a_no_schedule_one():
    node = initial_node(CONFIG, 0)
    tainted = attrs.evolve(node, spec=attrs.evolve(node.spec, taints=(Taint(key="k", effect="NoExecute"),)))
    assert admit(web("a"), [], tainted).reason == "TaintToleration"
    assert admit(web("a", tolerations=(Toleration(key="k", operator="Exists"),)), [], tainted) is None
    quiet = attrs.evolve(node, spec=attrs.evolve(node.spec, taints=(Taint(key="k", effect="NoSchedule"),)))
    assert admit(web("a"), [], quiet) is None


def test_admission_order_is_oldest_first():
    pods = [web("a", created=3000), web("b", created=1000), web("c", created=1000)]
    assert [p.metadata.name for p in admission_order(pods)] == ["b", "c", "a"]


def _bound(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"nodeName": NODE, "containers": [{"name": "app", "image": "nginx",
                                                       "ports": [{"containerPort": 80, "hostPort": 8080}]}]}}


def test_a_refused_pod_never_runs_is_failed_with_an_event_and_is_deleted_when_asked():
    c = cluster()
    c.apply([_bound("first")])
    c.run_for(2000)
    c.apply([_bound("second")])
    c.run_for(2000)
    k = kubelet(c)
    assert get(c, "first").status.phase == "Running"
    second = get(c, "second")
    assert (second.status.phase, second.status.reason) == ("Failed", "NodePorts")
    assert [sb.metadata.name for sb in k.runtime.ready_sandboxes()] == ["first"]
    events = [e for e in c.objects("events", "default") if e.involved_object.name == "second"]
    assert [(e.type, e.reason) for e in events] == [("Warning", "NodePorts")]
    c.submit(Delete("pods", "default", "second"))
    c.run_for(5000)
    assert get(c, "second") is None and get(c, "first").status.phase == "Running"


def test_after_a_restart_the_older_of_two_conflicting_pods_keeps_the_node():
    c = cluster()
    c.crash(f"kubelet/{NODE}")
    c.apply([_bound("z-older")])
    c.run_for(1000)
    c.apply([_bound("a-newer")])  # listed first (by name), created later
    c.run_for(1000)
    c.restart(f"kubelet/{NODE}")
    c.run_for(5000)
    assert get(c, "z-older").status.phase == "Running"
    assert (get(c, "a-newer").status.phase, get(c, "a-newer").status.reason) == ("Failed", "NodePorts")
    assert [sb.metadata.name for sb in kubelet(c).runtime.ready_sandboxes()] == ["z-older"]
