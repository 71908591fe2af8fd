"""The node IPAM controller with the range allocator (pkg/controller/nodeipam, ipam/range_allocator.go).

Theory of operation
-------------------
The controller hands each Node one block of the cluster CIDR as its spec.podCIDR/podCIDRs, keeping the
taken blocks in a `CidrSet` (kmodel/ipam/cidrset: upstream's allocation order, round robin with wrap).

* Start (NewCIDRRangeAllocator with the node list that ipam.New reads first): before any work, one
  consistent LIST of the nodes (no resourceVersion, so straight from etcd, not from a lagging cache);
  every podCIDR found is occupied. A failed list is retried every 10 s (nodePollInterval). Only then does
  `has_work` turn true, so a restarted controller never allocates before it knows every CIDR in use, even
  if its informer's first list came from a lagging API server replica.
* A node event enqueues the node (upstream: the add/update handlers feed the allocator's queue). syncNode:
  gone from the cache → nothing; being deleted → release its CIDRs (1.31's workqueue allocator, from
  kubernetes/kubernetes#123238, until #128305: a Node a finalizer keeps after its delete has its block
  handed to the next node while it still exists, kubernetes/kubernetes#127792); else AllocateOrOccupyCIDR: a
  node with podCIDRs has them occupied (idempotent); a node without gets `allocate_next()` and
  updateCIDRsAllocation: the cache is read again (a node that now has CIDRs: the new block is released;
  the same ones: nothing to do), then PatchNodeCIDRs `{"spec": {"podCIDR": c, "podCIDRs": [c]}}`, tried up
  to 3 times (cidrUpdateRetries). After 3 failures: event CIDRAssignmentFailed and, unless the error was a
  ServerTimeout, the block is released (upstream's choice; see Differences).
* Exhaustion: event CIDRNotAvailable (`Node <name> status is now: CIDRNotAvailable`, type Normal, source
  cidrAllocator) and the sync fails with `failed to allocate cidr from cluster cidr at idx:0: <error>`
  (kept in `errors`), so the node is retried with the rate limiter and gets a block once one is free.
* A node delete event releases the CIDRs of the last state seen (the DeleteFunc handler).

A crash forgets the CidrSet; the restart lists again and re-occupies, as a restarted kube-controller-manager.

The nodeipam-release-only-on-delete fix (kmodel.fixes, off by default) is upstream's own,
kubernetes/kubernetes#128305 (1.32; backported to release-1.31 by #128806): syncNode leaves a node being
deleted alone, and only the delete handler releases its block, once the Node is gone.

The nodeipam-release-by-owner fix (kmodel.fixes, off by default; kmodel's sketch, upstream has none) takes
out the leaks above. The allocator keeps `owners`: which node (name and uid) holds each block it occupied or
patched. A delete or a tombstone releases what that node holds (a tombstone's own podCIDRs can predate the
patch); a node that shows up with another node's name and a new uid first releases what the old one held;
and once the informer has synced, one more consistent LIST releases each node of the startup list that is
gone or has another uid (a node deleted between the two lists: its informer never had it). A record is
dropped when released, and a node once released is never released again, so no block is released twice.
Without a record (a node deleted before its sync ran), a delete releases the node's podCIDRs, as upstream.

Differences from upstream: one IP family (the config has one cluster CIDR); the allocator's own node
informer and the controller's are the same here; the delete handler takes a DeletedFinalStateUnknown (as
1.30's CreateDeleteNodeHandler and #128305's handler do), where 1.31's type assertion before #128305
panics. Faithfully kept: after a patch whose answer never came (the client's timeout is not a ServerTimeout
status) the block is released although the patch may have been applied; until the informer shows the node
with that podCIDR (which occupies it again), another node can be handed the same block: upstream's known
race.
"""

from __future__ import annotations

from typing import Any, Hashable, Optional

from kmodel.component.registry import controller
from kmodel.apiserver.wire import Response
from kmodel.cluster.components import ClusterContext
from kmodel.component import Out
from kmodel.ipam.cidrset import CidrSet, CidrSetError
from kmodel.objects import Node, ObjectReference
from kmodel.fixes import NODEIPAM_RELEASE_BY_OWNER, NODEIPAM_RELEASE_ONLY_ON_DELETE

from .base import Controller, Sync
from kmodel.switches import DEFAULT_SWITCHES, Switches

NAME = "controller/nodeipam"
EVENT_SOURCE = "cidrAllocator"
NODE_POLL_INTERVAL_MS = 10_000  # how often the startup list is retried
SYNC_POLL_MS = 1_000  # the fix: how often it looks whether the informer has synced (a kmodel choice)
CIDR_UPDATE_RETRIES = 3


