"""The pipeline's stages, their order, and the registry's semantics, through Pipeline.handle."""

from __future__ import annotations

import random

import attrs
import pytest

from kmodel.apiserver.pipeline import Pipeline
from kmodel.ipam.serviceip import ServiceIPAllocator
from kmodel.objects import Binding, Node, ObjectMeta, ObjectReference, dump
from tests.apiserver.conftest import install, manifest, req

NOW = 10_000


def pod_body(name="web", ns="shop", **spec):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def bad_pod(name="web", ns="shop"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns}, "spec": {"containers": []}}


def state(store):
    return store.revision, len(store.history)


# --- stage order -----------------------------------------------------------------------------------------

def test_unauthenticated_and_invalid_gets_401_and_changes_nothing(api, store):
    before = state(store)
    r = api.handle(req("create", "pods", "shop", token="bogus", body=bad_pod()), now=NOW)
    assert (r.code, r.body.reason, r.body.message) == (401, "Unauthorized", "Unauthorized")
    assert state(store) == before
    assert api.audit.records[-1].user == ""  # nobody authenticated


def test_unauthorized_and_invalid_gets_403(api, store):
    before = state(store)
    r = api.handle(req("create", "pods", "shop", token="bob-token", body=bad_pod()), now=NOW)
    assert r.code == 403
    assert r.body.message == ('pods is forbidden: User "bob" cannot create resource "pods" in API group "" '
                              'in the namespace "shop"')
    assert state(store) == before
    assert (api.audit.records[-1].user, api.audit.records[-1].code) == ("bob", 403)  # audited with its user


def test_anonymous_meets_authorization(api):
    r = api.handle(req("get", "nodes", name="n1", token=""), now=NOW)
    assert r.code == 403
    assert r.body.message == ('nodes "n1" is forbidden: User "system:anonymous" cannot get resource "nodes" '
                              'in API group "" at the cluster scope')


def test_undecodable_gets_400_naming_the_field(api, store):
    body = pod_body()
    body["spec"]["containerz"] = []
    before = state(store)
    r = api.handle(req("create", "pods", "shop", body=body), now=NOW)
    assert r.code == 400 and r.body.reason == "BadRequest"
    assert 'unknown field "spec.containerz"' in r.body.message
    assert state(store) == before


def test_invalid_gets_422_with_causes(api, store):
    before = state(store)
    r = api.handle(req("create", "pods", "shop", body=bad_pod()), now=NOW)
    assert (r.code, r.body.reason) == (422, "Invalid")
    assert r.body.message.startswith('Pod "web" is invalid: spec.containers: Required value')
    assert r.body.details.causes[0].field == "spec.containers"
    assert state(store) == before


def test_missing_namespace_is_404_before_validation(api, store):
    before = state(store)
    r = api.handle(req("create", "pods", "nowhere", body=bad_pod(ns="nowhere")), now=NOW)
    assert (r.code, r.body.message) == (404, 'namespaces "nowhere" not found')
    assert state(store) == before


def test_terminating_namespace_is_403(api, store):
    from kmodel.objects import Namespace
    install(store, Namespace(metadata=ObjectMeta(name="old", deletion_timestamp=1)))
    r = api.handle(req("create", "pods", "old", body=pod_body(ns="old")), now=NOW)
    assert r.code == 403
    assert r.body.message == ('pods "web" is forbidden: unable to create new content in namespace old '
                              'because it is being terminated')


def test_pod_security_baseline_rejects_host_network(api, store):
    ns, pod = manifest("refused/restricted-namespace.yaml")
    assert api.handle(req("create", "namespaces", body=ns), now=NOW).code == 201
    before = state(store)
    r = api.handle(req("create", "pods", "payments", body=pod), now=NOW)
    assert (r.code, r.body.reason) == (403, "Forbidden")
    assert r.body.message == ('pods "ledger-hostnet" is forbidden: violates PodSecurity "baseline:latest": '
                              'host namespaces (hostNetwork=true), hostPort (container "ledger" uses hostPort 9000)')
    # (defaulting sets hostPort = containerPort under hostNetwork, as upstream, so both checks fire)
    assert state(store) == before
    # the same pod in an unlabelled namespace is fine
    assert api.handle(req("create", "pods", "shop", body=dump(attrs.evolve(pod, metadata=ObjectMeta(name="ok", namespace="shop")))), now=NOW).code == 201


