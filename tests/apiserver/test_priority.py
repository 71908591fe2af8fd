"""PriorityClass (scheduling.k8s.io/v1) and the Priority admission plugin through the API pipeline: the system
classes, a pod's priority resolved from its class or the global default, upstream's refusals and messages."""

from __future__ import annotations

from kmodel.objects import dump

from .conftest import req

NODE_CRITICAL = 2_000_001_000


def pod(name: str = "p", *, generate: bool = False, **spec) -> dict:
    meta = {"generateName": name} if generate else {"name": name}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def priority_class(name: str, value: int, **fields) -> dict:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value, **fields}


def create(api, resource: str, body: dict, namespace: str = ""):
    return api.handle(req("create", resource, namespace, body=body), now=1_000)


def test_system_classes_exist_with_upstreams_values_and_defaults(api):
    listed = api.handle(req("list", "priorityclasses"), now=1_000).body
    got = {pc.metadata.name: (pc.value, pc.global_default, pc.preemption_policy) for pc in listed.items}
    assert got == {"system-cluster-critical": (2_000_000_000, False, "PreemptLowerPriority"),
                   "system-node-critical": (NODE_CRITICAL, False, "PreemptLowerPriority")}


def test_a_pod_gets_its_classs_priority_or_zero_without_one(api):
    plain = create(api, "pods", pod("plain"), "default").body
    assert (plain.spec.priority, plain.spec.priority_class_name, plain.spec.preemption_policy) == \
        (0, "", "PreemptLowerPriority")
    critical = create(api, "pods", pod("critical", priorityClassName="system-node-critical"), "default").body
    assert (critical.spec.priority, critical.spec.preemption_policy) == (NODE_CRITICAL, "PreemptLowerPriority")
    never = create(api, "priorityclasses", priority_class("batch", 10, preemptionPolicy="Never"))
    assert never.code == 201
    low = create(api, "pods", pod("low", priorityClassName="batch"), "default").body
    assert (low.spec.priority, low.spec.preemption_policy) == (10, "Never")


def test_an_unknown_class_or_a_priority_of_ones_own_is_forbidden(api):
    missing = create(api, "pods", pod("web-5c55dfb757-", generate=True, priorityClassName="gold"), "default")
    assert (missing.code, missing.body.message) == (
        403, 'pods "web-5c55dfb757-" is forbidden: no PriorityClass with name gold was found')
    own = create(api, "pods", pod("own", priority=5), "default")
    assert (own.code, own.body.message) == (
        403, 'pods "own" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority '
             'admission controller computed 0 from the given PriorityClass name')
    assert create(api, "pods", pod("same", priority=0), "default").code == 201
    policy = create(api, "pods", pod("policy", preemptionPolicy="Never"), "default")
    assert (policy.code, policy.body.message) == (
        403, 'pods "policy" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod '
             'spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name')


def test_the_global_default_class_is_taken_and_only_one_may_exist(api):
    assert create(api, "priorityclasses", priority_class("normal", 1000, globalDefault=True)).code == 201
    defaulted = create(api, "pods", pod("d"), "default").body
    assert (defaulted.spec.priority_class_name, defaulted.spec.priority) == ("normal", 1000)
    second = create(api, "priorityclasses", priority_class("other", 5, globalDefault=True))
    assert (second.code, second.body.message) == (
        403, 'priorityclasses.scheduling.k8s.io "other" is forbidden: PriorityClass normal is already marked as '
             'default. Only one default can exist')
    current = api.handle(req("get", "priorityclasses", "", "normal"), now=2_000).body
    body = priority_class("normal", 1000, globalDefault=True, description="again")
    body["metadata"]["resourceVersion"] = current.metadata.resource_version
    assert api.handle(req("update", "priorityclasses", "", "normal", body=body), now=2_000).code == 200


def test_priority_class_validation_and_immutable_value(api):
    reserved = create(api, "priorityclasses", priority_class("system-mine", 5))
    assert (reserved.code, reserved.body.message) == (
        422, 'PriorityClass.scheduling.k8s.io "system-mine" is invalid: metadata.name: Forbidden: priority class '
             "names with 'system-' prefix are reserved for system use only. error: system-mine is not a known "
             "system priority class")
    too_high = create(api, "priorityclasses", priority_class("huge", 1_000_000_001))
    assert too_high.body.message == ('PriorityClass.scheduling.k8s.io "huge" is invalid: value: Forbidden: maximum '
                                     'allowed value of a user defined priority is 1000000000')
    bad_policy = create(api, "priorityclasses", priority_class("odd", 1, preemptionPolicy="Sometimes"))
    assert bad_policy.body.message == ('PriorityClass.scheduling.k8s.io "odd" is invalid: preemptionPolicy: '
                                       'Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", '
                                       '"Never"')
    assert create(api, "priorityclasses", priority_class("low", 1)).code == 201
    current = api.handle(req("get", "priorityclasses", "", "low"), now=2_000).body
    body = priority_class("low", 2)
    body["metadata"]["resourceVersion"] = current.metadata.resource_version
    changed = api.handle(req("update", "priorityclasses", "", "low", body=body), now=2_000)
    assert (changed.code, changed.body.message) == (
        422, 'PriorityClass.scheduling.k8s.io "low" is invalid: value: Forbidden: may not be changed in an update.')


def test_a_pod_update_that_leaves_out_its_priority_keeps_it(api):
    created = create(api, "pods", pod("keep", priorityClassName="system-cluster-critical"), "default").body
    body = dump(created)
    del body["spec"]["priority"], body["spec"]["preemptionPolicy"]
    body["metadata"]["labels"] = {"a": "b"}
    updated = api.handle(req("update", "pods", "default", "keep", body=body), now=2_000)
    assert updated.code == 200, updated.body
    assert (updated.body.spec.priority, updated.body.spec.preemption_policy) == (2_000_000_000, "PreemptLowerPriority")
