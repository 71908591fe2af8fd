"""The StatefulSet rules: a user applying, scaling and deleting the StatefulSet `db` (a mixin of `KmodelMachine`).

    apply_statefulset   kubectl apply db: 0-3 replicas, OrderedReady or Parallel, one of two images
    scale_statefulset   kubectl scale statefulset db: 0-3 replicas
    delete_statefulset  kubectl delete statefulset db, with a cascade: none (the server's default), background,
                        foreground or orphan

Every draw shrinks toward the simplest: no replicas, OrderedReady, the first image, no cascade. Every rule
always sends its command (a scale or delete before the set exists is kubectl's 404, recorded as its result).
`delete_with_options` (kmodel.checker.access_rules) deletes `db` too, but picks it among every object the user
sees, so rarely; this rule makes the set's deletion, and an Orphan delete's pods adopted by the set applied
next, as common as a Deployment's.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import rule

from kmodel.checker.access_actions import DeleteWith
from kmodel.checker.access_rules import PROPAGATION
from kmodel.checker.statefulset_actions import IMAGES, STATEFULSET, ApplyStatefulSet, ScaleStatefulSet

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

    @rule(cascade=st.sampled_from(PROPAGATION))
    def delete_statefulset(self, cascade: str) -> None:
        self._do("delete_statefulset", DeleteWith("statefulsets", "default", STATEFULSET, propagation_policy=cascade))
