"""The address rule (a mixin of `KmodelMachine`): a chart of Services, where the service CIDR runs out.

    apply_chart   kubectl apply -f (or delete -f) of a chart's 4 or 16 Services and the EndpointSlices it writes
                  for them (kmodel.checker.address_actions)

Why: the other rules create the apps' two Services, which never fill even the smallest service CIDR an example's
address plan draws (kmodel.checker.addressplan: 6 ClusterIPs). A user installing a chart creates many at once;
in a small plan the last ones are refused with the allocator's `range is full`, and a delete gives the addresses
back. A chart's other form may name its database by DNS instead (ExternalName Services): an update that
switches a Service to ExternalName gives its ClusterIP back. Its Services have no selector, so the chart writes
their EndpointSlices by hand, with the turns such slices take (a port without a number, another address family,
a slice an upgrade moves to another Service), which kube-proxy meets nowhere else. Shrinks toward the smaller
chart, applied, at its first version, its ClusterIP form.
"""

from __future__ import annotations

from typing import ClassVar

from hypothesis import strategies as st

from kmodel.checker.address_actions import CHART_SIZES, CHART_VERSIONS, ApplyChart
from kmodel.checker.rulebook import RuleFamily, rule


class AddressRules(RuleFamily):
    """The rule of the module docstring. Mixed into KmodelMachine, which provides `cluster` and `_do`."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Sends", "Shrinks to")

    @rule(count=st.sampled_from(CHART_SIZES), delete=st.booleans(), version=st.sampled_from(CHART_VERSIONS),
          external=st.booleans())
    def apply_chart(self, count: int, delete: bool, version: int = 1, external: bool = False) -> None:
        """Draws: a chart of 4 or 16 Services without a selector (chart-1 ..); apply or delete; its version (1, or 2,
        which moves the slice of chart-4 to chart-1); its ClusterIP form or the one whose Services are ExternalName
        Sends: `kubectl apply -f` (`apply-chart`): each Service created in turn, given the next free ClusterIP of
        the example's service CIDR, or refused 500 `Internal error occurred: failed to allocate a serviceIP: range
        is full` when none is left; a Service switched to ExternalName drops its ClusterIP, which is released
        (the ClusterIP form applied over it leaves it so: the model's apply is a merge patch of what the manifest
        sets); then the EndpointSlices the chart writes for its first four (one as the docs write it, one whose
        port has no number, an IPv6 one, one that version 2 moves to chart-1), which kube-proxy programs or skips
        as upstream's does; or `kubectl delete -f`: each deleted, its ClusterIP released
        Shrinks to: the chart of 4, applied, at version 1, its ClusterIP form"""
        self._do(ApplyChart(count, delete, version, external))
