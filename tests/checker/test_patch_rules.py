"""The patch action (kmodel/checker/patch_actions.py) and its rule (patch_rules.py): kubectl patch of every type
round-trips through JSON, replays from a trace without the tables, refuses what the API server refuses without
changing anything, and the rule sends each type on a machine."""

from __future__ import annotations

import json

import pytest

from kmodel.checker.action_json import action_from_json
from kmodel.checker.actions import ApplyDeployment, ApplyPod, ApplyService, RunFair, Settle
from kmodel.checker.patch_actions import (
    JSON_PATCHES, LABEL, LABEL_VALUE, MERGE_PATCHES, STRATEGIC_PATCHES, PatchObject, fewer_parts, rows_for,
)
from kmodel.checker.patch_rules import TYPES
from kmodel.checker.replay import replay
from kmodel.checker.trace import Trace, read_trace, write_trace
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.cluster.kubectl import KUBECTL_ERROR, Patch
from kmodel.objects import dump

from tests.checker.conftest import SmallMachine
from tests.checker.test_workload_actions import run

JSON_TEST = PatchObject("deployments", "default", "web", "json",
                        '[{"op":"test","path":"/spec/replicas","value":2},'
                        '{"op":"replace","path":"/spec/replicas","value":3}]')
MERGE_LABEL = PatchObject("pods", "default", "debug-1", "merge", {"metadata": {"labels": {LABEL: LABEL_VALUE}}})
STRATEGIC_IMAGE = PatchObject("deployments", "default", "web", "strategic",
                              {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}}})
EXAMPLES = [JSON_TEST, MERGE_LABEL, STRATEGIC_IMAGE,
            PatchObject("nodes", "", "node-1", "strategic", '{"metadata": {"finalizers": ["example.com/hold"]}}')]


def test_the_action_carries_the_document_as_canonical_json_and_reads_as_the_command():
    """(Every example's JSON round trip: tests/checker/test_actions.py.) Text written by hand reads back as the
    canonical text, so a trace edited by a person replays and hashes as the one recorded."""
    assert JSON_TEST.name == ("kubectl patch deployment web --type=json -p '[{\"op\":\"test\",\"path\":\"/spec/replicas\","
                              "\"value\":2},{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":3}]'")
    spaced = PatchObject("pods", "team", "p", "merge", '{ "metadata" : {"labels": {"b": "1", "a": "2"}} }')
    assert spaced.patch == '{"metadata":{"labels":{"a":"2","b":"1"}}}' and " -n team " in spaced.name
    data = {**json.loads(json.dumps(spaced.to_json())), "patch": '{"metadata": {"labels": {"b": "1", "a": "2"}}}'}
    assert action_from_json(data) == spaced


def test_bad_patch_actions_are_refused_in_one_line():
    for data, message in [
        ({"name": "patch-object", "resource": "pods", "namespace": "default", "object": "p", "type": "yaml",
          "patch": "{}"}, "type must be one of 'json', 'merge', 'strategic'"),
        ({"name": "patch-object", "resource": "pods", "namespace": "default", "object": "p", "type": "json",
          "patch": "[{"}, "patch must be JSON text"),
        ({"name": "patch-object", "resource": "secrets", "namespace": "default", "object": "p", "type": "json",
          "patch": "[]"}, "resource must be one of"),
    ]:
        with pytest.raises(ValueError, match=message):
            action_from_json(data)


def test_a_patch_simplifies_to_fewer_operations_or_keys():
    assert fewer_parts(JSON_TEST.patch) == ('[{"op":"replace","path":"/spec/replicas","value":3}]',
                                            '[{"op":"test","path":"/spec/replicas","value":2}]')
    assert fewer_parts('{"metadata":{"labels":{"a":"1"}},"spec":{"replicas":1}}') == (
        '{"spec":{"replicas":1}}', '{"metadata":{"labels":{"a":"1"}}}')
    assert fewer_parts('[{"op":"remove","path":"/a"}]') == () == fewer_parts('{"metadata":{"labels":{}}}')
    assert [a.patch for a in JSON_TEST.simpler()] == list(fewer_parts(JSON_TEST.patch))


@pytest.fixture(scope="module")
def web() -> Cluster:
    """Two nodes running Deployment web (2 replicas), its Service and the bare pod debug-1."""
    cluster = Cluster(ClusterConfig(nodes=2))
    for action in (ApplyDeployment("web", 2), ApplyService("web"), ApplyPod("debug-1", "")):
        action.apply(cluster)
    cluster.run(20_000)
    return cluster


