"""The checker's reach beside the unit tests': which branch outcomes of the model do the unit tests take that
`kmodel check` never does?

    python benchmarks/reach.py [--checker-args "--fix all --seed 1"] [--packages store,ipam]
                               [--worklist PATH] [--json PATH] [--top N] [--checker-report DIR]

It runs, from the code as it stands,

    (a) the unit tests of the model packages, in one process under coverage.py in branch mode:
            python -m coverage run --branch --source=kmodel.store,... -m pytest tests/store tests/apiserver ...
    (b) the checker with its own measurement:  kmodel check --reach <checker args>   (default --fix all --seed 1,
        at the dev budget)

and reads both with kmodel's own reach code (kmodel.checker.reach: the same packages, the same counting, only
code inside functions). A branch outcome is one way out of a line with several (the two sides of an `if`, a
loop entered or not). For each model package it prints the outcomes the unit tests take (those of any model
package's tests: a package without a tests/ folder of its own, such as cluster, is taken by the others'), how
many of those the checker takes, the share; the total; then the work list: each outcome the unit tests take
and the checker never does, as file:line -> target (exit: out of the function) and the line's text. The
terminal gets the first --top of each package; --worklist PATH gets it whole.

EXCLUSIONS (below) explains outcomes the checker cannot or need not take. They are counted apart, in their
own column and list, never dropped: the share is printed with them and without them. An exclusion whose line
no longer reads as recorded is looked for where the code moved (the one outcome of its file whose line reads
the recorded text, with its target the same distance away); one that is not found is reported stale and not
applied.

`--checker-report DIR` reads (b) from the report folder of an earlier `kmodel check --reach` run of the same
code instead of running it.

    python benchmarks/reach.py --compare-guided [--cpu-seconds S] [--checker-args "--fix all --seed 1"]
                               [--with-unit-tests] [--json PATH]

instead runs, in this process, the plain campaign and the guided one (`kmodel check --guided`,
kmodel.checker.guided) of the same options, each until it has spent S seconds of this process's CPU time
(default 60). The budget is CPU time, not a number of examples: a guided example costs more (it may start
from a corpus entry's actions, and some are traced by coverage.py), and that cost is what guidance has to pay
for. CPU time rather than wall-clock time because the machine may be shared. Each campaign records every
example's actions; afterwards, outside both budgets, every example is replayed under coverage.py, the same way
for both, and read with kmodel's reach code. It prints, for each: examples, steps, CPU seconds, the branch
outcomes of the model packages taken and per CPU-minute, and the sometimes properties reached; then how many
outcomes either took and how many only one of them did, and the ratio. With --with-unit-tests it also runs (a)
and says how many of the unit tests' outcomes each campaign takes; --json PATH gets each campaign's figures
and the outcomes it took.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kmodel.checker.reach import MODEL_PACKAGES, Outcome, Reach, coverage_of, model_sources, reach_of, where  # noqa: E402

DEFAULT_CHECKER_ARGS = "--fix all --seed 1"

# -- store, component, fixes, cluster, loop, clock, network, traffic ------------------------------------------
#: why an unknown fix is never looked up
UNKNOWN_FIX = ("the error for a fix name that does not exist, raised while the options are read (a usage error, "
               "exit 2): the campaign only ever names fixes that exist")

#: why the service IP allocator never sizes an IPv6 range
SERVICE_RANGE = ("sizes the bitmap of an IPv6 service CIDR (capped at 65536 addresses) when kube-apiserver builds "
                 "its allocator; the model runs one IPv4 family (docs/differences.md), so an IPv6 service range is "
                 "only ever checked at start (kmodel.checker.addressplan's refused plans), never allocated from")
#: why host-local never allocates a requested address
HOSTLOCAL_REQUESTED = ("a CNI ADD asking for a given address (CNI_ARGS IP= or the `ips` capability); containerd "
                       "with the bridge plugin, the runtime the model runs, never sends one (a meta-plugin such as "
                       "Multus does, from a pod's network annotation, which the model does not run)")
#: why the scheduler never scores a share of the nodes
HUNDRED_NODES = ("numFeasibleNodesToFind scores every node of a cluster under 100 nodes (minFeasibleNodesToFind); a "
                 "checked cluster has a few, so the percentage of nodes to score is never computed")
#: why the kubelet's NodeName admission check always passes
OWN_NODE = ("the kubelet admits only the pods bound to its own node (its watch selects spec.nodeName=<node>, and its "
            "static pods are its own), so the NodeName predicate always fits; upstream's admission runs it all the "
            "same")
#: why the search for feasible nodes never wraps around
START_INDEX = ("findNodesThatPassFilters starts where the last cycle stopped (nextStartNodeIndex) and wraps around the "
               "node list; under 100 nodes every cycle looks at every node (HUNDRED_NODES), so the index comes back to "
               "where it was, the first node, and the search never wraps")
#: why the scheduler never meets a cluster without nodes
NO_NODES = ("`no nodes available to schedule pods`: the checker keeps a node in its cluster (remove_node, lose_node "
            "and a node hung for good leave at least one, and no rule deletes a Node otherwise)")
#: why a node never holds too many pods
MAX_PODS = ("a node admits 110 pods (the kubelet's maxPods, its allocatable `pods`); a checked example runs a few "
            "dozen pods over all its nodes, so neither the scheduler nor the kubelet's admission meets `Too many pods`")
#: why a client's rate limit is never refused
FIXED_RATE_LIMITS = ("checks the qps and burst a rate limit is built from; the model's clients and work queues are "
                     "built from fixed limits (50, 20, 10 or 5 qps, each dividing 1000, bursts of 10 and more) and "
                     "the event spam filter's (one token per 300 s, a burst of 25), so none is refused")
#: why two scheduler values are never compared
TEST_EQUALITY = ("equality of two scheduler values (a Status, a Resource): the unit tests compare them; the model "
                 "only reads their fields")

#: why the reference store's own put is never called
REFERENCE_STORE = ("ReferenceStore answers every write through the general steps, to check the fast paths against "
                   "(tests/store/test_reference.py); a checked cluster runs the Store")
#: why the store's history is never iterated or compared whole
WHOLE_LOG = ("a CompactLog iterated or compared with another log is for tests and readers by hand; the model and the "
             "invariants read it in slices from a position (`stored`, `log[position:]`)")
#: why a write never finds the store without change trackers
TRACKERS = ("every checked cluster's API servers track the RBAC prefixes from their start (the authorizer's "
            "`store.track`), before any write: a store without trackers is a unit test's")
#: why a txn never puts through the reference steps
TXN_PUT = ("a put inside a txn of another shape than the API server's (one compare, one put, else nothing or a read: "
           "the fast path), or of a key already live in it: only an etcd client other than the API servers could "
           "send one, and the checker's may not write (api-single-contract takes every revision for an API write)")
#: why a watch from the compaction revision never misses a change compaction removed
COMPACTION_TOMBSTONE = ("with etcd's fix of etcd-io/etcd#18089 on (--fix all, the default here) compaction keeps the "
                        "tombstone at its revision, and a one-change revision's put there is kept anyway: a watch "
                        "from the compaction revision misses nothing")
#: why the loop's menu of faults is never read
FAULT_MENU = ("Loop.enabled_faults lists the parameterless faults for a driver of one's own (a test, a walk by hand); "
              "the checker builds each fault from what exists (kmodel/checker/fault_rules.py, machine.py)")
#: why the loop never meets a caller's mistake
LOOP_MISUSE = ("a caller's mistake the loop refuses (one string for a set of endpoints, an endpoint that does not "
               "exist, a crash of a component that models none); the checker names only endpoints that exist and "
               "crashes only components that support it")

#: why the loop never meets an event that is not enabled
NOT_ENABLED = ("an event stepped that is not enabled now (a delivery on a link with nothing deliverable, a timer not "
               "due yet): a caller's mistake, or a replayed trace that diverged; the checker steps what the loop "
               "lists (`enabled_events`) or builds from what exists")
#: why the network never meets a caller's mistake
NETWORK_MISUSE = ("a caller's mistake the network refuses (an endpoint added twice, a message to an unknown one, a "
                  "delivery or a read of a link with nothing on it, a drop of an empty link, a stream closed that is "
                  "not open or used between other endpoints); the loop asks before it acts (`why_not_enabled`) and "
                  "the components name only endpoints that exist")
#: why the in-cluster client never keeps a pod's address
VARIANT_ONLY = ("the hardcoded-pod-ip variant's client, which keeps the first pod address it reached and sends there "
                "for ever: `kmodel check --variant hardcoded-pod-ip` runs it; the faithful client, the one --fix all "
                "checks, resolves the Service for every request")
#: why the clock never moves back
CLOCK_MISUSE = ("time moved to something other than a whole number of milliseconds, or back: the loop advances only "
                "to a due time it computed, never before now")
# -- objects, apiserver ------------------------------------------------------------------------------------------
#: why fastevolve's fallbacks are never taken
FASTEVOLVE = ("fastevolve builds its fast evolve for any attrs class, with fallbacks for a class whose __init__ does "
              "more than store its fields (validators, converters, hooks, no slots) and a refusal of a field name the "
              "class lacks; every class the model evolves through it is a plain slotted API kind, so only the unit "
              "tests' own classes take them")
#: why YAML files are never read or written
YAML_FILES = ("load_yaml and dump_yaml read and write manifests as YAML text (a List, several documents) for a person "
              "or a test; the checker's rules build their manifests as data and the API server speaks JSON")
#: why the replica's etcd log is never expanded
ETCD_LOG_WHOLE = ("a replica's etcd log is read by the watch invariants as stored (a compact entry's fields, "
                  "CompactLog.stored); building an entry back whole is for a reader by hand, as the store's own log")
#: why the audit log is never printed
AUDIT_FORMAT = ("AuditLog.format prints the audit records one line each for a person (a test, a prompt); the checker "
                "and its report read the records as data")
#: why upstream's slowStartBatch as a function is never called
SLOW_START_REFERENCE = ("slow_start_batch is upstream's slowStartBatch as one function, the reference the unit tests "
                        "check the batches against; the ReplicaSet controller sends each batch's creates as messages "
                        "and starts the next batch from their answers (replicaset.py run_batch), so no run calls it")
#: why the side of a fix's switch that runs the model without the fix is not taken
FIX_SWITCH_OFF = ("the side of a known fix's switch (kmodel.fixes) that runs upstream's code, without the fix: the "
                  "measured run is `--fix all`, which turns every fix on (`kmodel check` without --fix takes it)")
#: why a kube-scheduler that does not elect is never built or started
LEADER_ELECT_OFF = ("a kube-scheduler run with --leader-elect=false, built and started without an elector: the "
                    "measured run elects (`kmodel check --leader-elect=false` takes it)")
#: why the cluster never wires an operator's own component
OPERATOR_WIRING = ("wires a controller of one's own (`kmodel check --component`, a registered plug-in): its service "
                   "account's token and role; the measured run checks the built-in cluster, which has none "
                   "(tests/checker/test_operator_examples.py checks an operator under the checker)")
#: why the container runtime never refuses a call
CRI_UNKNOWN = ("a CRI call that names a sandbox or container the runtime does not have, removes a container record, or "
               "lists without the pod uid label, or an index entry without that label: the kubelet names only what it "
               "listed, labels all it creates, lists by pod uid, and never removes a container record (its garbage "
               "collection of dead containers is not modelled); `fail_container` picks a running container")
CRI_ORDER = ("a CRI call out of the order the kubelet keeps (a container created in a sandbox that is not ready, twice "
             "for one attempt, started when not just created or in a dead sandbox, a sandbox stopped before its "
             "containers, a container stopped that is not running): containerd's refusals, which the kubelet model "
             "could meet only through a mistake of its own sync loop")

#: Outcomes the unit tests take and the checker cannot or need not, explained: "file:line -> target" (as the
#: work list prints it) -> (the line's text when the reason was written, why). Counted apart, never hidden.
EXCLUSIONS: dict[str, tuple[str, str]] = {
    # -- store, component, fixes, cluster, loop, clock, network, traffic
    "kmodel/fixes/__init__.py:275 -> 278": ('for f in FIXES:', UNKNOWN_FIX),
    "kmodel/store/reference.py:34 -> 35": ('if not key:', REFERENCE_STORE),
    "kmodel/store/reference.py:34 -> 36": ('if not key:', REFERENCE_STORE),
    "kmodel/store/compact_log.py:86 -> 87": ('for i in range(len(self._entries)):', WHOLE_LOG),
    "kmodel/store/compact_log.py:86 -> exit": ('for i in range(len(self._entries)):', WHOLE_LOG),
    "kmodel/store/compact_log.py:90 -> 91": ('if isinstance(other, CompactLog):', WHOLE_LOG),
    "kmodel/store/store.py:343 -> 345": ('if self._trackers:', TRACKERS),
    "kmodel/store/store.py:392 -> 395": ('if self._trackers:', TRACKERS),
    "kmodel/store/store.py:271 -> 272": ('if isinstance(op, PutOp):', TXN_PUT),
    "kmodel/store/store.py:359 -> 360": ('if op.key not in write.before:', TXN_PUT),
    "kmodel/store/store.py:361 -> 362": ('if old is None:', TXN_PUT),
    "kmodel/store/store.py:361 -> 364": ('if old is None:', TXN_PUT),
    "kmodel/store/keyspace.py:100 -> 102": ('if created:', TXN_PUT),
    "kmodel/store/store.py:544 -> 545": ('if rev == compact_rev and not keys.is_retained(kv):', COMPACTION_TOMBSTONE),
    "kmodel/loop/loop.py:262 -> 263": ('for name in sorted(self.components):', FAULT_MENU),
    "kmodel/loop/loop.py:262 -> 267": ('for name in sorted(self.components):', FAULT_MENU),
    "kmodel/loop/loop.py:263 -> 264": ('if name in self._down:', FAULT_MENU),
    "kmodel/loop/loop.py:263 -> 265": ('if name in self._down:', FAULT_MENU),
    "kmodel/loop/loop.py:265 -> 266": ('elif self.components[name].supports_crash():', FAULT_MENU),
    "kmodel/loop/loop.py:267 -> 268": ('if self.network.partitioned:', FAULT_MENU),
    "kmodel/loop/loop.py:267 -> 269": ('if self.network.partitioned:', FAULT_MENU),
    "kmodel/loop/loop.py:269 -> 270": ('if self.network.has_held_links:', FAULT_MENU),
    "kmodel/loop/loop.py:269 -> 271": ('if self.network.has_held_links:', FAULT_MENU),
    "kmodel/loop/events.py:29 -> 30": ('if isinstance(endpoints, str):', LOOP_MISUSE),
    "kmodel/loop/loop.py:322 -> 323": ('if unknown:', LOOP_MISUSE),
    "kmodel/loop/loop.py:332 -> 333": ('if not self.components[event.component].supports_crash():', LOOP_MISUSE),
    "kmodel/loop/loop.py:278 -> 280": ('if net.is_deliverable(event.src, event.dst):', NOT_ENABLED),
    "kmodel/loop/loop.py:285 -> 286": ('if due > self.clock.now:', NOT_ENABLED),
    "kmodel/network/network.py:123 -> 124": ('if name in self._endpoints:', NETWORK_MISUSE),
    "kmodel/network/network.py:191 -> 192": ('if link is None:', NETWORK_MISUSE),
    "kmodel/network/network.py:259 -> 260": ('if link is None:', NETWORK_MISUSE),
    "kmodel/network/network.py:349 -> 350": ('if link is None:', NETWORK_MISUSE),
    "kmodel/network/network.py:458 -> 459": ('if ends is None:', NETWORK_MISUSE),
    "kmodel/network/network.py:526 -> 527": ('if dst not in self._endpoints:', NETWORK_MISUSE),
    "kmodel/network/network.py:580 -> 581": ('elif not ((src, dst) == ends or (dst, src) == ends):', NETWORK_MISUSE),
    "kmodel/traffic/client.py:131 -> 132": ('if remembered is not None:', VARIANT_ONLY),
    "kmodel/traffic/client.py:158 -> 159": ('if self.hardcoded_pod_ip and route.via == VIA_SERVICE:', VARIANT_ONLY),
    "kmodel/clock/clock.py:188 -> 189": ('if not isinstance(t, int):', CLOCK_MISUSE),
    "kmodel/clock/clock.py:190 -> 191": ('if t < self.now:', CLOCK_MISUSE),
    # -- the other packages
    "kmodel/ipam/serviceip.py:136 -> 137": ('if net.version == 6:', SERVICE_RANGE),
    "kmodel/ipam/hostlocal.py:374 -> 375": ('if requested_ip is not None:', HOSTLOCAL_REQUESTED),
    "kmodel/ipam/hostlocal.py:377 -> 378": ('if ip == r.gateway:', HOSTLOCAL_REQUESTED),
    "kmodel/ipam/hostlocal.py:377 -> 379": ('if ip == r.gateway:', HOSTLOCAL_REQUESTED),
    "kmodel/ipam/hostlocal.py:379 -> 380":
        ('if not self.store.reserve(container_id, ifname, ip, self.range_id):', HOSTLOCAL_REQUESTED),
    "kmodel/ipam/hostlocal.py:379 -> 383":
        ('if not self.store.reserve(container_id, ifname, ip, self.range_id):', HOSTLOCAL_REQUESTED),
    "kmodel/kubelet/admission.py:71 -> 72": ('if not nodename.fits(pod, info):', OWN_NODE),
    # -- controllers, cluster, kubelet
    "kmodel/controllers/deployment.py:528 -> 533": (
        'if retry_past_max_retries:  # the deployment-retry-past-max-retries fix (kmodel.fixes)', FIX_SWITCH_OFF),
    "kmodel/controllers/endpoints.py:129 -> 131": (
        'if retry_past_max_retries:  # the endpoints-retry-past-max-retries fix (kmodel.fixes)', FIX_SWITCH_OFF),
    "kmodel/controllers/nodeipam.py:133 -> exit": ('if self.release_by_owner:', FIX_SWITCH_OFF),
    "kmodel/controllers/nodeipam.py:191 -> 195": ('if self.release_by_owner:', FIX_SWITCH_OFF),
    "kmodel/controllers/nodeipam.py:217 -> 218": ('if not self.release_only_on_delete:', FIX_SWITCH_OFF),
    "kmodel/controllers/tainteviction.py:213 -> 217": (
        'if self.evict_only_the_scheduled_pod:  # a UID precondition: 409 for another pod of its name', FIX_SWITCH_OFF),
    "kmodel/controllers/replicaset_logic.py:116 -> 117": ('while batch > 0:', SLOW_START_REFERENCE),
    "kmodel/controllers/replicaset_logic.py:116 -> 129": ('while batch > 0:', SLOW_START_REFERENCE),
    "kmodel/controllers/replicaset_logic.py:119 -> 120": ('for _ in range(batch):', SLOW_START_REFERENCE),
    "kmodel/controllers/replicaset_logic.py:119 -> 124": ('for _ in range(batch):', SLOW_START_REFERENCE),
    "kmodel/controllers/replicaset_logic.py:122 -> 119": ('if not ok:', SLOW_START_REFERENCE),
    "kmodel/controllers/replicaset_logic.py:122 -> 123": ('if not ok:', SLOW_START_REFERENCE),
    "kmodel/controllers/replicaset_logic.py:125 -> 126": ('if errors:', SLOW_START_REFERENCE),
    "kmodel/controllers/replicaset_logic.py:125 -> 127": ('if errors:', SLOW_START_REFERENCE),
    "kmodel/cluster/cluster.py:165 -> 168": ('if LEADERELECTION_RESET_ON_EXIT in config.fixes:', FIX_SWITCH_OFF),
    "kmodel/scheduler/framework.py:269 -> 276": ('if holders is not None:', FIX_SWITCH_OFF),
    "kmodel/scheduler/component.py:177 -> 184": ('if elect_on_host:', LEADER_ELECT_OFF),
    "kmodel/scheduler/component.py:329 -> exit": ('if self.elector is not None:', LEADER_ELECT_OFF),
    "kmodel/cluster/cluster.py:132 -> 133": ('for r in own:', OPERATOR_WIRING),
    "kmodel/cluster/cluster.py:133 -> 134": ('if r.service_account:', OPERATOR_WIRING),
    "kmodel/cluster/cluster.py:135 -> 136": ('for account, rules in roles_by_account(own):', OPERATOR_WIRING),
    "kmodel/cluster/cluster.py:137 -> 138": ('for component in extra:', OPERATOR_WIRING),
    "kmodel/cluster/cluster.py:139 -> 137":
        ('if account and service_account_token(account) not in tokens:', OPERATOR_WIRING),
    "kmodel/cluster/cluster.py:139 -> 140":
        ('if account and service_account_token(account) not in tokens:', OPERATOR_WIRING),
    "kmodel/kubelet/runtime.py:195 -> exit": ('if key is not None:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:201 -> exit": ('if ids is not None:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:268 -> 269": ('if sb is None:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:288 -> 289": ('if sandbox_id not in self.sandboxes:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:350 -> 351": ('if c is None:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:376 -> 377": ('if c is None:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:376 -> 378": ('if c is None:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:378 -> 379": ('if c.state == ContainerState.CONTAINER_RUNNING:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:378 -> 380": ('if c.state == ContainerState.CONTAINER_RUNNING:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:395 -> 396": ('if uid is None:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:434 -> 435": ('if c.state != ContainerState.CONTAINER_RUNNING:', CRI_UNKNOWN),
    "kmodel/kubelet/runtime.py:276 -> 277": ('if c.state == ContainerState.CONTAINER_RUNNING:', CRI_ORDER),
    "kmodel/kubelet/runtime.py:324 -> 325": ('if sb.state != PodSandboxState.SANDBOX_READY:', CRI_ORDER),
    "kmodel/kubelet/runtime.py:328 -> 329": ('if c.metadata == md:', CRI_ORDER),
    "kmodel/kubelet/runtime.py:357 -> 358": ('if c.state != ContainerState.CONTAINER_CREATED:', CRI_ORDER),
    "kmodel/kubelet/runtime.py:362 -> 363":
        ('if self.sandboxes[c.pod_sandbox_id].state != PodSandboxState.SANDBOX_READY:', CRI_ORDER),
    "kmodel/kubelet/runtime.py:370 -> exit":
        ('if c.state in (ContainerState.CONTAINER_RUNNING, ContainerState.CONTAINER_UNKNOWN):', CRI_ORDER),
    "kmodel/scheduler/schedule_one.py:72 -> 74": ('if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:', HUNDRED_NODES),
    "kmodel/scheduler/schedule_one.py:75 -> 76": ('if percentage == 0:', HUNDRED_NODES),
    "kmodel/scheduler/schedule_one.py:75 -> 79": ('if percentage == 0:', HUNDRED_NODES),
    "kmodel/scheduler/schedule_one.py:77 -> 78":
        ('if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:', HUNDRED_NODES),
    "kmodel/scheduler/schedule_one.py:77 -> 79":
        ('if percentage < MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND:', HUNDRED_NODES),
    "kmodel/scheduler/plugins/noderesources.py:65 -> 66": ('if npods + 1 > allowed:', MAX_PODS),
    "kmodel/scheduler/fastpath.py:77 -> 78": ('if index >= n:', START_INDEX),
    "kmodel/scheduler/schedule_one.py:178 -> 179": ('if n == 0:', NO_NODES),
    "kmodel/scheduler/framework.py:93 -> 95": ('if not isinstance(other, Status):', TEST_EQUALITY),
    "kmodel/scheduler/framework.py:186 -> 188": ('if not isinstance(other, Resource):', TEST_EQUALITY),
    "kmodel/client/rate_limiter.py:30 -> 31": ('if self.qps <= 0 or 1000 % self.qps:', FIXED_RATE_LIMITS),
    "kmodel/client/rate_limiter.py:49 -> 50": ('if interval_ms < 1:', FIXED_RATE_LIMITS),
    "kmodel/client/rate_limiter.py:51 -> 52": ('if burst < 1:', FIXED_RATE_LIMITS),
    # -- objects, apiserver
    "kmodel/objects/fastevolve.py:42 -> 43": ('if slots is None:', FASTEVOLVE),
    "kmodel/objects/fastevolve.py:68 -> 69": ('if unknown:', FASTEVOLVE),
    "kmodel/objects/fastevolve.py:78 -> 79": ('if slots is None:', FASTEVOLVE),
    "kmodel/objects/fastevolve.py:99 -> 100": ('if f.validator is not None or f.converter is not None:', FASTEVOLVE),
    "kmodel/objects/fastevolve.py:114 -> 116":
        ('if slots is None or any(not f.init or f.kw_only or f.alias != f.name or not f.name.isidentifier()',
         FASTEVOLVE),
    "kmodel/objects/yaml_io.py:35 -> 36": ('for doc in parse_yaml(text):', YAML_FILES),
    "kmodel/objects/yaml_io.py:35 -> 40": ('for doc in parse_yaml(text):', YAML_FILES),
    "kmodel/objects/yaml_io.py:36 -> 39":
        ('if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):', YAML_FILES),
    "kmodel/objects/yaml_io.py:45 -> 48": ('if isinstance(objs, (list, tuple)):', YAML_FILES),
    "kmodel/apiserver/etcd_log.py:58 -> 59": ('if len(entry) == _PAIR:', ETCD_LOG_WHOLE),
    "kmodel/apiserver/etcd_log.py:58 -> 60": ('if len(entry) == _PAIR:', ETCD_LOG_WHOLE),
    "kmodel/apiserver/audit.py:81 -> 82": ('for r in self.records:', AUDIT_FORMAT),
    "kmodel/apiserver/audit.py:81 -> 84": ('for r in self.records:', AUDIT_FORMAT),
}


class UsageError(Exception):
    pass


@dataclass
class PackageFigures:
    name: str
    unit: int = 0  # outcomes the unit tests take
    checker: int = 0  # of those, the checker takes
    excluded: int = 0  # of those the checker does not take, explained in EXCLUSIONS
    work: list[str] = field(default_factory=list)  # the rest: "file:line -> target  text"
    excluded_list: list[tuple[str, str]] = field(default_factory=list)  # ("file:line -> target  text", why)

    def share(self) -> float:
        return 100 * self.checker / self.unit if self.unit else 100.0

    def share_without_excluded(self) -> float:
        counted = self.unit - self.excluded
        return 100 * self.checker / counted if counted else 100.0


def compare(unit: Reach, checker_never: list[dict], packages: tuple[str, ...],
            exclusions: dict[str, tuple[str, str]]) -> tuple[list[PackageFigures], list[str]]:
    """Per package, the unit tests' outcomes (`unit`: their run read by reach_of) beside the checker's (the
    never-taken list of its report.json's reach section: the checker took every other outcome of the model).
    Returns the figures and the stale exclusions (their line no longer reads as recorded)."""
    never = {where(o['file'], o['line'], o['to']) for o in checker_never}
    figures = {name: PackageFigures(name) for name in packages}
    every = (*unit.taken, *unit.never)  # every outcome of the model
    text_of = {o.where(): o.source for o in every}
    exclusions = relocated(exclusions, every)
    for o in unit.taken:
        key = o.where()
        entry = figures.get(o.package)
        if entry is None:
            continue
        entry.unit += 1
        if key not in never:
            entry.checker += 1
        elif key in exclusions and exclusions[key][0] == o.source:
            entry.excluded += 1
            entry.excluded_list.append((f"{key}  {o.source}", exclusions[key][1]))
        else:
            entry.work.append(f"{key}  {o.source}")
    stale = [f"{key}: the line now reads {text_of[key]!r}, not {text!r}" if key in text_of else
             f"{key}: no longer an outcome ({text!r})" for key, (text, _) in sorted(exclusions.items())
             if text_of.get(key) != text]
    return [figures[name] for name in packages], stale


def relocated(exclusions: dict[str, tuple[str, str]], outcomes: tuple[Outcome, ...]) -> dict[str, tuple[str, str]]:
    """`exclusions` with each key whose line no longer reads as recorded moved to where the code went: the one
    outcome of the same file whose line reads the recorded text and whose target lies the same distance from it
    (lines added or removed above an excluded `if` move it whole). A key with no such outcome, or several, is
    left as it was, and `compare` reports it stale."""
    by_text: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        by_text.setdefault((o.file, o.source), []).append(o)
    text_of = {o.where(): o.source for o in outcomes}
    moved: dict[str, tuple[str, str]] = {}
    for key, (text, why) in exclusions.items():
        if text_of.get(key) != text:
            file, line, to = _parts(key)
            found = [o for o in by_text.get((file, text), ())
                     if (o.to is None) == (to is None) and (to is None or o.to - o.line == to - line)]
            if len(found) == 1 and found[0].where() not in exclusions:
                key = found[0].where()
        moved[key] = (text, why)
    return moved


def _parts(key: str) -> tuple[str, int, Optional[int]]:
    """"file:line -> target" as (file, line, target or None for exit)."""
    place, target = key.split(" -> ")
    file, line = place.rsplit(":", 1)
    return file, int(line), None if target == "exit" else int(target)


def total(rows: list[PackageFigures]) -> PackageFigures:
    return PackageFigures("total", sum(r.unit for r in rows), sum(r.checker for r in rows),
                          sum(r.excluded for r in rows))


def table(rows: list[PackageFigures]) -> list[str]:
    lines = [f"{'package':<12} {'unit tests':>10} {'checker':>8} {'share':>6} {'excluded':>8} "
             f"{'share w/o excl.':>15} {'work list':>9}"]
    for r in [*rows, total(rows)]:
        work = r.unit - r.checker - r.excluded
        lines.append(f"{r.name:<12} {r.unit:>10,} {r.checker:>8,} {r.share():>5.0f}% {r.excluded:>8,} "
                     f"{r.share_without_excluded():>14.0f}% {work:>9,}")
    return lines


def unit_test_folders(packages: tuple[str, ...]) -> list[str]:
    return [f"tests/{name}" for name in packages if (ROOT / "tests" / name).is_dir()]


def run_unit_tests(folders: list[str], data_file: Path) -> tuple[Reach, int, float]:
    """(a): the unit tests under coverage.py, read by kmodel's reach code; with pytest's exit code and seconds."""
    sources = model_sources()
    command = [sys.executable, "-m", "coverage", "run", "--branch", f"--data-file={data_file}",
               f"--source={','.join(s.module for s in sources)}", "-m", "pytest", "-q", "-p", "no:cacheprovider",
               *folders]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, stdout=sys.stderr, stderr=subprocess.STDOUT)  # pytest's progress
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise UsageError(f"the unit tests did not run (pytest exit {done.returncode}, its output above)")
    cwd = os.getcwd()
    os.chdir(ROOT)  # the files are named as the checker's report names them: relative to the repository
    try:
        cov = coverage_of(sources, data_file=str(data_file))
        cov.load()
        return reach_of(cov, sources), done.returncode, seconds
    finally:
        os.chdir(cwd)


def run_checker(args: list[str], folder: Path) -> tuple[dict, float]:
    """(b): `kmodel check --reach` run from the repository; its report.json's reach section and seconds."""
    command = [sys.executable, "-m", "kmodel", "check", "--reach", "--report", str(folder), *args]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise UsageError(f"kmodel check failed (exit {done.returncode}):\n{done.stdout[-2000:]}")
    return read_checker_report(folder), seconds


def read_checker_report(folder: Path) -> dict:
    path = Path(folder) / "report.json"
    try:
        section = json.loads(path.read_text()).get("reach")
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read it ({exc}); give the report folder of a kmodel check --reach run")
    if not isinstance(section, dict):
        raise UsageError(f"{path} has no reach section: give the report folder of a kmodel check --reach run")
    return section


def chosen_packages(text: str) -> tuple[str, ...]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODEL_PACKAGES]
    if unknown or not names:
        raise UsageError(f"--packages: unknown {', '.join(unknown) or '(none given)'}; "
                         f"choose among {', '.join(MODEL_PACKAGES)}")
    return tuple(n for n in MODEL_PACKAGES if n in names)


