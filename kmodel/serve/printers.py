"""kube-apiserver's server-side printers for the built-in kinds the model serves: each kind's Table columns and the
cells of one object's row, as Kubernetes 1.32's pkg/printers/internalversion/printers.go defines them.

The server prints every column (its printers run with Wide), priority 1 included; kubectl shows the priority-1
columns with ``-o wide`` only. Ages are the model's logical time since the timestamp (duration.HumanDuration).
Roles and ClusterRoles have no printer upstream: they get the generic registry's default table (NAME, CREATED AT),
as CustomResourceDefinitions do (kmodel.serve.tables).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from kmodel.apiserver.events import human_duration

#: a row function: (object, now in logical ms) -> the row's cells
Row = Callable[[Any, int], list]


def column(name: str, kind: str = "string", priority: int = 0, fmt: str = "") -> dict:
    """A metav1.TableColumnDefinition (descriptions left empty: kubectl shows none)."""
    return {"name": name, "type": kind, "format": fmt, "description": "", "priority": priority}


NAME = column("Name", fmt="name")
AGE = column("Age")


def since(timestamp: Optional[int], now: int) -> str:
    """translateTimestampSince: "<unknown>" for no timestamp."""
    return "<unknown>" if timestamp is None else human_duration(now - timestamp)


def age(obj: Any, now: int) -> str:
    return since(obj.metadata.creation_timestamp, now)


def format_labels(labels: Mapping[str, str]) -> str:
    """labels.FormatLabels: k=v pairs sorted by key, "<none>" for none."""
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels)) or "<none>"


def selector_string(selector: Any) -> str:
    """labels.Selector.String() of a metav1.LabelSelector: its requirements sorted by key."""
    if selector is None:
        return ""
    parts = [(k, f"{k}={v}") for k, v in (selector.match_labels or {}).items()]
    for e in selector.match_expressions:
        values = ",".join(sorted(e.values))
        parts.append((e.key, {"In": f"{e.key} in ({values})", "NotIn": f"{e.key} notin ({values})",
                              "Exists": e.key, "DoesNotExist": f"!{e.key}"}.get(e.operator, e.key)))
    return ",".join(text for _, text in sorted(parts))


def format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: "<none>" for a missing or empty selector."""
    return selector_string(selector) or "<none>"


def containers_cells(containers: Any) -> list[str]:
    """layoutContainerCells: the containers' names and images, comma-separated."""
    return [",".join(c.name for c in containers), ",".join(c.image for c in containers)]


# -- pods ---------------------------------------------------------------------------------------------------

#: the reason the node lifecycle controller gives a pod on a lost node (k8s.io/kubernetes/pkg/util/node)
NODE_UNREACHABLE_POD_REASON = "NodeLost"


def _pod_status_and_ready(pod: Any) -> tuple[str, int]:
    """printPod's STATUS and its count of ready containers."""
    status = pod.status
    reason = status.reason or status.phase
    for c in status.conditions:
        if c.type == "PodScheduled" and c.reason == "SchedulingGated":
            reason = "SchedulingGated"
    initializing = False
    for i, cs in enumerate(status.init_container_statuses):
        terminated, waiting = cs.state.terminated, cs.state.waiting
        if terminated is not None and terminated.exit_code == 0:
            continue
        if terminated is not None:
            if terminated.reason:
                reason = "Init:" + terminated.reason
            elif terminated.signal:
                reason = f"Init:Signal:{terminated.signal}"
            else:
                reason = f"Init:ExitCode:{terminated.exit_code}"
        elif waiting is not None and waiting.reason and waiting.reason != "PodInitializing":
            reason = "Init:" + waiting.reason
        else:
            reason = f"Init:{i}/{len(pod.spec.init_containers)}"
        initializing = True
        break
    ready = 0
    initialized = any(c.type == "Initialized" and c.status == "True" for c in status.conditions)
    if not initializing or initialized:
        has_running = False
        for cs in reversed(status.container_statuses):
            waiting, terminated = cs.state.waiting, cs.state.terminated
            if waiting is not None and waiting.reason:
                reason = waiting.reason
            elif terminated is not None and terminated.reason:
                reason = terminated.reason
            elif terminated is not None:
                reason = f"Signal:{terminated.signal}" if terminated.signal else f"ExitCode:{terminated.exit_code}"
            elif cs.ready and cs.state.running is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            pod_ready = any(c.type == "Ready" and c.status == "True" for c in status.conditions)
            reason = "Running" if pod_ready else "NotReady"
    if pod.metadata.deletion_timestamp is not None:
        if status.reason == NODE_UNREACHABLE_POD_REASON:
            reason = "Unknown"
        elif status.phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    return reason, ready


