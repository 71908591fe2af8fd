"""kube-proxy as a sans-IO component, one per node ("proxy/<node>", token "proxy-token").

Theory of operation
-------------------
Each kube-proxy watches Services and EndpointSlices (discovery.k8s.io/v1) through its own `ApiClient` (user
system:kube-proxy, bound to the ClusterRole system:node-proxier: services, endpoints, endpointslices and nodes,
write events). Both informers use upstream's label selector
`!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless` (objects that ask for another proxy,
or headless Services' slices, are not its business). A slice belongs to the Service its
kubernetes.io/service-name label names (a slice without it is ignored, as upstream's EndpointSliceCache does);
whoever wrote it, the EndpointSlice controller or anyone else.

`rules` is what this node has programmed (its iptables): {"<clusterIP>:<port>": ["<ip>:<port>", ...]}, keys
sorted, lists sorted (kmodel.proxy.rules says how a Service and its slices become rules). Like upstream's
proxier, nothing is programmed until *both* informers have synced (isInitialized); the first sync then writes
the whole table, and every later Service or EndpointSlice event recomputes only the rules of that one Service
(the table is kept per Service, and the sorted view is rebuilt only when something changed and someone
reads it).

Crash and restart: a kube-proxy process dies, the kernel's iptables rules do not. So the model keeps the
programmed table across a crash (`rules` still shows what the node would forward to) and forgets only the
process's memory (informers, per-Service state). After a restart the informers list again and, once both
have synced, the table is rewritten from scratch (upstream's first syncProxyRules does a full
iptables-restore). Rules that point at endpoints deleted while the proxy was down therefore stay until the
restarted proxy has synced: that window is real.

Differences from upstream: a change is programmed at once, where upstream batches syncs (BoundedFrequencyRunner,
--iptables-min-sync-period 1 s); no periodic full resync (--iptables-sync-period 30 s) since the model's
rules cannot drift; no healthz, conntrack cleanup or node watching.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from kmodel.component.registry import component
from kmodel.client import ApiClient, Informer
from kmodel.client.indexer import DeletedFinalStateUnknown
from kmodel.client.component import ClientComponent
from kmodel.client.rate_limiter import PROXY_LIMIT
from kmodel.component import Component, Out
from kmodel.objects.discovery import SERVICE_NAME_LABEL
from kmodel.network import Message
from kmodel.switches import DEFAULT_SWITCHES, Switches
from kmodel.proxy.rules import service_rules

PROXY_TOKEN = "proxy-token"
LABEL_SELECTOR = "!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless"


SERVICE_INDEX = "service"


def _unwrap(obj: Any) -> Any:
    return obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj


def _key(obj: Any) -> str:
    """The key of the Service an object is about: a Service's own, a slice's kubernetes.io/service-name."""
    obj = _unwrap(obj)
    meta = obj.metadata
    if getattr(obj, "KIND", "") == "EndpointSlice":
        return f"{meta.namespace}/{meta.labels.get(SERVICE_NAME_LABEL, '')}"
    return f"{meta.namespace}/{meta.name}"


def _slice_service(eps: Any) -> list[str]:
    """endpointSliceCacheKeys: a slice without a service-name label belongs to no Service."""
    name = eps.metadata.labels.get(SERVICE_NAME_LABEL)
    return [f"{eps.metadata.namespace}/{name}"] if name else []


class KubeProxy(ClientComponent):
    """The kube-proxy of one node (see the module docstring)."""

    def __init__(self, name: str, node: str, endpoints: Sequence[str], *, token: str = PROXY_TOKEN,
                 switches: Switches = DEFAULT_SWITCHES) -> None:
        super().__init__(name)
        self.node = node
        self.client = ApiClient(name, endpoints, token=token, rate_limit=PROXY_LIMIT, switches=switches)
        # the kernel's state: survives a crash of the process
        self._programmed: dict[str, dict[str, list[str]]] = {}
        self._view: Optional[dict[str, list[str]]] = {}
        self.syncs = 0
        self._init_memory()

    def _init_memory(self) -> None:
        self.initialized = False
        self.services = Informer(self.client, "services", label_selector=LABEL_SELECTOR,
                                 on_add=self._on_add, on_update=self._on_update, on_delete=self._on_delete)
        self.slices = Informer(self.client, "endpointslices", label_selector=LABEL_SELECTOR,
                               indexers={SERVICE_INDEX: _slice_service},
                               on_add=self._on_add, on_update=self._on_update, on_delete=self._on_delete)

    # -- the table -----------------------------------------------------------------------------------------

    @property
    def rules(self) -> dict[str, list[str]]:
        """The programmed rules, keys sorted, backends sorted (a fresh dict each time it changed)."""
        if self._view is None:
            flat: dict[str, list[str]] = {}
            for per_service in self._programmed.values():
                flat.update(per_service)
            self._view = {k: flat[k] for k in sorted(flat)}
        return self._view

    def _sync_service(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        service = self.services.indexer.get(namespace, name)
        new = {} if service is None else service_rules(service, self.slices.by_index(SERVICE_INDEX, key))
        if self._programmed.get(key, {}) != new:
            if new:
                self._programmed[key] = new
            else:
                self._programmed.pop(key, None)
            self._view = None

    def _sync_all(self) -> None:
        """The first sync after the informers synced: rewrite the whole table."""
        self.syncs += 1
        self._programmed = {}
        for service in self.services.indexer.list():
            self._sync_service(f"{service.metadata.namespace}/{service.metadata.name}")
        self._view = None

    def _changed(self, key: str) -> None:
        if self.initialized:
            self.syncs += 1
            self._sync_service(key)
        else:
            self._check_initialized()

    # -- informer handlers ---------------------------------------------------------------------------------

    def _on_add(self, now: int, obj: Any, out: Out) -> None:
        self._changed(_key(obj))

    def _on_update(self, now: int, old: Any, new: Any, out: Out) -> None:
        if _key(old) != _key(new):  # a slice moved to another Service: the one it left changes too
            self._changed(_key(old))
        self._changed(_key(new))

    def _on_delete(self, now: int, obj: Any, out: Out) -> None:
        self._changed(_key(obj))

    def _check_initialized(self) -> None:
        if not self.initialized and self.services.has_synced and self.slices.has_synced:
            self.initialized = True
            self._sync_all()

    # -- the component protocol ------------------------------------------------------------------------------

    def start(self, now: int, out: Out) -> None:
        self.services.start(now, out)
        self.slices.start(now, out)

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        self.client.on_message(now, msg, out)
        self._check_initialized()  # an empty list calls no handler

    def on_timer(self, now: int, name: str, out: Out) -> None:
        self.client.on_timer(now, name, out)

    def crash(self) -> None:
        self.client.reset()
        self._init_memory()


@component("proxy", default=True)  # one per node
def make(ctx: Any) -> list[Component]:
    """The cluster's factory: one kube-proxy per node."""
    return [KubeProxy(f"proxy/{node}", node, ctx.apiservers, switches=ctx.switches) for node in ctx.config.node_names()]
