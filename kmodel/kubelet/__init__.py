"""kmodel.kubelet: the node agent's pure building blocks (later wired into a sans-IO kubelet component).

- runtime: ContainerRuntime, a CRI-shaped in-memory runtime (sandboxes, containers, CRI states, fault hooks). It
           models the node's processes, so it outlives a kubelet crash.
- cni:     BridgeCNI, the pod network plugin: ADD/DEL over host-local IPAM on the node's podCIDR(s), with its
           on-disk directory as a dict that survives restarts.
"""

from kmodel.kubelet.cni import BridgeCNI, CNIError, CNIInterface, CNIResult
from kmodel.kubelet.runtime import (
    Container, ContainerConfig, ContainerMetadata, ContainerRuntime, ContainerState, CRIError, PodSandbox,
    PodSandboxConfig, PodSandboxMetadata, PodSandboxState,
)

__all__ = [
    "BridgeCNI", "CNIError", "CNIInterface", "CNIResult", "CRIError", "Container", "ContainerConfig",
    "ContainerMetadata", "ContainerRuntime", "ContainerState", "PodSandbox", "PodSandboxConfig",
    "PodSandboxMetadata", "PodSandboxState",
]