def test_kubectl_sends_each_type_as_its_content_type(web):
    """A merge patch goes as the plain dict, a JSON patch and a strategic merge patch as the wire's PatchBody:
    the same label set three ways, each applied by its own algorithm (a JSON patch `add` into the labels)."""
    for kind, doc in (("merge", {"metadata": {"labels": {"m": "1"}}}),
                      ("json", [{"op": "add", "path": "/metadata/labels/j", "value": "1"}]),
                      ("strategic", {"metadata": {"labels": {"s": "1"}}})):
        [r] = run(web, PatchObject("services", "default", "web", kind, doc))
        assert r.ok, r.response.body
    labels = web.get("services", "default", "web").metadata.labels
    assert {k: labels.get(k) for k in "mjs"} == {"m": "1", "j": "1", "s": "1"}


def test_kubectl_refuses_an_unknown_patch_type_before_sending_anything(web):
    web.submit(Patch("services", "default", "web", {}, type="yaml"))
    web.run_for(1_000)
    r = web.kubectl.results[-1]
    assert r.response.code == 0 and r.response.body.reason == KUBECTL_ERROR
    assert r.response.body.message == '--type must be one of [json merge strategic], not "yaml"'


def test_a_patch_that_fails_its_test_op_leaves_the_object_unchanged(web):
    before = web.get("deployments", "default", "web")
    stale = str(int(before.metadata.resource_version) - 1)
    [r] = run(web, PatchObject("deployments", "default", "web", "json", [
        {"op": "test", "path": "/metadata/resourceVersion", "value": stale},
        {"op": "replace", "path": "/spec/replicas", "value": 5}]), 100)
    assert r.response.code == 422 and "testing value /metadata/resourceVersion failed" in r.response.body.message
    after = web.get("deployments", "default", "web")
    assert after.metadata.resource_version == before.metadata.resource_version and after.spec.replicas == 2


def test_strategic_merge_patches_merge_containers_by_name_and_merge_patches_replace_the_list(web):
    [r] = run(web, STRATEGIC_IMAGE)
    containers = web.get("deployments", "default", "web").spec.template.spec.containers
    assert r.ok and [(c.name, c.image, len(c.ports)) for c in containers] == [("app", "nginx:1.26", 1)]
    [r] = run(web, PatchObject("deployments", "default", "web", "merge", STRATEGIC_IMAGE.patch))
    containers = web.get("deployments", "default", "web").spec.template.spec.containers
    assert r.ok and [(c.name, c.image, len(c.ports)) for c in containers] == [("app", "nginx:1.26", 0)]


def _row(table, what):
    return next(row for row in table if row.what.startswith(what))


def test_the_directive_rows_do_what_they_say(web):
    """$setElementOrder, $patch: replace, a null in a strategic merge patch, and a JSON patch's remove of a list
    item, each sent by kubectl to the web Deployment."""
    def send(table, what, kind):
        doc = _row(table, what).build(dump(web.get("deployments", "default", "web")))
        [r] = run(web, PatchObject("deployments", "default", "web", kind, doc))
        return r, web.get("deployments", "default", "web")

    r, d = send(STRATEGIC_PATCHES, "add the finalizer with the finalizers' order", "strategic")
    assert r.ok and list(d.metadata.finalizers) == ["example.com/hold"]
    r, d = send(JSON_PATCHES, "remove the first finalizer", "json")
    assert r.ok and list(d.metadata.finalizers) == []
    r, _ = send(JSON_PATCHES, "remove the first finalizer", "json")
    assert r.response.code == 422  # none left to remove
    before = web.get("deployments", "default", "web").spec.template.spec.containers[0].image
    r, d = send(STRATEGIC_PATCHES, "the app container's image with the containers' order", "strategic")
    assert r.ok and [c.name for c in d.spec.template.spec.containers] == ["app"]
    # the module's Deployment is shared, so its image may have been switched before: the row sends the other one
    assert d.spec.template.spec.containers[0].image == ("nginx:1.25" if before == "nginx:1.26" else "nginx:1.26")
    r, d = send(STRATEGIC_PATCHES, "the labels replaced whole", "strategic")
    assert r.ok and dict(d.metadata.labels) == {"app": "web", LABEL: LABEL_VALUE}
    r, d = send(STRATEGIC_PATCHES, "remove the label (null)", "strategic")
    assert r.ok and dict(d.metadata.labels) == {"app": "web"}


