"""core/v1 kinds: Namespace, Node, Pod, Service, Endpoints, Event, Binding, and their parts."""

from __future__ import annotations

import attrs

from .meta import LabelSelector, ObjectMeta, ObjectReference  # noqa: F401  (LabelSelector re-exported)
from .registry import api_kind
from .schema import (
    BOOL, INT32, INT64, INT_OR_STRING, MICRO_TIME, RESOURCE_LIST, STRING, STRING_MAP, STRINGS, TIME,
    WireType, enum_string, fld, list_of, struct,
)

PROTOCOL = enum_string("v1.Protocol")
CONDITION_STATUS = enum_string("v1.ConditionStatus")


# --- Namespace -------------------------------------------------------------------------------------------

@attrs.frozen
class NamespaceSpec:
    finalizers: tuple = fld(list_of(enum_string("v1.FinalizerName")))


@attrs.frozen
class NamespaceCondition:
    type: str = fld(enum_string("v1.NamespaceConditionType"), keep=True)
    status: str = fld(CONDITION_STATUS, keep=True)
    last_transition_time: int | None = fld(TIME)
    reason: str = fld(STRING)
    message: str = fld(STRING)


@attrs.frozen
class NamespaceStatus:
    phase: str = fld(enum_string("v1.NamespacePhase"))
    conditions: tuple = fld(list_of(struct(NamespaceCondition)))


@api_kind("v1", "Namespace", "namespaces", namespaced=False)
@attrs.frozen
class Namespace:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: NamespaceSpec = fld(struct(NamespaceSpec))
    status: NamespaceStatus = fld(struct(NamespaceStatus))


# --- Node ------------------------------------------------------------------------------------------------

@attrs.frozen
class Taint:
    key: str = fld(STRING, keep=True)
    value: str = fld(STRING)
    effect: str = fld(enum_string("v1.TaintEffect"), keep=True)
    time_added: int | None = fld(TIME)


@attrs.frozen
class NodeSpec:
    pod_cidr: str = fld(STRING, "podCIDR")
    pod_cidrs: tuple = fld(STRINGS, "podCIDRs")
    provider_id: str = fld(STRING, "providerID")
    unschedulable: bool = fld(BOOL)
    taints: tuple = fld(list_of(struct(Taint)))


@attrs.frozen
class NodeCondition:
    type: str = fld(enum_string("v1.NodeConditionType"), keep=True)
    status: str = fld(CONDITION_STATUS, keep=True)
    last_heartbeat_time: int | None = fld(TIME)
    last_transition_time: int | None = fld(TIME)
    reason: str = fld(STRING)
    message: str = fld(STRING)


@attrs.frozen
class NodeAddress:
    type: str = fld(enum_string("v1.NodeAddressType"), keep=True)
    address: str = fld(STRING, keep=True)


@attrs.frozen
class DaemonEndpoint:
    port: int = fld(INT32, "Port", keep=True)


@attrs.frozen
class NodeDaemonEndpoints:
    kubelet_endpoint: DaemonEndpoint = fld(struct(DaemonEndpoint))


@attrs.frozen
class NodeSystemInfo:
    machine_id: str = fld(STRING, "machineID", keep=True)
    system_uuid: str = fld(STRING, "systemUUID", keep=True)
    boot_id: str = fld(STRING, "bootID", keep=True)
    kernel_version: str = fld(STRING, keep=True)
    os_image: str = fld(STRING, "osImage", keep=True)
    container_runtime_version: str = fld(STRING, keep=True)
    kubelet_version: str = fld(STRING, keep=True)
    kube_proxy_version: str = fld(STRING, keep=True)
    operating_system: str = fld(STRING, keep=True)
    architecture: str = fld(STRING, keep=True)


