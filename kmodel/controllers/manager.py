"""kube-controller-manager's own part in a highly available control plane: its leader election.

Theory of operation
-------------------
The model runs each controller of kube-controller-manager as a component of its own (kmodel.controllers.base);
the process they make up is a name and a list of members (`Cluster.processes`). With leader election on (the
default, as upstream's --leader-elect: `ClusterConfig.leader_elect`), each process, a lone one too, also has this
component, named after the process ("kube-controller-manager", "kube-controller-manager-2", ...): upstream's main
goroutine, which runs leaderElectAndRun on the Lease kube-system/kube-controller-manager
(kmodel.client.leaderelection) with the leader-election client (its own connection, Timeout RenewDeadline) and,
as upstream's Run does:

* OnStartedLeading: run the controllers. The controllers of the process and its shared informers share its
  `Leadership`; they started nothing before (upstream starts the controllers and then the informer factory in
  `run`, inside OnStartedLeading), and now start (kmodel.controllers.base, kmodel.controllers.shared_informers);
* OnStoppedLeading: "leaderelection lost", klog.FlushAndExit: the whole process exits (`ExitProcess`), and
  starts again RESTART_DELAY_MS later as the kubelet restarts a static pod's container, with a new identity,
  fresh informers and empty queues.

With --leader-elect=false (one kube-controller-manager) the cluster builds none of this: its controllers start
at once.
"""

from __future__ import annotations

from typing import Sequence

from kmodel.apiserver.authentication import CONTROLLER_MANAGER_TOKEN
from kmodel.client import ApiClient
from kmodel.client.component import ClientComponent
from kmodel.client.leaderelection import (
    RENEW_DEADLINE_MS, RESTART_DELAY_MS, ElectionConfig, LeaderElector, Leadership,
)
from kmodel.component import Out
from kmodel.network import Message
from kmodel.switches import DEFAULT_SWITCHES, Switches

#: the process name of the first kube-controller-manager (the checker's CrashProcess names it)
PROCESS = "kube-controller-manager"
ELECTION_TIMER = "leaderelection"


class ControllerManager(ClientComponent):
    """One kube-controller-manager's leader election (see the module docstring)."""

    #: what invariants may read of it (kmodel.invariants.records): its elector and its process's election
    RECORDS = ClientComponent.RECORDS | {"elector", "leadership"}

    def __init__(self, name: str, endpoints: Sequence[str], *, host: str, members: Sequence[str],
                 fence_writes: bool = False, switches: Switches = DEFAULT_SWITCHES) -> None:
        super().__init__(name)
        self.client = ApiClient(name, endpoints, token=CONTROLLER_MANAGER_TOKEN, timeout_ms=RENEW_DEADLINE_MS,
                                switches=switches)
        self.leadership = Leadership(members=tuple(members), fence=fence_writes)
        self.elector = LeaderElector(self.client, ElectionConfig(PROCESS), host=host, timer=ELECTION_TIMER,
                                     event_source=PROCESS, on_started_leading=self._started_leading,
                                     on_stopped_leading=self._stopped_leading)
        self.leadership.elector = self.elector

    def _started_leading(self, now: int, out: Out) -> None:
        self.leadership.started()

    def _stopped_leading(self, now: int, out: Out) -> None:
        self.leadership.leading = False
        out.exit_process((self.name, *self.leadership.members), RESTART_DELAY_MS)

    def start(self, now: int, out: Out) -> None:
        self.elector.start(now, out)

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        self.client.on_message(now, msg, out)

    def on_timer(self, now: int, name: str, out: Out) -> None:
        if not self.client.on_timer(now, name, out):
            self.elector.on_timer(now, name, out)

    def crash(self) -> None:
        self.client.reset()
        self.elector.reset()
        self.leadership.leading = False