def node_reference(node: Node) -> ObjectReference:
    """The reference RecordNodeStatusChange / RecordNodeEvent build for a Node."""
    return ObjectReference(kind="Node", name=node.metadata.name, uid=node.metadata.uid, api_version="v1")


def status_change_message(node_name: str, new_status: str) -> str:
    """RecordNodeStatusChange's message."""
    return f"Node {node_name} status is now: {new_status}"


def node_cidrs(node: Node) -> tuple[str, ...]:
    spec = node.spec
    return tuple(spec.pod_cidrs) or ((spec.pod_cidr,) if spec.pod_cidr else ())


class NodeIpamController(Controller):
    """See the module docstring."""

    service_account = "node-controller"

    event_source = EVENT_SOURCE

    def __init__(self, endpoints: tuple[str, ...] | list[str], *, cluster_cidr: str = "10.244.0.0/16",
                 node_mask_size: int = 24, name: str = NAME, switches: Switches = DEFAULT_SWITCHES,
                 release_by_owner: bool = False,
                 release_only_on_delete: bool = False) -> None:
        self.cluster_cidr = cluster_cidr
        self.node_mask_size = node_mask_size
        #: the nodeipam-release-by-owner fix (kmodel.fixes): the one place that reads it is this class
        self.release_by_owner = release_by_owner
        #: the nodeipam-release-only-on-delete fix (kmodel.fixes): syncNode leaves a node being deleted alone
        self.release_only_on_delete = release_only_on_delete
        super().__init__(name, endpoints, switches)

    def setup(self) -> None:
        self.cidrs = CidrSet(self.cluster_cidr, self.node_mask_size)
        self.initial_listed = False
        self.errors: list[str] = []  # the errors syncs returned (upstream logs them), oldest first
        self.nodes = self.informer("nodes", on_delete=self._on_node_delete)
        # the fix's records: node name -> (uid, the blocks it holds); the startup list's nodes with blocks,
        # name -> uid, until the list after the informer's sync has been compared with them
        self.owners: dict[str, tuple[str, tuple[str, ...]]] = {}
        self.start_nodes: dict[str, str] = {}
        self.released: set[tuple[str, str]] = set()  # the fix: (name, uid) whose record was released

    # -- start: occupy what is in use -----------------------------------------------------------------------

    def on_started(self, now: int, out: Out) -> None:
        self._list_nodes(now, out)

    def _list_nodes(self, now: int, out: Out) -> None:
        self.client.list(now, out, "nodes", on_done=self._on_listed)

    def _on_listed(self, now: int, response: Response, out: Out) -> None:
        if not response.ok:
            self.client.call_later(now, out, NODE_POLL_INTERVAL_MS, self._list_nodes)
            return
        for node in response.body.items:
            self._occupy(node)
        self.initial_listed = True
        if self.release_by_owner:
            self.start_nodes = {n.metadata.name: n.metadata.uid for n in response.body.items if node_cidrs(n)}
            self._reconcile_start(now, out)

    def _reconcile_start(self, now: int, out: Out) -> None:
        """The fix: once the informer has synced, list again from etcd and release the blocks of the startup
        list's nodes that are gone (a consistent list taken after the informer's own: a node deleted before
        the informer listed is missing here, one deleted after is a delete the informer sees)."""
        if not self.nodes.has_synced:
            self.client.call_later(now, out, SYNC_POLL_MS, self._reconcile_start)
            return
        self.client.list(now, out, "nodes", on_done=self._on_reconcile_listed)

    def _on_reconcile_listed(self, now: int, response: Response, out: Out) -> None:
        if not response.ok:
            self.client.call_later(now, out, NODE_POLL_INTERVAL_MS, self._reconcile_start)
            return
        present = {n.metadata.name: n.metadata.uid for n in response.body.items}
        for name, uid in sorted(self.start_nodes.items()):
            if present.get(name) != uid:
                self._release_owner(name, uid)
        self.start_nodes = {}

    def has_work(self) -> bool:
        return (self.initial_listed or self.awaiting_leader) and super().has_work()

    def _occupy(self, node: Node) -> Optional[str]:
        for cidr in node_cidrs(node):
            try:
                self.cidrs.occupy(cidr)
            except (CidrSetError, ValueError) as e:
                return f"failed to mark cidr[{cidr}] at idx [0] as occupied for node: {node.metadata.name}: {e}"
        self._own(node.metadata.name, node.metadata.uid, node_cidrs(node))
        return None

    def _own(self, name: str, uid: str, cidrs: tuple[str, ...]) -> None:
        """The fix: record that node (name, uid) holds `cidrs`. Names are unique at any one time, so a record
        of that name with another uid is a node that is gone: its blocks are released first."""
        if not self.release_by_owner or not cidrs:
            return
        held = self.owners.get(name)
        if held is not None and held[0] != uid:
            self._release_owner(name, held[0], keep=cidrs)
        self.owners[name] = (uid, cidrs)

    def _release_owner(self, name: str, uid: str, keep: tuple[str, ...] = ()) -> bool:
        """The fix: release what node (name, uid) holds, once (the record goes); False if there is no record."""
        held = self.owners.get(name)
        if held is None or held[0] != uid:
            return False
        del self.owners[name]
        self.released.add((name, uid))
        for cidr in held[1]:
            if cidr not in keep:
                self._release_block(name, cidr)
        return True

    def _release(self, node: Node) -> None:
        if self.release_by_owner:
            key = (node.metadata.name, node.metadata.uid)
            if self._release_owner(*key) or key in self.released:
                return  # released now, or before (a delete after syncNode saw the deletionTimestamp)
        for cidr in node_cidrs(node):
            self._release_block(node.metadata.name, cidr)

    def _release_block(self, name: str, cidr: str) -> None:
        try:
            self.cidrs.release(cidr)
        except (CidrSetError, ValueError) as e:
            self.errors.append(f"failed to release cidr {cidr} for node {name}: {e}")

    def _on_node_delete(self, now: int, obj: Any, out: Out) -> None:
        node = getattr(obj, "obj", obj)  # DeletedFinalStateUnknown carries the last state seen
        self._release(node)

    # -- syncNode ----------------------------------------------------------------------------------------------

    def sync(self, key: Hashable, sync: Sync, now: int, out: Out) -> None:
        node = self.nodes.indexer.get_by_key(key)
        if node is None:
            return
        if node.metadata.deletion_timestamp is not None:
            # 1.31 before #128305 releases here, while a finalizer may keep the Node (and its podCIDR) for
            # long; with the fix the Node keeps its block until the delete handler sees it gone
            if not self.release_only_on_delete:
                self._release(node)
            return
        if node_cidrs(node):
            error = self._occupy(node)
            if error:
                self._failed(sync, error)
            return
        try:
            cidr = str(self.cidrs.allocate_next())
        except CidrSetError as e:
            self.event(now, out, node_reference(node), "Normal", "CIDRNotAvailable",
                       status_change_message(node.metadata.name, "CIDRNotAvailable"))
            self._failed(sync, f"failed to allocate cidr from cluster cidr at idx:0: {e}")
            return
        self._update_cidrs_allocation(now, out, sync, node.metadata.name, cidr)

    def _failed(self, sync: Sync, error: str) -> None:
        self.errors.append(error)
        sync.fail()

    def _update_cidrs_allocation(self, now: int, out: Out, sync: Sync, name: str, cidr: str) -> None:
        node = self.nodes.indexer.get_by_key(name)
        if node is None:
            self.cidrs.release(cidr)  # upstream returns the lister's error and leaks it until a restart
            self._failed(sync, f'node "{name}" not found')
            return
        current = node_cidrs(node)
        if current == (cidr,):
            return  # a patch that went through but whose answer was lost
        if current:
            self.cidrs.release(cidr)  # the node got CIDRs meanwhile: give the new one back
            return
        patch = {"spec": {"podCIDR": cidr, "podCIDRs": [cidr]}}

        def attempt(t: int, o: Out, tries: int) -> None:
            def done(t2: int, response: Response, o2: Out) -> bool:
                if response.ok:
                    self._own(name, node.metadata.uid, (cidr,))
                    return True
                if tries < CIDR_UPDATE_RETRIES:
                    attempt(t2, o2, tries + 1)
                    return True
                message = getattr(response.body, "message", str(response.code))
                self.event(t2, o2, node_reference(node), "Normal", "CIDRAssignmentFailed",
                           status_change_message(name, "CIDRAssignmentFailed"))
                if getattr(response.body, "reason", "") != "ServerTimeout":
                    self.cidrs.release(cidr)
                self.errors.append(f"failed to patch node CIDR: {message}")
                return False

            sync.patch(t, o, "nodes", name, patch, on_done=done)

        attempt(now, out, 1)


@controller("nodeipam", service_account="node-controller", default=True)  # the role: nodelifecycle's
def make(ctx: ClusterContext) -> list:
    """The node IPAM controller over the cluster CIDR of the config."""
    c = ctx.config

    return [NodeIpamController(ctx.apiservers, name=ctx.named(NAME), switches=ctx.switches,
                               cluster_cidr=c.cluster_cidr, node_mask_size=c.node_cidr_mask_size,
                               release_by_owner=NODEIPAM_RELEASE_BY_OWNER in c.fixes,
                               release_only_on_delete=NODEIPAM_RELEASE_ONLY_ON_DELETE in c.fixes)]