@attrs.frozen
class NodeStatus:
    capacity: dict = fld(RESOURCE_LIST)
    allocatable: dict = fld(RESOURCE_LIST)
    phase: str = fld(enum_string("v1.NodePhase"))
    conditions: tuple = fld(list_of(struct(NodeCondition)))
    addresses: tuple = fld(list_of(struct(NodeAddress)))
    daemon_endpoints: NodeDaemonEndpoints = fld(struct(NodeDaemonEndpoints))
    node_info: NodeSystemInfo = fld(struct(NodeSystemInfo))


@api_kind("v1", "Node", "nodes", namespaced=False)
@attrs.frozen
class Node:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: NodeSpec = fld(struct(NodeSpec))
    status: NodeStatus = fld(struct(NodeStatus))


# --- Pod -------------------------------------------------------------------------------------------------

@attrs.frozen
class ContainerPort:
    name: str = fld(STRING)
    host_port: int = fld(INT32)
    container_port: int = fld(INT32, keep=True)
    protocol: str = fld(PROTOCOL)
    host_ip: str = fld(STRING, "hostIP")


@attrs.frozen
class EnvVar:
    name: str = fld(STRING, keep=True)
    value: str = fld(STRING)


@attrs.frozen
class ResourceRequirements:
    limits: dict = fld(RESOURCE_LIST)
    requests: dict = fld(RESOURCE_LIST)


@attrs.frozen
class ExecAction:
    command: tuple = fld(STRINGS)


@attrs.frozen
class HTTPHeader:
    name: str = fld(STRING, keep=True)
    value: str = fld(STRING, keep=True)


@attrs.frozen
class HTTPGetAction:
    path: str = fld(STRING)
    port: int | str | None = fld(INT_OR_STRING, keep=True)
    host: str = fld(STRING)
    scheme: str = fld(enum_string("v1.URIScheme"))
    http_headers: tuple = fld(list_of(struct(HTTPHeader)))


@attrs.frozen
class TCPSocketAction:
    port: int | str | None = fld(INT_OR_STRING, keep=True)
    host: str = fld(STRING)


@attrs.frozen
class Probe:
    exec: ExecAction | None = fld(struct(ExecAction), ptr=True)
    http_get: HTTPGetAction | None = fld(struct(HTTPGetAction), ptr=True)
    tcp_socket: TCPSocketAction | None = fld(struct(TCPSocketAction), ptr=True)
    initial_delay_seconds: int = fld(INT32)
    timeout_seconds: int = fld(INT32)
    period_seconds: int = fld(INT32)
    success_threshold: int = fld(INT32)
    failure_threshold: int = fld(INT32)
    termination_grace_period_seconds: int | None = fld(INT64, ptr=True)


@attrs.frozen
class SecurityContext:
    privileged: bool | None = fld(BOOL, ptr=True)
    run_as_user: int | None = fld(INT64, ptr=True)
    run_as_group: int | None = fld(INT64, ptr=True)
    run_as_non_root: bool | None = fld(BOOL, ptr=True)
    read_only_root_filesystem: bool | None = fld(BOOL, ptr=True)
    allow_privilege_escalation: bool | None = fld(BOOL, ptr=True)


@attrs.frozen
class PodSecurityContext:
    run_as_user: int | None = fld(INT64, ptr=True)
    run_as_group: int | None = fld(INT64, ptr=True)
    run_as_non_root: bool | None = fld(BOOL, ptr=True)
    fs_group: int | None = fld(INT64, ptr=True)


@attrs.frozen
class Container:
    name: str = fld(STRING, keep=True)
    image: str = fld(STRING)
    command: tuple = fld(STRINGS)
    args: tuple = fld(STRINGS)
    working_dir: str = fld(STRING)
    ports: tuple = fld(list_of(struct(ContainerPort)))
    env: tuple = fld(list_of(struct(EnvVar)))
    resources: ResourceRequirements = fld(struct(ResourceRequirements))
    liveness_probe: Probe | None = fld(struct(Probe), ptr=True)
    readiness_probe: Probe | None = fld(struct(Probe), ptr=True)
    startup_probe: Probe | None = fld(struct(Probe), ptr=True)
    termination_message_path: str = fld(STRING)
    termination_message_policy: str = fld(enum_string("v1.TerminationMessagePolicy"))
    image_pull_policy: str = fld(enum_string("v1.PullPolicy"))
    security_context: SecurityContext | None = fld(struct(SecurityContext), ptr=True)
    stdin: bool = fld(BOOL)
    stdin_once: bool = fld(BOOL)
    tty: bool = fld(BOOL)


