"""Fixes: opt-in changes that take out one of the upstream bugs the default model reproduces.

The default model keeps upstream's behaviour, bugs included (docs/upstream-bugs.md). A fix is a switch,
like a variant (kmodel.variants): it changes one behaviour at one
named place, read from `ClusterConfig.fixes` there and nowhere else. Fixes serve two purposes:

* checking a proposed fix: `kmodel replay TRACE --fix NAME --lenient` replays the bug's trace on the fixed
  model, and `kmodel check --fix NAME` explores the fixed model for what the fix breaks or leaves;
* hunting new bugs: a long campaign on the default model keeps finding the same known bug (most
  `--profile campaign` seeds find the nodeipam leak); with the fixes on it looks past them.

A fix is either upstream's own proposal (`upstream` names the pull requests) or kmodel's sketch where
upstream has none (`upstream` says so): a sketch is kmodel's guess at a fix, not Kubernetes behaviour.

    kmodel fixes             lists them
    kmodel check --fix NAME, kmodel replay --fix NAME, kmodel simulate --fix NAME (repeatable)
"""

from __future__ import annotations

from typing import Iterable

import attrs

DEPLOYMENT_REFRESH_ANNOTATIONS = "deployment-refresh-annotations"
NODEIPAM_RELEASE_BY_OWNER = "nodeipam-release-by-owner"
ETCD_KEEP_COMPACTION_TOMBSTONE = "etcd-keep-compaction-tombstone"
REFLECTOR_CONSISTENT_FIRST_LIST = "reflector-consistent-first-list"
SCHEDULER_COUNT_HOST_PORT_HOLDERS = "scheduler-count-host-port-holders"
DEPLOYMENT_RETRY_PAST_MAX_RETRIES = "deployment-retry-past-max-retries"
ENDPOINTS_RETRY_PAST_MAX_RETRIES = "endpoints-retry-past-max-retries"
TAINTEVICTION_RETRY_FAILED_EVICTIONS = "tainteviction-retry-failed-evictions"
LEADERELECTION_FENCE_WRITES = "leaderelection-fence-writes"
LEADERELECTION_RESET_ON_EXIT = "leaderelection-reset-on-exit"
NODEIPAM_RELEASE_ONLY_ON_DELETE = "nodeipam-release-only-on-delete"
REPLICASET_MANAGE_ONLY_CURRENT = "replicaset-manage-only-current"
REPLICASET_CONFIRM_EXPIRED_EXPECTATIONS = "replicaset-confirm-expired-expectations"
TAINTEVICTION_EVICT_ONLY_THE_SCHEDULED_POD = "tainteviction-evict-only-the-scheduled-pod"
REPLICASET_EXPECT_TIMED_OUT_CREATIONS = "replicaset-expect-timed-out-creations"
GARBAGECOLLECTOR_FORGET_REPLACED_OWNER = "garbagecollector-forget-replaced-owner"
ENDPOINTSLICE_COMPARE_PLACEHOLDER_OWNERS = "endpointslice-compare-placeholder-owners"
ENDPOINTSLICE_SYNC_WHEN_CACHE_CATCHES_UP = "endpointslice-sync-when-cache-catches-up"
STATEFULSET_HEALTHY_MEANS_AVAILABLE = "statefulset-healthy-means-available"
STATEFULSET_RECHECK_WHEN_AVAILABLE = "statefulset-recheck-when-available"


@attrs.frozen
class Fix:
    name: str
    #: the invariants the bug violates (its traces fail with one of them)
    invariants: tuple[str, ...]
    #: the bug, in one sentence
    bug: str
    #: what the fix changes, in one sentence
    changes: str
    #: the one place in the model that reads the switch
    where: str
    #: upstream's proposals (pull requests), or why there is none
    upstream: str
    #: the regression traces of the bug (tests/regressions), which pass with the fix on
    traces: tuple[str, ...]


