"""The run's digest hashes what happened: the actions, the events, each delivered message's content and each
store write. Equal digests mean equal runs; a run that differs only in what its messages said differs."""

from __future__ import annotations

import attrs

from kmodel.checker.actions import ApplyDeployment, ApplyService, RunFair
from kmodel.checker.session import Session, all_invariants
from kmodel.cluster import ClusterConfig
from kmodel.fingerprint import fingerprint
from kmodel.objects import ObjectMeta, Pod


def _run(config: ClusterConfig) -> Session:
    session = Session(config, all_invariants())
    for action in (ApplyDeployment("web", 2), ApplyService("web"), RunFair(20_000)):
        session.execute(action)
    return session


def _pod_cidrs(session: Session) -> list[str]:
    return sorted(n.spec.pod_cidr for n in session.cluster.objects("nodes"))


def test_clusters_that_differ_only_in_their_pod_cidrs_have_different_digests():
    base = ClusterConfig()
    one, again = _run(base), _run(base)
    other = _run(attrs.evolve(base, cluster_cidr="10.245.0.0/16"))
    assert one.digest() == again.digest()
    # the same moves, in the same order, on every link ...
    assert one.events_applied == other.events_applied
    assert one.cluster.network.communication_counts() == other.cluster.network.communication_counts()
    assert [a.stable_json() for a in one.actions] == [a.stable_json() for a in other.actions]
    # ... carrying other podCIDRs: the messages and the writes say so
    assert _pod_cidrs(one) != _pod_cidrs(other)
    assert one.cluster.loop.digest() != other.cluster.loop.digest()
    assert one.cluster.store.digest() != other.cluster.store.digest()
    assert one.digest() != other.digest()


def test_fingerprints_tell_types_lengths_and_fields_apart():
    values = ["1", 1, True, 1.0, None, b"1", ("1",), ["1"], {"1": 1}, {"1"}, "a\x00b", "a", "b", ("a", "b"),
              ("ab",), {"a": "b"}, {"ab": ""}]
    assert len({fingerprint(v) for v in values}) == len(values)
    pod = Pod(metadata=ObjectMeta(name="p", namespace="default"))
    renamed = attrs.evolve(pod, metadata=attrs.evolve(pod.metadata, name="q"))
    assert fingerprint(pod) != fingerprint(renamed)
    assert fingerprint(pod) == fingerprint(Pod(metadata=ObjectMeta(name="p", namespace="default")))  # content, not id
    assert fingerprint(pod) == fingerprint(pod)  # memoised: the same answer
    assert fingerprint({"b", "a", "c"}) == fingerprint({"c", "a", "b"})  # a set in a canonical order


def test_a_function_is_fingerprinted_by_name_not_address():
    def handler() -> None:
        return None

    assert b"handler" in fingerprint(handler) and b"0x" not in fingerprint(handler)


def test_the_fast_fingerprints_equal_the_reference_over_a_runs_messages_and_writes(monkeypatch):
    """Every delivered message's content and every store write of a run with changes and faults, encoded by the
    fast path (memos warm, as in a campaign) and by `reference`, the plain definition: the same bytes."""
    import kmodel.loop.loop as loop_module
    import kmodel.store.store as store_module
    from kmodel import fingerprint as fp
    from kmodel.checker.actions import DeleteObject, Fault, ScaleDeployment
    from kmodel.loop.events import Crash, Restart

    seen = {"content": 0, "fingerprint": 0}

    def checked_content(value):
        fast = fp.content(value)
        assert fast == fp.reference_content(value), value
        assert fp.content(value) == fast  # met again: the memo answers the same
        seen["content"] += 1
        return fast

    def checked_fingerprint(value):
        fast = fp.fingerprint(value)
        assert fast == fp.reference(value), value
        seen["fingerprint"] += 1
        return fast

    monkeypatch.setattr(loop_module, "content", checked_content)
    monkeypatch.setattr(loop_module, "fingerprint", checked_fingerprint)
    monkeypatch.setattr(store_module, "fingerprint", checked_fingerprint)
    session = Session(ClusterConfig(), all_invariants())
    for action in (ApplyDeployment("web", 2), ApplyService("web"), RunFair(20_000), ScaleDeployment("web", 3),
                   Fault(Crash("apiserver-0")), RunFair(5_000), Fault(Restart("apiserver-0")),
                   DeleteObject("services", "web"), RunFair(20_000)):
        session.execute(action)
    assert seen["content"] > 300 and seen["fingerprint"] > 200


def test_the_reference_fingerprint_covers_every_kind_of_value():
    import enum
    import functools

    from kmodel import fingerprint as fp
    from kmodel.objects.frozendict import FrozenDict
    from kmodel.store.types import KeyValue

    class Colour(enum.Enum):
        RED = "red"

    class Plain:
        def __init__(self) -> None:
            self.a, self.b = 1, ("x", None)

    pod = Pod(metadata=ObjectMeta(name="p", namespace="default"))
    values = ["1", 1, True, 1.0, None, b"1", bytearray(b"1"), ("1",), ["1"], {"1": 1}, {"b", "a"}, frozenset("ab"),
              pod, pod.metadata, KeyValue("/k", pod, 1, 2, 1), FrozenDict({"a": "b"}), Colour.RED, Plain(),
              _run, functools.partial(int), ([pod], {"k": (pod, None)})]
    for value in values:
        assert fp.fingerprint(value) == fp.reference(value), value
        assert fp.content(value) == fp.reference_content(value), value


def test_content_keeps_recent_envelopes_only_of_the_classes_fanned_out():
    """A watch event goes to each of its watchers: `content` answers the very same one from its memo. A request or
    an answer is delivered once: encoded in full, not kept."""
    from kmodel import fingerprint as fp
    from kmodel.apiserver.wire import Request, Response, WatchEvent

    pod = Pod(metadata=ObjectMeta(name="p", namespace="default"))
    event, request, response = WatchEvent("ADDED", pod), Request(1, "create", "pods", body=pod), Response(1, 201, pod)
    for value in (event, request, response):
        assert fp.content(value) == fp.reference_content(value) == fp.content(value)
    assert fp.content(event) is fp.content(event)  # the very bytes kept for that event
    assert fp.content(request) is not fp.content(request) and fp.content(response) is not fp.content(response)
