"""StatefulSet actions: the user applying and scaling the StatefulSet `db`.

Each action is one kubectl invocation sent through the cluster's kubectl component (`Cluster.submit`): ``kubectl
apply`` of the set (a drawn size, pod management policy and image: a new image rolls the set out) and ``kubectl
scale statefulset``. The set runs the apps' container (port 80, no host port) and is named apart from the
Deployments' apps, so its pods `db-0`, `db-1`, ... are nobody else's. podManagementPolicy is immutable: applying
the set again with the other policy is refused (422), as the API server refuses kubectl's.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from kmodel.checker.actions import Action, app_container
from kmodel.cluster import Cluster, Scale
from kmodel.cluster.kubectl import Apply
from kmodel.loop.events import at_least

#: the checker's StatefulSet (and its pods' app label)
STATEFULSET = "db"
#: the images apply_statefulset draws from, the plainest first; another image is a new revision to roll out
IMAGES: tuple[str, ...] = ("nginx:1.25", "nginx:1.26")


def statefulset_manifest(replicas: int, parallel: bool, image: int) -> dict:
    """The `db` StatefulSet: `replicas` pods of the apps' container, OrderedReady unless `parallel`."""
    container = {**app_container(0, False), "image": IMAGES[image]}
    spec: dict = {
        "serviceName": STATEFULSET, "replicas": replicas, "selector": {"matchLabels": {"app": STATEFULSET}},
        "template": {"metadata": {"labels": {"app": STATEFULSET}}, "spec": {"containers": [container]}},
    }
    if parallel:
        spec["podManagementPolicy"] = "Parallel"
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": STATEFULSET, "namespace": "default"}, "spec": spec}


@attrs.frozen
class ApplyStatefulSet(Action):
    """kubectl apply the StatefulSet `db` of `replicas` pods (Parallel when `parallel`), with image `image` (an
    index into IMAGES)."""

    kind: ClassVar[str] = "apply-statefulset"
    replicas: int = at_least(0)
    parallel: bool = False
    image: int = at_least(0, default=0)

    @property
    def name(self) -> str:
        policy = ", Parallel" if self.parallel else ""
        return f"kubectl apply statefulset {STATEFULSET} ({self.replicas} replicas{policy}, {IMAGES[self.image]})"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Apply(statefulset_manifest(self.replicas, self.parallel, self.image)))


@attrs.frozen
class ScaleStatefulSet(Action):
    """kubectl scale statefulset db --replicas=N (404 while there is no set)."""

    kind: ClassVar[str] = "scale-statefulset"
    replicas: int = at_least(0)

    @property
    def name(self) -> str:
        return f"kubectl scale statefulset {STATEFULSET} --replicas={self.replicas}"

    def apply(self, cluster: Cluster) -> None:
        cluster.submit(Scale("statefulsets", "default", STATEFULSET, self.replicas))
