"""The leader-election family's actions: stop-the-world pauses of a process (kmodel.loop: `Loop.pause`).

A pause is a long GC pause, a SIGSTOP, a frozen VM: the process runs nothing for a while, then goes on with
everything it believed. A kube-controller-manager or kube-scheduler that leads and is paused past its lease's
expiry wakes still believing it leads, and may write before its next renewal tells it otherwise (client-go's
leader election checks the lease only when it renews), while another has taken the lease over: two leaders act.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from kmodel.checker.actions import Action
from kmodel.checker.simpler import Simplest, fewer
from kmodel.loop import EventNotEnabled
from kmodel.loop.events import at_least

#: the longest pause the checker draws, in seconds (a minute: past a 15 s lease and a 10 s renew deadline)
MAX_PAUSE_SECONDS = 60


def leaders(cluster: Any) -> list[str]:
    """The processes that lead now and could be paused, sorted."""
    return [p for p in pausable(cluster) if _leads(cluster, p)]


def pausable(cluster: Any) -> list[str]:
    """The processes that could be paused now (every component of each up and not paused): the current leaders
    first (an index shrinks toward them: the pause that matters), then the others, sorted."""
    loop = cluster.loop
    processes: dict[str, tuple[str, ...]] = {}
    grouped = {m for members in cluster.processes.values() for m in members}
    for name, members in sorted(cluster.processes.items()):
        processes[name] = members
    for name in sorted(loop.components):
        if name not in grouped:
            processes[name] = (name,)
    ready = [p for p, members in processes.items()
             if all(loop.is_up(m) and not loop.is_paused(m) for m in members)]
    leaders = [p for p in ready if _leads(cluster, p)]
    return leaders + [p for p in ready if p not in leaders]


def _leads(cluster: Any, process: str) -> bool:
    component = cluster.loop.components.get(process)
    elector = getattr(component, "elector", None)
    return elector is not None and elector.leading


@attrs.frozen
class PauseProcess(Action):
    """Stop `process`'s world (every component of it) for `seconds`."""

    kind: ClassVar[str] = "pause-process"
    simplest: ClassVar[Simplest] = (("seconds", fewer(1)),)
    process: str
    seconds: int = at_least(1)

    @property
    def name(self) -> str:
        return f"pause {self.process} for {self.seconds} s (stop the world)"

    def apply(self, cluster: Any) -> None:
        members = cluster.processes.get(self.process, (self.process,))
        loop = cluster.loop
        if not all(m in loop.components and loop.is_up(m) and not loop.is_paused(m) for m in members):
            raise EventNotEnabled(f"cannot pause {self.process!r}: not a running process of this cluster")
        until = cluster.now + self.seconds * 1000
        for member in members:
            loop.pause(member, until)
