"""A table of invalid objects: the status class (400 decode / 422 invalid) and the field path Kubernetes names."""

import copy

import pytest

from kmodel.objects import DecodeError, decode, invalid_message_for, validate


def deployment(**spec_changes):
    d = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                                  "ports": [{"containerPort": 80}]}]}},
        },
    }
    d["spec"].update(spec_changes)
    return d


def pod(spec=None, **meta):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", **meta},
         "spec": spec or {"containers": [{"name": "c", "image": "busybox:1.36"}]}}
    return p


def with_container(**fields):
    return pod({"containers": [{"name": "c", "image": "busybox:1.36", **fields}]})


def service(**spec):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}], **spec}}


def node(**spec):
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "spec": spec}


def mutate(body, fn):
    body = copy.deepcopy(body)
    fn(body)
    return body


def tmpl_container(d, **fields):
    d["spec"]["template"]["spec"]["containers"][0].update(fields)


ROLE_BINDING = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": "rb", "namespace": "shop"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
                "subjects": [{"kind": "User", "name": "alice"}]}

# (id, body, expected HTTP status, the field path named first)
CASES = [
    ("misspelt spec field", deployment(replicass=3), 400, "spec.replicass"),
    ("misspelt container field", mutate(deployment(), lambda d: tmpl_container(d, imagee="x")), 400,
     "spec.template.spec.containers[0].imagee"),
    ("misspelt metadata field", pod(nmae="x"), 400, "metadata.nmae"),
    ("replicas as a word", deployment(replicas="three"), 400, "spec.replicas"),
    ("replicas as a fraction", deployment(replicas=1.5), 400, "spec.replicas"),
    ("list where a map belongs", mutate(deployment(), lambda d: d["metadata"].update(labels=["a"])), 400,
     "metadata.labels"),
    ("label value not a string", mutate(deployment(), lambda d: d["metadata"].update(labels={"on": True})), 400,
     "metadata.labels[on]"),
    ("containers as a map", pod({"containers": {"name": "c"}}), 400, "spec.containers"),
    ("containerPort as a string", with_container(ports=[{"containerPort": "80"}]), 400,
     "spec.containers[0].ports[0].containerPort"),
    ("bad cpu quantity", with_container(resources={"requests": {"cpu": "lots"}}), 400,
     "spec.containers[0].resources.requests[cpu]"),
    ("targetPort as a bool", service(ports=[{"port": 80, "targetPort": True}]), 400, "spec.ports[0].targetPort"),
    ("bad timestamp", pod(creationTimestamp="yesterday"), 400, "metadata.creationTimestamp"),
    ("unknown kind", {"apiVersion": "v1", "kind": "Pad", "metadata": {"name": "p"}}, 404, "kind"),
    ("missing kind", {"apiVersion": "v1", "metadata": {"name": "p"}}, 400, "kind"),
    ("negative replicas", deployment(replicas=-1), 422, "spec.replicas"),
    ("selector does not match template", deployment(selector={"matchLabels": {"app": "other"}}), 422,
     "spec.template.metadata.labels"),
    ("missing selector", mutate(deployment(), lambda d: d["spec"].pop("selector")), 422, "spec.selector"),
    ("bad deployment name", mutate(deployment(), lambda d: d["metadata"].update(name="Web_1")), 422, "metadata.name"),
    ("missing name", pod(name=""), 422, "metadata.name"),
    ("bad namespace name", mutate(pod(), lambda p: p["metadata"].update(namespace="Shop")), 422, "metadata.namespace"),
    ("namespace with dots", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}, 422,
     "metadata.name"),
    ("service name starting with a digit",
     mutate(service(), lambda s: s["metadata"].update(name="1svc")), 422, "metadata.name"),
    ("bad label key", pod(labels={"-bad": "x"}), 422, "metadata.labels"),
    ("bad label value", pod(labels={"app": "has space"}), 422, "metadata.labels"),
    ("missing containers", pod({"containers": []}), 422, "spec.containers"),
    ("duplicate container names", pod({"containers": [{"name": "c", "image": "a"}, {"name": "c", "image": "b"}]}),
     422, "spec.containers[1].name"),
    ("container without image", pod({"containers": [{"name": "c"}]}), 422, "spec.containers[0].image"),
    ("containerPort out of range", with_container(ports=[{"containerPort": 70000}]), 422,
     "spec.containers[0].ports[0].containerPort"),
    ("hostPort out of range", with_container(ports=[{"containerPort": 80, "hostPort": -1}]), 422,
     "spec.containers[0].ports[0].hostPort"),
    ("duplicate hostPort", pod({"containers": [
        {"name": "a", "image": "x", "ports": [{"containerPort": 80, "hostPort": 8080}]},
        {"name": "b", "image": "x", "ports": [{"containerPort": 81, "hostPort": 8080}]}]}), 422,
     "spec.containers[1].ports[0].hostPort"),
    ("duplicate port names", with_container(ports=[{"name": "http", "containerPort": 80},
                                                   {"name": "http", "containerPort": 81}]), 422,
     "spec.containers[0].ports[1].name"),
    ("unsupported protocol", with_container(ports=[{"containerPort": 80, "protocol": "HTTP"}]), 422,
     "spec.containers[0].ports[0].protocol"),
    ("negative cpu request", with_container(resources={"requests": {"cpu": "-1"}}), 422,
     "spec.containers[0].resources.requests[cpu]"),
    ("request above limit", with_container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}), 422,
     "spec.containers[0].resources.requests"),
    ("probe without handler", with_container(livenessProbe={"periodSeconds": 5}), 422,
     "spec.containers[0].livenessProbe"),
    ("toleration with bad operator", pod({"containers": [{"name": "c", "image": "i"}],
                                          "tolerations": [{"key": "k", "operator": "Maybe"}]}), 422,
     "spec.tolerations[0].operator"),
    ("toleration with bad effect", pod({"containers": [{"name": "c", "image": "i"}],
                                        "tolerations": [{"key": "k", "operator": "Exists", "effect": "Evict"}]}), 422,
     "spec.tolerations[0].effect"),
    ("bad restartPolicy", pod({"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Sometimes"}), 422,
     "spec.restartPolicy"),
    ("service port out of range", service(ports=[{"port": 0}]), 422, "spec.ports[0].port"),
    ("service port names required", service(ports=[{"port": 80}, {"port": 443}]), 422, "spec.ports[0].name"),
    ("service without ports", service(ports=[]), 422, "spec.ports"),
    ("bad clusterIP", service(clusterIP="10.96.0.300"), 422, "spec.clusterIPs[0]"),
    ("unsupported service type", service(type="Magic"), 422, "spec.type"),
    ("nodePort on ClusterIP", service(ports=[{"port": 80, "nodePort": 30080}]), 422, "spec.ports[0].nodePort"),
    ("bad podCIDR", node(podCIDR="10.244.0.0/33"), 422, "spec.podCIDRs[0]"),
    ("node taint with bad effect", node(taints=[{"key": "k", "effect": "Sometimes"}]), 422, "spec.taints[0].effect"),
    ("node in a namespace", mutate(node(), lambda n: n["metadata"].update(namespace="x")), 422, "metadata.namespace"),
    ("roleRef without name", mutate(ROLE_BINDING, lambda b: b["roleRef"].update(name="")), 422, "roleRef.name"),
    ("roleRef of the wrong kind", mutate(ROLE_BINDING, lambda b: b["roleRef"].update(kind="Pod")), 422, "roleRef.kind"),
    ("role rule without verbs", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                                 "metadata": {"name": "r", "namespace": "s"},
                                 "rules": [{"apiGroups": [""], "resources": ["pods"]}]}, 422, "rules[0].verbs"),
    ("lease duration zero", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                             "metadata": {"name": "n1", "namespace": "kube-node-lease"},
                             "spec": {"leaseDurationSeconds": 0}}, 422, "spec.leaseDurationSeconds"),
    ("maxUnavailable not a percent", deployment(strategy={"type": "RollingUpdate", "rollingUpdate": {
        "maxUnavailable": "half"}}), 422, "spec.strategy.rollingUpdate.maxUnavailable"),
    ("endpoint with a bad IP", {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "e", "namespace": "d"},
                                "subsets": [{"addresses": [{"ip": "not-an-ip"}], "ports": [{"port": 80}]}]}, 422,
     "subsets[0].addresses[0].ip"),
]


def outcome(body):
    """(status, first field, message) as the API server would answer a create."""
    obj = decode(body)
    if isinstance(obj, DecodeError):
        return obj.code, obj.field, obj.message
    errs = validate(obj)
    if errs:
        return 422, errs[0].field, invalid_message_for(obj, errs)
    return 201, "", ""


def test_table_is_large_and_varied():
    assert len(CASES) >= 30
    assert {c[2] for c in CASES} == {400, 404, 422}


@pytest.mark.parametrize("name,body,status,field", CASES, ids=[c[0] for c in CASES])
def test_invalid_object(name, body, status, field):
    got_status, got_field, message = outcome(body)
    assert (got_status, got_field) == (status, field), message


def test_valid_baselines_are_accepted():
    for body in (deployment(), pod(), service(), node(), ROLE_BINDING):
        assert outcome(body)[0] == 201, outcome(body)