@attrs.frozen
class Toleration:
    key: str = fld(STRING)
    operator: str = fld(enum_string("v1.TolerationOperator"))
    value: str = fld(STRING)
    effect: str = fld(enum_string("v1.TaintEffect"))
    toleration_seconds: int | None = fld(INT64, ptr=True)


@attrs.frozen
class NodeSelectorRequirement:
    key: str = fld(STRING, keep=True)
    operator: str = fld(enum_string("v1.NodeSelectorOperator"), keep=True)
    values: tuple = fld(STRINGS)


@attrs.frozen
class NodeSelectorTerm:
    """Its expressions and fields are ANDed; a term with neither matches no node."""

    match_expressions: tuple = fld(list_of(struct(NodeSelectorRequirement)))
    match_fields: tuple = fld(list_of(struct(NodeSelectorRequirement)))


@attrs.frozen
class NodeSelector:
    """Its terms are ORed."""

    node_selector_terms: tuple = fld(list_of(struct(NodeSelectorTerm)), keep=True)


@attrs.frozen
class PreferredSchedulingTerm:
    weight: int = fld(INT32, keep=True)
    preference: NodeSelectorTerm = fld(struct(NodeSelectorTerm), keep=True)


@attrs.frozen
class NodeAffinity:
    required_during_scheduling_ignored_during_execution: NodeSelector | None = fld(struct(NodeSelector), ptr=True)
    preferred_during_scheduling_ignored_during_execution: tuple = fld(list_of(struct(PreferredSchedulingTerm)))


@attrs.frozen
class Affinity:
    """Only node affinity: pod affinity and anti-affinity are not modelled (a manifest with them is refused as
    having unknown fields)."""

    node_affinity: NodeAffinity | None = fld(struct(NodeAffinity), ptr=True)


@attrs.frozen
class PodSpec:
    containers: tuple = fld(list_of(struct(Container)), keep=True)
    init_containers: tuple = fld(list_of(struct(Container)))
    restart_policy: str = fld(enum_string("v1.RestartPolicy"))
    termination_grace_period_seconds: int | None = fld(INT64, ptr=True)
    active_deadline_seconds: int | None = fld(INT64, ptr=True)
    dns_policy: str = fld(enum_string("v1.DNSPolicy"))
    node_selector: dict = fld(STRING_MAP)
    affinity: Affinity | None = fld(struct(Affinity), ptr=True)
    service_account_name: str = fld(STRING)
    service_account: str = fld(STRING)
    automount_service_account_token: bool | None = fld(BOOL, ptr=True)
    node_name: str = fld(STRING)
    host_network: bool = fld(BOOL)
    host_pid: bool = fld(BOOL, "hostPID")
    host_ipc: bool = fld(BOOL, "hostIPC")
    security_context: PodSecurityContext | None = fld(struct(PodSecurityContext), ptr=True)
    hostname: str = fld(STRING)
    subdomain: str = fld(STRING)
    scheduler_name: str = fld(STRING)
    tolerations: tuple = fld(list_of(struct(Toleration)))
    priority_class_name: str = fld(STRING)
    priority: int | None = fld(INT32, ptr=True)
    enable_service_links: bool | None = fld(BOOL, ptr=True)
    preemption_policy: str | None = fld(enum_string("v1.PreemptionPolicy"), ptr=True)


@attrs.frozen
class PodCondition:
    type: str = fld(enum_string("v1.PodConditionType"), keep=True)
    status: str = fld(CONDITION_STATUS, keep=True)
    last_probe_time: int | None = fld(TIME)
    last_transition_time: int | None = fld(TIME)
    reason: str = fld(STRING)
    message: str = fld(STRING)


