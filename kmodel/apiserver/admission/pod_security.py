"""Pod Security admission, the "baseline" level's host checks (k8s.io/pod-security-admission).

A namespace labelled `pod-security.kubernetes.io/enforce=baseline` (or `restricted`, which includes
baseline; the model checks only baseline's rules) refuses pods that use host namespaces (hostNetwork,
hostPID, hostIPC), hostPorts, or privileged containers, with upstream's message:

    pods "x" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true),
    hostPort (container "web" uses hostPort 80), privileged (container "c" must not set
    securityContext.privileged=true)

Checks run in upstream's order (by check id) and join as AggregateCheckResult.ForbiddenDetail does. Pods
are checked on create, and on update when the spec changed (status and metadata-only updates are not
significant); subresources other than the main resource are not checked.
"""

from __future__ import annotations

from kmodel.apiserver import errors
from kmodel.apiserver.admission.attributes import CREATE, UPDATE, AdmissionAttributes
from kmodel.apiserver.storeview import current_value

ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION_LABEL = "pod-security.kubernetes.io/enforce-version"
_ENFORCED_LEVELS = ("baseline", "restricted")


def _plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


def _join_quote(items: list[str]) -> str:
    return ", ".join(f'"{i}"' for i in items)


def check_baseline(spec: object) -> list[str]:
    """The baseline violations of a pod spec, as `reason (detail)` strings, in upstream's check order."""
    found = []
    host = [f"{flag}=true" for flag, on in (("hostNetwork", spec.host_network), ("hostPID", spec.host_pid),
                                            ("hostIPC", spec.host_ipc)) if on]
    if host:
        found.append(f"host namespaces ({', '.join(host)})")
    containers = spec.init_containers + spec.containers
    bad, ports = [], []
    for c in containers:
        mine = [str(p.host_port) for p in c.ports if p.host_port]
        if mine:
            bad.append(c.name)
            ports.extend(mine)
    if bad:
        found.append(f"hostPort ({_plural('container', 'containers', len(bad))} {_join_quote(bad)} "
                     f"{_plural('uses', 'use', len(bad))} {_plural('hostPort', 'hostPorts', len(ports))} "
                     f"{', '.join(ports)})")
    privileged = [c.name for c in containers if c.security_context is not None and c.security_context.privileged]
    if privileged:
        found.append(f"privileged ({_plural('container', 'containers', len(privileged))} "
                     f"{_join_quote(privileged)} must not set securityContext.privileged=true)")
    return found


def validate(a: AdmissionAttributes) -> None:
    if a.resource.name != "pods" or a.subresource or a.operation not in (CREATE, UPDATE):
        return
    pod = a.obj
    if a.operation == UPDATE and a.old is not None and (a.old.spec is pod.spec or a.old.spec == pod.spec):
        return
    ns = current_value(a.store, "/registry/namespaces/" + a.namespace)
    if ns is None:
        return
    level = ns.metadata.labels.get(ENFORCE_LABEL)
    if level not in _ENFORCED_LEVELS:
        return
    violations = check_baseline(pod.spec)
    if violations:
        version = ns.metadata.labels.get(ENFORCE_VERSION_LABEL) or "latest"
        raise errors.forbidden("", "pods", pod.metadata.name,
                               f'violates PodSecurity "{level}:{version}": {", ".join(violations)}')
