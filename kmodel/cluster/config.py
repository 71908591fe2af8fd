"""A whole cluster's configuration from a few numbers, with Kubernetes' defaults.

Times are logical milliseconds. The defaults are Kubernetes' own (its kubelet and controller flags), except
the node monitor grace period: 40 s as in Kubernetes before 1.32 (50 s since).
"""

from __future__ import annotations

from typing import Any

import attrs

from kmodel.fixes import check_fixes
from kmodel.component.registry import default_components
from kmodel.kubelet.cni import IPAM_LAYOUTS



def __getattr__(name: str) -> Any:
    """`DEFAULT_COMPONENTS`: the components a default cluster runs, by name (those registered with default=True:
    kmodel.component.registry), read when first asked for, since registering imports the components' modules."""
    if name == "DEFAULT_COMPONENTS":
        return default_components()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_cni_ipam(instance: Any, attribute: Any, value: str) -> None:
    if value not in IPAM_LAYOUTS:
        raise ValueError(f"unknown cni_ipam {value!r}: use one of {', '.join(IPAM_LAYOUTS)}")


def _names(value: Any) -> tuple[str, ...]:
    """Components as a tuple of names (one name alone is a tuple of one)."""
    return (value,) if isinstance(value, str) else tuple(value)


def _default_components() -> tuple[str, ...]:
    return default_components()


@attrs.frozen
class ClusterConfig:
    nodes: int = 3
    apiservers: int = 1
    seed: int = 0
    #: the components it runs: built-in ones by name, yours by import path (kmodel.component.registry); default:
    #: those registered as default
    components: tuple[str, ...] = attrs.field(factory=_default_components, converter=_names)
    # how many kube-controller-managers and kube-schedulers run
    controller_managers: int = attrs.field(default=1, validator=attrs.validators.ge(1))
    schedulers: int = attrs.field(default=1, validator=attrs.validators.ge(1))
    # --leader-elect, on by default as upstream's kube-controller-manager and kube-scheduler: every copy, even a
    # lone one, is a candidate on a Lease (kmodel.client.leaderelection), only the leader acts, and a leader that
    # cannot renew within RenewDeadline exits and restarts. False (--leader-elect=false) only with one of each:
    # several copies that do not elect would all act, which the model does not run
    leader_elect: bool = attrs.field(default=True)
    # users with a bearer token "<name>-token" (besides admin, alice and bob); no roles: RBAC decides
    users: tuple[str, ...] = ()
    # node capacity (what each kubelet reports)
    node_cpu: str = "4"
    node_memory: str = "8Gi"
    max_pods: int = 110
    # networks
    cluster_cidr: str = "10.244.0.0/16"
    node_cidr_mask_size: int = 24
    service_cidr: str = "10.96.0.0/12"
    # how each node's CNI configuration lays out host-local's ranges in its podCIDR (kmodel.kubelet.cni.IPAM_LAYOUTS)
    cni_ipam: str = attrs.field(default="podcidr", validator=_check_cni_ipam)
    # kubelet
    node_status_update_period_ms: int = 10_000  # nodeStatusUpdateFrequency
    node_status_report_period_ms: int = 300_000  # nodeStatusReportFrequency
    lease_duration_seconds: int = 40
    lease_renew_interval_ms: int = 10_000
    # node lifecycle controller
    node_monitor_period_ms: int = 5_000
    node_monitor_grace_period_ms: int = 40_000
    node_startup_grace_period_ms: int = 60_000
    # static pods per node: node name -> tuple of Pod objects (the kubelet's manifest folder)
    static_pods: tuple[tuple[str, tuple], ...] = ()
    # the anti-pattern variant the model runs (kmodel.variants); "default" is Kubernetes as it is built
    variant: str = "default"
    # opt-in fixes of upstream bugs the default model reproduces (kmodel.fixes); () is Kubernetes as it is
    # (each once, in the registry's order; ValueError for an unknown name)
    fixes: tuple[str, ...] = attrs.field(default=(), converter=check_fixes)
    # the garbage collector monitors custom resources as their CRDs are established (upstream's always does);
    # False only for traces recorded before the model served CRDs (kmodel.checker.trace)
    gc_monitors_custom_resources: bool = True
    # the garbage collector monitors every built-in resource it can delete, but events (upstream's does); False
    # (deployments, replicasets, statefulsets and pods only) only for traces recorded before it did
    gc_monitors_every_resource: bool = True

    @leader_elect.validator
    def _one_of_each_without_election(self, attribute: Any, value: bool) -> None:
        check_election(self.controller_managers, self.schedulers, value)

    @property
    def has_standbys(self) -> bool:
        """Several kube-controller-managers or kube-schedulers: a standby can take a lease over from a leader that
        goes away (what the checker's pause rule and the elections-only sometimes properties are about; a lone
        candidate only ever hands its lease to itself, restarted)."""
        return self.controller_managers > 1 or self.schedulers > 1

    def node_names(self) -> list[str]:
        return [f"node-{i}" for i in range(1, self.nodes + 1)]

    def apiserver_names(self) -> list[str]:
        return [f"apiserver-{i}" for i in range(self.apiservers)]

    def static_pods_of(self, node: str) -> tuple:
        for name, pods in self.static_pods:
            if name == node:
                return pods
        return ()


def check_election(controller_managers: int, schedulers: int, leader_elect: bool) -> None:
    """ValueError (one line) for several copies of a component that does not elect: they would all act."""
    if not leader_elect and (controller_managers > 1 or schedulers > 1):
        raise ValueError("--leader-elect=false runs one kube-controller-manager and one kube-scheduler: drop "
                         "--controller-managers and --schedulers, or keep leader election on")


def node_ip(node: str) -> str:
    """The InternalIP of a model node: node-N is 172.18.0.(N+1), as kind numbers its node containers; beyond
    node-250 (172.18.1.x holds the API servers), node-(250+k) is 172.19.(k // 256).(k % 256)."""
    prefix, _, number = node.rpartition("-")
    if prefix != "node" or not number.isdigit() or not 1 <= int(number) <= 250 + 65_534:
        raise ValueError(f"no model IP for node {node!r}: model nodes are named node-1 … node-65784")
    n = int(number)
    if n <= 250:
        return f"172.18.0.{n + 1}"
    k = n - 250
    return f"172.19.{k // 256}.{k % 256}"
