"""Every invariant is an independent oracle: it imports from the model only constants, types and readers of
recorded facts, never the logic of the component it judges (DESIGN.md, principle 4), so a mistake in that logic
cannot move the oracle with it. This test parses invariants/*.py and fails on any import from kmodel (outside
kmodel.invariants) that the table below does not allow, and checks that each entry is what the table says.

The audit of every such import (issue 42 item 4):

================================================  =========================  ===========================================
import                                            where                      verdict
================================================  =========================  ===========================================
controllers.deployment_logic.find_new_replica_set liveness (converges-       shared logic: replaced by _deployments.py
                                                  replicas)                  (FindNewReplicaSet, EqualIgnoreHash)
controllers.endpoints_logic.endpoint_subsets,     liveness (converges-       shared logic: replaced by _endpoints.py
endpoints_need_update                             endpoints)                 (syncService, RepackSubsets)
apiserver.selectors.label_selector_from_object    workloads (replicaset-     shared logic: replaced by _selectors.py
                                                  within-expectations)       (LabelSelectorAsSelector)
apiserver.customresources.established,            workloads (dependents-     shared logic: replaced by _crds.py
resource_for                                      collected), crd            (Established condition, /registry/<group>/
                                                                             <plural>)
apiserver.authorization.attributes_for,           contract (rbac-enforced)   shared logic: replaced in contract.py
apiserver.customresources.served                                             (the group the URL names; a CRD's group)
apiserver.authorization.NODE_RULES                contract (rbac-enforced)   shared table: replaced by _rbac.py
                                                                             (upstream 1.31's NodeRules)
apiserver.storeview.current_prefix,               crd, workloads, contract   readers: the live keys under a prefix (a
customresources.crds, store.prefix_end                                       store read; crds is one over the CRDs)
store.history / apiserver.etcd_log formats        _history, storage, watch   readers of the recorded histories' entries
objects dump, dump_struct, freeze, thaw           patches, statefulset,      the objects' codec: not what these judge
                                                  crd, _crd_schema
objects.quantity.parse_quantity                   scheduling (no-overcommit) reader of the machines' configured sizes
apiserver.resources.object_key, RESOURCES         storage, crd, workloads,   the key of a record and the table of
                                                  contract                   built-in kinds (data from the types)
apiserver.authentication.user,                    contract, lifecycle        identities in the authenticator's format
service_account_name                                                         (what the audit trail records)
cluster.kubectl.describe                          patches                    the text naming a command in a message
memo.identity_memo                                statefulset                a cache helper
client.informer.Informer, store types, loop       readers, watch, liveness,  types, read with isinstance or attributes
events, CustomObject, UserInfo, CompactLog,       _history, crd, contract,
EtcdLog, kubectl.Patch                            patches
labels, annotations, finalizers, prefixes,        everywhere                 constants
timings (leader election's flags' defaults)
================================================  =========================  ===========================================
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

INVARIANTS = Path(__file__).resolve().parents[2] / "invariants"

CONSTANT, TYPE, READER, MODULE = "constant", "type", "reader", "module"

#: (module, name) -> (what it is, why an invariant may import it)
ALLOWED: dict[tuple[str, str], tuple[str, str]] = {
    # constants: names, labels, annotations, finalizers, prefixes, the components' configured defaults
    ("kmodel.apiserver.authentication", "ANONYMOUS"): (CONSTANT, "the anonymous user's name"),
    ("kmodel.apiserver.authentication", "ANONYMOUS_USER"): (CONSTANT, "the anonymous identity, as authenticated"),
    ("kmodel.apiserver.authentication", "MASTERS"): (CONSTANT, "the system:masters group name"),
    ("kmodel.apiserver.authentication", "NODE_PREFIX"): (CONSTANT, "the system:node: user name prefix"),
    ("kmodel.apiserver.authentication", "NODES"): (CONSTANT, "the system:nodes group name"),
    ("kmodel.apiserver.authorization", "NODE_LEASE_NAMESPACE"): (CONSTANT, "a namespace name"),
    ("kmodel.apiserver.authorization", "RBAC_PREFIXES"): (CONSTANT, "where the RBAC objects are stored (to read them)"),
    ("kmodel.apiserver.audit", "FORBID"): (CONSTANT, "the audit trail's forbidden-decision text"),
    ("kmodel.apiserver.customresources", "CRD_PREFIX"): (CONSTANT, "where CRDs are stored"),
    ("kmodel.apiserver.deletion", "GC_FINALIZERS"): (CONSTANT, "the garbage collector's finalizer names"),
    ("kmodel.apiserver.deletion", "FOREGROUND_FINALIZER"): (CONSTANT, "a finalizer name"),
    ("kmodel.apiserver.deletion", "ORPHAN_FINALIZER"): (CONSTANT, "a finalizer name"),
    ("kmodel.apiserver.resources", "RESOURCES"): (CONSTANT, "the built-in kinds: names, groups, etcd prefixes, "
                                                            "registered from the object types (data, no decision)"),
    ("kmodel.client.leaderelection", "JITTER_FACTOR"): (CONSTANT, "leader election's configured default"),
    ("kmodel.client.leaderelection", "LEASE_DURATION_MS"): (CONSTANT, "leader election's configured default"),
    ("kmodel.client.leaderelection", "LEASE_NAMESPACE"): (CONSTANT, "a namespace name"),
    ("kmodel.client.leaderelection", "RETRY_PERIOD_MS"): (CONSTANT, "leader election's configured default"),
    ("kmodel.client.leaderelection", "SLOW_REQUEST_MS"): (CONSTANT, "the model's bound on a request's time"),
    ("kmodel.controllers.deployment_logic", "MAX_REPLICAS_ANNOTATION"): (CONSTANT, "an annotation key"),
    ("kmodel.kubelet.runtime", "POD_UID_LABEL"): (CONSTANT, "a label key on the runtime's records"),
    ("kmodel.objects.apiextensions", "CLEANUP_FINALIZER"): (CONSTANT, "a finalizer name"),
    ("kmodel.store.history", "TXN_PUT_COMPARE"): (CONSTANT, "a field index of the store's compact history entry"),
    ("kmodel.store.history", "TXN_PUT_KEY"): (CONSTANT, "a field index of the store's compact history entry"),
    ("kmodel.store.history", "TXN_PUT_REVISION"): (CONSTANT, "a field index of the store's compact history entry"),
    ("kmodel.store.history", "TXN_PUT_VALUE"): (CONSTANT, "a field index of the store's compact history entry"),
    ("kmodel.traffic.client", "SERVICE_PORT"): (CONSTANT, "the port the traffic clients call"),
    # types: the records and objects the invariants read, recognised by isinstance or read by attribute
    ("kmodel.apiserver.authentication", "UserInfo"): (TYPE, "an identity as the audit trail records it"),
    ("kmodel.apiserver.etcd_log", "EtcdLog"): (TYPE, "the recorded etcd stream log"),
    ("kmodel.client.informer", "Informer"): (TYPE, "to find the components' informers and read their records"),
    ("kmodel.cluster.kubectl", "Patch"): (TYPE, "a recorded kubectl command"),
    ("kmodel.loop.events", "Deliver"): (TYPE, "a recorded loop event"),
    ("kmodel.loop.events", "Work"): (TYPE, "a recorded loop event"),
    ("kmodel.objects.unstructured", "CustomObject"): (TYPE, "a stored custom object"),
    ("kmodel.store.compact_log", "CompactLog"): (TYPE, "the store's compact history log"),
    ("kmodel.store.types", "DeleteOp"): (TYPE, "a recorded store request"),
    ("kmodel.store.types", "DeleteRangeResponse"): (TYPE, "a recorded store response"),
    ("kmodel.store.types", "PutOp"): (TYPE, "a recorded store request"),
    ("kmodel.store.types", "PutResponse"): (TYPE, "a recorded store response"),
    ("kmodel.store.types", "RangeOp"): (TYPE, "a recorded store request"),
    ("kmodel.store.types", "TxnRequest"): (TYPE, "a recorded store request"),
    ("kmodel.store.types", "TxnResponse"): (TYPE, "a recorded store response"),
    # readers: functions that read recorded facts or convert their representation, and decide nothing
    ("kmodel.apiserver", "etcd_log"): (MODULE, "the recorded etcd stream's entry format (is_compact, field indices)"),
    ("kmodel.apiserver.authentication", "service_account_name"): (
        READER, "a service account's user name as the audit trail records it"),
    ("kmodel.apiserver.authentication", "user"): (
        READER, "an identity as the token authenticator records it (name, groups, system:authenticated)"),
    ("kmodel.apiserver.customresources", "crds"): (READER, "the stored CRDs: a store read over CRD_PREFIX"),
    ("kmodel.apiserver.resources", "object_key"): (READER, "the etcd key of a recorded update's object, to find its "
                                                           "versions in the history"),
    ("kmodel.apiserver.storeview", "current_prefix"): (READER, "the live keys under a prefix: a store read"),
    ("kmodel.cluster.kubectl", "describe"): (READER, "the text naming a recorded command in a message"),
    ("kmodel.memo", "identity_memo"): (READER, "a cache keyed by object identity"),
    ("kmodel.objects", "dump"): (READER, "an object's JSON shape (the codec; merge-patch-applied judges the patch)"),
    ("kmodel.objects", "dump_struct"): (READER, "an object's JSON shape (the codec)"),
    ("kmodel.objects.frozendict", "freeze"): (READER, "a value's frozen representation"),
    ("kmodel.objects.frozendict", "thaw"): (READER, "a frozen value as plain dicts and lists"),
    ("kmodel.objects.quantity", "parse_quantity"): (READER, "the machines' configured sizes, parsed (no-overcommit "
                                                             "adds up requests and capacity itself)"),
    ("kmodel.store", "prefix_end"): (READER, "the end of a key prefix's range (etcd's rule), to read a prefix"),
    ("kmodel.store.history", "is_compact"): (READER, "the store's compact history entry format"),
}

#: shared logic still imported, each to be replaced by a reference of the invariant's own (not yet done)
STILL_SHARED: dict[tuple[str, str], str] = {}


def _imports_in(source: str, filename: str) -> list[tuple[str, str, str]]:
    """(file, module, name) of every import from kmodel outside kmodel.invariants in `source` (at any depth;
    name "" for a plain `import kmodel...`)."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "kmodel" and not node.module.startswith("kmodel.invariants") \
                    and not (node.module == "kmodel" and all(a.name == "invariants" for a in node.names)):
                found += [(filename, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(filename, alias.name, "") for alias in node.names
                      if alias.name.split(".")[0] == "kmodel" and not alias.name.startswith("kmodel.invariants")]
    return found


def _model_imports() -> list[tuple[str, str, str]]:
    return [found for path in sorted(INVARIANTS.glob("*.py")) for found in _imports_in(path.read_text(), path.name)]


def _unexplained(imports: list[tuple[str, str, str]]) -> list[str]:
    return [f"{file}: from {module} import {name or '(the module)'}" for file, module, name in imports
            if (module, name) not in ALLOWED and (module, name) not in STILL_SHARED]


def test_invariants_import_from_the_model_only_what_the_table_allows():
    assert _model_imports(), "the guard found no import at all: it reads the wrong folder"
    assert _unexplained(_model_imports()) == [], (
        "an invariant imports model code the oracle table does not allow; compute the verdict in invariants/ "
        "instead, or add a constant, type or reader to ALLOWED with its reason")


def test_the_guard_refuses_a_controller_helper_imported_at_any_depth_and_in_any_form():
    source = ("from kmodel.invariants._history import PODS\n"
              "from kmodel.controllers.deployment_logic import find_new_replica_set, MAX_REPLICAS_ANNOTATION\n"
              "import kmodel.scheduler.framework\n"
              "def judge():\n    from kmodel.apiserver.selectors import label_selector_from_object\n")
    assert _unexplained(_imports_in(source, "x.py")) == [
        "x.py: from kmodel.controllers.deployment_logic import find_new_replica_set",
        "x.py: from kmodel.scheduler.framework import (the module)",
        "x.py: from kmodel.apiserver.selectors import label_selector_from_object",
    ]


def test_every_still_shared_entry_is_still_imported():
    imported = {(module, name) for _, module, name in _model_imports()}
    assert [entry for entry in STILL_SHARED if entry not in imported] == [], "replaced: take it out of STILL_SHARED"


@pytest.mark.parametrize("module, name", sorted(ALLOWED))
def test_each_allowed_entry_is_what_the_table_says(module, name):
    what, why = ALLOWED[(module, name)]
    assert why
    value = getattr(importlib.import_module(module), name)
    if what == TYPE:
        assert isinstance(value, type)
    elif what == CONSTANT:
        assert not callable(value)
    elif what == MODULE:
        assert type(value).__name__ == "module"
    else:
        assert callable(value) and not isinstance(value, type)
