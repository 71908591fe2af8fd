"""Event names as client-go's recorder makes them (tools/record/event.go makeEvent: `<name>.<hex UnixNano>`):
two recorders never give two events one name, so neither create is lost to a 409."""

from __future__ import annotations

from kmodel.apiserver.events import EventRecorder, event_nanos, event_slot
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.controllers.base import Controller
from kmodel.objects import Deployment, ObjectMeta, StatefulSet
from kmodel.objects.logical_time import EPOCH

from tests.simulate.test_simulate_cli import EXAMPLES


def web(cls):
    return cls(metadata=ObjectMeta(name="web", namespace="default", uid=f"uid-{cls.__name__}"))


def test_a_name_is_the_object_name_and_the_hex_nanoseconds_of_the_recorders_clock():
    r = EventRecorder("controller-manager", instance="controller/statefulset")
    first, second = (r.event(web(StatefulSet), "SuccessfulCreate", "m", now=1_500) for _ in range(2))
    slot = event_slot("controller/statefulset")
    assert first.metadata.name == f"web.{event_nanos(1_500, slot, 1):x}"
    assert event_nanos(1_500, slot, 1) == int(EPOCH.timestamp()) * 10**9 + 1_500 * 10**6 + slot * 1000 + 1
    assert second.metadata.name == f"web.{event_nanos(1_500, slot, 2):x}"  # the same millisecond: the next ns


def test_two_recorders_of_one_source_in_one_millisecond_name_their_events_apart():
    deployments = EventRecorder("controller-manager", instance="controller/deployment")
    statefulsets = EventRecorder("controller-manager", instance="controller/statefulset")
    a = deployments.event(web(Deployment), "ScalingReplicaSet", "m", now=0)
    b = statefulsets.event(web(StatefulSet), "SuccessfulCreate", "m", now=0)
    assert a.metadata.name != b.metadata.name
    assert a.metadata.name.startswith("web.") and b.metadata.name.startswith("web.")


def test_two_recorders_in_one_millisecond_both_store_their_events():
    c = Cluster(ClusterConfig(nodes=2))
    c.apply([*_manifests("deployment-web.yaml"), *_manifests("statefulset.yaml")])
    c.run(10_000)
    events = {(e.involved_object.kind, e.reason): e for e in c.objects("events", "default")
              if e.involved_object.name == "web"}
    scaled, created = events[("Deployment", "ScalingReplicaSet")], events[("StatefulSet", "SuccessfulCreate")]
    assert scaled.first_timestamp == created.first_timestamp  # one millisecond, two recorders
    refused = [r for r in c.audit.records if r.resource == "events" and r.verb == "create" and r.code == 409]
    assert refused == []


def test_the_recorders_of_a_cluster_have_microseconds_of_their_own():
    """Every recorder of three kube-controller-managers, three schedulers and ten kubelets (their components'
    names, and the leader elections') names its events at a microsecond no other uses."""
    c = Cluster(ClusterConfig(nodes=10, controller_managers=3, schedulers=3, apiservers=3))
    slots: dict[str, int] = {}
    for x in c.components:
        if isinstance(x, Controller):
            slots[x.name] = event_slot(x.name)  # its recorder is made on first use, named after it
        elif getattr(x, "recorder", None) is not None:
            slots[x.name] = x.recorder.slot  # the schedulers and the kubelets
        if getattr(x, "elector", None) is not None:
            slots[x.name + " (election)"] = x.elector.recorder.slot
    assert sum(name.startswith("kubelet/") for name in slots) == 10
    assert sum(name.endswith("(election)") for name in slots) == 6
    assert len(set(slots.values())) == len(slots) > 40


def _manifests(file: str) -> list:
    import yaml

    return [doc for doc in yaml.safe_load_all((EXAMPLES / file).read_text()) if doc]
