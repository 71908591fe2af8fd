"""The StatefulSet guarantees: one pod per identity, ordinals created in order, and a set that converges.

statefulset-one-pod-per-identity judges what the machines run: the API server's keys already make two live
pod objects of one name impossible, so what can break is a second incarnation of `<set>-<i>` running its
containers while the first one's still run. The invariant keeps, from the store's history, the uid and
identity of every pod a StatefulSet controlled (kept after the pod is gone: its containers may outlive it), and
looks at the running containers of every machine still in the cluster, again only when some runtime changed.

statefulset-ordered-ready reads the pod and StatefulSet changes of the last step from the store's history,
keeping a mirror of each set's pods in revision order and, per set, the latest revision at which its ordinals
0..k-1 were all Running, Ready and not being deleted at once (for every k). A create of ordinal N > 0 of an
OrderedReady set is judged against that: some revision at or before the create's must have had 0..N-1 healthy
together. (The controller decides from its cache, which may be behind the store, so "at the create's revision"
would blame it for a pod that stopped being ready after the cache saw it ready.)

statefulset-pods-at-their-revision reads the same changes and the ControllerRevisions: for each set it keeps
what each of its versions gave each ordinal (the partition, the strategy, the template, the current and
update revisions its status named) and, for each revision, the template its data saved. A pod the controller
creates is judged against every version of its set at or before the create (the controller decides from its
cache, which may be behind): one of them must have put the pod's revision at its ordinal (see the docstring),
and the pod's images must be those of the revision its label names.

converges-statefulsets is a liveness property, judged once the cluster has settled.
"""

from __future__ import annotations

from typing import Any, Iterator

from kmodel.invariants._history import PODS, condition, kept_ledger, name_of
from kmodel.invariants.liveness import _foreign_finalizers, _machines, _stranded
from kmodel.invariants.inputs import KUBELET_RUNTIMES, writes
from kmodel.invariants.registry import LIVENESS, SAFETY, invariant
from kmodel.invariants.scheduling import _node_runtimes
from kmodel.kubelet.runtime import POD_UID_LABEL
from kmodel.memo import identity_memo
from kmodel.objects import dump_struct
from kmodel.objects.frozendict import freeze

STATEFULSETS = "/registry/statefulsets/"
REVISIONS = "/registry/controllerrevisions/"
#: the pod label that names the ControllerRevision a StatefulSet pod was made from (apps.ControllerRevisionHashLabelKey)
REVISION_LABEL = "controller-revision-hash"


# The invariants' own reading of a StatefulSet and its pods, never the controller's helpers
# (kmodel.controllers.statefulset_logic), so a mistake there cannot move the oracle with it.

def _ordinal(pod: Any, set_name: str) -> int:
    """The ordinal of `<set>-<ordinal>` (the pod's identity in the set), or -1 for any other name."""
    name = pod.metadata.name
    suffix = name[len(set_name) + 1:]
    if not name.startswith(set_name + "-") or not suffix.isdigit() or not suffix.isascii():
        return -1
    return int(suffix)


def _healthy(pod: Any) -> bool:
    """Running, Ready (its Ready condition True) and not being deleted: what OrderedReady waits for."""
    if pod is None or pod.status.phase != "Running" or pod.metadata.deletion_timestamp is not None:
        return False
    ready = condition(pod, "Ready")
    return ready is not None and ready.status == "True"


def _replicas(sts: Any) -> int:
    """spec.replicas, 1 when unset (the API's default)."""
    return 1 if sts.spec.replicas is None else sts.spec.replicas


def _template_key(template: Any) -> Any:
    """A template as its frozen JSON, comparable with the template a revision's data saved."""
    return freeze(dump_struct(template))


_template_of_set = identity_memo(_template_key)


def _saved_template(data: Any) -> Any:
    """The template a StatefulSet revision saved: its data's spec.template without the `$patch` directive."""
    try:
        template = data["spec"]["template"]
        return freeze({k: v for k, v in template.items() if k != "$patch"})
    except (KeyError, TypeError, AttributeError):
        return None


def _images(spec: Any) -> list:
    return [c.get("image", "") for c in (spec or {}).get("containers", ())]


def _set_ref(pod: Any) -> Any:
    for ref in pod.metadata.owner_references:
        if ref.controller and ref.kind == "StatefulSet":
            return ref
    return None


