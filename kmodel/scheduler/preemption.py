"""DefaultPreemption's PostFilter, as far as it shapes the FitError message (no pod is ever preempted).

A port of the decision half of pkg/scheduler/framework/plugins/defaultpreemption and
pkg/scheduler/framework/preemption (PodEligibleToPreemptOthers, findCandidates, SelectVictimsOnNode,
DryRunPreemption) for the default profile.

Theory of operation
-------------------
When no node fits, upstream runs the PostFilter plugins and appends their message to the FitError:
`0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports. preemption: 0/2 nodes
are available: 2 No preemption victims found for incoming pod.` The preemption message is built like this:

* a pod with preemptionPolicy Never: `preemption: not eligible due to preemptionPolicy=Never.`;
* the nodes that may help are those rejected with Unschedulable (not UnschedulableAndUnresolvable: taints,
  node affinity, cordoned nodes cannot be fixed by evicting pods). On each, every pod of lower priority is a
  potential victim; none → `No preemption victims found for incoming pod`; otherwise the Filter plugins run
  again without them, and their rejection is the node's status;
* the other nodes count as `Preemption is not helpful for scheduling`;
* the histogram is formatted like a FitError (`0/N nodes are available: <count> <reason>, ….`), prefixed
  with `preemption: `.

If some node would fit once its lower-priority pods were gone, upstream would preempt them (delete the victims,
set status.nominatedNodeName) and the PostFilter message is empty. The model does not preempt: it returns ""
(the same FitError message upstream writes) and does nothing else. Priorities come from spec.priority (0 when
unset), which the Priority admission plugin sets from the pod's PriorityClass (kmodel/apiserver/admission/
priority.py): 0 for every pod that names none while no class is the global default.
"""

from __future__ import annotations

from typing import Sequence

from kmodel.objects import Pod
from kmodel.scheduler.framework import NO_NODE_AVAILABLE_MSG, Code, Diagnosis, NodeInfo
from kmodel.scheduler.queue import pod_priority
from kmodel.scheduler.schedule_one import run_filter_plugins

NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."


def _fit_error_text(num_all_nodes: int, explicit: dict[str, tuple[str, ...]], absent_reason: str) -> str:
    counts: dict[str, int] = {}
    for reasons in explicit.values():
        for reason in reasons:
            counts[reason] = counts.get(reason, 0) + 1
    absent = num_all_nodes - len(explicit)
    if absent > 0:
        counts[absent_reason] = counts.get(absent_reason, 0) + absent
    msg = NO_NODE_AVAILABLE_MSG % num_all_nodes + ":"
    histogram = sorted(f"{v} {k}" for k, v in counts.items())
    if histogram:
        msg += " " + ", ".join(histogram) + "."
    return msg


def post_filter_message(pod: Pod, node_infos: Sequence[NodeInfo], diagnosis: Diagnosis) -> str:
    """The DefaultPreemption PostFilter message for a pod no node fits ("" when preemption would succeed)."""
    if pod.spec.preemption_policy == "Never":
        return "preemption: " + NOT_ELIGIBLE_NEVER
    priority = pod_priority(pod)
    statuses: dict[str, tuple[str, ...]] = {}
    candidates = 0
    for info in node_infos:
        status = diagnosis.node_to_status.get(info.name)
        if status is None or status.code != Code.UNSCHEDULABLE:
            continue
        victims = [pi.pod for pi in info.pods.values() if pod_priority(pi.pod) < priority]
        if not victims:
            statuses[info.name] = (NO_VICTIMS,)
            continue
        without = NodeInfo(info.node, [pi.pod for pi in info.pods.values() if pod_priority(pi.pod) >= priority])
        rejected = run_filter_plugins(pod, without)
        if rejected is None:
            candidates += 1
        else:
            statuses[info.name] = rejected.reasons
    if candidates:
        return ""
    return "preemption: " + _fit_error_text(len(node_infos), statuses, NOT_HELPFUL)