@dataclass
class Explored:
    """One campaign of --compare-guided: what it cost and every example it ran, as its actions."""

    name: str
    cpu_seconds: float
    examples: list[tuple] = field(default_factory=list)
    steps: int = 0
    sometimes_reached: int = 0
    sometimes: int = 0
    outcomes: int = 0
    outcomes_total: int = 0
    taken: list[str] = field(default_factory=list)  # the branch outcomes it took, as file:line -> target, sorted
    of_unit: Optional[int] = None  # of the outcomes the unit tests take, how many this campaign takes
    guided: Optional[dict] = None  # a guided campaign's figures (kmodel.checker.guided.GuidedFigures)

    def per_cpu_minute(self) -> float:
        return 60 * self.outcomes / self.cpu_seconds if self.cpu_seconds else 0.0


def explore_on_budget(name: str, options: "object", cpu_seconds: float) -> Explored:
    """Run one campaign until it has spent `cpu_seconds` of this process's CPU time (asked as each example
    starts), recording the actions of every example it runs (its closing settle included)."""
    from kmodel.checker.machine import KmodelMachine
    from kmodel.checker.run import run_campaign

    recorded: list[tuple] = []

    class Recorded(KmodelMachine):
        def teardown(self) -> None:
            actions = self.session.actions  # the list itself: the closing settle is appended to it
            super().teardown()
            recorded.append(tuple(actions))

    began = time.process_time()
    result = run_campaign(options, machine=Recorded, stop=lambda stats: time.process_time() - began >= cpu_seconds)
    spent = time.process_time() - began
    return Explored(name, spent, recorded, result.stats.steps, len(result.stats.reached), len(result.sometimes),
                    guided=result.guided.to_json() if result.guided is not None else None)