class _Ledger:
    """Per run: the StatefulSet pods seen (uid -> "namespace/name"), each set's pods in revision order, and the
    healthy-prefix revisions (see the module docstring)."""

    def __init__(self) -> None:
        self.identity: dict[str, str] = {}  # pod uid -> "namespace/name", for every pod a StatefulSet controlled
        self.pods: dict[str, dict[int, Any]] = {}  # set uid -> {ordinal: pod}
        self.sets: dict[str, Any] = {}  # "namespace/name" -> the StatefulSet now
        self.prefix: dict[str, dict[int, int]] = {}  # set uid -> {k: latest revision with 0..k-1 all healthy}
        self.bad_order: list[str] = []
        # set uid -> {(RollingUpdate?, partition, template, updateRevision, currentRevision)} of its versions so far
        self.versions: dict[str, set] = {}
        self.last_version: dict[str, tuple] = {}  # set uid -> (spec, updateRevision, currentRevision) last recorded
        self.saved: dict[str, Any] = {}  # "namespace/name" of a ControllerRevision -> the template it saved
        self.bad_revision: list[str] = []

    def read(self, feed: Any, cluster: Any) -> None:
        for ch in feed.read(cluster.store):
            if ch.key.startswith(REVISIONS):
                if ch.value is not None:  # data is immutable: a revision's template outlives its object
                    self.saved[name_of(ch.key)] = _saved_template(ch.value.data)
                continue
            if ch.key.startswith(STATEFULSETS):
                if ch.value is None:
                    self.sets.pop(name_of(ch.key), None)
                else:
                    self.sets[name_of(ch.key)] = ch.value
                    self._record_version(ch.value)
                continue
            pod = ch.value if ch.value is not None else ch.prev
            ref = _set_ref(pod) if pod is not None else None
            if ref is None:
                continue
            ordinal = _ordinal(pod, ref.name)
            if ordinal < 0:
                continue
            mine = self.pods.setdefault(ref.uid, {})
            if ch.value is None:
                if ordinal in mine and mine[ordinal].metadata.uid == pod.metadata.uid:
                    del mine[ordinal]
            else:
                self.identity[pod.metadata.uid] = f"{pod.metadata.namespace}/{pod.metadata.name}"
                if ch.prev is None:
                    self._judge_create(ch.rev, pod, ref, ordinal)
                    self._judge_revision(ch.rev, pod, ref, ordinal)
                mine[ordinal] = pod
            self._record_prefix(ref.uid, ch.rev)

    def _record_prefix(self, set_uid: str, rev: int) -> None:
        mine = self.pods.get(set_uid, {})
        marks = self.prefix.setdefault(set_uid, {})
        k = 0
        while _healthy(mine.get(k)):
            k += 1
            marks[k] = rev

    def _judge_create(self, rev: int, pod: Any, ref: Any, ordinal: int) -> None:
        sts = self.sets.get(f"{pod.metadata.namespace}/{ref.name}")
        if ordinal == 0 or sts is None or sts.metadata.uid != ref.uid:
            return
        if sts.spec.pod_management_policy == "Parallel":
            return
        if ordinal not in self.prefix.get(ref.uid, {}):
            mine = self.pods.get(ref.uid, {})
            waiting = [f"{ref.name}-{i}" for i in range(ordinal) if not _healthy(mine.get(i))]
            self.bad_order.append(
                f"revision {rev}: the StatefulSet controller created {pod.metadata.namespace}/{pod.metadata.name} "
                f"of OrderedReady set {ref.name} although ordinals 0..{ordinal - 1} had never all been Running and "
                f"Ready at once (not now: {', '.join(waiting)})")


    def _record_version(self, sts: Any) -> None:
        seen = (sts.spec, sts.status.update_revision, sts.status.current_revision)
        last = self.last_version.get(sts.metadata.uid)
        if last is not None and last[0] is seen[0] and last[1:] == seen[1:]:
            return  # a status write that left the spec object and the revisions as they were: nothing new
        self.last_version[sts.metadata.uid] = seen
        strategy = sts.spec.update_strategy
        rolling = strategy.type == "RollingUpdate"
        ru = strategy.rolling_update
        partition = (ru.partition or 0) if rolling and ru is not None else 0
        self.versions.setdefault(sts.metadata.uid, set()).add(
            (rolling, partition, _template_of_set(sts.spec.template), sts.status.update_revision,
             sts.status.current_revision))

    def _allowed(self, namespace: str, revision: str, ordinal: int, version: tuple) -> bool:
        """What one version of the set allowed a pod of `ordinal` to be made from (newVersionedStatefulSetPod, with
        getStatefulSetRevisions' fallbacks): the current revision below a RollingUpdate partition, the update
        revision (the one its status named, or one saving its template) at or above it or for OnDelete; and
        the update revision below the partition too when no current revision is known yet (a new set) or the
        one the status names is not in the store (upstream falls back to the update revision)."""
        rolling, partition, template, update, current = version
        saved = self.saved.get(f"{namespace}/{revision}")
        is_update = revision == update or (saved is not None and saved == template)
        if not rolling or ordinal >= partition:
            return is_update
        if revision == current:
            return True
        return is_update and (not current or f"{namespace}/{current}" not in self.saved)

    def _judge_revision(self, rev: int, pod: Any, ref: Any, ordinal: int) -> None:
        versions = self.versions.get(ref.uid)
        revision = pod.metadata.labels.get(REVISION_LABEL)
        if not versions or revision is None:
            return
        ns = pod.metadata.namespace
        where = f"revision {rev}: the StatefulSet controller created {ns}/{pod.metadata.name} of set {ref.name}"
        if not any(self._allowed(ns, revision, ordinal, v) for v in versions):
            partitions = sorted({v[1] for v in versions if v[0]})
            currents = sorted({v[4] for v in versions if v[4]})
            self.bad_revision.append(
                f"{where} at revision {revision}, which no version of the set gave ordinal {ordinal} (partitions "
                f"{partitions}, current revisions {currents}): a pod below the partition is made from the current "
                f"revision, one at or above it from the update revision")
            return
        saved = self.saved.get(f"{ns}/{revision}")
        if saved is not None:
            made = [c.image for c in pod.spec.containers]
            if made != _images(saved.get("spec")):
                self.bad_revision.append(f"{where} labelled revision {revision} with images {made}, but that "
                                         f"revision saved {_images(saved.get('spec'))}")


