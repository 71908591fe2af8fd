"""The StatefulSet rules: a user applying and scaling the StatefulSet `db` (a mixin of `KmodelMachine`).

    apply_statefulset   kubectl apply db: 0-3 replicas, OrderedReady or Parallel, one of two images
    scale_statefulset   kubectl scale statefulset db: 0-3 replicas

Every draw shrinks toward the simplest: no replicas, OrderedReady, the first image. Both rules always send their
command (a scale before the set exists is kubectl's 404, recorded as its result).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from kmodel.checker.statefulset_actions import IMAGES, ApplyStatefulSet, ScaleStatefulSet

#: the sizes drawn: up to three pods, enough for an order to show
REPLICAS = st.integers(0, 3)


class StatefulSetRules:
    """Rules of the user's StatefulSet. Mixed into `KmodelMachine` (which provides `cluster` and `_do`)."""

    cluster: Any
    _do: Any

    @rule(replicas=REPLICAS, parallel=st.booleans(), image=st.integers(0, len(IMAGES) - 1))
    def apply_statefulset(self, replicas: int, parallel: bool, image: int) -> None:
        self._do("apply_statefulset", ApplyStatefulSet(replicas, parallel, image))

    @rule(replicas=REPLICAS)
    def scale_statefulset(self, replicas: int) -> None:
        self._do("scale_statefulset", ScaleStatefulSet(replicas))
