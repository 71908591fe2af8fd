"""service-reachability does not judge a Service being deleted that a finalizer keeps: upstream's EndpointSlice
controller makes no new slice for it, so its clients may find no endpoints (the 6-step trace a --fix all run found
before the rule: a finalizer added, then `kubectl delete service web --cascade=orphan`)."""

from __future__ import annotations

from pathlib import Path

from kmodel.checker.session import Session, all_invariants
from kmodel.checker.trace import fitted, read_trace
from kmodel.invariants.registry import REGISTRY

TRACE = Path(__file__).parents[1] / "checker" / "fixtures" / "held-service-deleted-with-orphan.json"


def test_a_held_service_being_deleted_is_not_judged_and_its_clients_find_no_endpoints():
    trace = read_trace(TRACE)
    session = Session(trace.config, all_invariants())
    for action in fitted(trace, session.boot_revision).actions:
        session.execute(action)
    assert session.violation is None
    cluster = session.cluster
    web = cluster.get("services", "default", "web")
    assert web is not None and web.metadata.deletion_timestamp is not None
    client = cluster.loop.components["traffic/node-1"]
    assert not client.route("default/web").destinations  # what the invariant leaves unjudged
    assert list(REGISTRY["service-reachability"].check(cluster, {})) == []
