"""NodeRestriction (plugin/pkg/admission/noderestriction), the essentials.

For a request from a node identity (`system:node:<n>` in `system:nodes`):

* nodes: only its own Node → `node "n1" is not allowed to modify node "n2"`;
* pods: create only mirror pods (annotation kubernetes.io/config.mirror) bound to itself; delete only pods
  bound to itself; no other write to the main resource;
* pods/status: only pods bound to itself;
* leases: only its own Lease in kube-node-lease.

Refusals are 403 with admission.NewForbidden's shape: `<resource> "<name>" is forbidden: <reason>`.
Other users pass untouched.
"""

from __future__ import annotations

from kmodel.apiserver import errors
from kmodel.apiserver.admission.attributes import CREATE, DELETE, AdmissionAttributes
from kmodel.apiserver.authentication import NODE_PREFIX, NODES

MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


def _deny(a: AdmissionAttributes, reason: str) -> errors.APIError:
    name = a.name or (a.obj.metadata.name if a.obj is not None else "")
    return errors.forbidden(a.resource.group, a.resource.name, name, reason)


def admit(a: AdmissionAttributes) -> None:
    user = a.user
    if NODES not in user.groups or not user.name.startswith(NODE_PREFIX):
        return  # not a node identity (UserInfo.is_node, without the call)
    node = a.user.node_name
    resource = a.resource.name
    if resource == "pods":
        _pods(a, node)
    elif resource == "nodes":
        requested = a.obj.metadata.name if a.operation == CREATE and a.obj is not None else a.name
        if requested != node:
            raise _deny(a, f'node "{node}" is not allowed to modify node "{requested}"')
    elif resource == "leases":
        if a.namespace != "kube-node-lease":
            raise _deny(a, 'can only access leases in the "kube-node-lease" system namespace')
        name = a.obj.metadata.name if a.operation == CREATE and a.obj is not None else a.name
        if name != node:
            raise _deny(a, "can only access node lease with the same name as the requesting node")


def _pods(a: AdmissionAttributes, node: str) -> None:
    if a.subresource == "status":
        pod = a.old if a.old is not None else a.obj
        if pod is not None and pod.spec.node_name != node:
            raise _deny(a, f'node "{node}" can only update pod status for pods with spec.nodeName set to itself')
        return
    if a.subresource:
        return
    if a.operation == CREATE:
        pod = a.obj
        if MIRROR_POD_ANNOTATION not in pod.metadata.annotations:
            raise _deny(a, f'pod does not have "{MIRROR_POD_ANNOTATION}" annotation, node "{node}" can only create mirror pods')
        if pod.spec.node_name != node:
            raise _deny(a, f'node "{node}" can only create pods with spec.nodeName set to itself')
    elif a.operation == DELETE:
        if a.old is not None and a.old.spec.node_name != node:
            raise _deny(a, f'node "{node}" can only delete pods with spec.nodeName set to itself')
    else:
        raise _deny(a, f'unexpected operation "{a.operation}", node "{node}" can only create and delete mirror pods')