def outcomes_by_replay(explored: Explored, options: "object") -> Reach:
    """Every example of a campaign replayed under coverage.py from the warmed-up cluster (built under it too),
    read by kmodel's reach code: what the campaign took of the model, counted the same way for any campaign."""
    from kmodel.checker.actions import RunFair
    from kmodel.checker.machine import KmodelMachine
    from kmodel.checker.session import InvariantViolation, Session, TraceDiverged, all_invariants
    from kmodel.checker.snapshot import Snapshot

    sources = model_sources(options.components)
    cov = coverage_of(sources)
    cov.start()
    try:
        invariants = all_invariants()
        warm = Session(options.config(), invariants, variant=options.variant)
        for action in (*KmodelMachine.initial_actions, RunFair(KmodelMachine.warmup_ms)):
            warm.execute(action)
        snapshot = Snapshot(warm, shared=(warm.stats, *invariants))
        skip = len(KmodelMachine.initial_actions) + 1
        for actions in explored.examples:
            session = snapshot.restore()
            for action in actions[skip:]:
                try:
                    session.execute(action)
                except (InvariantViolation, TraceDiverged):
                    break
            session.dispose()
    finally:
        cov.stop()
    cwd = os.getcwd()
    os.chdir(ROOT)  # files named relative to the repository, as the rest of this script names them
    try:
        return reach_of(cov, sources)
    finally:
        os.chdir(cwd)


