"""kmodel.scheduler: kube-scheduler as the component "scheduler" (component.py) and its building blocks.

- framework:    Status, Resource, HostPortInfo, NodeInfo (incremental: add_pod / remove_pod), FitError.
- plugins:      NodeUnschedulable, NodeName, TaintToleration, NodeAffinity (nodeSelector), NodePorts,
                NodeResourcesFit (+ BalancedAllocation score); FILTERS in the default profile's order.
- schedule_one: schedule_pod / schedule_one: filter, score, select a host, or a FitError with upstream's text.

- queue:        the scheduling queue (active, backoff, unschedulable; moves on cluster events).
- cache:        NodeInfos kept from the informers plus assumed pods (a bound pod counts at once).
- preemption:   the preemption plugin's message (no preemption is performed).
- component:    `Scheduler`: informers on pods and nodes, one scheduling cycle per `work`, binding, the
                PodScheduled=False condition and FailedScheduling/Scheduled events.
"""

from kmodel.scheduler.framework import (
    DEFAULT_MAX_PODS, Code, Diagnosis, FitError, HostPortInfo, NodeInfo, NoNodesAvailable, Resource, Status,
    pod_non_zero_requests, pod_requests,
)
from kmodel.scheduler.schedule_one import (
    ScheduleResult, find_nodes_that_fit, num_feasible_nodes_to_find, prioritize_nodes, run_filter_plugins,
    schedule_one, schedule_pod, select_host,
)

__all__ = [
    "Code", "DEFAULT_MAX_PODS", "Diagnosis", "FitError", "HostPortInfo", "NoNodesAvailable", "NodeInfo", "Resource",
    "ScheduleResult", "Status", "find_nodes_that_fit", "num_feasible_nodes_to_find", "pod_non_zero_requests",
    "pod_requests", "prioritize_nodes", "run_filter_plugins", "schedule_one", "schedule_pod", "select_host",
]
