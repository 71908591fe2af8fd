"""Defaulting, as the API server's codec applies it after decoding (pkg/apis/*/v1/defaults.go).

`with_defaults(obj)` returns a new object with Kubernetes' defaults filled in; validation expects a
defaulted object, exactly as in the API server (for example an empty port protocol is "Required" only
because defaulting normally sets it to TCP). Two steps that Kubernetes does in the registry rather than in
defaults.go are included here because every create goes through them and they are pure functions of the
object: Service clusterIPs mirroring clusterIP, and Node podCIDR/podCIDRs kept in step (conversion).
"""

from __future__ import annotations

import base64
from typing import Any

from .apps import (
    Deployment, DeploymentStrategy, ReplicaSet, RollingUpdateDeployment, RollingUpdateStatefulSetStrategy, StatefulSet,
)
from .core import (
    Container, ContainerPort, EndpointPort, Endpoints, EndpointSubset, HTTPGetAction, Namespace, Node, Pod,
    PodSecurityContext, PodSpec, Probe, Service, ServicePort,
)
from .batch import NON_INDEXED, Job
from .discovery import EndpointSlice, EndpointSlicePort
from .frozendict import EMPTY_MAP, FrozenDict
from .scheduling import PREEMPT_LOWER_PRIORITY, PriorityClass
from .secrets import OPAQUE, Secret
from .fastevolve import evolve, replacer
from kmodel.memo import POD_SPEC_MEMO_SIZE, identity_memo
from .rbac import GROUP as RBAC_GROUP, ClusterRoleBinding, RoleBinding, Subject



def with_defaults(obj: Any) -> Any:
    """obj with defaults applied (the same object when nothing changes)."""
    fn = _BY_KIND.get(type(obj))
    return fn(obj) if fn else obj


def _probe(p: Probe | None) -> Probe | None:
    if p is None:
        return None
    changes: dict[str, Any] = {}
    if p.timeout_seconds == 0:
        changes["timeout_seconds"] = 1
    if p.period_seconds == 0:
        changes["period_seconds"] = 10
    if p.success_threshold == 0:
        changes["success_threshold"] = 1
    if p.failure_threshold == 0:
        changes["failure_threshold"] = 3
    if p.http_get is not None:
        h = p.http_get
        hc: dict[str, Any] = {}
        if not h.path:
            hc["path"] = "/"
        if not h.scheme:
            hc["scheme"] = "HTTP"
        if hc:
            changes["http_get"] = evolve(h, **hc)
    return evolve(p, **changes) if changes else p