def test_every_table_has_a_row_for_every_kind_it_patches_first_a_label(web):
    """The first row of each type fits every object (the rule can always send one), and sets the label."""
    for table in (JSON_PATCHES, MERGE_PATCHES, STRATEGIC_PATCHES):
        assert "label" in table[0].what
    for resource, ns, name in (("deployments", "default", "web"), ("pods", "default", "debug-1"),
                               ("services", "default", "web"), ("nodes", "", "node-1")):
        body = dump(web.get(resource, ns, name))
        for kind in TYPES:
            assert rows_for(kind, body), (resource, kind)


def test_the_rule_sends_each_type_against_what_exists():
    machine = SmallMachine()
    machine.apply_deployment("web", 2, 0, False, False)
    machine.advance_time(15)
    for patch_type in range(len(TYPES)):
        before = machine.stats.rules.get("patch_object", 0)
        machine.patch_object(0, patch_type, 0)
        assert machine.stats.rules["patch_object"] == before + 1
    machine.advance_time(5)
    sent = [a for a in machine.session.actions if a.kind == "patch-object"]
    assert [a.type for a in sent] == list(TYPES)
    assert [r.command.type for r in machine.cluster.kubectl.results if isinstance(r.command, Patch)
            and r.command.name == sent[0].object] == list(TYPES)
    machine.teardown()


def test_a_trace_with_one_patch_of_each_type_replays_the_same(tmp_path):
    """Written, read back and replayed twice with every registered invariant: the same digest, no violation."""
    trace = Trace(ClusterConfig(nodes=2), (
        ApplyDeployment("web", 2), ApplyService("web"), ApplyPod("debug-1", ""), RunFair(15_000),
        JSON_TEST, MERGE_LABEL, STRATEGIC_IMAGE, RunFair(5_000), Settle(120_000)))
    again = read_trace(write_trace(trace, tmp_path / "patches.json"))
    assert again == trace
    first, second = replay(again, record_messages=False), replay(again, record_messages=False)
    assert first.passed and second.passed, first.violation
    assert first.digest == second.digest
    assert [s for s in first.steps if s.startswith("kubectl patch")] == [
        JSON_TEST.name, MERGE_LABEL.name, STRATEGIC_IMAGE.name]


def test_an_orphaned_replicaset_is_adopted_again_and_a_pod_deletion_cost_picks_the_pod_deleted():
    """The ownerReferences row orphans a Deployment's ReplicaSet, which the Deployment adopts again; the
    pod-deletion-cost rows annotate a pod, and the ReplicaSet scaling down deletes the cheaper pod first."""
    cluster = Cluster(ClusterConfig(nodes=2))
    ApplyDeployment("web", 2).apply(cluster)
    cluster.run(20_000)
    [rs] = cluster.objects("replicasets", "default")
    orphan = _row(MERGE_PATCHES, "remove the ownerReferences").build(dump(rs))
    [r] = run(cluster, PatchObject("replicasets", "default", rs.metadata.name, "merge", orphan))
    assert r.ok and not r.response.body.metadata.owner_references  # orphaned, then adopted again:
    [ref] = cluster.get("replicasets", "default", rs.metadata.name).metadata.owner_references
    assert ref.kind == "Deployment" and ref.name == "web" and ref.controller
    assert _row(MERGE_PATCHES, "remove the ownerReferences").build(dump(cluster.get("nodes", "", "node-1"))) is None
    pods = sorted(p.metadata.name for p in cluster.objects("pods", "default"))
    cheap = _row(MERGE_PATCHES, "annotate a pod with pod-deletion-cost -100").build(
        dump(cluster.get("pods", "default", pods[1])))
    [r] = run(cluster, PatchObject("pods", "default", pods[1], "merge", cheap), 1_000)
    assert r.ok and cluster.get("pods", "default", pods[1]).metadata.annotations[
        "controller.kubernetes.io/pod-deletion-cost"] == "-100"
    run(cluster, PatchObject("deployments", "default", "web", "merge", {"spec": {"replicas": 1}}), 20_000)
    left = [p.metadata.name for p in cluster.objects("pods", "default") if p.metadata.deletion_timestamp is None]
    assert left == [pods[0]]
