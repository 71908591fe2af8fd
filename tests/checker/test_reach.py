"""The checker's reach: a short default run draws every family of inputs the model's components read.

A mechanism the checker never drives is untested, whatever the unit tests say. This runs what
`kmodel check --seed 10 --examples 30 --fix all` runs (the fixes let it run past the upstream bugs the model
reproduces, which would end it early) and asks that each family of actions happened at least once (its
rules count under the name of what they did: a fault rule with no candidate of its own kind injects the next
kind that has one, and counts as that kind).
"""

from __future__ import annotations

import pytest

from kmodel.checker.run import CheckOptions, run_campaign
from kmodel.fixes import NAMES

#: each family of inputs, and the names its actions count under in report.json's `rules`
FAMILIES: dict[str, tuple[str, ...]] = {
    "node labels": ("label_node",),
    "taints, cordon and uncordon": ("taint_node", "cordon_node"),
    "pods of every shape (host ports by protocol and hostIP, hostNetwork, resources, placement, tolerations)":
        ("apply_pod_shape",),
    "pod label edits that release and adopt": ("label_pod",),
    "finalizers added and removed": ("add_finalizer", "remove_finalizer"),
    "graceful, forced and propagating deletes": ("delete_with_options",),
    "namespaces created, filled and deleted": ("create_namespace", "apply_in_namespace", "delete_namespace"),
    "RBAC objects and requests as other users": ("apply_role", "apply_binding", "delete_rbac"),
    "Service selector and port edits": ("edit_service",),
    "Deployment strategy, pause and resume, rollback": ("set_strategy", "pause_deployment", "rollout_undo"),
    "invalid manifests": ("apply_invalid",),
    "StatefulSets applied and scaled": ("apply_statefulset", "scale_statefulset"),
    "StatefulSets deleted, with a cascade": ("delete_statefulset",),
    "per-request faults": ("fail_request_429", "fail_request_500", "fail_request_503", "fail_request_504"),
    "compaction at a chosen revision": ("compact", "compact_delete"),
    "API server and component restarts": ("crash", "restart"),
    "delayed links and held streams": ("delay_link", "stall_watch"),
    "probe flaps": ("flap_readiness", "fail_liveness"),
    "a CRD and its custom objects": ("apply_crd", "apply_database", "delete_crd"),
}


@pytest.fixture(scope="module")
def rules() -> dict[str, int]:
    return run_campaign(CheckOptions(examples=30, seed=10, fixes=NAMES)).stats.rules


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_short_default_run_reaches_every_family_of_inputs(rules, family):
    assert any(rules.get(name, 0) > 0 for name in FAMILIES[family]), (family, {n: rules.get(n, 0) for n in
                                                                                FAMILIES[family]})