def _pull_policy(image: str) -> str:
    """IfNotPresent unless the image has no tag or the tag is :latest (a digest counts as pinned)."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    if ":" not in last:
        return "Always"
    return "Always" if last.rsplit(":", 1)[1] == "latest" else "IfNotPresent"


def _container(c: Container, host_network: bool, requests_from_limits: bool) -> Container:
    changes: dict[str, Any] = {}
    if not c.image_pull_policy:
        changes["image_pull_policy"] = _pull_policy(c.image)
    if not c.termination_message_path:
        changes["termination_message_path"] = "/dev/termination-log"
    if not c.termination_message_policy:
        changes["termination_message_policy"] = "File"
    if c.ports:
        ports = []
        for p in c.ports:
            pc: dict[str, Any] = {}
            if not p.protocol:
                pc["protocol"] = "TCP"
            if host_network and p.host_port == 0:
                pc["host_port"] = p.container_port
            ports.append(evolve(p, **pc) if pc else p)
        if type(c.ports) is not tuple or any(new is not old for new, old in zip(ports, c.ports)):
            changes["ports"] = tuple(ports)
    for name in ("liveness_probe", "readiness_probe", "startup_probe"):
        p = getattr(c, name)
        if p is not None:
            defaulted = _probe(p)
            if defaulted is not p:
                changes[name] = defaulted
    r = c.resources
    if requests_from_limits and r.limits:
        missing = {k: v for k, v in r.limits.items() if k not in r.requests}
        if missing:
            changes["resources"] = evolve(r, requests=FrozenDict({**r.requests, **missing}))
    return evolve(c, **changes) if changes else c


def pod_spec_defaults(spec: PodSpec, *, requests_from_limits: bool = False) -> PodSpec:
    """SetDefaults_PodSpec plus each container's defaults (requests from limits only for Pods).

    Memoised per spec object: pods made from one template share its spec, and so share the defaulted one
    (which then hits the validation memo too)."""
    return _pod_spec_defaults_memo(spec, requests_from_limits)


def _pod_spec_defaults(spec: PodSpec, requests_from_limits: bool) -> PodSpec:
    hn = spec.host_network
    changes: dict[str, Any] = {}
    containers = tuple(_container(c, hn, requests_from_limits) for c in spec.containers)
    if any(new is not old for new, old in zip(containers, spec.containers)):
        changes["containers"] = containers
    if spec.init_containers:
        init = tuple(_container(c, hn, requests_from_limits) for c in spec.init_containers)
        if any(new is not old for new, old in zip(init, spec.init_containers)):
            changes["init_containers"] = init
    if not spec.dns_policy:
        changes["dns_policy"] = "ClusterFirst"
    if not spec.restart_policy:
        changes["restart_policy"] = "Always"
    if spec.termination_grace_period_seconds is None:
        changes["termination_grace_period_seconds"] = 30
    if spec.security_context is None:
        changes["security_context"] = PodSecurityContext()
    if not spec.scheduler_name:
        changes["scheduler_name"] = "default-scheduler"
    # an already defaulted spec (one read back from the store) comes back as itself, so the memos keyed
    # on it (validation's) still hit
    return evolve(spec, **changes) if changes else spec


_pod_spec_defaults_memo = identity_memo(_pod_spec_defaults, maxsize=POD_SPEC_MEMO_SIZE, extra=True)


def _pod_spec(spec: PodSpec) -> PodSpec:
    spec = _pod_spec_defaults(spec, True)
    if spec.enable_service_links is None:
        spec = evolve(spec, enable_service_links=True)
    return spec


# pods of one template share one spec object, and so share one defaulted spec (validation memoises on it)
_pod_spec_memo = identity_memo(_pod_spec, maxsize=POD_SPEC_MEMO_SIZE)


_pod_with_spec = replacer(Pod, "spec")


def _pod(pod: Pod) -> Pod:
    spec = _pod_spec_memo(pod.spec)
    return pod if spec is pod.spec else _pod_with_spec(pod, spec)


def _template(t: Any) -> Any:
    spec = pod_spec_defaults(t.spec)
    return t if spec is t.spec else evolve(t, spec=spec)


def _changed_template(s: Any) -> dict[str, Any]:
    """The changes of a workload's spec so far: its template defaulted, if that changed it."""
    template = _template(s.template)
    return {} if template is s.template else {"template": template}


# A workload read back from the store is defaulted already: it comes back as itself (no copy of its spec, its
# template or its strategy), so what shares it (the fingerprint memo, validation's memos) still hits.
def _deployment(d: Deployment) -> Deployment:
    s = d.spec
    changes = _changed_template(s)
    if s.replicas is None:
        changes["replicas"] = 1
    strategy = s.strategy
    if not strategy.type:
        strategy = evolve(strategy, type="RollingUpdate")
    if strategy.type == "RollingUpdate":
        ru = strategy.rolling_update or RollingUpdateDeployment()
        if ru.max_unavailable is None:
            ru = evolve(ru, max_unavailable="25%")
        if ru.max_surge is None:
            ru = evolve(ru, max_surge="25%")
        if ru is not strategy.rolling_update:
            strategy = evolve(strategy, rolling_update=ru)
    if strategy is not s.strategy:
        changes["strategy"] = strategy
    if s.revision_history_limit is None:
        changes["revision_history_limit"] = 10
    if s.progress_deadline_seconds is None:
        changes["progress_deadline_seconds"] = 600
    return evolve(d, spec=evolve(s, **changes)) if changes else d


