"""kmodel.kubelet: the node agent, "kubelet/<node>" (component.py: `Kubelet`, `make`), and its building blocks.

- component:   the sans-IO kubelet: informers, work queue of pod syncs / status writes, timers, fault hooks.
- pod_worker:  per-pod memory and SyncPod / SyncTerminatingPod against the runtime (adoption by pod uid label).
- status:      generateAPIPodStatus, the status manager's merge and bookkeeping.
- probes:      liveness / readiness workers in logical time.
- lease, node_status: the Lease and the Node the kubelet registers and heartbeats.
- static_pods: static pods from the manifest folder and their mirror pods.
- agenda:      many due times behind one component timer.
- config:      KubeletConfig (built by the cluster's factory).

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