def compare_guided(checker_args: list[str], cpu_seconds: float, unit: Optional[Reach] = None,
                   json_path: Optional[str] = None) -> list[str]:
    """--compare-guided: the plain and the guided campaign of the same options on the same CPU budget (and, given
    the unit tests' reach, how many of their outcomes each takes); `json_path` gets each one's figures and the
    outcomes it took."""
    import attrs

    from kmodel.checker.command import options_from_args

    from kmodel.errors import KmodelUsageError

    try:
        options = attrs.evolve(options_from_args(checker_args), examples=10**6, keep_going=True)
    except KmodelUsageError as exc:
        raise UsageError(f"--checker-args: {exc}") from None
    unit_keys = {o.where() for o in unit.taken} if unit is not None else None
    runs = []
    for name, guided in (("plain", False), ("guided", True)):
        print(f"{name}: {cpu_seconds:.0f} CPU seconds of kmodel check {shlex.join(checker_args)}"
              f"{' --guided' if guided else ''} ...", file=sys.stderr)
        run = explore_on_budget(name, attrs.evolve(options, guided=guided), cpu_seconds)
        print(f"{name}: replaying its {len(run.examples)} examples under coverage.py ...", file=sys.stderr)
        reach = outcomes_by_replay(run, options)
        run.outcomes, run.outcomes_total = reach.total().outcomes_taken, reach.total().outcomes
        run.taken = sorted(o.where() for o in reach.taken)
        if unit_keys is not None:
            run.of_unit = len(unit_keys & {o.where() for o in reach.taken})
        runs.append(run)
    lines = [f"kmodel check {shlex.join(checker_args)}, plain and --guided, each on {cpu_seconds:.0f} s of CPU time "
             f"(examples replayed under coverage.py afterwards to count their branch outcomes)",
             f"{'campaign':<8} {'examples':>8} {'steps':>7} {'CPU s':>6} {'outcomes':>9} {'of':>6} "
             f"{'per CPU-min':>11} {'sometimes':>9}"]
    for r in runs:
        lines.append(f"{r.name:<8} {len(r.examples):>8,} {r.steps:>7,} {r.cpu_seconds:>6.0f} {r.outcomes:>9,} "
                     f"{r.outcomes_total:>6,} {r.per_cpu_minute():>11,.0f} {r.sometimes_reached:>5}/{r.sometimes}")
    if unit_keys is not None:
        lines += [f"{r.name}: {r.of_unit:,} of the {len(unit_keys):,} branch outcomes the unit tests take" for r in runs]
    plain, guided = runs
    if guided.guided is not None:
        g = guided.guided
        lines.append(f"guided: {g['rounds']} rounds, {g['examples_measured']} examples traced, {g['corpus_kept']} kept "
                     f"in the corpus, {g['examples_from_corpus']} started from a corpus entry")
    only_plain, only_guided = set(plain.taken) - set(guided.taken), set(guided.taken) - set(plain.taken)
    lines.append(f"either: {len(set(plain.taken) | set(guided.taken)):,} branch outcomes; plain only "
                 f"{len(only_plain):,}, guided only {len(only_guided):,}")
    ratio = guided.per_cpu_minute() / plain.per_cpu_minute() if plain.per_cpu_minute() else float("inf")
    lines.append(f"guided / plain, branch outcomes per CPU-minute: {ratio:.2f}")
    if json_path:
        Path(json_path).write_text(json.dumps(
            {"checker_args": checker_args, "cpu_seconds": cpu_seconds, "ratio": ratio,
             "campaigns": [{**{k: v for k, v in vars(r).items() if k != "examples"}, "examples": len(r.examples)}
                           for r in runs]}, indent=1) + "\n")
    return lines


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="the branch outcomes the checker takes beside the unit tests'",
                                epilog="exit codes: 0 the figures were printed; 2 bad usage, or a run that failed")
    p.add_argument("--checker-args", default=DEFAULT_CHECKER_ARGS, metavar="ARGS",
                   help=f"arguments of `kmodel check --reach` (default {DEFAULT_CHECKER_ARGS!r})")
    p.add_argument("--packages", default=",".join(MODEL_PACKAGES), metavar="P,Q",
                   help="model packages to report, whose tests/<package> run (default: all)")
    p.add_argument("--top", type=int, default=5, metavar="N",
                   help="work-list entries printed per package (default 5; --worklist writes them all)")
    p.add_argument("--worklist", default=None, metavar="PATH", help="write the whole work list here")
    p.add_argument("--json", default=None, metavar="PATH", help="write the figures and lists here")
    p.add_argument("--checker-report", default=None, metavar="DIR",
                   help="read the checker's reach from this kmodel check --reach report folder instead of running it")
    p.add_argument("--compare-guided", action="store_true",
                   help="run the plain and the guided campaign of --checker-args on the same CPU budget and print "
                        "the branch outcomes each takes (the unit tests are not run)")
    p.add_argument("--cpu-seconds", type=float, default=60.0, metavar="S",
                   help="with --compare-guided: CPU seconds each campaign explores for (default 60)")
    p.add_argument("--with-unit-tests", action="store_true",
                   help="with --compare-guided: also run the unit tests under coverage.py (minutes) and say how many "
                        "of their branch outcomes each campaign takes")
    return p.parse_args(argv)


