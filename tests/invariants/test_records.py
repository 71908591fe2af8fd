"""Declared records (kmodel.invariants.records): what each invariant and sometimes property reads of the
components, declared by them, read loudly, and listed here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kmodel.invariants import sometimes  # noqa: F401  (registers the sometimes properties)
from kmodel.invariants.records import MissingRecord, UndeclaredRecord, declares, record, reads
from kmodel.invariants.registry import registered, registered_sometimes
from kmodel.apiserver.authentication import TokenAuthenticator
from kmodel.apiserver.etcd_endpoint import EtcdHandle
from kmodel.apiserver.replica import APIServerReplica
from kmodel.client.api_client import ApiClient
from kmodel.client.component import ClientComponent
from kmodel.cluster import Cluster, ClusterConfig
from kmodel.controllers.deployment import DeploymentController
from kmodel.controllers.manager import ControllerManager
from kmodel.controllers.nodelifecycle import NodeLifecycleController
from kmodel.controllers.replicaset import ReplicaSetController
from kmodel.controllers.tainteviction import TaintEvictionController
from kmodel.objects import load_yaml
from kmodel.scheduler.component import Scheduler
from kmodel.store import Store
from kmodel.traffic.client import TrafficClient

INVARIANTS = Path(__file__).resolve().parents[2] / "invariants"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

CLIENT = (ClientComponent, "client")
ELECTIONS = {(ControllerManager, "elector"), (ControllerManager, "leadership"), (Scheduler, "elector"),
             (Scheduler, "leadership")}
WRITE_VIEWS = {(DeploymentController, "rs_write_views"), (ReplicaSetController, "create_views")}
ETCD_RECEIVED = {(APIServerReplica, "etcd_received")}

#: every record each invariant and sometimes property reads: (the class that declares it, the record)
READS: dict[str, set[tuple[type, str]]] = {
    "api-single-contract": {(EtcdHandle, "written")},
    "endpoints-list-real-pods": WRITE_VIEWS,
    "eviction-timing": {(NodeLifecycleController, "heard"), (TaintEvictionController, "heard")},
    "informer-no-time-travel": {CLIENT},
    "leader-acts-within-lease": ELECTIONS,
    "leader-elected-after-loss": ELECTIONS,
    "occ-no-lost-update": {CLIENT, (ApiClient, "updates")},
    "rbac-enforced": {(Store, "trackers"), (TokenAuthenticator, "tokens")},
    "replicaset-within-expectations": WRITE_VIEWS,
    "restart-no-time-travel": {CLIENT, (ApiClient, "informer_lives"), (ApiClient, "written_rvs")},
    "rollout-within-surge": WRITE_VIEWS,
    "service-reachability": {(TrafficClient, "node"), (TrafficClient, "targets")},
    "watch-atomic": ETCD_RECEIVED,
    "watch-delivers-after-start": {CLIENT},
    "watch-ordered": ETCD_RECEIVED,
    "watch-reliable": ETCD_RECEIVED,
    "watch-unique": ETCD_RECEIVED,
    # sometimes properties
    "informer-relisted": {CLIENT},
    "informer-tombstone": {CLIENT},
    "pause-outlived-lease": ELECTIONS,
    "request-retried-after": {CLIENT, (ApiClient, "retried_after")},
    "timeout-write-applied": {(APIServerReplica, "faults_answered")},
    "two-leaders-acting": ELECTIONS,
    "watch-expired-relist": {CLIENT},
}

#: reads listed above that the short run of `test_each_property_reads_the_records_listed` does not take (a path
#: it does not reach), each with why
NOT_TAKEN_BY_THE_SHORT_RUN = {
    ("eviction-timing", "TaintEvictionController.heard"): "taint eviction's log is read only once a pod was "
                                                         "evicted, and nothing is evicted in a quiet run",
}

#: getattr(x, name, default) and hasattr(x, name) left in invariants/: each reads the shape of an API object or
#: an etcd answer (data an invariant judges, where the field may be absent), never a component's record:
#: (file, attribute) -> why
DATA_SHAPE_READS = {
    ("_history.py", "deleted"): "an etcd delete response's count (DeleteRangeResponse; other ops' answers have none)",
    ("contract.py", "<field>"): "the host_network/host_pid/host_ipc fields of a pod spec",
    ("contract.py", "security_context"): "a container's optional security context",
    ("contract.py", "privileged"): "a security context's optional privileged flag",
    ("contract.py", "metadata"): "a stored value that may not be an object with metadata (a Lease's raw value)",
    ("crd.py", "api_version"): "a stored custom object's apiVersion, for the message",
    ("crd.py", "kind"): "a stored custom object's kind, for the message",
    ("namespaces.py", "metadata"): "a stored value's metadata, absent on a raw value",
    ("namespaces.py", "namespace"): "a stored value's namespace, absent on a raw value",
    ("requests.py", "metadata"): "a request's or answer's body, which may be a Status or None",
    ("requests.py", "uid"): "an object's metadata uid, absent on a partial body",
    ("sometimes_access.py", "metadata"): "a request body, which may be a Status or None",
    ("storage.py", "succeeded"): "a txn response's succeeded flag (other responses have none)",
    ("storage.py", "header_revision"): "an etcd response's header revision (compact entries have none)",
    ("storage.py", "metadata"): "a stored value's metadata, absent on a raw value",
    ("storage.py", "resource_version"): "a stored value's resourceVersion, absent on a raw value",
    ("readers.py", "<attr>"): "an attribute found by vars() on an earlier check, deleted since (None then)",
    ("records.py", "RECORDS"): "a class that declares no records (the module that reads records)",
}


def name(cls: type, attr: str) -> str:
    return f"{cls.__name__}.{attr}"


def test_every_listed_record_is_declared_by_its_class():
    for prop, records in READS.items():
        for cls, attr in records:
            assert attr in cls.__dict__.get("RECORDS", ()), f"{prop}: {name(cls, attr)} is not declared there"


def test_every_property_listed_is_registered():
    names = {inv.name for inv in registered()} | {s.name for s in registered_sometimes()}
    assert set(READS) <= names, set(READS) - names


def test_each_property_reads_the_records_listed():
    """A cluster that elects leaders runs the web example for a minute; each property, asked with a fresh memo,
    reads exactly the records listed for it (less those the run does not reach, each with its reason)."""
    cluster = Cluster(ClusterConfig(nodes=2, controller_managers=2, schedulers=2))
    cluster.apply(load_yaml((EXAMPLES / "web-service.yaml").read_text()))
    cluster.run(60_000)
    read: dict[str, set[str]] = {}
    for inv in registered():
        with reads() as seen:
            list(inv.check(cluster, {}))
        read[inv.name] = seen
    for prop in registered_sometimes():
        with reads() as seen:
            prop.reached(cluster, {})
        read[prop.name] = seen
    for prop, seen in sorted(read.items()):
        listed = {name(cls, attr) for cls, attr in READS.get(prop, ())}
        expected = {r for r in listed if (prop, r) not in NOT_TAKEN_BY_THE_SHORT_RUN}
        assert seen == expected, (prop, sorted(seen), sorted(expected))


def _record_calls() -> set[str]:
    """Every record name read or asked for in invariants/ (the literal second argument of record/declares)."""
    found = set()
    for path in INVARIANTS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("record", "declares") and len(node.args) == 2):
                arg = node.args[1]
                found.add(arg.value if isinstance(arg, ast.Constant) else f"<{ast.unparse(arg)}>")
    return found


def test_every_record_the_invariants_name_is_listed():
    listed = {attr for records in READS.values() for _, attr in records}
    # workloads.py reads its controllers' write views by a name it is given (`attr`)
    assert _record_calls() - {"<attr>"} <= listed, _record_calls() - listed
    assert listed <= _record_calls() | {"rs_write_views", "create_views"}, listed - _record_calls()


def test_no_silent_reads_of_components_in_invariants():
    """getattr with a default and hasattr in invariants/ read only the shapes of data (DATA_SHAPE_READS): a
    component's record is read with `record`, which fails loudly."""
    found = set()
    for path in sorted(INVARIANTS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and (node.func.id == "hasattr" or (node.func.id == "getattr" and len(node.args) == 3))):
                arg = node.args[1]
                found.add((path.name, arg.value if isinstance(arg, ast.Constant) else f"<{ast.unparse(arg)}>"))
    assert found == set(DATA_SHAPE_READS), (sorted(found - set(DATA_SHAPE_READS)),
                                            sorted(set(DATA_SHAPE_READS) - found))


