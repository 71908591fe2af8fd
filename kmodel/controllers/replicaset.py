"""The ReplicaSet controller (pkg/controller/replicaset/replica_set.go) as a sans-IO component.

Theory of operation
-------------------
Endpoint "controller/replicaset", service account replicaset-controller. Informers on replicasets and pods; the
work queue holds ReplicaSet keys ("namespace/name"). The handlers are upstream's:

* a ReplicaSet added/updated/deleted → its key (a deletion also forgets its expectations);
* a pod added → if it has a controller ref to a ReplicaSet we know, `creation_observed` for that set and its
  key; an orphan → the keys of every set whose (non-empty) selector matches it. A pod that arrives already
  being deleted counts as a deletion;
* a pod updated → its controller's key (and the old controller's when the ref changed; the matching sets'
  for an orphan whose labels or ref changed; a second look after minReadySeconds + 1 s when it just became
  ready); being deleted counts as a deletion;
* a pod deleted → `deletion_observed` for its controller and the controller's key.

`sync(key)` is syncReplicaSet, level-driven, reading the caches:

1. the set gone from the cache: forget its expectations, done;
2. `needs_sync` = the expectations are satisfied (every create and delete of the last manageReplicas has
   been seen by the pod informer, or 5 minutes passed) — this is what keeps a stale cache from making the
   controller create twice;
3. claim the active pods of the namespace (controller_ref.py: adopt matching orphans after a live GET of
   the set, release owned pods that no longer match);
4. if `needs_sync` and the set is not being deleted, manageReplicas: too few pods → expect the creations
   and create pods from the template (generateName "<rs>-", controller ref with blockOwnerDeletion) in slow
   start batches 1, 2, 4, …, each batch's requests at once, stopping after the first batch with an error;
   the creations never made are un-expected. Too many → pick victims by `get_pods_to_delete` (ranked with
   the pods of the sets sharing our controller), expect their deletions, delete them at once. Both capped
   at 500 per sync. Events: SuccessfulCreate "Created pod: <name>", FailedCreate "Error creating: <err>",
   SuccessfulDelete "Deleted pod: <name>", FailedDelete "Error deleting: <err>";
5. write the status (`calculate_status`) if it changed, from the pods as they were at step 3 (as upstream),
   retrying once after a fresh GET when the update fails (statusUpdateRetries = 1); a manageReplicas error
   fails the sync (rate-limited requeue) after the status is written; look again after minReadySeconds
   when pods are ready but not yet available.

Expectations live in memory (`self.expectations`, an immutable value reassigned on every change) and are
lost on a crash, as upstream's.

The `edge-triggered` variant (kmodel.variants; the constructor's `variant`, from `ClusterConfig.variant`)
changes one thing: how many active pods manageReplicas believes a set has (`desired_diff` in
replicaset_logic.py picks). Kubernetes re-reads the pods the set owns at every sync (step 3). The variant
instead keeps `self.counts`, a running count per set moved by the changes it is told about: +1 when one of
its creates is answered 201, -1 when a pod event shows an active pod of the set stop being active or go away
(`count_delta`), and never looks at the pods to decide. The count lives in memory like the expectations, so
a restarted process counts from zero while the pods it made before are still there; a create whose answer
is lost (dropped, or the process crashed first) made a pod nobody counted. Everything else (claims,
expectations, which pods to delete, the status) stays level-driven, so the status shows the drift.
"""

from __future__ import annotations

from typing import Any, Hashable, Optional, Sequence

from kmodel.apiserver.bootstrap_policy import APPS, events_rule, rule
from kmodel.component.registry import controller
from kmodel.apiserver.selectors import SelectorError, label_selector_from_object
from kmodel.client import NAMESPACE_INDEX, OWNER_UID_INDEX, index_by_namespace, index_by_owner_uid
from kmodel.client.indexer import DeletedFinalStateUnknown, meta_namespace_key
from kmodel.component import Out
from kmodel.objects import ObjectMeta, Pod, ReplicaSet
from kmodel.variants import DEFAULT, EDGE_TRIGGERED
from kmodel.objects.fastevolve import evolve
from kmodel.fixes import (
    REPLICASET_CONFIRM_EXPIRED_EXPECTATIONS, REPLICASET_EXPECT_TIMED_OUT_CREATIONS, REPLICASET_MANAGE_ONLY_CURRENT,
)

