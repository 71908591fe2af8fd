"""Schema validation as the API server runs it before a write (HTTP 422 Invalid on failure).

`validate(obj)` checks a new object; `validate_update(new, old)` checks an update (immutable fields
included). Both take defaulted objects (see kmodel.objects.defaults) and return FieldErrors in the order
Kubernetes produces them (map-valued fields are checked in sorted key order, where Go's order is random).
"""

from __future__ import annotations

from typing import Any, Callable

from ..apiextensions import CustomResourceDefinition
from ..apps import ControllerRevision, Deployment, ReplicaSet, StatefulSet
from ..batch import Job
from ..coordination import Lease
from ..core import Binding, ConfigMap, Endpoints, Event, Namespace, Node, Pod, Service
from ..discovery import EndpointSlice
from ..field_errors import FieldError
from ..rbac import ClusterRole, ClusterRoleBinding, Role, RoleBinding
from ..scheduling import PriorityClass
from ..secrets import Secret, ServiceAccount
from .apiextensions import validate_crd, validate_crd_update
from .cluster import (
    validate_binding, validate_endpoints, validate_event, validate_lease, validate_namespace, validate_node,
    validate_node_update, validate_service, validate_service_update,
)
from .common import validate_object_meta_update
from .batch import validate_job, validate_job_update
from .configmap import validate_configmap, validate_configmap_update
from .discovery import validate_endpointslice, validate_endpointslice_update
from .pod import validate_pod, validate_pod_update
from .scheduling import validate_priority_class, validate_priority_class_update
from .secrets import (
    validate_secret, validate_secret_update, validate_service_account, validate_service_account_update,
)
from .rbac import validate_role, validate_role_binding, validate_role_binding_update
from .workloads import (
    validate_controller_revision, validate_controller_revision_update, validate_deployment, validate_replicaset,
    validate_statefulset, validate_statefulset_update, validate_workload_update,
)

_CREATE: dict[type, Callable[[Any], list[FieldError]]] = {
    Namespace: validate_namespace,
    Node: validate_node,
    Pod: validate_pod,
    Service: validate_service,
    Endpoints: validate_endpoints,
    EndpointSlice: validate_endpointslice,
    ConfigMap: validate_configmap,
    Event: validate_event,
    Binding: validate_binding,
    Lease: validate_lease,
    Deployment: validate_deployment,
    ReplicaSet: validate_replicaset,
    StatefulSet: validate_statefulset,
    ControllerRevision: validate_controller_revision,
    Role: validate_role,
    ClusterRole: validate_role,
    RoleBinding: validate_role_binding,
    ClusterRoleBinding: validate_role_binding,
    CustomResourceDefinition: validate_crd,
    Secret: validate_secret,
    ServiceAccount: validate_service_account,
    Job: validate_job,
    PriorityClass: validate_priority_class,
}

_UPDATE: dict[type, Callable[[Any, Any], list[FieldError]]] = {
    Pod: validate_pod_update,
    ConfigMap: validate_configmap_update,
    Deployment: validate_workload_update,
    ReplicaSet: validate_workload_update,
    StatefulSet: validate_statefulset_update,
    ControllerRevision: validate_controller_revision_update,
    Node: validate_node_update,
    Service: validate_service_update,
    RoleBinding: validate_role_binding_update,
    ClusterRoleBinding: validate_role_binding_update,
    CustomResourceDefinition: validate_crd_update,
    EndpointSlice: validate_endpointslice_update,
    Secret: validate_secret_update,
    ServiceAccount: validate_service_account_update,
    Job: validate_job_update,
    PriorityClass: validate_priority_class_update,
}


def validate(obj: Any) -> list[FieldError]:
    """The field errors of a new object (empty when valid)."""
    return _CREATE[type(obj)](obj)


def validate_update(new: Any, old: Any) -> list[FieldError]:
    """The field errors of replacing old with new."""
    fn = _UPDATE.get(type(new))
    if fn is not None:
        return fn(new, old)
    errs = validate_object_meta_update(new.metadata, old.metadata)
    return errs + [e for e in validate(new) if not e.field.startswith("metadata.")]


__all__ = ["validate", "validate_update"]