def _ledger(cluster: Any, memo: dict) -> _Ledger:
    ledger, feed = kept_ledger(memo, (PODS, STATEFULSETS, REVISIONS), _Ledger)
    ledger.read(feed, cluster)
    return ledger


def _running_incarnations(cluster: Any, memo: dict, identity: dict[str, str]) -> dict[str, dict[str, str]]:
    """"namespace/name" -> {pod uid: node} of the StatefulSet pods whose containers run on some machine."""
    found: dict[str, dict[str, str]] = {}
    for node, kubelet in _node_runtimes(cluster, memo):
        for container in kubelet.runtime.running():
            uid = container.labels.get(POD_UID_LABEL, "")
            name = identity.get(uid)
            if name is not None:
                found.setdefault(name, {})[uid] = node
    return found


@invariant("statefulset-one-pod-per-identity", kind=SAFETY, principle="node lifecycle",
           reads=(writes(PODS, STATEFULSETS, REVISIONS), KUBELET_RUNTIMES,))
def statefulset_one_pod_per_identity(cluster: Any, memo: dict) -> Iterator[str]:
    """At most one pod per StatefulSet identity runs: never two incarnations of `<set>-<i>` with containers
    running at once on the machines still in the cluster (the API's unique names keep two live objects apart;
    the controller creates `<set>-<i>` again only once the old object is gone, which a kubelet confirms only
    after its containers stopped). A force delete (grace period 0) of a pod whose node is unreachable breaks
    this on purpose, as upstream warns ("Force Delete StatefulSet Pods"): the invariant reports it too."""
    ledger = _ledger(cluster, memo)
    generations = tuple(k.runtime.generation for _, k in _node_runtimes(cluster, memo))
    cached = memo.get("verdict")
    if cached is not None and cached[0] == (generations, len(ledger.identity)):
        yield from cached[1]
        return
    problems = []
    for name, incarnations in sorted(_running_incarnations(cluster, memo, ledger.identity).items()):
        if len(incarnations) > 1:
            where = ", ".join(f"uid {uid} on {node}" for uid, node in sorted(incarnations.items()))
            problems.append(f"two incarnations of StatefulSet pod {name} run containers at once ({where}): the old "
                            f"pod object was removed while its containers still ran (a force delete?)")
    memo["verdict"] = ((generations, len(ledger.identity)), problems)
    yield from problems


@invariant("statefulset-ordered-ready", kind=SAFETY, principle="level-driven reconciliation",
           reads=(writes(PODS, STATEFULSETS, REVISIONS),))
def statefulset_ordered_ready(cluster: Any, memo: dict) -> Iterator[str]:
    """With podManagementPolicy OrderedReady, the StatefulSet controller creates ordinal N > 0 only after
    ordinals 0..N-1 were all Running and Ready (and not being deleted) at once, at some revision at or before
    the create's."""
    yield from _ledger(cluster, memo).bad_order


@invariant("statefulset-pods-at-their-revision", kind=SAFETY, principle="level-driven reconciliation",
           reads=(writes(PODS, STATEFULSETS, REVISIONS),))