def test_pod_security_lists_every_violation(api, store):
    from kmodel.objects import Namespace
    install(store, Namespace(metadata=ObjectMeta(name="base", labels={"pod-security.kubernetes.io/enforce": "baseline"})))
    body = pod_body(ns="base", hostPID=True)
    body["spec"]["containers"] = [{"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 80}],
                                   "securityContext": {"privileged": True}}]
    r = api.handle(req("create", "pods", "base", body=body), now=NOW)
    assert r.body.message == ('pods "web" is forbidden: violates PodSecurity "baseline:latest": host namespaces '
                              '(hostPID=true), hostPort (container "a" uses hostPort 80), privileged (container "a" '
                              'must not set securityContext.privileged=true)')


# --- RBAC ------------------------------------------------------------------------------------------------

def test_rbac_alice_reads_pods_in_shop_only(api, store):
    for obj in manifest("role-pod-reader.yaml") + manifest("k-rolebinding-alice.yaml"):
        assert api.handle(req("create", obj.__class__.__name__.lower() + "s", "shop", body=dump(obj)), now=NOW).code == 201
    assert api.handle(req("list", "pods", "shop", token="alice-token"), now=NOW).code == 200
    r = api.handle(req("create", "pods", "shop", token="alice-token", body=pod_body()), now=NOW)
    assert r.code == 403
    r = api.handle(req("list", "pods", "default", token="alice-token"), now=NOW)
    assert r.body.message == ('pods is forbidden: User "alice" cannot list resource "pods" in API group "" '
                              'in the namespace "default"')


def test_rbac_missing_role_is_named_in_the_reason(api, store):
    (binding,) = manifest("k-rolebinding-alice.yaml")
    install(store, binding)
    r = api.handle(req("get", "pods", "shop", "x", token="alice-token"), now=NOW)
    assert r.body.message.endswith(': RBAC: role.rbac.authorization.k8s.io "pod-reader" not found')


def test_components_pass_rbac_through_bootstrap_policy(api):
    assert api.handle(req("list", "nodes", token="scheduler-token"), now=NOW).code == 200
    assert api.handle(req("delete", "nodes", name="n1", token="scheduler-token"), now=NOW).code == 403
    assert api.handle(req("list", "endpoints", token="proxy-token"), now=NOW).code == 200
    assert api.handle(req("list", "deployments", "shop", token="controller-manager-token"), now=NOW).code == 200


# --- node authorizer and NodeRestriction --------------------------------------------------------------------

def node_obj(name):
    return Node(metadata=ObjectMeta(name=name))


