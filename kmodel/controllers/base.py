"""The shape every controller shares: informers feed a work queue of keys; `work` syncs one key.

Theory of operation
-------------------
A controller is a sans-IO component (kmodel/component) that reaches the cluster only through its
`ApiClient` (kmodel/client), as kube-controller-manager's controllers do through client-go. Its requests
authenticate as its own service account (`service_account`, as with --use-service-account-credentials). Its
informers are its process's shared ones (kmodel.controllers.shared_informers: one list and one watch per
resource for every controller of a kube-controller-manager, on the controller manager's own "shared-informers"
client); a controller built outside a cluster's process has a factory of its own on its own client, whose
lists and watches authenticate as kube-controller-manager:

    informers ──handlers──▶ WorkQueue of keys ──work()──▶ sync(key, sync, now, out) ──requests──▶ API

* `setup()` (a subclass hook) asks for the informers with `self.informer(...)`, registering its handlers on
  them; the handlers enqueue keys. It runs at construction and again after a crash, because a crash forgets
  everything in memory (the controller's registrations are then replaced by the new life's).
* `has_work()` is true when a key is queued and every informer it uses has synced (client-go's
  WaitForNamedCacheSync before the workers start), so "let controller Z work one item" is its own loop event.
* `work()` takes one key and calls the subclass's `sync(key, sync, now, out)`. The sync reads the
  informers' caches (level-driven: it looks at the state, not at the event that queued the key) and
  issues its writes through `sync.request(...)`/the typed helpers on `sync`. A key is *in progress* until
  every request of its sync has been answered, including requests issued from continuations (a reconcile
  that writes A, waits, then writes B), so one key is never synced twice at once (client-go's guarantee),
  and a crash between A and B leaves exactly the intermediate state a real crash would.
* When the sync's last answer arrives, the key is `done`; if any answer was an error the sync did not
  handle (its continuation returned something other than True), the key is re-queued with the rate limiter
  (5 ms × 2^n), otherwise the limiter forgets it (client-go's processNextWorkItem/handleErr).
* `sync.requeue_after(ms)` asks for the key again later (AddAfter), e.g. to look again when a toleration
  runs out.

Leader election (kmodel.client.leaderelection): unless --leader-elect=false, each controller of a
kube-controller-manager is given its process's `Leadership` (`leadership`; None: the process elects no leader, as with
--leader-elect=false). Upstream's kube-controller-manager creates its informers and starts its controllers only
in OnStartedLeading, so a standby's controllers start nothing: `start` waits (`awaiting_leader`), and once the
process leads, starting (the informers of a controller with a factory of its own, and `on_started`) is the
controller's next work item; the shared informers start as their own component's work item. When the process stops leading it
exits, every controller with it (kmodel.controllers.manager).

Messages, timers and stream closings go first to the client, then the queue; what neither consumes goes to
`on_own_timer` (a subclass's periodic work, e.g. node lifecycle's 5 s monitor).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Optional, Sequence

from kmodel.apiserver.authentication import CONTROLLER_MANAGER_TOKEN, service_account_token
from kmodel.apiserver.events import EventRecorder
from kmodel.apiserver.wire import Response
from kmodel.client import ApiClient, Informer, ItemExponentialFailureRateLimiter, WorkQueue
from kmodel.client.indexer import meta_namespace_key
from kmodel.client.rate_limiter import CONTROLLER_MANAGER_LIMIT
from kmodel.client.shared_informer import SharedInformerFactory
from kmodel.client.component import ClientComponent
from kmodel.client.leaderelection import StartsWhenLeading
from kmodel.component import Out
from kmodel.network import Message
from kmodel.switches import DEFAULT_SWITCHES, Switches

Done = Callable[[int, Response, Out], Optional[bool]]

#: the retry-past-max-retries fixes' longest wait between two tries of a failing key (kmodel.fixes:
#: deployment-retry-past-max-retries, endpoints-retry-past-max-retries): a minute, as the Job controller's API
#: back-off (MaxJobApiBackOff), where the default rate limiter's 1,000 s could put the next try a quarter of an
#: hour after etcd is back
RETRY_FIX_MAX_DELAY_MS = 60_000


class Sync:
    """The requests of one key's reconcile; the key stays in progress until all of them are answered."""

    __slots__ = ("controller", "key", "pending", "failed", "delay_ms", "finished")

    def __init__(self, controller: "Controller", key: Hashable) -> None:
        self.controller = controller
        self.key = key
        self.pending = 0
        self.failed = False
        self.delay_ms: Optional[int] = None
        self.finished = False

    def request(self, now: int, out: Out, verb: str, resource: str, *, on_done: Optional[Done] = None,
                **fields: Any) -> int:
        """Send a request as part of this sync. `on_done` returning True marks an error as handled."""
        self.pending += 1

        def answered(t: int, response: Response, o: Out) -> None:
            handled = on_done(t, response, o) if on_done is not None else None
            if response.code >= 400 and handled is not True:
                self.failed = True
            self.pending -= 1
            self.maybe_finish(t, o)

        return self.controller.client.request(now, out, verb, resource, on_done=answered, **fields)

    def create(self, now: int, out: Out, resource: str, obj: Any, *, on_done: Optional[Done] = None) -> int:
        return self.request(now, out, "create", resource, namespace=obj.metadata.namespace, body=obj,
                            on_done=on_done)

    def update(self, now: int, out: Out, resource: str, obj: Any, *, subresource: str = "",
               on_done: Optional[Done] = None) -> int:
        m = obj.metadata
        return self.request(now, out, "update", resource, namespace=m.namespace, name=m.name,
                            subresource=subresource, body=obj, on_done=on_done)

    def update_status(self, now: int, out: Out, resource: str, obj: Any, *, on_done: Optional[Done] = None) -> int:
        return self.update(now, out, resource, obj, subresource="status", on_done=on_done)

    def patch(self, now: int, out: Out, resource: str, name: str, patch: dict, *, namespace: str = "",
              subresource: str = "", on_done: Optional[Done] = None) -> int:
        return self.request(now, out, "patch", resource, namespace=namespace, name=name, subresource=subresource,
                            body=patch, on_done=on_done)

    def delete(self, now: int, out: Out, resource: str, name: str, *, namespace: str = "",
               on_done: Optional[Done] = None) -> int:
        return self.request(now, out, "delete", resource, namespace=namespace, name=name, on_done=on_done)

    def requeue_after(self, delay_ms: int) -> None:
        """Look at this key again after `delay_ms` (the earliest of several asks wins)."""
        self.delay_ms = delay_ms if self.delay_ms is None else min(self.delay_ms, delay_ms)

    def fail(self) -> None:
        """Mark the sync failed without a request (e.g. a cache not yet showing what it needs)."""
        self.failed = True

    def maybe_finish(self, now: int, out: Out) -> None:
        if self.pending or self.finished:
            return
        self.finished = True
        self.controller._sync_finished(now, out, self)


