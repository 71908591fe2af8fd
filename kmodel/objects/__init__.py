"""kmodel.objects: the Kubernetes API kinds as immutable attrs values, their JSON/YAML form, strict
decoding, defaulting and schema validation.

Objects are frozen attrs instances (change them with attrs.evolve); lists are tuples and maps FrozenDicts,
so the store and caches share them without copying. Timestamps are logical milliseconds (logical_time).
"""

from .apps import (
    ControllerRevision, Deployment, DeploymentCondition, DeploymentSpec, DeploymentStatus, DeploymentStrategy, ReplicaSet,
    ReplicaSetCondition, ReplicaSetSpec, ReplicaSetStatus, RollingUpdateDeployment, RollingUpdateStatefulSetStrategy,
    StatefulSet, StatefulSetCondition, StatefulSetSpec, StatefulSetStatus, StatefulSetUpdateStrategy,
)
from .batch import Job, JobCondition, JobSpec, JobStatus, UncountedTerminatedPods
from .codec import DecodeError, decode, dump, dump_struct, load
from .coordination import Lease, LeaseSpec
from .core import (
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm,
    Binding, ConfigMap, Container, ContainerPort, ContainerState, ContainerStateRunning, ContainerStateTerminated,
    ContainerStateWaiting, ContainerStatus, EndpointAddress, EndpointPort, Endpoints, EndpointSubset, EnvVar, Event,
    EventSeries, EventSource, ExecAction, HostIP, HTTPGetAction, Namespace, NamespaceSpec, NamespaceStatus, Node,
    NodeAddress, NodeCondition, NodeSpec, NodeStatus, Pod, PodCondition, PodIP, PodSecurityContext, PodSpec, PodStatus,
    PodTemplateSpec, Probe, ResourceRequirements, SecurityContext, Service, ServicePort, ServiceSpec, ServiceStatus,
    Taint, TCPSocketAction, Toleration,
)
from .defaults import with_defaults
from .discovery import Endpoint, EndpointConditions, EndpointSlice, EndpointSlicePort
from .field_errors import ErrorType, FieldError, GoValue, invalid_message, invalid_status
from .frozendict import EMPTY_MAP, FrozenDict, frozen_map
from .logical_time import EPOCH, EPOCH_RFC3339, format_time, parse_time
from .meta import LabelSelector, LabelSelectorRequirement, ObjectMeta, ObjectReference, OwnerReference
from .quantity import Quantity, QuantityError, parse_quantity
from .rbac import AggregationRule, ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject
from .scheduling import PriorityClass
from .secrets import Secret, ServiceAccount, TokenRequest
from .registry import KINDS, KindInfo, kind_info, lookup
from .validation import validate, validate_update
from .yaml_io import dump_yaml, load_yaml, parse_yaml


def invalid_message_for(obj: object, errors: list) -> str:
    """The 422 message for obj: `Deployment.apps "web" is invalid: ...`."""
    return invalid_message(kind_info(obj).group_kind, obj.metadata.name, errors)  # type: ignore[attr-defined]


__all__ = [name for name in dir() if not name.startswith("_")]
