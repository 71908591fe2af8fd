"""Static pods, drawn per example: a manifest in the first node's kubelet folder (ClusterConfig.static_pods).

A kubelet runs the pods of its manifest folder (/etc/kubernetes/manifests: kubeadm's control plane, a node agent
an administrator drops there) without the API server, and keeps a mirror pod of each in the API so that the rest
of the cluster sees it (kmodel.kubelet.static_pods). To the others the mirror pod is a pod like any: the
scheduler counts its requests and host ports on its node, a Service whose selector matches it sends traffic to
it, the garbage collector sees its Node as its owner, and a user may label, patch or delete it; the kubelet
creates it once its Node is known, creates it again when it is deleted, and replaces one being deleted. So every
example draws, after its address plan (kmodel.checker.addressplan), whether node-1's folder holds a manifest and
which one (`STATIC_MANIFESTS`); none first, where a failing example shrinks to:

    none       an empty folder
    web        the apps' container labelled app=web: the web Service selects its mirror pod, which belongs to
               its Node, so the web ReplicaSet may not adopt it
    hostport   a container holding host port 8080/TCP, the port the checker's host-port pods and Deployments
               ask for: the scheduler finds node-1's port taken by the mirror pod

A configuration with static pods of its own (a test's ClusterConfig) keeps them: nothing is drawn. The session's
configuration holds the manifest and the trace records it (kmodel.checker.trace), so `kmodel replay`, the
minimizer and the regression seeds rebuild it.
"""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import strategies as st
from hypothesis.control import current_build_context, currently_in_test_context

from kmodel.checker.actions import HOST_PORT, IMAGE
from kmodel.cluster import ClusterConfig
from kmodel.objects import load

#: the node whose folder holds the drawn manifest: the first, which every cluster has
STATIC_NODE = "node-1"


def _manifest(name: str, labels: dict[str, str], port: dict[str, Any]) -> Any:
    return load({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
                 "spec": {"containers": [{"name": name, "image": IMAGE, "ports": [port]}]}})


#: (name, the manifest) an example draws from, the empty folder first (see the module docstring)
STATIC_MANIFESTS: tuple[tuple[str, Any], ...] = (
    ("none", None),
    ("web", _manifest("static-web", {"app": "web"}, {"containerPort": 80})),
    ("hostport", _manifest("static-agent", {"run": "static-agent"}, {"containerPort": 80, "hostPort": HOST_PORT})),
)


def draw_static_pods(config: ClusterConfig) -> ClusterConfig:
    """`config` with a manifest of STATIC_MANIFESTS in node-1's folder (or none), drawn as the current Hypothesis
    example's next choice; `config` as it is when it has static pods of its own or outside a Hypothesis example."""
    if config.static_pods or not currently_in_test_context():
        return config
    _, manifest = current_build_context().data.draw(st.sampled_from(STATIC_MANIFESTS))
    if manifest is None:
        return config
    return attrs.evolve(config, static_pods=((STATIC_NODE, (manifest,)),))


def static_text(config: ClusterConfig) -> str:
    """What the configuration's manifest folders hold, as a report says it: ``static pod static-web on node-1``."""
    return ", ".join(f"static pod {pod.metadata.name} on {node}" for node, pods in config.static_pods for pod in pods)
