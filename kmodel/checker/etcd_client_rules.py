"""The second etcd client's rule: a mixin of `KmodelMachine` (etcd_client_actions.py says who that client is).

    etcd_range     etcdctl get of the client's own key or prefix, of every /registry key (a backup), of the
                   Nodes or the Roles, of every key (`etcdctl get "" --prefix`), from a key on, or of an empty
                   range or no key; now, a few revisions back, below the last compaction or
                   past the newest revision; with a limit of 0 to 3, keys only, count only
    etcd_watch     etcdctl watch of the same ranges (an empty one is refused) from now, a few revisions back,
                   below the last compaction, at it or a few revisions ahead, with prev_kv and a progress
                   request; its events taken, then cancelled, or kept open for the writes to come
    etcd_txn       a txn comparing a /registry key's, the client's own key's, its prefix's or every Node's
                   (each must pass) mod, create revision, version, value or lease by each of etcd's four results
                   against what is there or something else, or no key (refused); then a read, a read at a past,
                   future or compacted revision, a delete of its own prefix, or a branch etcd refuses (a key put
                   twice, a put inside a delete, a put of a key deleted, 129 operations, no key); else nothing, a
                   read (at a past or future revision too) or no key
    etcd_compact   etcdctl compact a few revisions back, at the last compaction (refused) or past the newest
                   revision (refused)
    etcd_cas       a compare-and-swap of its IPAM block guarded by the mod revision or value it read, which no
                   longer holds: a put or a delete, else a read now or at the revision it had read
    etcd_delete    etcdctl del of its own key or prefix (nothing there: nothing deleted) or of no key (refused)

A watch may also be kept open for the writes to come, from a start a few revisions ahead too (see
etcd_client_actions.py). One rule draws all six (`etcd_client`), so that the family takes one share of the rule
draws, not six:
the other rules keep their frequency. The stats count each under its own name. Every draw shrinks toward the
simplest: a read of the client's own key, now.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from kmodel.checker.etcd_client_actions import (
    CAS_ELSE,
    CAS_READ,
    COMPARED,
    DELETES,
    EXPECT,
    GUARDS,
    MAX_LIMIT,
    OTHERWISE,
    RANGE_NAMES,
    RESULTS,
    REVISIONS,
    SWAPS,
    TARGETS,
    THEN,
    WATCH_STARTS,
    EtcdCas,
    EtcdCompact,
    EtcdDelete,
    EtcdRange,
    EtcdTxn,
    EtcdWatch,
)
from kmodel.checker.rulebook import RuleFamily, rule
from kmodel.checker.draws import INDEX

#: a read, a watch and a txn of the second client, each simplest first
RANGE_REQUEST = st.builds(EtcdRange, st.sampled_from(RANGE_NAMES), st.sampled_from(REVISIONS),
                          st.integers(0, MAX_LIMIT), st.booleans(), st.booleans())
WATCH_REQUEST = st.builds(EtcdWatch, st.sampled_from(RANGE_NAMES[:-1]), st.sampled_from(WATCH_STARTS), st.booleans(),
                          st.booleans(), st.booleans())
TXN_REQUEST = st.builds(EtcdTxn, st.sampled_from(COMPARED), st.sampled_from(TARGETS), st.sampled_from(RESULTS),
                        st.sampled_from(EXPECT), st.sampled_from(THEN), st.sampled_from(OTHERWISE), INDEX)
#: one request of the second client, simplest first (a read)
REQUESTS = st.one_of(
    RANGE_REQUEST,
    WATCH_REQUEST,
    TXN_REQUEST,
    st.builds(EtcdCompact, st.sampled_from(REVISIONS[1:])),
    st.builds(EtcdCas, st.sampled_from(GUARDS), st.sampled_from(SWAPS), st.sampled_from(CAS_ELSE),
              st.sampled_from(CAS_READ)),
    st.builds(EtcdDelete, st.sampled_from(DELETES), st.booleans()),
)

#: the stats' name of each request
RULE_NAMES: dict[type, str] = {EtcdRange: "etcd_range", EtcdWatch: "etcd_watch", EtcdTxn: "etcd_txn",
                               EtcdCompact: "etcd_compact", EtcdCas: "etcd_cas", EtcdDelete: "etcd_delete"}


class EtcdClientRules(RuleFamily):
    """The second etcd client's rule (see the module docstring). Mixed into `KmodelMachine` (which provides
    `_do`)."""

    _do: Any

    @rule(request=REQUESTS)
    def etcd_client(self, request: Any) -> None:
        self._do(RULE_NAMES[type(request)], request)
