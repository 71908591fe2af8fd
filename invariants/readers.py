"""What the sometimes properties read: the audit trail, the store's changes and the components' informers,
each from where a property last looked (its memo), so that a check costs what the step did; and the names of
the users and registry prefixes they match on. Every family of properties (sometimes.py, sometimes_*.py) reads
through these, and none imports another family's helpers.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from kmodel.client.informer import Informer
from kmodel.invariants import _paths
from kmodel.invariants._history import audit_since, change_feed
from kmodel.invariants.records import declares, record
from kmodel.invariants.registry import CHECK, SHARED

KCM = "system:serviceaccount:kube-system:"
NODE_CONTROLLER = KCM + "node-controller"  # node lifecycle, node IPAM and taint eviction, as upstream
GARBAGE_COLLECTOR = KCM + "generic-garbage-collector"
POD_GC = KCM + "pod-garbage-collector"
SCHEDULER = "system:kube-scheduler"
REPLICASETS = "/registry/replicasets/"
ENDPOINTS = "/registry/services/endpoints/"
#: how a kubelet's admission refusal begins its message (kubelet rejectPod: "Pod was rejected: ...")
REJECTED = "Pod was rejected: "


def new_audit(cluster: Any, memo: dict) -> Any:
    """The audit records handled since this property last looked."""
    records = cluster.audit.records
    start, end = memo.get("pos", 0), len(records)
    memo["pos"] = end
    return audit_since(cluster, memo, start, end) if start != end else ()


def audited(cluster: Any, memo: dict, match: Callable[[Any], bool]) -> bool:
    return any(match(r) for r in new_audit(cluster, memo))


def changes(cluster: Any, memo: dict, prefix: str) -> list:
    feed = memo.get("feed")
    if feed is None:
        feed = memo["feed"] = change_feed(memo, (prefix,))
    return feed.read(cluster.store)


def _holds_informers(attr: str, value: Any) -> bool:
    # a controller's `informers` list is empty while it is down
    return type(value) is Informer or (type(value) is list and (attr == "informers" or (
        bool(value) and type(value[0]) is Informer)))


def informers(cluster: Any, memo: dict) -> list[Informer]:
    """Every informer of every component (`_find_informers`), found once per check of the runner (registry.CHECK)
    for every property that asks in that check: the cluster does not change while they are asked."""
    home = memo.get(SHARED)
    check = home.get(CHECK) if home is not None else None
    if check is None or _paths.REFERENCE:
        return list(_find_informers(cluster, memo))
    found = home.get("informers")
    if found is None or found[0] != check:
        found = home["informers"] = (check, list(_find_informers(cluster, home.setdefault("informers-where", {}))))
    return found[1]


def _find_informers(cluster: Any, memo: dict) -> Iterator[Informer]:
    """Every informer of every component: a controller's list of them, a kubelet's, scheduler's or
    kube-proxy's own attributes. Where they are is found once (and again when components come: a node
    added), as (component, attribute) pairs: a component keeps its informers under the same attributes in
    every life, its restarts replacing the informers, not the attributes."""
    components = cluster.loop.components
    where = memo.get("where")
    if where is None or memo.get("components") != len(components):
        where = memo["where"] = [(components[name], attr) for name in sorted(components)
                                 for attr, value in vars(components[name]).items() if _holds_informers(attr, value)]
        memo["components"] = len(components)
    for component, attr in where:
        value = getattr(component, attr, None)  # an attribute `where` found it has: None if it was deleted
        # a process's shared informers are its SharedInformers' (a component without a client holds none)
        client = record(component, "client") if declares(component, "client") else None
        if type(value) is Informer:
            if value.client is client:
                yield value
        elif type(value) is list:
            for inf in value:
                if inf.client is client:
                    yield inf
