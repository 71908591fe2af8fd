"""The pod network's CNI plugin: a bridge-like plugin whose IPAM is host-local over the node's podCIDR(s).

Modelled on containernetworking/plugins plugins/main/bridge (cmdAdd / cmdDel) delegating to plugins/ipam/host-local
(main.go cmdAdd / cmdDel), under the CNI specification's rules for ADD and DEL.

Theory of operation
-------------------
A CNI plugin is not a daemon: the container runtime execs it once per ADD or DEL with the container id, the
network namespace path and the interface name, and the plugin's only memory is on disk. Here the disk is the
dict `disk` standing for host-local's directory /var/lib/cni/networks/<network name>/; the caller (the node)
owns it, so it survives a restart of the kubelet, of the runtime and of the plugin.

The configuration's ipam section is one host-local range set per podCIDR (two on a dual-stack node), laid out as
one of `IPAM_LAYOUTS` from the podCIDR. kindnet and containerd's conf_template write the first, the podCIDR as
the range's subnet and nothing else; an administrator who writes the node's configuration may keep part of the
block for other uses (rangeStart/rangeEnd), put the bridge's gateway at the block's end, or split the block into
several ranges of one range set, which host-local walks in turn:

    podcidr        [{"subnet": <podCIDR>}]
    middle         [{"subnet": <podCIDR>, "rangeStart": <first of its 2nd quarter>, "rangeEnd": <last of its 3rd>}]
    gateway-last   [{"subnet": <podCIDR>, "gateway": <its last usable address>}]
    halves         [{"subnet": <first half>}, {"subnet": <second half>}]

ADD(container_id, netns, ifname): each range set allocated in turn (kmodel.ipam.hostlocal: round robin after last_reserved_ip.<idx>, duplicate id/ifname refused). If range
set idx fails, the addresses already taken in this ADD are released and the error is upstream's
`failed to allocate for range <idx>: <host-local error>`, e.g.
`failed to allocate for range 0: no IP addresses available in range set: 10.244.1.1-10.244.1.254`. The result
lists the interface and one IP per range set with the gateway (network + 1), the bridge being the gateway.

DEL(container_id, netns, ifname): releases whatever host-local holds for container_id/ifname in every range set.
As the CNI spec requires, DEL is idempotent: deleting twice, or deleting a container that never got an address,
succeeds. An empty netns is allowed on DEL (the runtime may have lost it, e.g. after a reboot).

Errors are CNIError with the spec's code (4: a required CNI_* variable is missing, as the skel checks; host-local
failures surface with ErrInternal, 999, the code the skel gives a plain error) and upstream's message text.

Differences from upstream: no veth, bridge, routes, iptables, hairpin or IP masquerade are set up (kube-proxy and
the data path are modelled elsewhere); CHECK, STATUS, GC and VERSION are not modelled; the bridge plugin's
"failed to open netns" check is reduced to refusing an empty netns on ADD.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Callable, MutableMapping, Sequence, Union

from kmodel.ipam.hostlocal import HostLocalAllocator, HostLocalError, HostLocalRange, IPConfig

CNI_VERSION = "1.0.0"
PLUGIN_TYPE = "bridge"
DEFAULT_NETWORK_NAME = "cbr0"
DEFAULT_BRIDGE = "cni0"

ERR_INVALID_ENVIRONMENT_VARIABLES = 4
ERR_INTERNAL = 999

#: the runtime's network error while no CNI configuration is loaded: containerd's CRI reports the NetworkReady
#: runtime condition false with this reason and message (kindnet and the bridge setups write the configuration
#: only from the Node's podCIDR), and the kubelet's updateRuntimeUp wraps it as `container runtime network not
#: ready: %v`; both the Ready condition and the pod sync's NetworkNotReady error carry it
RUNTIME_NETWORK_NOT_READY = ("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
                             "message:Network plugin returns error: cni plugin not initialized")


class CNIError(Exception):
    """A CNI error result ({"code", "msg", "details"}); str() is the message."""

    def __init__(self, msg: str, code: int = ERR_INTERNAL, details: str = "") -> None:
        super().__init__(msg)
        self.code = code
        self.msg = msg
        self.details = details

    def __str__(self) -> str:
        return self.msg


def _podcidr(cidr: str) -> tuple[HostLocalRange, ...]:
    return (HostLocalRange.parse(cidr),)


def _middle(cidr: str) -> tuple[HostLocalRange, ...]:
    net = ipaddress.ip_network(cidr)
    quarter = net.num_addresses // 4
    return (HostLocalRange.parse(cidr, range_start=str(net.network_address + quarter),
                                 range_end=str(net.network_address + 3 * quarter - 1)),)


def _gateway_last(cidr: str) -> tuple[HostLocalRange, ...]:
    net = ipaddress.ip_network(cidr)
    return (HostLocalRange.parse(cidr, gateway=str(net.broadcast_address - 1)),)


def _halves(cidr: str) -> tuple[HostLocalRange, ...]:
    return tuple(HostLocalRange.parse(str(half)) for half in ipaddress.ip_network(cidr).subnets(prefixlen_diff=1))


#: the node's host-local range set for a podCIDR, by the name of its layout (see the module docstring); the
#: first is what kindnet writes
IPAM_LAYOUTS: dict[str, Callable[[str], tuple[HostLocalRange, ...]]] = {
    "podcidr": _podcidr, "middle": _middle, "gateway-last": _gateway_last, "halves": _halves,
}
DEFAULT_IPAM_LAYOUT = "podcidr"


def pod_addresses(cidr: str, layout: str = DEFAULT_IPAM_LAYOUT) -> int:
    """How many pod addresses host-local hands out of the podCIDR `cidr` laid out as `layout`: every address of
    each range from rangeStart to rangeEnd but the range's gateway, which the allocator skips."""
    count = 0
    for r in IPAM_LAYOUTS[layout](cidr):
        count += int(r.range_end) - int(r.range_start) + 1 - (1 if r.contains(r.gateway) else 0)
    return count


