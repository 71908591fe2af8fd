"""scheduling.k8s.io/v1 PriorityClass: a name for a pod priority, resolved into spec.priority by the Priority
admission plugin when a pod is created (kmodel/apiserver/admission/priority.py)."""

from __future__ import annotations

import attrs

from .meta import ObjectMeta
from .registry import api_kind
from .schema import BOOL, INT32, STRING, enum_string, fld, struct

#: scheduling.SystemPriorityClassPrefix: names only the system's own classes may take
SYSTEM_PRIORITY_CLASS_PREFIX = "system-"
#: scheduling.HighestUserDefinablePriority
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
#: scheduling.SystemCriticalPriority
SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY
#: the priority of a pod created while no PriorityClass is marked globalDefault
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS = 0
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"
PREEMPTION_POLICIES = (PREEMPT_LOWER_PRIORITY, "Never")


@api_kind("scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", namespaced=False)
@attrs.frozen
class PriorityClass:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    value: int = fld(INT32, keep=True)
    global_default: bool = fld(BOOL)
    description: str = fld(STRING)
    preemption_policy: str | None = fld(enum_string("v1.PreemptionPolicy"), ptr=True)


def system_priority_classes() -> tuple[PriorityClass, ...]:
    """scheduling.SystemPriorityClasses(): what kube-apiserver's scheduling/bootstrap-system-priority-classes
    post-start hook creates, defaulted."""
    return (
        PriorityClass(metadata=ObjectMeta(name="system-node-critical"), value=SYSTEM_CRITICAL_PRIORITY + 1000,
                      description="Used for system critical pods that must not be moved from their current node.",
                      preemption_policy=PREEMPT_LOWER_PRIORITY),
        PriorityClass(metadata=ObjectMeta(name="system-cluster-critical"), value=SYSTEM_CRITICAL_PRIORITY,
                      description="Used for system critical pods that must run in the cluster, but can be moved to "
                                  "another node if necessary.",
                      preemption_policy=PREEMPT_LOWER_PRIORITY),
    )
