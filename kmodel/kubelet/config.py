"""What one kubelet is configured with (its KubeletConfiguration and flags, reduced to what the model uses).

`KubeletConfig` is built by the cluster's factory (component.make) from the ClusterConfig, so nothing in
kmodel/kubelet imports the cluster layer above it. Times are logical milliseconds.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class KubeletConfig:
    node: str
    node_ip: str
    cpu: str = "4"
    memory: str = "8Gi"
    #: the node's root filesystem, reported as its ephemeral-storage capacity (setters.go MachineInfo reports it
    #: with LocalStorageCapacityIsolation, on by default since 1.25): pods' ephemeral-storage requests are fitted
    #: against it, as cpu and memory are
    ephemeral_storage: str = "100Gi"
    max_pods: int = 110
    node_status_update_period_ms: int = 10_000  # nodeStatusUpdateFrequency: how often the status is computed
    node_status_report_period_ms: int = 300_000  # nodeStatusReportFrequency: an unchanged status is written this often
    lease_duration_seconds: int = 40  # nodeLeaseDurationSeconds
    lease_renew_interval_ms: int = 10_000  # 25 % of the lease duration
    resync_interval_ms: int = 60_000  # syncFrequency: every pod worker resyncs this often
    backoff_period_ms: int = 10_000  # pod worker requeue after a failed sync (backOffPeriod)
    restart_backoff_initial_ms: int = 10_000  # container restart backoff (CrashLoopBackOff)
    restart_backoff_max_ms: int = 300_000
    static_pods: tuple = ()  # the manifest folder: Pod objects
    #: how the node's CNI configuration lays out host-local's ranges in the podCIDR (kmodel.kubelet.cni.IPAM_LAYOUTS)
    cni_ipam: str = "podcidr"