def test_node_writes_only_its_own_node_and_lease(api, store):
    assert api.handle(req("create", "nodes", token="node-n1-token", body=node_obj("n1")), now=NOW).code == 201
    r = api.handle(req("create", "nodes", token="node-n1-token", body=node_obj("n2")), now=NOW)
    assert (r.code, r.body.message) == (403, 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"')
    r = api.handle(req("get", "leases", "kube-node-lease", "n2", token="node-n1-token"), now=NOW)
    assert r.code == 403 and r.body.message.endswith(
        ": can only access node lease with the same name as the requesting node")


def test_node_updates_status_only_of_its_pods(api, store):
    api.handle(req("create", "pods", "shop", body=pod_body()), now=NOW)
    bind = Binding(metadata=ObjectMeta(name="web", namespace="shop"), target=ObjectReference(kind="Node", name="n1"))
    assert api.handle(req("create", "pods", "shop", "web", subresource="binding", body=bind), now=NOW).code == 201
    pod = api.handle(req("get", "pods", "shop", "web"), now=NOW).body
    running = attrs.evolve(pod, status=attrs.evolve(pod.status, phase="Running"))
    r = api.handle(req("update", "pods", "shop", "web", subresource="status", token="node-n2-token", body=running), now=NOW)
    assert r.code == 403
    assert r.body.message == ('pods "web" is forbidden: node "n2" can only update pod status for pods with '
                              'spec.nodeName set to itself')
    r = api.handle(req("update", "pods", "shop", "web", subresource="status", token="node-n1-token", body=running), now=NOW)
    assert r.code == 200 and r.body.status.phase == "Running"


# --- registry semantics ----------------------------------------------------------------------------------

def test_create_get_and_generation(api):
    r = api.handle(req("create", "deployments", "shop", body=dump(manifest("k-deployment-cart.yaml")[0])), now=NOW)
    d = r.body
    assert r.code == 201 and d.metadata.generation == 1 and d.metadata.creation_timestamp == NOW
    assert d.spec.strategy.rolling_update.max_surge == "25%" and d.spec.revision_history_limit == 10
    assert d.metadata.resource_version == str(api.store.revision)
    assert api.handle(req("get", "deployments", "shop", "cart"), now=NOW).body == d
    r = api.handle(req("get", "deployments", "shop", "nope"), now=NOW)
    assert (r.code, r.body.message) == (404, 'deployments.apps "nope" not found')
    # a status change leaves generation alone; a spec change moves it
    st = api.handle(req("update", "deployments", "shop", "cart", subresource="status",
                        body=attrs.evolve(d, status=attrs.evolve(d.status, replicas=4))), now=NOW).body
    assert st.metadata.generation == 1 and st.status.replicas == 4
    up = api.handle(req("update", "deployments", "shop", "cart",
                        body=attrs.evolve(st, spec=attrs.evolve(st.spec, replicas=5), status=attrs.evolve(st.status, replicas=0))), now=NOW).body
    assert up.metadata.generation == 2 and up.status.replicas == 4  # main update ignores status


def test_update_conflict_and_noop(api, store):
    d = api.handle(req("create", "deployments", "shop", body=dump(manifest("k-deployment-cart.yaml")[0])), now=NOW).body
    rev = store.revision
    r = api.handle(req("update", "deployments", "shop", "cart", body=d), now=NOW)
    assert r.code == 200 and store.revision == rev and r.body is d  # nothing changed: no write
    newer = api.handle(req("update", "deployments", "shop", "cart",
                           body=attrs.evolve(d, spec=attrs.evolve(d.spec, replicas=2))), now=NOW).body
    assert newer.metadata.resource_version == str(rev + 1)
    r = api.handle(req("update", "deployments", "shop", "cart", body=attrs.evolve(d, spec=attrs.evolve(d.spec, replicas=3))), now=NOW)
    assert (r.code, r.body.reason) == (409, "Conflict")
    assert r.body.message == ('Operation cannot be fulfilled on deployments.apps "cart": the object has been '
                              'modified; please apply your changes to the latest version and try again')
    # unconditional update (no resourceVersion) is allowed for built-in kinds
    plain = attrs.evolve(d, metadata=attrs.evolve(d.metadata, resource_version=""), spec=attrs.evolve(d.spec, replicas=3))
    assert api.handle(req("update", "deployments", "shop", "cart", body=plain), now=NOW).body.spec.replicas == 3


def test_merge_patch(api):
    api.handle(req("create", "deployments", "shop", body=dump(manifest("k-deployment-cart.yaml")[0])), now=NOW)
    r = api.handle(req("patch", "deployments", "shop", "cart",
                       body={"spec": {"replicas": 7}, "metadata": {"labels": {"tier": "web", "app": None}}}), now=NOW)
    assert r.code == 200 and r.body.spec.replicas == 7 and dict(r.body.metadata.labels) == {"tier": "web"}
    assert r.body.metadata.generation == 2
    r = api.handle(req("patch", "deployments", "shop", "cart", body={"metadata": {"resourceVersion": "1"}}), now=NOW)
    assert r.code == 409


def test_generate_name_is_deterministic(store):
    body = pod_body(name="")
    body["metadata"]["generateName"] = "web-"
    names = []
    for _ in range(2):
        from tests.apiserver.conftest import Store, bootstrap_policy, Namespace
        s = Store()
        install(s, Namespace(metadata=ObjectMeta(name="shop")))
        p = Pipeline(s)
        pod = p.handle(req("create", "pods", "shop", body=body), now=NOW).body
        names.append((pod.metadata.name, pod.metadata.uid))
    assert names[0] == names[1] and names[0][0].startswith("web-") and len(names[0][0]) == 9


def test_list_with_selectors(api):
    for i, (app, node) in enumerate((("a", "n1"), ("b", "n1"), ("a", "n2"))):
        body = pod_body(name=f"p{i}", nodeName=node)
        body["metadata"]["labels"] = {"app": app}
        assert api.handle(req("create", "pods", "shop", body=body), now=NOW).code == 201
    names = lambda r: [p.metadata.name for p in r.body.items]
    assert names(api.handle(req("list", "pods", "shop", label_selector="app=a"), now=NOW)) == ["p0", "p2"]
    assert names(api.handle(req("list", "pods", "shop", label_selector="app notin (a)"), now=NOW)) == ["p1"]
    assert names(api.handle(req("list", "pods", field_selector="spec.nodeName=n1"), now=NOW)) == ["p0", "p1"]
    assert names(api.handle(req("list", "pods", label_selector="!app"), now=NOW)) == []
    r = api.handle(req("list", "pods", field_selector="spec.foo=x"), now=NOW)
    assert (r.code, r.body.message) == (400, "field label not supported: spec.foo")
    r = api.handle(req("list", "pods", label_selector="app in a"), now=NOW)
    assert (r.code, r.body.message) == (400, "unable to parse requirement: found 'a' expected: '('")


def test_binding(api, store):
    api.handle(req("create", "pods", "shop", body=pod_body()), now=NOW)
    bind = Binding(metadata=ObjectMeta(name="web", namespace="shop"), target=ObjectReference(kind="Node", name="n1"))
    r = api.handle(req("create", "pods", "shop", "web", subresource="binding", token="scheduler-token", body=bind), now=NOW)
    assert r.code == 201
    pod = api.handle(req("get", "pods", "shop", "web"), now=NOW).body
    assert pod.spec.node_name == "n1"
    assert [(c.type, c.status) for c in pod.status.conditions] == [("PodScheduled", "True")]
    r = api.handle(req("create", "pods", "shop", "web", subresource="binding", body=bind), now=NOW)
    assert (r.code, r.body.message) == (409, 'Operation cannot be fulfilled on pods/binding "web": pod web is '
                                             'already assigned to node "n1"')


def test_binding_a_deleted_pod(api, store):
    api.handle(req("create", "pods", "shop", body=pod_body()), now=NOW)
    pod = api.handle(req("get", "pods", "shop", "web"), now=NOW).body
    install(store, attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, deletion_timestamp=NOW, finalizers=("x",))))
    bind = Binding(metadata=ObjectMeta(name="web"), target=ObjectReference(name="n1"))
    r = api.handle(req("create", "pods", "shop", "web", subresource="binding", body=bind), now=NOW)
    assert r.code == 409 and r.body.message.endswith("pod web is being deleted, cannot be assigned to a host")