from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches
from .controller_ref import claim, controller_of, issue_claims, new_controller_ref, owners_selecting, resolve_controller_ref
from .expectations import Expectations
from .pod_state import filter_active_pods, is_pod_ready
from .replicaset_logic import (
    BURST_REPLICAS, SLOW_START_INITIAL_BATCH_SIZE, calculate_status, count_delta, desired_diff, get_pods_to_delete,
)

NAME = "controller/replicaset"
STATUS_UPDATE_RETRIES = 1
NAMESPACE_TERMINATING = "because it is being terminated"


def _message(response: Any) -> str:
    return getattr(response.body, "message", str(response.body))


def pod_from_template(rs: ReplicaSet) -> Pod:
    """controller.GetPodFromTemplate with the set's controller ref (generateName "<rs>-")."""
    t = rs.spec.template
    meta = ObjectMeta(generate_name=f"{rs.metadata.name}-", namespace=rs.metadata.namespace,
                      labels=t.metadata.labels, annotations=t.metadata.annotations,
                      finalizers=t.metadata.finalizers,
                      owner_references=(new_controller_ref(rs, "apps/v1", "ReplicaSet"),))
    return Pod(metadata=meta, spec=t.spec)


def _replicas(rs: ReplicaSet) -> int:
    return 1 if rs.spec.replicas is None else rs.spec.replicas


