"""Snapshots: a restored session is the snapshotted one to the bit, independent of it and of other copies, and
a campaign started from a snapshot makes exactly the moves of one that builds every example from scratch."""

from __future__ import annotations

import hashlib
import random

import pytest

from kmodel.checker.actions import ApplyDeployment, ApplyService, Fault, RemoveNode, RunFair, Settle
from kmodel.checker.machine import KmodelMachine
from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.checker.session import Session, all_invariants
from kmodel.checker.snapshot import Snapshot, SnapshotError
from kmodel.checker.stats import Stats
from kmodel.cluster import ClusterConfig
from kmodel.loop.events import Crash, Partition

from tests.checker.conftest import SmallMachine

CONFIG = ClusterConfig(nodes=2, apiservers=2, seed=5)
ACTIONS = [ApplyDeployment("web", 3), ApplyService("web"), RunFair(3_000), Fault(Crash("controller/replicaset")),
           Fault(Partition(("kubelet/node-2",))), RunFair(20_000), RemoveNode("node-1"),
           Settle(600_000, check_at_once=True)]


def warmed(stats: Stats) -> tuple[Session, list]:
    invariants = all_invariants()
    session = Session(CONFIG, invariants, stats=stats)
    session.execute(RunFair(15_000))
    return session, invariants


def test_a_restored_session_makes_the_moves_of_a_fresh_one_and_copies_are_independent():
    stats = Stats()
    template, invariants = warmed(stats)
    snapshot = Snapshot(template, shared=(stats, *invariants))
    first, second = snapshot.restore(), snapshot.restore()
    assert first is not second and first.cluster is not template.cluster
    assert first.digest() == template.digest() and first.stats is stats
    fresh, _ = warmed(Stats())
    for action in ACTIONS:
        fresh.execute(action)
        first.execute(action)
    assert first.digest() == fresh.digest() and first.cluster.now == fresh.cluster.now
    assert first.cluster.store.revision == fresh.cluster.store.revision
    # the other copy and the template never saw those actions
    assert second.digest() == template.digest() and len(second.actions) == len(template.actions) == 1
    assert second.cluster.store.revision == template.cluster.store.revision < first.cluster.store.revision


def test_restored_closures_act_on_the_copy_and_immutable_values_are_shared():
    stats = Stats()
    template, invariants = warmed(stats)
    copy = Snapshot(template, shared=(stats, *invariants)).restore()
    # etcd wakes its own loop: a write through the copy's API server queues work on the copy's loop only
    copy.execute(ApplyDeployment("web", 1))
    copy.cluster.run_for(1)
    assert copy.cluster.loop.events_applied > template.cluster.loop.events_applied
    assert template.cluster.get("deployments", "default", "web") is None
    assert copy.cluster.get("deployments", "default", "web") is not None
    # immutable values are the very same objects, in a store that is the copy's own
    node = template.cluster.get("nodes", "", "node-1")
    assert copy.cluster.get("nodes", "", "node-1") is node and copy.cluster.store is not template.cluster.store


def test_what_cannot_be_snapshotted_is_refused():
    with pytest.raises(SnapshotError):
        Snapshot({"gen": (i for i in range(3))})


def test_a_running_hash_is_restored_as_a_copy_of_its_state():
    h = hashlib.blake2b(digest_size=16)
    h.update(b"abc")
    snapshot = Snapshot({"h": h})
    a, b = snapshot.restore()["h"], snapshot.restore()["h"]
    a.update(b"more")
    assert b.hexdigest() == h.hexdigest() != a.hexdigest()


def test_a_random_generator_is_restored_in_its_state_and_each_copy_draws_on_its_own():
    rng = random.Random("seed")
    rng.random()
    snapshot = Snapshot({"rng": rng, "again": rng})
    expected = [rng.random() for _ in range(3)]  # the original moves on; the snapshot keeps where it was
    a, b = snapshot.restore(), snapshot.restore()
    assert a["rng"] is a["again"] and a["rng"] is not b["rng"]
    assert [a["rng"].random() for _ in range(3)] == expected
    assert [b["rng"].random() for _ in range(3)] == expected


def test_tuples_of_immutable_values_are_shared_and_tuples_holding_mutable_ones_are_copied():
    frozen, holding = ("a", (1, 2.5)), ("a", [1])
    snapshot = Snapshot({"frozen": frozen, "holding": holding, "empty": ()})
    a, b = snapshot.restore(), snapshot.restore()
    assert a["frozen"] is b["frozen"] is frozen
    assert a["holding"] == holding and a["holding"] is not holding and a["holding"][1] is not b["holding"][1]
    assert a["empty"] == ()