class Controller(StartsWhenLeading, ClientComponent):
    """Base class of the controllers. Subclasses implement `setup` and `sync` (see the module docstring)."""

    reconciles = True

    #: the name the controller's Events carry as their source component
    event_source = "controller-manager"

    #: a key whose sync failed this many times in a row is dropped (forgotten, so its back-off starts again at
    #: 5 ms) until an event enqueues it again, as upstream's handleErr does with its maxRetries; None: retried
    #: for ever with the rate limiter (the ReplicaSet controller and the garbage collector)
    max_retries: Optional[int] = None

    #: a retry-past-max-retries fix is on for this controller (kmodel.fixes; set with `retry_for_good()` before
    #: the base's __init__): a failing key is retried for as long as it fails, its back-off capped at
    #: RETRY_FIX_MAX_DELAY_MS, instead of being dropped after max_retries until an event or a resync comes
    retries_for_good: bool = False

    #: the kube-system service account its requests authenticate as (upstream's ClientBuilder.ClientOrDie name);
    #: every controller names one
    service_account: str = ""
    #: the rules of its role, which the cluster installs at boot as `system:controller:<service_account>`, bound to
    #: its service account (a registered controller declares both in its registration, kmodel.component.registry,
    #: which sets them here; an extra component passed to the Cluster sets them itself)
    rbac_rules: tuple = ()

    def __init__(self, name: str, endpoints: Sequence[str], switches: Switches = DEFAULT_SWITCHES) -> None:
        super().__init__(name)
        if not self.service_account:
            raise ValueError(f"{type(self).__name__} names no service_account: set it to the kube-system service "
                             f"account its requests authenticate as, and its rbac_rules to what it may do")
        token = service_account_token(self.service_account)
        self.client = ApiClient(name, endpoints, token=token, informer_token=CONTROLLER_MANAGER_TOKEN,
                                rate_limit=CONTROLLER_MANAGER_LIMIT, switches=switches)
        self.recorder: Optional[EventRecorder] = None  # made on first use: subclasses may set event_source late
        #: its process's leader election (see the module docstring); None: it elects no leader
        self.leadership: Optional[Any] = None
        #: started while its process did not lead: its informers start once it does
        self.awaiting_leader = False
        #: where its informers come from: its process's shared factory (`use_shared_informers`), or until then a
        #: factory of its own on its own client, made anew in every life
        self.informer_factory = SharedInformerFactory(self.client)
        #: whether `informer_factory` is its process's (started and reset by the process's SharedInformers)
        self.shares_informers = False
        self._init_memory()

    def use_shared_informers(self, factory: SharedInformerFactory) -> None:
        """Take the informers from its process's shared factory from now on (called once, at construction)."""
        self.informer_factory = factory
        self.shares_informers = True
        self._init_memory()

    def retry_for_good(self) -> None:
        """Turn a retry-past-max-retries fix on (call it before the base's __init__, from the controller's own)."""
        self.retries_for_good = True
        self.max_retries = None

    def _init_memory(self) -> None:
        self.queue = WorkQueue(f"{self.name}/queue")
        if self.retries_for_good:  # the queue is new at every start: give it the fix's back-off
            self.queue.rate_limiter = ItemExponentialFailureRateLimiter(max_ms=RETRY_FIX_MAX_DELAY_MS)
        if self.shares_informers:
            self.informer_factory.forget(self.name)
        else:
            self.informer_factory = SharedInformerFactory(self.client)
        #: the informers it uses (WaitForNamedCacheSync waits for these)
        self.informers: list[Informer] = []
        self._syncing: dict[Hashable, Sync] = {}
        self.setup()

    # -- subclass hooks ----------------------------------------------------------------------------------

    def setup(self) -> None:
        """Create the informers (called at construction and after every crash)."""

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        """Reconcile one key: read the caches, issue writes through `sync`."""
        raise NotImplementedError

    def on_own_timer(self, now: int, name: str, out: Out) -> None:
        """A timer that is neither the client's nor the queue's (periodic work of a subclass)."""

    def on_started(self, now: int, out: Out) -> None:
        """Extra work at start (after the informers started): e.g. arm a periodic timer."""

    # -- helpers for subclasses --------------------------------------------------------------------------

    def informer(self, resource: str, *, key: Optional[Callable[[Any], Optional[Hashable]]] = None,
                 on_add: Any = None, on_update: Any = None, on_delete: Any = None, **options: Any) -> Informer:
        """The informer of `resource` (and `options`: namespace, selectors, indexers) from its factory, with
        handlers registered on it that enqueue `key(obj)` (default: namespace/name) unless handlers are given."""
        key_fn = key or meta_namespace_key

        def enqueue(obj: Any) -> None:
            k = key_fn(getattr(obj, "obj", obj))  # DeletedFinalStateUnknown carries the last object seen
            if k is not None:
                self.queue.add(k)

        inf = self.informer_factory.informer_for(
            self.name, resource,
            on_add=on_add or (lambda now, obj, out: enqueue(obj)),
            on_update=on_update or (lambda now, old, new, out: enqueue(new)),
            on_delete=on_delete or (lambda now, obj, out: enqueue(obj)),
            **options)
        if inf not in self.informers:
            self.informers.append(inf)
        return inf

    def event(self, now: int, out: Out, obj: Any, type_: str, reason: str, message: str) -> None:
        """Record an Event about `obj` (fire and forget, as client-go's recorder)."""
        if self.recorder is None:
            self.recorder = EventRecorder(self.event_source, instance=self.name)
        self.recorder.record(self.client, now, out, obj, reason, message, type=type_)

    def synced(self) -> bool:
        for inf in self.informers:  # (a plain loop: asked at every look at the controller's work)
            if not inf.has_synced:
                return False
        return True

    # -- the component protocol --------------------------------------------------------------------------

    def _run(self, now: int, out: Out) -> None:
        self.awaiting_leader = False
        if self.shares_informers:
            # registered after the shared informers filled their caches (this controller alone restarted): the
            # synthetic adds of AddEventHandler; a whole process's restart finds the caches empty
            self.informer_factory.replay(self.name, now, out)
        else:
            self.informer_factory.start(now, out)
        self.on_started(now, out)

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        self.client.on_message(now, msg, out)

    def on_timer(self, now: int, name: str, out: Out) -> None:
        if not self.client.on_timer(now, name, out) and not self.queue.on_timer(now, name, out):
            self.on_own_timer(now, name, out)

    def has_work(self) -> bool:
        if self.awaiting_leader:
            return self.leadership.leading  # type: ignore[union-attr]
        return self.queue.has_work() and self.synced()

    def latest_deadline(self, now: int) -> Optional[int]:
        dues = [d for d in (super().latest_deadline(now), self.queue.latest_ready()) if d is not None]
        return max(dues, default=None)

    def work(self, now: int, out: Out) -> None:
        if self.awaiting_leader:  # its process leads now: OnStartedLeading's run starts the controllers
            self._run(now, out)
            return
        key = self.queue.get()
        sync = Sync(self, key)
        self._syncing[key] = sync
        try:
            self.sync(key, sync, now, out)
        finally:
            sync.maybe_finish(now, out)

    def _sync_finished(self, now: int, out: Out, sync: Sync) -> None:
        key = sync.key
        self._syncing.pop(key, None)
        self.queue.done(key)
        if sync.failed:
            if self.max_retries is None or self.queue.num_requeues(key) < self.max_retries:
                self.queue.add_rate_limited(now, out, key)
            else:
                self.queue.forget(key)
        else:
            self.queue.forget(key)
            if sync.delay_ms is not None:
                self.queue.add_after(now, out, key, sync.delay_ms)

    def crash(self) -> None:
        self.awaiting_leader = False
        self.client.reset()
        if self.recorder is not None:
            self.recorder.restart()
        self._init_memory()