@attrs.frozen
class PodIP:
    ip: str = fld(STRING, keep=True)


@attrs.frozen
class HostIP:
    ip: str = fld(STRING, keep=True)


@attrs.frozen
class ContainerStateWaiting:
    reason: str = fld(STRING)
    message: str = fld(STRING)


@attrs.frozen
class ContainerStateRunning:
    started_at: int | None = fld(TIME)


@attrs.frozen
class ContainerStateTerminated:
    exit_code: int = fld(INT32, keep=True)
    signal: int = fld(INT32)
    reason: str = fld(STRING)
    message: str = fld(STRING)
    started_at: int | None = fld(TIME)
    finished_at: int | None = fld(TIME)
    container_id: str = fld(STRING, "containerID")


@attrs.frozen
class ContainerState:
    waiting: ContainerStateWaiting | None = fld(struct(ContainerStateWaiting), ptr=True)
    running: ContainerStateRunning | None = fld(struct(ContainerStateRunning), ptr=True)
    terminated: ContainerStateTerminated | None = fld(struct(ContainerStateTerminated), ptr=True)


@attrs.frozen
class ContainerStatus:
    name: str = fld(STRING, keep=True)
    state: ContainerState = fld(struct(ContainerState))
    last_state: ContainerState = fld(struct(ContainerState))
    ready: bool = fld(BOOL, keep=True)
    restart_count: int = fld(INT32, keep=True)
    image: str = fld(STRING, keep=True)
    image_id: str = fld(STRING, "imageID", keep=True)
    container_id: str = fld(STRING, "containerID")
    started: bool | None = fld(BOOL, ptr=True)


@attrs.frozen
class PodStatus:
    phase: str = fld(enum_string("v1.PodPhase"))
    conditions: tuple = fld(list_of(struct(PodCondition)))
    message: str = fld(STRING)
    reason: str = fld(STRING)
    nominated_node_name: str = fld(STRING)
    host_ip: str = fld(STRING, "hostIP")
    host_ips: tuple = fld(list_of(struct(HostIP)), "hostIPs")
    pod_ip: str = fld(STRING, "podIP")
    pod_ips: tuple = fld(list_of(struct(PodIP)), "podIPs")
    start_time: int | None = fld(TIME)
    init_container_statuses: tuple = fld(list_of(struct(ContainerStatus)))
    container_statuses: tuple = fld(list_of(struct(ContainerStatus)))
    qos_class: str = fld(enum_string("v1.PodQOSClass"), "qosClass")


@api_kind("v1", "Pod", "pods", namespaced=True)
@attrs.frozen
class Pod:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: PodSpec = fld(struct(PodSpec))
    status: PodStatus = fld(struct(PodStatus))


@attrs.frozen
class PodTemplateSpec:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: PodSpec = fld(struct(PodSpec))


# --- Service and Endpoints -------------------------------------------------------------------------------

@attrs.frozen
class ServicePort:
    name: str = fld(STRING)
    protocol: str = fld(PROTOCOL)
    app_protocol: str | None = fld(STRING, ptr=True)
    port: int = fld(INT32, keep=True)
    target_port: int | str | None = fld(INT_OR_STRING)
    node_port: int = fld(INT32)


@attrs.frozen
class LoadBalancerIngress:
    ip: str = fld(STRING)
    hostname: str = fld(STRING)


@attrs.frozen
class LoadBalancerStatus:
    ingress: tuple = fld(list_of(struct(LoadBalancerIngress)))