def worklist_lines(rows: list[PackageFigures], top: Optional[int]) -> list[str]:
    lines = []
    for r in rows:
        if not r.work:
            continue
        shown = r.work if top is None else r.work[:top]
        more = f", the first {len(shown)}" if len(shown) < len(r.work) else ""
        lines.append(f"{r.name} ({len(r.work):,}{more}):")
        lines += [f"  {entry}" for entry in shown]
    return lines


def main(argv: Optional[list[str]] = None) -> int:
    try:
        return _main(parse_args(argv))
    except UsageError as exc:
        print(f"reach.py: error: {exc}", file=sys.stderr)
        return 2


def _main(args: argparse.Namespace) -> int:
    if args.compare_guided:
        if args.cpu_seconds <= 0:
            raise UsageError("--cpu-seconds must be more than 0")
        unit = None
        if args.with_unit_tests:
            folders = unit_test_folders(MODEL_PACKAGES)
            print(f"unit tests: {' '.join(folders)} under coverage.py ...", file=sys.stderr)
            with tempfile.TemporaryDirectory(prefix="kmodel-reach-") as scratch:
                unit = run_unit_tests(folders, Path(scratch) / ".coverage-unit")[0]
        print("\n".join(compare_guided(shlex.split(args.checker_args), args.cpu_seconds, unit, args.json)))
        return 0
    packages = chosen_packages(args.packages)
    if args.top < 0:
        raise UsageError("--top must be 0 or more")
    checker_args = shlex.split(args.checker_args)
    folders = unit_test_folders(packages)
    if not folders:
        raise UsageError(f"--packages: none of {', '.join(packages)} has unit tests of its own (tests/<package>); "
                         f"add one that has")
    with tempfile.TemporaryDirectory(prefix="kmodel-reach-") as scratch:
        print(f"unit tests: {' '.join(folders)} under coverage.py ...", file=sys.stderr)
        unit, pytest_exit, unit_seconds = run_unit_tests(folders, Path(scratch) / ".coverage-unit")
        if args.checker_report:
            checker, checker_seconds = read_checker_report(Path(args.checker_report)), 0.0
        else:
            print(f"checker: kmodel check --reach {shlex.join(checker_args)} ...", file=sys.stderr)
            checker, checker_seconds = run_checker(checker_args, Path(scratch) / "check")
    rows, stale = compare(unit, checker["never_taken"], packages, EXCLUSIONS)
    without = [name for name in packages if not (ROOT / "tests" / name).is_dir()]
    print(f"branch outcomes of the model the unit tests take ({' '.join(folders)}), and how many of them "
          f"`kmodel check {shlex.join(checker_args)}` takes" +
          (f" (read from {args.checker_report})" if args.checker_report else ""))
    if without:
        print(f"(no tests of their own: {', '.join(without)}; their outcomes are those the other tests take)")
    if pytest_exit:
        print("(some unit tests failed: pytest exit 1; their outcomes up to the failure count)")
    print("\n".join(table(rows)))
    print(f"\nwork list: taken by the unit tests, never by the checker (first {args.top} per package"
          + (f"; all in {args.worklist}" if args.worklist else "; --worklist PATH writes it whole") + ")")
    print("\n".join(worklist_lines(rows, args.top)) or "  (empty)")
    excluded = [entry for r in rows for entry in r.excluded_list]
    if excluded:
        print(f"\nexcluded ({len(excluded)}), explained in EXCLUSIONS:")
        for reason in dict.fromkeys(why for _, why in excluded):
            print(f"  {reason}:")
            print("\n".join(f"    {outcome}" for outcome, why in excluded if why == reason))
    if stale:
        print(f"\nstale exclusions ({len(stale)}), not applied:")
        print("\n".join(f"  {entry}" for entry in stale))
    print(f"\nseconds: unit tests under coverage {unit_seconds:.0f}, checker {checker_seconds:.0f} "
          f"(this machine, this run)")
    if args.worklist:
        Path(args.worklist).write_text("\n".join(worklist_lines(rows, None)) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "checker_args": checker_args, "unit_test_folders": folders, "pytest_exit": pytest_exit,
            "coverage_py": checker.get("coverage_py"),
            "packages": [{**asdict(r), "share": round(r.share(), 1),
                          "share_without_excluded": round(r.share_without_excluded(), 1)} for r in rows],
            "total": {**asdict(total(rows)), "share": round(total(rows).share(), 1),
                      "share_without_excluded": round(total(rows).share_without_excluded(), 1)},
            "stale_exclusions": stale, "seconds": {"unit_tests": unit_seconds, "checker": checker_seconds},
        }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