def _replicaset(rs: ReplicaSet) -> ReplicaSet:
    s = rs.spec
    changes = _changed_template(s)
    if s.replicas is None:
        changes["replicas"] = 1
    return evolve(rs, spec=evolve(s, **changes)) if changes else rs


def _statefulset(sts: StatefulSet) -> StatefulSet:
    """SetDefaults_StatefulSet: OrderedReady, RollingUpdate with partition 0, one replica, ten revisions kept."""
    s = sts.spec
    changes = _changed_template(s)
    if not s.pod_management_policy:
        changes["pod_management_policy"] = "OrderedReady"
    strategy = s.update_strategy
    if not strategy.type:
        strategy = evolve(strategy, type="RollingUpdate")
    if strategy.type == "RollingUpdate":
        ru = strategy.rolling_update or RollingUpdateStatefulSetStrategy()
        if ru.partition is None:
            ru = evolve(ru, partition=0)
        if ru is not strategy.rolling_update:
            strategy = evolve(strategy, rolling_update=ru)
    if strategy is not s.update_strategy:
        changes["update_strategy"] = strategy
    if s.replicas is None:
        changes["replicas"] = 1
    if s.revision_history_limit is None:
        changes["revision_history_limit"] = 10
    return evolve(sts, spec=evolve(s, **changes)) if changes else sts


def _job(job: Job) -> Job:
    """SetDefaults_Job: completions and parallelism both 1 when neither is set, parallelism 1, backoffLimit 6,
    completionMode NonIndexed, suspend false, podReplacementPolicy TerminatingOrFailed, and the Job's labels
    from its template's when it has none."""
    s = job.spec
    changes = _changed_template(s)
    if s.completions is None and s.parallelism is None:
        changes["completions"] = 1
    if s.parallelism is None:
        changes["parallelism"] = 1
    if s.backoff_limit is None:
        changes["backoff_limit"] = 6
    if s.completion_mode is None:
        changes["completion_mode"] = NON_INDEXED
    if s.suspend is None:
        changes["suspend"] = False
    if s.pod_replacement_policy is None:
        changes["pod_replacement_policy"] = "TerminatingOrFailed"
    meta = job.metadata
    if s.template.metadata.labels and not meta.labels:
        meta = evolve(meta, labels=s.template.metadata.labels)
    if not changes and meta is job.metadata:
        return job
    return evolve(job, metadata=meta, spec=evolve(s, **changes) if changes else s)


def _priority_class(pc: PriorityClass) -> PriorityClass:
    """SetDefaults_PriorityClass: preemptionPolicy PreemptLowerPriority."""
    return pc if pc.preemption_policy is not None else evolve(pc, preemption_policy=PREEMPT_LOWER_PRIORITY)


def _secret(secret: Secret) -> Secret:
    """SetDefaults_Secret (type Opaque), and stringData merged into data as base64 text: upstream's conversion to
    the internal type does the merge (a key in both takes stringData's value), so stringData is never stored."""
    changes: dict[str, Any] = {}
    if not secret.type:
        changes["type"] = OPAQUE
    if secret.string_data:
        data = dict(secret.data)
        for key in sorted(secret.string_data):
            data[key] = base64.b64encode(secret.string_data[key].encode()).decode()
        changes["data"] = FrozenDict(data)
        changes["string_data"] = EMPTY_MAP
    return evolve(secret, **changes) if changes else secret