class _Keeper:
    RECORDS = frozenset({"log", "lost"})

    def __init__(self) -> None:
        self.log = [1]
        self.other = [2]


def test_a_record_read_is_loud_when_undeclared_or_missing():
    keeper = _Keeper()
    assert record(keeper, "log") == [1]
    with pytest.raises(UndeclaredRecord, match="_Keeper declares no record 'other'"):
        record(keeper, "other")
    with pytest.raises(MissingRecord, match="_Keeper declares the record 'lost' but has no such attribute"):
        record(keeper, "lost")
    assert declares(keeper, "lost") and not declares(keeper, "other") and not declares(None, "log")


def test_a_renamed_record_fails_the_invariant_that_reads_it():
    """A node lifecycle controller whose `heard` log is renamed (the declaration kept) makes eviction-timing
    fail loudly instead of judging nothing."""
    cluster = Cluster(ClusterConfig(nodes=1))
    cluster.run(5_000)
    [ctrl] = [c for c in cluster.loop.components.values() if type(c) is NodeLifecycleController]
    ctrl.heard_renamed = ctrl.__dict__.pop("heard")
    [inv] = [inv for inv in registered() if inv.name == "eviction-timing"]
    with pytest.raises(MissingRecord, match="NodeLifecycleController declares the record 'heard'"):
        list(inv.check(cluster, {}))