def test_a_long_int_is_shared_and_a_short_one_is_pickled_as_itself():
    bitmap = (1 << 100_000) | 5
    snapshot = Snapshot({"bitmap": [bitmap], "small": [7]})
    a, b = snapshot.restore(), snapshot.restore()
    assert a["bitmap"][0] is b["bitmap"][0] is bitmap and a["bitmap"] is not b["bitmap"]
    assert a["small"] == [7] and len(snapshot.table) == 1


class _Fresh(KmodelMachine):
    snapshot_warmup = False


class _FromSnapshot(KmodelMachine):
    snapshot_warmup = True


def test_a_campaign_from_a_snapshot_has_the_trace_digest_of_one_built_from_scratch():
    options = CheckOptions(examples=4, steps=12, seed=2, nodes=2)
    fresh = run_campaign(options, machine=_Fresh)
    snapped = run_campaign(options, machine=_FromSnapshot)
    assert fresh.failure is None and snapped.failure is None
    assert snapped.stats.trace_digest() == fresh.stats.trace_digest()
    assert snapped.stats.steps == fresh.stats.steps and snapped.stats.rules == fresh.stats.rules
    # the snapshot's warmup events are counted once, not once per example
    assert snapped.stats.events < fresh.stats.events


def test_a_disposed_session_is_freed_without_the_cyclic_collector_and_copies_stay_intact():
    import gc
    import weakref

    stats = Stats()
    template, invariants = warmed(stats)
    snapshot = Snapshot(template, shared=(stats, *invariants))
    expected = snapshot.restore()
    for action in ACTIONS:
        expected.execute(action)
    gc.collect()
    gc.disable()
    try:
        doomed = snapshot.restore()
        for action in ACTIONS:
            doomed.execute(action)
        store, kubelet = weakref.ref(doomed.cluster.store), weakref.ref(doomed.cluster.loop.components["kubelet/node-1"])
        doomed.dispose()
        del doomed
        assert store() is None and kubelet() is None  # freed by reference counting alone
        undisposed = snapshot.restore()
        undisposed.execute(ACTIONS[0])
        store = weakref.ref(undisposed.cluster.store)
        del undisposed
        assert store() is not None  # a session that is only dropped waits for the cyclic collector
    finally:
        gc.enable()
    # the shared values (the snapshot's immutable objects, the campaign's Stats) were not touched
    again = snapshot.restore()
    for action in ACTIONS:
        again.execute(action)
    assert again.digest() == expected.digest() and again.stats is stats and vars(stats)


def _cleared_by_dispose(session: Session) -> list[tuple[str, str, object]]:
    """What Session.dispose clears besides the components themselves: (component, attribute, value)."""
    found = []
    for name, component in session.cluster.loop.components.items():
        for attribute, value in vars(component).items():
            if type(getattr(value, "__dict__", None)) is dict and type(value).__module__.startswith("kmodel."):
                found.append((name, attribute, value))
    return found


@pytest.mark.parametrize("variant", ["default", "polling", "pessimistic-locking", "bypass-apiserver"])
def test_dispose_clears_only_what_the_session_owns(variant):
    import sys

    session = Session(CONFIG, all_invariants(), variant=variant)
    session.cluster.run_for(5_000)  # unchecked: some variants break an invariant at once
    module_level = set()
    for name, module in list(sys.modules.items()):
        if module is not None and name.split(".")[0] == "kmodel":
            for value in vars(module).values():
                module_level.add(id(value))
                if isinstance(value, (dict, list, tuple)):
                    module_level.update(id(v) for v in (value.values() if isinstance(value, dict) else value))
    cleared = _cleared_by_dispose(session)
    assert cleared  # clients, informers, queues...
    assert not [(n, a) for n, a, v in cleared if id(v) in module_level]
    owners: dict = {}
    for name, attribute, value in cleared:
        owners.setdefault(id(value), set()).add(name)
    # no component clears another's, except what the components of one process share (kube-controller-manager's
    # shared informers and their factory)
    process_of = session.cluster.process_of
    assert all(len({process_of(n) for n in names}) == 1 for names in owners.values())
    assert any(len(names) > 1 for names in owners.values())  # the shared informers are shared


def test_a_fresh_session_after_disposing_one_makes_the_same_moves():
    def run() -> Session:
        session = Session(CONFIG, all_invariants())
        for action in [RunFair(15_000), *ACTIONS]:
            session.execute(action)
        return session

    first = run()
    digest = first.digest()
    first.dispose()
    assert run().digest() == digest


def test_the_invariants_and_sometimes_properties_are_listed_once_per_campaign(monkeypatch):
    class Counted(SmallMachine):
        stats = Stats()

    calls = []
    real = KmodelMachine.invariant_list.__func__
    monkeypatch.setattr(Counted, "invariant_list", classmethod(lambda cls: calls.append(cls) or real(cls)))
    first, second = Counted(), Counted()
    assert len(calls) == 1 and first.session.safety == second.session.safety
    Counted.stats = Stats()  # another campaign: listed again
    Counted()
    assert len(calls) == 2
