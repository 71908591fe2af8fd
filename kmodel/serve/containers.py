"""What the server answers for a pod's container subresources (log, exec, attach, portforward): the model's
kubelets run no containers, so there is nothing to stream.

kube-apiserver serves these by proxying to the kubelet of the pod's node (pkg/registry/core/pod/strategy.go:
LogLocation, streamLocation, PortForwardLocation, v1.32). It first checks the pod, and those checks are answered
here as upstream answers them: the container named (or the only one) must be the pod's, 400 BadRequest
otherwise; a pod with no node yet has no log (an empty one) and cannot be exec'd, attached to or forwarded to
(400 BadRequest "pod NAME does not have a host assigned"). Where upstream would then connect to the kubelet, an
API server whose nodes run no kubelet fails to connect and answers what it answers for any error that is not a
Status: 500 with no reason (StatusReasonUnknown, responsewriters.ErrorToAPIStatus), the message saying why.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from kmodel.apiserver.wire import Status

#: the pod subresources that stream from a container, by the kubelet path upstream proxies each to
SUBRESOURCES = ("log", "exec", "attach", "portforward")
#: what a pod of the model has not, for each of them
NOTHING = {"log": "no container logs", "exec": "no container to exec in", "attach": "no container to attach to",
           "portforward": "no container to forward ports to"}


def no_containers(subresource: str, pod: Any, query: Mapping[str, str]) -> Optional[Status]:
    """The answer to `subresource` of `pod` (the model's Pod, read by the requester); None for an empty log."""
    name = pod.metadata.name
    if subresource != "portforward":
        refused = _container_refused(pod, query.get("container", ""))
        if refused is not None:
            return refused
    node = pod.spec.node_name
    if not node:
        if subresource == "log":
            return None  # upstream's empty location: no log yet
        return Status(400, "BadRequest", f"pod {name} does not have a host assigned")
    return Status(500, "", f"kmodel serve: the model's kubelet on node {node} runs no containers, so pod {name} has "
                           f"{NOTHING[subresource]}")


def _container_refused(pod: Any, container: str) -> Optional[Status]:
    """upstream's validateContainer: a 400 when `container` is not one of the pod's, or is empty and the pod has
    more than one."""
    name = pod.metadata.name
    names = [c.name for c in pod.spec.containers]
    init = [c.name for c in (getattr(pod.spec, "init_containers", None) or ())]
    if container:
        if container in names or container in init:
            return None
        return Status(400, "BadRequest", f"container {container} is not valid for pod {name}")
    if len(names) == 1:
        return None
    if not names:
        return Status(400, "BadRequest", f"a container name must be specified for pod {name}")
    message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
    if init:
        message += f" or one of the init containers: [{' '.join(init)}]"
    return Status(400, "BadRequest", message)
