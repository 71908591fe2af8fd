"""The actions of the address rules (kmodel.checker.address_rules): a chart's Services applied or deleted at once,
with the EndpointSlices the chart writes for them.

A Service without a selector gets its endpoints from whoever writes its EndpointSlices (the Kubernetes docs'
"Services without selectors": a database outside the cluster). The chart writes a slice for each of its first
CHART_SLICES Services, each with a mistake or a turn a hand-written slice may take, so that kube-proxy meets
them: the docs' own slice (its port named "" as the Service's unnamed port is, an address outside the
cluster); a port without a number (the API allows it: "ports are not restricted"; kube-proxy ignores the port,
"Ignoring invalid endpoint port"; a port without a name is no case: the API server defaults it to ""); an IPv6
slice for the IPv4 Service (its endpoints are another family's: kube-proxy's IPv4 proxier skips them); and a
slice whose kubernetes.io/service-name label the chart's `version` 2 moves from chart-4 to chart-1 (an
upgrade that moves endpoints between Services: kube-proxy syncs the one the slice left and the one it joined).
No slice carries the EndpointSlice controller's managed-by label: the controller leaves them alone."""

from __future__ import annotations

from typing import ClassVar

import attrs

from kmodel.checker.actions import Action
from kmodel.checker.simpler import Simplest, default, earlier
from kmodel.cluster import Cluster
from kmodel.cluster.kubectl import Apply, Delete
from kmodel.loop.events import at_least

#: how many Services a chart holds, fewest first: 4 fill the tight plan's 6 ClusterIPs with the apps' own two,
#: 16 fill the small plan's 14 dynamic ones and spill into its static block (kmodel.checker.addressplan)
CHART_SIZES: tuple[int, ...] = (4, 16)
#: the chart's Services are named chart-1, chart-2, ...
CHART_PREFIX = "chart-"
#: the chart's versions: 2 moves the last slice to chart-1 (see the module docstring)
CHART_VERSIONS: tuple[int, ...] = (1, 2)
#: how many of the chart's first Services it writes a slice for (every chart the rule draws has that many)
CHART_SLICES = 4


#: the domain the chart's external version points its Services at
EXTERNAL_DOMAIN = "db.example.com"


def chart_service(index: int, external: bool = False) -> dict:
    """The chart's Service `chart-<index>`: a ClusterIP Service without a selector (its endpoints are the
    chart's own to write, as for a database outside the cluster), so it costs the endpoint controllers nothing;
    `external`: the chart's version that names the database by its DNS name instead, an ExternalName Service
    (a Service switched to it gives its ClusterIP back)."""
    spec: dict = {"ports": [{"port": 80 + index, "protocol": "TCP"}]}
    if external:
        spec.update(type="ExternalName", externalName=f"{CHART_PREFIX}{index}.{EXTERNAL_DOMAIN}")
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": f"{CHART_PREFIX}{index}", "namespace": "default"}, "spec": spec}


def chart_slice(index: int, version: int) -> dict:
    """The chart's EndpointSlice `chart-<index>-manual` (1 <= index <= CHART_SLICES) at `version`: see the module
    docstring for what each one is."""
    # the Service's port has no name: "" names it, as the docs' example does
    port: dict = {"name": "", "protocol": "TCP"}
    if index != 2:
        port["port"] = 9000 + index
    service = f"{CHART_PREFIX}{1 if index == 4 and version == 2 else index}"
    ipv6 = index == 3
    address = f"2001:db8::{index}" if ipv6 else f"192.0.2.{index}"  # documentation ranges: outside the cluster
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": f"{CHART_PREFIX}{index}-manual", "namespace": "default",
                         "labels": {"kubernetes.io/service-name": service}},
            "addressType": "IPv6" if ipv6 else "IPv4",
            "endpoints": [{"addresses": [address]}], "ports": [port]}


@attrs.frozen
class ApplyChart(Action):
    """`kubectl apply -f` of a chart's `count` Services (chart-1 .. chart-N), each created or updated in turn; a
    create the service CIDR has no address left for is refused (500 `range is full`) and the next one is tried,
    as kubectl does, then its EndpointSlices at `version` (see the module docstring). `delete`: `kubectl delete
    -f` of the same file (NotFound for those that are not there). `external`: the chart's form whose Services are
    ExternalName (`chart_service`)."""

    kind: ClassVar[str] = "apply-chart"
    simplest: ClassVar[Simplest] = (("count", earlier(CHART_SIZES)), ("delete", default(False)),
                                    ("version", earlier(CHART_VERSIONS)), ("external", default(False)))
    count: int = at_least(1)
    delete: bool = False
    version: int = 1
    external: bool = False

    def __attrs_post_init__(self) -> None:
        if self.version not in CHART_VERSIONS:
            raise ValueError(f"version {self.version!r} is not one of {', '.join(map(str, CHART_VERSIONS))}")

    @property
    def name(self) -> str:
        version = f" version {self.version}" if self.version != 1 else ""
        form = " (ExternalName)" if self.external and not self.delete else ""
        return f"kubectl {'delete' if self.delete else 'apply'} -f chart.yaml{version} ({self.count} Services{form})"

    def apply(self, cluster: Cluster) -> None:
        for i in range(1, self.count + 1):
            if self.delete:
                cluster.submit(Delete("services", "default", f"{CHART_PREFIX}{i}"))
            else:
                cluster.submit(Apply(chart_service(i, self.external)))
        for i in range(1, min(self.count, CHART_SLICES) + 1):
            if self.delete:
                cluster.submit(Delete("endpointslices", "default", f"{CHART_PREFIX}{i}-manual"))
            else:
                cluster.submit(Apply(chart_slice(i, self.version)))