def test_graceful_pod_delete_then_force(api, store):
    api.handle(req("create", "pods", "shop", body=pod_body(nodeName="n1")), now=NOW)
    r = api.handle(req("delete", "pods", "shop", "web"), now=NOW)
    assert r.code == 200 and r.body.metadata.deletion_timestamp == NOW + 30_000
    assert r.body.metadata.deletion_grace_period_seconds == 30
    assert api.handle(req("get", "pods", "shop", "web"), now=NOW).code == 200
    assert api.handle(req("delete", "pods", "shop", "web", grace_period_seconds=0), now=NOW).code == 200
    assert api.handle(req("get", "pods", "shop", "web"), now=NOW).code == 404


def test_unscheduled_pod_is_deleted_at_once(api):
    api.handle(req("create", "pods", "shop", body=pod_body()), now=NOW)
    api.handle(req("delete", "pods", "shop", "web"), now=NOW)
    assert api.handle(req("get", "pods", "shop", "web"), now=NOW).code == 404


def test_finalizers_hold_deletion_until_emptied(api):
    body = dump(manifest("k-deployment-cart.yaml")[0])
    body["metadata"]["finalizers"] = ["example.com/hold"]
    api.handle(req("create", "deployments", "shop", body=body), now=NOW)
    d = api.handle(req("delete", "deployments", "shop", "cart"), now=NOW + 5).body
    assert d.metadata.deletion_timestamp == NOW + 5 and d.metadata.deletion_grace_period_seconds == 0
    r = api.handle(req("update", "deployments", "shop", "cart",
                       body=attrs.evolve(d, metadata=attrs.evolve(d.metadata, finalizers=()))), now=NOW + 6)
    assert r.code == 200
    assert api.handle(req("get", "deployments", "shop", "cart"), now=NOW).code == 404


