"""The actions of the address rules (kmodel.checker.address_rules): a chart's Services applied or deleted at once."""

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


@attrs.frozen
class ApplyChart(Action):
    """`kubectl apply -f` of a chart's `count` Services (chart-1 .. chart-N), each created or updated in turn; a
    create the service CIDR has no address left for is refused (500 `range is full`) and the next one is tried,
    as kubectl does. `delete`: `kubectl delete -f` of the same file (NotFound for those that are not there).
    `external`: the chart's version whose Services are ExternalName (`chart_service`)."""

    kind: ClassVar[str] = "apply-chart"
    simplest: ClassVar[Simplest] = (("count", earlier(CHART_SIZES)), ("delete", default(False)),
                                    ("external", default(False)))
    count: int = at_least(1)
    delete: bool = False
    external: bool = False

    @property
    def name(self) -> str:
        version = " (ExternalName)" if self.external and not self.delete else ""
        return f"kubectl {'delete' if self.delete else 'apply'} -f chart.yaml ({self.count} Services{version})"

    def apply(self, cluster: Cluster) -> None:
        for i in range(1, self.count + 1):
            if self.delete:
                cluster.submit(Delete("services", "default", f"{CHART_PREFIX}{i}"))
            else:
                cluster.submit(Apply(chart_service(i, self.external)))