FIXES: tuple[Fix, ...] = (
    Fix(
        DEPLOYMENT_REFRESH_ANNOTATIONS, ("converges-replicas",),
        "an active ReplicaSet of the right size with a stale desired-replicas annotation makes every sync a "
        "scaling event, and scale() returns early because the sizes match, so a new template is never rolled out",
        "scale() updates the active ReplicaSet's replica annotations when its size already matches and they "
        "are stale, instead of returning",
        "kmodel/controllers/rolling_update.py (scale)",
        "kubernetes/kubernetes#138036 and #138840 (open), #102579 (closed): all three propose this change",
        ("deployment-stale-desired-replicas-annotation-blocks-rollout.json",)),
    Fix(
        NODEIPAM_RELEASE_BY_OWNER, ("no-cidr-leak",),
        "after a restart, nodeipam releases a block only on an informer delete that carries the node's "
        "podCIDR: a node deleted between its startup list and its informer's first list, or deleted as a "
        "tombstone older than its patch, keeps its block",
        "the range allocator remembers which node (name and uid) holds each block it occupied or patched; a "
        "delete or tombstone releases what that node holds, and once its informer has synced, one more "
        "consistent list releases each node of the startup list that is gone (or back with another uid)",
        "kmodel/controllers/nodeipam.py (NodeIpamController)",
        "none: upstream accepts such leaks until the next restart; this is kmodel's sketch of a fix",
        ("nodeipam-node-deleted-between-its-two-lists.json",
         "nodeipam-tombstone-older-than-the-cidr-it-was-given.json")),
    Fix(
        ETCD_KEEP_COMPACTION_TOMBSTONE,
        ("converges-replicas", "converges-proxy-rules", "converges-endpointslices", "no-cidr-leak"),
        "etcd's compaction drops a tombstone made at the compaction revision, yet a watch starting at that "
        "revision is not refused: an API server resuming its etcd watch there never gets the delete, and its "
        "watch cache, so every informer on it, keeps the object for good",
        "compaction keeps a tombstone whose revision is the compaction revision (the next compaction drops it), "
        "so a watch starting there gets the delete",
        "kmodel/store/keyspace.py (Keyspace.compact)",
        "etcd-io/etcd#18274 (merged, fixing etcd-io/etcd#18089), backported by #18474 (3.5) and #18475 (3.4): "
        "etcd's own fix, in releases after the 3.4.23 the model matches",
        ("apiserver-cache-keeps-a-node-deleted-at-the-compaction-revision.json",
         "apiserver-cache-keeps-a-service-deleted-at-the-compaction-revision.json")),
    Fix(
        REFLECTOR_CONSISTENT_FIRST_LIST,
        ("restart-no-time-travel", "host-ports-unique", "replicaset-within-expectations"),
        "a reflector's first list asks resourceVersion 0, which any API server answers from its watch cache "
        "however far behind etcd it is: a restarted kubelet can list a pod deleted long ago, miss the pod that "
        "has run since, and run the deleted one again; a restarted ReplicaSet controller can miss the pod it "
        "created just before its crash and create another",
        "every reflector's first list asks resourceVersion \"\" (a consistent read, at etcd's current revision "
        "or later), so a restarted process never starts from a state older than one it saw or wrote before it "
        "crashed",
        "kmodel/client/informer.py (Informer.relist_resource_version)",
        "kubernetes/kubernetes#83520 made exactly this change for #59848 (merged for 1.17); it was reverted for "
        "the etcd load of large clusters' relists (#86824 for 1.17; today's reflector asks \"0\" again); "
        "KEP-2340 (consistent reads from the watch cache) and KEP-3157 (watch-list) were designed to make such a "
        "first read affordable. #59848 is open",
        ("controller-manager-restarted-against-a-lagging-cache-lists-older-than-its-own-writes.json",
         "kubelet-restarted-against-a-lagging-cache-reruns-a-deleted-pod-on-a-host-port.json",
         "replicaset-creates-twice-after-a-restart-on-a-stale-first-list.json",
         "stale-scheduler-binds-two-pods-on-one-host-port.json")),
    Fix(
        SCHEDULER_COUNT_HOST_PORT_HOLDERS, ("converges-replicas",),
        "the scheduler's NodeInfo keeps host ports as a set: when one of two pods on a node that declare the same "
        "host port goes (a pod the kubelet rejected), the port is freed while the other still holds it, and from "
        "then on the scheduler places every pod wanting it on that node, where the kubelet rejects each one "
        "(NodePorts) and its ReplicaSet makes another, for good",
        "HostPortInfo counts the pods holding each (hostIP, protocol, port) and frees it when the last one goes",
        "kmodel/scheduler/component.py (make: the Scheduler's cache, NodeInfo's HostPortInfo)",
        "none found: upstream's HostPortInfo (pkg/scheduler/framework/types.go) is still a set; the symptoms of "
        "kubernetes/kubernetes#88851 (a ReplicaSet making Failed PodFitsHostPorts pods beside its running one, "
        "closed as stale) match, its cause was not found there. This is kmodel's sketch of a fix",
        ("scheduler-forgets-a-host-port-after-a-rejected-pod-and-places-pods-there-for-good.json",
         "scheduler-forgets-a-host-port-found-by-the-checker.json")),
    Fix(
        DEPLOYMENT_RETRY_PAST_MAX_RETRIES, ("converges-replicas",),
        "a Deployment whose sync fails 16 times in a row (its back-off adds up to about 4.5 minutes, so an etcd "
        "outage of 5 minutes is enough) is dropped from the deployment controller's queue (maxRetries, 15), and "
        "nothing syncs it again until an event on it, its ReplicaSets or its pods, or the informers' resync 12 "
        "to 24 hours later (not modelled): a change made just before the outage is not rolled out for hours",
        "the deployment controller requeues a key whose sync keeps failing for as long as it fails, at most 60 s "
        "between tries (as the Job controller's API back-off, MaxJobApiBackOff), instead of dropping it after 15 "
        "retries; with the default rate limiter's 1,000 s between tries, as the ReplicaSet controller has, the "
        "next try after a long outage could come a quarter of an hour after etcd is back",
        "kmodel/controllers/deployment.py (DeploymentController: its max_retries)",
        "none: upstream drops the key after maxRetries (handleErr, since kubernetes/kubernetes#28684) and "
        "counts on its shared informers' resync (kube-controller-manager's --min-resync-period, 12 h, times "
        "[1, 2)) to come back to it. This is kmodel's sketch of a fix",
        ("deployment-dropped-after-max-retries-while-etcd-was-down.json",
         "deployment-retries-a-quarter-of-an-hour-apart-after-a-long-etcd-outage.json",
         "deployment-dropped-after-max-retries-while-its-leader-renews.json",
         "deployment-dropped-after-max-retries-while-its-controller-is-cut-off.json")),
    Fix(
        ENDPOINTS_RETRY_PAST_MAX_RETRIES, ("converges-endpoints",),
        "a Service whose Endpoints write fails 16 times in a row (about 4.5 minutes of back-off and etcd "
        "timeouts, so an etcd outage of 5 minutes is enough) is dropped from the endpoints controller's queue "
        "(maxRetries, 15): a pod that became Ready just before etcd went down is never added to its Service's "
        "Endpoints, since nothing changes on the pod or the Service afterwards, until the informers' resync 12 "
        "to 24 hours later (not modelled)",
        "the endpoints controller requeues a key whose sync keeps failing for as long as it fails, at most 60 s "
        "between tries, as deployment-retry-past-max-retries does for the deployment controller",
        "kmodel/controllers/endpoints.py (make: EndpointsController's retry_past_max_retries)",
        "none: upstream's endpoints controller drops the key after maxRetries (handleErr) and counts on its "
        "shared informers' resync to come back to it. This is kmodel's sketch of a fix",
        ("endpoints-dropped-after-max-retries-while-etcd-was-down.json",
         "endpoints-dropped-after-max-retries-while-its-leader-renews.json")),
    Fix(
        TAINTEVICTION_RETRY_FAILED_EVICTIONS, ("converges-replicas",),
        "taint eviction tries a due eviction 5 times and then forgets it, failed or not, and its handlers ignore "
        "pod updates that keep the pod's node and tolerations and node updates that keep its NoExecute taints: "
        "an eviction that fails while the API is briefly unavailable (an etcd outage of half a minute) is "
        "never tried again on a node that stays tainted, so the pods of a machine lost for good are never "
        "evicted nor replaced (until kube-controller-manager restarts)",
        "an eviction whose 5 tries failed stays scheduled, and the pod's key is requeued with the rate "
        "limiter, so it is tried again, still due, until it succeeds or the taint goes",
        "kmodel/controllers/tainteviction.py (TaintEvictionController: _evict's finish)",
        "none found: upstream's TimedWorkerQueue removes the worker whatever its work function returns "
        "(pkg/controller/tainteviction/timed_workers.go, getWrappedWorkerFunc), and deletePodHandler's only "
        "retries are its 5 tries 10 ms apart. This is kmodel's sketch of a fix",
        ("taint-eviction-gives-up-on-a-lost-nodes-pod-after-an-etcd-blip.json",
         "taint-eviction-gives-up-found-by-the-checker.json",
         "taint-eviction-gives-up-after-five-quick-500s-while-its-leader-renews.json")),
    Fix(
        LEADERELECTION_FENCE_WRITES, ("leader-acts-within-lease",),
        "a kube-controller-manager or kube-scheduler that leads and is paused (a long GC pause, a frozen VM) past "
        "its lease wakes still believing it leads, and its controllers write on that belief until its next "
        "renewal fails, while another candidate has taken the expired lease over: two leaders act at once",
        "each write of a process that elects (Events and the Leases aside) is refused in the client, unsent, "
        "while the process does not hold an unexpired lease by its own clock (it leads, the Lease it last "
        "observed names it, and that observation is less than leaseDuration old)",
        "kmodel/client/leaderelection.py (Leadership.guard)",
        "none: client-go's leader election says it does not fence (leaderelection.go: \"This implementation "
        "does not guarantee that only one client is acting as a leader (a.k.a. fencing)\"); kube-controller-"
        "manager and kube-scheduler check nothing before a write. This is kmodel's sketch of a fix",
        ("leader-paused-past-its-lease-writes-on-waking.json", "leader-paused-past-its-lease-found-by-the-checker.json")),
    Fix(
        LEADERELECTION_RESET_ON_EXIT, ("replicaset-within-expectations",),
        "a kube-controller-manager that exits (its lease lost, or a crash) with a create still unacknowledged "
        "across a partition leaves it in the kernel's retransmit queue: the write lands once the partition heals, "
        "after the restarted process, leading again with empty expectations, has created the same pod, and a "
        "ReplicaSet has a pod more than its replicas",
        "the processes that elect abort their connections when they end (SO_LINGER 0: the kernel sends a reset "
        "and discards the data not yet acknowledged), so a write lost on the wire across a partition never lands "
        "after the process is gone; what a reachable link still carries arrives before the reset, as it would",
        "kmodel/cluster/cluster.py (Cluster: Loop.resets_on_exit)",
        "none: client-go's leader election says it does not fence (leaderelection.go: \"This implementation "
        "does not guarantee that only one client is acting as a leader (a.k.a. fencing)\"), and its transport "
        "closes connections gracefully. This is kmodel's sketch of a fix",
        ("replicaset-exited-leaders-held-create-lands-after-its-successors.json",)),
    Fix(
        NODEIPAM_RELEASE_ONLY_ON_DELETE, ("node-cidrs-disjoint",),
        "the range allocator's syncNode releases a node's podCIDR as soon as the node has a deletionTimestamp: a "
        "Node a finalizer keeps after its delete still has the block, and the next node to join is given the "
        "same one (Kubernetes 1.31, since kubernetes/kubernetes#123238 moved the allocator to a workqueue, "
        "until #128305)",
        "syncNode does nothing for a node being deleted; only the node informer's delete handler releases its "
        "block, once the Node is really gone",
        "kmodel/controllers/nodeipam.py (NodeIpamController.sync)",
        "kubernetes/kubernetes#128305 (merged for 1.32; backported to release-1.31 by #128806), fixing "
        "kubernetes/kubernetes#127792 (nodes kept by Karpenter's finalizer): upstream's own fix",
        ("node-kept-by-a-finalizer-has-its-cidr-given-to-a-new-node.json",)),
    Fix(
        REPLICASET_MANAGE_ONLY_CURRENT, ("converges-replicas",),
        "a ReplicaSet deleted while its controller's sync is between its claims and manageReplicas: the delete "
        "handler clears the key's expectations, then manageReplicas expects creations for the deleted set; its "
        "pods name the old uid, so no creation is observed, and the Deployment's new set of the same name waits "
        "on those expectations: it makes no pod, and after their 5 minutes nothing syncs it again before the "
        "informers' resync (12 to 24 h)",
        "a sync whose set the informer no longer holds with the same uid manages nothing (its delete handler "
        "already queued the key for the set that has the name now)",
        "kmodel/controllers/replicaset.py (ReplicaSetController.sync)",
        "none found for this window; kubernetes/kubernetes#69376 (a missed delete of a set recreated under its "
        "name) was fixed by #82572, which moved DeleteExpectations into the delete handler and leaves it. "
        "This is kmodel's sketch of a fix",
        ("replicaset-deleted-mid-sync-leaves-expectations-for-its-successor.json",)),
    Fix(
        REPLICASET_CONFIRM_EXPIRED_EXPECTATIONS, ("replicaset-within-expectations",),
        "a ReplicaSet's expectations expire 5 minutes after they were set (ExpectationsTimeout), observed or not, "
        "and its controller then trusts its pod cache: a cache whose watch lags longer than that (a connection "
        "held for minutes) lacks the pod the controller created, and the controller creates another",
        "a sync whose expectations are satisfied only because they expired reads the namespace's pods with a "
        "consistent LIST (resourceVersion \"\", from etcd) and claims and manages from that list instead of the "
        "cache; the expectations it sets also wait for the ADDED events of the set's listed pods the cache has not "
        "seen yet (each would otherwise count as one of its own creations observed)",
        "kmodel/controllers/replicaset.py (ReplicaSetController.sync)",
        "none: kubernetes/kubernetes#129795 (open) reports this route (SatisfiedExpectations returns true for "
        "expired expectations without looking at whether they were fulfilled); the timeout itself is deliberate "
        "(pkg/controller/controller_utils.go: it wakes a controller whose watch dropped an event). This is "
        "kmodel's sketch of a fix",
        ("replicaset-creates-twice-after-its-expectations-expire-behind-a-stalled-watch.json",
         "replicaset-creates-twice-when-a-late-added-event-satisfies-the-expectations-a-consistent-list-set.json")),
    Fix(
        TAINTEVICTION_EVICT_ONLY_THE_SCHEDULED_POD, ("eviction-timing",),
        "taint eviction keys its scheduled evictions by the pod's namespace and name, and addConditionAndDeletePod "
        "GETs and deletes the pod by name with no UID precondition: a StatefulSet pod evicted from a NoExecute "
        "node and made again under its name (unbound, or on another node) before taint eviction's informer saw "
        "the old one go is marked DisruptionTarget and deleted in its stead",
        "the eviction remembers the uid of the pod it was scheduled for: a GET answering another pod of the name "
        "ends it (nothing to evict), and the delete carries that uid as a precondition",
        "kmodel/controllers/tainteviction.py (TaintEvictionController._evict)",
        "none found for taint eviction (pkg/controller/tainteviction/taint_eviction.go, addConditionAndDeletePod); "
        "kubernetes/kubernetes#64923 (closed) reports the same name-only race of the Eviction API, and "
        "kubernetes-sigs/karpenter#998 (merged) added a UID precondition to its evictions for StatefulSet pods "
        "made again under their names. This is kmodel's sketch of a fix",
        ("taint-eviction-deletes-a-statefulset-pod-made-again-under-the-evicted-ones-name.json",)),
    Fix(
        REPLICASET_EXPECT_TIMED_OUT_CREATIONS, ("replicaset-within-expectations",),
        "a pod create answered 504 Timeout may have been stored (the outcome is unknown), but manageReplicas counts "
        "it as skipped and lowers the ReplicaSet's expectations by one; the retry finds them satisfied and a cache "
        "without the stored pod, whose ADDED event is still to come, and creates a second one",
        "a create answered 504 stays expected (its ADDED, if it was stored, observes it), and while the set waits "
        "on such a creation its syncs come back to it just after the expectations would expire, so a create that "
        "was never stored is made then (the sync still fails on the timeout, as upstream's)",
        "kmodel/controllers/replicaset.py (ReplicaSetController._create and sync)",
        "none: kubernetes/kubernetes#86140 made a timeout fail manageReplicas like any error, because #49915, "
        "which kept the expectation of a timed-out create, never came back to the key when the pod had not been "
        "made (#67662). This is kmodel's sketch of a fix, which keeps both",
        ("replicaset-creates-twice-after-a-create-answered-504-that-was-stored.json",)),
    Fix(
        GARBAGECOLLECTOR_FORGET_REPLACED_OWNER, ("dependents-collected",),
        "an owner deleted and re-created under its name while the garbage collector's watch was down is seen "
        "after the relist as one update to a new uid: the graph adds a node for the new uid and keeps the old "
        "one, observed, so the old owner's dependents are never queued and keep naming a deleted owner until "
        "kube-controller-manager restarts",
        "an update whose object has another uid than the one it replaces is taken as the deletion of the old "
        "object (its node goes, its identity is known absent, its dependents are queued) and the addition of "
        "the new one",
        "kmodel/controllers/garbagecollector.py (GarbageCollector._on_update)",
        "none found: upstream's graph builder (processGraphChanges in graph_builder.go) looks an updated object "
        "up by its new uid only. This is kmodel's sketch of a fix",
        ("statefulset-deleted-and-re-created-while-the-controller-manager-is-cut-off-leaves-db-0.json",)),
    Fix(
        ENDPOINTSLICE_COMPARE_PLACEHOLDER_OWNERS, ("converges-endpointslices",),
        "a Service with no endpoint deleted and made again under its name keeps no slice: the EndpointSlice "
        "controller's placeholderSliceCompare ignores owner references, so the old Service's empty slice passes "
        "for the new one's and is kept, and once the garbage collector deletes it nothing makes another",
        "an existing placeholder slice is kept only when its owner references name this very Service (their "
        "UIDs match); otherwise it is deleted and a placeholder owned by the new Service is created",
        "kmodel/controllers/endpointslice_logic.py (_is_placeholder_of)",
        "upstream's own fix: the placeholderSliceCompare change in kubernetes/kubernetes#141593 (for #141592; "
        "merged for 1.38, not backported: the cherry-picks #141666, #141667 and #141668 were closed)",
        ("service-deleted-and-re-created-at-once-keeps-no-placeholder-slice.json",)),
    Fix(
        ENDPOINTSLICE_SYNC_WHEN_CACHE_CATCHES_UP, ("converges-endpointslices",),
        "while the EndpointSlice informer lags behind the controller's own writes, every sync of the Service fails "
        "(\"EndpointSlice informer cache is out of date\") and backs off, up to 1,000 s; when the cache catches up, "
        "the event of the controller's own write queues nothing, so the Service's slices miss its pods' changes "
        "until the next retry, or, once 16 syncs have failed and the key is dropped, the next other event",
        "a slice event for a Service whose last sync failed on the stale cache queues the Service (one second "
        "later, as upstream's slice events), its own writes included",
        "kmodel/controllers/endpointslice.py (EndpointSliceController._sync_if_caught_up)",
        "none: kubernetes/kubernetes#99345, which added the stale-cache check, chose to give its error no special "
        "treatment (it counts toward maxRetries and backs off like any other). This is kmodel's sketch of a fix",
        ("endpointslice-waits-out-its-back-off-after-its-informer-caught-up.json",)),
    Fix(
        STATEFULSET_HEALTHY_MEANS_AVAILABLE, ("converges-statefulsets",),
        "an OrderedReady StatefulSet with minReadySeconds scaled down while a condemned pod is Ready but not yet "
        "available keeps that pod: isHealthy asks Running and Ready only, so the pod is not the first unhealthy one "
        "and the scale-down waits for it to be available; a sync brings the set back after minReadySeconds only "
        "while availableReplicas differs from replicas, which the pod, not yet counted available, leaves equal, and "
        "the re-check updatePod asked for when the pod turned ready is dropped when an earlier one already waits: "
        "nothing syncs the set again until the informers' resync",
        "a pod is healthy only once it is available for minReadySeconds (and not being deleted), so a condemned pod "
        "not yet available is the first unhealthy pod and is deleted at once, and a rolling update waits for each "
        "replica to be available",
        "kmodel/controllers/statefulset_logic.py (plan: its isHealthy)",
        "kubernetes/kubernetes#130909 (merged for 1.34, superseding #123975), fixing #123918: upstream's own fix",
        ("statefulset-scaled-down-keeps-a-pod-ready-but-not-yet-available.json",
         "statefulset-scaled-down-keeps-a-pod-ready-but-not-yet-available-found-by-the-checker.json")),
    Fix(
        STATEFULSET_RECHECK_WHEN_AVAILABLE, ("converges-statefulsets",),
        "an OrderedReady StatefulSet with minReadySeconds scaled down while a replica is Ready but not yet "
        "available (re-created after its pod was deleted) keeps its condemned pod: the sync stops at the replica "
        "until it is available, and brings the set back after minReadySeconds only while availableReplicas "
        "differs from replicas, which the condemned pod, available and counted, leaves equal; the re-check "
        "updatePod asked for when the replica turned ready is dropped when an earlier one already waits: nothing "
        "syncs the set again until the informers' resync",
        "a sync that stops at a replica Running and Ready but not yet available looks at the set again one "
        "second after that replica becomes available, whatever availableReplicas says",
        "kmodel/controllers/statefulset.py (StatefulSetController._after_status)",
        "none: #130909 (1.34) changes which pod is healthy, not the replicas' own wait or the re-check; "
        "#112871 (closed unmerged) proposed re-checking after the time left rather than minReadySeconds. This is "
        "kmodel's sketch of a fix, the wait OpenKruise's Advanced StatefulSet asks for (the time left until the "
        "replica it stopped at is available)",
        ("statefulset-scaled-down-while-a-replica-is-not-yet-available.json",
         "statefulset-scaled-down-while-a-replica-is-not-yet-available-found-by-the-checker.json")),
)

