"""kmodel.controllers: the controllers of kube-controller-manager.

This package starts with their pure decision logic, one module per decision, each a faithful port of the
upstream function it names (pkg/controller/...). Nothing here does I/O, reads a clock or keeps hidden
state: time comes in as logical milliseconds, state comes in as values and goes out as new values. The
sans-IO controller components (informers, work queues, API calls) are built on top and only apply these
decisions.

    pod_state           IsPodActive / IsPodReady / IsPodAvailable and the small pod facts controllers use
    expectations        ControllerExpectations (+ UID tracking), as an immutable value with a 5 min TTL
    replicaset_logic    manageReplicas' diff, slowStartBatch, the scale-down ranking, calculateStatus
    deployment_logic    fenceposts, template hash, new/old ReplicaSets, revisions, NewRSNewReplicas, status
    statefulset_logic   updateStatefulSet: which pods to create and delete (OrderedReady / Parallel), from which
                        revision, the status, truncateHistory
    history             ControllerRevisions (pkg/controller/history): hash, name, equality, order, ownership
    rolling_update      reconcileNewReplicaSet / reconcileOldReplicaSets / proportional scaling (scale())
    endpoints_logic     Service + pods -> Endpoints subsets (RepackSubsets order) and "update needed?"
    node_lifecycle_logic  tryUpdateNodeHealth (Ready -> Unknown) and the taints it implies
    taint_eviction_logic  getMinTolerationTime / processPodOnNode: when a pod on a tainted node is evicted
"""