@attrs.frozen
class ServiceSpec:
    ports: tuple = fld(list_of(struct(ServicePort)))
    selector: dict = fld(STRING_MAP)
    cluster_ip: str = fld(STRING, "clusterIP")
    cluster_ips: tuple = fld(STRINGS, "clusterIPs")
    type: str = fld(enum_string("v1.ServiceType"))
    external_ips: tuple = fld(STRINGS, "externalIPs")
    session_affinity: str = fld(enum_string("v1.ServiceAffinity"))
    load_balancer_ip: str = fld(STRING, "loadBalancerIP")
    external_name: str = fld(STRING)
    external_traffic_policy: str = fld(enum_string("v1.ServiceExternalTrafficPolicy"))
    internal_traffic_policy: str | None = fld(enum_string("v1.ServiceInternalTrafficPolicy"), ptr=True)
    ip_families: tuple = fld(list_of(enum_string("v1.IPFamily")), "ipFamilies")
    ip_family_policy: str | None = fld(enum_string("v1.IPFamilyPolicy"), "ipFamilyPolicy", ptr=True)
    publish_not_ready_addresses: bool = fld(BOOL)


@attrs.frozen
class ServiceStatus:
    load_balancer: LoadBalancerStatus = fld(struct(LoadBalancerStatus))


@api_kind("v1", "Service", "services", namespaced=True)
@attrs.frozen
class Service:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    spec: ServiceSpec = fld(struct(ServiceSpec))
    status: ServiceStatus = fld(struct(ServiceStatus))


@attrs.frozen
class EndpointAddress:
    ip: str = fld(STRING, keep=True)
    hostname: str = fld(STRING)
    node_name: str | None = fld(STRING, ptr=True)
    target_ref: ObjectReference | None = fld(struct(ObjectReference), ptr=True)


@attrs.frozen
class EndpointPort:
    name: str = fld(STRING)
    port: int = fld(INT32, keep=True)
    protocol: str = fld(PROTOCOL)
    app_protocol: str | None = fld(STRING, ptr=True)


@attrs.frozen
class EndpointSubset:
    addresses: tuple = fld(list_of(struct(EndpointAddress)))
    not_ready_addresses: tuple = fld(list_of(struct(EndpointAddress)))
    ports: tuple = fld(list_of(struct(EndpointPort)))


@api_kind("v1", "Endpoints", "endpoints", namespaced=True)
@attrs.frozen
class Endpoints:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    subsets: tuple = fld(list_of(struct(EndpointSubset)))


# --- ConfigMap ---------------------------------------------------------------------------------------------

#: binaryData's values are []byte, which JSON carries as base64 strings; the model keeps the strings
BINARY_DATA = WireType("map", "map[string][]uint8", STRING)


@api_kind("v1", "ConfigMap", "configmaps", namespaced=True)
@attrs.frozen
class ConfigMap:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    immutable: bool | None = fld(BOOL, ptr=True)
    data: dict = fld(STRING_MAP)
    binary_data: dict = fld(BINARY_DATA)


# --- Event and Binding -----------------------------------------------------------------------------------

@attrs.frozen
class EventSource:
    component: str = fld(STRING)
    host: str = fld(STRING)


@attrs.frozen
class EventSeries:
    """core/v1 EventSeries: a recurring event's count and the time it was last seen (events.k8s.io/v1's
    recorder writes it; the legacy recorder counts in Event.count)."""

    count: int = fld(INT32)
    last_observed_time: int | None = fld(MICRO_TIME)


@api_kind("v1", "Event", "events", namespaced=True)
@attrs.frozen
class Event:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    involved_object: ObjectReference = fld(struct(ObjectReference))
    reason: str = fld(STRING)
    message: str = fld(STRING)
    source: EventSource = fld(struct(EventSource))
    first_timestamp: int | None = fld(TIME)
    last_timestamp: int | None = fld(TIME)
    count: int = fld(INT32)
    type: str = fld(STRING)
    event_time: int | None = fld(MICRO_TIME)
    action: str = fld(STRING)
    related: ObjectReference | None = fld(struct(ObjectReference), ptr=True)
    reporting_component: str = fld(STRING, keep=True)
    reporting_instance: str = fld(STRING, keep=True)
    series: EventSeries | None = fld(struct(EventSeries), ptr=True)


@api_kind("v1", "Binding", "bindings", namespaced=True)
@attrs.frozen
class Binding:
    metadata: ObjectMeta = fld(struct(ObjectMeta))
    target: ObjectReference = fld(struct(ObjectReference))
