"""A shared informer factory: one informer per resource and selectors, for every component of a process.

Theory of operation
-------------------
client-go's SharedInformerFactory (tools/cache/shared_informer.go, informers/factory.go, Kubernetes 1.30-1.32):
a process builds one factory on one client, and every part of it that asks for an informer of the same resource
(and namespace and selectors) gets the same one, so the process lists and watches each resource once, whatever
the number of its controllers. Each asker registers its handlers (`informer_for`, a `Listener` on the
`Informer`); the informer calls every listener for every change, in registration order (the sharedProcessor
distributes each delta to its listeners). Each asker also brings its indexes (AddIndexers).

`start` starts every informer not started yet (factory.Start; informers in the order they were first asked
for, where upstream's map has no order). `reset` forgets every cache (the process crashed; the informers list
again when it starts), keeping the registrations, which belong to the components that made them: a component
that starts a new life removes its own (`forget`) and registers anew. A listener registered on an informer
whose cache is already filled gets an add of every object in it (`replay`, AddEventHandler's synthetic adds).

A listener of another component than the client's owner gets an `Out` of its own, whose effects are applied as
its owner's (`Out.act_for`): the timers a handler arms are its controller's.

The listeners are ordered by their owners' first registration (the order the process constructed its
controllers), then by the order each owner registered them, so a component that registers anew takes its
place back among the others.
"""

from __future__ import annotations

from typing import Any, Optional

from kmodel.client.api_client import ApiClient
from kmodel.client.indexer import IndexFunc
from kmodel.client.informer import Handler, Informer, Listener
from kmodel.component import Out


def _acting_for(owner: str, handler: Handler, factory: "SharedInformerFactory") -> Handler:
    """`handler` (whose last argument is the `Out`) with its effects marked as `owner`'s. An informer the handler
    asked the factory for (the garbage collector monitoring a custom resource it just discovered) is started
    afterwards by the factory, with the factory's own effects, as upstream's factory.Start starts informers
    added since: its list and watch are the factory client's, and their answers come back to it."""
    if handler is None:
        return None

    def call(now: int, *args: Any) -> None:
        *objects, out = args
        own = Out()
        handler(now, *objects, own)
        out.act_for(owner, own)
        factory.called[owner] = None
        if factory.started and factory.added_since_start:
            factory.start(now, out)

    return call


class SharedInformerFactory:
    """One informer per (resource, namespace, label selector, field selector), on one client."""

    def __init__(self, client: ApiClient) -> None:
        self.client = client
        #: the informers by identity, in the order they were first asked for
        self.informers: dict[tuple[str, str, str, str], Informer] = {}
        #: each owner's rank: the order of its first registration
        self._rank: dict[str, int] = {}
        #: whether `start` ran (and no crash since): informers asked for later start once their handler returns
        self.started = False
        #: an informer was asked for since `start` last ran (only then may one be left to start)
        self.added_since_start = False
        #: the owners whose handlers ran since `take_called` last took them (their queues may have grown)
        self.called: dict[str, None] = {}

    def informer_for(self, owner: str, resource: str, *, namespace: str = "", label_selector: str = "",
                     field_selector: str = "", indexers: Optional[dict[str, IndexFunc]] = None,
                     on_add: Handler = None, on_update: Handler = None, on_delete: Handler = None) -> Informer:
        """The shared informer of `resource` (and namespace, selectors), `owner`'s handlers and indexes added."""
        identity = (resource, namespace, label_selector, field_selector)
        inf = self.informers.get(identity)
        if inf is None:
            inf = self.informers[identity] = Informer(self.client, resource, namespace=namespace,
                                                      label_selector=label_selector, field_selector=field_selector)
            self.added_since_start = True
        if indexers:
            inf.add_indexers(indexers)
        rank = self._rank.setdefault(owner, len(self._rank))
        if owner != self.client.owner:
            on_add, on_update, on_delete = (_acting_for(owner, fn, self) for fn in (on_add, on_update, on_delete))
        listener = Listener(owner, on_add, on_update, on_delete)
        position = len(inf.listeners)
        while position and self._rank.get(inf.listeners[position - 1].owner, -1) > rank:
            position -= 1
        inf.listeners.insert(position, listener)
        return inf

    def forget(self, owner: str) -> None:
        """Remove every listener of `owner` (it starts a new life and registers anew)."""
        for inf in self.informers.values():
            inf.remove_listeners(owner)

    def replay(self, owner: str, now: int, out: Out) -> None:
        """Give `owner`'s listeners an add of every object in each informer that has synced (they were
        registered after it filled its cache)."""
        for inf in self.informers.values():
            if inf.has_synced:
                for listener in inf.listeners:
                    if listener.owner == owner:
                        inf.replay(now, listener, out)

    def start(self, now: int, out: Out) -> None:
        """Start every informer not started yet."""
        self.started = True
        self.added_since_start = False
        for inf in list(self.informers.values()):
            if not inf.started:
                inf.start(now, out)

    def reset(self) -> None:
        """Forget every cache (the process crashed); the registrations stay."""
        self.started = False
        for inf in self.informers.values():
            inf.reset()

    def synced(self) -> bool:
        return all(inf.has_synced for inf in self.informers.values())

    def synced_count(self) -> int:
        """How many of the informers have synced (in this life). Asked after every message a process's
        informers receive (kmodel.controllers.shared_informers): a list counted, cheaper than a generator summed."""
        return [inf.has_synced for inf in self.informers.values()].count(True)

    def take_called(self) -> dict[str, None]:
        """The owners whose handlers ran since the last call (see `called`), forgotten here."""
        called = self.called
        if called:
            self.called = {}
        return called

    def owners(self) -> list[str]:
        """Every owner that registered, in rank order."""
        return [owner for owner in self._rank if owner]

    def __repr__(self) -> str:
        return f"SharedInformerFactory({self.client.owner!r}, {list(self.informers)!r})"

