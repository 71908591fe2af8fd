"""The fault actions of the `RequestFaultRules` family (fault_rules.py) that are more than one loop event.

Theory of operation
-------------------
Most faults of the family are one loop event wrapped in `Fault` (actions.py): a request fault
(`kmodel.loop.events.FailRequest`), a compaction (`Compact`). The one here composes loop events as
`CrashMidReconcile` does, so it replays through `Loop.step` and the fair runner:

`StallWatch`: a watch stream held up for minutes, then ended by the API server. The link from the replica to
the client is held (`SlowLink`: the watch's events, and anything else the replica sends that client, wait in
order), the cluster runs fairly for the hold, and just before it would end the stream is reset
(`BreakStream`): what was held on it is lost, and the client resumes the watch from the last event it
received. That is kube-apiserver's cacher closing a watcher that could not take its events
("Forcing watcher close due to unresponsiveness", cacher.go, Kubernetes 1.28-1.32): the client sees the watch
end, resumes from its last resourceVersion, and when the replica's window of events has moved past it (a
window of at least 100 events per resource, kmodel.apiserver.watchcache) the resumed watch meets 410 Expired
and the informer relists. The hold lasts minutes so that it can outlast that window: a resource changing
every few seconds (Leases: one renewal per node every 10 s) fills 100 events in about five minutes on a
three-node cluster.

Not modelled: the client's HTTP/2 health check during the hold (kmodel.loop.health arms it for partitions
only); a stalled connection whose PINGs go unanswered would be given up on after about 45 s and the informer
would relist at once, which the `partition` fault covers.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from kmodel.checker.actions import ACTIONS, Action, run_fairly
from kmodel.cluster import Cluster
from kmodel.loop import EventNotEnabled
from kmodel.loop.events import BreakStream, SlowLink


@attrs.frozen
class StallWatch(Action):
    """Hold the link `replica` -> `client` for `ms`, running fairly meanwhile, then reset the watch `stream`
    (one of `client`'s watches on `replica`) just before the hold ends. See the module docstring."""

    kind: ClassVar[str] = "stall-watch"
    stream: str
    replica: str
    client: str
    ms: int

    @property
    def name(self) -> str:
        return (f"stall watch {self.stream} ({self.replica} -> {self.client}) for {self.ms / 60_000:g} min, then "
                f"{self.replica} ends it")

    def fits(self, cluster: Cluster) -> bool:
        """Is `stream` an open stream between `client` and `replica` now?"""
        ends = cluster.loop.network.stream_ends(self.stream)
        return ends is not None and set(ends) == {self.client, self.replica} and self.ms > 1

    def apply(self, cluster: Cluster) -> None:
        if not self.fits(cluster):
            raise EventNotEnabled(f"{self.name}: no such open watch stream now")
        loop = cluster.loop
        start = cluster.now
        loop.step(SlowLink(self.replica, self.client, self.ms))
        run_fairly(cluster, start + self.ms - 1)
        reset = BreakStream(self.stream)
        if loop.is_enabled(reset):  # the client may have ended it meanwhile, or the replica crashed
            loop.step(reset)


ACTIONS[StallWatch.kind] = StallWatch
