"""What a violation names (kmodel.report.focus) and the diagram centred on it (kmodel.report.mermaid's keep)."""

from __future__ import annotations

from kmodel.report.focus import focus_of, label_names, touches
from kmodel.report.mermaid import sequence_diagram

ENDPOINTS = ["apiserver-0", "controller/nodeipam", "controller/replicaset", "etcd", "kubelet/node-1",
             "kubelet/node-2", "proxy/node-2", "scheduler"]
OBJECTS = {
    "nodes/node-1": '{"spec": {"podCIDR": "10.244.0.0/24"}}',
    "nodes/node-2": '{"spec": {"podCIDR": "10.244.1.0/24"}}',
    "nodes/node-20": '{"spec": {"podCIDR": "10.244.1.0/240"}}',
    "events/default/node-2.17a6": '{"message": "node-2 got 10.244.1.0/24"}',
    "deployments/default/web": "{}",
    "services/default/web": "{}",
    "leases/kube-node-lease/node-2": "{}",
}


def test_a_value_names_the_object_that_holds_it_and_a_name_run_together_names_its_component():
    endpoints, objects = focus_of("node IPAM holds 10.244.1.0/24, which no node has", ENDPOINTS, OBJECTS)
    # 10.244.1.0/24 is node-2's podCIDR (not node-20's 10.244.1.0/240, and an Event repeating it is not named)
    assert objects == ("nodes/node-2",)
    # "node IPAM" is controller/nodeipam; node-2's own components run for the named node
    assert endpoints == ("controller/nodeipam", "kubelet/node-2", "proxy/node-2")


def test_names_are_words_of_the_message():
    endpoints, objects = focus_of("kubelet/node-1 cannot reach any API server", ENDPOINTS, OBJECTS)
    assert endpoints == ("kubelet/node-1",) and objects == ()
    # a name with a digit or "-" stands alone; a plain word only right after its kind, or as namespace/name
    assert focus_of("node node-2 is not Ready", ENDPOINTS, OBJECTS)[1] == ("leases/kube-node-lease/node-2",
                                                                         "nodes/node-2")
    assert focus_of("deployment web is stuck", ENDPOINTS, OBJECTS)[1] == ("deployments/default/web",)
    assert focus_of("default/web has 1 ready pods of 2", ENDPOINTS, OBJECTS)[1] == (
        "deployments/default/web", "services/default/web")
    assert focus_of("the web is slow", ENDPOINTS, OBJECTS) == ((), ())


def test_a_message_touches_the_focus_by_its_ends_or_by_the_object_its_label_names():
    objects = ["nodes/node-2"]
    assert label_names("delete nodes node-2", "nodes/node-2")
    assert label_names("WatchEvent DELETED nodes/node-2", "nodes/node-2")
    assert not label_names("update leases node-2", "nodes/node-2")
    assert not label_names("WatchEvent ADDED nodes/node-20", "nodes/node-2")
    assert label_names("WatchEvent MODIFIED endpoints/web", "endpoints/default/web")  # the API's plural
    assert label_names("200 (get nodes node-2)", "nodes/node-2")  # a reply names the request it answers
    assert not label_names("WatchEvent MODIFIED endpoints/web", "services/default/web")
    assert touches("controller/nodeipam", "apiserver-0", "list nodes", ["controller/nodeipam"], objects)
    assert touches("kubectl", "apiserver-0", "delete nodes node-2", [], objects)
    assert not touches("kubectl", "apiserver-0", "delete nodes node-1", [], objects)
    # a bookmark carries no object: never part of the story, even to a named component
    assert not touches("apiserver-0", "controller/nodeipam", "WatchEvent BOOKMARK", ["controller/nodeipam"], objects)


def test_the_diagram_draws_what_touches_the_focus_and_counts_the_rest():
    steps = ["run", "delete node-2", "settle"]
    noise = [(0, "kubelet/node-1", "apiserver-0", "update leases node-1")] * 30
    story = [
        (0, "controller/nodeipam", "apiserver-0", "list nodes"),
        (1, "kubectl", "apiserver-0", "delete nodes node-2"),
        (2, "apiserver-0", "controller/nodeipam", "WatchEvent DELETED nodes/node-2"),
    ]
    messages = noise[:10] + story[:1] + noise[10:] + story[1:] + [(2, "scheduler", "apiserver-0", "list pods")]

    def keep(src, dst, label):
        return touches(src, dst, label, ["controller/nodeipam"], ["nodes/node-2"])

    text, arrows, left_out = sequence_diagram(steps, messages, "no-cidr-leak", "leak", keep=keep)
    assert arrows == 3 and left_out == len(messages) - 3
    assert "update leases node-1" not in text and "P_kubelet_node_1" not in text and "P_scheduler" not in text
    assert "step 1 (30 other messages not drawn): run" in text
    assert "step 3 (1 other message not drawn): settle" in text
    assert "delete nodes node-2" in text and "WatchEvent DELETED nodes/node-2" in text
    # nothing touches the focus: every message is a candidate again
    text, arrows, left_out = sequence_diagram(steps, noise, "x", "y", keep=lambda *_: False)
    assert "update leases node-1 ×30" in text and left_out == 0
