"""The Deployment controller (pkg/controller/deployment) as a sans-IO component.

Theory of operation
-------------------
Endpoint "controller/deployment", service account deployment-controller. Informers on deployments, replicasets
and pods; the work queue holds Deployment keys. Handlers (deployment_controller.go): any Deployment event →
its key; a ReplicaSet added/updated/deleted → its controlling Deployment's key (an orphan: every Deployment
whose non-empty selector matches it); a pod deleted → its Deployment's key, only for Recreate and only once
the Deployment has no pods left.

`sync(key)` is syncDeployment. Every decision comes from deployment_logic.py and rolling_update.py; this
module reads the caches, orders the writes and turns answers into the next step:

1. a selector selecting everything: Warning SelectingAll, observe the generation, stop;
2. claim the namespace's ReplicaSets (controller_ref.py: adopt matching orphans after a live GET, release
   non-matching ones);
3. being deleted → status only; paused → the Progressing condition says so (checkPausedConditions);
4. paused, or a scaling event (an active set's desired-replicas annotation differs from spec.replicas) →
   `scale` (proportional scaling) without creating a new set, then the status;
5. otherwise roll out by the strategy. RollingUpdate (rolloutRolling): find or create the new ReplicaSet
   (<deployment>-<pod-template-hash>, controller ref, revision annotations: getNewReplicaSet, including
   the hash-collision path that bumps status.collisionCount), scale it up within maxSurge, else scale the
   old ones down within maxUnavailable, clean up old sets beyond revisionHistoryLimit once complete, then
   syncRolloutStatus (counts, Available, Progressing with its deadline, ReplicaFailure). Recreate
   (rolloutRecreate): scale every old set to 0, wait until no old pod runs, then create/scale the new one.

Writes within one sync go one after another, each after the previous answer, and the first error ends the
sync (it is re-queued with the rate limiter), as upstream returns on the first error. Like upstream, the
Deployment object used for status writes is the cached one, so a sync that writes its status twice gets a
409 on the second write and simply runs again.

Events (on the Deployment): ScalingReplicaSet "Scaled up replica set <rs> from <a> to <b>" / "Scaled down
…", FailedCreate for a failed ReplicaSet create ("Failed to create new replica set …"), SelectingAll.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Optional, Sequence

from kmodel.apiserver.bootstrap_policy import APPS, READ, WRITE, events_rule, rule
from kmodel.component.registry import controller
from kmodel.apiserver.selectors import SelectorError, label_selector_from_object
from kmodel.client import NAMESPACE_INDEX, OWNER_UID_INDEX, index_by_namespace, index_by_owner_uid
from kmodel.client.indexer import DeletedFinalStateUnknown, meta_namespace_key
from kmodel.component import Out
from kmodel.objects import Deployment, DeploymentCondition, Pod, ReplicaSet
from kmodel.objects.fastevolve import evolve
from kmodel.fixes import DEPLOYMENT_REFRESH_ANNOTATIONS, DEPLOYMENT_RETRY_PAST_MAX_RETRIES

from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches
from .controller_ref import claim, controller_of, issue_claims, new_controller_ref, owners_selecting, resolve_controller_ref
from .deployment_logic import (
    REVISION_ANNOTATION, _set_deployment_condition, build_new_replica_set, calculate_status,
    deployment_complete, equal_ignore_hash, filter_active_replica_sets, find_new_replica_set,
    find_old_replica_sets, get_actual_replica_count, next_revision, replicas_of, revision,
    set_deployment_revision, set_new_replica_set_annotations,
)
from .rolling_update import Scale, is_scaling_event, rollout_rolling, scale, scale_replica_set_and_record_event

NAME = "controller/deployment"
MAX_INT32 = 2**31 - 1

# condition types and reasons (deployment/util/deployment_util.go)
PROGRESSING = "Progressing"
REPLICA_FAILURE = "ReplicaFailure"
NEW_RS_REASON = "NewReplicaSetCreated"
FOUND_NEW_RS_REASON = "FoundNewReplicaSet"
NEW_RS_AVAILABLE_REASON = "NewReplicaSetAvailable"
RS_UPDATED_REASON = "ReplicaSetUpdated"
TIMED_OUT_REASON = "ProgressDeadlineExceeded"
PAUSED_REASON = "DeploymentPaused"
RESUMED_REASON = "DeploymentResumed"
FAILED_RS_CREATE_REASON = "ReplicaSetCreateError"

Next = Callable[[int, Out], None]


def _message(response: Any) -> str:
    return getattr(response.body, "message", str(response.body))


def has_progress_deadline(d: Deployment) -> bool:
    p = d.spec.progress_deadline_seconds
    return p is not None and p != MAX_INT32


def get_condition(status: Any, type_: str) -> Optional[DeploymentCondition]:
    return next((c for c in status.conditions if c.type == type_), None)


def new_condition(type_: str, status: str, reason: str, message: str, now: int) -> DeploymentCondition:
    return DeploymentCondition(type=type_, status=status, last_update_time=now, last_transition_time=now,
                               reason=reason, message=message)


def set_condition(status: Any, cond: DeploymentCondition) -> Any:
    """SetDeploymentCondition on a status value."""
    return evolve(status, conditions=_set_deployment_condition(tuple(status.conditions), cond))


def remove_condition(status: Any, type_: str) -> Any:
    return evolve(status, conditions=tuple(c for c in status.conditions if c.type != type_))


def deployment_progressing(d: Deployment, new: Any) -> bool:
    """DeploymentProgressing: more updated/ready/available replicas, or fewer old ones, than before."""
    old = d.status
    return (new.updated_replicas > old.updated_replicas
            or (new.replicas - new.updated_replicas) < (old.replicas - old.updated_replicas)
            or new.ready_replicas > old.ready_replicas or new.available_replicas > old.available_replicas)


def deployment_timed_out(d: Deployment, new: Any, now: int) -> bool:
    """DeploymentTimedOut: the Progressing condition was last updated more than the deadline ago."""
    if not has_progress_deadline(d):
        return False
    cond = get_condition(new, PROGRESSING)
    if cond is None or cond.reason == NEW_RS_AVAILABLE_REASON:
        return False
    if cond.reason == TIMED_OUT_REASON:
        return True
    return (cond.last_update_time or 0) + d.spec.progress_deadline_seconds * 1000 < now


def replica_failures(all_rss: Sequence[Optional[ReplicaSet]], new_rs: Optional[ReplicaSet]) -> list:
    """getReplicaFailures: the new set's ReplicaFailure conditions first, else the others'."""
    def of(rs: ReplicaSet) -> list:
        return [DeploymentCondition(type=c.type, status=c.status, last_update_time=c.last_transition_time,
                                    last_transition_time=c.last_transition_time, reason=c.reason, message=c.message)
                for c in rs.status.conditions if c.type == REPLICA_FAILURE]
    if new_rs is not None and (found := of(new_rs)):
        return found
    return [c for rs in all_rss if rs is not None for c in of(rs)]


class _Run:
    """One syncDeployment: the Deployment as this sync has changed it in memory, and its steps."""

    def __init__(self, ctrl: "DeploymentController", key: str, d: Deployment, sync: Sync) -> None:
        self.ctrl, self.key, self.d, self.sync = ctrl, key, d, sync
        self.rs_list: list[ReplicaSet] = []
        # the resourceVersion the ReplicaSet cache had reached when this sync read it: what it decides on
        self.view_rv = ctrl.rs_informer.last_rv

    def _record_write(self, rs: ReplicaSet) -> None:
        """Note which ReplicaSet cache this sync's write of `rs` was decided on (`rs_write_views`)."""
        meta = rs.metadata
        self.ctrl.rs_write_views.append((f"{meta.namespace}/{meta.name}", self.view_rv))

    # -- small async helpers -----------------------------------------------------------------------------

    def fail(self, t: int, o: Out) -> None:
        self.sync.fail()

    def update_status(self, t: int, o: Out, then: Next) -> None:
        """UpdateStatus(d): then() on success; the first error ends the sync."""
        def done(t2: int, response: Any, o2: Out) -> Optional[bool]:
            if response.ok:
                then(t2, o2)
            return None
        self.sync.update_status(t, o, "deployments", self.d, on_done=done)

    def write_scales(self, t: int, o: Out, writes: Sequence[Scale], then: Next) -> None:
        """scaleReplicaSet for each write, in order; an event per size change; stop at the first error."""
        if not writes:
            then(t, o)
            return
        w, rest = writes[0], writes[1:]

        def done(t2: int, response: Any, o2: Out) -> Optional[bool]:
            if not response.ok:
                return None
            if w.scaled:
                self.ctrl.event(t2, o2, self.d, "Normal", "ScalingReplicaSet",
                                f"Scaled {w.operation} replica set {w.rs.metadata.name} from {w.old} to {w.new}")
            self.write_scales(t2, o2, rest, then)
            return True
        self._record_write(w.rs)
        self.sync.update(t, o, "replicasets", w.rs, on_done=done)

    # -- syncDeployment ----------------------------------------------------------------------------------

    def start(self, now: int, out: Out) -> None:
        d = self.d
        sel = d.spec.selector
        if sel is not None and not sel.match_labels and not sel.match_expressions:
            self.ctrl.event(now, out, d, "Warning", "SelectingAll",
                            "This deployment is selecting all pods. A non-empty selector is required.")
            if d.status.observed_generation < d.metadata.generation:
                self.d = evolve(d, status=evolve(d.status, observed_generation=d.metadata.generation))
                self.update_status(now, out, lambda t, o: None)
            return
        try:
            selector = label_selector_from_object(sel)
        except SelectorError:
            return
        rss = self.ctrl.rs_informer.by_index(NAMESPACE_INDEX, d.metadata.namespace)
        issue_claims(self.sync, now, out, owner_resource="deployments", owner=d, dependent_resource="replicasets",
                     dependent_kind="ReplicaSet", claims=claim(d, selector, rss),
                     controller_ref=new_controller_ref(d, "apps/v1", "Deployment"), then=self.claimed)

    def claimed(self, t: int, o: Out, rs_list: list, error: Optional[str]) -> None:
        if error is not None:
            self.sync.fail()
            return
        self.rs_list = rs_list
        d = self.d
        if d.metadata.deletion_timestamp is not None:
            self.status_only(t, o)
            return
        self.check_paused_conditions(t, o, self.after_paused_check)

    def after_paused_check(self, t: int, o: Out) -> None:
        d = self.d
        if d.spec.paused:
            self.sync_scale(t, o)
            return

        def have(t2: int, o2: Out, new_rs: Optional[ReplicaSet], old_rss: list) -> None:
            # isScalingEvent runs getAllReplicaSetsAndSyncRevision(create=false) with its writes, as upstream
            if is_scaling_event(self.d, new_rs, old_rss):
                self.sync_scale(t2, o2)
            elif self.d.spec.strategy.type == "Recreate":
                self.rollout_recreate(t2, o2)
            elif self.d.spec.strategy.type == "RollingUpdate":
                self.rollout_rolling(t2, o2)
        self.get_all(t, o, False, have)

    def check_paused_conditions(self, t: int, o: Out, then: Next) -> None:
        d = self.d
        if not has_progress_deadline(d):
            then(t, o)
            return
        cond = get_condition(d.status, PROGRESSING)
        if cond is not None and cond.reason == TIMED_OUT_REASON:
            then(t, o)
            return
        paused_exists = cond is not None and cond.reason == PAUSED_REASON
        if d.spec.paused and not paused_exists:
            c = new_condition(PROGRESSING, "Unknown", PAUSED_REASON, "Deployment is paused", t)
        elif not d.spec.paused and paused_exists:
            c = new_condition(PROGRESSING, "Unknown", RESUMED_REASON, "Deployment is resumed", t)
        else:
            then(t, o)
            return
        self.d = evolve(d, status=set_condition(d.status, c))
        self.update_status(t, o, then)

    # getAllReplicaSetsAndSyncRevision / getNewReplicaSet ----------------------------------------------------

    def get_all(self, t: int, o: Out, create: bool,
                then: Callable[[int, Out, Optional[ReplicaSet], list], None]) -> None:
        d = self.d
        _, all_old = find_old_replica_sets(d, self.rs_list)
        existing = find_new_replica_set(d, self.rs_list)
        new_revision = next_revision(all_old)
        if existing is not None:
            rs_copy, ann_updated = set_new_replica_set_annotations(d, existing, new_revision, exists=True)
            if ann_updated or rs_copy.spec.min_ready_seconds != d.spec.min_ready_seconds:
                rs_copy = evolve(rs_copy, spec=evolve(rs_copy.spec,
                                                                  min_ready_seconds=d.spec.min_ready_seconds))

                def updated(t2: int, response: Any, o2: Out) -> Optional[bool]:
                    if not response.ok:
                        return None
                    then(t2, o2, response.body, all_old)
                    return True
                self.sync.update(t, o, "replicasets", rs_copy, on_done=updated)
                return
            before = self.d
            self.d = set_deployment_revision(self.d, rs_copy.metadata.annotations.get(REVISION_ANNOTATION, ""))
            needs_update = self.d is not before
            if has_progress_deadline(d) and get_condition(d.status, PROGRESSING) is None:
                c = new_condition(PROGRESSING, "True", FOUND_NEW_RS_REASON,
                                  f'Found new replica set "{rs_copy.metadata.name}"', t)
                self.d = evolve(self.d, status=set_condition(self.d.status, c))
                needs_update = True
            if needs_update:
                self.update_status(t, o, lambda t2, o2: then(t2, o2, rs_copy, all_old))
            else:
                then(t, o, rs_copy, all_old)
            return
        if not create:
            then(t, o, None, all_old)
            return
        new_rs = build_new_replica_set(d, filter_active_replica_sets(all_old), all_old)
        count = replicas_of(new_rs)

        def created(t2: int, response: Any, o2: Out) -> Optional[bool]:
            if response.ok:
                self.after_new_rs(t2, o2, response.body, False, count, new_revision, all_old, then)
                return True
            if response.code == 409 and getattr(response.body, "reason", "") == "AlreadyExists":
                rs = self.ctrl.rs_informer.get(new_rs.metadata.namespace, new_rs.metadata.name)
                if rs is None:
                    return None
                ref = controller_of(rs)
                if ref is not None and ref.uid == d.metadata.uid and equal_ignore_hash(d.spec.template,
                                                                                        rs.spec.template):
                    self.after_new_rs(t2, o2, rs, True, count, new_revision, all_old, then)
                    return True
                # a hash collision: bump collisionCount so the next sync hashes differently
                cc = (self.d.status.collision_count or 0) + 1
                self.d = evolve(self.d, status=evolve(self.d.status, collision_count=cc))
                self.update_status(t2, o2, lambda t3, o3: None)
                return None
            msg = _message(response)
            if response.code == 403 and "because it is being terminated" in msg:
                return None
            text = f'Failed to create new replica set "{new_rs.metadata.name}": {msg}'
            if has_progress_deadline(self.d):
                c = new_condition(PROGRESSING, "False", FAILED_RS_CREATE_REASON, text, t2)
                self.d = evolve(self.d, status=set_condition(self.d.status, c))
                self.update_status(t2, o2, lambda t3, o3: None)
            self.ctrl.event(t2, o2, self.d, "Warning", FAILED_RS_CREATE_REASON, text)
            return None

        self._record_write(new_rs)
        self.sync.create(t, o, "replicasets", new_rs, on_done=created)

    def after_new_rs(self, t: int, o: Out, rs: ReplicaSet, already_exists: bool, count: int, new_revision: str,
                     all_old: list, then: Callable) -> None:
        if not already_exists and count > 0:
            self.ctrl.event(t, o, self.d, "Normal", "ScalingReplicaSet",
                            f"Scaled up replica set {rs.metadata.name} from 0 to {count}")
        before = self.d
        self.d = set_deployment_revision(self.d, new_revision)
        needs_update = self.d is not before
        if not already_exists and has_progress_deadline(self.d):
            c = new_condition(PROGRESSING, "True", NEW_RS_REASON, f'Created new replica set "{rs.metadata.name}"', t)
            self.d = evolve(self.d, status=set_condition(self.d.status, c))
            needs_update = True
        if needs_update:
            self.update_status(t, o, lambda t2, o2: then(t2, o2, rs, all_old))
        else:
            then(t, o, rs, all_old)

    # rollouts ----------------------------------------------------------------------------------------------

    def rollout_rolling(self, t: int, o: Out) -> None:
        def have(t2: int, o2: Out, new_rs: Optional[ReplicaSet], old_rss: list) -> None:
            all_rss = list(old_rss) + [new_rs]
            try:
                result = rollout_rolling(self.d, new_rs, old_rss)
            except ValueError:
                # cleanupUnhealthyReplicas' "invalid request to scale down" (a stale status shows more
                # available than wanted): upstream returns it as the sync's error and requeues the key
                self.sync.fail()
                return

            def written(t3: int, o3: Out) -> None:
                if result.scaled:
                    self.sync_rollout_status(t3, o3, all_rss, new_rs)
                elif deployment_complete(self.d, self.d.status):
                    self.cleanup(t3, o3, old_rss, lambda t4, o4: self.sync_rollout_status(t4, o4, all_rss, new_rs))
                else:
                    self.sync_rollout_status(t3, o3, all_rss, new_rs)
            self.write_scales(t2, o2, result.writes, written)
        self.get_all(t, o, True, have)

    def rollout_recreate(self, t: int, o: Out) -> None:
        def have(t2: int, o2: Out, new_rs: Optional[ReplicaSet], old_rss: list) -> None:
            all_rss = list(old_rss) + [new_rs]
            downs = [w for rs in filter_active_replica_sets(old_rss)
                     if (w := scale_replica_set_and_record_event(rs, 0, self.d)) is not None]
            if downs:
                self.write_scales(t2, o2, downs, lambda t3, o3: self.sync_rollout_status(t3, o3, all_rss, new_rs))
                return
            if self.old_pods_running(new_rs, old_rss):
                self.sync_rollout_status(t2, o2, all_rss, new_rs)
                return
            if new_rs is None:
                self.get_all(t2, o2, True, scale_up)
            else:
                scale_up(t2, o2, new_rs, old_rss)

        def scale_up(t3: int, o3: Out, new_rs: Optional[ReplicaSet], old_rss: list) -> None:
            all_rss = list(old_rss) + [new_rs]
            w = scale_replica_set_and_record_event(new_rs, replicas_of(self.d), self.d)

            def then(t4: int, o4: Out) -> None:
                if deployment_complete(self.d, self.d.status):
                    self.cleanup(t4, o4, old_rss, lambda t5, o5: self.sync_rollout_status(t5, o5, all_rss, new_rs))
                else:
                    self.sync_rollout_status(t4, o4, all_rss, new_rs)
            self.write_scales(t3, o3, [w] if w is not None else [], then)
        self.get_all(t, o, False, have)

    def old_pods_running(self, new_rs: Optional[ReplicaSet], old_rss: list) -> bool:
        """oldPodsRunning: old sets report replicas, or a non-terminal pod of an old set exists."""
        if get_actual_replica_count(old_rss) > 0:
            return True
        for rs_uid, pods in self.ctrl.pod_map(self.d, self.rs_list).items():
            if new_rs is not None and rs_uid == new_rs.metadata.uid:
                continue
            if any(p.status.phase not in ("Failed", "Succeeded") for p in pods):
                return True
        return False

    def sync_scale(self, t: int, o: Out) -> None:
        """sync(): scale without creating a new set (paused or a scaling event), clean up if paused."""
        def have(t2: int, o2: Out, new_rs: Optional[ReplicaSet], old_rss: list) -> None:
            all_rss = list(old_rss) + [new_rs]

            def scaled(t3: int, o3: Out) -> None:
                if self.d.spec.paused:
                    self.cleanup(t3, o3, old_rss, lambda t4, o4: self.sync_deployment_status(t4, o4, all_rss, new_rs))
                else:
                    self.sync_deployment_status(t3, o3, all_rss, new_rs)
            writes = scale(self.d, new_rs, old_rss, refresh_annotations=self.ctrl.refresh_annotations)
            self.write_scales(t2, o2, writes, scaled)
        self.get_all(t, o, False, have)

    def status_only(self, t: int, o: Out) -> None:
        self.get_all(t, o, False, lambda t2, o2, new_rs, old_rss:
                     self.sync_deployment_status(t2, o2, list(old_rss) + [new_rs], new_rs))

    def cleanup(self, t: int, o: Out, old_rss: list, then: Next) -> None:
        """cleanupDeployment: delete the oldest fully scaled-down sets beyond revisionHistoryLimit."""
        limit = self.d.spec.revision_history_limit
        if limit is None:
            then(t, o)
            return
        alive = [rs for rs in old_rss if rs is not None and rs.metadata.deletion_timestamp is None]
        diff = len(alive) - limit
        if diff <= 0:
            then(t, o)
            return

        def rev_key(rs: ReplicaSet) -> tuple:
            try:
                r = revision(rs)
            except ValueError:
                r = 0
            ts = rs.metadata.creation_timestamp
            return (r, ts is not None, ts or 0, rs.metadata.name)
        victims = [rs for rs in sorted(alive, key=rev_key)[:diff]
                   if rs.status.replicas == 0 and replicas_of(rs) == 0
                   and rs.metadata.generation <= rs.status.observed_generation]

        def delete_next(t2: int, o2: Out, rest: list) -> None:
            if not rest:
                then(t2, o2)
                return

            def done(t3: int, response: Any, o3: Out) -> Optional[bool]:
                if not response.ok and response.code != 404:
                    return None
                delete_next(t3, o3, rest[1:])
                return True
            self.sync.delete(t2, o2, "replicasets", rest[0].metadata.name, namespace=rest[0].metadata.namespace,
                             on_done=done)
        delete_next(t, o, victims)

    # status ------------------------------------------------------------------------------------------------

    def sync_deployment_status(self, t: int, o: Out, all_rss: list, new_rs: Optional[ReplicaSet]) -> None:
        status = calculate_status(all_rss, new_rs, self.d, t)
        if status == self.d.status:
            return
        self.d = evolve(self.d, status=status)
        self.update_status(t, o, lambda t2, o2: None)

    def sync_rollout_status(self, t: int, o: Out, all_rss: list, new_rs: Optional[ReplicaSet]) -> None:
        d = self.d
        status = calculate_status(all_rss, new_rs, d, t)
        if not has_progress_deadline(d):
            status = remove_condition(status, PROGRESSING)
        current = get_condition(d.status, PROGRESSING)
        complete = (status.replicas == status.updated_replicas and current is not None
                    and current.reason == NEW_RS_AVAILABLE_REASON)
        if has_progress_deadline(d) and not complete:
            name = f'ReplicaSet "{new_rs.metadata.name}"' if new_rs is not None else f'Deployment "{d.metadata.name}"'
            if deployment_complete(d, status):
                c = new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE_REASON, f"{name} has successfully progressed.", t)
                status = set_condition(status, c)
            elif deployment_progressing(d, status):
                c = new_condition(PROGRESSING, "True", RS_UPDATED_REASON, f"{name} is progressing.", t)
                if current is not None:
                    if current.status == "True":
                        c = evolve(c, last_transition_time=current.last_transition_time)
                    status = remove_condition(status, PROGRESSING)
                status = set_condition(status, c)
            elif deployment_timed_out(d, status, t):
                c = new_condition(PROGRESSING, "False", TIMED_OUT_REASON, f"{name} has timed out progressing.", t)
                status = set_condition(status, c)
        failures = replica_failures(all_rss, new_rs)
        if failures:
            status = set_condition(status, failures[0])
        else:
            status = remove_condition(status, REPLICA_FAILURE)
        if status == d.status:
            self.requeue_stuck(t, status)
            return
        self.d = evolve(d, status=status)
        self.update_status(t, o, lambda t2, o2: None)

    def requeue_stuck(self, now: int, status: Any) -> None:
        """requeueStuckDeployment: look again when the progress deadline would pass."""
        d = self.d
        current = get_condition(d.status, PROGRESSING)
        if not has_progress_deadline(d) or current is None:
            return
        if deployment_complete(d, status) or current.reason == TIMED_OUT_REASON:
            return
        after = (current.last_update_time or 0) + d.spec.progress_deadline_seconds * 1000 - now
        if after < 1000:
            self.sync.fail()  # enqueueRateLimited
        else:
            self.sync.requeue_after(after + 1000)