@dataclass(frozen=True)
class CNIInterface:
    name: str
    sandbox: str = ""


@dataclass(frozen=True)
class CNIResult:
    """The ADD result (types/100.Result): the interfaces and one IP configuration per range set."""

    cni_version: str
    interfaces: tuple[CNIInterface, ...]
    ips: tuple[IPConfig, ...]

    @property
    def pod_ips(self) -> tuple[str, ...]:
        """The addresses as strings (what the kubelet reports as status.podIPs), in range-set order."""
        return tuple(str(c.ip) for c in self.ips)


class BridgeCNI:
    """The network configuration of one node: its name, bridge, and a host-local range set per podCIDR, laid out
    as IPAM_LAYOUTS[`layout`] says."""

    __slots__ = ("network_name", "bridge", "range_sets", "disk")

    def __init__(
        self,
        pod_cidrs: Union[str, Sequence[str]],
        disk: MutableMapping[str, str],
        network_name: str = DEFAULT_NETWORK_NAME,
        bridge: str = DEFAULT_BRIDGE,
        layout: str = DEFAULT_IPAM_LAYOUT,
    ) -> None:
        if isinstance(pod_cidrs, str):
            pod_cidrs = (pod_cidrs,)
        self.network_name = network_name
        self.bridge = bridge
        self.range_sets: tuple[tuple[HostLocalRange, ...], ...] = tuple(IPAM_LAYOUTS[layout](c) for c in pod_cidrs)
        self.disk = disk

    def _allocators(self) -> list[HostLocalAllocator]:
        # ipamConf.Ranges: one range set per podCIDR, indexed in order.
        return [HostLocalAllocator(r, self.disk, range_id=i) for i, r in enumerate(self.range_sets)]

    def add(self, container_id: str, netns: str, ifname: str) -> CNIResult:
        """ADD: give the container's interface an address from every range set (see the module docstring)."""
        if not container_id:
            raise CNIError("required env variables [CNI_CONTAINERID] missing", ERR_INVALID_ENVIRONMENT_VARIABLES)
        if not netns:
            raise CNIError("required env variables [CNI_NETNS] missing", ERR_INVALID_ENVIRONMENT_VARIABLES)
        if not ifname:
            raise CNIError("required env variables [CNI_IFNAME] missing", ERR_INVALID_ENVIRONMENT_VARIABLES)
        done: list[HostLocalAllocator] = []
        ips: list[IPConfig] = []
        for idx, alloc in enumerate(self._allocators()):
            try:
                ips.append(alloc.allocate(container_id, ifname))
            except HostLocalError as err:
                for prev in done:
                    prev.release(container_id, ifname)
                raise CNIError(f"failed to allocate for range {idx}: {err}") from None
            done.append(alloc)
        interfaces = (CNIInterface(self.bridge), CNIInterface(ifname, netns))
        return CNIResult(CNI_VERSION, interfaces, tuple(ips))

    def delete(self, container_id: str, netns: str, ifname: str) -> None:
        """DEL: release the container's addresses in every range set; idempotent."""
        if not container_id:
            raise CNIError("required env variables [CNI_CONTAINERID] missing", ERR_INVALID_ENVIRONMENT_VARIABLES)
        for alloc in self._allocators():
            alloc.release(container_id, ifname)

    def reserved(self) -> dict[str, str]:
        """address -> owning container id, over every range set (a read-only view for invariants)."""
        out = {}
        for name in sorted(self.disk):
            if not name.startswith("last_reserved_ip."):
                out[name] = self.disk[name].split("\r\n", 1)[0]
        return out
