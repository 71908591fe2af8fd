"""Events as components write them through the API (client-go's record.EventRecorder), and their printing.

`make_event(involved, reason, message, ...)` builds a core/v1 Event the way the recorder does
(tools/record/event.go makeEvent): name `<object name>.<hex nanoseconds>` (see "Event names" below), namespace of
the object
("default" for cluster-scoped ones), involvedObject from the object's kind, name, namespace, uid, apiVersion
and resourceVersion, count 1, firstTimestamp = lastTimestamp = now, source {component, host},
reportingComponent/reportingInstance. `bump_event(event, now)` is the correlator's repeat: count + 1 and a
new lastTimestamp (sent as an update or patch of the same Event).

`format_events(events, now)` prints them as `kubectl get events` does: LAST SEEN (kubectl's HumanDuration of
now - lastTimestamp, with "(xN over D)" for repeated events), TYPE, REASON, OBJECT (kind/name, kind lower
case), MESSAGE, in the order given.

Event names
-----------
Upstream names an event `fmt.Sprintf("%v.%x", ref.Name, t.UnixNano())`: the involved object's name and the
recorder's wall clock in nanoseconds. Two recorders (two controllers, each with a recorder of its own) that
record about two objects of one name in one namespace (a Deployment and a StatefulSet both called `web`) get
different names because their clocks are read at different nanoseconds; a collision would lose the second
event (the create answers 409 AlreadyExists, which the recorder drops without retrying). The model's clock has
only milliseconds, so the nanoseconds are built from what upstream's clock adds within one:

    nanoseconds = epoch + now_ms * 10^6 + slot * 1000 + seq mod 1000

`slot` (0-999, the microsecond) is fixed per recorder: a hash (sha256, stable under any PYTHONHASHSEED) of the
recorder's `instance`, the name of the component it belongs to (`controller/statefulset`, `scheduler-2`,
`kubelet/node-1`, `kube-controller-manager/leaderelection`), which is unique in a cluster; `seq` counts the
recorder's own events, so that one recorder's events in one millisecond differ too. The recorders of a cluster
of three kube-controller-managers, three schedulers and ten nodes all have different slots
(tests/apiserver/test_event_names.py), so their events never share a name; beyond that two recorders may share
a slot, and then collide only when both record about objects of one name in one namespace in the same
millisecond with the same sequence number modulo 1000.
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterable, Optional

import attrs

from kmodel.client.rate_limiter import TokenBucket
from kmodel.objects import Event, EventSource, ObjectMeta, ObjectReference, kind_info
from kmodel.objects.logical_time import EPOCH

_EPOCH_NS = int(EPOCH.timestamp()) * 1_000_000_000


def object_reference(obj: Any) -> ObjectReference:
    info = kind_info(obj)
    m = obj.metadata
    return ObjectReference(kind=info.kind, namespace=m.namespace, name=m.name, uid=m.uid,
                           api_version=info.api_version, resource_version=m.resource_version)


def event_slot(instance: str) -> int:
    """The microsecond (0-999) within each millisecond at which the recorder `instance` names its events (see
    "Event names" in the module docstring)."""
    return int.from_bytes(hashlib.sha256(instance.encode()).digest()[:8], "big") % 1000


def event_nanos(now: int, slot: int, seq: int) -> int:
    """The UnixNano an event's name carries: logical `now` (ms), the recorder's microsecond `slot`, and its
    event number `seq` as the nanoseconds."""
    return _EPOCH_NS + now * 1_000_000 + slot * 1000 + seq % 1000


def make_event(involved: Any, reason: str, message: str, *, type: str = "Normal", component: str = "",
               host: str = "", now: int = 0, seq: int = 0, slot: int = 0) -> Event:
    """An Event about `involved` (an API object or an ObjectReference) at logical time `now` (ms), named with
    `event_nanos(now, slot, seq)`."""
    ref = involved if isinstance(involved, ObjectReference) else object_reference(involved)
    nanos = event_nanos(now, slot, seq)
    meta = ObjectMeta(name=f"{ref.name}.{nanos:x}", namespace=ref.namespace or "default")
    return Event(metadata=meta, involved_object=ref, reason=reason, message=message,
                 source=EventSource(component=component, host=host), first_timestamp=now, last_timestamp=now,
                 count=1, type=type, reporting_component=component, reporting_instance=host)


#: the event correlator's spam filter (tools/record/events_cache.go): a source may write 25 events about one
#: object at once, then one more every 5 minutes (defaultSpamBurst, defaultSpamQPS = 1/300)
SPAM_BURST = 25
SPAM_REFILL_MS = 300_000


class EventRecorder:
    """One component's recorder: names its events at its own microsecond `slot` and numbers them, so that names
    stay unique within a millisecond and between recorders (see "Event names" in the module docstring), and
    drops those its spam filter refuses, as client-go's EventCorrelator does before anything is sent: one token
    bucket per source and involved object (getSpamKey: component, host, and the object's kind, namespace, name,
    uid and apiVersion, whatever the reason). `restart` forgets the buckets (a new process, a new correlator).

    `component` and `host` are the events' source; `instance` names the recorder in its cluster (its
    component's name; default `<component>/<host>`)."""

    def __init__(self, component: str, host: str = "", *, instance: str = "") -> None:
        self.component = component
        self.host = host
        self.slot = event_slot(instance or f"{component}/{host}")
        self._seq = 0
        self._spam: dict[tuple, TokenBucket] = {}

    def restart(self) -> None:
        self._spam = {}

    def event(self, involved: Any, reason: str, message: str, *, type: str = "Normal",
              now: int = 0) -> Optional[Event]:
        """The Event to write, or None if the spam filter drops it."""
        ref = involved if isinstance(involved, ObjectReference) else object_reference(involved)
        key = (ref.kind, ref.namespace, ref.name, ref.uid, ref.api_version)  # this recorder's source is fixed
        bucket = self._spam.get(key)
        if bucket is None:
            bucket = self._spam[key] = TokenBucket(SPAM_REFILL_MS, SPAM_BURST)
        if not bucket.try_take(now):
            return None
        self._seq += 1
        return make_event(ref, reason, message, type=type, component=self.component, host=self.host,
                          now=now, seq=self._seq, slot=self.slot)

    def record(self, client: Any, now: int, out: Any, involved: Any, reason: str, message: str, *,
               type: str = "Normal") -> None:
        """Write the event through `client` (an ApiClient: fire and forget, as client-go's recorder), unless the
        spam filter drops it."""
        event = self.event(involved, reason, message, type=type, now=now)
        if event is not None:
            client.create(now, out, "events", event)


def bump_event(event: Event, now: int) -> Event:
    """The same event seen again: count + 1, lastTimestamp = now."""
    return attrs.evolve(event, count=event.count + 1, last_timestamp=now)


def human_duration(ms: int) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    seconds = ms // 1000
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        d = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if d == 0 else f"{hours // 24 // 365}y{d}d"
    return f"{hours // 24 // 365}y"


def _last_seen(e: Event, now: int) -> str:
    last = e.last_timestamp if e.last_timestamp is not None else (e.event_time or 0)
    text = human_duration(now - last)
    if e.count > 1:
        first = e.first_timestamp if e.first_timestamp is not None else last
        text += f" (x{e.count} over {human_duration(now - first)})"
    return text


def format_events(events: Iterable[Event], now: int = 0) -> str:
    """A `kubectl get events` table (columns padded by 3 spaces, as kubectl's tabwriter)."""
    rows = [("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE")]
    for e in events:
        obj = f"{e.involved_object.kind.lower()}/{e.involved_object.name}"
        rows.append((_last_seen(e, now), e.type, e.reason, obj, e.message))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "   " + r[4] for r in rows)
