"""apps/v1 kinds: Deployment, ReplicaSet, StatefulSet and ControllerRevision."""

from __future__ import annotations

from typing import Any

import attrs

from .core import PodTemplateSpec
from .meta import LabelSelector, ObjectMeta
from .registry import api_kind
from .schema import BOOL, INT32, INT64, INT_OR_STRING, RAW, STRING, TIME, enum_string, fld, list_of, struct

CONDITION_STATUS = enum_string("v1.ConditionStatus")


@attrs.frozen
class RollingUpdateDeployment:
    """maxUnavailable / maxSurge: an int, or a percent string such as "25%"."""

    max_unavailable: int | str | None = fld(INT_OR_STRING, ptr=True)
    max_surge: int | str | None = fld(INT_OR_STRING, ptr=True)


@attrs.frozen
class DeploymentStrategy:
    type: str = fld(enum_string("v1.DeploymentStrategyType"))
    rolling_update: RollingUpdateDeployment | None = fld(struct(RollingUpdateDeployment), ptr=True)


@attrs.frozen
class DeploymentSpec:
    replicas: int | None = fld(INT32, ptr=True)
    selector: LabelSelector | None = fld(struct(LabelSelector), ptr=True)
    template: PodTemplateSpec = fld(struct(PodTemplateSpec))
    strategy: DeploymentStrategy = fld(struct(DeploymentStrategy))
    min_ready_seconds: int = fld(INT32)
    revision_history_limit: int | None = fld(INT32, ptr=True)
    paused: bool = fld(BOOL)
    progress_deadline_seconds: int | None = fld(INT32, ptr=True)


@attrs.frozen
class DeploymentCondition:
    type: str = fld(enum_string("v1.DeploymentConditionType"), keep=True)
    status: str = fld(CONDITION_STATUS, keep=True)
    last_update_time: int | None = fld(TIME)
    last_transition_time: int | None = fld(TIME)
    reason: str = fld(STRING)
    message: str = fld(STRING)


@attrs.frozen
class DeploymentStatus:
    observed_generation: int = fld(INT64)
    replicas: int = fld(INT32)
    updated_replicas: int = fld(INT32)
    ready_replicas: int = fld(INT32)
    available_replicas: int = fld(INT32)
    unavailable_replicas: int = fld(INT32)
    conditions: tuple = fld(list_of(struct(DeploymentCondition)))
    collision_count: int | None = fld(INT32, ptr=True)


@api_kind("apps/v1", "Deployment", "deployments", namespaced=True)
@attrs.frozen
class Deployment:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: DeploymentSpec = fld(struct(DeploymentSpec))
    status: DeploymentStatus = fld(struct(DeploymentStatus))


@attrs.frozen
class ReplicaSetSpec:
    replicas: int | None = fld(INT32, ptr=True)
    min_ready_seconds: int = fld(INT32)
    selector: LabelSelector | None = fld(struct(LabelSelector), ptr=True)
    template: PodTemplateSpec = fld(struct(PodTemplateSpec))


@attrs.frozen
class ReplicaSetCondition:
    type: str = fld(enum_string("v1.ReplicaSetConditionType"), keep=True)
    status: str = fld(CONDITION_STATUS, keep=True)
    last_transition_time: int | None = fld(TIME)
    reason: str = fld(STRING)
    message: str = fld(STRING)


@attrs.frozen
class ReplicaSetStatus:
    replicas: int = fld(INT32, keep=True)
    fully_labeled_replicas: int = fld(INT32)
    ready_replicas: int = fld(INT32)
    available_replicas: int = fld(INT32)
    observed_generation: int = fld(INT64)
    conditions: tuple = fld(list_of(struct(ReplicaSetCondition)))


@api_kind("apps/v1", "ReplicaSet", "replicasets", namespaced=True)
@attrs.frozen
class ReplicaSet:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: ReplicaSetSpec = fld(struct(ReplicaSetSpec))
    status: ReplicaSetStatus = fld(struct(ReplicaSetStatus))


@attrs.frozen
class RollingUpdateStatefulSetStrategy:
    partition: int | None = fld(INT32, ptr=True)
    max_unavailable: int | str | None = fld(INT_OR_STRING, ptr=True)


@attrs.frozen
class StatefulSetUpdateStrategy:
    type: str = fld(enum_string("v1.StatefulSetUpdateStrategyType"))
    rolling_update: RollingUpdateStatefulSetStrategy | None = fld(struct(RollingUpdateStatefulSetStrategy), ptr=True)


@attrs.frozen
class StatefulSetSpec:
    """No volumeClaimTemplates, persistentVolumeClaimRetentionPolicy or ordinals: the model has no volumes and
    numbers pods from 0 (a manifest that names them is refused as an unknown field by strict decoding)."""

    replicas: int | None = fld(INT32, ptr=True)
    selector: LabelSelector | None = fld(struct(LabelSelector), ptr=True)
    template: PodTemplateSpec = fld(struct(PodTemplateSpec))
    service_name: str = fld(STRING)
    pod_management_policy: str = fld(enum_string("v1.PodManagementPolicyType"))
    update_strategy: StatefulSetUpdateStrategy = fld(struct(StatefulSetUpdateStrategy))
    revision_history_limit: int | None = fld(INT32, ptr=True)
    min_ready_seconds: int = fld(INT32)


@attrs.frozen
class StatefulSetCondition:
    type: str = fld(enum_string("v1.StatefulSetConditionType"), keep=True)
    status: str = fld(CONDITION_STATUS, keep=True)
    last_transition_time: int | None = fld(TIME)
    reason: str = fld(STRING)
    message: str = fld(STRING)


@attrs.frozen
class StatefulSetStatus:
    observed_generation: int = fld(INT64)
    replicas: int = fld(INT32, keep=True)
    ready_replicas: int = fld(INT32)
    current_replicas: int = fld(INT32)
    updated_replicas: int = fld(INT32)
    current_revision: str = fld(STRING)
    update_revision: str = fld(STRING)
    collision_count: int | None = fld(INT32, ptr=True)
    conditions: tuple = fld(list_of(struct(StatefulSetCondition)))
    available_replicas: int = fld(INT32, keep=True)


@api_kind("apps/v1", "StatefulSet", "statefulsets", namespaced=True)
@attrs.frozen
class StatefulSet:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: StatefulSetSpec = fld(struct(StatefulSetSpec))
    status: StatefulSetStatus = fld(struct(StatefulSetStatus))


@api_kind("apps/v1", "ControllerRevision", "controllerrevisions", namespaced=True)
@attrs.frozen
class ControllerRevision:
    """One revision of a controller's state: `data` is the object a controller saved (a StatefulSet's, the
    strategic merge patch that restores its template), `revision` its place in the controller's history."""

    metadata: ObjectMeta = fld(struct(ObjectMeta))
    data: Any = fld(RAW)
    revision: int = fld(INT64, keep=True)
