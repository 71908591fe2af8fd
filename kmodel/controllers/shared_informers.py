"""kube-controller-manager's shared informers: one list and one watch per resource for all its controllers.

Theory of operation
-------------------
Upstream (cmd/kube-controller-manager/app/controllermanager.go, Kubernetes 1.30-1.32) builds one
SharedInformerFactory per process, on the client ``rootClientBuilder.ClientOrDie("shared-informers")``: the
controller manager's own credentials and its own rate limit (--kube-api-qps 20, --kube-api-burst 30, a bucket of
its own that no controller's writes empty). Every controller asks the factory for its informers while it is
constructed and registers its event handlers on them; the garbage collector too, whose informers for the
resources the typed factory knows (every kind the model serves) are the typed factory's own
(informerfactory.NewInformerFactory tries the typed factory first, the metadata factory only for the others).
The factory is started once every controller is constructed (in `run`, inside OnStartedLeading when leader
election is on), and each controller's Run waits for the caches it uses (cache.WaitForNamedCacheSync) before
its workers start.

The model runs this as one component per kube-controller-manager, `SharedInformers`, named
"controller/shared-informers" ("controller-2/shared-informers", ...), a member of the process: it owns the
"shared-informers" client and a `SharedInformerFactory` (kmodel.client.shared_informer), on which each
controller of the process registers its handlers (`Controller.use_shared_informers`, in the process's
construction order). The watch events and list answers reach this component; delivering one is one loop event,
in which the informer updates its cache and calls every listener in registration order (upstream's processor
hands the delta to each listener's buffer; the controllers' workers run later, each `Work` its own loop event).
After each input the component asks the loop to look again at the controllers it feeds (`wake`, set by the
cluster): at those whose handlers ran (a handler may have queued a key), or at every one when a cache synced
(a controller waits for its caches). Nothing else in an input changes whether a controller has work.

With leader election, `start` waits (`awaiting_leader`) and the factory starts as this component's work item
once the process leads. A crash of the process forgets every cache; the new life lists again.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from kmodel.apiserver.authentication import CONTROLLER_MANAGER_TOKEN
from kmodel.client import ApiClient, Informer
from kmodel.client.component import ClientComponent
from kmodel.client.leaderelection import StartsWhenLeading
from kmodel.client.rate_limiter import CONTROLLER_MANAGER_LIMIT
from kmodel.client.shared_informer import SharedInformerFactory
from kmodel.component import Out
from kmodel.network import Message
from kmodel.switches import DEFAULT_SWITCHES, Switches

#: the member of each kube-controller-manager that holds its shared informers (`ClusterContext.named` makes the
#: other copies' names)
SHARED_INFORMERS = "controller/shared-informers"


class SharedInformers(StartsWhenLeading, ClientComponent):
    """One kube-controller-manager's shared informer factory (see the module docstring)."""

    def __init__(self, name: str, endpoints: Sequence[str], switches: Switches = DEFAULT_SWITCHES) -> None:
        super().__init__(name)
        self.client = ApiClient(name, endpoints, token=CONTROLLER_MANAGER_TOKEN, rate_limit=CONTROLLER_MANAGER_LIMIT,
                                switches=switches)
        self.factory = SharedInformerFactory(self.client)
        #: the informers of the factory, in the order they were first asked for (what invariants read)
        self.informers: list[Informer] = []
        #: its process's leader election (set by the cluster); None: the process elects no leader
        self.leadership: Optional[Any] = None
        #: started while its process did not lead: the factory starts once it does
        self.awaiting_leader = False
        #: asks the loop to look again at a component's work (set by the cluster: `Loop.notify_work`)
        self.wake: Optional[Callable[[str], None]] = None
        #: how many informers had synced when the controllers were last woken (see `_wake_listeners`)
        self._synced = 0

    def register(self, controller: Any) -> None:
        """Make `controller` register its informers here (its handlers follow those registered before)."""
        controller.use_shared_informers(self.factory)
        self.informers = list(self.factory.informers.values())

    # -- the component protocol --------------------------------------------------------------------------

    def _run(self, now: int, out: Out) -> None:
        self.awaiting_leader = False
        self.informers = list(self.factory.informers.values())
        self.factory.start(now, out)
        self._wake_listeners()

    def has_work(self) -> bool:
        return self.awaiting_leader and self.leadership.leading  # type: ignore[union-attr]

    def work(self, now: int, out: Out) -> None:
        self._run(now, out)  # its process leads now: OnStartedLeading's run starts the factory

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        self.client.on_message(now, msg, out)
        self._wake_listeners()

    def on_timer(self, now: int, name: str, out: Out) -> None:
        self.client.on_timer(now, name, out)
        self._wake_listeners()

    def on_stream_closed(self, now: int, stream: str, out: Out) -> None:
        super().on_stream_closed(now, stream, out)
        self._wake_listeners()

    def on_connection_reset(self, now: int, peer: str, arriving: tuple, out: Out) -> None:
        super().on_connection_reset(now, peer, arriving, out)
        self._wake_listeners()

    def on_connection_lost(self, now: int, peer: str, reason: str, out: Out) -> None:
        super().on_connection_lost(now, peer, reason, out)
        self._wake_listeners()

    def on_send_refused(self, now: int, dst: str, payload: Any, out: Out) -> None:
        super().on_send_refused(now, dst, payload, out)
        self._wake_listeners()

    def _wake_listeners(self) -> None:
        """Ask the loop to look again at the controllers whose handlers ran, or at every one if a cache synced
        (in rank order either way)."""
        if self.wake is None:
            return
        factory = self.factory
        called = factory.take_called()
        synced = factory.synced_count()
        if synced != self._synced:
            self._synced = synced
            for owner in factory.owners():
                self.wake(owner)
        elif called:
            for owner in factory.owners():
                if owner in called:
                    self.wake(owner)

    def crash(self) -> None:
        self.awaiting_leader = False
        self.client.reset()
        self.factory.reset()
        self._synced = 0
        self.factory.take_called()
