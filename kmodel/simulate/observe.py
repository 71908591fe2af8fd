"""What a user would look at after a simulation, as one JSON-ready dict (the `--json` shape).

    {"time": seconds,
     "nodes": [{"name", "podCIDR", "conditions": {type: status}, "taints": ["key:Effect", ...]}],
     "pods": [{"namespace", "name", "phase", "node", "ip", "terminating", "conditions": {type: status},
               "reason", "message"}],
     "deployments": [{"namespace", "name", "replicas", "ready", "updated", "available"}],
     "replicasets": [{"namespace", "name", "owner", "desired", "current", "ready"}],
     "services": [{"namespace", "name", "clusterIP", "endpoints": ["ip:port", ...]}],
     "proxy": {node: {"clusterIP:port": ["ip:port", ...]}},
     "custom_objects": [{"apiVersion", "kind", "namespace", "name"}],
     "events": [{"time", "type", "reason", "object", "message"}],
     "rejected": [{"code", "reason", "message", "object"}],
     "control_plane": {"etcd": "up" | "down", "apiservers": [{"name", "up", "reachable", "reaches_etcd"}],
                       "serving": bool, "down": [component, ...]}}

`control_plane` says whether kubectl could be answered at the end: etcd up, and some API server up, reachable
from kubectl and reaching etcd (`serving`); `reachable` and `reaches_etcd` are the network's view of each
link (a partition), `down` every component down at the end (crashed, or a machine switched off). When nothing
serves, `kubectl get` would fail: the tables still show the store's last state, which is what it would show
once the control plane is back.

Everything is read from the store (as `kubectl get` would show it through a consistent read) and from each
kube-proxy's rules table; lists come in a stable order (namespace, name; events by time, then the order they were written). A pod's
reason/message are its status' own, or else those of its first condition that is not True (the
`Unschedulable` reason and `0/N nodes are available` message of a pod the scheduler could not place).
"""

from __future__ import annotations

from typing import Any

from kmodel.apiserver import customresources
from kmodel.cluster import Cluster
from kmodel.cluster.kubectl import CommandResult, describe


def _seconds(ms: int | None) -> float | None:
    return None if ms is None else ms / 1000


def _taint(t: Any) -> str:
    return f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"


def nodes(cluster: Cluster) -> list[dict]:
    return [{
        "name": n.metadata.name,
        "podCIDR": n.spec.pod_cidr,
        "conditions": {c.type: c.status for c in n.status.conditions},
        "taints": [_taint(t) for t in n.spec.taints],
    } for n in cluster.objects("nodes")]


def _pod_reason(pod: Any) -> tuple[str, str]:
    status = pod.status
    if status.reason or status.message:
        return status.reason, status.message
    for c in status.conditions:
        if c.status != "True" and (c.reason or c.message):
            return c.reason, c.message
    return "", ""


def pods(cluster: Cluster) -> list[dict]:
    found = []
    for p in cluster.objects("pods"):
        reason, message = _pod_reason(p)
        found.append({
            "namespace": p.metadata.namespace,
            "name": p.metadata.name,
            "phase": p.status.phase,
            "node": p.spec.node_name,
            "ip": p.status.pod_ip,
            "terminating": p.metadata.deletion_timestamp is not None,
            "conditions": {c.type: c.status for c in p.status.conditions},
            "reason": reason,
            "message": message,
        })
    return sorted(found, key=lambda d: (d["namespace"], d["name"]))


def deployments(cluster: Cluster) -> list[dict]:
    found = [{
        "namespace": d.metadata.namespace,
        "name": d.metadata.name,
        "replicas": d.spec.replicas if d.spec.replicas is not None else 1,
        "ready": d.status.ready_replicas,
        "updated": d.status.updated_replicas,
        "available": d.status.available_replicas,
    } for d in cluster.objects("deployments")]
    return sorted(found, key=lambda d: (d["namespace"], d["name"]))


def replicasets(cluster: Cluster) -> list[dict]:
    found = []
    for rs in cluster.objects("replicasets"):
        owner = next((f"{ref.kind.lower()}/{ref.name}" for ref in rs.metadata.owner_references if ref.controller),
                     "")
        found.append({
            "namespace": rs.metadata.namespace,
            "name": rs.metadata.name,
            "owner": owner,
            "desired": rs.spec.replicas if rs.spec.replicas is not None else 1,
            "current": rs.status.replicas,
            "ready": rs.status.ready_replicas,
        })
    return sorted(found, key=lambda d: (d["namespace"], d["name"]))