def statefulset_pods_at_their_revision(cluster: Any, memo: dict) -> Iterator[str]:
    """A pod the StatefulSet controller creates is made from the revision some version of its set, at or before
    the create's revision, gave its ordinal: below a RollingUpdate partition the current revision (the one
    status.currentRevision names; the update revision only while no current one is known or stored), at or
    above it (or with OnDelete) the update revision; and its images are those its revision saved."""
    yield from _ledger(cluster, memo).bad_revision


@invariant("converges-statefulsets", kind=LIVENESS, principle="level-driven reconciliation")
def converges_statefulsets(cluster: Any, memo: dict) -> Iterator[str]:
    """Each StatefulSet not being deleted has exactly spec.replicas pods, `<set>-0` .. `<set>-<replicas-1>`, all
    Running and Ready, except those no node has room for (Pending and unschedulable, and then no higher
    ordinal of an OrderedReady set), and a status whose replicas, readyReplicas and observedGeneration say so. A
    set one of whose names is held by a pod it does not control (released by a label edit, or another
    owner's) is not judged: upstream's controller then fails every sync with AlreadyExists, as the model's.

    Nor is an identity whose pod is stranded: being deleted on a machine gone from the cluster whose Node still
    exists (liveness.`_stranded`; an eviction of a lost node's pod). No kubelet confirms that pod stopped, so it
    stays Terminating, and the controller makes `<set>-<i>` again only once it is gone (at most one pod per
    identity): upstream's StatefulSet waits so too, until the Node is deleted or the pod force-deleted ("Force
    Delete StatefulSet Pods"). The later ordinals of an OrderedReady set wait on it, and the status is not
    judged (upstream's counts the stranded pod); a stranded pod past spec.replicas (scaled down) is not an extra
    one. A pod being deleted that a finalizer outside the model's controllers keeps (a user's) is held alike."""
    machines = set(_machines(cluster))
    nodes = {n.metadata.name for n in cluster.objects("nodes")}
    for sts in cluster.objects("statefulsets"):
        if sts.metadata.deletion_timestamp is not None:
            continue
        ns, name = sts.metadata.namespace, sts.metadata.name
        n = _replicas(sts)
        in_ns = cluster.objects("pods", ns)
        pods = {p.metadata.name: p for p in in_ns if (ref := _set_ref(p)) is not None and ref.uid == sts.metadata.uid}
        wanted = [f"{name}-{i}" for i in range(n)]
        taken = sorted(p.metadata.name for p in in_ns if p.metadata.name in wanted and p.metadata.name not in pods)
        if taken:
            continue  # a pod the set does not control holds one of its names: every create fails AlreadyExists
        stranded = [w for w in sorted(pods) if _held(pods[w], machines, nodes)]
        extra = sorted(w for w in set(pods) - set(wanted) if w not in stranded)
        if extra:
            yield f"StatefulSet {ns}/{name} wants {n} pods but also has {', '.join(extra)}"
        unplaced = [w for w in wanted if w in pods and _unschedulable(pods[w])]
        ordered = sts.spec.pod_management_policy != "Parallel"
        for i, w in enumerate(wanted):
            pod = pods.get(w)
            if pod is not None and (_unschedulable(pod) or w in stranded):
                if ordered:
                    break  # the later ordinals wait for this one, which has no room or is stranded
                continue
            if not _healthy(pod):
                state = "missing" if pod is None else f"{pod.status.phase or 'not created'}, not ready"
                yield f"StatefulSet {ns}/{name}: pod {w} is {state}"
                break
        else:
            if unplaced or stranded:
                continue  # upstream's status counts a stranded pod among its replicas
            s = sts.status
            if (s.replicas, s.ready_replicas, s.observed_generation) != (n, n, sts.metadata.generation):
                yield (f"StatefulSet {ns}/{name} runs {n} ready pods but its status says replicas {s.replicas}, "
                       f"readyReplicas {s.ready_replicas}, observedGeneration {s.observed_generation} (generation "
                       f"{sts.metadata.generation})")


def _held(pod: Any, machines: set, nodes: set) -> bool:
    """A pod being deleted that nothing in the model will remove: stranded on a lost machine, or kept by a
    finalizer no controller of the model removes."""
    return _stranded(pod, machines, nodes) or (pod.metadata.deletion_timestamp is not None
                                                and _foreign_finalizers(pod))


def _unschedulable(pod: Any) -> bool:
    if pod.spec.node_name:
        return False
    return any(c.type == "PodScheduled" and c.reason == "Unschedulable" for c in pod.status.conditions)