def _service(svc: Service) -> Service:
    s = svc.spec
    changes: dict[str, Any] = {}
    svc_type = s.type or "ClusterIP"
    if not s.type:
        changes["type"] = svc_type
    if not s.session_affinity:
        changes["session_affinity"] = "None"
    ports = []
    for p in s.ports:
        pc: dict[str, Any] = {}
        if not p.protocol:
            pc["protocol"] = "TCP"
        if p.target_port in (None, 0, ""):
            pc["target_port"] = p.port
        ports.append(evolve(p, **pc) if pc else p)
    if type(s.ports) is not tuple or any(new is not old for new, old in zip(ports, s.ports)):
        changes["ports"] = tuple(ports)
    if svc_type in ("NodePort", "LoadBalancer") and not s.external_traffic_policy:
        changes["external_traffic_policy"] = "Cluster"
    if svc_type != "ExternalName" and s.internal_traffic_policy is None:
        changes["internal_traffic_policy"] = "Cluster"
    if s.cluster_ip and not s.cluster_ips:
        changes["cluster_ips"] = (s.cluster_ip,)
    elif s.cluster_ips and not s.cluster_ip:
        changes["cluster_ip"] = s.cluster_ips[0]
    return evolve(svc, spec=evolve(s, **changes)) if changes else svc


def _endpoints(ep: Endpoints) -> Endpoints:
    def port(p: EndpointPort) -> EndpointPort:
        return p if p.protocol else evolve(p, protocol="TCP")

    def subset(s: EndpointSubset) -> EndpointSubset:
        ports = tuple(port(p) for p in s.ports)
        changed = type(s.ports) is not tuple or any(new is not old for new, old in zip(ports, s.ports))
        return evolve(s, ports=ports) if changed else s

    subsets = tuple(subset(s) for s in ep.subsets)
    changed = type(ep.subsets) is not tuple or any(new is not old for new, old in zip(subsets, ep.subsets))
    return evolve(ep, subsets=subsets) if changed else ep


def _endpointslice(eps: EndpointSlice) -> EndpointSlice:
    """discovery/v1 SetDefaults_EndpointPort: an unset port name is "", an unset protocol TCP."""
    def port(p: EndpointSlicePort) -> EndpointSlicePort:
        if p.name is not None and p.protocol is not None:
            return p
        return evolve(p, name="" if p.name is None else p.name, protocol=p.protocol or "TCP")

    ports = tuple(port(p) for p in eps.ports)
    changed = type(eps.ports) is not tuple or any(new is not old for new, old in zip(ports, eps.ports))
    return evolve(eps, ports=ports) if changed else eps


def _node(node: Node) -> Node:
    spec, status = node.spec, node.status
    if spec.pod_cidrs and spec.pod_cidr != spec.pod_cidrs[0]:
        spec = evolve(spec, pod_cidr=spec.pod_cidrs[0])
    elif spec.pod_cidr and not spec.pod_cidrs:
        spec = evolve(spec, pod_cidrs=(spec.pod_cidr,))
    if status.capacity and not status.allocatable:
        status = evolve(status, allocatable=status.capacity)
    if spec is node.spec and status is node.status:
        return node
    return evolve(node, spec=spec, status=status)


def _namespace(ns: Namespace) -> Namespace:
    if ns.status.phase:
        return ns
    return evolve(ns, status=evolve(ns.status, phase="Active"))


def _subject(s: Subject) -> Subject:
    if s.api_group or s.kind not in ("User", "Group"):
        return s
    return evolve(s, api_group=RBAC_GROUP)


def _binding(b: Any) -> Any:
    role_ref = b.role_ref if b.role_ref.api_group else evolve(b.role_ref, api_group=RBAC_GROUP)
    subjects = tuple(_subject(s) for s in b.subjects)
    if role_ref is b.role_ref and type(b.subjects) is tuple and all(new is old for new, old in zip(subjects, b.subjects)):
        return b
    return evolve(b, role_ref=role_ref, subjects=subjects)


_BY_KIND = {
    Pod: _pod,
    Deployment: _deployment,
    ReplicaSet: _replicaset,
    StatefulSet: _statefulset,
    Service: _service,
    Endpoints: _endpoints,
    EndpointSlice: _endpointslice,
    Node: _node,
    Namespace: _namespace,
    RoleBinding: _binding,
    ClusterRoleBinding: _binding,
    Job: _job,
    Secret: _secret,
    PriorityClass: _priority_class,
}

__all__ = ["with_defaults", "pod_spec_defaults", "ContainerPort", "ServicePort", "HTTPGetAction",
           "DeploymentStrategy"]