class ReplicaSetController(Controller):
    """See the module docstring."""

    service_account = "replicaset-controller"
    #: what invariants may read of it (kmodel.invariants.records): the views its creates were decided on
    RECORDS = Controller.RECORDS | {"create_views"}

    def __init__(self, endpoints: Sequence[str], *, name: str = NAME, switches: Switches = DEFAULT_SWITCHES,
                 burst_replicas: int = BURST_REPLICAS,
                 variant: str = DEFAULT, manage_only_current: bool = False,
                 confirm_expired_expectations: bool = False, expect_timed_out_creations: bool = False) -> None:
        self.burst_replicas = burst_replicas
        #: the replicaset-expect-timed-out-creations fix: a create answered 504 (stored or not, nobody knows)
        #: stays expected, and the set's syncs come back once the expectations would expire (see `_create`)
        self.expect_timed_out_creations = expect_timed_out_creations
        #: the replicaset-confirm-expired-expectations fix: a sync whose expectations are satisfied only because
        #: they expired counts the set's pods from a consistent LIST, not from its cache (see `sync`)
        self.confirm_expired_expectations = confirm_expired_expectations
        #: the replicaset-manage-only-current fix: a sync whose set was deleted (or replaced by a set of its name)
        #: while its claims were out manages nothing (see `sync`)
        self.manage_only_current = manage_only_current
        # the one place that reads the `edge-triggered` variant (see the module docstring)
        self.edge_triggered = variant == EDGE_TRIGGERED
        #: (namespace/name of the ReplicaSet, the resourceVersion of the ReplicaSet its sync decided on) for every
        #: pod create sent, in order: read by the replicaset-within-expectations invariant, which judges a create
        #: against the replicas asked for since that version
        self.create_views: list[tuple[str, int]] = []
        super().__init__(name, endpoints, switches)

    def _init_memory(self) -> None:
        self.expectations = Expectations()
        #: the edge-triggered variant's running count of active pods per set key (empty otherwise)
        self.counts: dict[str, int] = {}
        super()._init_memory()

    def setup(self) -> None:
        self.rs_informer = self.informer(
            "replicasets", on_add=self._add_rs, on_update=self._update_rs, on_delete=self._delete_rs,
            indexers={NAMESPACE_INDEX: index_by_namespace, OWNER_UID_INDEX: index_by_owner_uid})
        on_update, on_delete = self._update_pod, self._delete_pod
        if self.edge_triggered:
            on_update, on_delete = self._counting(on_update, on_delete)
        self.pod_informer = self.informer(
            "pods", on_add=self._add_pod, on_update=on_update, on_delete=on_delete,
            indexers={NAMESPACE_INDEX: index_by_namespace})

    # -- handlers ----------------------------------------------------------------------------------------

    def _add_rs(self, now: int, rs: ReplicaSet, out: Out) -> None:
        self.queue.add(meta_namespace_key(rs))

    def _update_rs(self, now: int, old: ReplicaSet, cur: ReplicaSet, out: Out) -> None:
        if cur.metadata.uid != old.metadata.uid:
            self._delete_rs(now, old, out)
        self.queue.add(meta_namespace_key(cur))

    def _delete_rs(self, now: int, obj: Any, out: Out) -> None:
        rs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        key = meta_namespace_key(rs)
        self.expectations = self.expectations.delete(key)
        self.counts.pop(key, None)
        self.queue.add(key)

    def _resolve(self, namespace: str, ref: Any) -> Optional[ReplicaSet]:
        return resolve_controller_ref(self.rs_informer, namespace, ref, "ReplicaSet")

    def _pod_replica_sets(self, pod: Pod) -> list[ReplicaSet]:
        """GetPodReplicaSets."""
        return owners_selecting(self.rs_informer, pod)

    def _add_pod(self, now: int, pod: Pod, out: Out) -> None:
        if pod.metadata.deletion_timestamp is not None:
            self._delete_pod(now, pod, out)
            return
        ref = controller_of(pod)
        if ref is not None:
            rs = self._resolve(pod.metadata.namespace, ref)
            if rs is None:
                return
            key = meta_namespace_key(rs)
            self.expectations = self.expectations.creation_observed(key)
            self.queue.add(key)
            return
        for rs in self._pod_replica_sets(pod):
            self.queue.add(meta_namespace_key(rs))

    def _update_pod(self, now: int, old: Pod, cur: Pod, out: Out) -> None:
        if cur.metadata.resource_version == old.metadata.resource_version:
            return  # a relist's replay of the same version
        label_changed = cur.metadata.labels != old.metadata.labels
        if cur.metadata.deletion_timestamp is not None:
            self._delete_pod(now, cur, out)
            if label_changed:
                self._delete_pod(now, old, out)
            return
        cur_ref, old_ref = controller_of(cur), controller_of(old)
        ref_changed = cur_ref != old_ref
        if ref_changed and old_ref is not None:
            rs = self._resolve(old.metadata.namespace, old_ref)
            if rs is not None:
                self.queue.add(meta_namespace_key(rs))
        if cur_ref is not None:
            rs = self._resolve(cur.metadata.namespace, cur_ref)
            if rs is None:
                return
            key = meta_namespace_key(rs)
            self.queue.add(key)
            if not is_pod_ready(old) and is_pod_ready(cur) and rs.spec.min_ready_seconds > 0:
                self.queue.add_after(now, out, key, rs.spec.min_ready_seconds * 1000 + 1000)
            return
        if label_changed or ref_changed:
            for rs in self._pod_replica_sets(cur):
                self.queue.add(meta_namespace_key(rs))

    def _delete_pod(self, now: int, obj: Any, out: Out) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        ref = controller_of(pod)
        if ref is None:
            return
        rs = self._resolve(pod.metadata.namespace, ref)
        if rs is None:
            return
        key = meta_namespace_key(rs)
        self.expectations = self.expectations.deletion_observed(key, meta_namespace_key(pod))
        self.queue.add(key)

    # -- the edge-triggered variant's count -----------------------------------------------------------------

    def _counting(self, on_update: Any, on_delete: Any) -> tuple:
        """The pod handlers that can report a pod going away, each first moving the running count."""
        def updated(now: int, old: Pod, cur: Pod, out: Out) -> None:
            self._count(old, cur)
            on_update(now, old, cur, out)

        def deleted(now: int, obj: Any, out: Out) -> None:
            self._count(obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj, None)
            on_delete(now, obj, out)

        return updated, deleted

    def _counted_key(self, pod: Optional[Pod]) -> Optional[str]:
        if pod is None:
            return None
        ref = controller_of(pod)
        rs = None if ref is None else self._resolve(pod.metadata.namespace, ref)
        return None if rs is None else meta_namespace_key(rs)

    def _count(self, old: Optional[Pod], new: Optional[Pod]) -> None:
        delta = count_delta(old, new)
        key = self._counted_key(old) if delta else None
        if key is not None:
            self.counts[key] = self.counts.get(key, 0) + delta

    # -- the sync ----------------------------------------------------------------------------------------

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        namespace, _, name = str(key).partition("/")
        rs = self.rs_informer.get(namespace, name)
        if rs is None:
            self.expectations = self.expectations.delete(key)
            return
        needs_sync = self.expectations.satisfied(key, now)
        if self.expect_timed_out_creations and self.expectations.waits_on_timed_out(key, now):
            # nothing may ever observe a create that was not stored: come back when the expectations expire
            sync.requeue_after(self.expectations.expires_in(key, now))
        try:
            selector = label_selector_from_object(rs.spec.selector)
        except SelectorError:
            return  # upstream logs the bad selector and gives up on the key
        if self.confirm_expired_expectations and self.expectations.expired_unfulfilled(key, now):
            # upstream trusts its cache once the expectations expire (SatisfiedExpectations, after
            # ExpectationsTimeout), though the pods they waited for may be missing from it only because its
            # watch lags: the fix reads the namespace's pods from etcd instead (a LIST with resourceVersion "")
            def listed(t: int, response: Any, o: Out) -> Optional[bool]:
                if not response.ok:
                    return None  # fails the sync: tried again with the rate limiter's back-off
                active = filter_active_pods(response.body.items)
                self._claim_and_manage(key, rs, selector, active, needs_sync, sync, t, o,
                                       unseen=self._unseen_creations(rs, active))
                return True

            sync.request(now, out, "list", "pods", namespace=namespace, on_done=listed)
            return
        active = filter_active_pods(self.pod_informer.by_index(NAMESPACE_INDEX, namespace))
        self._claim_and_manage(key, rs, selector, active, needs_sync, sync, now, out)

    def _unseen_creations(self, rs: ReplicaSet, listed: list) -> int:
        """How many of the set's own pods a consistent LIST found that the pod cache has not seen yet: each one's
        ADDED event is still to come, and will be counted as a creation observed (expectations count creations,
        not which pods they were)."""
        uid = rs.metadata.uid
        unseen = 0
        for pod in listed:
            ref = controller_of(pod)
            if ref is None or ref.uid != uid:
                continue
            cached = self.pod_informer.get(pod.metadata.namespace, pod.metadata.name)
            if cached is None or cached.metadata.uid != pod.metadata.uid:
                unseen += 1
        return unseen

    def _claim_and_manage(self, key: Hashable, rs: ReplicaSet, selector: Any, active: list, needs_sync: bool,
                          sync: Sync, now: int, out: Out, unseen: int = 0) -> None:
        """Claim the active pods (adopt and release), then manageReplicas when `needs_sync`, then the status.
        `unseen`: the replicaset-confirm-expired-expectations fix's count of listed pods whose ADDED events are
        still to come; the expectations this sync sets wait for those too, or each late ADDED would count as one
        of this sync's creations observed, and a sync before the new pods' own events would trust a cache that
        lacks them."""
        claims = claim(rs, selector, active)

        def claimed(t: int, o: Out, pods: list, error: Optional[str]) -> None:
            if error is not None:
                sync.fail()
                return
            if self.manage_only_current and not self._still_current(rs):
                # upstream goes on: its delete handler has cleared the key's expectations and queued the key,
                # and manageReplicas sets them again for a set no new pod can name (addPod resolves the
                # controllerRef by uid), so the successor of the same name waits on them
                return
            if needs_sync and rs.metadata.deletion_timestamp is None:
                self._manage(key, rs, pods, sync, t, o,
                             lambda t2, o2, err: self._write_status(key, rs, pods, err, sync, t2, o2), unseen)
            else:
                self._write_status(key, rs, pods, None, sync, t, o)

        issue_claims(sync, now, out, owner_resource="replicasets", owner=rs, dependent_resource="pods",
                     dependent_kind="Pod", claims=claims,
                     controller_ref=new_controller_ref(rs, "apps/v1", "ReplicaSet"), then=claimed)

    def _still_current(self, rs: ReplicaSet) -> bool:
        """Whether the informer still holds `rs` itself (the same uid) under its name."""
        now = self.rs_informer.get(rs.metadata.namespace, rs.metadata.name)
        return now is not None and now.metadata.uid == rs.metadata.uid

    # manageReplicas --------------------------------------------------------------------------------------

    def _manage(self, key: str, rs: ReplicaSet, pods: list, sync: Sync, now: int, out: Out, then: Any,
                unseen: int = 0) -> None:
        """manageReplicas; `unseen` ADDED events still to come are expected besides (see `_claim_and_manage`)."""
        d = desired_diff(len(pods), self.counts.get(key, 0), _replicas(rs), edge_triggered=self.edge_triggered,
                         burst_replicas=self.burst_replicas)
        if d.create:
            self._create(key, rs, d.create, sync, now, out, then, unseen)
        elif d.delete:
            self._delete(key, rs, pods, d.delete, sync, now, out, then, unseen)
        else:
            self._expect_unseen(key, unseen, now)
            then(now, out, None)

    def _expect_unseen(self, key: str, unseen: int, now: int) -> None:
        """A sync that creates and deletes nothing still waits for the `unseen` ADDED events to come."""
        if unseen:
            self.expectations = self.expectations.expect_creations(key, unseen, now)

    def _create(self, key: str, rs: ReplicaSet, count: int, sync: Sync, now: int, out: Out, then: Any,
                unseen: int = 0) -> None:
        self.expectations = self.expectations.expect_creations(key, count + unseen, now)
        state = {"successes": 0, "remaining": count, "error": None, "timed_out": 0}

        def run_batch(t: int, o: Out, size: int) -> None:
            batch = {"left": size, "errors": 0}

            def created(t2: int, response: Any, o2: Out) -> Optional[bool]:
                handled: Optional[bool] = True
                if response.ok:
                    if self.edge_triggered:
                        self.counts[key] = self.counts.get(key, 0) + 1  # the change its own create reports
                    self.event(t2, o2, rs, "Normal", "SuccessfulCreate", f"Created pod: {response.body.metadata.name}")
                else:
                    msg = _message(response)
                    if not (response.code == 403 and NAMESPACE_TERMINATING in msg):
                        self.event(t2, o2, rs, "Warning", "FailedCreate", f"Error creating: {msg}")
                        batch["errors"] += 1
                        if response.code == 504:
                            state["timed_out"] += 1
                        if state["error"] is None:
                            state["error"] = msg
                        handled = None  # fails the sync: manageReplicas returns the error
                batch["left"] -= 1
                if batch["left"] == 0:
                    batch_done(t2, o2, size, batch["errors"])
                return handled

            template = pod_from_template(rs)
            view = (key, int(rs.metadata.resource_version or 0))
            for _ in range(size):
                self.create_views.append(view)
                sync.create(t, o, "pods", template, on_done=created)

        def batch_done(t: int, o: Out, size: int, errors: int) -> None:
            state["successes"] += size - errors
            state["remaining"] -= size
            nxt = min(2 * size, state["remaining"])
            if errors == 0 and nxt > 0:
                run_batch(t, o, nxt)
                return
            skipped = count - state["successes"]
            if self.expect_timed_out_creations and state["timed_out"]:
                # upstream un-expects every create that returned an error, a timed-out one too, though its pod
                # may have been stored and its ADDED is still to come: a retry before it would create twice
                skipped -= state["timed_out"]
                self.expectations = self.expectations.mark_timed_out(key)
            if skipped > 0:
                self.expectations = self.expectations.lower(key, skipped, 0)
            then(t, o, state["error"])

        run_batch(now, out, min(count, SLOW_START_INITIAL_BATCH_SIZE))

    def _related_pods(self, rs: ReplicaSet) -> list[Pod]:
        """getIndirectlyRelatedPods: the pods of every set sharing our controller (or just ours)."""
        ref = controller_of(rs)
        if ref is None:
            sets = [rs]
        else:
            sets = [r for r in self.rs_informer.by_index(OWNER_UID_INDEX, ref.uid)
                    if (c := controller_of(r)) is not None and c.uid == ref.uid]
        seen: set[str] = set()
        related = []
        pods_in_ns = self.pod_informer.by_index(NAMESPACE_INDEX, rs.metadata.namespace)
        for r in sets:
            try:
                sel = label_selector_from_object(r.spec.selector)
            except SelectorError:
                continue
            for p in pods_in_ns:
                if sel.matches(p.metadata.labels) and p.metadata.uid not in seen:
                    seen.add(p.metadata.uid)
                    related.append(p)
        return related

    def _delete(self, key: str, rs: ReplicaSet, pods: list, count: int, sync: Sync, now: int, out: Out,
                then: Any, unseen: int = 0) -> None:
        victims = get_pods_to_delete(pods, self._related_pods(rs), count, now)
        if not victims:  # only an edge-triggered count can ask to delete pods the set does not have
            self._expect_unseen(key, unseen, now)
            then(now, out, None)
            return
        self.expectations = self.expectations.expect_deletions(key, [meta_namespace_key(p) for p in victims], now)
        if unseen:
            self.expectations = self.expectations.raise_(key, unseen, 0)
        state = {"left": len(victims), "error": None}
        for pod in victims:
            def deleted(t: int, response: Any, o: Out, pod: Pod = pod) -> Optional[bool]:
                handled: Optional[bool] = True
                if response.ok:
                    self.event(t, o, rs, "Normal", "SuccessfulDelete", f"Deleted pod: {pod.metadata.name}")
                else:
                    self.expectations = self.expectations.deletion_observed(key, meta_namespace_key(pod))
                    if response.code != 404:
                        msg = _message(response)
                        self.event(t, o, rs, "Warning", "FailedDelete", f"Error deleting: {msg}")
                        if state["error"] is None:
                            state["error"] = f"unable to delete pods: {msg}"
                        handled = None
                state["left"] -= 1
                if state["left"] == 0:
                    then(t, o, state["error"])
                return handled
            sync.delete(now, out, "pods", pod.metadata.name, namespace=rs.metadata.namespace, on_done=deleted)

    # status ------------------------------------------------------------------------------------------------

    def _write_status(self, key: str, rs: ReplicaSet, pods: list, error: Optional[str], sync: Sync, now: int,
                      out: Out) -> None:
        status = calculate_status(rs, pods, error, now)
        s = rs.status
        if (s.replicas == status.replicas and s.fully_labeled_replicas == status.fully_labeled_replicas
                and s.ready_replicas == status.ready_replicas and s.available_replicas == status.available_replicas
                and rs.metadata.generation == s.observed_generation and s.conditions == status.conditions):
            self._after_status(key, rs, error, sync)
            return

        def attempt(t: int, o: Out, current: ReplicaSet, tries: int) -> None:
            def updated(t2: int, response: Any, o2: Out) -> Optional[bool]:
                if response.ok:
                    self._after_status(key, response.body, error, sync)
                    return True
                if tries >= STATUS_UPDATE_RETRIES:
                    return None

                def fetched(t3: int, r3: Any, o3: Out) -> Optional[bool]:
                    if not r3.ok:
                        return None
                    attempt(t3, o3, r3.body, tries + 1)
                    return True
                sync.request(t2, o2, "get", "replicasets", namespace=rs.metadata.namespace, name=rs.metadata.name,
                             on_done=fetched)
                return True

            sync.update_status(t, o, "replicasets", evolve(current, status=status), on_done=updated)

        attempt(now, out, rs, 0)

    def _after_status(self, key: str, rs: ReplicaSet, error: Optional[str], sync: Sync) -> None:
        if error is not None:
            sync.fail()
            return
        r = _replicas(rs)
        if rs.spec.min_ready_seconds > 0 and rs.status.ready_replicas == r and rs.status.available_replicas != r:
            sync.requeue_after(rs.spec.min_ready_seconds * 1000)


@controller("replicaset", service_account="replicaset-controller", default=True, rbac_rules=(
    rule(("get", "list", "watch", "update"), ("replicasets",), APPS),
    rule(("update",), ("replicasets/status", "replicasets/finalizers"), APPS),
    rule(("list", "watch", "patch", "create", "delete"), ("pods",)),
    events_rule()))
def make(ctx: Any) -> list:
    """The cluster factory: one ReplicaSet controller talking to the API servers in order."""
    fixes = ctx.config.fixes
    return [ReplicaSetController(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches,
                                 variant=ctx.config.variant,
                                 manage_only_current=REPLICASET_MANAGE_ONLY_CURRENT in fixes,
                                 confirm_expired_expectations=REPLICASET_CONFIRM_EXPIRED_EXPECTATIONS in fixes,
                                 expect_timed_out_creations=REPLICASET_EXPECT_TIMED_OUT_CREATIONS in fixes)]
