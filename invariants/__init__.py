"""kmodel's invariants, one function per invariant, grouped by area; importing this package registers them all.

    network.py     unique-pod-ips, pod-ip-in-node-cidr, node-cidrs-disjoint, api-single-contract,
                   cluster-ips-reserved
    storage.py     occ-no-lost-update, resource-version-monotonic, store-keys-canonical
    watch.py       watch-ordered, watch-unique, watch-reliable, watch-atomic, informer-no-time-travel,
                   restart-no-time-travel, watch-delivers-after-start
    scheduling.py  no-overcommit, host-ports-unique, binding-immutable
    contract.py    admission-enforced, rbac-enforced
    lifecycle.py   eviction-timing, grace-only-for-running-pods
    leader.py      leader-acts-within-lease, leader-elected-after-loss
    liveness.py    converges-replicas, converges-endpoints, converges-node-status,
                   no-ip-leak, no-sandbox-leak, no-cidr-leak, namespaces-terminate, settles
    endpointslices.py  converges-endpointslices, converges-proxy-rules
    traffic.py     service-reachability
    requests.py    refused-request-changes-nothing, api-status-codes, deleted-stays-deleted,
                   finalizers-hold-deletion
    workloads.py   replicaset-within-expectations, rollout-within-surge, endpoints-list-real-pods,
                   dependents-collected
    statefulset.py statefulset-one-pod-per-identity, statefulset-ordered-ready, converges-statefulsets
    jobs.py        job-pods-counted-once, job-finalizer-after-counting, job-complete-has-its-completions,
                   job-indexes-counted-once, job-completed-indexes-kept, finished-jobs-release-pods
    crd.py         custom-objects-valid, custom-objects-scoped, crd-objects-removed
    namespaces.py  namespace-content-removed

See registry.py for the contract every invariant follows, and inputs.py for what a safety invariant declares
it reads (so that the checker skips it after a step that changed none of that).
"""

from kmodel.invariants import (  # noqa: F401
    contract, crd, endpointslices, jobs, leader, lifecycle, liveness, namespaces, network, patches, requests,
    scheduling, statefulset, storage, traffic, watch, workloads,
)
from kmodel.invariants.registry import LIVENESS, REGISTRY, SAFETY, Invariant, invariant, registered, violations

__all__ = ["LIVENESS", "REGISTRY", "SAFETY", "Invariant", "invariant", "registered", "violations"]