def _pod_restarts(pod: Any, now: int) -> str:
    """RESTARTS: the containers' restarts, with the age of the last one ("3 (2m ago)")."""
    statuses = pod.status.container_statuses
    restarts = sum(cs.restart_count for cs in statuses)
    finished = [cs.last_state.terminated.finished_at for cs in statuses
                if cs.last_state.terminated is not None and cs.last_state.terminated.finished_at is not None]
    if restarts and finished:
        return f"{restarts} ({since(max(finished), now)} ago)"
    return str(restarts)


def pod_row(pod: Any, now: int) -> list:
    reason, ready = _pod_status_and_ready(pod)
    ips = pod.status.pod_ips
    return [pod.metadata.name, f"{ready}/{len(pod.spec.containers)}", reason, _pod_restarts(pod, now), age(pod, now),
            (ips[0].ip if ips else "") or "<none>", pod.spec.node_name or "<none>",
            pod.status.nominated_node_name or "<none>", "<none>"]  # the model's pods have no readiness gates


POD_COLUMNS = [NAME, column("Ready"), column("Status"), column("Restarts"), AGE, column("IP", priority=1),
               column("Node", priority=1), column("Nominated Node", priority=1),
               column("Readiness Gates", priority=1)]


# -- nodes --------------------------------------------------------------------------------------------------

def _node_roles(labels: Mapping[str, str]) -> str:
    """findNodeRoles: node-role.kubernetes.io/<role> keys and kubernetes.io/role values, sorted."""
    roles = {k[len("node-role.kubernetes.io/"):] for k in labels if k.startswith("node-role.kubernetes.io/")}
    roles.discard("")
    if labels.get("kubernetes.io/role"):
        roles.add(labels["kubernetes.io/role"])
    return ",".join(sorted(roles)) or "<none>"


def _node_address(node: Any, kind: str) -> str:
    return next((a.address for a in node.status.addresses if a.type == kind), "<none>")


def node_row(node: Any, now: int) -> list:
    ready = next((c.status for c in node.status.conditions if c.type == "Ready"), None)
    status = ["Unknown" if ready is None else "Ready" if ready == "True" else "NotReady"]
    if node.spec.unschedulable:
        status.append("SchedulingDisabled")
    info = node.status.node_info
    return [node.metadata.name, ",".join(status), _node_roles(node.metadata.labels), age(node, now),
            info.kubelet_version, _node_address(node, "InternalIP"), _node_address(node, "ExternalIP"),
            info.os_image or "<unknown>", info.kernel_version or "<unknown>",
            info.container_runtime_version or "<unknown>"]


NODE_COLUMNS = [NAME, column("Status"), column("Roles"), AGE, column("Version"), column("Internal-IP", priority=1),
                column("External-IP", priority=1), column("OS-Image", priority=1),
                column("Kernel-Version", priority=1), column("Container-Runtime", priority=1)]


# -- events -------------------------------------------------------------------------------------------------

def event_row(e: Any, now: int) -> list:
    first = since(e.first_timestamp if e.first_timestamp is not None else e.event_time, now)
    last = since(e.last_timestamp, now) if e.last_timestamp is not None else first
    kind = e.involved_object.kind.lower()
    target = f"{kind}/{e.involved_object.name}" if e.involved_object.name else kind
    component = e.source.component or e.reporting_component
    instance = e.source.host or e.reporting_instance
    source = f"{component}, {instance}" if instance else component
    return [last, e.type, e.reason, target, e.involved_object.field_path, source, e.message.strip(), first,
            e.count or 1, e.metadata.name]  # a singleton event of the new API has no count


EVENT_COLUMNS = [column("Last Seen"), column("Type"), column("Reason"), column("Object"),
                 column("Subobject", priority=1), column("Source", priority=1), column("Message"),
                 column("First Seen", priority=1), column("Count", priority=1),
                 column("Name", priority=1, fmt="name")]


# -- services and endpoints ---------------------------------------------------------------------------------

def _external_ip(svc: Any) -> str:
    """getServiceExternalIP (as the server prints it: wide, so load balancer addresses are never clipped)."""
    spec = svc.spec
    if spec.type in ("ClusterIP", "NodePort"):
        return ",".join(spec.external_ips) or "<none>"
    if spec.type == "LoadBalancer":
        lb = sorted({i.ip or i.hostname for i in svc.status.load_balancer.ingress if i.ip or i.hostname})
        if spec.external_ips:
            return ",".join([*lb, *spec.external_ips])
        return ",".join(lb) or "<pending>"
    if spec.type == "ExternalName":
        return spec.external_name
    return "<unknown>"


