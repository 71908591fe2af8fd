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

from typing import ClassVar

from hypothesis import strategies as st

from kmodel.checker.access_actions import DeleteWith
from kmodel.checker.access_rules import PROPAGATION
from kmodel.checker.statefulset_actions import IMAGES, STATEFULSET, ApplyStatefulSet, ScaleStatefulSet
from kmodel.checker.rulebook import RuleFamily, rule

#: the sizes drawn: up to three pods, enough for an order to show
REPLICAS = st.integers(0, 3)


class StatefulSetRules(RuleFamily):
    """Rules of the user's StatefulSet. Mixed into `KmodelMachine` (which provides `cluster` and `_do`)."""

    docs_columns: ClassVar[tuple[str, ...]] = ("Draws", "Does", "Shrinks to")

    @rule(replicas=REPLICAS, parallel=st.booleans(), image=st.integers(0, len(IMAGES) - 1))
    def apply_statefulset(self, replicas: int, parallel: bool, image: int) -> None:
        """Draws: 0-3 replicas; OrderedReady or Parallel; an image (`IMAGES`: nginx:1.25, nginx:1.26)
        Does: `kubectl apply` of the StatefulSet `db` (`apply-statefulset`, `kmodel/checker/statefulset_actions.py`;
        the rules are the mixin `StatefulSetRules`): its controller creates `db-0`, `db-1`, ...
        ([StatefulSets](statefulsets.md)); a new image is a rolling update from the highest ordinal; the other
        policy is refused (422: the field is immutable); `delete_statefulset` (and, rarely, `delete_with_options`:
        [access rules](rules-access.md)) deletes it with a cascade, and applying it again after an Orphan delete
        adopts the pods left
        Shrinks to: db with no replicas, OrderedReady, nginx:1.25"""
        self._do(ApplyStatefulSet(replicas, parallel, image))

    @rule(replicas=REPLICAS)
    def scale_statefulset(self, replicas: int) -> None:
        """Draws: 0-3 replicas
        Does: `kubectl scale statefulset db` (`scale-statefulset`; 404 while there is no set)
        Shrinks to: scale to 0"""
        self._do(ScaleStatefulSet(replicas))

    @rule(cascade=st.sampled_from(PROPAGATION))
    def delete_statefulset(self, cascade: str) -> None:
        """Draws: a cascade: none (the server's default, background), background, foreground, orphan
        Does: `kubectl delete statefulset db` (`delete-with`; 404 while there is no set): background and foreground
        take the pods with the set (the garbage collector), orphan leaves them running without an owner until
        `apply_statefulset` makes a new `db`, which adopts them
        Shrinks to: no cascade"""
        self._do(DeleteWith("statefulsets", "default", STATEFULSET, propagation_policy=cascade))