def control_plane(cluster: Cluster) -> dict:
    loop = cluster.loop
    network = loop.network
    etcd_up = loop.is_up("etcd")
    apiservers = [{
        "name": name,
        "up": loop.is_up(name),
        "reachable": network.can_reach("kubectl", name),
        "reaches_etcd": network.can_reach(name, "etcd"),
    } for name in sorted(n for n in loop.components if n.startswith("apiserver-"))]
    serving = etcd_up and any(a["up"] and a["reachable"] and a["reaches_etcd"] for a in apiservers)
    return {"etcd": "up" if etcd_up else "down", "apiservers": apiservers, "serving": serving,
            "down": loop.down_components()}


def _endpoint_list(endpoints: Any) -> list[str]:
    if endpoints is None:
        return []
    return sorted(f"{a.ip}:{port.port}" for s in endpoints.subsets for a in s.addresses for port in s.ports)


def services(cluster: Cluster) -> list[dict]:
    eps = {(e.metadata.namespace, e.metadata.name): e for e in cluster.objects("endpoints")}
    found = [{
        "namespace": s.metadata.namespace,
        "name": s.metadata.name,
        "clusterIP": s.spec.cluster_ip,
        "endpoints": _endpoint_list(eps.get((s.metadata.namespace, s.metadata.name))),
    } for s in cluster.objects("services")]
    return sorted(found, key=lambda d: (d["namespace"], d["name"]))


def proxy(cluster: Cluster) -> dict[str, dict[str, list[str]]]:
    tables = {}
    for c in cluster.components:
        if c.name.startswith("proxy/"):
            rules = getattr(c, "rules", {}) or {}
            tables[c.name.partition("/")[2]] = {k: list(v) for k, v in sorted(rules.items())}
    return dict(sorted(tables.items()))


def events(cluster: Cluster) -> list[dict]:
    found = []
    for e in cluster.objects("events"):
        ref = e.involved_object
        time_ms = e.last_timestamp if e.last_timestamp is not None else e.event_time
        written = int(e.metadata.resource_version or 0)  # the order the API server took them in
        found.append(((time_ms or 0, written, e.metadata.namespace, e.metadata.name), {
            "time": _seconds(time_ms),
            "type": e.type,
            "reason": e.reason,
            "object": f"{ref.kind.lower()}/{ref.name}",
            "message": e.message,
        }))
    return [d for _, d in sorted(found, key=lambda x: x[0])]


def custom_objects(cluster: Cluster) -> list[dict]:
    """The objects of every custom resource an Established CRD serves (kubectl get <plural> -A for each CRD), by
    CRD name, then namespace and name; "" as the namespace of a cluster-scoped one."""
    found = []
    for crd in customresources.crds(cluster.store):
        if not customresources.established(crd):
            continue
        for obj in cluster.objects(crd.status.accepted_names.plural):
            found.append({"apiVersion": obj.api_version, "kind": obj.kind,
                          "namespace": obj.metadata.namespace, "name": obj.metadata.name})
    return found


def leases(cluster: Cluster) -> list[dict]:
    """The leader-election Leases (kube-system): who holds each and when it last renewed (kubectl get lease -n
    kube-system). Empty with --leader-elect=false, where nothing elects."""
    return [{"namespace": lease.metadata.namespace, "name": lease.metadata.name,
             "holder": lease.spec.holder_identity or "", "renewTime": _seconds(lease.spec.renew_time)}
            for lease in cluster.objects("leases", "kube-system")]


def rejected(results: list[CommandResult]) -> list[dict]:
    out = []
    for r in results:
        if r.ok:
            continue
        status = r.response.body
        out.append({
            "code": r.response.code,
            "reason": getattr(status, "reason", ""),
            "message": getattr(status, "message", str(status)),
            "object": describe(r.command),
        })
    return out


def snapshot(cluster: Cluster) -> dict:
    return {
        "time": cluster.now / 1000,
        "nodes": nodes(cluster),
        "pods": pods(cluster),
        "deployments": deployments(cluster),
        "replicasets": replicasets(cluster),
        "services": services(cluster),
        "proxy": proxy(cluster),
        "custom_objects": custom_objects(cluster),
        "events": events(cluster),
        "leases": leases(cluster),
        "rejected": rejected(cluster.kubectl.results),
        "control_plane": control_plane(cluster),
    }
