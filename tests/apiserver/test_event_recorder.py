"""The event recorder's spam filter (client-go's EventSourceObjectSpamFilter): 25 events about one object at
once, then one per 5 minutes, per source and object, whatever the reason; a restarted process starts afresh."""

from __future__ import annotations

from kmodel.apiserver.events import SPAM_BURST, SPAM_REFILL_MS, EventRecorder
from kmodel.objects import ObjectMeta, Pod, PodSpec


def pod(name: str, uid: str) -> Pod:
    return Pod(metadata=ObjectMeta(name=name, namespace="default", uid=uid), spec=PodSpec())


def written(recorder: EventRecorder, obj, n: int, now: int, reason: str = "BackOff") -> int:
    return sum(recorder.event(obj, reason, "m", now=now) is not None for _ in range(n))


def test_a_source_writes_25_events_about_an_object_then_one_every_five_minutes():
    r = EventRecorder("kubelet", "node-1")
    web = pod("web", "u1")
    assert SPAM_BURST == 25 and SPAM_REFILL_MS == 300_000  # defaultSpamBurst, 1 / defaultSpamQPS
    assert written(r, web, 30, now=0) == 25
    assert written(r, web, 3, now=SPAM_REFILL_MS - 1) == 0
    assert written(r, web, 3, now=SPAM_REFILL_MS) == 1
    # every reason about the object shares its bucket (getSpamKey has no reason)
    assert written(r, web, 1, now=SPAM_REFILL_MS, reason="Killing") == 0


def test_each_object_and_each_incarnation_of_it_has_a_bucket_of_its_own():
    r = EventRecorder("kubelet", "node-1")
    assert written(r, pod("web", "u1"), 30, now=0) == 25
    assert written(r, pod("api", "u2"), 30, now=0) == 25
    assert written(r, pod("web", "u3"), 30, now=0) == 25  # the same name, a new uid


def test_a_restarted_process_has_a_new_filter_and_keeps_event_names_unique():
    r = EventRecorder("kubelet", "node-1")
    web = pod("web", "u1")
    names = {r.event(web, "BackOff", "m", now=0).metadata.name for _ in range(SPAM_BURST)}
    assert r.event(web, "BackOff", "m", now=0) is None
    r.restart()
    after = r.event(web, "BackOff", "m", now=0)
    assert after is not None and after.metadata.name not in names
