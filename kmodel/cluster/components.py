"""What a component's factory is given, and the wiring that needs the whole cluster.

Each factory is `make(ctx: ClusterContext) -> list[Component]`, registered with the component's name, process,
service account and RBAC rules (kmodel.component.registry); the cluster names the components it runs (a cluster
can run a subset, as a test of one controller does). `wire(cluster)` finishes the wiring once the loop exists: a variant's extra
components (VARIANT_COMPONENTS: the bypass-apiserver variant's etcdctl) and the data plane handed to the
traffic client.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

from kmodel.apiserver.authentication import service_account_token
from kmodel.cluster.config import ClusterConfig
from kmodel.component.registry import KUBE_CONTROLLER_MANAGER, controller_service_accounts, resolve
from kmodel.switches import Switches
from kmodel.variants import BYPASS_APISERVER
from kmodel.traffic.dataplane import DataPlane

#: the components a variant adds to the cluster, when the variant's one place is a component of its own
VARIANT_COMPONENTS: dict[str, tuple[str, ...]] = {
    BYPASS_APISERVER: ("etcdctl",),
}


#: the process name of the first kube-controller-manager
CONTROLLER_MANAGER = KUBE_CONTROLLER_MANAGER


@attrs.frozen
class ClusterContext:
    """What a factory needs to build its components."""

    config: ClusterConfig
    apiservers: tuple[str, ...]  # API server endpoints, in the order clients fail over through them
    #: which copy of a replicated control-plane component is built (kube-controller-manager, kube-scheduler):
    #: 1, 2, ... (`named`)
    instance: int = 1

    def named(self, base: str) -> str:
        """The name of this copy of component `base`: `base` for the first; then "controller-2/deployment" for a
        controller ("controller/deployment"), "scheduler-2" for anything else."""
        return instance_name(base, self.instance)

    @property
    def switches(self) -> Switches:
        """What the components are built with and hand their ApiClient (`switches_of`)."""
        return switches_of(self.config)

    @property
    def host(self) -> str:
        """The control-plane machine this copy runs on (what its leader-election identity names)."""
        return f"control-plane-{self.instance}"


def switches_of(config: ClusterConfig) -> Switches:
    """The cluster's switches (kmodel.switches): its variant and fixes, and as the pessimistic-locking variant's lock
    holders the tokens of every built-in controller's service account (the bootstrap policy binds the lock's role
    to them, whichever controllers run)."""
    holders = frozenset(service_account_token(account) for account in controller_service_accounts())
    return Switches(config.variant, frozenset(config.fixes), holders)


def instance_name(base: str, instance: int) -> str:
    """See `ClusterContext.named`."""
    if instance == 1:
        return base
    head, slash, rest = base.partition("/")
    return f"{head}-{instance}/{rest}" if slash else f"{base}-{instance}"


def factory(name: str) -> Callable:
    """The factory of the component `name` (a built-in's name or a component of your own: registry.resolve)."""
    return resolve(name).factory


def wire(cluster: Any) -> None:
    """The wiring that needs the whole cluster, done once at the end of `Cluster.__init__`:

    * the variant's extra components (VARIANT_COMPONENTS), built by their factories and started now;
    * each kube-controller-manager's `Leadership` told how to wake its controllers when it starts leading (the
      loop's `notify_work`: kmodel.controllers.base), and its shared informers how to wake the controllers they
      feed (kmodel.controllers.shared_informers);
    * one `DataPlane` (kmodel.traffic.dataplane) over the loop's live table of components and the cluster's
      removed nodes, handed to every component that sends application traffic (`attach_dataplane`). It is
      the nodes' kernels and the pod network: read, never a message.
    """
    for component in cluster.components:
        leadership = getattr(component, "leadership", None)
        if leadership is not None and leadership.wake is None:
            leadership.wake = cluster.loop.notify_work
        if hasattr(component, "wake") and component.wake is None:  # a process's shared informers
            component.wake = cluster.loop.notify_work
    ctx = ClusterContext(cluster.config, tuple(cluster.config.apiserver_names()))
    for name in VARIANT_COMPONENTS.get(cluster.config.variant, ()):
        for component in factory(name)(ctx):
            cluster.components.append(component)
            cluster.loop.add_component(component)
    dataplane = None
    for component in cluster.components:
        attach = getattr(component, "attach_dataplane", None)
        if attach is None:
            continue
        if dataplane is None:
            dataplane = DataPlane(cluster.loop.components, cluster.removed_nodes)
        attach(dataplane)