def service_row(svc: Any, now: int) -> list:
    ports = ",".join(f"{p.port}:{p.node_port}/{p.protocol}" if p.node_port > 0 else f"{p.port}/{p.protocol}"
                     for p in svc.spec.ports)
    cluster_ip = svc.spec.cluster_ips[0] if svc.spec.cluster_ips else "<none>"
    return [svc.metadata.name, svc.spec.type, cluster_ip, _external_ip(svc), ports or "<none>", age(svc, now),
            format_labels(svc.spec.selector)]


SERVICE_COLUMNS = [NAME, column("Type"), column("Cluster-IP"), column("External-IP"), column("Port(s)"), AGE,
                   column("Selector", priority=1)]


def _format_endpoints(ep: Any) -> str:
    """formatEndpoints: the first three ready addresses (ip:port per port), then "+ N more..."."""
    if not ep.subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    for ss in ep.subsets:
        pairs = [(a.ip, None) for a in ss.addresses] if not ss.ports else \
            [(a.ip, p.port) for p in ss.ports for a in ss.addresses]
        count += len(pairs)
        for ip, port in pairs:
            if len(shown) < 3:
                shown.append(ip if port is None else (f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"))
    text = ",".join(shown)
    return f"{text} + {count - 3} more..." if count > 3 else text


def endpoints_row(ep: Any, now: int) -> list:
    return [ep.metadata.name, _format_endpoints(ep), age(ep, now)]


def _list_with_more(shown: list[str], count: int) -> str:
    """listWithMoreString: the first three, then "+ N more...", or <unset> when there are none."""
    text = ",".join(shown)
    if count > 3:
        return f"{text} + {count - 3} more..."
    return text or "<unset>"


def endpointslice_row(eps: Any, now: int) -> list:
    """printEndpointSlice: formatDiscoveryPorts (a port's number, else its name, else "*") and
    formatDiscoveryEndpoints (the addresses of every endpoint, ready or not)."""
    ports = [str(p.port) if p.port is not None else (p.name if p.name is not None else "*") for p in eps.ports]
    addresses = [a for e in eps.endpoints for a in e.addresses]
    return [eps.metadata.name, eps.address_type, _list_with_more(ports[:3], len(ports)),
            _list_with_more(addresses[:3], len(addresses)), age(eps, now)]


# -- workloads ----------------------------------------------------------------------------------------------

def deployment_row(d: Any, now: int) -> list:
    s = d.status
    return [d.metadata.name, f"{s.ready_replicas}/{d.spec.replicas}", s.updated_replicas, s.available_replicas,
            age(d, now), *containers_cells(d.spec.template.spec.containers), selector_string(d.spec.selector)]


def replicaset_row(rs: Any, now: int) -> list:
    s = rs.status
    return [rs.metadata.name, rs.spec.replicas, s.replicas, s.ready_replicas, age(rs, now),
            *containers_cells(rs.spec.template.spec.containers), format_label_selector(rs.spec.selector)]


def statefulset_row(sts: Any, now: int) -> list:
    return [sts.metadata.name, f"{sts.status.ready_replicas}/{sts.spec.replicas}", age(sts, now),
            *containers_cells(sts.spec.template.spec.containers)]


_TEMPLATE_COLUMNS = [column("Containers", priority=1), column("Images", priority=1)]


def controller_revision_row(revision: Any, now: int) -> list:
    """printControllerRevision: the controller as `<kind>.<group>/<name>` (formatResourceName), or "<none>"."""
    owner = next((r for r in revision.metadata.owner_references if r.controller), None)
    controller = "<none>"
    if owner is not None:
        group = owner.api_version.rpartition("/")[0]
        controller = f"{owner.kind}.{group}".lower() if group else owner.kind.lower()
        controller += f"/{owner.name}"
    return [revision.metadata.name, controller, revision.revision, age(revision, now)]


def _has_condition(job: Any, kind: str) -> bool:
    return any(c.type == kind and c.status == "True" for c in job.status.conditions)


#: printJob's STATUS, first match wins
_JOB_STATUSES = ("Complete", "Failed", "Terminating", "Suspended", "FailureTarget", "SuccessCriteriaMet")


def _job_status(job: Any) -> str:
    for status in _JOB_STATUSES:
        if status == "Terminating":
            if job.metadata.deletion_timestamp is not None:
                return status
        elif _has_condition(job, status):
            return status
    return "Running"


def job_row(job: Any, now: int) -> list:
    """printJob: COMPLETIONS succeeded/completions ("n/1 of p" without completions and parallelism above 1),
    DURATION from startTime to completionTime (to now while running)."""
    s, spec = job.status, job.spec
    if spec.completions is not None:
        completions = f"{s.succeeded}/{spec.completions}"
    elif (spec.parallelism or 0) > 1:
        completions = f"{s.succeeded}/1 of {spec.parallelism}"
    else:
        completions = f"{s.succeeded}/1"
    if s.start_time is None:
        duration = ""
    else:
        duration = human_duration((s.completion_time if s.completion_time is not None else now) - s.start_time)
    return [job.metadata.name, _job_status(job), completions, duration, age(job, now),
            *containers_cells(spec.template.spec.containers), format_label_selector(spec.selector)]


# -- the rest -----------------------------------------------------------------------------------------------

def _subjects(binding: Any) -> list[str]:
    """rbac.SubjectsStrings: the users, groups and service accounts ("namespace/name") bound."""
    users = [s.name for s in binding.subjects if s.kind == "User"]
    groups = [s.name for s in binding.subjects if s.kind == "Group"]
    sas = [f"{s.namespace}/{s.name}" for s in binding.subjects if s.kind == "ServiceAccount"]
    return [", ".join(users), ", ".join(groups), ", ".join(sas)]


def binding_row(b: Any, now: int) -> list:
    return [b.metadata.name, f"{b.role_ref.kind}/{b.role_ref.name}", age(b, now), *_subjects(b)]


_BINDING_COLUMNS = [NAME, column("Role"), AGE, column("Users", priority=1), column("Groups", priority=1),
                    column("ServiceAccounts", priority=1)]

def scale_row(scale: Any, now: int) -> list:
    """printScale: an autoscaling/v1 Scale's desired (spec) and available (status) replicas."""
    doc = scale.to_json()
    return [scale.metadata.name, doc["spec"].get("replicas", 0), doc["status"].get("replicas", 0), age(scale, now)]


#: the Table of a scale subresource, whatever its parent (upstream's printer of autoscaling.Scale)
SCALE_PRINTER: tuple[list, Row] = ([column("Name"), column("Desired", "integer"), column("Available", "integer"),
                                    AGE], scale_row)

#: resource -> (columns, row function)
PRINTERS: dict[str, tuple[list, Row]] = {
    "pods": (POD_COLUMNS, pod_row),
    "nodes": (NODE_COLUMNS, node_row),
    "events": (EVENT_COLUMNS, event_row),
    "namespaces": ([NAME, column("Status"), AGE], lambda ns, now: [ns.metadata.name, ns.status.phase, age(ns, now)]),
    "services": (SERVICE_COLUMNS, service_row),
    "endpoints": ([NAME, column("Endpoints"), AGE], endpoints_row),
    "endpointslices": ([NAME, column("AddressType"), column("Ports"), column("Endpoints"), AGE], endpointslice_row),
    "configmaps": ([NAME, column("Data", "string"), AGE],
                   lambda cm, now: [cm.metadata.name, len(cm.data) + len(cm.binary_data), age(cm, now)]),
    # printPriorityClass: an unset preemptionPolicy prints "Unknown"
    "priorityclasses": ([NAME, column("Value", "integer"), column("Global-Default", "boolean"), AGE,
                         column("PreemptionPolicy")],
                        lambda pc, now: [pc.metadata.name, pc.value, pc.global_default, age(pc, now),
                                         pc.preemption_policy or "Unknown"]),
    "leases": ([NAME, column("Holder"), AGE],
               lambda lease, now: [lease.metadata.name, lease.spec.holder_identity or "", age(lease, now)]),
    "deployments": ([NAME, column("Ready"), column("Up-to-date"), column("Available"), AGE, *_TEMPLATE_COLUMNS,
                     column("Selector", priority=1)], deployment_row),
    "replicasets": ([NAME, column("Desired", "integer"), column("Current", "integer"), column("Ready", "integer"),
                     AGE, *_TEMPLATE_COLUMNS, column("Selector", priority=1)], replicaset_row),
    "statefulsets": ([NAME, column("Ready"), AGE, *_TEMPLATE_COLUMNS], statefulset_row),
    "controllerrevisions": ([NAME, column("Controller"), column("Revision", "integer"), AGE],
                            controller_revision_row),
    "secrets": ([NAME, column("Type"), column("Data", "string"), AGE],
                lambda secret, now: [secret.metadata.name, secret.type, len(secret.data), age(secret, now)]),
    "serviceaccounts": ([NAME, column("Secrets", "string"), AGE],
                        lambda sa, now: [sa.metadata.name, len(sa.secrets), age(sa, now)]),
    "jobs": ([NAME, column("Status"), column("Completions"), column("Duration"), AGE, *_TEMPLATE_COLUMNS,
              column("Selector", priority=1)], job_row),
    "rolebindings": (_BINDING_COLUMNS, binding_row),
    "clusterrolebindings": (_BINDING_COLUMNS, binding_row),
}