def test_cluster_ips_unique_released_and_reserved(api):
    (svc,) = manifest("k-service-cart.yaml")
    ips = set()
    for i in range(20):
        body = dump(attrs.evolve(svc, metadata=attrs.evolve(svc.metadata, name=f"s{i}", creation_timestamp=None)))
        r = api.handle(req("create", "services", "shop", body=body), now=NOW)
        assert r.code == 201 and r.body.spec.cluster_ips == (r.body.spec.cluster_ip,)
        ips.add(r.body.spec.cluster_ip)
    assert len(ips) == 20 and all(ip.startswith("10.") for ip in ips)
    taken = sorted(ips)[0]
    explicit = dump(attrs.evolve(svc, metadata=attrs.evolve(svc.metadata, name="fixed"),
                                 spec=attrs.evolve(svc.spec, cluster_ip=taken)))
    r = api.handle(req("create", "services", "shop", body=explicit), now=NOW)
    assert r.code == 422
    assert r.body.message == (f'Service "fixed" is invalid: spec.clusterIPs: Invalid value: []string{{"{taken}"}}: '
                              f'failed to allocate IP {taken}: provided IP is already allocated')
    owner = next(f"s{i}" for i in range(20) if api.handle(req("get", "services", "shop", f"s{i}"), now=NOW).body.spec.cluster_ip == taken)
    assert api.handle(req("delete", "services", "shop", owner), now=NOW).code == 200
    assert api.handle(req("create", "services", "shop", body=explicit), now=NOW).code == 201


def test_failed_service_create_releases_its_ip(api):
    (svc,) = manifest("k-service-cart.yaml")
    body = dump(svc)
    assert api.handle(req("create", "services", "shop", body=body), now=NOW).code == 201
    used = api.service_ips.used
    assert api.handle(req("create", "services", "shop", body=body), now=NOW).code == 409
    assert api.service_ips.used == used


def test_a_full_service_range_is_an_internal_error(store):
    """alloc.go's allocIPs: AllocateNext failing is NewInternalError (500), not a field's 422; a release makes room."""
    api = Pipeline(store, service_ips=ServiceIPAllocator("10.96.0.0/29", random.Random(0)))  # 6 addresses
    (svc,) = manifest("k-service-cart.yaml")

    def create(name: str):
        body = dump(attrs.evolve(svc, metadata=attrs.evolve(svc.metadata, name=name, creation_timestamp=None)))
        return api.handle(req("create", "services", "shop", body=body), now=NOW)

    assert [create(f"s{i}").code for i in range(6)] == [201] * 6
    r = create("s6")
    assert (r.code, r.body.reason, r.body.message) == (
        500, "InternalError", "Internal error occurred: failed to allocate a serviceIP: range is full")
    assert api.handle(req("delete", "services", "shop", "s0"), now=NOW).code == 200
    assert create("s6").code == 201


def test_audit_records_every_request(api, store):
    api.handle(req("create", "pods", "shop", body=pod_body()), now=NOW)
    api.handle(req("get", "pods", "shop", "web", token="bogus"), now=NOW + 1)
    a, b = api.audit.records[-2:]
    assert (a.user, a.verb, a.code, a.revision) == ("admin", "create", 201, store.revision)
    assert (b.user, b.code, b.time) == ("", 401, NOW + 1)


def test_admit_read(api):
    assert api.admit_read(req("watch", "pods", "shop", token="admin-token"), NOW).name == "admin"
    assert api.admit_read(req("watch", "pods", "shop", token="alice-token"), NOW).code == 403