NAMES: tuple[str, ...] = tuple(f.name for f in FIXES)


def fix(name: str) -> Fix:
    for f in FIXES:
        if f.name == name:
            return f
    raise ValueError(f"unknown fix {name!r}; fixes: {', '.join(NAMES)}")


#: the name that stands for every fix (`--fix all`, `ClusterConfig(fixes="all")`)
ALL = "all"
#: before a name, leaves that fix out whatever else names it (`--no-fix NAME`): "all" and "!NAME" is every fix
#: but one, the model on which that fix's bug is looked for
EXCEPT = "!"


def check_fixes(names: str | Iterable[str]) -> tuple[str, ...]:
    """The fixes named, each once, in the registry's order; ValueError (one line) for an unknown name.

    `names` is a name, a comma-separated list of names, or an iterable of either; "all" is every fix, and a
    name after "!" is left out."""
    given = [names] if isinstance(names, str) else list(names)
    parts = [part.strip() for name in given for part in name.split(",") if part.strip()]
    wanted = [p for p in parts if not p.startswith(EXCEPT)]
    left_out = [p[len(EXCEPT):].strip() for p in parts if p.startswith(EXCEPT)]
    for name in wanted + left_out:
        if name != ALL:
            fix(name)
    return tuple(n for n in NAMES if (ALL in wanted or n in wanted) and n not in left_out)