class DeploymentController(Controller):
    """See the module docstring."""

    service_account = "deployment-controller"
    #: what invariants may read of it (kmodel.invariants.records): the views its ReplicaSet writes were decided on
    RECORDS = Controller.RECORDS | {"rs_write_views"}

    max_retries = 15  # maxRetries in deployment_controller.go

    def __init__(self, endpoints: Sequence[str], *, name: str = NAME, switches: Switches = DEFAULT_SWITCHES,
                 refresh_annotations: bool = False,
                 retry_past_max_retries: bool = False) -> None:
        #: the deployment-refresh-annotations fix (kmodel.fixes): scale() refreshes stale replica annotations
        self.refresh_annotations = refresh_annotations
        if retry_past_max_retries:  # the deployment-retry-past-max-retries fix (kmodel.fixes)
            self.retry_for_good()
        #: (namespace/name, the ReplicaSet cache's resourceVersion its sync decided on) for every ReplicaSet
        #: create or scale sent, in order: read by the rollout-within-surge invariant, which judges a write
        #: only against what its sync could have seen
        self.rs_write_views: list[tuple[str, int]] = []
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        self.d_informer = self.informer("deployments", indexers={NAMESPACE_INDEX: index_by_namespace})
        self.rs_informer = self.informer(
            "replicasets", on_add=self._add_rs, on_update=self._update_rs, on_delete=self._delete_rs,
            indexers={NAMESPACE_INDEX: index_by_namespace, OWNER_UID_INDEX: index_by_owner_uid})
        self.pod_informer = self.informer(
            "pods", on_add=lambda now, obj, out: None, on_update=lambda now, old, new, out: None,
            on_delete=self._delete_pod, indexers={OWNER_UID_INDEX: index_by_owner_uid})

    # -- handlers ----------------------------------------------------------------------------------------

    def _resolve(self, namespace: str, ref: Any) -> Optional[Deployment]:
        return resolve_controller_ref(self.d_informer, namespace, ref, "Deployment")

    def _deployments_for(self, rs: ReplicaSet) -> list[Deployment]:
        """GetDeploymentsForReplicaSet."""
        return owners_selecting(self.d_informer, rs)

    def _add_rs(self, now: int, rs: ReplicaSet, out: Out) -> None:
        if rs.metadata.deletion_timestamp is not None:
            self._delete_rs(now, rs, out)
            return
        ref = controller_of(rs)
        if ref is not None:
            d = self._resolve(rs.metadata.namespace, ref)
            if d is not None:
                self.queue.add(meta_namespace_key(d))
            return
        for d in self._deployments_for(rs):
            self.queue.add(meta_namespace_key(d))

    def _update_rs(self, now: int, old: ReplicaSet, cur: ReplicaSet, out: Out) -> None:
        if cur.metadata.resource_version == old.metadata.resource_version:
            return
        cur_ref, old_ref = controller_of(cur), controller_of(old)
        ref_changed = cur_ref != old_ref
        if ref_changed and old_ref is not None:
            d = self._resolve(old.metadata.namespace, old_ref)
            if d is not None:
                self.queue.add(meta_namespace_key(d))
        if cur_ref is not None:
            d = self._resolve(cur.metadata.namespace, cur_ref)
            if d is not None:
                self.queue.add(meta_namespace_key(d))
            return
        if cur.metadata.labels != old.metadata.labels or ref_changed:
            for d in self._deployments_for(cur):
                self.queue.add(meta_namespace_key(d))

    def _delete_rs(self, now: int, obj: Any, out: Out) -> None:
        rs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        ref = controller_of(rs)
        if ref is None:
            return
        d = self._resolve(rs.metadata.namespace, ref)
        if d is not None:
            self.queue.add(meta_namespace_key(d))

    def _delete_pod(self, now: int, obj: Any, out: Out) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        ref = controller_of(pod)
        if ref is None or ref.kind != "ReplicaSet":
            return
        rs = self.rs_informer.get(pod.metadata.namespace, ref.name)
        if rs is None or rs.metadata.uid != ref.uid:
            return
        d_ref = controller_of(rs)
        d = self._resolve(rs.metadata.namespace, d_ref) if d_ref is not None else None
        if d is None or d.spec.strategy.type != "Recreate":
            return
        rs_list = [r for r in self.rs_informer.by_index(OWNER_UID_INDEX, d.metadata.uid)
                   if (c := controller_of(r)) is not None and c.uid == d.metadata.uid]
        if not any(self.pod_map(d, rs_list).values()):
            self.queue.add(meta_namespace_key(d))

    def pod_map(self, d: Deployment, rs_list: Sequence[ReplicaSet]) -> dict[str, list[Pod]]:
        """getPodMapForDeployment: the pods matching the selector, by the uid of the listed set controlling them."""
        try:
            sel = label_selector_from_object(d.spec.selector)
        except SelectorError:
            return {}
        out: dict[str, list[Pod]] = {rs.metadata.uid: [] for rs in rs_list}
        for rs in rs_list:
            for p in self.pod_informer.by_index(OWNER_UID_INDEX, rs.metadata.uid):
                ref = controller_of(p)
                if ref is not None and ref.uid == rs.metadata.uid and sel.matches(p.metadata.labels):
                    out[rs.metadata.uid].append(p)
        return out

    # -- the sync ----------------------------------------------------------------------------------------

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        namespace, _, name = str(key).partition("/")
        d = self.d_informer.get(namespace, name)
        if d is None:
            return
        _Run(self, str(key), d, sync).start(now, out)


@controller("deployment", service_account="deployment-controller", default=True, rbac_rules=(
    rule(("get", "list", "watch", "update"), ("deployments",), APPS),
    rule(("update",), ("deployments/status", "deployments/finalizers"), APPS),
    rule(READ + WRITE, ("replicasets",), APPS),
    rule(("get", "list", "watch", "update"), ("pods",)),
    events_rule()))
def make(ctx: Any) -> list:
    """The cluster factory: one Deployment controller talking to the API servers in order."""
    fixes = ctx.config.fixes
    return [DeploymentController(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches,
                                 refresh_annotations=DEPLOYMENT_REFRESH_ANNOTATIONS in fixes,
                                 retry_past_max_retries=DEPLOYMENT_RETRY_PAST_MAX_RETRIES in fixes)]
