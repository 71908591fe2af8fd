"""The kubelet as a sans-IO component: "kubelet/<node>", one per node.

Theory of operation
-------------------
The kubelet reaches the cluster only through its `ApiClient` (token node-<node>-token, so the Node authorizer
and NodeRestriction apply) and runs pods through the node's `ContainerRuntime`. Two informers feed it: the
pods bound to this node (field selector spec.nodeName=<node>, served from the watch cache's node index) and
its own Node (metadata.name=<node>).

What it does, each piece in its own module:

* registration and node status (node_status.py): on start it creates its Node (409 AlreadyExists is fine;
  other failures retry after 100 ms doubling to 7 s), then syncs its status at once and again 10 s after
  each sync ended (wait.JitterUntil, sliding, without its 4 % jitter), as updateNodeStatus does: up to 5
  tries, the first reading the Node from its own informer, the others from the API (GET); each computes the
  status and writes nodes/status only when it changed (beyond heartbeat times), when the podCIDRs are new to
  this process, or 5 min after the last write. Ready is False (KubeletNotReady, `container runtime network not
  ready: ...NetworkPluginNotReady...`) until the runtime's CNI is configured from the Node's podCIDR, so the
  node lifecycle controller taints a node without one not-ready and the scheduler keeps pods off it. The
  fast status update (fastStatusUpdateOnce): for 120 s after start, once the Node as read would turn Ready
  (its podCIDR configured the CNI) while its Ready condition is not True, the status is written at once instead
  of at the next 10 s sync; upstream polls for this every 100 ms, the model acts when the Node's podCIDR
  reaches its informer, and tries again 100 ms later while a status write is in flight or after one failed;
* the Lease (lease.py, upstream's lease controller): renewed every 10 s from the start, created if missing; a
  renewal that fails is retried at once, up to 5 updates, then the Lease is read again (retried after 200 ms
  doubling to 7 s) and updated up to 5 times more, and the next renewal comes 10 s later;
* the heartbeat client: the Lease and node status requests (not the registration) go as upstream's
  HeartbeatClient sends them, a copy of the client config with Timeout min(nodeStatusUpdateFrequency,
  nodeLeaseDurationSeconds), 10 s here, and no rate limit, over the same connections. A heartbeat failing
  again (a Lease renewal's retry, a node status try after the first) closes all the kubelet's connections
  (onRepeatedHeartbeatFailure, closeAllConns: `ApiClient.close_all_connections`), so its watches start again
  on new connections instead of waiting for the health check to give up on a dead one;
* admission (admission.py): before a pod first runs, it is checked against the pods the kubelet already runs
  (resources, node selector, node name, host ports, NoExecute taints), the pods learnt of together oldest
  first; a rejected pod never runs and is reported Failed (`Pod was rejected: …`). This is what stops a pod
  that a scheduler with a stale cache bound to a full node, or beside a pod holding the same host port;
* pod workers (pod_worker.py): each pod (by uid) has a worker; a work item syncs one pod: run it (sandbox,
  IP, containers, restarts with back-off, liveness kills), or, once termination is requested (deletion-
  Timestamp, or gone from the API), stop it and release its IP. A pod is synced again when its object
  changes, when a probe result changes, when a back-off ends, after a failed sync (10 s) and every 60 s;
* probes (probes.py): one timer ("probe") drives every probe worker in logical time;
* the status manager (status.py): a work item writes one pod's status (GET, merge, PUT pods/status only
  when it differs); after a terminated pod's final status is written, the pod is deleted with
  gracePeriodSeconds 0 (the kubelet's last word on a deleted pod);
* static pods (static_pods.py): read from the manifest folder on every start and run without any API
  server; a mirror pod is created once the Node is known and the pod list has synced, and recreated when
  deleted; their status goes to the mirror pod;
* housekeeping: once the pod list has synced, sandboxes of pods it does not know are stopped and removed.

The loop event "work" runs one queued item (a pod sync, a status write or a cleanup), in FIFO order, so the
explorer can interleave the kubelet's work with deliveries.

Crash and restart. A crash forgets every worker, cache, probe state, back-off and queued write. What
survives is the node: the runtime (running containers) and the CNI plugin's disk (host-local reservations).
On start the kubelet re-reads its manifests, lists the API again, and each pod worker's first sync reads the
runtime by pod uid and finds the sandbox and containers still running: it adopts them (same sandbox, same
IP). A pod deleted from the API while the kubelet was cut off keeps running until the kubelet hears of it.

Direct runs: a `Pod` delivered as a message (not through the API) is run as if the informer had brought it
(`_run_as_told`); only the direct-calls variant's scheduler sends one.

Fault hooks for tests and the explorer (the caller tells the loop: loop.notify_work(kubelet.name)):
`fail_probe(namespace, name, container, kind)`, `fail_container(namespace, name, container, exit_code)`.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Optional, Sequence

from kmodel.component.registry import component
from kmodel.apiserver.events import EventRecorder
from kmodel.apiserver.wire import Preconditions, Response
from kmodel.client import ApiClient, Informer, DeletedFinalStateUnknown
from kmodel.client.component import ClientComponent
from kmodel.client.rate_limiter import KUBELET_LIMIT
from kmodel.component import Component, Out
from kmodel.kubelet import lease as lease_mod
from kmodel.kubelet import node_status
from kmodel.kubelet.admission import Rejection, admission_order, admit, rejected_status
from kmodel.kubelet.agenda import Agenda
from kmodel.kubelet.cni import RUNTIME_NETWORK_NOT_READY, BridgeCNI
from kmodel.kubelet.config import KubeletConfig
from kmodel.kubelet.pod_worker import (
    PodWorker, RestartBackoff, kill_orphans, pod_view, remove_pod, sync_pod, terminate_pod,
)
from kmodel.kubelet.probes import FAILURE, LIVENESS, READINESS, SUCCESS, ProbeManager
from kmodel.kubelet.runtime import ContainerRuntime, ContainerState
from kmodel.kubelet.static_pods import (
    CONFIG_MIRROR_ANNOTATION, is_mirror_of, is_mirror_pod, mirror_pod, static_pod,
)
from kmodel.kubelet.status import StatusManager, generate_status, merge_status
from kmodel.network import Message
from kmodel.switches import DEFAULT_SWITCHES, Switches
from kmodel.objects import Pod
from kmodel.objects.core import PodStatus
from kmodel.objects.fastevolve import evolve
from kmodel.apiserver.authentication import node_token
from kmodel.cluster.config import node_ip

REGISTER_TIMER = "register"
LEASE_TIMER = "lease"
NODE_STATUS_TIMER = "node-status"
FAST_STATUS_TIMER = "fast-node-status"
FAST_STATUS_PERIOD_MS = 100  # fastStatusUpdateOnce's wait.Until period
NODE_READY_GRACE_PERIOD_MS = 120_000  # nodeReadyGracePeriod: how long after start the fast update is tried
HOUSEKEEPING_TIMER = "housekeeping"
REGISTER_BACKOFF_INITIAL_MS = 100
REGISTER_BACKOFF_MAX_MS = 7_000
HOUSEKEEPING_PERIOD_MS = 2_000
TERMINAL_PHASES = ("Succeeded", "Failed")
STATUS_RETRY_MS = 10_000
NODE_STATUS_UPDATE_RETRY = 5  # nodeStatusUpdateRetry

POD, STATUS, CLEANUP = "pod", "status", "cleanup"


def kubelet_name(node: str) -> str:
    return f"kubelet/{node}"


class Kubelet(ClientComponent):
    """The node agent of one node. See the module docstring."""

    reconciles = True

    def __init__(self, config: KubeletConfig, apiservers: Sequence[str], token: str,
                 switches: Switches = DEFAULT_SWITCHES) -> None:
        super().__init__(kubelet_name(config.node))
        self.config = config
        self.apiservers = tuple(apiservers)
        self.token = token
        # The node's disk and processes: they outlive the kubelet process.
        self.cni_disk: dict[str, str] = {}
        self.runtime = ContainerRuntime()
        self.client = ApiClient(self.name, self.apiservers, token=token, rate_limit=KUBELET_LIMIT, switches=switches)
        #: the heartbeat client's requests (Lease, node status): upstream's kubelet makes them through a copy of its
        #: client config with Timeout min(nodeStatusUpdateFrequency, nodeLeaseDurationSeconds) and QPS -1
        #: (cmd/kubelet/app/server.go), over the same connections
        self.heartbeat = {"timeout_ms": min(config.node_status_update_period_ms,
                                            config.lease_duration_seconds * 1000), "throttled": False}
        self.recorder = EventRecorder("kubelet", config.node, instance=self.name)
        self.backoff = RestartBackoff(config.restart_backoff_initial_ms, config.restart_backoff_max_ms)
        self._forget()

    # -- memory ------------------------------------------------------------------------------------------

    def _forget(self) -> None:
        node = self.config.node
        self.client.reset()
        self.pods = Informer(self.client, "pods", field_selector=f"spec.nodeName={node}",
                             on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted)
        self.nodes = Informer(self.client, "nodes", field_selector=f"metadata.name={node}",
                              on_add=self._node_changed, on_update=self._node_updated)
        self.workers: dict[str, PodWorker] = {}
        self.statics: dict[str, Pod] = {}  # uid -> static pod
        self.queue: OrderedDict[tuple[str, str], None] = OrderedDict()
        self.resyncs = Agenda("pod-sync")
        self.probe_ticks = Agenda("probe")
        self.status_retries = Agenda("status-retry")
        self.probes = ProbeManager()
        self.status = StatusManager()
        self.registered = False
        self.node_uid = ""
        self._register_failures = 0
        self._node_status_in_flight = False
        self._last_status_report: Optional[int] = None  # lastStatusReportTime (None: never, in this process)
        self._status_pod_cidrs: tuple[str, ...] = ()  # the podCIDRs a status sync last saw (runtimeState.podCIDR)
        self._fast_status_in_flight = False
        self._fast_status_done = False  # the fast update is over for this process (the Node was seen Ready)
        self._started_at = 0  # when this process started: the fast status update runs for a grace period after
        self.lease = lease_mod.LeaseController(
            self.client, self.config.node, lambda: self.node_uid, duration_seconds=self.config.lease_duration_seconds,
            renew_interval_ms=self.config.lease_renew_interval_ms, timer=LEASE_TIMER, heartbeat=self.heartbeat,
            on_repeated_failure=self.client.close_all_connections)
        self._mirror_in_flight: dict[str, None] = {}
        self._cleaned = False

    def crash(self) -> None:
        self._forget()
        self.recorder.restart()

    # -- component protocol --------------------------------------------------------------------------------

    def start(self, now: int, out: Out) -> None:
        self._started_at = now
        for manifest in self.config.static_pods:
            pod = static_pod(manifest, self.config.node)
            self.statics[pod.metadata.uid] = pod
            self.workers[pod.metadata.uid] = PodWorker(pod, static=True)
            self._enqueue(POD, pod.metadata.uid)
        self.nodes.start(now, out)
        self.pods.start(now, out)
        self._register(now, out)
        self.lease.sync(now, out)
        out.set_timer(HOUSEKEEPING_TIMER, HOUSEKEEPING_PERIOD_MS)

    def on_message(self, now: int, msg: Message, out: Out) -> None:
        if type(msg.payload) is Pod:
            self._run_as_told(msg.payload)
            return
        self.client.on_message(now, msg, out)

    def _run_as_told(self, pod: Pod) -> None:
        """Only under the direct-calls variant (kmodel.variants), where the scheduler sends the pod to run
        straight to this kubelet instead of writing a Binding (no other component sends a kubelet a Pod): the
        pod gets a worker and is synced like a pod the informer brought. The API never tells this kubelet about
        it (it is not bound there), so nothing but a crash of this kubelet stops it."""
        self._pod_changed(pod)

    def on_timer(self, now: int, name: str, out: Out) -> None:
        if self.client.on_timer(now, name, out):
            return
        if name == self.resyncs.timer:
            for uid in self.resyncs.pop_due(now, out):
                self._enqueue(POD, uid)
        elif name == self.probe_ticks.timer:
            self._probe(now, out)
        elif name == self.status_retries.timer:
            for uid in self.status_retries.pop_due(now, out):
                self._enqueue(STATUS, uid)
        elif name == REGISTER_TIMER:
            self._register(now, out)
        elif name == LEASE_TIMER:
            self.lease.on_timer(now, out)
        elif name == NODE_STATUS_TIMER:
            self._post_node_status(now, out)
        elif name == FAST_STATUS_TIMER:
            self._fast_status_update(now, out)
        elif name == HOUSEKEEPING_TIMER:
            if not self._cleaned:
                self._enqueue(CLEANUP, "")
                out.set_timer(HOUSEKEEPING_TIMER, HOUSEKEEPING_PERIOD_MS)

    def has_work(self) -> bool:
        return bool(self.queue)

    def latest_deadline(self, now: int) -> Optional[int]:
        dues = [d for d in (super().latest_deadline(now), self.resyncs.latest_due(), self.probe_ticks.latest_due(),
                            self.status_retries.latest_due()) if d is not None]
        return max(dues, default=None)

    def work(self, now: int, out: Out) -> None:
        (kind, uid), _ = self.queue.popitem(last=False)
        if kind == POD:
            self._sync(now, uid, out)
        elif kind == STATUS:
            self._sync_status(now, uid, out)
        else:
            self._cleanup(now, out)

    def _enqueue(self, kind: str, uid: str) -> None:
        self.queue[(kind, uid)] = None

    # -- informer handlers -----------------------------------------------------------------------------------

    def _pod_added(self, now: int, pod: Pod, out: Out) -> None:
        self._pod_changed(pod)

    def _pod_updated(self, now: int, old: Pod, pod: Pod, out: Out) -> None:
        self._pod_changed(pod)

    def _pod_changed(self, pod: Pod) -> None:
        if is_mirror_pod(pod):
            uid = pod.metadata.annotations.get(CONFIG_MIRROR_ANNOTATION, "")
            if uid in self.statics:
                self._enqueue(POD, uid)
                self._enqueue(STATUS, uid)
            return
        uid = pod.metadata.uid
        worker = self.workers.get(uid)
        if worker is None:
            worker = self.workers[uid] = PodWorker(pod)
        else:
            worker.pod = pod
        self._enqueue(POD, uid)

    def _pod_deleted(self, now: int, obj: Any, out: Out) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if pod is None:
            return
        if is_mirror_pod(pod):
            uid = pod.metadata.annotations.get(CONFIG_MIRROR_ANNOTATION, "")
            if uid in self.statics:
                self._enqueue(POD, uid)
            return
        worker = self.workers.get(pod.metadata.uid)
        if worker is not None:
            worker.deleted = True
            self._enqueue(POD, worker.uid)

    def _node_changed(self, now: int, node: Any, out: Out) -> None:
        self.node_uid = node.metadata.uid
        cidrs = node_status.pod_cidrs(node)
        if cidrs and self.runtime.cni is None:
            # the runtime gets the pod CIDR (UpdateRuntimeConfig) and the network plugin is configured
            self.runtime.cni = BridgeCNI(cidrs, self.cni_disk, layout=self.config.cni_ipam)
        self._fast_status_update(now, out)
        for uid in self.statics:
            self._enqueue(POD, uid)

    def _node_updated(self, now: int, old: Any, node: Any, out: Out) -> None:
        self._node_changed(now, node, out)

    # -- registration, node status, lease ----------------------------------------------------------------------

    def _register(self, now: int, out: Out) -> None:
        def done(t: int, response: Response, o: Out) -> None:
            if response.ok or (response.code == 409 and getattr(response.body, "reason", "") == "AlreadyExists"):
                self.registered = True
                if response.ok:
                    self.node_uid = response.body.metadata.uid
                self._post_node_status(t, o)
                return
            self._register_failures += 1
            delay = min(REGISTER_BACKOFF_INITIAL_MS << min(self._register_failures - 1, 16), REGISTER_BACKOFF_MAX_MS)
            o.set_timer(REGISTER_TIMER, delay)

        self.client.create(now, out, "nodes", node_status.initial_node(self.config, now, self.network_error),
                           on_done=done)

    def _post_node_status(self, now: int, out: Out, try_number: int = 0) -> None:
        """updateNodeStatus: try `try_number` of NODE_STATUS_UPDATE_RETRY. The first reads the Node from this
        kubelet's own informer (the lister), a retry from the API; a try that fails moves on to the next."""
        if not self.registered or self._node_status_in_flight:
            return
        if try_number >= NODE_STATUS_UPDATE_RETRY:  # every try failed: this sync is over
            self._node_status_synced(now, out)
            return
        if try_number == 0:
            node = self.nodes.get("", self.config.node)
            if node is None:  # not in the lister (yet): an error, the next try asks the API
                self._post_node_status(now, out, 1)
            else:
                self._sync_node_status(now, out, node, 0)
            return
        self._node_status_in_flight = True

        def got(t: int, response: Response, o: Out) -> None:
            self._node_status_in_flight = False
            if response.ok:
                self._sync_node_status(t, o, response.body, try_number)
            else:
                self._node_status_failed(t, o, try_number)

        self.client.get(now, out, "nodes", self.config.node, on_done=got, **self.heartbeat)

    def _node_status_synced(self, now: int, out: Out) -> None:
        """syncNodeStatus returned: the next one starts nodeStatusUpdateFrequency after it (kubelet.Run's
        wait.JitterUntil(syncNodeStatus, nodeStatusUpdateFrequency, 0.04, sliding=true), without the jitter)."""
        out.set_timer(NODE_STATUS_TIMER, self.config.node_status_update_period_ms)

    def _node_status_failed(self, now: int, out: Out, try_number: int) -> None:
        """updateNodeStatus after a failed try: a failure of a retry is a repeated heartbeat failure, on which the
        kubelet closes all its connections (onRepeatedHeartbeatFailure); then the next try."""
        if try_number > 0:
            self.client.close_all_connections(now, out)
        self._post_node_status(now, out, try_number + 1)

    def _sync_node_status(self, now: int, out: Out, node: Any, try_number: int) -> None:
        """tryUpdateNodeStatus once the Node is read: write the recomputed status only when it changed, the
        podCIDRs are news, or nodeStatusReportFrequency has passed since the last write."""
        self.node_uid = node.metadata.uid
        cidrs = node_status.pod_cidrs(node)
        cidrs_changed = bool(cidrs) and cidrs != self._status_pod_cidrs
        if cidrs:
            self._status_pod_cidrs = cidrs
        status = node_status.status(self.config, now, node.status, self.network_error)
        last = self._last_status_report
        due = last is None or now - last >= self.config.node_status_report_period_ms
        if not (cidrs_changed or due or node_status.status_changed(node.status, status)):
            self._node_status_synced(now, out)
            return
        self._node_status_in_flight = True

        def wrote(t: int, response: Response, o: Out) -> None:
            self._node_status_in_flight = False
            if response.ok:
                self._last_status_report = t
                self._node_status_synced(t, o)
            else:
                self._node_status_failed(t, o, try_number)

        new = evolve(node, metadata=evolve(node.metadata, resource_version=""), status=status)
        self.client.update_status(now, out, "nodes", new, on_done=wrote, **self.heartbeat)

    def _fast_status_update(self, now: int, out: Out) -> None:
        """fastNodeStatusUpdate, within NODE_READY_GRACE_PERIOD_MS of this process's start and until the Node is
        first seen Ready: when the Node as read is not Ready but its recomputed status is, write that status at once
        (the lastStatusReportTime and the podCIDRs seen are updated as by a regular write), after which the fast
        update is over, as it is once the Node reads Ready. Nothing to do while the network is not ready (the Node's
        next change tries again); tried again after FAST_STATUS_PERIOD_MS while another status write is in flight
        (syncNodeStatusMux) or when the write failed. Its own write does not hold up the regular sync."""
        if self._fast_status_done or now - self._started_at >= NODE_READY_GRACE_PERIOD_MS:
            return
        node = self.nodes.get("", self.config.node)
        if node is not None and node_status.is_ready(node):
            self._fast_status_done = True
            return
        if not self.registered or node is None or self.network_error is not None or self._fast_status_in_flight:
            return
        if self._node_status_in_flight:
            return
        if self._node_status_in_flight:
            out.set_timer(FAST_STATUS_TIMER, FAST_STATUS_PERIOD_MS)
            return
        self._fast_status_in_flight = True
        self._status_pod_cidrs = node_status.pod_cidrs(node)

        def wrote(t: int, response: Response, o: Out) -> None:
            self._fast_status_in_flight = False
            if response.ok:
                self._last_status_report = t
                self._fast_status_done = True
            else:
                o.set_timer(FAST_STATUS_TIMER, FAST_STATUS_PERIOD_MS)

        new = evolve(node, metadata=evolve(node.metadata, resource_version=""),
                     status=node_status.status(self.config, now, node.status))
        self.client.update_status(now, out, "nodes", new, on_done=wrote, **self.heartbeat)

    # -- pod workers -------------------------------------------------------------------------------------------

    @property
    def network_ready(self) -> bool:
        return self.runtime.cni is not None

    @property
    def network_error(self) -> Optional[str]:
        """runtimeState.networkErrors: None once the runtime's CNI is configured, else the runtime's error."""
        return None if self.network_ready else RUNTIME_NETWORK_NOT_READY

    def _liveness_failed(self, uid: str):
        def failed(container: str, cid: str) -> bool:
            return self.probes.result((uid, container, LIVENESS), cid) == FAILURE
        return failed

    def _ready(self, uid: str, pod: Pod):
        specs = {c.name: c for c in pod.spec.containers}

        def ready(container: str, cri) -> bool:
            spec = specs.get(container)
            if spec is None or spec.readiness_probe is None:
                return True
            return self.probes.result((uid, container, READINESS), cri.id) == SUCCESS
        return ready

    def _sync(self, now: int, uid: str, out: Out) -> None:
        worker = self.workers.get(uid)
        if worker is None:
            return
        if worker.admitted is None:
            self._admit_pending(now, out)
        if worker.admitted is False:
            self._sync_refused(now, worker)
            return
        pod = worker.pod
        if worker.termination_requested and not worker.static:
            if not self._stop(now, worker):
                self._set_status(now, worker, finished=True)
            return
        result = sync_pod(worker, self.runtime, self.backoff, now, network_ready=self.network_ready,
                          liveness_failed=self._liveness_failed(uid))
        self._follow_probes(now, worker, out)
        self._set_status(now, worker, finished=False)
        for typ, reason, message in result.events:
            self._event(now, out, pod, typ, reason, message)
        if result.error:
            delay = self.config.backoff_period_ms
        elif result.requeue_ms is not None:
            delay = max(result.requeue_ms, 1)
        else:
            delay = self.config.resync_interval_ms
        if worker.static and not self._sync_mirror(now, worker, out):
            delay = min(delay, self.config.backoff_period_ms)  # the API is not there yet: look again soon
        self.resyncs.schedule(uid, now + delay, out)

    # -- admission -----------------------------------------------------------------------------------------------

    def _admission_node(self, now: int) -> Any:
        """getNodeAnyWay: the informer's Node, or the Node this kubelet would register."""
        node = self.nodes.get("", self.config.node)
        return node if node is not None else node_status.initial_node(self.config, now, self.network_error)

    def _is_active(self, worker: PodWorker) -> bool:
        status = self.status.get(worker.uid) or worker.pod.status
        return worker.active and (worker.termination_requested or status.phase not in TERMINAL_PHASES)

    def _admit_pending(self, now: int, out: Out) -> None:
        """HandlePodAdditions for every pod learnt of since the last admission, oldest first (so after a restart
        the older of two conflicting pods keeps the node): a pod already Succeeded/Failed is not admitted (it
        never runs again), a pod being terminated is not checked, any other is checked against the active pods
        and runs, or is rejected (kmodel.kubelet.admission)."""
        pending = [w.pod for w in self.workers.values() if w.admitted is None]
        node = self._admission_node(now)
        for pod in admission_order(pending):
            worker = self.workers[pod.metadata.uid]
            if pod.status.phase in TERMINAL_PHASES:
                worker.admitted = False
                continue
            if worker.termination_requested:
                worker.admitted = True
                continue
            active = [w.pod for w in self.workers.values() if w is not worker and self._is_active(w)]
            rejection = admit(pod, active, node)
            worker.admitted = rejection is None
            if rejection is not None:
                self._reject(now, out, worker, rejection)

    def _reject(self, now: int, out: Out, worker: PodWorker, rejection: Rejection) -> None:
        """rejectPod: a Warning event and the status Failed; whatever of the pod still runs from before a restart
        is stopped (HandlePodCleanups kills what runs unadmitted)."""
        pod = worker.pod
        self._event(now, out, pod, "Warning", rejection.reason, rejection.message)
        terminate_pod(worker, self.runtime, now)
        old = self.status.get(worker.uid) or pod.status or PodStatus()
        if self.status.set_status(worker.uid, pod.metadata.namespace, pod.metadata.name,
                                  rejected_status(old, rejection, now)):
            self._enqueue(STATUS, worker.uid)

    def _stop(self, now: int, worker: PodWorker) -> bool:
        """Stop whatever of the pod still runs (once); forget a pod gone from the API. True when it is gone."""
        uid = worker.uid
        if not worker.terminated:
            terminate_pod(worker, self.runtime, now)
            self.probes.remove_pod(uid)
            self.resyncs.cancel(uid)
        if not worker.deleted:
            return False
        remove_pod(self.runtime, uid, now)
        self.status.forget(uid)
        del self.workers[uid]
        return True

    def _sync_refused(self, now: int, worker: PodWorker) -> None:
        """A pod that never runs here (rejected, or finished before this kubelet learnt of it): make sure nothing
        of it runs, keep its status, and once it is deleted let the status write's answer remove it
        (canBeDeleted), as for any terminated pod."""
        uid = worker.uid
        if self._stop(now, worker):
            return
        pod = worker.pod
        if self.status.get(uid) is None:
            self.status.set_status(uid, pod.metadata.namespace, pod.metadata.name, pod.status)
        if worker.termination_requested:
            self._enqueue(STATUS, uid)

    def _follow_probes(self, now: int, worker: PodWorker, out: Out) -> None:
        view = pod_view(self.runtime, worker.uid)
        for spec in worker.pod.spec.containers:
            newest = view.containers.get(spec.name, (None, None))[0]
            running = newest is not None and newest.state == ContainerState.CONTAINER_RUNNING
            for kind, probe in ((LIVENESS, spec.liveness_probe), (READINESS, spec.readiness_probe)):
                if probe is None:
                    continue
                key = (worker.uid, spec.name, kind)
                if not running:
                    self.probes.stop(key)
                    continue
                due = self.probes.ensure(key, probe, newest.id, newest.started_at, now)
                if due is not None:
                    self.probe_ticks.schedule(key, due, out)

    def _probe(self, now: int, out: Out) -> None:
        for key in self.probe_ticks.pop_due(now, out):
            worker = self.probes.workers.get(key)
            if worker is None:
                continue
            healthy = self.runtime.probe_healthy(worker.container_id, worker.kind)
            changed = worker.probe_once(now, healthy)
            self.probe_ticks.schedule(key, worker.next_due, out)
            if changed and key[0] in self.workers:
                self._enqueue(POD, key[0])

    def _set_status(self, now: int, worker: PodWorker, *, finished: bool) -> None:
        pod = worker.pod
        old = self.status.get(worker.uid) or pod.status or PodStatus()
        status = generate_status(pod, pod_view(self.runtime, worker.uid), self._ready(worker.uid, pod),
                                 worker.waiting, self.config.node_ip, now, old, finished)
        if self.status.set_status(worker.uid, pod.metadata.namespace, pod.metadata.name, status):
            self._enqueue(STATUS, worker.uid)
        elif not worker.static and merge_status(pod.status, status) != pod.status:
            # needsReconcile (status_manager.go): the API's pod differs from what the kubelet set on the fields it
            # owns, because another writer changed them (the node lifecycle controller's MarkPodsNotReady sets
            # Ready=False): write it again (upstream finds these in its periodic syncBatch)
            self.status.dirty[worker.uid] = None
            self._enqueue(STATUS, worker.uid)

    def _sync_mirror(self, now: int, worker: PodWorker, out: Out) -> bool:
        """Create, or replace, the static pod's mirror pod. False while that cannot be decided yet (Node or pod
        list not known) or a request for it is still out.

        The mirror is the pod manager's: a pod of the static pod's full name that carries the mirror annotation. An
        API pod of that name without it is an ordinary pod to the kubelet (podManager keeps it apart), so it is
        neither deleted nor replaced: the mirror's create then meets AlreadyExists, which syncPod ignores. A stale
        mirror is deleted with its UID as precondition (DeleteMirrorPod), so a mirror made again meanwhile stays."""
        uid = worker.uid
        static = worker.pod
        if not self.node_uid or not self.pods.has_synced or uid in self._mirror_in_flight:
            return False
        meta = static.metadata
        mirror = self.pods.get(meta.namespace, meta.name)
        if mirror is not None and not is_mirror_pod(mirror):
            mirror = None

        def done(t: int, response: Response, o: Out) -> None:
            self._mirror_in_flight.pop(uid, None)

        if mirror is not None and (mirror.metadata.deletion_timestamp is not None or not is_mirror_of(mirror, static)):
            self._mirror_in_flight[uid] = None
            self.client.delete(now, out, "pods", meta.name, namespace=meta.namespace, grace_period_seconds=0,
                               body=Preconditions(uid=mirror.metadata.uid), on_done=done)
        elif mirror is None:
            self._mirror_in_flight[uid] = None
            self.client.create(now, out, "pods", mirror_pod(static, self.config.node, self.node_uid), on_done=done)
        return True

    # -- status manager ----------------------------------------------------------------------------------------

    def _sync_status(self, now: int, uid: str, out: Out) -> None:
        sm = self.status
        status = sm.get(uid)
        if status is None or uid in sm.in_flight:
            return
        namespace, name = sm.targets[uid]
        sm.dirty.pop(uid, None)
        sm.in_flight[uid] = None

        def settle(t: int, ok: bool, o: Out) -> None:
            sm.in_flight.pop(uid, None)
            if not ok and sm.get(uid) is not None:
                sm.dirty[uid] = None
                self.status_retries.schedule(uid, t + STATUS_RETRY_MS, o)
            elif uid in sm.dirty:
                self._enqueue(STATUS, uid)

        def wrote(t: int, response: Response, o: Out) -> None:
            settle(t, response.ok, o)
            if response.ok:
                self._maybe_delete(t, uid, response.body, o)

        def got(t: int, response: Response, o: Out) -> None:
            if response.code == 404:
                settle(t, True, o)  # no such pod (yet): a mirror pod's creation will queue the status again
                return
            if not response.ok:
                settle(t, False, o)
                return
            api_pod = response.body
            static = self.statics.get(uid)
            if (static is not None and not is_mirror_of(api_pod, static)) or \
                    (static is None and api_pod.metadata.uid != uid):
                settle(t, True, o)  # deleted and recreated: not this pod any more
                return
            current = sm.get(uid)
            if current is None:
                settle(t, True, o)
                return
            merged = merge_status(api_pod.status, current)
            if merged == api_pod.status:
                settle(t, True, o)
                self._maybe_delete(t, uid, api_pod, o)
                return
            body = evolve(api_pod, metadata=evolve(api_pod.metadata, resource_version=""), status=merged)
            self.client.update_status(t, o, "pods", body, on_done=wrote)

        self.client.get(now, out, "pods", name, namespace=namespace, on_done=got)

    def _maybe_delete(self, now: int, uid: str, api_pod: Pod, out: Out) -> None:
        """canBeDeleted: a terminated pod whose final status is written is deleted with grace 0."""
        worker = self.workers.get(uid)
        if worker is None or worker.static or not worker.terminated or api_pod.metadata.deletion_timestamp is None:
            return
        meta = api_pod.metadata
        self.client.delete(now, out, "pods", meta.name, namespace=meta.namespace, grace_period_seconds=0)

    # -- housekeeping ------------------------------------------------------------------------------------------

    def _cleanup(self, now: int, out: Out) -> None:
        if not self.pods.has_synced:
            return
        self._cleaned = True
        kill_orphans(self.runtime, list(self.workers), now)

    # -- events ------------------------------------------------------------------------------------------------

    def _event(self, now: int, out: Out, pod: Pod, typ: str, reason: str, message: str) -> None:
        self.recorder.record(self.client, now, out, pod, reason, message, type=typ)

    # -- fault hooks -------------------------------------------------------------------------------------------

    def worker_of(self, namespace: str, name: str) -> Optional[PodWorker]:
        for worker in self.workers.values():
            meta = worker.pod.metadata
            if meta.namespace == namespace and meta.name == name and not worker.deleted:
                return worker
        return None

    def container_id(self, namespace: str, name: str, container: str) -> str:
        """The CRI id of the newest instance of a container of a pod on this node ("" if none)."""
        worker = self.worker_of(namespace, name)
        if worker is None:
            return ""
        newest = pod_view(self.runtime, worker.uid).containers.get(container, (None, None))[0]
        return newest.id if newest is not None else ""

    def fail_probe(self, namespace: str, name: str, container: str, kind: str, healthy: bool = False) -> None:
        """The current instance of the container answers its `kind` probes with failure (or success again)."""
        self.runtime.set_probe_health(self.container_id(namespace, name, container), kind, healthy)

    def fail_container(self, namespace: str, name: str, container: str, exit_code: int = 1, now: int = 0,
                       reason: str = "Error") -> None:
        """The container's process dies; the pod is queued for a sync (the PLEG's relist would see it)."""
        self.runtime.fail_container(self.container_id(namespace, name, container), exit_code, reason, "", now)
        worker = self.worker_of(namespace, name)
        if worker is not None:
            self._enqueue(POD, worker.uid)


@component("kubelet", default=True)  # one per node
def make(ctx: Any) -> list[Component]:
    """The cluster's factory: one kubelet per node of ctx.config."""
    config = ctx.config
    out: list[Component] = []
    for node in config.node_names():
        kc = KubeletConfig(
            node=node, node_ip=node_ip(node), cpu=config.node_cpu, memory=config.node_memory,
            max_pods=config.max_pods, node_status_update_period_ms=config.node_status_update_period_ms,
            node_status_report_period_ms=config.node_status_report_period_ms,
            lease_duration_seconds=config.lease_duration_seconds,
            lease_renew_interval_ms=config.lease_renew_interval_ms, static_pods=tuple(config.static_pods_of(node)),
            cni_ipam=config.cni_ipam)
        out.append(Kubelet(kc, ctx.apiservers, node_token(node), ctx.switches))
    return out
